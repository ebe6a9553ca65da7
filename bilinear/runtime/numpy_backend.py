"""The NumPy backend: the same launch plan on the CPU, kernel by kernel.

Each method implements the semantics of the kernel the CuPy backend launches,
so CI tests lowering, recursion, peeling and in-place bookkeeping without a GPU.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..lower.elementwise import ElementwiseKernel
from .backend import Backend, LeafProduct, View


def _combine(terms) -> np.ndarray:
    return sum(t.coef * t.view for t in terms)


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

    def fused_products(self, products: Sequence[LeafProduct], dtype: str) -> None:
        for product in products:
            value = _combine(product.a) @ _combine(product.b)
            for target in product.targets:
                if product.overwrite:
                    target.view[...] = target.coef * value
                else:
                    target.view[...] += target.coef * value

    def scale(self, c: View, beta: float) -> None:
        if beta == 0:
            c[...] = 0
        else:
            c *= beta
