"""Which measured rows of a dispatch table speak for a shape they were not measured at: the nearest
in log scale, or two of one configuration either side of it (:mod:`bilinear.dispatch`'s recursive
and in-place choices).  A row is anything with ``m``, ``k`` and ``n`` (and, for :func:`bounding_rows`,
a configuration: ``scheme``, ``levels``, ``breadth``, ``launch`` and ``leaf``)."""

from __future__ import annotations

import math

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


def bounding_rows(rows: list, m: int, k: int, n: int) -> tuple | None:
    """The nearest row no larger than m×k×n in any dimension and the nearest no smaller, where both
    ran one configuration and are at most BETWEEN_SPAN apart in every dimension; None otherwise
    (also where a pair farther out would agree: only the nearest on each side speak for the shape).
    The caller takes the smaller of their speedups: the work a configuration does beside the
    multiplications shrinks relative to them as the shape grows, but cuBLAS's own efficiency moves
    too, so the speedup need not grow with the shape (the ozaki leaf's FP64 1.41 at 12288³, 1.35 at
    16384³), and between two rows it is a guess the check keeps honest."""
    def nearest(inside) -> object | None:
        return min((row for row in rows if inside(row)), key=lambda row: _distance(row, m, k, n), default=None)

    low = nearest(lambda row: row.m <= m and row.k <= k and row.n <= n)
    high = nearest(lambda row: row.m >= m and row.k >= k and row.n >= n)
    if low is None or high is None or _configuration(low) != _configuration(high):
        return None
    if any(b > BETWEEN_SPAN * a for a, b in ((low.m, high.m), (low.k, high.k), (low.n, high.n))):
        return None  # too far apart to say much of what lies between
    return low, high


def _configuration(row) -> tuple:
    """What a row runs, apart from where it was measured and how fast."""
    return row.scheme, row.levels, row.breadth, row.launch, row.leaf
