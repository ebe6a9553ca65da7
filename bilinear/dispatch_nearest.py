"""Which measured rows of a dispatch table speak for a shape they were not measured at: the nearest
in log scale, or two of one configuration either side of it (:mod:`bilinear.dispatch`'s recursive
and in-place choices).  A row is anything with ``m``, ``k`` and ``n`` (and, for :func:`bounding_rows`,
a configuration: ``scheme``, ``levels``, ``breadth``, ``launch`` and ``leaf``); a recursive table may hold
several rows at one shape, one per leaf kind, and :func:`measured_options` gives each configuration that
speaks for a shape with the speedup taken for it."""

from __future__ import annotations

import math
from dataclasses import dataclass

# Rows farther than this (Σ |log2 ratio| over m, k and n) from the call decide nothing ...
RECURSIVE_REACH = 0.5
# ... unless two rows of one configuration lie either side of it, at most this far apart in every dimension
# (the committed table's largest square rows, FP32 16384³ and 32768³, are 2× apart)
BETWEEN_SPAN = 2.0


def _distance(row, m: int, k: int, n: int) -> float:
    """How far a measured row is from m×k×n: Σ |log2 ratio| over m, k and n."""
    return sum(abs(math.log2(a / b)) for a, b in ((m, row.m), (k, row.k), (n, row.n)))


def nearest_row(rows: list, m: int, k: int, n: int):
    """The measured row nearest m×k×n, or None where even it is farther than RECURSIVE_REACH."""
    row = min(rows, key=lambda row: _distance(row, m, k, n), default=None)
    return row if row is not None and _distance(row, m, k, n) <= RECURSIVE_REACH else None


def nearest_rows(rows: list, m: int, k: int, n: int) -> list:
    """Every row measured at the shape nearest m×k×n (a shape holds the best configuration of each leaf
    kind), or [] where even it is farther than RECURSIVE_REACH."""
    row = nearest_row(rows, m, k, n)
    return [] if row is None else [other for other in rows if _shape(other) == _shape(row)]


def bounding_rows(rows: list, m: int, k: int, n: int) -> list[tuple]:
    """Pairs (low, high) of rows of one configuration, low at the nearest shape no larger than m×k×n in
    any dimension and high at the nearest no smaller, where those shapes are at most BETWEEN_SPAN apart
    in every dimension; [] otherwise (also where a pair farther out would agree: only the nearest shape
    on each side speaks for the shape).
    The caller takes the smaller of a pair's speedups: the work a configuration does beside the
    multiplications shrinks relative to them as the shape grows, but cuBLAS's own efficiency moves
    too, so the speedup need not grow with the shape (the ozaki leaf's FP64 1.41 at 12288³, 1.35 at
    16384³), and between two rows it is a guess the check keeps honest."""
    def nearest(inside) -> object | None:
        return min((row for row in rows if inside(row)), key=lambda row: _distance(row, m, k, n), default=None)

    low = nearest(lambda row: row.m <= m and row.k <= k and row.n <= n)
    high = nearest(lambda row: row.m >= m and row.k >= k and row.n >= n)
    if low is None or high is None:
        return []
    if any(b > BETWEEN_SPAN * a for a, b in ((low.m, high.m), (low.k, high.k), (low.n, high.n))):
        return []  # too far apart to say much of what lies between
    return [(below, above) for below in rows if _shape(below) == _shape(low)
            for above in rows if _shape(above) == _shape(high) and _configuration(above) == _configuration(below)]


@dataclass(frozen=True)
class Option:
    """A configuration measured at or around a shape: its row, the speedup taken for the shape, and where
    it was measured, as the dispatch reason says it."""

    row: object  # a dispatch.Recursive
    speedup: float
    where: str


def measured_options(rows: list, m: int, k: int, n: int, dtype: str) -> list[Option]:
    """The configurations measured at the shape nearest m×k×n (within reach), or else those measured at the
    nearest shapes either side of it, each at the lower of its two speedups."""
    nearest = nearest_rows(rows, m, k, n)
    if nearest:
        return [Option(row, row.speedup, f"measured {row.m}×{row.k}×{row.n} {dtype}: {row.described} "
                                          f"{row.speedup:.2f}× cuBLAS") for row in nearest]
    return [Option(low, min(low.speedup, high.speedup),
                    f"between {low.m}×{low.k}×{low.n} ({low.speedup:.2f}×) and {high.m}×{high.k}×{high.n} "
                    f"({high.speedup:.2f}×) {dtype}, both measured: {low.described} "
                    f"{min(low.speedup, high.speedup):.2f}× cuBLAS")
            for low, high in bounding_rows(rows, m, k, n)]


def _shape(row) -> tuple[int, int, int]:
    return row.m, row.k, row.n


def _configuration(row) -> tuple:
    """What a row runs, apart from where it was measured and how fast."""
    return row.scheme, row.levels, row.breadth, row.launch, row.leaf
