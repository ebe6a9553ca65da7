"""Compiling every kernel a set of products will launch, all at once, before timing anything.

Lowering already lists them (element-wise stage kernels, and the fused product launches
each size can make: :meth:`bilinear.lower.plan.Lowered.launches_for`).  Compiling them in
a thread pool keeps NVRTC's time out of measurements and off the GPU's clock (NVRTC
releases the GIL, so the compiles run in parallel).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Iterable

from ..lower.plan import Lowered
from ..lower.product import ProductStageSpec


def product_specs_for(jobs: Iterable[tuple[Lowered, tuple[int, int, int]]]) -> set[ProductStageSpec]:
    """Every fused product spec the given (program, M×K×N) products launch."""
    return {launch.spec for lowered, dims in jobs for launch in lowered.launches_for(*dims)}


def compile_ahead(jobs: Iterable[tuple[Lowered, tuple[int, int, int]]], backend, workers: int = 16) -> int:
    """Compile every kernel the jobs need on the CuPy backend, in parallel; returns how many."""
    from .product import compiled_kernel
    from .tuning import config_for

    jobs = list(jobs)
    elementwise = {kernel for lowered, _ in jobs for kernel in lowered.kernels()}
    tasks = [lambda k=k: backend.prepare([k]) for k in elementwise]
    tasks += [lambda s=s: compiled_kernel(s, config_for(s)) for s in product_specs_for(jobs)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda task: task(), tasks))
    return len(tasks)
