"""The runtime on the GPU (CuPy backend): correctness, restoration, zero extra bytes.

Run on the GPU machine with ``python -m pytest -m gpu``; skipped elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import bilinear
from bilinear.measure import error_bound, extra_bytes, float64_reference, random_inputs, relative_error
from bilinear.runtime.run import plans_run, restore_bounds

from conftest import ALGORITHMS

pytestmark = pytest.mark.gpu

SIZES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (257, 129, 200), (512, 512, 512)]


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.mark.parametrize("path", ALGORITHMS, ids=[p.stem for p in ALGORITHMS])
@pytest.mark.parametrize("levels", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_are_correct_and_inputs_restored(cp, path, levels, dtype):
    product = bilinear.compile(path, dtype=dtype, levels=levels, backend="cupy")
    beta = 0.0 if product.lowered.levels[0].schedule.overwrites_c else 0.5
    for M, K, N in SIZES:
        A, B, C = random_inputs(cp, M, K, N, dtype, seed=M)
        A0, B0 = A.copy(), B.copy()
        exact = float64_reference(A, B, C, 1.5, beta)
        product(A, B, out=C, alpha=1.5, beta=beta)
        error = relative_error(C, exact, A0, B0)
        assert error <= error_bound(dtype, K, 3.0, levels), (M, K, N, error)
        # a level of msmes2 (4x4 blocks) nests two of msmes's updates: the error restoring grows with that depth
        depth = levels * max(1, int(np.log2(product.lowered.levels[0].algorithm.shape.m)))
        scale = 8 * depth * np.finfo(dtype).eps * max(float(cp.abs(A0).max()), float(cp.abs(B0).max()), 1.0)
        assert float(cp.abs(A - A0).max()) <= scale and float(cp.abs(B - B0).max()) <= scale
        # and within the worst case of the schedules' roundings, as the GPU's kernels compute them
        bound_a, bound_b = restore_bounds(plans_run(product, M, K, N), dtype)
        assert float(cp.abs(A - A0).max()) <= bound_a * float(cp.abs(A0).max())
        assert float(cp.abs(B - B0).max()) <= bound_b * float(cp.abs(B0).max())


FUSED_CASES = [(p, 1) for p in ALGORITHMS] + [(p, 2) for p in ALGORITHMS if p.stem in {"strassen", "msmes", "rsmm"}]


@pytest.mark.parametrize("path, levels", FUSED_CASES, ids=[f"{p.stem}-L{L}" for p, L in FUSED_CASES])
def test_fused_leaves_are_correct(cp, path, levels):
    product = bilinear.compile(path, dtype="float64", levels=levels, leaf="fused", backend="cupy")
    beta = 0.0 if product.lowered.levels[0].schedule.overwrites_c else 0.5
    for M, K, N in SIZES:
        A, B, C = random_inputs(cp, M, K, N, "float64", seed=M)
        A0, B0 = A.copy(), B.copy()
        exact = float64_reference(A, B, C, 1.5, beta)
        product(A, B, out=C, alpha=1.5, beta=beta)
        assert relative_error(C, exact, A0, B0) <= error_bound("float64", K, 3.0, levels), (M, K, N)


@pytest.mark.parametrize("leaf, levels", [("cublas", 1), ("cublas", 2), ("cublas", 3), ("fused", 1), ("fused", 2)])
def test_msmes_allocates_zero_bytes(cp, leaf, levels):
    product = bilinear.compile("algorithms/msmes.bl", dtype="float64", levels=levels, leaf=leaf, backend="cupy")
    A, B, C = random_inputs(cp, 1024, 1024, 1024, "float64")
    product(A, B, out=C)  # warm-up: compiles kernels, creates the cuBLAS handle
    assert extra_bytes(lambda: product(A, B, out=C, beta=1.0), cp) == 0


def test_cupy_and_numpy_backends_agree(cp):
    product_gpu = bilinear.compile("algorithms/rsmm.bl", levels=2, backend="cupy")
    product_cpu = bilinear.compile("algorithms/rsmm.bl", levels=2, backend="numpy")
    A, B, _ = random_inputs(np, 99, 70, 131, "float64")
    on_gpu = product_gpu(cp.asarray(A), cp.asarray(B)).get()
    assert np.allclose(on_gpu, product_cpu(A, B), rtol=1e-12, atol=1e-12)


def test_views_with_leading_dimensions(cp):
    product = bilinear.compile("algorithms/msmes.bl", levels=2, backend="cupy")
    big = [cp.asarray(x) for x in random_inputs(np, 300, 300, 300, "float64")]
    A, B, C = big[0][3:259, 5:200], big[1][5:200, 1:255], big[2][2:258, 4:258]
    expected = 2.0 * (A @ B) + 3.0 * C
    product(A, B, out=C, alpha=2.0, beta=3.0)
    assert cp.allclose(C, expected, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("shape", [(16384, 4096, 2), (100003, 4, 4), (1000, 1000, 1000), (777, 65, 129)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_dispatches_and_is_correct(cp, shape, dtype):
    M, K, N = shape
    A, B, C = random_inputs(cp, M, K, N, dtype, seed=K)
    exact = float64_reference(A, B, C, 2.0, 0.5)
    bilinear.matmul(A, B, out=C, alpha=2.0, beta=0.5)
    assert relative_error(C, exact, A, B) <= error_bound(dtype, K, 1.0, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_device_inputs_are_standard_normal_of_the_dtype_and_reproducible(cp, dtype):
    first = random_inputs(cp, 300, 200, 100, dtype, seed=3)
    again = random_inputs(cp, 300, 200, 100, dtype, seed=3)
    other = random_inputs(cp, 300, 200, 100, dtype, seed=4)
    assert [x.shape for x in first] == [(300, 200), (200, 100), (300, 100)]
    assert all(isinstance(x, cp.ndarray) and x.dtype == dtype for x in first)
    assert all(bool(cp.array_equal(x, y)) for x, y in zip(first, again))
    assert not bool(cp.array_equal(first[0], other[0]))
    values = first[0].astype(cp.float64)
    assert abs(float(values.mean())) < 0.02 and abs(float(values.std()) - 1) < 0.02


@pytest.mark.parametrize("leaf", ["cublas", "fused"])
def test_single_row_and_column_views_multiply_on_the_gpu(cp, leaf):
    """v[None, :] (row stride 0) and v[:, None] (column stride 0) re-viewed with line strides."""
    product = bilinear.compile(ALGORITHMS[0].parent / "msmes.bl", backend="cupy", leaf=leaf)
    v = cp.arange(1.0, 65.0)
    square = cp.arange(64.0 * 64).reshape(64, 64) / 4096
    assert cp.allclose(product(v[None, :], square.copy()), v[None, :] @ square, rtol=1e-12, atol=1e-12)
    assert cp.allclose(product(v[:, None], v[None, :].copy()), cp.outer(v, v), rtol=1e-12, atol=1e-12)


def test_breadth_first_kernels_too_large_to_build_are_refused_when_compiled(cp):
    """The CuPy backend builds the same unrolled kernels with NVRTC: refused at compile, not minutes
    into the first call."""
    from bilinear.lower.options import TooLarge

    with pytest.raises(TooLarge) as refused:
        bilinear.compile("winograd", levels=4, breadth=4, backend="cupy")
    assert str(refused.value).endswith("use fewer breadth-first levels, or the numpy backend (backend='numpy'), which "
                                       "builds none")


SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
"""


def _paused_after_the_first_step(cp, product):
    """An observer that, once, queues a ~50 ms spin on the current stream after the call's first step:
    the rest of that call waits behind it, its workspace half written."""
    spin = cp.RawKernel(SPIN, "spin")
    done = []

    def observer(level, step, when):
        if when == "end" and not done:
            done.append(step)
            spin((1,), (1,), (np.int64(100_000_000),))

    product.executor.observer = observer


def _exact(cp, A, B):
    return float64_reference(A, B, None, 1.0, 0.0)


def test_calls_on_two_streams_do_not_share_their_workspace_at_once(cp):
    """The executor's temporaries are reused from call to call; a call on a second stream ran while one
    on the first was paused halfway, and overwrote what its later steps read."""
    product = bilinear.compile("rsmm", levels=1, backend="cupy")
    n = 1024
    (A1, B1, C1), (A2, B2, C2) = (random_inputs(cp, n, n, n, "float64", seed=s) for s in (1, 2))
    product(A1, B1, out=C1)  # kernels compiled, workspace allocated
    first, second = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    _paused_after_the_first_step(cp, product)
    with first:
        product(A1, B1, out=C1)
    product.executor.observer = None
    with second:
        product(A2, B2, out=C2)
    cp.cuda.Device().synchronize()
    for A, B, C in ((A1, B1, C1), (A2, B2, C2)):
        assert relative_error(C, _exact(cp, A, B), A, B) < 1e-14


def test_a_capture_of_alpha_zero_holds_no_freed_memory(cp):
    """C = beta·C went through a temporary, freed while the stream captured it: each replay wrote
    memory the pool had handed out again."""
    product = bilinear.compile("strassen", levels=1, backend="cupy")
    A, B, C = random_inputs(cp, 64, 64, 64, "float64", seed=5)
    C0 = C.copy()
    graph = product.capture(A, B, C, alpha=0.0, beta=2.0)
    with graph.stream:
        kept = cp.full(C.shape, 7.0)
    graph()
    cp.cuda.Device().synchronize()
    assert bool((kept == 7.0).all()) and bool((C == 2.0 * C0).all())


def test_a_product_runs_inside_a_graph_the_caller_captures(cp):
    """Only CapturedProduct's own captures sent cuBLAS through the capture path: a product called while
    the caller's stream captured went to CuPy's wrapper, which refuses capture."""
    product = bilinear.compile("winograd", levels=1, backend="cupy")
    A, B, C = random_inputs(cp, 256, 256, 256, "float64", seed=6)
    product(A, B, out=C)  # kernels compiled, workspace allocated: nothing is allocated under capture
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        product(A, B, out=C, alpha=2.0)
        graph = stream.end_capture()
    C[...] = 0
    graph.launch(stream)
    stream.synchronize()
    assert relative_error(C, float64_reference(A, B, None, 2.0, 0.0), A, B) < 1e-14


def test_a_capture_calls_cupys_cublas_with_another_cublas_mapped(cp, monkeypatch, tmp_path):
    """With a second libcublas mapped (torch's, in a process that uses both), the capture module took
    the first path of the memory map in sorted order, whatever library CuPy's handle belongs to.  Here
    the map lists another first (no library at all: loading it fails): a capture still calls CuPy's."""
    from bilinear.runtime import cublas_capture

    with open("/proc/self/maps") as real:
        maps = tmp_path / "maps"
        maps.write_text("7f0000000000-7f0000001000 r-xp 00000000 08:02 1 /0/libcublas.so.99\n" + real.read())
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: real_open(maps if path == "/proc/self/maps" else path, *a, **k))
    product = bilinear.compile("strassen", levels=1, backend="cupy")
    A, B, C = random_inputs(cp, 128, 128, 128, "float64", seed=8)
    cublas_capture.library.cache_clear()
    try:
        graph = product.capture(A, B, C)
        graph()
        cp.cuda.Device().synchronize()
        assert relative_error(C, float64_reference(A, B, None, 1.0, 0.0), A, B) < 1e-14
    finally:
        cublas_capture.library.cache_clear()
