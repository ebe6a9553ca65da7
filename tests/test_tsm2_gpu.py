"""TSM2R / TSM2L on the GPU: correctness on odd shapes, both dtypes, alpha/beta, views, errors.

Run on the GPU machine with ``pytest -m gpu tests/test_tsm2_gpu.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bilinear.lower.tsm2 import Params

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy")
try:
    if cupy.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
except Exception:  # no driver
    pytest.skip("no CUDA device", allow_module_level=True)

from bilinear.lower import tsm2 as model
from bilinear.runtime import tsm2 as runtime
from bilinear.runtime.tsm2 import tsm2_matmul

UNIT = {"float32": 2.0**-24, "float64": 2.0**-53}


def _random(shape, dtype, seed):
    rng = cupy.random.RandomState(seed)
    return rng.standard_normal(shape, dtype=cupy.float64).astype(dtype)


def _check(C, A, B, alpha=1.0, beta=0.0, C0=None):
    """Normwise error against a float64 product, within a few units of roundoff times √k."""
    A64, B64 = A.astype(cupy.float64), B.astype(cupy.float64)
    ref = alpha * (A64 @ B64)
    if beta:
        ref += beta * C0.astype(cupy.float64)
    assert not bool(cupy.isnan(C).any()), "an element of C was not written"
    k = A.shape[1]
    scale = float(cupy.linalg.norm(cupy.abs(A64) @ cupy.abs(B64))) * abs(alpha) + (
        abs(beta) * float(cupy.linalg.norm(C0.astype(cupy.float64))) if beta else 0.0
    )
    error = float(cupy.linalg.norm(C.astype(cupy.float64) - ref))
    assert error <= 4 * UNIT[str(A.dtype)] * (math.sqrt(k) + 2) * scale + 1e-300, (error, scale)


R_SHAPES = [
    (1, 1, 1),
    (37, 1000, 3),
    (129, 513, 2),
    (300, 4097, 17),
    (65, 33, 32),
    (1000, 2000, 29),
    (2049, 1031, 8),
    (100, 65, 1),
]
L_SHAPES = [
    (1, 1, 1),
    (1001, 3, 5),
    (4097, 7, 7),
    (100003, 2, 2),
    (5000, 32, 32),
    (12345, 17, 31),
    (777, 16, 4),
    (70000, 8, 8),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel,shape", [("tsm2r", s) for s in R_SHAPES] + [("tsm2l", s) for s in L_SHAPES])
def test_odd_shapes_match_float64(kernel, shape, dtype):
    m, k, n = shape
    A, B = _random((m, k), dtype, 1), _random((k, n), dtype, 2)
    C = cupy.full((m, n), cupy.nan, dtype=dtype)
    tsm2_matmul(A, B, out=C, kernel=kernel)
    _check(C, A, B)


R_PARAMS = [
    Params("tsm2r", row_warps=1, k_groups=8, rows_per_thread=2, stages=4),
    Params("tsm2r", row_warps=2, k_groups=2, rows_per_thread=4, stages=3, k_tile_bytes=256),
    Params("tsm2r", row_warps=1, k_groups=1, rows_per_thread=1, stages=2, n_tile=3),
]
L_PARAMS = [
    Params("tsm2l", threads=64, rows_per_thread=4, stages=2),
    Params("tsm2l", threads=256, rows_per_thread=1, stages=4, persistent=False),
    Params("tsm2l", threads=128, rows_per_thread=2, stages=3),
]


def _spec(kind, m, k, n, dtype, params=None):
    """The spec ``tsm2_matmul`` will build for contiguous operands (CuPy aligns allocations)."""
    device = runtime.device_model(cupy.cuda.Device().id)
    es = 4 if dtype == "float32" else 8
    align = model.Alignment(*(model.access_bytes(0, ld, es) for ld in (k, n, n)))
    if params is None:
        params = model.model_params(kind, m, k, n, dtype, device, align)
    else:
        params = model.fit_params(params, kind, dtype, k, n, align)
    return model.spec_for(params, dtype, k, n, align)


@pytest.fixture(scope="module", autouse=True)
def compiled_in_parallel():
    """Compile the kernels of the contiguous cases at once (NVRTC releases the GIL); the tests then
    find them in the cache instead of compiling one after another."""
    specs = []
    for dtype in ("float32", "float64"):
        specs += [_spec("tsm2r", m, k, n, dtype) for m, k, n in R_SHAPES]
        specs += [_spec("tsm2l", m, k, n, dtype) for m, k, n in L_SHAPES]
        specs += [_spec("tsm2r", 777, 3001, 7, dtype, p) for p in R_PARAMS]
        specs += [_spec("tsm2l", 54321, 12, 6, dtype, p) for p in L_PARAMS]
        specs += [_spec("tsm2r", 513, 1000, 6, dtype), _spec("tsm2l", 10001, 4, 4, dtype)]
    runtime.precompile(specs, workers=16)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("params", R_PARAMS, ids=lambda p: str(p.short()))
def test_tsm2r_parameters(params, dtype):
    m, k, n = 777, 3001, 7
    A, B = _random((m, k), dtype, 3), _random((k, n), dtype, 4)
    C = cupy.full((m, n), cupy.nan, dtype=dtype)
    tsm2_matmul(A, B, out=C, kernel="tsm2r", params=params)
    _check(C, A, B)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("params", L_PARAMS, ids=lambda p: str(p.short()))
def test_tsm2l_parameters(params, dtype):
    m, k, n = 54321, 12, 6
    A, B = _random((m, k), dtype, 5), _random((k, n), dtype, 6)
    C = cupy.full((m, n), cupy.nan, dtype=dtype)
    tsm2_matmul(A, B, out=C, kernel="tsm2l", params=params)
    _check(C, A, B)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel,shape", [("tsm2r", (513, 1000, 6)), ("tsm2l", (10001, 4, 4))])
@pytest.mark.parametrize("alpha,beta", [(2.5, 0.0), (1.0, 1.0), (-0.5, 0.75)])
def test_alpha_beta(kernel, shape, dtype, alpha, beta):
    m, k, n = shape
    A, B = _random((m, k), dtype, 7), _random((k, n), dtype, 8)
    C0 = _random((m, n), dtype, 9)
    C = C0.copy()
    tsm2_matmul(A, B, out=C, alpha=alpha, beta=beta, kernel=kernel)
    _check(C, A, B, alpha, beta, C0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel,shape", [("tsm2r", (300, 999, 5)), ("tsm2l", (20000, 6, 6))])
def test_views_with_pitches_and_offsets(kernel, shape, dtype):
    """Row-major views: odd row pitches and misaligned starts fall back to narrower copies."""
    m, k, n = shape
    A_big, B_big = _random((m + 3, k + 5), dtype, 10), _random((k + 1, n + 3), dtype, 11)
    C_big = cupy.full((m + 1, n + 2), cupy.nan, dtype=dtype)
    A, B, C = A_big[1 : m + 1, 1 : k + 1], B_big[1:, 2 : n + 2], C_big[1:, 1 : n + 1]
    tsm2_matmul(A, B, out=C, kernel=kernel)
    _check(C, A, B)
    assert bool(cupy.isnan(C_big[0]).all()) and bool(cupy.isnan(C_big[:, 0]).all())  # nothing outside out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_default_kernel_and_allocation(dtype):
    for m, k, n in [(4096, 4096, 4), (100000, 8, 8)]:
        A, B = _random((m, k), dtype, 12), _random((k, n), dtype, 13)
        C = tsm2_matmul(A, B)
        assert C.shape == (m, n) and C.dtype == A.dtype and C.flags.c_contiguous
        _check(C, A, B)


def test_empty_dimensions():
    A, B = cupy.ones((5, 0), dtype=cupy.float32), cupy.ones((0, 3), dtype=cupy.float32)
    C = cupy.full((5, 3), 2.0, dtype=cupy.float32)
    assert bool((tsm2_matmul(A, B, out=C, beta=0.5) == 1.0).all())
    assert tsm2_matmul(cupy.ones((0, 4), cupy.float64), cupy.ones((4, 2), cupy.float64)).shape == (0, 2)


def test_bad_inputs_are_refused_with_a_reason():
    A = _random((64, 32), "float32", 14)
    B = _random((32, 4), "float32", 15)
    with pytest.raises(ValueError, match="column-major"):
        tsm2_matmul(cupy.asfortranarray(A), B)
    with pytest.raises(ValueError, match="inner dimensions"):
        tsm2_matmul(A, B[:16])
    with pytest.raises(ValueError, match="float32 or both float64"):
        tsm2_matmul(A, B.astype(cupy.float64))
    with pytest.raises(ValueError, match="float32 or both float64"):
        tsm2_matmul(A.astype(cupy.float16), B.astype(cupy.float16))
    with pytest.raises(ValueError, match="host"):
        tsm2_matmul(cupy.asnumpy(A), B)
    with pytest.raises(ValueError, match="beta"):
        tsm2_matmul(A, B, beta=1.0)
    with pytest.raises(ValueError, match="out must be"):
        tsm2_matmul(A, B, out=cupy.empty((64, 5), cupy.float32))
    big = cupy.zeros((64, 36), cupy.float32)
    big[:, :32] = A
    tsm2_matmul(big[:, :32], B, out=big[:, 32:])  # column slices of one matrix are apart: A is left alone
    assert bool((big[:, :32] == A).all()) and float(cupy.abs(big[:, 32:] - A @ B).max()) < 1e-4
    with pytest.raises(ValueError, match="overlap"):
        tsm2_matmul(big[:, :32], B, out=big[:, 31:35])
    with pytest.raises(ValueError, match="matrix"):
        tsm2_matmul(A[0], B)
    with pytest.raises(ValueError, match="TSM2L"):
        tsm2_matmul(_random((100, 100), "float32", 1), _random((100, 4), "float32", 2), kernel="tsm2l")


def test_dispatch_table_parameters_run():
    """Every TSM2 choice in the committed table compiles and is right on its own shape class."""
    from bilinear.dispatch import load_table

    table = load_table()
    seen = set()
    for row in table.rows:
        if row.winner == "cublas" or (row.family, row.dtype, row.params) in seen:
            continue
        seen.add((row.family, row.dtype, row.params))
        m = 4099 if row.family == "tsm2r" else 70001
        k = 1537 if row.family == "tsm2r" else row.k
        A, B = _random((m, k), row.dtype, 16), _random((k, row.n), row.dtype, 17)
        C = cupy.full((m, row.n), cupy.nan, dtype=row.dtype)
        tsm2_matmul(A, B, out=C, kernel=row.family, params=row.params)
        _check(C, A, B)


def test_numpy_reference_on_a_small_case():
    """Independent of cupy's own matmul: a float64 NumPy product on the host."""
    A, B = _random((257, 129), "float64", 18), _random((129, 3), "float64", 19)
    C = tsm2_matmul(A, B, kernel="tsm2r")
    np.testing.assert_allclose(cupy.asnumpy(C), cupy.asnumpy(A) @ cupy.asnumpy(B), rtol=1e-12, atol=1e-12)


def test_tsm2r_planned_past_the_grids_column_tiles_is_refused():
    """The model's tiles of 32 columns at 4096×64×2097152 made a grid 65536 blocks high, and the launch failed
    in CUDA: plan() refuses it first, saying why (a hunt)."""
    from bilinear.lower.tsm2_params import Alignment

    n = 2097152
    call = runtime.Call(4096, 64, n, "float64", 64, n, n, Alignment())
    with pytest.raises(ValueError, match=r"^TSM2R covers at most 65535 tiles of \d+ columns"):
        runtime.plan(call, kind="tsm2r")
