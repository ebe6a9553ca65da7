"""The CuPy backend: generated kernels through NVRTC, GEMMs through cuBLAS.

Kernels are compiled once per process by the kernel service
(:mod:`bilinear.runtime.cuda`), keyed by their rendered source, the options
and the GPU architecture.
Nothing here allocates device memory: views are passed as pointers with their
leading dimensions, and cuBLAS is called directly on them (``cupy.matmul``
would copy non-contiguous views).
"""

from __future__ import annotations

from functools import cached_property
from typing import Sequence

import numpy as np

from ..lower.elementwise import VECTOR, ElementwiseKernel, render_elementwise
from .backend import Backend, View
from .cuda import compiled_function, device_info
from .views import blas_leading_dimension as _ld  # the name gemm calls it by
from .views import row_stride, vector_aligned

THREADS = 256
BLOCKS_PER_SM = 8  # enough resident warps to keep 16-byte loads in flight


def cupy_available() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError, or CUDA errors when there is no driver or device
        return False


class CupyBackend(Backend):
    name = "cupy"

    def __init__(self) -> None:
        import cupy

        self.xp = cupy
        self._by_kernel: dict[ElementwiseKernel, object] = {}
        self._fused = None  # a fused.FusedLaunches, made on the first fused launch

    @cached_property
    def _cublas(self):
        try:
            from cupy_backends.cuda.libs import cublas
        except ImportError:  # older CuPy layouts
            from cupy.cuda import cublas
        return cublas

    # --- memory -------------------------------------------------------------------------
    def empty(self, rows: int, cols: int, dtype: str) -> View:
        return self.xp.empty((rows, cols), dtype=dtype)

    def scale(self, c: View, beta: float) -> None:
        if beta == 0:
            c.fill(0)
        else:
            c *= beta

    def synchronize(self) -> None:
        self.xp.cuda.get_current_stream().synchronize()

    # --- element-wise kernels ------------------------------------------------------------------
    def prepare(self, kernels: Sequence[ElementwiseKernel]) -> None:
        """Compile each kernel not yet compiled (the kernel service keys them by rendered source)."""
        for kernel in kernels:
            self._function(kernel)

    def _function(self, kernel: ElementwiseKernel):
        if kernel not in self._by_kernel:
            self._by_kernel[kernel] = compiled_function(render_elementwise(kernel), kernel.name)
        return self._by_kernel[kernel]

    def elementwise(self, kernel: ElementwiseKernel, views: Sequence[View]) -> None:
        width = VECTOR[kernel.dtype][1]
        args: list = []
        for view in views:
            args += [view, np.int64(row_stride(view))]
        largest = 0
        for group in kernel.groups:
            rows, cols = views[group.writes[0]].shape
            slots = set(group.reads) | set(group.writes)
            aligned = cols % width == 0 and all(vector_aligned(views[s], width) for s in slots)
            args += [np.int32(rows), np.int32(cols), np.int32(aligned)]
            largest = max(largest, rows * cols // (width if aligned else 1))
        if largest == 0:
            return
        blocks = min(-(-largest // THREADS), device_info().sms * BLOCKS_PER_SM)
        self._function(kernel)((blocks, len(kernel.groups)), (THREADS,), tuple(args))

    # --- GEMM -----------------------------------------------------------------------------------
    def gemm(self, a: View, b: View, c: View, alpha: float, beta: float) -> None:
        m, k = a.shape
        n = b.shape[1]
        if m == 0 or n == 0:
            return
        if k == 0:
            self.scale(c, beta)
            return
        cublas = self._cublas
        handle = self.xp.cuda.device.get_cublas_handle()
        cublas.setStream(handle, self.xp.cuda.get_current_stream().ptr)
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        scalars = np.array([alpha, beta], dtype=a.dtype)
        step = scalars.itemsize
        gemm = cublas.dgemm if a.dtype == np.float64 else cublas.sgemm
        # Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands, keep the leading dimensions.
        gemm(
            handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, k,
            scalars.ctypes.data, b.data.ptr, _ld(b), a.data.ptr, _ld(a),
            scalars.ctypes.data + step, c.data.ptr, _ld(c),
        )

    # --- fused product stages ------------------------------------------------------------------
    def fused(self, launch, views, dims, alpha: float) -> None:
        if self._fused is None:
            from .fused import FusedLaunches
            from .product import ProductStage

            self._fused = FusedLaunches(ProductStage)
        self._fused.run(launch, views, dims, alpha)
