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
their common denominator and accumulated exactly (as float64 matrix
products when every partial sum is provably an integer below 2⁵³, in
int64 below 2⁶³, in Python integers otherwise), every entry of the tensor
compared, not a sample of them: the tensor is summed one slice (one piece
of one mode) at a time, so memory holds a slice, never every product's
terms at once.
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
    terms: int  # the classical product's nonzero terms, summed over the band classes compared with it


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


# Entries of one slice of the tensor held at once (32 MiB of int64): a slice whose mode gives a larger
# one is taken only where every mode does.
SLAB_LIMIT = 1 << 22

Factor = tuple[np.ndarray, tuple[int, ...]]  # the pieces of one mode a product touches, and its integer coefficients


class _Tensor:
    """The plan's tensor over pieces, one mode each: A (row, inner), B (inner, col), C (row, col);
    the fringe is the last inner and col index."""

    def __init__(self, plan: Plan):
        d = plan.decomposition
        self.rows, self.inner, self.cols = d.rows, d.inner + 1, d.cols + 1
        self.sizes = (self.rows * self.inner, self.inner * self.cols, self.rows * self.cols)
        self.scale = math.lcm(1, *(c.denominator for p in d.products for part in (p.u, p.v, p.w) for _, c in part))
        widths = (self.inner, self.cols, self.cols)
        self.factors = [tuple(self._factor(part, width) for part, width in zip((p.u, p.v, p.w), widths))
                        for p in d.products]

    def _factor(self, part, width: int) -> Factor:
        pieces = [i * width + j for (i, j), _ in part]
        values = [c.numerator * (self.scale // c.denominator) for _, c in part]  # exact, and no Fraction made
        if 0 in values or len(set(pieces)) < len(pieces):
            # A block named twice adds both coefficients (a slice must see each piece once per product)
            merged: Counter = Counter()
            for piece, value in zip(pieces, values):
                merged[piece] += value
            pieces = [piece for piece, value in merged.items() if value]
            values = [merged[piece] for piece in pieces]
        return np.array(pieces, dtype=np.intp), tuple(values)

    def classical(self, rows, inners, cols) -> Counter:
        """The classical product's terms over these pieces, by (A, B, C) piece, scaled as the products are."""
        return Counter({(i * self.inner + j, j * self.cols + c, i * self.cols + c): self.scale**3
                        for i in rows for j in inners for c in cols})


def _slicing_mode(tensor: _Tensor, products: tuple) -> int:
    """The mode whose pieces the tensor is summed one at a time in: the fewest product terms to
    visit one by one, with a slice within SLAB_LIMIT where one is."""
    touched = [sum(len(tensor.factors[p][mode][0]) * copies for p, copies in products) for mode in range(3)]
    slab = [math.prod(tensor.sizes) // size for size in tensor.sizes]
    return min(range(3), key=lambda mode: (slab[mode] > SLAB_LIMIT, touched[mode], slab[mode]))


def _magnitude(tensor: _Tensor, products: tuple, expected: Counter) -> int:
    """A bound on every partial sum of the check: the sum of the terms' absolute values."""
    def norm(factor: Factor) -> int:
        return sum(map(abs, factor[1]))

    return sum(copies * math.prod(map(norm, tensor.factors[p])) for p, copies in products) + sum(
        map(abs, expected.values()))


def _by_piece(tensor: _Tensor, products: tuple, mode: int, dtype) -> dict[int, list]:
    """For each piece of ``mode``: (weight, factor, factor) of the products touching it, the two
    other modes' factors with their coefficients as arrays of ``dtype``."""
    others = [m for m in range(3) if m != mode]
    pieces: dict[int, list] = {}
    for product, copies in products:
        factors = tensor.factors[product]
        pair = [(factors[m][0], np.array(factors[m][1], dtype=dtype)) for m in others]
        for piece, coefficient in zip(*factors[mode]):
            pieces.setdefault(int(piece), []).append((coefficient * copies, *pair))
    return pieces


def _by_key(expected: Counter, mode: int) -> dict[int, list]:
    """The expected terms for each piece of ``mode``: (piece, piece, value) of the two other modes."""
    first, second = (m for m in range(3) if m != mode)
    pieces: dict[int, list] = {}
    for key, value in expected.items():
        pieces.setdefault(key[mode], []).append((key[first], key[second], value))
    return pieces


# Below this bound on every partial sum, float64 holds each one exactly (an integer under 2⁵³, as
# every term is): a slice is then one matrix product, summed by BLAS in any order, still exact.
EXACT_IN_FLOAT = 2**53


def _differences(tensor: _Tensor, products: tuple, expected: Counter):
    """Slice by slice of one mode, what the products sum to less what they should (``expected``).

    Memory is one slice and the factors, not the 3·10⁸ terms ⟨3,3,6;40⟩²'s 1,600 products expand
    to (which had taken past 12 GB).  A slice is summed exactly: bounded by the sum of every term's
    magnitude (so no partial sum can pass it), in float64 as a matrix product below 2⁵³
    (:func:`_multiplied`: ⟨3,3,6;40⟩²'s slices in 0.3 s rather than 2.7 s), else term by term
    (:func:`_indexed`) in int64 below 2⁶³, else in Python integers.
    """
    magnitude = _magnitude(tensor, products, expected)
    mode = _slicing_mode(tensor, products)
    if magnitude < EXACT_IN_FLOAT and _multiplying_pays(tensor, products, mode):
        return _multiplied(tensor, products, expected, mode)
    return _indexed(tensor, products, expected, mode, np.int64 if magnitude < 2**63 else object)


# A slice as a matrix product multiplies every pair of pieces of the products touching it, zeros
# included; term by term, each term costs about a hundred times as much.  ⟨3,3,6;40⟩²: 4.5·10⁹
# multiply-adds for 3·10⁸ terms, 0.3 s against 2.7 s; Winograd⁴: 2.8·10⁹ for 10⁷ terms, where term by
# term is the faster.  Matrix products are taken up to this many multiply-adds a term.
MULTIPLY_ADDS_PER_TERM = 32


def _multiplying_pays(tensor: _Tensor, products: tuple, mode: int) -> bool:
    """Whether the slices of ``mode`` are cheaper as matrix products, whose rows (a product each)
    also stay within SLAB_LIMIT."""
    touched = sum(len(tensor.factors[product][mode][0]) for product, _ in products)
    others = [tensor.sizes[m] for m in range(3) if m != mode]
    terms = sum(math.prod(len(factor[0]) for factor in tensor.factors[product]) for product, _ in products)
    return touched * math.prod(others) <= MULTIPLY_ADDS_PER_TERM * terms and len(products) * max(others) <= SLAB_LIMIT


def _multiplied(tensor: _Tensor, products: tuple, expected: Counter, mode: int):
    """The slices as matrix products: for one piece of ``mode``, a row per product touching it, of
    each of its two other factors (the first times its weight there), and one ``left.T @ right``."""
    first, second = (m for m in range(3) if m != mode)
    touching: dict[int, list] = {}
    for product, copies in products:
        for piece, coefficient in zip(*tensor.factors[product][mode]):
            touching.setdefault(int(piece), []).append((product, coefficient * copies))
    floats = {product: [np.array(factor[1], dtype=float) for factor in tensor.factors[product]] for product, _ in products}
    wanted = _by_key(expected, mode)
    for piece in touching.keys() | wanted.keys():
        rows = touching.get(piece, [])
        slab = _rows(tensor, floats, rows, first).T @ _rows(tensor, floats, [(p, 1) for p, _ in rows], second)
        for at, at_other, value in wanted.get(piece, ()):
            slab[at, at_other] -= value
        yield slab


def _rows(tensor: _Tensor, floats: dict, rows: list[tuple[int, int]], mode: int) -> np.ndarray:
    """A row per (product, weight): the product's factor of ``mode``, over that mode's pieces, times the weight."""
    matrix = np.zeros((len(rows), tensor.sizes[mode]))
    if rows:
        at = [tensor.factors[product][mode][0] for product, _ in rows]
        lengths = [len(pieces) for pieces in at]
        values = np.concatenate([floats[product][mode] for product, _ in rows])
        values *= np.repeat(np.array([weight for _, weight in rows], dtype=float), lengths)
        matrix[np.repeat(np.arange(len(rows)), lengths), np.concatenate(at)] = values
    return matrix


def _indexed(tensor: _Tensor, products: tuple, expected: Counter, mode: int, dtype):
    """The slices summed term by term in ``dtype``: one product touches each pair of pieces once, so its
    terms go in with one fancy-indexed ``+=`` that repeats no index."""
    first, second = (tensor.sizes[m] for m in range(3) if m != mode)
    contributions, wanted = _by_piece(tensor, products, mode, dtype), _by_key(expected, mode)
    for piece in contributions.keys() | wanted.keys():
        slab = np.zeros((first, second), dtype=dtype)
        for weight, (at, coefficients), (at_other, other) in contributions.get(piece, ()):
            slab[np.ix_(at, at_other)] += np.outer(coefficients * weight, other)
        for row, col, value in wanted.get(piece, ()):
            slab[row, col] -= value
        yield slab


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


def _expected(tensor: _Tensor, fringe: Counter) -> tuple[Counter, int]:
    """What a band's products must sum to: the classical product less the fringe's; and the
    classical product's terms."""
    rows, every_inner, every_col = range(tensor.rows), range(tensor.inner), range(tensor.cols)
    want = tensor.classical(rows, every_inner, every_col)
    expected = Counter(want)
    pieces = {"inner": (every_inner[-1:], every_col[:-1]), "cols": (every_inner, every_col[-1:])}
    for kind, (inners, cols) in pieces.items():
        for key, value in tensor.classical(rows, inners, cols).items():
            expected[key] -= value * fringe[kind]
    return expected, len(want)


def _check_band(tensor: _Tensor, products: tuple, fringe: Counter) -> tuple[str | None, int]:
    expected, terms = _expected(tensor, fringe)
    wrong = sum(np.count_nonzero(slab) for slab in _differences(tensor, products, expected))
    if not wrong:
        return None, terms
    return f"{wrong} of the tensor's terms differ from the classical product's", terms


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
        problem, compared = _check_band(tensor, products, fringe)
        terms += compared
        if problem:
            problems.append(f"{_describe_band(plan, bands, products)}: {problem}")
    if fringe["rows"] != 1:
        problems.append(f"the fringe rows are computed {fringe['rows']} times, not once")
    return PlanCheck(not problems, tuple(problems), len(classes), terms)
