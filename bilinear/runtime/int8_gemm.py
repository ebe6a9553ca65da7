"""The ozaki leaf's int8 GEMMs through cuBLAS: P_j = A'_j·B'_jᵀ per modulus, exact in int32.

cuBLAS is column-major: row-major P_j (m4×n4) is column-major P_jᵀ (n4×m4) = op(X)·Y, where X is
the column-major kp×n4 matrix that B'_jᵀ's row-major n4×kp storage is (op = T) and Y the
column-major kp×m4 matrix that A'_j's storage is (op = N): "TN", both K-contiguous, the layout
cuBLAS's IMMA kernels want.  Large products go in tiles; k tiles add into P_j (int32, exact).
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from ..lower.ozaki_passes import SPAN_ALIGN, tile_spans
from . import ozaki

# cuBLAS constants (CUDA's library_types.h and cublas_api.h): int8 inputs, int32 output and
# compute type, the default algorithm; CuPy's cublas.gemmStridedBatchedEx (and, while a graph is
# captured, cublas_capture.gemm_strided_ex) takes (handle, transa,
# transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc,
# strideC, batchCount, computeType, algo) (cupy_backends/cuda/libs/cublas.pyx).
CUDA_R_8I = 3
CUDA_R_32I = 10
CUBLAS_COMPUTE_32I = 72
CUBLAS_GEMM_DEFAULT = -1
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1

K_TILE: int | None = 0  # k tiles at most this long (None: TILE; 0: whole)


def issue(gemm: Callable, handle: int, ra: int, rb: int, products: int, m4: int, n4: int, kp: int, batch: int,
          strides: tuple[int, int, int], *, batched: bool, tile: int, k_tile: int | None) -> None:
    """P_j for ``batch`` moduli (device pointers; ``strides`` of A'_j, B'_jᵀ and P_j in elements):
    one strided-batched ``gemm`` call per tile over all of them (``batched``) or a call per
    modulus; tiles of at most ``tile`` rows and columns (0: whole) and ``k_tile`` k (None: as
    ``tile``; 0: whole)."""
    stride_a, stride_b, stride_c = strides
    one, zero = np.array(1, dtype=np.int32), np.array(0, dtype=np.int32)  # host int32 alpha, beta
    calls = [(0, batch)] if batched else [(j, 1) for j in range(batch)]
    depth_tile = (tile if k_tile is None else k_tile) or kp
    tile = tile or max(m4, n4)
    spans = (tile_spans(m4, tile, SPAN_ALIGN), tile_spans(n4, tile, SPAN_ALIGN),
             tile_spans(kp, depth_tile, ozaki.K_ALIGN))
    for j, count in calls:
        for (i0, rows), (j0, cols), (k0, depth) in itertools.product(*spans):
            # a tile of P_j: rows i0.. of A'_j, rows j0.. of B'_jᵀ; later k tiles add
            gemm(
                handle, CUBLAS_OP_T, CUBLAS_OP_N, cols, rows, depth,
                one.ctypes.data, rb + j * stride_b + j0 * kp + k0, CUDA_R_8I, kp, stride_b,
                ra + j * stride_a + i0 * kp + k0, CUDA_R_8I, kp, stride_a,
                (zero if k0 == 0 else one).ctypes.data, products + 4 * (j * stride_c + i0 * n4 + j0), CUDA_R_32I,
                n4, stride_c, count, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT,
            )
