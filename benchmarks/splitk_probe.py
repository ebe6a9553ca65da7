"""Probe: split-k through cuBLAS (one strided-batched GEMM over k chunks into a p×m×n workspace,
then a sum over the chunks) against cupy.matmul, where m·n is small and k is not.

    python3 benchmarks/splitk_probe.py [--shapes 4096x4096x64 ...] [--splits 2 4 8 16]

Ratio = cuBLAS time / split-k time; CUDA events around back-to-back calls (≥ 20 ms a timing)
after a second of warm-up, median of 7 rounds whose order reverses each round, random normal data.
"""

from __future__ import annotations

import argparse
import time

import cupy
import numpy as np
from cupy_backends.cuda.libs import cublas

from bilinear.measure import median
from dispatch_grid import _timed as timed  # back-to-back calls, ≥ 20 ms a timing


def splitk(A, B, C, W, p: int) -> None:
    m, k = A.shape
    n = B.shape[1]
    kc = k // p
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setStream(handle, cupy.cuda.get_current_stream().ptr)
    one, zero = np.ones(1, A.dtype), np.zeros(1, A.dtype)
    gemm = cublas.dgemmStridedBatched if A.dtype == np.float64 else cublas.sgemmStridedBatched
    # row-major C_j = A[:, j·kc:(j+1)·kc] · B[j·kc:(j+1)·kc, :] is column-major C_jᵀ = B_jᵀ · A_jᵀ
    gemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, kc, one.ctypes.data,
         B.data.ptr, n, kc * n, A.data.ptr, k, kc, zero.ctypes.data, W.data.ptr, n, m * n, p)
    cupy.sum(W[:p], axis=0, out=C)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", nargs="+", default=["4096x4096x64", "2048x32768x64", "1024x65536x128",
                                                         "2048x16384x256", "4096x16384x64", "1024x16384x1024",
                                                         "512x65536x512", "65536x1024x64"])
    parser.add_argument("--splits", nargs="+", type=int, default=[2, 4, 8, 16, 32])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    args = parser.parse_args()
    print(cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    for dtype in args.dtypes:
        for shape in args.shapes:
            m, k, n = (int(x) for x in shape.split("x"))
            rng = cupy.random.default_rng(1)
            A = rng.standard_normal((m, k), dtype=dtype)
            B = rng.standard_normal((k, n), dtype=dtype)
            C, C2 = cupy.empty((m, n), dtype), cupy.empty((m, n), dtype)
            splits = [p for p in args.splits if k % p == 0]
            W = cupy.empty((max(splits), m, n), dtype)
            calls = {"cublas": lambda: cupy.matmul(A, B, out=C)}
            for p in splits:
                calls[p] = (lambda p=p: splitk(A, B, C2, W, p))
            errors = {}
            cupy.matmul(A, B, out=C)
            for p in splits:
                splitk(A, B, C2, W, p)
                errors[p] = float(cupy.abs(C2 - C).max() / cupy.abs(C).max())
            timings = {label: timed(call) for label, call in calls.items()}
            end = time.perf_counter() + 1.0
            while time.perf_counter() < end:
                for t in timings.values():
                    t()
            samples = {label: [] for label in calls}
            order = list(timings)
            for _ in range(7):
                for label in order:
                    samples[label].append(timings[label]())
                order.reverse()
            ms = {label: median(v) for label, v in samples.items()}
            cells = "  ".join(f"p={p}: {ms['cublas'] / ms[p]:.3f}" for p in splits)
            print(f"{dtype} {shape:>16}  cuBLAS {ms['cublas']:.4f} ms  {cells}  (max rel diff {max(errors.values()):.1e})", flush=True)
            A = B = C = C2 = W = None
            cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
