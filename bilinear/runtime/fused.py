"""Fused product launches on one device, and the parameter structs already prepared for them.

Lowering decided each launch's spec and which slot every view binds
(:mod:`bilinear.lower.leaves`); here a launch's views become pointers and
leading dimensions in the kernel's by-value parameter struct.  The kernel of a
spec is compiled once and reused for every recursion branch; the struct of a
given set of views and α is built once and reused while it stays in the cache.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

from ..lower.leaves import ProductLaunch
from ..lower.product import ProductStageSpec
from .views import fingerprint


class FusedLaunches:
    """Fused product stages on one device, and the launches already prepared for them.

    A product called again on the same arrays (every repetition of a benchmark, every level
    of a recursion on the same matrices) reuses its parameter structs instead of rebuilding
    them: up to a few hundred µs of host time per stage, which products of a few ms cannot
    hide.  Prepared launches hold pointers, never the arrays, so the cache keeps no memory
    alive; it keeps the ``capacity`` most recent.

    Args:
        make_stage: spec -> stage with ``parameters(views, M, N, K, alpha)`` and
            ``launch(parameters, M, N)`` (``bilinear.runtime.product.ProductStage``).
    """

    def __init__(self, make_stage: Callable[[ProductStageSpec], Any], capacity: int = 512):
        self.make_stage = make_stage
        self.capacity = capacity
        self.stages: dict[str, Any] = {}
        self._prepared: OrderedDict[tuple, tuple] = OrderedDict()

    def run(self, launch: ProductLaunch, views: tuple[list, list, list], dims: tuple[int, int, int], alpha: float) -> None:
        """Launch ``launch`` on ``views`` (A, B and C views by slot); ``dims`` is (M, N, K)."""
        key = (launch.spec.name, alpha, dims, tuple(fingerprint(v) for side in views for v in side))
        if key in self._prepared:
            self._prepared.move_to_end(key)
        else:
            self._prepared[key] = self._prepare(launch.spec, views, dims, alpha)
            if len(self._prepared) > self.capacity:
                self._prepared.popitem(last=False)
        stage, parameters, (M, N) = self._prepared[key]
        stage.launch(parameters, M, N)

    def stage(self, spec: ProductStageSpec) -> Any:
        if spec.name not in self.stages:
            self.stages[spec.name] = self.make_stage(spec)
        return self.stages[spec.name]

    def _prepare(self, spec: ProductStageSpec, views, dims, alpha: float) -> tuple:
        stage = self.stage(spec)
        M, N, K = dims
        return stage, stage.parameters([tuple(views)], M, N, K, alpha=alpha), (M, N)
