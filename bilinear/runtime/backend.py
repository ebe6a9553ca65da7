"""The backend interface the executor drives, and what every backend shares.

A *view* is a 2-D array of the backend's array module (NumPy or CuPy):
row-major with unit column stride and any row stride (a slice of a larger
C-contiguous matrix); its layout is :mod:`bilinear.runtime.views`' business.
Backends never allocate behind the executor's back: the only allocations are
the workspace the executor asks for by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Sequence

from ..lower.breadth import BreadthFirst, SplitKernel
from ..lower.elementwise import ElementwiseKernel
from ..lower.leaves import ProductLaunch
from .views import View, memory_span, overlaps  # noqa: F401 - importable from here too, as before views.py


#: What each backend's own product is called in tables, lines and plots.
LIBRARY_NAMES = {"cupy": "cuBLAS", "numpy": "NumPy"}


class NotPickled:
    """A product bound to this process's device, kernels, streams and caches: a copy is itself (it
    holds nothing a caller changes), and pickling it says what to do instead (it had failed on an
    RLock inside, or on a local function)."""

    def __reduce__(self):
        raise TypeError(f"a {type(self).__name__} holds this process's kernels and device buffers and is not pickled: "
                        "call bilinear.compile(...) in the process that multiplies")

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Backend(ABC):
    """Executes the launches of a plan: element-wise kernels, GEMMs, fused product stages."""

    name: str
    xp: Any  # the array module

    @abstractmethod
    def empty(self, rows: int, cols: int, dtype: str) -> View:
        """Workspace (counted by the caller)."""

    @abstractmethod
    def elementwise(self, kernel: ElementwiseKernel, views: Sequence[View]) -> None:
        """Run one element-wise stage kernel; ``views[slot]`` is the buffer of each slot."""

    @abstractmethod
    def gemm(self, a: View, b: View, c: View, alpha: float, beta: float) -> None:
        """``c = alpha·a@b + beta·c``; with ``beta == 0`` c is not read."""

    @abstractmethod
    def fused(self, launch: ProductLaunch, views: tuple[list, list, list], dims: tuple[int, int, int], alpha: float) -> None:
        """One fused product launch: for every product of ``launch.spec``,
        ``C[t] += alpha·coef_t·(Σ u·A[slot])(Σ v·B[slot])``; ``views`` are the A, B and C views
        by slot, ``dims`` is (M, N, K)."""

    @abstractmethod
    def scale(self, c: View, beta: float) -> None:
        """``c *= beta`` (``beta == 0`` sets zeros, so NaNs in c do not survive)."""

    @abstractmethod
    def split(self, plan: BreadthFirst, kernel: SplitKernel, source: View, out: Any) -> None:
        """``out[r] = Σ coef·block`` over the kernel's grid of ``source``; ``out`` is [products][rows][cols]."""

    @abstractmethod
    def merge(self, plan: BreadthFirst, products: Any, target: View, alpha: float, beta: float) -> None:
        """Every block of ``target`` (the merge kernel's grid): ``alpha·Σ coef·products[r] + beta·block``."""

    def gemm_batched(self, a: Any, b: Any, c: Any) -> None:
        """``c[r] = a[r] @ b[r]`` for every r of three [batch][rows][cols] arrays."""
        for r in range(a.shape[0]):
            self.gemm(a[r], b[r], c[r], 1.0, 0.0)

    def concurrently(self, calls: Sequence[Any]) -> None:
        """Run independent calls (each launches work writing memory no other call touches), on
        concurrent streams where the backend has them; in order on the CPU."""
        for call in calls:
            call()

    def prepare(self, kernels: Sequence[ElementwiseKernel]) -> None:
        """Compile ahead of the first call (nothing to compile on the CPU)."""

    def check_breadth(self, plan: BreadthFirst) -> None:
        """Refuse, before the first call, breadth-first kernels this backend could not build in minutes
        (the CPU builds none)."""

    def synchronize(self) -> None:
        """Wait for queued work (nothing to wait for on the CPU)."""

    def device(self) -> Any:
        """The device work is issued to now (None on the CPU, which has one)."""
        return None

    def ordered_after(self, last: Any) -> Any:
        """Order the work issued next after the work issued so far on ``last`` (what this returned
        for the product's previous call) and return what the next call returns it: a product's
        workspace is shared by its calls, so one issued on another stream must not overlap it.
        Nothing to order on the CPU, where work is done as it is issued."""
        return None
