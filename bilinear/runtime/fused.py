"""Leaf products to one launch of the fused product kernel, and the launches prepared so far.

The executor hands over the leaf products of one stage: each is (Σ a)(Σ b)
added into one or more targets.  Distinct views become slots; the kernel's
structure (which slots, with which exact coefficients) is the spec, compiled
once and reused for every recursion branch, while the pointers and α travel
with each launch.  Targets two products share are updated with atomics by the
kernel; the kernel only accumulates, so overwritten targets are zeroed first.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

from ..lower.product import FusedProduct, ProductStageSpec, Term
from .backend import LeafProduct

_DENOMINATOR = 1 << 20  # coefficients are ratios of small integers; floats round-trip through this


def exact(value: float) -> Fraction:
    """The small rational a float coefficient came from (1/3 stays 1/3)."""
    return Fraction(value).limit_denominator(_DENOMINATOR)


def _where(view: Any) -> tuple:
    """A view's address, strides and shape: all a kernel reads of it (CuPy or NumPy)."""
    return (view.data.ptr if hasattr(view.data, "ptr") else view.ctypes.data, view.strides, view.shape)


class _Slots:
    """Distinct views of one side, in order of first use."""

    def __init__(self) -> None:
        self.views: list[Any] = []
        self._index: dict[tuple, int] = {}

    def slot(self, view: Any) -> int:
        key = _where(view)
        if key not in self._index:
            self._index[key] = len(self.views)
            self.views.append(view)
        return self._index[key]


@dataclass(frozen=True)
class Launch:
    """One fused launch: the spec (structure) and what varies per call."""

    spec: ProductStageSpec
    views: tuple[list, list, list]
    dims: tuple[int, int, int]  # M, N, K as the kernel takes them
    alpha: float


def build_launch(products: Sequence[LeafProduct], dtype: str) -> Launch | None:
    """The launch computing every product; ``None`` when α is 0 (nothing to add)."""
    alpha = products[0].targets[0].coef
    if alpha == 0:
        return None
    sides = (_Slots(), _Slots(), _Slots())
    fused = []
    for product in products:
        left = tuple(Term(sides[0].slot(t.view), exact(t.coef)) for t in product.a)
        right = tuple(Term(sides[1].slot(t.view), exact(t.coef)) for t in product.b)
        targets = tuple(Term(sides[2].slot(t.view), exact(t.coef / alpha)) for t in product.targets)
        fused.append(FusedProduct(left, right, targets))
    structure = repr((dtype, fused, [len(s.views) for s in sides]))
    name = f"fused_{dtype}_{hashlib.sha256(structure.encode()).hexdigest()[:12]}"
    spec = ProductStageSpec(name, dtype, tuple(fused), *(len(s.views) for s in sides), batch=1)
    a = products[0].a[0].view
    b = products[0].b[0].view
    return Launch(spec, tuple(s.views for s in sides), (a.shape[0], b.shape[1], a.shape[1]), alpha)


def launch_key(products: Sequence[LeafProduct]) -> tuple:
    """What fixes a launch: every term's coefficient and where its view lies."""

    def side(terms) -> tuple:
        return tuple((t.coef, _where(t.view)) for t in terms)

    return tuple((side(p.a), side(p.b), side(p.targets)) for p in products)


class FusedLaunches:
    """Fused product stages on one device, and the launches already prepared for them.

    A product called again on the same arrays (every repetition of a benchmark, every level
    of a recursion on the same matrices) reuses its spec and its parameter structs instead
    of rebuilding them: up to a few hundred µs of host time per stage, which products of a
    few ms cannot hide.  Prepared launches hold pointers, never the arrays, so the cache
    keeps no memory alive; it keeps the ``capacity`` most recent.

    Args:
        make_stage: spec -> stage with ``parameters(views, M, N, K, alpha)`` and
            ``launch(parameters, M, N)`` (``bilinear.runtime.product.ProductStage``).
    """

    def __init__(self, make_stage: Callable[[ProductStageSpec], Any], capacity: int = 512):
        self.make_stage = make_stage
        self.capacity = capacity
        self.stages: dict[ProductStageSpec, Any] = {}
        self._prepared: OrderedDict[tuple, tuple | None] = OrderedDict()

    def run(self, products: Sequence[LeafProduct], dtype: str) -> None:
        for product in products:  # the kernel only accumulates
            if product.overwrite:
                for target in product.targets:
                    target.view.fill(0)
        key = (dtype, launch_key(products))
        if key in self._prepared:
            self._prepared.move_to_end(key)
        else:
            self._prepared[key] = self._prepare(products, dtype)
            if len(self._prepared) > self.capacity:
                self._prepared.popitem(last=False)
        prepared = self._prepared[key]
        if prepared is not None:
            stage, parameters, (M, N) = prepared
            stage.launch(parameters, M, N)

    def _prepare(self, products: Sequence[LeafProduct], dtype: str) -> tuple | None:
        launch = build_launch(products, dtype)
        if launch is None:
            return None
        stage = self.stages.get(launch.spec)
        if stage is None:
            stage = self.stages[launch.spec] = self.make_stage(launch.spec)
        M, N, K = launch.dims
        return stage, stage.parameters([launch.views], M, N, K, alpha=launch.alpha), (M, N)
