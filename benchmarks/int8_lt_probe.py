"""Probe: is any of cuBLASLt's int8 GEMM algorithms faster than the one the ozaki leaf's
``cublasGemmStridedBatchedEx`` call gets, at the leaf's shapes?  On the GPU.

The leaf's int8 product P = A'·B'ᵀ (int8 m×k and n×k, both K-contiguous; int32 m×n) is, column-major,
Pᵀ (n×m) = op(X)·Y with X the k×n matrix B'ᵀ's storage is (op = T) and Y the k×m one A''s is: "TN".
For each shape, the algorithms cuBLASLt's heuristic offers (at most --count, a 32 MiB workspace) are
timed interleaved with the leaf's own call (CUDA events, median of --repeat, each call run --calls
times back to back, as the leaf runs one per modulus); each must give the same int32 bits.

    python benchmarks/int8_lt_probe.py --shapes 8192,16384,8192 8192,8192,8192
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy as cp  # noqa: E402
from cublaslt_probe import Heuristic, lt_library  # noqa: E402  (benchmarks/ is the script's folder)
from cublaslt_probe import _ok as ok  # noqa: E402

from bilinear.measure import median, time_interleaved  # noqa: E402
from bilinear.runtime import int8_gemm  # noqa: E402

_P, _I, _S, _U64, _I64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_int64
TRANSA, TRANSB, MAX_WORKSPACE = 3, 4, 1  # cublasLtMatmulDescAttributes_t, cublasLtMatmulPreferenceAttributes_t
WORKSPACE = 32 << 20


def descriptors(lib, m: int, k: int, n: int):
    operation = _P()
    ok(lib.cublasLtMatmulDescCreate(ctypes.byref(operation), int8_gemm.CUBLAS_COMPUTE_32I, int8_gemm.CUDA_R_32I),
       "cublasLtMatmulDescCreate")
    for attribute, value in ((TRANSA, int8_gemm.CUBLAS_OP_T), (TRANSB, int8_gemm.CUBLAS_OP_N)):
        v = ctypes.c_int32(value)
        ok(lib.cublasLtMatmulDescSetAttribute(operation, attribute, ctypes.byref(v), ctypes.sizeof(v)), "set trans")
    layouts = []
    for kind, rows, cols, ld in ((int8_gemm.CUDA_R_8I, k, n, k), (int8_gemm.CUDA_R_8I, k, m, k),
                                 (int8_gemm.CUDA_R_32I, n, m, n)):
        layout = _P()
        ok(lib.cublasLtMatrixLayoutCreate(ctypes.byref(layout), kind, rows, cols, ld), "cublasLtMatrixLayoutCreate")
        layouts.append(layout)
    return operation, layouts


def heuristics(lib, handle, operation, layouts, count: int) -> list[Heuristic]:
    preference, limit = _P(), _S(WORKSPACE)
    ok(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(preference)), "cublasLtMatmulPreferenceCreate")
    ok(lib.cublasLtMatmulPreferenceSetAttribute(preference, MAX_WORKSPACE, ctypes.byref(limit), ctypes.sizeof(limit)),
       "set workspace")
    found, returned = (Heuristic * count)(), _I()
    x, y, c = layouts
    ok(lib.cublasLtMatmulAlgoGetHeuristic(handle, operation, x, y, c, c, preference, count, found,
                                          ctypes.byref(returned)), "cublasLtMatmulAlgoGetHeuristic")
    lib.cublasLtMatmulPreferenceDestroy(preference)
    return [found[i] for i in range(returned.value) if found[i].state == 0]


def probe(lib, handle, shape: tuple[int, int, int], count: int, repeat: int, calls: int) -> None:
    m, k, n = shape
    rng = cp.random.default_rng(sum(shape))
    a = rng.integers(-128, 128, size=(m, k), dtype=cp.int32).astype(cp.int8)
    bt = rng.integers(-128, 128, size=(n, k), dtype=cp.int32).astype(cp.int8)
    reference, out = cp.empty((m, n), dtype=cp.int32), cp.empty((m, n), dtype=cp.int32)
    workspace = cp.empty(WORKSPACE, dtype=cp.uint8)
    cublas_handle = cp.cuda.device.get_cublas_handle()
    from cupy_backends.cuda.libs import cublas

    def leaf_call(target):
        cublas.setStream(cublas_handle, cp.cuda.get_current_stream().ptr)
        cublas.setPointerMode(cublas_handle, cublas.CUBLAS_POINTER_MODE_HOST)
        for _ in range(calls):
            int8_gemm.issue(cublas.gemmStridedBatchedEx, cublas_handle, a.data.ptr, bt.data.ptr, target.data.ptr,
                            m, n, k, 1, (m * k, n * k, m * n), batched=False, tile=0, k_tile=0)

    operation, layouts = descriptors(lib, m, k, n)
    x, y, c = layouts
    one, zero = ctypes.c_int32(1), ctypes.c_int32(0)
    found = heuristics(lib, handle, operation, layouts, count)

    def lt_call(result, target):
        def run():
            for _ in range(calls):
                ok(lib.cublasLtMatmul(handle, operation, ctypes.byref(one), bt.data.ptr, x, a.data.ptr, y,
                                      ctypes.byref(zero), target.data.ptr, c, target.data.ptr, c,
                                      ctypes.byref(result.algo), workspace.data.ptr, result.workspace,
                                      cp.cuda.get_current_stream().ptr), "cublasLtMatmul")
        return run

    leaf_call(reference)
    cp.cuda.Device().synchronize()
    runs = [lambda: leaf_call(out)] + [lt_call(result, out) for result in found]
    times = time_interleaved(runs, cp, repeat=repeat, warmup=1)
    ops = calls * 2.0 * m * k * n
    leaf = median(times[0])
    print(f"{m}x{k}x{n} ({calls} calls): leaf's call {1e3 * leaf:.2f} ms ({ops / leaf / 1e12:.0f} TOPS); "
          f"{len(found)} cuBLASLt algorithms", flush=True)
    for index, (result, seconds) in enumerate(zip(found, times[1:])):
        lt_call(result, out)()
        same = bool(cp.array_equal(out, reference))
        t = median(seconds)
        print(f"  #{index:2d} {1e3 * t:8.2f} ms {ops / t / 1e12:6.0f} TOPS  leaf/this {leaf / t:.3f}  "
              f"waves {result.waves:6.2f} ws {result.workspace >> 10:6d} KiB  "
              f"{'same bits' if same else 'DIFFERENT'}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", nargs="+", default=["8192,16384,8192", "8192,8192,8192"], help="m,k,n")
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args()
    lib = lt_library()
    lib.cublasLtMatmul.argtypes = [_P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _S, _P]
    lib.cublasLtMatrixLayoutCreate.argtypes = [_P, _I, _U64, _U64, _I64]
    lib.cublasLtGetVersion.restype = _S
    handle = _P()
    ok(lib.cublasLtCreate(ctypes.byref(handle)), "cublasLtCreate")
    print(f"cuBLASLt {lib.cublasLtGetVersion()} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    for text in args.shapes:
        probe(lib, handle, tuple(int(v) for v in text.split(",")), args.count, args.repeat, args.calls)
        cp.get_default_memory_pool().free_all_blocks()
    return 0


if __name__ == "__main__":
    sys.exit(main())
