"""Probe (issue 13): does an algorithm cuBLASLt's heuristic offers beat ``cupy.matmul`` (cublasDgemm /
cublasSgemm) at the shapes where ``bilinear.matmul`` keeps cuBLAS?

Every algorithm the heuristic offers (up to 32, 64 MiB of workspace allowed) is checked against
``cupy.matmul``'s product and timed beside it: 20 ms batches of back-to-back calls, a 1 s sustained
warm-up, 11 rounds whose order reverses each time (as ``dispatch_grid.py`` times).  ``--fixed-order``
times one call per timing, 15 rounds in one order with ``cupy.matmul`` first, as a first probe
did: ``cupy.matmul``'s host time (20-30 µs) and the order at the 700 W cap then make cuBLASLt look
1.05-1.6x faster, where timed fairly its best algorithm is 0.6-4.9 % faster than ``cupy.matmul``
(``benchmarks/results/issue13/session27/``).

    python3 benchmarks/cublaslt_probe.py [--large] [--fixed-order]
    python3 benchmarks/cublaslt_probe.py --leaf 16384    # MSMES's level-1 leaf against cublasDgemm

At the leaf (8192³ views of 16384² matrices, beta = 1) every offered algorithm was 2.1-3.8 %
slower than ``cublasDgemm`` (``benchmarks/results/issue13/session28/``).
"""

from __future__ import annotations

import argparse
import ctypes
import os

import cupy as cp
from dispatch_grid import _interleaved  # the grid's timing: 20 ms batches, 1 s sustained warm-up, alternating rounds

from bilinear.measure import median, time_interleaved
from bilinear.runtime.cublas_capture import library as cublas_library

SHAPES = [("float64", 2048, 2048, 2048), ("float64", 3072, 3072, 3072), ("float64", 4096, 4096, 4096),
          ("float64", 16384, 16384, 4), ("float64", 32768, 32768, 8), ("float64", 65536, 1024, 64),
          ("float32", 4096, 4096, 64)]  # m, k, n: the grid's shapes where matmul keeps cuBLAS
LARGE = [("float64", 8192, 8192, 8192), ("float64", 16384, 16384, 16384), ("float64", 8192, 4096, 8192),
         ("float32", 8192, 8192, 8192), ("float32", 16384, 16384, 16384)]
WORKSPACE = 64 << 20


class Heuristic(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def _ok(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call}: cuBLAS status {status}")


def lt_library() -> ctypes.CDLL:
    """libcublasLt: beside the libcublas CuPy loaded, else wherever the loader finds it (session 71's
    H200 image: CuPy's cuBLAS module sits in site-packages, with no libcublasLt beside it)."""
    cp.cuda.device.get_cublas_handle()  # loads libcublas
    folder = os.path.dirname(cublas_library()._name)
    beside = sorted(f for f in os.listdir(folder) if f.startswith("libcublasLt.so")) if folder else []
    for name in [os.path.join(folder, f) for f in beside] + ["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"]:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        print(f"libcublas {cublas_library()._name}, libcublasLt {lib._name}")
        return lib
    raise RuntimeError(f"no libcublasLt beside {cublas_library()._name} nor on the loader's path")


class Lt:
    """cuBLASLt (:func:`lt_library`); row-major C = A·B as column-major Cᵀ = Bᵀ·Aᵀ."""

    def __init__(self) -> None:
        self.lib = lt_library()
        self.handle = ctypes.c_void_p()
        _ok(self.lib.cublasLtCreate(ctypes.byref(self.handle)), "cublasLtCreate")
        self.workspace = cp.empty(WORKSPACE, dtype=cp.uint8)

    def algorithms(self, dtype: str, m: int, k: int, n: int, lda: int = 0, ldb: int = 0, ldc: int = 0) -> tuple:
        """The heuristic's algorithms for row-major A (m×k), B (k×n), C (m×n) with these row strides
        (0: contiguous)."""
        kind, compute = {"float64": (1, 70), "float32": (0, 68)}[dtype]  # CUDA_R_*, CUBLAS_COMPUTE_* (no TF32)
        desc = ctypes.c_void_p()
        _ok(self.lib.cublasLtMatmulDescCreate(ctypes.byref(desc), compute, kind), "cublasLtMatmulDescCreate")
        layouts = []
        for rows, cols, ld in ((n, k, ldb or n), (k, m, lda or k), (n, m, ldc or n)):
            layout = ctypes.c_void_p()
            _ok(self.lib.cublasLtMatrixLayoutCreate(ctypes.byref(layout), kind, ctypes.c_uint64(rows),
                                                    ctypes.c_uint64(cols), ctypes.c_int64(ld)), "layout")
            layouts.append(layout)
        preference = ctypes.c_void_p()
        _ok(self.lib.cublasLtMatmulPreferenceCreate(ctypes.byref(preference)), "preference")
        size = ctypes.c_size_t(WORKSPACE)
        _ok(self.lib.cublasLtMatmulPreferenceSetAttribute(preference, 1, ctypes.byref(size), ctypes.sizeof(size)), "max workspace")
        found, count = (Heuristic * 32)(), ctypes.c_int()
        _ok(self.lib.cublasLtMatmulAlgoGetHeuristic(self.handle, desc, *layouts, layouts[2], preference, 32, found,
                                                    ctypes.byref(count)), "heuristic")
        return desc, layouts, [found[i] for i in range(count.value) if found[i].state == 0]

    def call(self, desc, layouts, found: Heuristic, A, B, C, beta: float = 0.0) -> None:
        scalar = ctypes.c_double if A.dtype == cp.float64 else ctypes.c_float
        one, scaled = scalar(1), scalar(beta)
        _ok(self.lib.cublasLtMatmul(self.handle, desc, ctypes.byref(one), ctypes.c_void_p(B.data.ptr), layouts[0],
                                    ctypes.c_void_p(A.data.ptr), layouts[1], ctypes.byref(scaled), ctypes.c_void_p(C.data.ptr),
                                    layouts[2], ctypes.c_void_p(C.data.ptr), layouts[2], ctypes.byref(found.algo),
                                    ctypes.c_void_p(self.workspace.data.ptr), ctypes.c_size_t(WORKSPACE),
                                    ctypes.c_void_p(cp.cuda.get_current_stream().ptr)), "cublasLtMatmul")


def _fixed_order(calls: dict) -> dict[str, float]:
    """The biased timing: one call per timing (host time inside it), three warm-ups each, then 15
    rounds in one order (bilinear's plain timer); the median per call, in ms."""
    rounds = time_interleaved(list(calls.values()), cp, repeat=15, warmup=3)
    return {name: median(seconds) * 1e3 for name, seconds in zip(calls, rounds)}


def probe(lt: Lt, dtype: str, m: int, k: int, n: int, fixed_order: bool) -> None:
    rng = cp.random.default_rng(1)
    A, B = rng.standard_normal((m, k), dtype=dtype), rng.standard_normal((k, n), dtype=dtype)
    C, reference = cp.empty((m, n), dtype=dtype), A @ B
    desc, layouts, found = lt.algorithms(dtype, m, k, n)
    calls = {"cupy.matmul": lambda: cp.matmul(A, B, out=C)}
    for index, choice in enumerate(found):
        def call(choice: Heuristic = choice) -> None:
            lt.call(desc, layouts, choice, A, B, C)

        call()
        error = float(cp.abs(C - reference).max() / cp.abs(reference).max())
        if error < (1e-12 if dtype == "float64" else 1e-5):
            calls[f"cuBLASLt #{index} (workspace {choice.workspace >> 10} KiB, waves {choice.waves:.2f})"] = call
        else:
            print(f"  cuBLASLt #{index} differs from cupy.matmul by {error:.1e}: left out")
    times = _fixed_order(calls) if fixed_order else _interleaved(calls, 11)
    base = times["cupy.matmul"]
    print(f"{dtype} {m}x{k}x{n}: cupy.matmul {base:.4f} ms, {len(calls) - 1} cuBLASLt algorithms")
    for name, ms in sorted(times.items(), key=lambda kv: kv[1]):
        print(f"   {ms:9.4f} ms  cupy.matmul / this {base / ms:.4f}  {name}", flush=True)


def probe_leaf(lt: Lt, dtype: str, n: int) -> None:
    """MSMES's level-1 leaf at n: C21 += A21·B11 on n/2 views of n×n matrices (row stride n, beta 1),
    through the backend's cublasDgemm against each cuBLASLt algorithm."""
    from bilinear.runtime.compiled import make_backend

    gpu, h, rng = make_backend("cupy"), n // 2, cp.random.default_rng(1)
    A, B, C = (rng.standard_normal((n, n), dtype=dtype) for _ in range(3))
    a, b, c = A[h:, :h], B[:h, :h], C[h:, :h]
    desc, layouts, found = lt.algorithms(dtype, h, h, h, n, n, n)
    calls = {"cublasDgemm (backend)": lambda: gpu.gemm(a, b, c, 1.0, 1.0)}
    for index, choice in enumerate(found):
        calls[f"cuBLASLt #{index} (workspace {choice.workspace >> 10} KiB, waves {choice.waves:.2f})"] = (
            lambda choice=choice: lt.call(desc, layouts, choice, a, b, c, 1.0))
    times = _interleaved(calls, 11)
    base = times["cublasDgemm (backend)"]
    print(f"{dtype} leaf {h}x{h}x{h} in {n}x{n} (beta 1): cublasDgemm {base:.4f} ms, {len(calls) - 1} cuBLASLt algorithms")
    for name, ms in sorted(times.items(), key=lambda kv: kv[1]):
        print(f"   {ms:9.4f} ms  cublasDgemm / this {base / ms:.4f}  {name}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large", action="store_true", help="large square and leaf shapes instead of the grid's")
    parser.add_argument("--fixed-order", action="store_true", help="time as the biased first probe did")
    parser.add_argument("--leaf", type=int, metavar="N", help="MSMES's level-1 leaf at N (float64) instead")
    args = parser.parse_args()
    lt = Lt()
    if args.leaf:
        probe_leaf(lt, "float64", args.leaf)
        return
    for shape in LARGE if args.large else SHAPES:
        probe(lt, *shape, args.fixed_order)


if __name__ == "__main__":
    main()
