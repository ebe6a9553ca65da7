"""The ozaki leaf on the GPU (marked ``gpu``): the CuPy path against the NumPy path (bit for bit)
and against cuBLAS DGEMM's error, k-chunks, Strassen levels with ozaki leaves.
(No hypothesis here: the GPU machine runs these with pytest alone.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

import bilinear
from bilinear.runtime import ozaki

from conftest import ROOT

U = 2.0**-53


@pytest.mark.gpu
@pytest.mark.parametrize("scaling", ozaki.SCALINGS)
@pytest.mark.parametrize(("shape", "count"), [((517, 1000, 333), None), ((64, 4096, 48), 14), ((1, 7, 3), 20)])
def test_gpu_matches_numpy_and_dgemm(shape, count, scaling):
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    m, k, n = shape
    rng = np.random.default_rng(7)
    A, B, C0 = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    reference = C0.copy()
    ozaki.gemm(np, A, B, reference, 1.5, 0.5, count=count, scaling=scaling)
    ours = cupy.asarray(C0)
    runner = CudaOzaki()
    runner.gemm(cupy.asarray(A), cupy.asarray(B), ours, 1.5, 0.5, count=count, scaling=scaling)
    got = cupy.asnumpy(ours)
    # the same arithmetic: equal bit for bit (norm scaling may differ where a norm's sum order
    # moves it across a power of two, which these seeds do not)
    assert np.array_equal(got, reference), np.max(np.abs(got - reference)) / np.max(np.abs(reference))
    exact = np.array([[math.fsum(float(a) * float(b) for a, b in zip(*_split(A[i], B[:, j])))
                       for j in range(min(n, 8))] for i in range(min(m, 8))])
    dgemm = cupy.asnumpy(cupy.asarray(A) @ cupy.asarray(B))[: min(m, 8), : min(n, 8)]
    plain = cupy.empty((m, n))
    runner.gemm(cupy.asarray(A), cupy.asarray(B), plain, count=count, scaling=scaling)
    ours_ab = cupy.asnumpy(plain)[: min(m, 8), : min(n, 8)]
    scale = (np.abs(A) @ np.abs(B))[: min(m, 8), : min(n, 8)]
    assert np.max(np.abs(ours_ab - exact) / scale) <= max(8 * U, 4 * np.max(np.abs(dgemm - exact) / scale))


def _split(a: np.ndarray, b: np.ndarray):
    """Pairs whose products are exact (Veltkamp halves), so fsum of them is the exact dot product."""
    def halves(x):
        c = 134217729.0 * x
        hi = c - (c - x)
        return hi, x - hi
    ah, al = halves(a)
    bh, bl = halves(b)
    return np.concatenate([ah, ah, al, al]), np.concatenate([bh, bl, bh, bl])


@pytest.mark.gpu
def test_gpu_chunks_and_strassen_levels():
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((300, 700)), rng.standard_normal((700, 211))
    reference = np.empty((300, 211))
    ozaki.gemm(np, A, B, reference, count=15, k_chunk=256)
    ours = cupy.empty((300, 211))
    runner = CudaOzaki()
    runner.gemm(cupy.asarray(A), cupy.asarray(B), ours, count=15, k_chunk=256)
    assert np.array_equal(cupy.asnumpy(ours), reference)
    assert runner.workspace_bytes == ozaki.workspace_bytes(300, 256, 211, 15)
    for scheme in ("strassen", "winograd"):
        for levels in (1, 2):
            product = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", levels=levels, leaf="ozaki", backend="cupy")
            got = cupy.asnumpy(product(cupy.asarray(A), cupy.asarray(B)))
            assert np.max(np.abs(got - A @ B)) <= 1e-12 * np.max(np.abs(A) @ np.abs(B))
            assert product.workspace_bytes(300, 700, 211) > 0


@pytest.mark.gpu
@pytest.mark.parametrize(("tile", "k_tile", "batched"), [(256, 0, False), (256, None, False), (384, 128, True)])
def test_gpu_int8_gemms_in_tiles_are_exact(tile, k_tile, batched):
    """Several row, column and k spans on the device (small tiles stand in for 8192 ones): the
    NumPy scheme's bits, whole k or k tiles adding up."""
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    rng = np.random.default_rng(5)
    A, B, C0 = rng.standard_normal((1000, 700)), rng.standard_normal((700, 900)), rng.standard_normal((1000, 900))
    reference = C0.copy()
    ozaki.gemm(np, A, B, reference, -0.5, 2.0, count=14)
    runner = CudaOzaki()
    runner.tile, runner.k_tile, runner.batched = tile, k_tile, batched
    ours = cupy.asarray(C0)
    runner.gemm(cupy.asarray(A), cupy.asarray(B), ours, -0.5, 2.0, count=14)
    assert np.array_equal(cupy.asnumpy(ours), reference)


@pytest.mark.gpu
def test_gpu_runner_with_its_own_handle_on_another_stream_gives_the_same_bits():
    """A runner with a cuBLAS handle of its own (benchmarks/ozaki_pipeline_probe.py runs two at once) on
    a stream of its own: the NumPy scheme's bits."""
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    rng = np.random.default_rng(11)
    A, B = rng.standard_normal((600, 500)), rng.standard_normal((500, 700))
    reference = np.zeros((600, 700))
    ozaki.gemm(np, A, B, reference, count=14)
    runner = CudaOzaki()
    runner.handle = runner._cublas.create()
    try:
        stream = cupy.cuda.Stream(non_blocking=True)
        ours = cupy.zeros((600, 700))
        with stream:
            runner.gemm(cupy.asarray(A), cupy.asarray(B), ours, count=14)
        stream.synchronize()
    finally:
        runner._cublas.destroy(runner.handle)
    assert np.array_equal(cupy.asnumpy(ours), reference)


@pytest.mark.gpu
@pytest.mark.parametrize("scaling", ozaki.SCALINGS)
@pytest.mark.parametrize("shape", [(517, 1000, 333), (64, 4096, 48), (1, 7, 3), (2048, 2048, 2048)])
def test_gpu_strassen_on_residues_is_the_plain_scheme(shape, scaling):
    """One Strassen level on the int8 residues (exact modulo p): the NumPy plain scheme's bits."""
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    m, k, n = shape
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    reference = np.empty((m, n))
    ozaki.gemm(np, A, B, reference, count=15, scaling=scaling)
    ours = cupy.empty((m, n))
    CudaOzaki().gemm(cupy.asarray(A), cupy.asarray(B), ours, count=15, scaling=scaling, residue_levels=1)
    assert np.array_equal(cupy.asnumpy(ours), reference)


@pytest.mark.gpu
@pytest.mark.parametrize("residue_levels", [0, 1])
def test_gpu_norm_scaling_takes_rows_whose_norm_passes_the_float64_range(residue_levels):
    """Rows of A and columns of B of entries near 1.8e308 (2-norms past the doubles; norm scaling
    made their products NaN): the NumPy path's bits, finite where the product is."""
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((40, 300)), np.ldexp(rng.standard_normal((300, 36)), -40)
    A[3] = np.copysign(1.5e308, A[3])
    B[:, 7] = np.copysign(1.7e308, B[:, 7])
    A[:3] *= 2.0**-600  # rows 0-2 times column 7 are finite; row 3 times column 7 overflows
    reference = np.empty((40, 36))
    with np.errstate(over="ignore", invalid="ignore"):
        ozaki.gemm(np, A, B, reference, count=16, scaling="norm")
    ours = cupy.empty((40, 36))
    CudaOzaki().gemm(cupy.asarray(A), cupy.asarray(B), ours, count=16, scaling="norm", residue_levels=residue_levels)
    got = cupy.asnumpy(ours)
    assert np.isfinite(got[3, :7]).all() and np.isfinite(got[:3, 7]).all()
    assert np.array_equal(got, reference, equal_nan=True)


@pytest.mark.gpu
@pytest.mark.parametrize("residue_levels", [0, 1])
@pytest.mark.parametrize("shape", [(517, 1000, 333), (64, 4096, 48), (1, 7, 3)])
def test_gpu_float32_matches_numpy_and_is_as_accurate_as_sgemm(shape, residue_levels):
    """float32 products (24 bits: 8 moduli at these k): the CuPy passes give NumPy's float32 path
    bit for bit, and the error against the exact product is about cuBLAS SGEMM's."""
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    m, k, n = shape
    rng = np.random.default_rng(11)
    A, B = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    C0 = rng.standard_normal((m, n), dtype=np.float32)
    reference = C0.copy()
    ozaki.gemm(np, A, B, reference, 1.5, 0.5)
    ours = cupy.asarray(C0)
    runner = CudaOzaki()
    runner.gemm(cupy.asarray(A), cupy.asarray(B), ours, 1.5, 0.5, residue_levels=residue_levels)
    assert ours.dtype == cupy.float32 and np.array_equal(cupy.asnumpy(ours), reference)
    plain = cupy.empty((m, n), dtype=cupy.float32)
    runner.gemm(cupy.asarray(A), cupy.asarray(B), plain, residue_levels=residue_levels)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    sgemm = cupy.asnumpy(cupy.asarray(A) @ cupy.asarray(B))
    scale = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    ours_error = np.max(np.abs(cupy.asnumpy(plain) - exact) / scale)
    assert ours_error <= max(2.0**-23, 4 * np.max(np.abs(sgemm - exact) / scale)), ours_error
