"""In-place schedules derived from any algorithm: C += A·B with no workspace, A and B restored.

The A blocks hold T·a for an invertible T (rows over the original blocks a), the identity at
first.  A product's left factor u must be one block when its GEMM runs, up to a scale: where u
is no row of T, with u = λ·T, one statement ``A_i += Σ_{j≠i} (λ_j/λ_i) A_j`` makes row i (λ_i ≠ 0)
u/λ_i, so T stays invertible.  Of those rows it overwrites the one whose content the products
still to come need last (never, best; a row already changed before one still original).  Once
every product has run, statements ``A_i := Σ μ_j A_j`` bring T back to the identity.  B is done
alike; each product keeps the algorithm's targets, scaled by what its blocks hold, and compile's
single-target pass changes the basis of C as it does for msmes.

The order of the products decides what that costs, so :func:`inplace_schedule` derives the
written order, shuffled ones, and then neighbours of the cheapest, ranked by a cost the caller
gives (compile counts the traffic of the passes it runs).
"""

from __future__ import annotations

import itertools
import math
import operator
import random
import reprlib
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, NamedTuple

from ..ir import Algorithm, Form, Multiply, Schedule, Update
from ..ir.algorithm import check_built_types
from ..ir.names import check_definition_name
from ..verify.expand import expansion_of
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


def product_count(algorithm: Algorithm) -> int:
    """How many products an in-place schedule of ``algorithm`` computes (the orders' length)."""
    return len(_products(algorithm))


def every_order(algorithm: Algorithm, tries: int) -> bool:
    """Whether ``tries`` orders are at least all the orders of the products (a scheme of at most four
    at the default 64): then each is derived once and no search follows."""
    count = product_count(algorithm)
    return count <= 20 and math.factorial(count) <= tries  # 21! is past any count of tries


def _products(algorithm: Algorithm) -> list[_Product]:
    """The products a schedule computes: those some output uses, with nonzero factors."""
    expansion = expansion_of(algorithm)
    return [_Product(u.as_dict(), v.as_dict(), w) for (u, v), w in zip(expansion.factors, expansion.weights)
            if w.terms and u.terms and v.terms]


def refuse_algorithms_name(name: str | None, algorithm: Algorithm) -> None:
    """A schedule named as its algorithm would be found as the algorithm by name (compile ran it)."""
    if name == algorithm.name:
        raise ValueError(f"name {name!r} is the algorithm's; give the schedule another")


def derive_inplace(algorithm: Algorithm, order: list[int] | None = None, name: str | None = None) -> Schedule:
    """The in-place, restoring schedule of ``algorithm`` with its products (those some output uses) in
    ``order`` (default: as written), named ``name`` (default ``<algorithm>_inplace``)."""
    if not isinstance(algorithm, Algorithm):  # a Program had raised AttributeError ('Program' has no 'sums')
        raise TypeError(f"derive_inplace takes one Algorithm (bilinear.load(path).main), not {type(algorithm).__name__}")
    check_built_types(algorithm)
    check_definition_name(name)
    refuse_algorithms_name(name, algorithm)
    products = _products(algorithm)
    order = list(range(len(products))) if order is None else _positions(order)
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


def _positions(order) -> list[int]:
    """``order`` as whole numbers (NumPy's too): 0.0 had raised "list indices must be integers"."""
    try:
        return [operator.index(position) for position in order]
    except TypeError:
        raise TypeError(f"order must list the products' positions as whole numbers, not {reprlib.repr(order)}") from None


def inplace_schedule(algorithm: Algorithm, cost: Callable[[Schedule], object], tries: int = 64, seed: int = 0,
                     name: str | None = None, steps: int = 256) -> Schedule:
    """The cheapest by ``cost`` of :func:`derive_inplace` in the written order and ``tries - 1``
    shuffled orders, then ``steps`` steps of a local search from the cheapest order: one product
    moved to another place, or two swapped, kept when no dearer (``seed`` fixes the draws: the same
    schedule every time); or each order once, and no search, where there are no more than ``tries``
    (:func:`every_order`).  The local search is where most of the saving is: grey333 from 252 blocks
    at one level (the best of 64 orders) to 220 after 256 steps, below its default schedule's 244
    with workspace; Strassen from 66 to 59, below MSMES's 62."""
    if tries < 1 or steps < 0:
        raise ValueError(f"tries must be at least 1 and steps at least 0, not {tries} and {steps}")
    if every_order(algorithm, tries):  # each once, the written first (the cheapest wins, the first of equals)
        orders = itertools.permutations(range(product_count(algorithm)))
        return min((_tried(algorithm, list(order), cost, name) for order in orders), key=lambda found: found.cost).schedule
    draws = random.Random(seed)
    order = list(range(len(_products(algorithm))))
    tried: dict[tuple[int, ...], _Candidate] = {}  # a search on a plateau comes back to orders (Strassen: 177 distinct of 320)

    def candidate(order: list[int]) -> _Candidate:
        if (key := tuple(order)) not in tried:
            tried[key] = _tried(algorithm, order, cost, name)
        return tried[key]

    best = candidate(order)
    for _ in range(tries - 1):
        draws.shuffle(order)
        if (found := candidate(order)).cost < best.cost:
            best = found
    for _ in range(steps if len(order) > 1 else 0):
        found = candidate(_neighbour(best.order, draws))
        if not best.cost < found.cost:  # a step to an equal cost too: the search crosses plateaus
            best = found
    return best.schedule


class _Candidate(NamedTuple):
    order: list[int]
    schedule: Schedule
    cost: object


def _tried(algorithm: Algorithm, order: list[int], cost, name: str | None) -> _Candidate:
    schedule = derive_inplace(algorithm, order, name)
    return _Candidate(list(order), schedule, cost(schedule))


def _neighbour(order: list[int], draws: random.Random) -> list[int]:
    """``order`` with one product moved to another place, or two swapped (an even chance)."""
    first, second = draws.sample(range(len(order)), 2)
    neighbour = list(order)
    if draws.random() < 0.5:
        neighbour[first], neighbour[second] = neighbour[second], neighbour[first]
    else:
        neighbour.insert(second, neighbour.pop(first))
    return neighbour


# --- one operand ---------------------------------------------------------------------------------


class _Blocks:
    """The blocks' contents over the original blocks, as sparse rows and as FLINT's exact matrix
    whose column j is row j (a combination is one solve in C: ⟨11,11,11;896⟩'s 121 blocks had spent
    two minutes turning inverses into Fractions)."""

    def __init__(self, blocks: tuple[str, ...]) -> None:
        import flint  # python-flint, as the single-target pass uses it

        self.blocks = blocks
        self.position = {block: k for k, block in enumerate(blocks)}
        self.rows: list[Row] = [{block: _ONE} for block in blocks]
        self.matrix = flint.fmpq_mat(len(blocks), len(blocks))
        for k in range(len(blocks)):
            self.matrix[k, k] = 1

    def changed(self) -> list[int]:
        return [i for i, row in enumerate(self.rows) if row != {self.blocks[i]: _ONE}]

    def holding(self, factor: Row) -> tuple[int, Fraction] | None:
        """A block holding ``factor`` times a scale, and the scale."""
        return next(((index, scale) for index, row in enumerate(self.rows)
                     if (scale := _scale(row, factor)) is not None), None)

    def combination(self, wanted: Row) -> dict[int, Fraction]:
        """λ with wanted = Σ λ_j rows_j (exact: the rows stay independent), its nonzero entries."""
        import flint

        vector = flint.fmpq_mat(len(self.blocks), 1)
        for block, value in wanted.items():
            vector[self.position[block], 0] = flint.fmpq(value.numerator, value.denominator)
        solved = self.matrix.solve(vector)
        return {j: Fraction(int(x.p), int(x.q)) for j in range(len(self.blocks)) if (x := solved[j, 0]) != 0}

    def ways_back(self) -> dict[int, dict[int, Fraction]]:
        """Per changed block, the combination that gives it its original back (row i of T⁻¹)."""
        inverted = self.matrix.inv()  # column i of (Tᵀ)⁻¹ is row i of T⁻¹
        size = len(self.blocks)
        return {i: {j: Fraction(int(x.p), int(x.q)) for j in range(size) if (x := inverted[j, i]) != 0}
                for i in self.changed()}

    def replace(self, target: int, combination: dict[int, Fraction]) -> Update:
        """``block_target := Σ λ_j block_j``, applied to the contents."""
        import flint

        row: Row = {}
        for j, coefficient in combination.items():
            for block, value in self.rows[j].items():
                row[block] = row.get(block, Fraction(0)) + coefficient * value
        self.rows[target] = {block: value for block, value in row.items() if value != 0}
        for k, block in enumerate(self.blocks):
            value = self.rows[target].get(block, Fraction(0))
            self.matrix[k, target] = flint.fmpq(value.numerator, value.denominator)
        return Update(self.blocks[target], Form.of({self.blocks[j]: c for j, c in combination.items()}))


def _scale(row: Row, factor: Row) -> Fraction | None:
    """s with row = s·factor, if there is one."""
    if row.keys() != factor.keys():
        return None
    first = next(iter(factor))
    scale = row[first] / factor[first]
    return scale if all(row[block] == scale * value for block, value in factor.items()) else None


def _side(factors: list[Row], blocks: tuple[str, ...]) -> _Side:
    contents = _Blocks(blocks)
    before: list[tuple[Update, ...]] = []
    reads: list[tuple[str, Fraction]] = []
    for position, factor in enumerate(factors):
        held = contents.holding(factor)
        if held is not None:
            before.append(())
            reads.append((blocks[held[0]], held[1]))
            continue
        combination = contents.combination(factor)
        target = max(combination, key=lambda i: _overwrite_rank(contents, factors, position, i))
        # the block takes factor / λ_target, its own coefficient 1 (A_i += Σ c_j A_j): the scale goes
        # into the product's targets, not into A or B (scaled then only where they are put back)
        own = combination[target]
        before.append((contents.replace(target, {j: c / own for j, c in combination.items()}),))
        reads.append((blocks[target], 1 / own))
    return _Side(tuple(before), tuple(reads), _restore(contents))


def _overwrite_rank(contents: _Blocks, factors: list[Row], position: int, index: int) -> tuple:
    """How well block ``index`` may be overwritten (the largest is): the later its content is needed
    (never, best), then a block already changed before an original one (both need restoring anyway)."""
    row = contents.rows[index]
    needed = next((later for later in range(position + 1, len(factors)) if _scale(row, factors[later]) is not None),
                  len(factors))
    return needed, row != {contents.blocks[index]: _ONE}, -index


def _restore(contents: _Blocks) -> tuple[Update, ...]:
    """Statements that bring every block back to its original, the shortest available first."""
    statements: list[Update] = []
    while ways := contents.ways_back():
        direct = [(len(combination), i, combination) for i, combination in ways.items() if i in combination]
        if direct:
            _, target, combination = min(direct, key=lambda way: (way[0], way[1]))
            statements.append(contents.replace(target, combination))
            continue
        # Every changed block's original needs the others and not its own content (T⁻¹ has zeros
        # on those diagonal entries): subtracting the first such block from one its original does
        # need makes that entry nonzero, (T⁻¹)_jj - c (T⁻¹)_ji with c = -1.
        first = min(ways)
        other = min(ways[first], key=lambda j: (j not in ways, j))
        statements.append(contents.replace(other, {other: _ONE, first: -_ONE}))
    return tuple(statements)
