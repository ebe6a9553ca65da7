#!/usr/bin/env python3
"""Is cuBLAS's ``dgemm``/``sgemm`` (what bilinear's backend calls) as fast as the ``gemmEx`` CuPy's
``matmul`` calls (compute type 64F/32F, algorithm DEFAULT_TENSOR_OP)?  The same product three ways
on one handle, interleaved, per shape:

    python3 benchmarks/gemm_entry_probe.py --out DIR

Time per call from CUDA events around back-to-back calls (≥ 20 ms a timing), after a second of
sustained warm-up, rounds alternating their order (``dispatch_grid``'s timing); ratios against
``cupy.matmul``, and ``cupy.matmul`` against itself (the noise a ratio of 1 carries).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import cupy
from cupy_backends.cuda.libs import cublas
from dispatch_grid import _rounds

from bilinear.runtime.compiled import make_backend

SHAPES = [("float64", 2048, 2048, 2048), ("float64", 4096, 4096, 4096), ("float64", 8192, 8192, 8192),
          ("float64", 16384, 16384, 4), ("float64", 32768, 32768, 8), ("float64", 65536, 1024, 64),
          ("float32", 4096, 4096, 64), ("float32", 8192, 8192, 8192), ("float64", 16384, 16384, 16384)]


def gemm_ex(A, B, C):
    """C = A·B through cublasGemmEx as CuPy's matmul calls it (row-major: Cᵀ = Bᵀ·Aᵀ)."""
    (m, k), n = A.shape, B.shape[1]
    double = A.dtype == np.float64
    scalars = np.array([1.0, 0.0], dtype=A.dtype)
    kind = cupy.cuda.runtime.CUDA_R_64F if double else cupy.cuda.runtime.CUDA_R_32F
    compute = cublas.CUBLAS_COMPUTE_64F if double else cublas.CUBLAS_COMPUTE_32F
    handle = cupy.cuda.device.get_cublas_handle()

    def run():
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        cublas.gemmEx(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, k, scalars.ctypes.data, B.data.ptr, kind, n,
                      A.data.ptr, kind, k, scalars.ctypes.data + scalars.itemsize, C.data.ptr, kind, n, compute,
                      cublas.CUBLAS_GEMM_DEFAULT_TENSOR_OP)

    return run


def probe(dtype: str, m: int, k: int, n: int, backend, repeat: int) -> str:
    rng = cupy.random.default_rng(m + k + n)
    A, B = rng.standard_normal((m, k), dtype=dtype), rng.standard_normal((k, n), dtype=dtype)
    C = [cupy.zeros((m, n), dtype) for _ in range(4)]
    rounds = _rounds({
        "matmul": lambda: cupy.matmul(A, B, out=C[0]),
        "matmul again": lambda: cupy.matmul(A, B, out=C[1]),
        "dgemm (bilinear)": lambda: backend.gemm(A, B, C[2], 1.0, 0.0),
        "gemmEx": gemm_ex(A, B, C[3]),
    }, repeat)
    ms = {label: statistics.median(values) for label, values in rounds.items()}
    same = all(bool(cupy.array_equal(C[0], c)) for c in C[1:])
    return f"{dtype} {m}x{k}x{n}: matmul {ms['matmul']:.4f} ms; " + ", ".join(
        f"{label} {ms['matmul'] / t:.4f}" for label, t in ms.items() if label != "matmul") + f"; bitwise equal {same}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    log = open(args.out / "gemm_entry_probe.txt", "w")
    backend = make_backend("cupy")
    for dtype, m, k, n in SHAPES:
        line = probe(dtype, m, k, n, backend, args.repeat)
        print(line, flush=True)
        log.write(line + "\n")
        cupy.get_default_memory_pool().free_all_blocks()
    return 0


if __name__ == "__main__":
    sys.exit(main())
