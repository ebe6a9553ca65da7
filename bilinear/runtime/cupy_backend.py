"""The CuPy backend: generated kernels through NVRTC, GEMMs through cuBLAS.

Kernels are compiled once per process by the kernel service
(:mod:`bilinear.runtime.cuda`), keyed by their rendered source, the options
and the GPU architecture.  What a backend keeps of them, its streams and their
cuBLAS handles belong to one device each: one backend serves every device a
process uses, the current device's state at each launch.
Nothing here allocates device memory: views are passed as pointers with their
leading dimensions, and cuBLAS is called directly on them (``cupy.matmul``
would copy non-contiguous views).
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from ..lower.breadth import BreadthFirst, SplitKernel, check_buildable, render_breadth_first
from ..lower.elementwise import VECTOR, ElementwiseKernel, render_elementwise
from . import cublas_capture
from .backend import Backend, View
from .cuda import compiled_function, current_device, device_info
from .views import blas_leading_dimension as _ld  # the name gemm calls it by
from .views import row_stride, vector_aligned

THREADS = 256
CONCURRENT_STREAMS = 4  # enough to fill the GPU with leaves too small to fill it alone
BLOCKS_PER_SM = 8  # enough resident warps to keep 16-byte loads in flight

#: the name of CuPy's cuBLAS wrapper of each GEMM kind, by (kind, float64)
_CUBLAS_GEMMS = {("gemm", True): "dgemm", ("gemm", False): "sgemm",
                 ("gemm_strided", True): "dgemmStridedBatched", ("gemm_strided", False): "sgemmStridedBatched"}
_THREAD = threading.local()  # each thread's alpha and beta buffers (_host_scalars)


def _host_scalars(double: bool, alpha: float, beta: float) -> tuple[int, int]:
    """The host addresses of alpha and beta, as float64 or float32, for cuBLAS's host pointer mode.
    cuBLAS reads them before the call returns, so one buffer per thread serves all its calls; a
    NumPy array per call had cost 3.4–4.6 µs of a prepared call's host time (its ``.ctypes``, timed on a
    2-core EPYC: benchmarks/results/issue13/session59/README.md)."""
    buffers = _THREAD.__dict__
    held = buffers.get(double)
    if held is None:
        values = ((ctypes.c_double if double else ctypes.c_float) * 2)()
        held = buffers[double] = (values, ctypes.addressof(values), ctypes.sizeof(values) // 2)
    values, address, size = held
    values[0], values[1] = alpha, beta  # rounded to the dtype as NumPy would
    return address, address + size


def cupy_available() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError, or CUDA errors when there is no driver or device
        return False


@dataclass
class _OnDevice:
    """What a backend keeps on one device: a kernel loaded on one device does not run on another,
    nor does a stream or a cuBLAS handle made there (a product compiled once, then called on a
    second GPU, had launched the first GPU's kernels)."""

    by_kernel: dict[ElementwiseKernel, Any] = field(default_factory=dict)
    fused: Any = None  # a fused.FusedLaunches, made on the first fused launch
    breadth: dict[tuple[int, str], tuple[BreadthFirst, Any]] = field(default_factory=dict)
    streams: list = field(default_factory=list)  # concurrent streams for independent leaf products, made on first use
    handles: dict[int, int] = field(default_factory=dict)  # stream pointer -> its own cuBLAS handle (per stream)


class CupyBackend(Backend):
    name = "cupy"

    def __init__(self) -> None:
        import cupy

        self.xp = cupy
        self.capturing = False  # a stream is capturing a graph: GEMMs go through cublas_capture
        self._devices: dict[int, _OnDevice] = {}

    def _here(self) -> _OnDevice:
        """The current device's state, made on its first launch."""
        device = current_device()
        state = self._devices.get(device)
        if state is None:
            state = self._devices.setdefault(device, _OnDevice())
        return state

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

    def device(self) -> int:
        return current_device()

    def ordered_after(self, last):
        """The current stream, made to wait for everything issued on ``last`` (the previous call's
        stream) where that is another: an event recorded now follows that call's work.  Nothing
        is recorded while a graph is captured (an event from outside would break the capture), nor
        where the stream stays the same (no host time for the usual case)."""
        stream = self.xp.cuda.get_current_stream()
        if last is not None and last.ptr != stream.ptr and not self.capturing and not stream.is_capturing():
            stream.wait_event(last.record())
        return stream

    # --- element-wise kernels ------------------------------------------------------------------
    def check_breadth(self, plan: BreadthFirst) -> None:
        # (built at the first call: refused here, not minutes into it)
        check_buildable(plan, "use fewer breadth-first levels, or the numpy backend (backend='numpy'), which builds none")

    def prepare(self, kernels: Sequence[ElementwiseKernel]) -> None:
        """Compile each kernel not yet compiled (the kernel service keys them by rendered source)."""
        for kernel in kernels:
            self._function(kernel)

    def _function(self, kernel: ElementwiseKernel):
        by_kernel = self._here().by_kernel
        if kernel not in by_kernel:
            by_kernel[kernel] = compiled_function(render_elementwise(kernel), kernel.name)
        return by_kernel[kernel]

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
        self.bound_gemm(m, k, n, _ld(a), _ld(b), _ld(c), a.dtype)(a, b, c, alpha, beta)

    def bound_gemm(self, m: int, k: int, n: int, lda: int, ldb: int, ldc: int, dtype):
        """:meth:`gemm` with its sizes and leading dimensions fixed (k > 0): ``run(a, b, c, alpha,
        beta)`` (matmul's prepared calls keep it: a repeated small product pays only the call)."""
        double = dtype == np.float64

        def run(a: View, b: View, c: View, alpha: float, beta: float) -> None:
            alpha_at, beta_at = _host_scalars(double, alpha, beta)
            # Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands, keep the leading dimensions.
            self._cublas_call("gemm", double, (n, m, k, alpha_at, b.data.ptr, ldb, a.data.ptr, lda, beta_at, c.data.ptr,
                                               ldc))

        return run

    def gemm_batched(self, a, b, c) -> None:
        batch, m, k = a.shape
        n = b.shape[2]
        if batch == 0 or m == 0 or n == 0 or k == 0:
            super().gemm_batched(a, b, c)
            return
        one_at, zero_at = _host_scalars(a.dtype == np.float64, 1.0, 0.0)
        self._cublas_call("gemm_strided", a.dtype == np.float64, (n, m, k, one_at, b.data.ptr, n, k * n, a.data.ptr, k,
                                                                   m * k, zero_at, c.data.ptr, n, m * n, batch))

    def _cublas_call(self, kind: str, double: bool, args: tuple) -> None:
        """A cuBLAS GEMM (``kind`` "gemm" or "gemm_strided") without transposes on the current stream,
        through CuPy, or through :mod:`cublas_capture` while a graph is being captured; alpha and beta
        are host pointers (:func:`_host_scalars`)."""
        current = self.xp.cuda.get_current_stream()
        stream = current.ptr
        handle = self._handle(stream)
        if self.capturing or current.is_capturing():  # a graph of ours, or one the caller captures
            cublas_capture.prepare(handle, stream)
            getattr(cublas_capture, kind)(double, handle, *args)
            return
        cublas = self._cublas
        cublas.setStream(handle, stream)
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        getattr(cublas, _CUBLAS_GEMMS[kind, double])(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, *args)

    def cublas_handles(self, concurrent: bool) -> list[int]:
        """The cuBLAS handles a graph captured on the current device may issue GEMMs with: CuPy's,
        and where leaves run concurrently, each concurrent stream's handle made so far (the call
        before a capture makes those it uses)."""
        handles = [self.xp.cuda.device.get_cublas_handle()]
        if concurrent:
            handles += [handle for handle in self._here().handles.values() if handle]
        return handles

    # --- concurrent leaf products -------------------------------------------------------------------
    def _handle(self, stream: int) -> int:
        """CuPy's cuBLAS handle on its streams; a handle of its own on each of ours."""
        handles = self._here().handles
        if stream not in handles:
            return self.xp.cuda.device.get_cublas_handle()
        if handles[stream] == 0:
            handles[stream] = self._cublas.create()
        return handles[stream]

    def concurrently(self, calls) -> None:
        """Fork the calls over CONCURRENT_STREAMS streams after the current stream's work, and
        join them back into it (events both ways, so graph capture follows the fork too)."""
        calls = list(calls)
        if len(calls) < 2:
            for call in calls:
                call()
            return
        cuda, here = self.xp.cuda, self._here()
        if not here.streams:
            here.streams = [cuda.Stream(non_blocking=True) for _ in range(CONCURRENT_STREAMS)]
            here.handles.update({stream.ptr: 0 for stream in here.streams})
        origin = cuda.get_current_stream()
        start = origin.record()
        used = here.streams[: len(calls)]
        for stream in used:
            stream.wait_event(start)
        for index, call in enumerate(calls):
            with used[index % len(used)]:
                call()
        for stream in used:
            origin.wait_event(stream.record())

    # --- breadth-first split and merge -----------------------------------------------------------
    def _breadth_function(self, plan: BreadthFirst, name: str):
        """The plan's kernel, rendered and compiled on first use.  Keyed by the plan's identity:
        rendering (or even hashing) a plan of hundreds of products on every call cost milliseconds."""
        key, breadth = (id(plan), name), self._here().breadth
        if key not in breadth:
            breadth[key] = (plan, compiled_function(render_breadth_first(plan), name))  # the plan kept alive with its id
        return breadth[key][1]

    def split(self, plan: BreadthFirst, kernel: SplitKernel, source: View, out) -> None:
        rows, cols = out.shape[1], out.shape[2]
        width = VECTOR[plan.dtype][1]
        vec = cols % width == 0 and vector_aligned(source, width) and out.data.ptr % (width * out.itemsize) == 0
        self._launch(self._breadth_function(plan, kernel.name), rows * cols // (width if vec else 1),
                     (source, np.int64(_ld(source)), out, np.int32(rows), np.int32(cols), np.int32(vec)))

    def merge(self, plan: BreadthFirst, products, target: View, alpha: float, beta: float) -> None:
        rows, cols = products.shape[1], products.shape[2]
        width = VECTOR[plan.dtype][1]
        vec = cols % width == 0 and vector_aligned(target, width) and products.data.ptr % (width * products.itemsize) == 0
        scalar = np.float64 if plan.dtype == "float64" else np.float32
        self._launch(self._breadth_function(plan, plan.merge.name), rows * cols // (width if vec else 1),
                     (products, target, np.int64(_ld(target)), np.int32(rows), np.int32(cols), scalar(alpha),
                      scalar(beta), np.int32(vec)))

    def _launch(self, function, work: int, args: tuple) -> None:
        if work == 0:
            return
        blocks = min(-(-work // THREADS), device_info().sms * BLOCKS_PER_SM)
        function((blocks,), (THREADS,), args)

    # --- fused product stages ------------------------------------------------------------------
    def fused(self, launch, views, dims, alpha: float) -> None:
        here = self._here()
        if here.fused is None:
            from .fused import FusedLaunches
            from .product import ProductStage

            here.fused = FusedLaunches(ProductStage)
        here.fused.run(launch, views, dims, alpha)
