"""Exact verification of a distributed plan, before anything runs.

The plan is simulated symbolically over *pieces* of the matrices: a row
piece is one band of one core block row, or the fringe rows; inner and
column pieces are core blocks or the fringe.  What the ranks add into their
partial C, summed over ranks, must equal the classical product on every C
piece, term by term, in exact arithmetic:

- **core rows**: for each band, the contributions are the products (or
  product bands) the ranks hold for that band, each ``w ⊗ (Σu·A_band) ⊗
  (Σv·B)``, plus the ``inner`` and ``cols`` fringe products, which cover
  every band; their sum, as a tensor over (A piece, B piece, C piece), must
  be the classical tensor.  Bands that hold the same multiset of products
  are the same computation with another band label, so each such class is
  simulated once (this is what keeps ⟨3,3,3;23⟩² over 8 ranks fast).
- **fringe rows**: exactly one ``rows`` fringe product, the classical
  product of those rows.

So every product band is computed exactly once, by some rank, with the
right operand sums and the right weights, and the fringe is covered, or
the check names what is wrong.  Coefficients are scaled to integers by
their common denominator and accumulated exactly (int64 when the values
provably fit, Python integers otherwise).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .plan import Plan


@dataclass(frozen=True)
class PlanCheck:
    """What verification of a plan found."""

    ok: bool
    problems: tuple[str, ...]
    band_classes: int  # distinct band computations simulated
    terms: int  # nonzero tensor terms compared


def _structure(plan: Plan) -> list[str]:
    problems = []
    for task in plan.tasks:
        if not 0 <= task.rank < plan.ranks:
            problems.append(f"task {task} names rank {task.rank} of {plan.ranks}")
        if not 0 <= task.product < plan.decomposition.rank:
            problems.append(f"task {task} names product {task.product} of {plan.decomposition.rank}")
        if not 0 <= task.bands[0] < task.bands[1] <= plan.bands:
            problems.append(f"task {task} names bands outside 0..{plan.bands}")
    for fringe in plan.fringe:
        if not 0 <= fringe.rank < plan.ranks:
            problems.append(f"fringe task {fringe} names rank {fringe.rank} of {plan.ranks}")
    return problems


class _Tensor:
    """Index arithmetic over pieces: A (row, inner), B (inner, col), C (row, col); the fringe is the last index."""

    def __init__(self, plan: Plan):
        d = plan.decomposition
        self.rows, self.inner, self.cols = d.rows, d.inner + 1, d.cols + 1
        self.scale = math.lcm(1, *(c.denominator for p in d.products for part in (p.u, p.v, p.w) for _, c in part))

    def index(self, i, j, jb, col, ic, lc):
        a = np.asarray(i) * self.inner + np.asarray(j)
        b = np.asarray(jb) * self.cols + np.asarray(col)
        c = np.asarray(ic) * self.cols + np.asarray(lc)
        return (a * (self.inner * self.cols) + b) * (self.rows * self.cols) + c

    def classical(self, rows, inners, cols) -> tuple[np.ndarray, list[int]]:
        i, j, c = (g.ravel() for g in np.meshgrid(rows, inners, cols, indexing="ij"))
        return self.index(i, j, j, c, i, c), [self.scale**3] * i.size


def _integers(part, scale: int) -> tuple[list[tuple[int, int]], list[int]]:
    return [index for index, _ in part], [int(c * scale) for _, c in part]


def _product_terms(tensor: _Tensor, product, copies: int) -> tuple[np.ndarray, list[int]]:
    (u_at, u), (v_at, v), (w_at, w) = (_integers(part, tensor.scale) for part in (product.u, product.v, product.w))
    ua, va, wa = np.array(u_at), np.array(v_at), np.array(w_at)
    index = tensor.index(
        ua[:, 0, None, None],
        ua[:, 1, None, None],
        va[None, :, 0, None],
        va[None, :, 1, None],
        wa[None, None, :, 0],
        wa[None, None, :, 1],
    )
    values = [x * y * z * copies for x in u for y in v for z in w]
    return index.ravel(), values


def _sum_terms(indices: list[np.ndarray], values: list[int]) -> dict[int, int]:
    """Exact sums of values by index (int64 when they provably fit)."""
    flat = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64)
    if values and max(abs(v) for v in values) * len(values) < 2**62:
        keys, inverse = np.unique(flat, return_inverse=True)
        sums = np.zeros(keys.size, dtype=np.int64)
        np.add.at(sums, inverse, np.array(values, dtype=np.int64))
        return {int(k): int(s) for k, s in zip(keys, sums) if s}
    totals: Counter = Counter()
    for key, value in zip(flat.tolist(), values):
        totals[key] += value
    return {k: v for k, v in totals.items() if v}


def _band_classes(plan: Plan) -> dict[tuple, list[int]]:
    """Bands grouped by the multiset of products the ranks compute for them."""
    held: list[Counter] = [Counter() for _ in range(plan.bands)]
    for task in plan.tasks:
        for band in range(*task.bands):
            held[band][task.product] += 1
    classes: dict[tuple, list[int]] = {}
    for band, products in enumerate(held):
        classes.setdefault(tuple(sorted(products.items())), []).append(band)
    return classes


def _check_band(plan: Plan, tensor: _Tensor, products: tuple, fringe: Counter) -> tuple[str | None, int]:
    d = plan.decomposition
    indices, values = [], []
    for product, copies in products:
        index, value = _product_terms(tensor, d.products[product], copies)
        indices.append(index)
        values += value
    core_rows, core_cols = range(d.rows), range(d.cols)
    every_inner, every_col = range(d.inner + 1), range(d.cols + 1)
    pieces = {"inner": (core_rows, [d.inner], core_cols), "cols": (core_rows, every_inner, [d.cols])}
    for kind, (rows, inners, cols) in pieces.items():
        for _ in range(fringe[kind]):
            index, value = tensor.classical(rows, inners, cols)
            indices.append(index)
            values += value
    have = _sum_terms(indices, values)
    index, value = tensor.classical(core_rows, every_inner, every_col)
    want = _sum_terms([index], value)
    if have == want:
        return None, len(want)
    wrong = sum(1 for k in have if have[k] != want.get(k)) + sum(1 for k in want if k not in have)
    return f"{wrong} of the tensor's terms differ from the classical product's", len(want)


def _describe_band(plan: Plan, bands: list[int], products: tuple) -> str:
    held = ", ".join(f"M{p + 1}" + (f"×{n}" if n > 1 else "") for p, n in products) or "no product"
    missing = [f"M{p + 1}" for p in range(plan.decomposition.rank) if p not in dict(products)]
    where = f"band {bands[0]}" if len(bands) == 1 else f"bands {', '.join(map(str, bands))}"
    return f"{where} of the core rows: the ranks compute {held}" + (
        f"; missing {', '.join(missing)}" if missing else ""
    )


def verify_plan(plan: Plan) -> PlanCheck:
    """Prove ``C = A·B`` for the plan symbolically (see the module docstring)."""
    problems = _structure(plan)
    if problems:
        return PlanCheck(False, tuple(problems), 0, 0)
    tensor = _Tensor(plan)
    fringe = Counter(f.kind for f in plan.fringe)
    classes = _band_classes(plan)
    terms = 0
    for products, bands in classes.items():
        problem, compared = _check_band(plan, tensor, products, fringe)
        terms += compared
        if problem:
            problems.append(f"{_describe_band(plan, bands, products)}: {problem}")
    if fringe["rows"] != 1:
        problems.append(f"the fringe rows are computed {fringe['rows']} times, not once")
    return PlanCheck(not problems, tuple(problems), len(classes), terms)
