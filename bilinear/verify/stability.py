"""Numerical-stability quantities of a bilinear algorithm, computed from U, V, W.

U, V and W are the expanded coefficient tables (one column u_r, v_r per
product, one row w_i per C block, named sums multiplied out), so the
quantities describe the algorithm itself, not how its additions are shared.

- **growth factor** γ = Σ_r ‖u_r‖₂ ‖v_r‖₂ ‖w_r‖₂ (Dumas, Pernet and
  Sedoglavic, "Strassen's algorithm is not optimally accurate", ISSAC 2024),
  with w_r the r-th column of W: the factor by which one level can amplify
  the normwise error bound; 8 for the classical 2x2 product, 12 + 2√2 ≈ 14.83
  for Strassen, 17.85 for Winograd.  L levels multiply it L times.

- **stability vector e and e_max** (Ballard, Benson, Druinsky, Lipshitz and
  Schwartz, "Improving the numerical stability of fast matrix
  multiplication", SIMAX 37(4), 2016, arXiv:1507.00687, after Bini and Lotti
  1980).  As computed by the authors' companion code
  (arbenson/fast-matmul, ``codegen/stability_quantities.py``, "using the
  notation from our paper"):

      a_r = ‖u_r‖₁,  b_r = ‖v_r‖₁,   e_i = Σ_r |w_ir| · a_r · b_r,
      e_max = max_i e_i.

  e_max bounds how much one level amplifies the max-norm error of its
  sub-products; after L levels the stability vector is the L-fold
  Kronecker power of e, so its largest entry is e_max^L exactly.

- **Q** (same paper and code): with α_r = nnz(u_r), β_r = nnz(v_r) and
  γ_i = nnz(w_i),

      Q = max_i ( γ_i + max_{r : w_ir ≠ 0} (α_r + β_r) ),

  the most additions on any path from an input entry to an output entry
  within one level; in the bound each of L levels adds Q to the prefactor
  of e_max^L, so L levels contribute at most L·Q.

For 0/±1 coefficients e coincides with Bini and Lotti's count-based vector
(fast-matmul ``stability_vector.py``).  Hand-computed references, tested:
classical ⟨2,2,2;8⟩ e_max = 2, Q = 4; Strassen e_max = 12, Q = 8; Winograd
(unshared) e_max = 18, Q = 10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..ir import Algorithm, Form
from .expand import expansion_of


@dataclass(frozen=True)
class LevelGrowth:
    """Error-growth factors of ``levels`` recursive levels of one algorithm."""

    levels: int
    growth_factor: float  # γ^L
    e_max: Fraction  # e_max^L, the largest entry of the L-level stability vector
    q: int  # L·Q, the additions-on-a-path term L levels contribute to the bound


@dataclass(frozen=True)
class Stability:
    """One level's stability quantities; see the module docstring for definitions.

    ``e_vector`` and ``q_vector`` hold one entry per C block, row-major.
    """

    growth_factor: float
    e_vector: tuple[Fraction, ...]
    q_vector: tuple[int, ...]

    @property
    def e_max(self) -> Fraction:
        return max(self.e_vector)

    @property
    def q(self) -> int:
        return max(self.q_vector)

    def growth_after(self, levels: int) -> float:
        return self.growth_factor**levels

    def per_level(self, levels: int) -> tuple[LevelGrowth, ...]:
        """The growth factors after 1, 2, …, ``levels`` levels of recursion."""
        return tuple(
            LevelGrowth(L, self.growth_factor**L, self.e_max**L, L * self.q) for L in range(1, levels + 1)
        )


def _norm2(form: Form) -> float:
    return math.sqrt(sum(float(c) ** 2 for _, c in form.terms))


def _norm1(form: Form) -> Fraction:
    if all(c.denominator == 1 for _, c in form.terms):  # integers add much faster than Fractions
        return Fraction(sum(abs(c.numerator) for _, c in form.terms))
    return sum((abs(c) for _, c in form.terms), Fraction(0))


def _integral(value: Fraction) -> int | Fraction:
    """An int where the value is one (Python adds ints far faster than Fractions)."""
    return value.numerator if value.denominator == 1 else value


def stability(algorithm: Algorithm) -> Stability:
    """γ, e and Q of an algorithm from its expanded U, V, W (sparse: linear in their nonzeros)."""
    expansion = expansion_of(algorithm)
    factors, weights = expansion.factors, expansion.weights
    growth = sum(_norm2(u) * _norm2(v) * _norm2(w) for (u, v), w in zip(factors, weights))
    index = {p.name: r for r, p in enumerate(algorithm.products)}
    weight = [_integral(_norm1(u) * _norm1(v)) for u, v in factors]
    path = [len(u.terms) + len(v.terms) for u, v in factors]
    rows = [expansion.outputs.get(block, Form()).terms for block in algorithm.shape.blocks("C")]
    e_vector = tuple(Fraction(sum(abs(_integral(c)) * weight[index[name]] for name, c in row)) for row in rows)
    q_vector = tuple(len(row) + max((path[index[name]] for name, _ in row), default=0) for row in rows)
    return Stability(growth_factor=growth, e_vector=e_vector, q_vector=q_vector)
