"""Single-target products by a change of basis of the C blocks (DESIGN.md, "Scheduling").

A library GEMM adds its product into one buffer.  A product statement with
several targets, ``A21 * B11 -> +C21 -C22``, adds M·w to the vector c of C
blocks (w = e21 − e22).  Storing d = T·c instead, with T = Q⁻¹ for an
invertible Q whose columns include w, turns that into adding M to one
coordinate of d.  Products whose target columns are linearly independent
share one basis (parallel columns share a coordinate); the others go to a
later phase.  Each change of basis is an ordered element-wise stage, built
from elementary row operations (transvections and scalings), so a kernel
reads and writes every touched block once however many operations it holds.
"""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np

from ..ir import Form, Multiply, Schedule, Stage, Update
from ..optimize_kernel import reduce_past

Matrix = list[list[Fraction]]


_ZERO, _ONE = Fraction(0), Fraction(1)


def _identity(size: int) -> Matrix:
    return [[_ONE if i == j else _ZERO for j in range(size)] for i in range(size)]


def _to_flint(matrix: Matrix):
    import flint  # python-flint: exact rational matrices in C (FLINT)

    rows, cols = len(matrix), len(matrix[0]) if matrix else 0
    return flint.fmpq_mat(rows, cols, [flint.fmpq(x.numerator, x.denominator) for row in matrix for x in row])


def _from_flint(matrix) -> Matrix:
    return [
        [Fraction(int(matrix[i, j].p), int(matrix[i, j].q)) for j in range(matrix.ncols())] for i in range(matrix.nrows())
    ]


def inverse(matrix: Matrix) -> Matrix | None:
    """The exact inverse (FLINT's ``fmpq_mat``), or ``None`` when the matrix is singular."""
    if not matrix:
        return []
    if len(matrix) == 1:
        return [[1 / matrix[0][0]]] if matrix[0][0] != 0 else None
    try:
        return _from_flint(_to_flint(matrix).inv())
    except ZeroDivisionError:
        return None


def rank(matrix: Matrix) -> int:
    """The exact rank of a rational matrix."""
    return _to_flint(matrix).rank() if matrix and matrix[0] else 0


def _is_identity(matrix: Matrix) -> bool:
    return all(row[i] == 1 and not any(x for j, x in enumerate(row) if j != i) for i, row in enumerate(matrix))


def _matmul(left: Matrix, right: Matrix) -> Matrix:
    if _is_identity(right):
        return [row[:] for row in left]
    if _is_identity(left):
        return [row[:] for row in right]
    return _from_flint(_to_flint(left) * _to_flint(right))


def row_operations(buffers: tuple[str, ...], matrix: Matrix) -> tuple[Update, ...]:
    """Updates that, run in order, replace the buffers' vector c by ``matrix``·c.

    Gauss-Jordan reduces the matrix to the identity with transvections and
    scalings only (a zero pivot is repaired by adding a lower row, never by a
    swap); the inverses of those operations, in reverse order, apply it.
    """
    size = len(buffers)
    work = [{j: x for j, x in enumerate(row) if x != 0} for row in matrix]  # sparse rows: most stay short
    operations: list[tuple[int, dict[int, Fraction]]] = []  # row i := Σ_j a_j row_j, applied to `work`

    def apply(target: int, combination: dict[int, Fraction]) -> None:
        new_row: dict[int, Fraction] = {}
        for j, c in combination.items():
            for k, x in work[j].items():
                new_row[k] = new_row.get(k, 0) + c * x
        work[target] = {k: x for k, x in new_row.items() if x != 0}
        operations.append((target, combination))

    for col in range(size):
        if col not in work[col]:
            donor = next(r for r in range(col + 1, size) if col in work[r])
            apply(col, {col: Fraction(1), donor: Fraction(1)})
        if work[col][col] != 1:
            apply(col, {col: 1 / work[col][col]})
        for r in range(size):
            if r != col and col in work[r]:
                apply(r, {r: Fraction(1), col: -work[r][col]})
    updates = []
    for target, combination in reversed(operations):
        updates.append(Update(buffers[target], _inverse_operation(buffers, target, combination)))
    return tuple(updates)


def _inverse_operation(buffers: tuple[str, ...], target: int, combination: dict[int, Fraction]) -> Form:
    """The inverse of ``row_target := Σ a_j row_j`` (a_target ≠ 0) as a form over the buffers."""
    own = combination[target]
    inverse_terms = {buffers[target]: 1 / own}
    for j, coef in combination.items():
        if j != target:
            inverse_terms[buffers[j]] = -coef / own
    return Form.of(inverse_terms)


# --- phases ---------------------------------------------------------------------------------


def _echelon_row(reduced: dict[str, Fraction]) -> tuple[str, dict[str, Fraction], dict]:
    """A direction left independent by :func:`reduce_past`, as its echelon row (1 at its pivot)."""
    pivot = min(reduced)
    return pivot, {block: value / reduced[pivot] for block, value in reduced.items()}, {}


class _Phase:
    """Directions (target columns) that share one basis, with the statements that use each."""

    def __init__(self) -> None:
        self.directions: list[dict[str, Fraction]] = []
        self.members: list[tuple[Multiply, int, Fraction]] = []  # statement, direction index, scale
        # the directions in echelon form (reduce_past's rows): a column's independence is then one
        # reduction, not the rank of every direction again (a 2401-product schedule spent 40 s there)
        self.echelon: list[tuple[str, dict[str, Fraction], dict]] = []

    def blocks(self) -> list[str]:
        return sorted({b for d in self.directions for b in d})

    def place(self, statement: Multiply) -> bool:
        column = statement.targets.as_dict()
        for index, direction in enumerate(self.directions):
            ratio = Form.of(column).ratio_to(Form.of(direction))
            if ratio is not None:
                self.members.append((statement, index, ratio))
                return True
        reduced, _ = reduce_past(self.echelon, column)
        if not reduced:
            return False
        self.echelon.append(_echelon_row(reduced))
        self.directions.append(column)
        self.members.append((statement, len(self.directions) - 1, Fraction(1)))
        return True


# A stage's phases are searched over this many shuffled orders of its products (a fixed seed: the
# same split every time), where it has at most SEARCHED_STATEMENTS of them.
SEARCHED_ORDERS = 200
SEARCHED_STATEMENTS = 64


def split_phases(statements: tuple[Multiply, ...]) -> list[_Phase]:
    """The fewest phases found: each phase boundary costs a change of basis over C between the GEMMs.
    The greedy split in the written order first, then in shuffled orders until ⌈directions / rank⌉
    (msmes2's 16-product stage: 3 phases written, 2 shuffled; its passes over C at n = 8192, from
    zero, 177 quarter blocks before, 142 after).  Each phase keeps its products in written order."""
    best = _greedy_phases(statements)
    if len(statements) > SEARCHED_STATEMENTS:
        return best
    fewest, order, shuffled = _fewest_possible(statements), list(statements), random.Random(0)
    for _ in range(SEARCHED_ORDERS):
        if len(best) <= fewest:
            break
        shuffled.shuffle(order)
        phases = _greedy_phases(tuple(order))
        if len(phases) < len(best):
            best = phases
    written = {id(statement): index for index, statement in enumerate(statements)}
    for phase in best:
        phase.members.sort(key=lambda member: written[id(member[0])])
    return best


def _greedy_phases(statements: tuple[Multiply, ...]) -> list[_Phase]:
    """Each statement joins the first phase its target column fits."""
    phases: list[_Phase] = []
    for statement in statements:
        if not any(phase.place(statement) for phase in phases):
            phase = _Phase()
            phase.place(statement)
            phases.append(phase)
    return phases


def _fewest_possible(statements: tuple[Multiply, ...]) -> int:
    """⌈distinct directions / their rank⌉: a phase holds independent directions only."""
    directions: list[Form] = []
    echelon: list[tuple[str, dict[str, Fraction], dict]] = []
    for statement in statements:
        if any(statement.targets.ratio_to(direction) is not None for direction in directions):
            continue
        directions.append(statement.targets)
        if reduced := reduce_past(echelon, statement.targets.as_dict())[0]:
            echelon.append(_echelon_row(reduced))
    return -(-len(directions) // max(1, len(echelon)))


# Above this many completions, the completion is chosen by elimination instead of searched.
SEARCHED_COMPLETIONS = 512
#: The condition number (directions scaled to unit length) a change of basis may have before its
#: conditioning ranks it: C passes through it and back, so rounding in C grows by about this much
#: at each level.  Every shipped schedule's changes of basis are within it; a completion of DPS's
#: derived schedule had 396, and its error grew 100-fold a level (tests/test_schedule_passes.py).
CONDITION_LIMIT = 32.0


def _basis(phase: _Phase) -> tuple[list[str], Matrix, Matrix, list[int]]:
    """Touched blocks, Q (columns: the phase's directions and unit vectors), T = Q⁻¹, and
    for each direction the block whose buffer holds its coordinate.

    Coordinates are stored where they cost least to reach: direction i in the
    buffer of its pivot block (a block that no unit vector completes), the
    unit vector e_u in block u's own buffer, so T is the identity outside the
    pivot rows and columns and its row operations are few.

    Among completions by unit vectors it takes one whose condition number is
    within CONDITION_LIMIT (else the best conditioned), and of those the one
    whose inverse has the smallest denominators and fewest entries (the first
    such, in the order of ``combinations``); with more than
    SEARCHED_COMPLETIONS candidates, the unit vectors of the non-pivot rows of
    the directions' echelon form (with partial pivoting where that is past
    the limit).
    Each candidate costs a given×given inverse only: with P the rows not
    completed by a unit vector and U the others, ordered P first,
    Q = [[D_P, 0], [D_U, I]] and Q⁻¹ = [[D_P⁻¹, 0], [−D_U·D_P⁻¹, I]].
    """
    blocks = phase.blocks()
    size, given = len(blocks), len(phase.directions)
    columns = [[d.get(b, Fraction(0)) for b in blocks] for d in phase.directions]
    if given == 1:
        # Q⁻¹'s cost depends only on the pivot's value w_p: try each value once, at the first
        # pivot that ``combinations`` would have visited with it (the last block first).
        first_pivot: dict[Fraction, int] = {}
        for p in reversed(range(size)):
            if columns[0][p] != 0:
                first_pivot.setdefault(columns[0][p], p)
        candidates = [tuple(i for i in range(size) if i != p) for p in first_pivot.values()]
    elif comb(size, given) > SEARCHED_COMPLETIONS:
        candidates = [_echelon_completion(columns, size)]
        if _condition(columns, candidates[0], size) > CONDITION_LIMIT:
            candidates.append(_echelon_completion(columns, size, largest=True))
    else:
        candidates = combinations(range(size), size - given)
    best = None
    for units in candidates:
        pieces = _completed_inverse(columns, units, size)
        if pieces is None:
            continue
        entries = [x for row in pieces[0] + pieces[1] for x in row if x != 0]
        cost = (max(_condition(columns, units, size), CONDITION_LIMIT),
                max((x.denominator for x in entries), default=1), len(entries) + len(units))
        if best is None or cost < best[0]:
            best = (cost, units, pieces)
    _, units, (d_p_inverse, unit_rows) = best
    pivots = [i for i in range(size) if i not in set(units)]
    stored_t = _identity(size)  # row i: the coordinate block i's buffer holds
    for holder, row in zip(pivots, d_p_inverse):
        stored_t[holder] = [Fraction(0)] * size
        for b, j in enumerate(pivots):
            stored_t[holder][j] = row[b]
    for u, row in zip(units, unit_rows):
        for b, j in enumerate(pivots):
            stored_t[u][j] = row[b]
    stored_q = _identity(size)  # column pivots[i] is direction i, the others unit vectors
    for holder, column in zip(pivots, columns):
        for i in range(size):
            stored_q[i][holder] = column[i]
    return blocks, stored_q, stored_t, pivots


def _completed_inverse(columns: Matrix, units: tuple[int, ...], size: int) -> tuple[Matrix, Matrix] | None:
    """The nonzero blocks of Q⁻¹ for Q = [directions | e_u for u in units]: D_P⁻¹ and −D_U·D_P⁻¹
    (None when Q is singular); the rest of Q⁻¹ is the identity on the units."""
    unit_set = set(units)
    pivots = [i for i in range(size) if i not in unit_set]
    d_p_inverse = inverse([[column[i] for column in columns] for i in pivots])
    if d_p_inverse is None:
        return None
    unit_rows = []
    for u in units:
        weights = [(a, column[u]) for a, column in enumerate(columns) if column[u] != 0]
        unit_rows.append([-sum((w * d_p_inverse[a][b] for a, w in weights), Fraction(0)) for b in range(len(pivots))])
    return d_p_inverse, unit_rows


def _condition(columns: Matrix, units: tuple[int, ...], size: int) -> float:
    """The condition number of Q = [directions | e_u for u in units], each column scaled to unit
    length (a direction's scale is its coordinate's, and costs no accuracy)."""
    unit_set = set(units)
    pivots = [i for i in range(size) if i not in unit_set]
    q = np.eye(size)
    for holder, column in zip(pivots, columns):
        # scaled exactly to a largest entry of 1 first: float(10^400) overflows, and 10^-400 became 0, a zero
        # column whose norm made NaNs and "SVD did not converge" (a hunt); an entry 2^-1074 below the
        # largest still underflows to 0, harmlessly
        largest = max(abs(x) for x in column)
        q[:, holder] = [float(x / largest) for x in column]
        q[:, holder] /= np.linalg.norm(q[:, holder])
    return float(np.linalg.cond(q))


def _echelon_completion(columns: Matrix, size: int, largest: bool = False) -> tuple[int, ...]:
    """Unit vectors completing independent ``columns`` to a basis: the rows that are not pivots (each
    column's first nonzero row once the columns before are eliminated, or with ``largest`` its largest)."""
    work = [column[:] for column in columns]
    pivots: list[int] = []
    for index, column in enumerate(work):
        rows = [i for i in range(size) if column[i] != 0 and i not in pivots]
        pivot = max(rows, key=lambda i: abs(column[i])) if largest else rows[0]
        pivots.append(pivot)
        for other in work[index + 1 :]:
            if other[pivot] != 0:
                factor = other[pivot] / column[pivot]
                other[:] = [x - factor * y for x, y in zip(other, column)]
    return tuple(i for i in range(size) if i not in pivots)


def _embed(matrix: Matrix, blocks: list[str], universe: list[str]) -> Matrix:
    """``matrix`` over ``blocks`` as a map over ``universe`` (identity elsewhere)."""
    index = {b: i for i, b in enumerate(blocks)}
    return [
        [matrix[index[r]][index[c]] if r in index and c in index else (_ONE if r == c else _ZERO) for c in universe]
        for r in universe
    ]


def _transform_stage(name: str, matrix: Matrix, universe: list[str]) -> Stage | None:
    """An ordered stage applying ``matrix`` to the blocks of ``universe`` (None for the identity)."""
    nonzero = [[j for j, x in enumerate(row) if x] for row in matrix]  # truth tests: much cheaper than Fraction ==
    changed = [i for i, columns in enumerate(nonzero) if columns != [i] or matrix[i][i] != 1]
    if not changed:
        return None
    involved = sorted(set(changed) | {j for i in changed for j in nonzero[i]})
    sub = [[matrix[r][c] for c in involved] for r in involved]
    return Stage(name, row_operations(tuple(universe[i] for i in involved), sub), ordered=True)


def _single_target(stage: Stage) -> list[Stage]:
    if not stage.is_product_stage() or all(len(s.targets.terms) == 1 for s in stage.statements):
        return [stage]
    phases = split_phases(stage.statements)
    universe = sorted({b for phase in phases for b in phase.blocks()})
    out: list[Stage] = []
    pending_back = _identity(len(universe))  # map from the current basis back to c
    for number, phase in enumerate(phases, start=1):
        blocks, q, t, pivots = _basis(phase)
        forward = _embed(t, blocks, universe)
        transform = _transform_stage(f"{stage.name}.basis{number}", _matmul(forward, pending_back), universe)
        if transform is not None:
            out.append(transform)
        out.append(Stage(f"{stage.name}.{number}", tuple(_retarget(m, blocks, pivots[i], s) for m, i, s in phase.members), stage.span))
        pending_back = _embed(q, blocks, universe)
    back = _transform_stage(f"{stage.name}.restore", pending_back, universe)
    return out + ([back] if back is not None else [])


def _retarget(statement: Multiply, blocks: list[str], holder: int, scale: Fraction) -> Multiply:
    """The statement adding ``scale``·M into ``blocks[holder]``, the buffer that holds its direction."""
    return replace(statement, targets=Form.of({blocks[holder]: scale}))


def single_target(schedule: Schedule) -> Schedule:
    """Rewrite every multi-target product so each product adds into one buffer.

    Assumes: product statements accumulate (overwriting products have one target).
    Ensures: every product statement has exactly one target; the result equals
    the input schedule's (the verifier proves it for each use).
    """
    stages = tuple(s for stage in schedule.stages for s in _single_target(stage))
    return replace(schedule, stages=stages)
