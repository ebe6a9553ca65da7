"""``levels="auto"``: the performance model picks levels and leaf kind for each shape.

The choice depends on the problem size, which ``compile`` does not know, so
the callable decides at each call (once per shape) from the ceilings measured
on this GPU and keeps one compiled product per choice.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from functools import cached_property
from typing import Any

from ..diagnostics import BilinearError
from ..lower.options import TooLarge
from ..lower.plan import Lowered
from ..model import Ceilings, choose_levels, leaf_alone
from .backend import Backend, NotPickled
from .arguments import check_inner_dimensions, check_sizes, real_scalar
from .compiled import CompiledProduct


class AutoProduct(NotPickled):
    """A product whose levels and leaf the model chooses per shape."""

    def __init__(self, lowered_for: Callable[[int, str], Lowered], backend: Backend, dtype: str,
                 leaves: tuple[str, ...], ceilings: Ceilings | None = None, max_levels: int = 4, name: str = "auto"):
        self._lowered_for = lowered_for
        self.name = name
        self.backend = backend
        self.dtype = dtype
        self.leaves = leaves
        self.max_levels = max_levels
        self._ceilings = ceilings
        self._products: dict[tuple[int, str], CompiledProduct] = {}
        self.choices: dict[tuple[int, int, int], tuple[int, str, float]] = {}
        # Calls run one at a time, as a CompiledProduct's do, across the products of every level count:
        # an in-place schedule overwrites A and B while it runs, and two shapes' calls on one matrix
        # had run at once, each product under its own lock.
        self._calling = threading.RLock()

    @property
    def ceilings(self) -> Ceilings:
        if self._ceilings is None:
            from .ceilings import measure_ceilings

            self._ceilings = measure_ceilings(self.backend.xp, self.dtype)
        return self._ceilings

    def choose(self, M: int, K: int, N: int) -> tuple[int, str, float]:
        """(levels, leaf, predicted seconds) for an M×K×N product.

        Raises:
            ValueError: for sizes that are not whole numbers of at least 0, as workspace_bytes.
        """
        M, K, N = check_sizes(M, K, N)
        if 0 in (M, K, N):  # nothing to multiply: the library alone (the product only scales out)
            return 0, leaf_alone(self.leaves), 0.0
        if (M, K, N) not in self.choices:
            try:
                choice = choose_levels(self._lowered_for, self.ceilings, M, K, N, leaves=self.leaves,
                                       max_levels=self.max_levels)
            except OverflowError:  # flops past float's range price nothing: the library alone, as at levels 0
                choice = (0, leaf_alone(self.leaves), math.inf)
            self.choices[(M, K, N)] = choice
        return self.choices[(M, K, N)]

    def product_for(self, M: int, K: int, N: int) -> CompiledProduct:
        return self._product(*self.choose(M, K, N)[:2])

    def _product(self, levels: int, leaf: str) -> CompiledProduct:
        """The product at ``levels`` with ``leaf`` leaves, compiled once (the choices and the checks share it)."""
        if (levels, leaf) not in self._products:
            self._products[(levels, leaf)] = CompiledProduct(self._lowered_for(levels, leaf), self.backend)
        return self._products[(levels, leaf)]

    @property
    def one_level(self) -> CompiledProduct:
        """The product at one level, with the first leaf that lowers (what a call must accept at every
        size, whichever level the model picks for it), or the library alone where no leaf lowers one
        level within its limits (the model then picks level 0 at every size).

        Raises:
            BilinearError, ValueError: the first leaf's refusal, where a leaf is refused for a reason
                other than its limits (kept: it is not lowered again at the next call).
        """
        if isinstance(self._one_level, Exception):
            raise self._one_level.with_traceback(None)
        return self._one_level

    @cached_property
    def _one_level(self) -> CompiledProduct | BilinearError | ValueError:
        refusals = []
        for leaf in self.leaves:
            try:
                return self._product(1, leaf)
            except (BilinearError, ValueError) as error:
                refusals.append(error)
        if all(isinstance(error, TooLarge) for error in refusals):
            return self._product(0, leaf_alone(self.leaves))
        return refusals[0]

    # What a call must accept at every size is the one-level product's (see one_level).
    @property
    def writes_inputs(self) -> bool:
        return self.one_level.writes_inputs

    @property
    def overwrites_c(self) -> bool:
        return self.one_level.overwrites_c

    @property
    def restores_inputs(self) -> bool:
        return self.one_level.restores_inputs

    def release_workspace(self) -> None:
        """Drop the workspace every chosen product kept from its last call."""
        for product in self._products.values():
            product.release_workspace()

    def held_workspace_bytes(self) -> int:
        return sum(product.held_workspace_bytes() for product in self._products.values())

    def capture(self, A: Any, B: Any, out: Any, alpha: float = 1.0, beta: float = 0.0):
        """The product chosen for this shape, captured as a CUDA graph (see :meth:`CompiledProduct.capture`)."""
        A, B = self._checked(A, B, beta)
        with self._calling:
            return self._running(A, B).capture(A, B, out, alpha=alpha, beta=beta)

    def workspace_bytes(self, M: int, K: int, N: int) -> int:
        M, K, N = check_sizes(M, K, N)
        return self.product_for(M, K, N).workspace_bytes(M, K, N)

    def __call__(self, A: Any, B: Any, out: Any = None, alpha: float = 1.0, beta: float = 0.0) -> Any:
        """Multiply with the product chosen for this shape; see :class:`CompiledProduct`.

        Raises:
            ValueError: as :class:`CompiledProduct` does, at every size alike.
        """
        A, B = self._checked(A, B, beta)
        with self._calling:
            return self._running(A, B)(A, B, out=out, alpha=alpha, beta=beta)

    def _running(self, A: Any, B: Any) -> CompiledProduct:
        """The product chosen for A·B, the others' kept workspace let go: as a fixed-level product holds
        one call's, not every level count's it ran (87,040 bytes of four levels had stayed at n = 3)."""
        product = self.product_for(A.shape[0], A.shape[1], B.shape[1])
        for other in list(self._products.values()):  # (workspace_bytes may compile another meanwhile)
            if other is not product:
                other.release_workspace()  # (a captured graph keeps its own)
        return product

    def _checked(self, A: Any, B: Any, beta: float) -> tuple[Any, Any]:
        """A and B as arrays (DLPack objects too), refused where one level refuses them at any size."""
        one = self.one_level
        A, B = one._as_array(A, "A"), one._as_array(B, "B")
        check_inner_dimensions(A, B)  # before a choice is made (and kept) for a shape that cannot run
        one.refuse_at_every_size(A, B, real_scalar(beta, "beta", self.dtype))
        return A, B

    def __repr__(self) -> str:
        return f"<bilinear {self.name}: levels auto, {len(self.choices)} shape(s) chosen, {self.backend.name}>"
