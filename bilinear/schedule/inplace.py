"""In-place schedules derived from any algorithm: C += A·B with no workspace, A and B restored.

The A blocks hold T·a for an invertible T (rows over the original blocks a), the identity at
first.  A product's left factor u must be one block when its GEMM runs: where u is no row of T
(up to a scale), one statement ``A_i := Σ λ_j A_j`` with u = λ·T replaces a row i with λ_i ≠ 0,
so T stays invertible.  Of those rows it overwrites the one whose content the products still
to come need last (never, best; a row already changed before one still original).  Once every
product has run, statements of the same kind bring T back to the identity.  B is done alike;
each product keeps the algorithm's targets, scaled by what its blocks hold, and compile's
single-target pass changes the basis of C as it does for msmes.

The order of the products decides what that costs, so :func:`inplace_schedule` derives the
written order and shuffled ones and keeps the cheapest by a cost the caller gives (compile
counts the traffic of the passes it runs).  MSMES, written by hand for Strassen, moves 62
quarter blocks at one level; the derived Strassen 63, Winograd 59 (compiled, C += A·B).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from ..ir import Algorithm, Form, Multiply, Schedule, Update
from ..verify.expand import expansion_of
from .basis import inverse
from .stages import group_stages

Row = dict[str, Fraction]  # a block's content over the original blocks

_ONE = Fraction(1)


@dataclass(frozen=True)
class _Product:
    left: Row
    right: Row
    targets: Form


@dataclass(frozen=True)
class _Side:
    """One operand's statements: those to run before each product (by position), the block each
    product reads with the scale it holds its factor at, and the restoring statements."""

    before: tuple[tuple[Update, ...], ...]
    reads: tuple[tuple[str, Fraction], ...]
    restore: tuple[Update, ...]


def products_of(algorithm: Algorithm) -> list[_Product]:
    """The products a schedule computes: those some output uses, with nonzero factors."""
    expansion = expansion_of(algorithm)
    return [_Product(u.as_dict(), v.as_dict(), w) for (u, v), w in zip(expansion.factors, expansion.weights)
            if w.terms and u.terms and v.terms]


def derive_inplace(algorithm: Algorithm, order: list[int] | None = None, name: str | None = None) -> Schedule:
    """The in-place, restoring schedule of ``algorithm`` with its products (:func:`products_of`) in
    ``order`` (default: as written), named ``name`` (default ``<algorithm>_inplace``)."""
    products = products_of(algorithm)
    order = list(range(len(products))) if order is None else order
    if sorted(order) != list(range(len(products))):
        raise ValueError(f"order must list each of the {len(products)} products once")
    sides = [_side([getattr(products[r], side) for r in order], algorithm.shape.blocks(operand))
             for side, operand in (("left", "A"), ("right", "B"))]
    program: list = []
    for position, index in enumerate(order):
        (a, a_scale), (b, b_scale) = (side.reads[position] for side in sides)
        program += [*sides[0].before[position], *sides[1].before[position]]
        program.append(Multiply(Form.symbol(a), Form.symbol(b), products[index].targets.scale(1 / (a_scale * b_scale))))
    program += [*sides[0].restore, *sides[1].restore]
    return Schedule(name or f"{algorithm.name}_inplace", algorithm.name, frozenset({"inplace", "restore"}), (),
                    group_stages(tuple(program)))


def inplace_schedule(algorithm: Algorithm, cost: Callable[[Schedule], object], tries: int = 64, seed: int = 0,
                     name: str | None = None) -> Schedule:
    """The cheapest by ``cost`` of :func:`derive_inplace` in the written order and ``tries - 1``
    shuffled orders (``seed`` fixes them: the same schedule every time)."""
    if tries < 1:
        raise ValueError(f"tries must be at least 1, not {tries}")
    order, shuffled = list(range(len(products_of(algorithm)))), random.Random(seed)
    best = derive_inplace(algorithm, order, name)
    best_cost = cost(best)
    for _ in range(tries - 1):
        shuffled.shuffle(order)
        schedule = derive_inplace(algorithm, order, name)
        if (found := cost(schedule)) < best_cost:
            best, best_cost = schedule, found
    return best


# --- one operand ---------------------------------------------------------------------------------


def _side(factors: list[Row], blocks: tuple[str, ...]) -> _Side:
    rows: list[Row] = [{block: _ONE} for block in blocks]
    before: list[tuple[Update, ...]] = []
    reads: list[tuple[str, Fraction]] = []
    for position, factor in enumerate(factors):
        held = _holding(rows, factor)
        if held is not None:
            before.append(())
            reads.append((blocks[held[0]], held[1]))
            continue
        combination = _combination(rows, blocks, factor)
        target = max((i for i in combination), key=lambda i: _keep_less(rows, blocks, factors, position, i))
        before.append((_replace(rows, blocks, target, combination),))
        reads.append((blocks[target], _ONE))
    return _Side(tuple(before), tuple(reads), _restore(rows, blocks))


def _holding(rows: list[Row], factor: Row) -> tuple[int, Fraction] | None:
    """A block holding ``factor`` times a scale, and the scale."""
    for index, row in enumerate(rows):
        if row.keys() == factor.keys():
            first = next(iter(factor))
            scale = row[first] / factor[first]
            if all(row[block] == scale * value for block, value in factor.items()):
                return index, scale
    return None


def _inverted(rows: list[Row], blocks: tuple[str, ...]) -> list[list[Fraction]]:
    inverted = inverse([[row.get(block, Fraction(0)) for block in blocks] for row in rows])
    assert inverted is not None, "the blocks' contents stay independent"
    return inverted


def _combination(rows: list[Row], blocks: tuple[str, ...], wanted: Row, inverted=None) -> dict[int, Fraction]:
    """λ with wanted = Σ λ_j rows_j (exact: the rows are independent), its nonzero entries;
    ``inverted``: the rows' inverse where the caller has it."""
    inverted = _inverted(rows, blocks) if inverted is None else inverted
    position = {block: k for k, block in enumerate(blocks)}
    combination = {j: sum((value * inverted[position[block]][j] for block, value in wanted.items()), Fraction(0))
                   for j in range(len(rows))}
    return {j: value for j, value in combination.items() if value != 0}


def _keep_less(rows: list[Row], blocks: tuple[str, ...], factors: list[Row], position: int, index: int) -> tuple:
    """Rank of overwriting row ``index`` (larger is better): the later its content is needed (never
    best), then a row already changed before an original one (both need restoring anyway)."""
    needed = next((later for later in range(position + 1, len(factors))
                   if _holding([rows[index]], factors[later]) is not None), len(factors))
    return needed, rows[index] != {blocks[index]: _ONE}, -index


def _replace(rows: list[Row], blocks: tuple[str, ...], target: int, combination: dict[int, Fraction]) -> Update:
    """``block_target := Σ λ_j block_j``, applied to ``rows``."""
    row: Row = {}
    for j, coefficient in combination.items():
        for block, value in rows[j].items():
            row[block] = row.get(block, Fraction(0)) + coefficient * value
    rows[target] = {block: value for block, value in row.items() if value != 0}
    return Update(blocks[target], Form.of({blocks[j]: coefficient for j, coefficient in combination.items()}))


def _restore(rows: list[Row], blocks: tuple[str, ...]) -> tuple[Update, ...]:
    """Statements that bring every block back to its original, the shortest available first."""
    statements: list[Update] = []
    while changed := [i for i, row in enumerate(rows) if row != {blocks[i]: _ONE}]:
        inverted = _inverted(rows, blocks)  # one inverse gives every block's way back
        ways = [(len(combination), i, combination) for i in changed
                if i in (combination := _combination(rows, blocks, {blocks[i]: _ONE}, inverted))]
        if ways:
            _, target, combination = min(ways, key=lambda way: (way[0], way[1]))
            statements.append(_replace(rows, blocks, target, combination))
            continue
        # Every changed block's original needs the others and not its own content (T⁻¹ has zeros
        # on those diagonal entries): subtracting the first such block from one its original does
        # need makes that entry nonzero, (T⁻¹)_jj - c (T⁻¹)_ji with c = -1.
        first = changed[0]
        needs = _combination(rows, blocks, {blocks[first]: _ONE}, inverted)
        other = min(needs, key=lambda j: (j not in changed, j))
        statements.append(_replace(rows, blocks, other, {other: _ONE, first: -_ONE}))
    return tuple(statements)
