"""Global decompositions: what the GPUs of a distributed product multiply.

A decomposition is a bilinear algorithm over a grid of global blocks: A is
cut into ``rows × inner`` blocks, B into ``inner × cols`` and C into
``rows × cols``; each product r multiplies ``Σ u_r[i,j]·A[i,j]`` by
``Σ v_r[j,l]·B[j,l]`` and adds ``w_r[i,l]`` times the result into C[i,l].

Two kinds, both plain data:

- **breadth-first steps** of any verified ``.bl`` algorithm ⟨m,k,n;R⟩:
  ``s`` steps give R^s products over an m^s × k^s grid (the Kronecker power:
  an outer block splits into the inner algorithm's blocks), as CAPS does at
  its top levels (Ballard et al., SPAA 2012);
- the **classical 2D** decomposition ⟨a,1,b⟩ (thesis Table 4.1 with the
  inner dimension kept whole): a·b products A[i]·B[l] → C[i,l], no reduction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction
from typing import Mapping

from ..ir import Algorithm, parse_block
from ..verify.expand import Expansion
from .options import check_count

Index = tuple[int, int]  # 0-based (row, column) of a global block
Coefficients = tuple[tuple[Index, Fraction], ...]  # sorted, distinct blocks, nonzero


def _coefficients(mapping: Mapping[Index, Fraction]) -> Coefficients:
    return tuple(sorted((index, Fraction(c)) for index, c in mapping.items() if c != 0))


@dataclass(frozen=True)
class GlobalProduct:
    """``(Σ u·A) · (Σ v·B)``, added with weights ``w`` into C blocks."""

    u: Coefficients
    v: Coefficients
    w: Coefficients

    def __post_init__(self) -> None:
        if not (self.u and self.v and self.w):
            raise ValueError("a global product needs nonzero u, v and w")


@dataclass(frozen=True)
class Decomposition:
    """A bilinear algorithm over a ``rows × inner × cols`` grid of global blocks."""

    name: str
    rows: int
    inner: int
    cols: int
    products: tuple[GlobalProduct, ...]
    growth_ratios: tuple[float, ...] = ()  # per breadth-first step, over the classical algorithm's

    def __post_init__(self) -> None:
        if min(self.rows, self.inner, self.cols) < 1:
            raise ValueError("a decomposition's grid needs at least one block each way")
        for product in self.products:
            for (i, j), _ in product.u:
                if not (0 <= i < self.rows and 0 <= j < self.inner):
                    raise ValueError(f"A block {(i, j)} is outside the {self.rows}x{self.inner} grid")
            for (j, c), _ in product.v:
                if not (0 <= j < self.inner and 0 <= c < self.cols):
                    raise ValueError(f"B block {(j, c)} is outside the {self.inner}x{self.cols} grid")
            for (i, c), _ in product.w:
                if not (0 <= i < self.rows and 0 <= c < self.cols):
                    raise ValueError(f"C block {(i, c)} is outside the {self.rows}x{self.cols} grid")

    @property
    def rank(self) -> int:
        return len(self.products)

    @cached_property
    def max_norm_growth(self) -> Fraction:
        """How much the products' errors can grow into C's largest, over the classical grid's: e_max /
        inner, e_i = Σ_r |w_ir|·‖u_r‖₁·‖v_r‖₁ (:mod:`bilinear.verify.stability`); 6 a Strassen step."""
        e: dict[Index, Fraction] = {}
        for product in self.products:
            weight = sum(abs(c) for _, c in product.u) * sum(abs(c) for _, c in product.v)
            for block, coef in product.w:
                e[block] = e.get(block, Fraction(0)) + abs(coef) * weight
        return max(e.values(), default=Fraction(0)) / self.inner

    @property
    def growth_ratio(self) -> float:
        """The error-growth factor of all steps over the classical algorithm's (1 for classical)."""
        total = 1.0
        for ratio in self.growth_ratios:
            total *= ratio
        return total


def _zero_based(name: str) -> Index:
    _, row, col = parse_block(name)
    return row - 1, col - 1


def growth_ratio(algorithm: Algorithm) -> float:
    """One level's error-growth factor over the classical algorithm's (m·k·n)."""
    from ..verify.stability import stability

    shape = algorithm.shape
    return stability(algorithm).growth_factor / (shape.m * shape.k * shape.n)


def one_step(algorithm: Algorithm) -> Decomposition:
    """One breadth-first step of a verified algorithm, over its own block grid."""
    expansion = Expansion(algorithm)
    w_of: list[dict[Index, Fraction]] = [{} for _ in algorithm.products]
    index = {p.name: r for r, p in enumerate(algorithm.products)}
    for block, form in expansion.outputs.items():
        for product, coef in form.terms:
            w_of[index[product]][_zero_based(block)] = coef
    products = tuple(
        GlobalProduct(
            _coefficients({_zero_based(a): c for a, c in u.terms}),
            _coefficients({_zero_based(b): c for b, c in v.terms}),
            _coefficients(w_of[r]),
        )
        for r, (u, v) in enumerate(expansion.factors)
        if w_of[r]  # a product no output uses is not computed (as in the default schedule)
    )
    shape = algorithm.shape
    return Decomposition(algorithm.name, shape.m, shape.k, shape.n, products, (growth_ratio(algorithm),))


def _krons(outers: list[Coefficients], inners: list[Coefficients], inner_rows: int, inner_cols: int) -> list[Coefficients]:
    """Every outer part ⊗ every inner part, outer by outer: block (oi, oj) of the outer grid split into
    the inner grid, coefficients multiplied.  Each inner part is scaled once per distinct outer
    coefficient (⟨3,3,6;40⟩²'s 331,776 Fraction products were most of a 2-step plan's build, and its
    parts hold a few distinct coefficients).  Assumes parts as one_step and compose make them
    (:data:`Coefficients`: distinct blocks, nonzero), so nothing is merged or dropped, only sorted."""
    scaled = {c: [tuple((index, c * ci) for index, ci in inner) for inner in inners]
              for c in {c for outer in outers for _, c in outer}}
    krons = []
    for outer in outers:
        placed = [(oi * inner_rows, oj * inner_cols, scaled[c]) for (oi, oj), c in outer]
        krons += [tuple(sorted(((row + ii, col + ij), c) for row, col, by_inner in placed for (ii, ij), c in by_inner[q]))
                  for q in range(len(inners))]
    return krons


def compose(outer: Decomposition, inner: Decomposition, name: str | None = None) -> Decomposition:
    """``outer`` applied to the whole matrices, ``inner`` to each of its blocks (a breadth-first step more);
    named ``name``, or outer*inner."""
    parts = [
        _krons([getattr(p, side) for p in outer.products], [getattr(q, side) for q in inner.products], rows, cols)
        for side, rows, cols in (("u", inner.rows, inner.inner), ("v", inner.inner, inner.cols), ("w", inner.rows, inner.cols))
    ]
    products = tuple(GlobalProduct(u, v, w) for u, v, w in zip(*parts))  # outer by outer, inner by inner
    return Decomposition(
        name or f"{outer.name}*{inner.name}",
        outer.rows * inner.rows,
        outer.inner * inner.inner,
        outer.cols * inner.cols,
        products,
        outer.growth_ratios + inner.growth_ratios,
    )


def breadth_first(algorithm: Algorithm, steps: int) -> Decomposition:
    """``steps`` breadth-first steps of an algorithm: R^steps products."""
    if steps < 1:
        raise ValueError(f"breadth-first steps must be at least 1, not {steps}")
    step = one_step(algorithm)
    total = step
    for done in range(2, steps + 1):  # the last named for all the steps (a Decomposition checks every term it is made with)
        total = compose(total, step, f"{algorithm.name}^{steps}" if done == steps else None)
    return total


def classical(rows: int, inner: int, cols: int) -> Decomposition:
    """The classical product over a ``rows × inner × cols`` block grid (2D tiles when ``inner`` is 1)."""
    products = tuple(
        GlobalProduct((((i, j), Fraction(1)),), (((j, c), Fraction(1)),), (((i, c), Fraction(1)),))
        for i in range(rows)
        for c in range(cols)
        for j in range(inner)
    )
    return Decomposition(f"classical<{rows},{inner},{cols}>", rows, inner, cols, products)


def tiles_2d(ranks: int) -> Decomposition:
    """The 2D tile decomposition for ``ranks`` GPUs: the most square grid a×b = ranks."""
    ranks = check_count(ranks, "ranks", 1)
    rows = max(a for a in range(1, int(ranks**0.5) + 1) if ranks % a == 0)
    return classical(rows, 1, ranks // rows)
