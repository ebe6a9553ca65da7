"""cuBLASLt's GEMM algorithms, one chosen by measurement at a shape (issue 13).

Where ``bilinear.matmul`` keeps cuBLAS, ``cupy.matmul``'s ``cublasDgemm``/``cublasSgemm`` runs
the algorithm cuBLAS's own heuristic picks.  cuBLASLt offers several for the same product, and
at some shapes one of them measured faster (FP64 2048³ by 1.8 %, FP32 4096×4096×64 by 4.9 %;
``benchmarks/results/issue13/session27/``), at others none did (MSMES's 8192³ leaf: every one
2-4 % slower).  cuBLASLt's algorithm is a 64-byte structure that "can be trivially serialized
and later restored for use with the same version of cuBLAS library" (cublasLtMatmulAlgo_t), so
``benchmarks/dispatch_grid.py --tune`` stores the bytes of the one that measured fastest at a
shape in the dispatch table with the library's version, and :func:`bound` restores them: for
another version, or an algorithm cuBLASLt no longer accepts for the layout, it gives None and
matmul keeps ``cublasDgemm``.

Row-major ``C = A·B`` is column-major ``Cᵀ = Bᵀ·Aᵀ``, as in the backend's GEMMs.  The library
is the libcublasLt beside the libcublas CuPy loaded (:func:`bilinear.runtime.cublas_capture.library`).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from functools import cache
from typing import Callable

import numpy as np

from .cublas_capture import library as cublas_library

_P, _I, _S, _U64, _I64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_int64
ALGORITHM_BYTES = 64
# CUDA_R_* data types and CUBLAS_COMPUTE_* compute types: full precision, no TF32 (as cupy.matmul)
_TYPES = {"float64": (1, 70), "float32": (0, 68)}
_MAX_WORKSPACE = 1  # CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES


class _Result(ctypes.Structure):
    """cublasLtMatmulHeuristicResult_t."""

    _fields_ = [("algo", ctypes.c_uint64 * (ALGORITHM_BYTES // 8)), ("workspace", ctypes.c_size_t),
                ("state", ctypes.c_int), ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


@dataclass(frozen=True)
class Layout:
    """A row-major product ``C (m×n) = A (m×k) · B (k×n)`` with the row strides of A, B and C."""

    dtype: str
    m: int
    k: int
    n: int
    lda: int
    ldb: int
    ldc: int

    @classmethod
    def contiguous(cls, dtype: str, m: int, k: int, n: int) -> "Layout":
        return cls(dtype, m, k, n, k, n, n)


@dataclass(frozen=True)
class Algorithm:
    """One of cuBLASLt's algorithms for a layout: its serialized bytes (hex), the workspace it
    needs and the heuristic's estimate of its waves."""

    data: str
    workspace_bytes: int
    waves: float


def _ok(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call} failed with cuBLAS status {status}")


@cache
def library() -> ctypes.CDLL:
    """libcublasLt from the folder of the libcublas CuPy loads (made to load it first: matmul's
    first call in a process may be a tuned one, before anything else used cuBLAS)."""
    import cupy

    cupy.cuda.device.get_cublas_handle()
    folder = os.path.dirname(cublas_library()._name)
    names = sorted(name for name in os.listdir(folder) if name.startswith("libcublasLt.so"))
    if not names:
        raise RuntimeError(f"no libcublasLt beside {cublas_library()._name}")
    lib = ctypes.CDLL(os.path.join(folder, names[0]))
    lib.cublasLtGetVersion.restype = _S
    lib.cublasLtMatmul.argtypes = [_P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _S, _P]
    lib.cublasLtMatrixLayoutCreate.argtypes = [_P, _I, _U64, _U64, _I64]
    return lib


def version() -> int:
    """The loaded cuBLASLt's version (130100 for 13.1.0): serialized algorithms hold for it only."""
    return int(library().cublasLtGetVersion())


@cache
def _handle(device: int) -> ctypes.c_void_p:
    handle = _P()
    _ok(library().cublasLtCreate(ctypes.byref(handle)), "cublasLtCreate")
    return handle


@cache
def _descriptors(layout: Layout) -> tuple:
    """The operation and matrix descriptors of ``layout`` (made once; a handful of tuned shapes)."""
    lib, (kind, compute) = library(), _TYPES[layout.dtype]
    operation = _P()
    _ok(lib.cublasLtMatmulDescCreate(ctypes.byref(operation), compute, kind), "cublasLtMatmulDescCreate")
    matrices = []
    for rows, cols, ld in ((layout.n, layout.k, layout.ldb), (layout.k, layout.m, layout.lda),
                           (layout.n, layout.m, layout.ldc)):
        matrix = _P()
        _ok(lib.cublasLtMatrixLayoutCreate(ctypes.byref(matrix), kind, rows, cols, ld), "cublasLtMatrixLayoutCreate")
        matrices.append(matrix)
    return operation, *matrices


def algorithms(layout: Layout, device: int, count: int = 16, workspace_bytes: int = 32 << 20) -> list[Algorithm]:
    """The algorithms cuBLASLt's heuristic offers for ``layout``, best first (at most ``count``,
    each needing at most ``workspace_bytes``)."""
    lib = library()
    operation, b, a, c = _descriptors(layout)
    preference, limit = _P(), _S(workspace_bytes)
    _ok(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(preference)), "cublasLtMatmulPreferenceCreate")
    try:
        _ok(lib.cublasLtMatmulPreferenceSetAttribute(preference, _MAX_WORKSPACE, ctypes.byref(limit),
                                                     ctypes.sizeof(limit)), "cublasLtMatmulPreferenceSetAttribute")
        found, returned = (_Result * count)(), _I()
        _ok(lib.cublasLtMatmulAlgoGetHeuristic(_handle(device), operation, b, a, c, c, preference, count, found,
                                               ctypes.byref(returned)), "cublasLtMatmulAlgoGetHeuristic")
    finally:
        lib.cublasLtMatmulPreferenceDestroy(preference)
    return [Algorithm(bytes(result.algo).hex(), int(result.workspace), float(result.waves))
            for result in found[:returned.value] if result.state == 0]


_WORKSPACES: dict[int, object] = {}  # per device: the largest workspace a bound algorithm needed


def _workspace(device: int, nbytes: int):
    import cupy

    held = _WORKSPACES.get(device)
    if held is None or held.nbytes < nbytes:
        with cupy.cuda.Device(device):
            _WORKSPACES[device] = cupy.empty(max(nbytes, 1), dtype=cupy.uint8)
    return _WORKSPACES[device]


def bound(layout: Layout, data: str, device: int) -> Callable[..., None] | None:
    """``run(a, b, c, alpha, beta)``: ``c = alpha·a·b + beta·c`` by the serialized algorithm
    ``data`` on the current stream, or None when this cuBLASLt does not accept it for ``layout``
    (checked with cublasLtMatmulAlgoCheck)."""
    lib = library()
    operation, b_layout, a_layout, c_layout = _descriptors(layout)
    algorithm = (ctypes.c_uint64 * (ALGORITHM_BYTES // 8)).from_buffer_copy(bytes.fromhex(data))
    checked, handle = _Result(), _handle(device)
    if lib.cublasLtMatmulAlgoCheck(handle, operation, b_layout, a_layout, c_layout, c_layout, ctypes.byref(algorithm),
                                   ctypes.byref(checked)) != 0:
        return None
    workspace = _workspace(device, checked.workspace)
    scalars = np.empty(2, dtype=layout.dtype)  # alpha and beta on the host, read during the call
    alpha_at, beta_at = scalars.ctypes.data, scalars.ctypes.data + scalars.itemsize
    size = checked.workspace

    def run(a, b, c, alpha: float, beta: float) -> None:
        import cupy

        scalars[0], scalars[1] = alpha, beta
        _ok(lib.cublasLtMatmul(handle, operation, alpha_at, b.data.ptr, b_layout, a.data.ptr, a_layout, beta_at,
                               c.data.ptr, c_layout, c.data.ptr, c_layout, ctypes.byref(algorithm),
                               workspace.data.ptr, size, cupy.cuda.get_current_stream().ptr), "cublasLtMatmul")

    return run
