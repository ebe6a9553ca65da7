"""cuBLAS GEMMs callable while a stream captures a CUDA graph.

CuPy's cuBLAS wrappers raise during stream capture; cuBLAS itself (CUDA 12 and
later) captures GEMMs.  This calls the very library CuPy calls (so the handle
CuPy made is valid for it) through ctypes, with the argument order of the
cuBLAS C API.

A GEMM captured without a workspace of the caller's allocates one in the graph
(cuBLAS 12.2 and later, by ``cudaMallocAsync``): a memory allocation node and a
free node around each GEMM that needs workspace (cuBLAS's split-K algorithms,
the FP64 1280 x 1280 leaves of n = 5120 among them), which the graph's memory
holds and every replay maps.  A graph of ours gives each handle a workspace it
holds instead (:func:`holding`): only kernel nodes and cuBLAS's memsets are left,
and :mod:`bilinear.runtime.graph_memsets` makes those kernels too (a replay of
Winograd L2 at n = 5120 took 72-81 µs of host time with the allocations, 68-71
µs with the memsets alone: ``benchmarks/graph_launch_probe.py``, session 64).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from contextlib import contextmanager
from functools import cache
from typing import Iterator

_P, _I, _L = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong

#: Bytes of a captured handle's workspace: what cuBLAS recommends on Hopper and later (32 MiB;
#: 4 MiB on earlier GPUs), so a captured GEMM may choose any algorithm a direct call does.
WORKSPACE_BYTES = 32 * 2**20
# Each thread's workspaces while it captures a graph of ours (handle -> address, bytes): the GEMMs
# of one capture are issued by the thread that captures, whichever stream they go on.
_THREAD = threading.local()


@cache
def library() -> ctypes.CDLL:
    """The libcublas CuPy calls.

    Raises:
        RuntimeError: when no cuBLAS library is mapped into the process, or several are and CuPy's
            module does not tell which it calls.
    """
    lib = _through_cupy() or _mapped()
    gemm = [_P, _I, _I, _I, _I, _I, _P, _P, _I, _P, _I, _P, _P, _I]
    strided = [_P, _I, _I, _I, _I, _I, _P, _P, _I, _L, _P, _I, _L, _P, _P, _I, _L, _I]
    # transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,
    # ldc, strideC, batchCount, computeType, algo
    strided_ex = [_P, _I, _I, _I, _I, _I, _P, _P, _I, _I, _L, _P, _I, _I, _L, _P, _P, _I, _I, _L, _I, _I, _I]
    for name, types in (("cublasDgemm_v2", gemm), ("cublasSgemm_v2", gemm),
                        ("cublasDgemmStridedBatched", strided), ("cublasSgemmStridedBatched", strided),
                        ("cublasGemmStridedBatchedEx", strided_ex),
                        ("cublasSetStream_v2", [_P, _P]), ("cublasSetPointerMode_v2", [_P, _I]),
                        ("cublasSetWorkspace_v2", [_P, _P, ctypes.c_size_t])):
        getattr(lib, name).argtypes = types
        getattr(lib, name).restype = _I
    return lib


def _through_cupy() -> ctypes.CDLL | None:
    """CuPy's own cuBLAS module as a library: a symbol looked up through it resolves in the
    libraries it is linked against, so to the libcublas whose handles CuPy makes even where
    another is loaded too (torch's, in a process that uses both; the first mapped path had been
    taken).  None without CuPy, or where its module does not link cuBLAS itself."""
    try:
        from cupy_backends.cuda.libs import cublas as module
    except Exception:  # no CuPy, an older layout, or no loadable cuBLAS: the mapped library decides
        return None
    try:
        lib = ctypes.CDLL(module.__file__)  # already loaded: its handle, nothing new mapped
        lib.cublasDgemm_v2
    except (AttributeError, OSError, TypeError):
        return None
    return lib


def _mapped() -> ctypes.CDLL:
    """The one libcublas mapped into the process (found in its memory map)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libcublas.so" in line and "Lt" not in line}
    if not paths:
        raise RuntimeError("cuBLAS is not loaded in this process (multiply once through CuPy first)")
    if len(paths) > 1:
        raise RuntimeError(f"several cuBLAS libraries are loaded in this process ({', '.join(sorted(paths))}) and "
                           "CuPy's cuBLAS module does not tell which one it calls: a graph cannot be captured")
    return ctypes.CDLL(paths.pop())


def _check(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call} failed with cuBLAS status {status}")


def prepare(handle: int, stream: int) -> None:
    """The handle on ``stream`` with host scalars and, inside :func:`holding`, the workspace given
    for it."""
    lib = library()
    _check(lib.cublasSetStream_v2(handle, stream), "cublasSetStream")
    _check(lib.cublasSetPointerMode_v2(handle, 0), "cublasSetPointerMode")  # host scalars
    workspace = getattr(_THREAD, "workspaces", {}).get(handle)
    if workspace is not None:
        _check(lib.cublasSetWorkspace_v2(handle, *workspace), "cublasSetWorkspace")


@contextmanager
def holding(workspaces: dict[int, tuple[int, int]], stream: int) -> Iterator[None]:
    """While this thread captures a graph: each handle's GEMMs use the workspace given for it
    (address, bytes), which the graph then holds instead of allocating one per GEMM.  After, each
    handle is set on ``stream`` again, which gives it back cuBLAS's own workspace (every call of
    ours and CuPy's sets its stream before a GEMM too): the given one goes with the graph.

    Raises:
        RuntimeError: where cuBLAS refuses to set a handle's stream back, after trying every handle
            (and never in place of an error the capture raised)."""
    before = getattr(_THREAD, "workspaces", {})
    _THREAD.workspaces = workspaces
    try:
        yield
    finally:
        _THREAD.workspaces = before
        failed = [handle for handle in workspaces if library().cublasSetStream_v2(handle, stream) != 0]
        if failed and sys.exc_info()[0] is None:
            raise RuntimeError(f"cublasSetStream failed for {len(failed)} handle(s) after a capture: their workspace "
                               "may still be the graph's")


def gemm(double: bool, handle: int, m: int, n: int, k: int, alpha: int, a: int, lda: int, b: int, ldb: int,
         beta: int, c: int, ldc: int) -> None:
    """Column-major ``c = alpha·a·b + beta·c``, no transposes; scalars are host pointers."""
    name = "cublasDgemm_v2" if double else "cublasSgemm_v2"
    _check(getattr(library(), name)(handle, 0, 0, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), name)


def gemm_strided(double: bool, handle: int, m: int, n: int, k: int, alpha: int, a: int, lda: int, stride_a: int,
                 b: int, ldb: int, stride_b: int, beta: int, c: int, ldc: int, stride_c: int, batch: int) -> None:
    name = "cublasDgemmStridedBatched" if double else "cublasSgemmStridedBatched"
    status = getattr(library(), name)(handle, 0, 0, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                                      stride_c, batch)
    _check(status, name)


def gemm_strided_ex(handle: int, *args) -> None:
    """``cublasGemmStridedBatchedEx`` with the C API's arguments after the handle (transa, transb,
    m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC,
    batchCount, computeType, algo), as CuPy's ``gemmStridedBatchedEx`` takes them: the Ozaki leaf's
    int8 GEMMs while a graph is captured."""
    _check(library().cublasGemmStridedBatchedEx(handle, *args), "cublasGemmStridedBatchedEx")
