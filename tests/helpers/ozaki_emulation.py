"""The GPU path of the Ozaki leaf (runtime/ozaki_cuda.py) on the CPU: its kernels compiled by g++
against tests/ozaki_emulator/ozaki_shim.h and run thread by thread, cuBLAS's strided-batched
int8 GEMM computed from its column-major definition, and device memory as host memory.  What it
checks: the driver's layout, offsets, pointers, argument types (each checked against the
kernel's parameter sizes) and the cuBLAS operands, transposes and leading dimensions; the
kernels' index arithmetic and residue/CRT arithmetic.  ``oz_stat_rows`` (a block-wide
reduction) is replaced by its definition, :func:`bilinear.runtime.ozaki.statistic`.
"""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np

SHIM = Path(__file__).resolve().parents[1] / "ozaki_emulator"
EMULATED = ("oz_amax_cols", "oz_sumsq_cols", "oz_norm_cols", "oz_residues_a", "oz_residues_bt", "oz_reconstruct",
            "oz_residues_a_s1", "oz_residues_bt_s1", "oz_reconstruct_s1")
_libraries: dict[str, ctypes.CDLL] = {}
_folder = tempfile.TemporaryDirectory(prefix="ozaki-emulator-")


def _library(source: str) -> ctypes.CDLL:
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    if key not in _libraries:
        folder = Path(_folder.name)
        (folder / f"{key}.cu").write_text(source)
        driver = folder / f"{key}.cpp"
        driver.write_text(f'#include "ozaki_shim.h"\n#include "{key}.cu"\n' + "".join(f"OZ_ENTRY({k})\n" for k in EMULATED))
        library = folder / f"{key}.so"
        subprocess.run(["g++", "-std=c++17", "-O1", "-ffp-contract=off", "-fPIC", "-shared", f"-I{SHIM}", f"-I{folder}",
                        str(driver), "-o", str(library)], check=True, capture_output=True, text=True)
        _libraries[key] = ctypes.CDLL(str(library))
    return _libraries[key]


def _argument(value) -> ctypes._SimpleCData:
    """A kernel argument as CuPy would pass it: arrays as pointers, NumPy scalars by their type."""
    if isinstance(value, np.ndarray):
        return ctypes.c_void_p(value.ctypes.data)
    kinds = {np.uint64: ctypes.c_uint64, np.int64: ctypes.c_int64, np.int32: ctypes.c_int32, np.float64: ctypes.c_double}
    for kind, ctype in kinds.items():
        if type(value) is kind:
            return ctype(value.item())
    raise TypeError(f"kernel argument {value!r} of type {type(value).__name__}: pass a NumPy scalar or an array")


class EmulatedKernel:
    def __init__(self, source: str, name: str):
        self.name = name
        self.function = None if name == "oz_stat_rows" else getattr(_library(source), f"emulate_{name}")

    def __call__(self, grid: tuple, block: tuple, args: tuple) -> None:
        if self.function is None:  # oz_stat_rows(a, lda, cols, norm, stat): its definition
            from bilinear.runtime.ozaki import statistic

            a, _, _, norm, stat = args
            wide = a.astype(np.float64)  # the kernel reads float32 rows as doubles
            bits = np.ascontiguousarray(statistic(np, wide, 1, "norm" if norm else "max")).view(np.uint64)
            ctypes.memmove(int(stat), bits.ctypes.data, 8 * len(bits))
            return
        values = [_argument(v) for v in args]
        pointers = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
        sizes = (ctypes.c_longlong * len(values))(*[ctypes.sizeof(v) for v in values])
        gx, gy = (tuple(grid) + (1,))[:2]
        status = self.function(ctypes.c_uint(gx), ctypes.c_uint(gy), ctypes.c_uint(block[0]), pointers, sizes, len(values))
        assert status == 0, f"{self.name}: argument {status} has the wrong size (or count: {status == -1})"


def _column_major(pointer: int, dtype, rows: int, cols: int, ld: int) -> np.ndarray:
    assert ld >= max(rows, 1)
    count = (cols - 1) * ld + rows if cols and rows else 0
    flat = np.ctypeslib.as_array((ctypes.c_byte * (count * np.dtype(dtype).itemsize)).from_address(pointer)).view(dtype)
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (np.dtype(dtype).itemsize, ld * np.dtype(dtype).itemsize))


class EmulatedCublas:
    """cublasGemmStridedBatchedEx for int8 inputs and int32 results, by its definition."""

    CUBLAS_POINTER_MODE_HOST = 0
    calls: list = []

    @staticmethod
    def setStream(handle, stream) -> None:
        pass

    @staticmethod
    def setPointerMode(handle, mode) -> None:
        assert mode == 0

    @classmethod
    def gemmStridedBatchedEx(cls, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                             strideB, beta, C, Ctype, ldc, strideC, batch, computeType, algo) -> None:
        assert (Atype, Btype, Ctype, computeType) == (3, 3, 10, 72)
        alpha, beta = ctypes.c_int32.from_address(alpha).value, ctypes.c_int32.from_address(beta).value
        cls.calls.append((transa, transb, m, n, k, lda, ldb, ldc, batch))
        for b in range(batch):
            a = _column_major(A + b * strideA, np.int8, *((m, k) if transa == 0 else (k, m)), lda)
            x = _column_major(B + b * strideB, np.int8, *((k, n) if transb == 0 else (n, k)), ldb)
            product = (a if transa == 0 else a.T).astype(np.int64) @ (x if transb == 0 else x.T).astype(np.int64)
            assert np.abs(product).max(initial=0) < 2**31, "int32 overflow"
            c = _column_major(C + 4 * b * strideC, np.int32, m, n, ldc)  # strides count elements
            c[...] = alpha * product + (beta * c if beta else 0)


class _Buffer:
    """A device buffer (uint8) in host memory, filled with junk so unwritten bytes show."""

    def __init__(self, nbytes: int):
        self.array = np.full(nbytes, 0xA5, dtype=np.uint8)
        self.nbytes = nbytes
        self.data = SimpleNamespace(ptr=self.array.ctypes.data)

    def __getitem__(self, key):
        return self.array[key]


class _Event:
    """A CUDA event that records nothing (the runner's pass marks)."""

    def record(self) -> None:
        pass


def emulated_runner(monkeypatch, capturing: bool = False):
    """A CudaOzaki whose kernels, cuBLAS and memory are the CPU stand-ins above; with ``capturing``,
    its stream says it captures a graph, so the int8 GEMMs go through cublas_capture (emulated too)."""
    from bilinear.runtime import ozaki_cuda

    monkeypatch.setattr(ozaki_cuda, "compiled_function", EmulatedKernel)
    monkeypatch.setattr(ozaki_cuda, "device_info", lambda: SimpleNamespace(sms=2))
    monkeypatch.setattr(ozaki_cuda, "current_device", lambda: 0)  # one GPU
    runner = ozaki_cuda.CudaOzaki.__new__(ozaki_cuda.CudaOzaki)
    runner.cupy = SimpleNamespace(
        empty=lambda nbytes, dtype: _Buffer(nbytes),
        cuda=SimpleNamespace(device=SimpleNamespace(get_cublas_handle=lambda: 0),
                             get_current_stream=lambda: SimpleNamespace(ptr=0, is_capturing=lambda: capturing),
                             Event=_Event),
    )
    runner.workspace = None
    runner.batched = True  # the tests set it (the runner's default: False, one call per modulus)
    runner.tile, runner.k_tile = 0, None
    runner._kernels = {}
    runner.__dict__["_cublas"] = EmulatedCublas
    if capturing:  # the C API's order after the handle is CuPy's wrapper's
        monkeypatch.setattr(ozaki_cuda.cublas_capture, "prepare", lambda handle, stream: None)
        monkeypatch.setattr(ozaki_cuda.cublas_capture, "gemm_strided_ex", EmulatedCublas.gemmStridedBatchedEx)
        monkeypatch.setattr(runner, "_cublas", None, raising=False)  # CuPy's wrappers refuse a capturing stream
    return runner
