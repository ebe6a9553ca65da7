"""The fused product kernel's contract with the scheduler: a product stage is a set of
products ``M_p = (Σ u·A_slot)(Σ v·B_slot)``, each added with signs into one or more C views,
for ``batch`` independent sub-problems at once; coefficients are exact fractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..ir.names import IDENTIFIER

DTYPES = {"float64": ("double", 8), "float32": ("float", 4)}

#: Bytes of by-value kernel parameters a launch may carry (Volta+ with CUDA >= 12.1).
PARAM_LIMIT = 32764


# --- the contract with the scheduler -----------------------------------------


@dataclass(frozen=True)
class SpecTerm:
    """``coef * view[slot]``."""

    slot: int
    coef: Fraction

    def __post_init__(self) -> None:
        object.__setattr__(self, "coef", Fraction(self.coef))
        if self.slot < 0:
            raise ValueError(f"slot {self.slot} is negative")
        if self.coef == 0:
            raise ValueError(f"slot {self.slot} has a zero coefficient")


def _check_terms(what: str, terms: tuple[SpecTerm, ...]) -> None:
    if not terms:
        raise ValueError(f"a fused product needs at least one {what} term")
    slots = [t.slot for t in terms]
    if len(slots) != len(set(slots)):
        raise ValueError(f"{what} terms name slot(s) {sorted(s for s in set(slots) if slots.count(s) > 1)} twice")


@dataclass(frozen=True)
class FusedProduct:
    """``targets[t] += alpha * coef_t * (Σ left) @ (Σ right)``."""

    left: tuple[SpecTerm, ...]
    right: tuple[SpecTerm, ...]
    targets: tuple[SpecTerm, ...]

    def __post_init__(self) -> None:
        for what in ("left", "right", "targets"):
            object.__setattr__(self, what, tuple(getattr(self, what)))
            _check_terms(what, getattr(self, what))


@dataclass(frozen=True)
class ProductStageSpec:
    """One launch: every product of a stage for ``batch`` independent sub-problems.

    Each batch entry supplies ``n_a`` A-side views (M×K), ``n_b`` B-side views
    (K×N) and ``n_c`` C-side views (M×N); product terms name them by slot.
    """

    name: str
    dtype: str
    products: tuple[FusedProduct, ...]
    n_a: int
    n_b: int
    n_c: int
    batch: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "products", tuple(self.products))
        if not IDENTIFIER.fullmatch(self.name):
            raise ValueError(f"kernel name {self.name!r} is not a C identifier")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {sorted(DTYPES)}")
        if not self.products:
            raise ValueError("a product stage needs at least one product")
        if self.batch < 1:
            raise ValueError(f"batch must be at least 1, not {self.batch}")
        for index, product in enumerate(self.products):
            for side, count in (("left", self.n_a), ("right", self.n_b), ("targets", self.n_c)):
                bad = [t.slot for t in getattr(product, side) if t.slot >= count]
                if bad:
                    raise ValueError(f"product {index} {side} names slot(s) {bad} but there are only {count}")



def reference_update(spec: ProductStageSpec, entry, alpha: float, xp) -> list:
    """What one batch entry of ``spec`` adds to each of its C views, in float64: the kernel's
    contract ``C_t += alpha·coef_t·(Σ u·A)(Σ v·B)``, computed plainly to check it against.

    ``entry`` is (A views, B views, C views) of NumPy or CuPy arrays (``xp`` is their module).
    """
    a_views, b_views, c_views = entry
    deltas = [xp.zeros(c.shape) for c in c_views]
    for product in spec.products:
        left = sum(float(t.coef) * a_views[t.slot].astype(np.float64) for t in product.left)
        right = sum(float(t.coef) * b_views[t.slot].astype(np.float64) for t in product.right)
        value = left @ right
        for t in product.targets:
            deltas[t.slot] += alpha * float(t.coef) * value
    return deltas


def gemm_spec(dtype: str, name: str | None = None) -> ProductStageSpec:
    """The plain GEMM ``C += alpha·A·B`` as a product stage."""
    one = Fraction(1)
    product = FusedProduct((SpecTerm(0, one),), (SpecTerm(0, one),), (SpecTerm(0, one),))
    return ProductStageSpec(name or f"gemm_{dtype}", dtype, (product,), 1, 1, 1, 1)


def describe(product: FusedProduct) -> str:
    """``(+1*A[0] +1*A[1]) * (...) -> +1*C[0]``: one product of a spec, by slot."""
    def side(letter: str, terms: Sequence[SpecTerm]) -> str:
        return " ".join(f"{'+' if t.coef > 0 else '-'}{abs(t.coef)}*{letter}[{t.slot}]" for t in terms)

    return f"({side('A', product.left)}) * ({side('B', product.right)}) -> {side('C', product.targets)}"


