"""The NumPy backend: the same launch plan on the CPU, kernel by kernel.

Each method implements the semantics of the kernel the CuPy backend launches,
so CI tests lowering, recursion, peeling and in-place bookkeeping without a GPU.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..lower.breadth import BreadthFirst, SplitKernel
from ..lower.elementwise import ElementwiseKernel
from ..lower.leaves import ProductLaunch
from .backend import Backend, View


class NumpyBackend(Backend):
    name = "numpy"
    xp = np

    def empty(self, rows: int, cols: int, dtype: str) -> View:
        return np.empty((rows, cols), dtype=dtype)

    def elementwise(self, kernel: ElementwiseKernel, views: Sequence[View]) -> None:
        for group in kernel.groups:
            # Every assignment reads the values the stage started with: compute all, then store.
            results = [
                (a.target, sum(float(c) * views[s] for s, c in a.terms)) for a in group.assignments
            ]
            for target, value in results:
                views[target][...] = value

    def gemm(self, a: View, b: View, c: View, alpha: float, beta: float) -> None:
        product = alpha * (a @ b)
        if beta == 0:
            c[...] = product
        else:
            c[...] = product + beta * c

    def fused(self, launch: ProductLaunch, views: tuple[list, list, list], dims: tuple[int, int, int], alpha: float) -> None:
        a_views, b_views, c_views = views
        for product in launch.spec.products:
            left = sum(float(t.coef) * a_views[t.slot] for t in product.left)
            right = sum(float(t.coef) * b_views[t.slot] for t in product.right)
            value = left @ right
            for t in product.targets:
                c_views[t.slot] += (alpha * float(t.coef)) * value

    def split(self, plan: BreadthFirst, kernel: SplitKernel, source: View, out) -> None:
        blocks = _grid(source, kernel.grid_rows, kernel.grid_cols)
        for r, terms in enumerate(kernel.outputs):
            out[r] = sum(float(c) * blocks[i] for i, c in terms)

    def merge(self, plan: BreadthFirst, products, target: View, alpha: float, beta: float) -> None:
        merge = plan.merge
        blocks = _grid(target, merge.grid_rows, merge.grid_cols)
        for q, terms in enumerate(merge.outputs):
            value = alpha * sum(float(c) * products[r] for r, c in terms)
            blocks[q][...] = value if beta == 0 else value + beta * blocks[q]

    def scale(self, c: View, beta: float) -> None:
        if beta == 0:
            c[...] = 0
        else:
            c *= beta


def _grid(view: View, rows: int, cols: int) -> list[View]:
    """A view's blocks of a rows×cols grid, row-major."""
    height, width = view.shape[0] // rows, view.shape[1] // cols
    return [view[i * height : (i + 1) * height, j * width : (j + 1) * width] for i in range(rows) for j in range(cols)]
