"""Probe (issue 13): the four ways one product reaches cuBLAS, timed side by side.

``cupy.matmul``; ``bilinear.matmul`` (its prepared call, the dispatch table's choice); the
backend's own ``cublasDgemm``/``cublasSgemm`` bound as matmul's prepared calls bind it; and each
of cuBLASLt's offered algorithms (``cublaslt_probe.py``'s), called directly.  GPU time as
``dispatch_grid.py`` times it (20 ms batches, 1 s sustained warm-up, 11 rounds in alternating
order), then the host time per call of each (50 calls without waiting for the GPU; a rough
figure, since the GPU's queue can fill):

    python3 benchmarks/matmul_paths_probe.py

At these shapes (where matmul keeps cuBLAS) the backend's call and cuBLASLt's best ran within
0.4 % of each other on the H100 (``benchmarks/results/issue13/session28/matmul_paths_probe.txt``):
no algorithm choice to gain there.
"""

from __future__ import annotations

import time

import cupy as cp
from cublaslt_probe import Lt
from dispatch_grid import _inputs, _interleaved

import bilinear
from bilinear.matmul_api import _gpu_backend

SHAPES = [("float32", 4096, 4096, 64), ("float64", 2048, 2048, 2048), ("float64", 65536, 1024, 64)]


def probe(lt: Lt, dtype: str, m: int, k: int, n: int) -> None:
    A, B, C = _inputs(dtype, m, k, n)
    outs = [cp.zeros_like(C) for _ in range(2)]
    own = _gpu_backend().bound_gemm(m, k, n, k, n, n, A.dtype)
    for _ in range(2):
        bilinear.matmul(A, B, out=outs[0])  # the second call is the prepared one
    calls = {"cupy.matmul": lambda: cp.matmul(A, B, out=C), "matmul": lambda: bilinear.matmul(A, B, out=outs[0]),
             "backend's own": lambda: own(A, B, outs[1], 1.0, 0.0)}
    desc, layouts, found = lt.algorithms(dtype, m, k, n)
    for index, choice in enumerate(found):
        lt_out = cp.zeros_like(C)
        calls[f"cuBLASLt #{index}"] = lambda choice=choice, lt_out=lt_out: lt.call(desc, layouts, choice, A, B, lt_out)
    ms = _interleaved(calls, 11)
    print(f"{dtype} {m}x{k}x{n}: ms, cupy.matmul / this")
    for name, v in sorted(ms.items(), key=lambda kv: kv[1]):
        print(f"   {v:9.4f}  {ms['cupy.matmul'] / v:.3f}  {name}")
    for name in ("cupy.matmul", "matmul", "backend's own", "cuBLASLt #0"):
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        for _ in range(50):
            calls[name]()
        host = (time.perf_counter() - start) / 50 * 1e6
        cp.cuda.Device().synchronize()
        print(f"   host time of {name}: {host:.1f} µs per call", flush=True)


def main() -> None:
    lt = Lt()
    for shape in SHAPES:
        probe(lt, *shape)


if __name__ == "__main__":
    main()
