"""Host time per call of bilinear.matmul against cupy.matmul on small products (issue 13).

For each shape: the host time to issue --calls back-to-back calls (perf_counter around the loop,
no synchronisation inside it: what the Python side costs per call), the time per call with the
GPU included (CUDA events around the loop), and with --profile the functions the matmul calls
spend their host time in (cProfile, sorted by own time).

    python3 benchmarks/host_overhead.py --profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import cupy as cp

import bilinear

SHAPES = [("float64", 100000, 16, 16), ("float32", 1000000, 4, 4), ("float64", 1000000, 8, 8),
          ("float32", 4096, 4096, 64), ("float64", 2048, 2048, 2048)]


def per_call(call, calls: int) -> tuple[float, float]:
    """(host µs per call, µs per call with the GPU)."""
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    t0 = time.perf_counter()
    for _ in range(calls):
        call()
    host = time.perf_counter() - t0
    stop.record()
    stop.synchronize()
    return 1e6 * host / calls, 1e3 * cp.cuda.get_elapsed_time(start, stop) / calls


def pieces(A, B, C, calls: int) -> None:
    """Host µs per call of what a prepared cuBLAS call does, piece by piece."""
    import numpy as np

    from bilinear.matmul_api import _gpu_backend
    from bilinear.runtime import prepared_calls

    gpu = _gpu_backend()
    cublas = gpu._cublas
    handle = cp.cuda.device.get_cublas_handle()
    m, k = A.shape
    n = B.shape[1]
    scalars = np.array([1.0, 0.0], dtype=A.dtype)
    raw = cublas.dgemm if A.dtype == np.float64 else cublas.sgemm
    steps = {
        "signature": lambda: prepared_calls.signature(A, B, C),
        "current stream": lambda: cp.cuda.get_current_stream().ptr,
        "cublas handle": lambda: cp.cuda.device.get_cublas_handle(),
        "setStream+mode": lambda: (cublas.setStream(handle, 0), cublas.setPointerMode(handle, 0)),
        "raw gemm call": lambda: raw(handle, 0, 0, n, m, k, scalars.ctypes.data, B.data.ptr, n, A.data.ptr, k,
                                     scalars.ctypes.data + scalars.itemsize, C.data.ptr, n),
        "backend.gemm": lambda: gpu.gemm(A, B, C, 1.0, 0.0),
        "bilinear.matmul": lambda: bilinear.matmul(A, B, out=C),
    }
    for label, step in steps.items():
        step()
        host = min(per_call(step, calls)[0] for _ in range(3))
        print(f"    {label:<16} {host:7.2f} µs/call", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--pieces", action="store_true", help="also time the pieces of a prepared cuBLAS call")
    args = parser.parse_args()
    for dtype, m, k, n in SHAPES:
        rng = cp.random.default_rng(0)
        A, B = rng.standard_normal((m, k), dtype=dtype), rng.standard_normal((k, n), dtype=dtype)
        C, C2 = cp.zeros((m, n), dtype), cp.zeros((m, n), dtype)
        calls = {"cupy.matmul": lambda: cp.matmul(A, B, out=C), "bilinear.matmul": lambda: bilinear.matmul(A, B, out=C2)}
        for call in calls.values():
            per_call(call, 20)
        for label, call in calls.items():
            host, total = min(per_call(call, args.calls) for _ in range(5))
            print(f"{dtype} {m}x{k}x{n}  {label:<16} host {host:7.1f} µs/call   with GPU {total:7.1f} µs/call", flush=True)
        if args.pieces:
            pieces(A, B, C2, args.calls)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(2000):
                bilinear.matmul(A, B, out=C2)
            profile.disable()
            cp.cuda.Device().synchronize()
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(18)
            print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[:4000], flush=True)


if __name__ == "__main__":
    main()
