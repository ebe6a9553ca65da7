"""Finding every kernel a set of products will launch, and compiling them all at once.

A dry run of the executor on a recording backend (NumPy arrays that are never
touched, so never really allocated) lists the element-wise kernels and the
fused product stages each (program, shape) launches.  Compiling them in a
thread pool before timing anything keeps NVRTC's time out of measurements and
off the GPU's clock (NVRTC releases the GIL, so the compiles run in parallel).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

import numpy as np

from ..lower.elementwise import ElementwiseKernel
from ..lower.plan import Lowered
from ..lower.product import ProductStageSpec
from .backend import Backend, LeafProduct, View
from .executor import Executor
from .fused import build_launch


class RecordingBackend(Backend):
    """Does no arithmetic; remembers which kernels a run would launch."""

    name = "recording"
    xp = np

    def __init__(self) -> None:
        self.elementwise_kernels: set[ElementwiseKernel] = set()
        self.product_specs: set[ProductStageSpec] = set()

    def empty(self, rows: int, cols: int, dtype: str) -> View:
        return np.empty((rows, cols), dtype=dtype)

    def elementwise(self, kernel: ElementwiseKernel, views: Sequence[View]) -> None:
        self.elementwise_kernels.add(kernel)

    def gemm(self, a: View, b: View, c: View, alpha: float, beta: float) -> None:
        pass

    def fused_products(self, products: Sequence[LeafProduct], dtype: str) -> None:
        launch = build_launch(products, dtype)
        if launch is not None:
            self.product_specs.add(launch.spec)

    def scale(self, c: View, beta: float) -> None:
        pass


def kernels_for(jobs: Iterable[tuple[Lowered, tuple[int, int, int]]]) -> RecordingBackend:
    """Every kernel the given (program, M×K×N) products launch."""
    recorder = RecordingBackend()
    for lowered, (M, K, N) in jobs:
        dtype = lowered.options.dtype
        A, B, C = (np.empty(shape, dtype=dtype) for shape in ((M, K), (K, N), (M, N)))
        Executor(lowered, recorder).run(A, B, C, alpha=1.0, beta=0.0)
    return recorder


def compile_ahead(jobs: Iterable[tuple[Lowered, tuple[int, int, int]]], backend, workers: int = 16) -> int:
    """Compile every kernel the jobs need on the CuPy backend, in parallel; returns how many."""
    from .product import compiled_kernel
    from .tuning import config_for

    recorded = kernels_for(jobs)
    tasks = [lambda k=k: backend.prepare([k]) for k in recorded.elementwise_kernels]
    tasks += [lambda s=s: compiled_kernel(s, config_for(s)) for s in recorded.product_specs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda task: task(), tasks))
    return len(tasks)
