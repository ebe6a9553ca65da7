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
import sys
from dataclasses import dataclass
from fractions import Fraction

from ..ir import Algorithm
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
        return power(self.growth_factor, levels)

    def per_level(self, levels: int) -> tuple[LevelGrowth, ...]:
        """The growth factors after 1, 2, …, ``levels`` levels of recursion."""
        return tuple(
            LevelGrowth(L, power(self.growth_factor, L), self.e_max**L, L * self.q) for L in range(1, levels + 1)
        )


def as_float(value) -> float:
    """A rational (or int) as a float; ±inf when it is beyond the float range instead of OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def power(base: float, exponent: int) -> float:
    """``base ** exponent`` for a non-negative float, inf where it overflows."""
    try:
        return base**exponent
    except OverflowError:
        return math.inf


def _log_norm2(values) -> float | None:
    """log ‖values‖₂ (None for a zero vector), exact in range: coefficients such as 10^400 and
    10^-400 overflow or vanish as floats, but their logarithms and ratios do not."""
    values = list(values)
    if (log := _log_hypot_in_range(values)) is not None:  # integers and rationals in the float range
        return log
    largest = max((abs(Fraction(v)) for v in values), default=Fraction(0))
    if largest == 0:
        return None
    scaled = math.hypot(*(float(Fraction(v) / largest) for v in values))  # each in [-1, 1]
    return math.log(largest.numerator) - math.log(largest.denominator) + math.log(scaled)


def _log_hypot_in_range(values: list) -> float | None:
    """log ‖values‖₂ through floats where every nonzero value is a normal float (each rounded once;
    integers below 2⁵³ exactly), None otherwise and for a zero vector: the Fraction arithmetic
    after it took most of the 43 s that the stability of PLinOpt's rational ⟨32,32,32;15096⟩ took
    (65 of 110 s profiled)."""
    try:
        floats = [v.numerator / v.denominator for v in values]  # ints and Fractions: correctly rounded
    except OverflowError:
        return None
    if any(abs(f) < sys.float_info.min and f != 0 or (f == 0) != (v == 0) for f, v in zip(floats, values)):
        return None
    norm = math.hypot(*floats)
    return math.log(norm) if 0 < norm < math.inf else None


def _growth_term(*log_norms: float | None) -> float:
    """‖u‖‖v‖‖w‖ from the logarithms: 0 when a factor is zero, inf beyond the float range."""
    if any(log is None for log in log_norms):
        return 0.0
    try:
        return math.exp(sum(log_norms))
    except OverflowError:
        return math.inf


def _norm1(values) -> Fraction:
    """Σ|v| exactly, as integers over the denominators' common multiple (Fraction sums reduce at
    every step: 25 of the 110 s profiled for ⟨32,32,32;15096⟩'s stability)."""
    values = list(values)  # ints and Fractions
    common = math.lcm(*{v.denominator for v in values})
    return Fraction(sum(abs(v.numerator) * (common // v.denominator) for v in values), common)


def _nonzeros(values) -> int:
    return sum(1 for v in values if v != 0)


def stability(algorithm: Algorithm) -> Stability:
    """γ, e and Q of an algorithm from its expanded U, V, W columns.

    Sparse: linear in the nonzero coefficients (a dense U, V, W of 10^4 products
    over hundreds of blocks would take minutes).
    """
    expansion = expansion_of(algorithm)
    columns = [(u.as_dict().values(), v.as_dict().values(), expansion.uses[p.name])
               for p, (u, v) in zip(algorithm.products, expansion.factors)]
    growth = sum(_growth_term(_log_norm2(u), _log_norm2(v), _log_norm2(w.values())) for u, v, w in columns)
    weight = [_norm1(u) * _norm1(v) for u, v, _ in columns]
    path = [_nonzeros(u) + _nonzeros(v) for u, v, _ in columns]
    # e sums |w_r|·‖u_r‖₁‖v_r‖₁ per C block: as integers over one common denominator (Fraction
    # sums reduce at every step)
    common = math.lcm(*{x.denominator for x in weight}) * math.lcm(*{c.denominator for *_, w in columns for c in w.values()})
    scaled = [x.numerator * (common // x.denominator) for x in weight]
    e_rows: dict[str, int] = {}
    path_rows: dict[str, int] = {}
    count_rows: dict[str, int] = {}
    for r, (_, _, w) in enumerate(columns):
        for block, coef in w.items():
            e_rows[block] = e_rows.get(block, 0) + abs(coef.numerator) * scaled[r] // coef.denominator
            path_rows[block] = max(path_rows.get(block, 0), path[r])
            count_rows[block] = count_rows.get(block, 0) + 1
    blocks = algorithm.shape.blocks("C")
    e_vector = tuple(Fraction(e_rows.get(block, 0), common) for block in blocks)
    q_vector = tuple(count_rows.get(block, 0) + path_rows.get(block, 0) for block in blocks)
    return Stability(growth_factor=growth, e_vector=e_vector, q_vector=q_vector)
