"""One process, two GPUs: a product compiled once, and ``bilinear.matmul``, on each in turn.

Kernels loaded on one device do not run on another, nor do its streams and cuBLAS handles, and
a product's kept workspace is one device's memory.  Run on a lent machine with two GPUs
(``python3 -m pytest -m gpu tests/test_multi_gpu.py``); skipped with fewer.
"""

from __future__ import annotations

import pytest

import bilinear
from bilinear.measure import error_bound, random_inputs, relative_error

from conftest import ROOT

pytestmark = pytest.mark.gpu

# (scheme, compile options): each way a product keeps something per device
CONFIGS = {
    "strassen cublas": ("strassen", {"levels": 1}),
    "msmes in place": ("msmes", {"levels": 2}),
    "winograd breadth-first batched": ("winograd", {"levels": 2, "breadth": 2, "launch": "batched"}),
    "winograd breadth-first streams": ("winograd", {"levels": 1, "breadth": 1, "launch": "streams"}),
    "strassen fused leaves": ("strassen", {"levels": 1, "leaf": "fused"}),
    "strassen ozaki leaves": ("strassen", {"levels": 1, "leaf": "ozaki"}),
}


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy")
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    return cupy


def _checked(cp, call, device: int, n: int = 512, dtype: str = "float64", levels: int = 2) -> None:
    with cp.cuda.Device(device):
        A, B, _ = random_inputs(cp, n, n, n, dtype, seed=device)
        A0, B0 = A.copy(), B.copy()
        reference = cp.matmul(A, B)
        out = call(A, B)
        cp.cuda.Device().synchronize()
        error = relative_error(out, reference, A0, B0)
        assert error <= error_bound(dtype, n, 3.0, levels), (device, error)


@pytest.mark.parametrize("config", CONFIGS)
def test_a_product_compiled_once_runs_on_each_gpu_in_turn(cp, config):
    """Its backend had loaded every kernel on the first GPU it ran on and launched those on the next."""
    scheme, options = CONFIGS[config]
    product = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", dtype="float64", backend="cupy", **options)
    for device in (0, 1, 0, 1):
        _checked(cp, lambda A, B: product(A, B), device, levels=options["levels"])


@pytest.mark.parametrize("shape", [(4096, 4096, 4096, "float32"), (100000, 16, 16, "float64")],
                         ids=["fast scheme", "tsm2"])
def test_matmul_runs_on_each_gpu_in_turn(cp, shape):
    """Its fast products were compiled once per process, not per device; each call twice (the
    second is a prepared call)."""
    m, k, n, dtype = shape
    for device in (0, 1, 0, 1):
        with cp.cuda.Device(device):
            A, B, _ = random_inputs(cp, m, k, n, dtype, seed=device)
            reference = cp.matmul(A, B)
            for _ in range(2):
                out = bilinear.matmul(A, B)
                error = relative_error(out, reference, A, B)
                assert error <= error_bound(dtype, k, 3.0, 3), (device, error)


def test_operands_on_another_gpu_than_the_current_are_refused(cp):
    with cp.cuda.Device(1):
        A, B, _ = random_inputs(cp, 256, 256, 256, "float64", seed=1)
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", dtype="float64", levels=1, backend="cupy")
    message = "A is on GPU 1, but the current device is GPU 0: call it under `with cupy.cuda.Device(1):`"
    with cp.cuda.Device(0):
        with pytest.raises(ValueError) as refused:
            product(A, B)
        assert str(refused.value) == message
        with pytest.raises(ValueError) as refused:
            bilinear.matmul(A, B)
        assert str(refused.value) == message


def test_a_graph_replays_only_on_the_gpu_it_was_captured_on(cp):
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", dtype="float64", levels=1, backend="cupy")
    with cp.cuda.Device(0):
        A, B, out = random_inputs(cp, 256, 256, 256, "float64", seed=0)
        graph = product.capture(A, B, out)
    with cp.cuda.Device(1):
        with pytest.raises(ValueError, match="captured on GPU 0, but the current device is GPU 1"):
            graph()
    with cp.cuda.Device(0):
        graph()
        cp.cuda.Device().synchronize()
        assert relative_error(out, cp.matmul(A, B), A, B) <= error_bound("float64", 256, 3.0, 1)
