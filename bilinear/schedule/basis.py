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

from dataclasses import replace
from fractions import Fraction
from itertools import combinations

from ..ir import Form, Multiply, Schedule, Stage, Update

Matrix = list[list[Fraction]]


def _identity(size: int) -> Matrix:
    return [[Fraction(int(i == j)) for j in range(size)] for i in range(size)]


def inverse(matrix: Matrix) -> Matrix | None:
    """The exact inverse, or ``None`` when the matrix is singular."""
    size = len(matrix)
    work = [row[:] + identity_row for row, identity_row in zip(matrix, _identity(size))]
    for col in range(size):
        pivot = next((r for r in range(col, size) if work[r][col] != 0), None)
        if pivot is None:
            return None
        work[col], work[pivot] = work[pivot], work[col]
        scale = work[col][col]
        work[col] = [x / scale for x in work[col]]
        for r in range(size):
            if r != col and work[r][col] != 0:
                factor = work[r][col]
                work[r] = [x - factor * y for x, y in zip(work[r], work[col])]
    return [row[size:] for row in work]


def _matmul(left: Matrix, right: Matrix) -> Matrix:
    return [[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in zip(*right)] for row in left]


def row_operations(buffers: tuple[str, ...], matrix: Matrix) -> tuple[Update, ...]:
    """Updates that, run in order, replace the buffers' vector c by ``matrix``·c.

    Gauss-Jordan reduces the matrix to the identity with transvections and
    scalings only (a zero pivot is repaired by adding a lower row, never by a
    swap); the inverses of those operations, in reverse order, apply it.
    """
    size = len(buffers)
    work = [row[:] for row in matrix]
    operations: list[tuple[int, dict[int, Fraction]]] = []  # row i := Σ_j a_j row_j, applied to `work`

    def apply(target: int, combination: dict[int, Fraction]) -> None:
        new_row = [sum((c * work[j][k] for j, c in combination.items()), Fraction(0)) for k in range(size)]
        work[target] = new_row
        operations.append((target, combination))

    for col in range(size):
        if work[col][col] == 0:
            donor = next(r for r in range(col + 1, size) if work[r][col] != 0)
            apply(col, {col: Fraction(1), donor: Fraction(1)})
        if work[col][col] != 1:
            apply(col, {col: 1 / work[col][col]})
        for r in range(size):
            if r != col and work[r][col] != 0:
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


def _rank(columns: list[dict[str, Fraction]], blocks: list[str]) -> int:
    rows = [[col.get(b, Fraction(0)) for col in columns] for b in blocks]
    rank, work = 0, [r[:] for r in rows]
    for c in range(len(columns)):
        pivot = next((r for r in range(rank, len(work)) if work[r][c] != 0), None)
        if pivot is None:
            continue
        work[rank], work[pivot] = work[pivot], work[rank]
        for r in range(len(work)):
            if r != rank and work[r][c] != 0:
                f = work[r][c] / work[rank][c]
                work[r] = [x - f * y for x, y in zip(work[r], work[rank])]
        rank += 1
    return rank


class _Phase:
    """Directions (target columns) that share one basis, with the statements that use each."""

    def __init__(self) -> None:
        self.directions: list[dict[str, Fraction]] = []
        self.members: list[tuple[Multiply, int, Fraction]] = []  # statement, direction index, scale

    def blocks(self) -> list[str]:
        return sorted({b for d in self.directions for b in d})

    def place(self, statement: Multiply) -> bool:
        column = statement.targets.as_dict()
        for index, direction in enumerate(self.directions):
            ratio = Form.of(column).ratio_to(Form.of(direction))
            if ratio is not None:
                self.members.append((statement, index, ratio))
                return True
        candidate = self.directions + [column]
        blocks = sorted({b for d in candidate for b in d})
        if _rank(candidate, blocks) < len(candidate):
            return False
        self.directions.append(column)
        self.members.append((statement, len(self.directions) - 1, Fraction(1)))
        return True


def split_phases(statements: tuple[Multiply, ...]) -> list[_Phase]:
    """Greedy: each statement joins the first phase its target column fits."""
    phases: list[_Phase] = []
    for statement in statements:
        if not any(phase.place(statement) for phase in phases):
            phase = _Phase()
            phase.place(statement)
            phases.append(phase)
    return phases


def _basis(phase: _Phase) -> tuple[list[str], Matrix]:
    """Touched blocks and Q (columns: the phase's directions, then unit vectors), choosing
    the completion whose inverse has the smallest denominators and fewest entries."""
    blocks = phase.blocks()
    size, given = len(blocks), len(phase.directions)
    columns = [[d.get(b, Fraction(0)) for b in blocks] for d in phase.directions]
    best = None
    for units in combinations(range(size), size - given):
        full = columns + [[Fraction(int(i == u)) for i in range(size)] for u in units]
        q = [list(row) for row in zip(*full)]
        t = inverse(q)
        if t is None:
            continue
        cost = (max(x.denominator for row in t for x in row), sum(x != 0 for row in t for x in row))
        if best is None or cost < best[0]:
            best = (cost, q)
    return blocks, best[1]


def _embed(matrix: Matrix, blocks: list[str], universe: list[str]) -> Matrix:
    """``matrix`` over ``blocks`` as a map over ``universe`` (identity elsewhere)."""
    index = {b: i for i, b in enumerate(blocks)}
    return [
        [matrix[index[r]][index[c]] if r in index and c in index else Fraction(int(r == c)) for c in universe]
        for r in universe
    ]


def _transform_stage(name: str, matrix: Matrix, universe: list[str]) -> Stage | None:
    """An ordered stage applying ``matrix`` to the blocks of ``universe`` (None for the identity)."""
    size = len(universe)
    changed = [i for i in range(size) if any(matrix[i][j] != (i == j) for j in range(size))]
    if not changed:
        return None
    involved = sorted(set(changed) | {j for i in changed for j in range(size) if matrix[i][j] != 0})
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
        blocks, q = _basis(phase)
        forward = _embed(inverse(q), blocks, universe)
        transform = _transform_stage(f"{stage.name}.basis{number}", _matmul(forward, pending_back), universe)
        if transform is not None:
            out.append(transform)
        out.append(Stage(f"{stage.name}.{number}", tuple(_retarget(m, blocks, i, s) for m, i, s in phase.members), stage.span))
        pending_back = _embed(q, blocks, universe)
    back = _transform_stage(f"{stage.name}.restore", pending_back, universe)
    return out + ([back] if back is not None else [])


def _retarget(statement: Multiply, blocks: list[str], direction: int, scale: Fraction) -> Multiply:
    """The statement adding ``scale``·M into the buffer that holds coordinate ``direction``."""
    return replace(statement, targets=Form.of({blocks[direction]: scale}))


def single_target(schedule: Schedule) -> Schedule:
    """Rewrite every multi-target product so each product adds into one buffer.

    Assumes: product statements accumulate (overwriting products have one target).
    Ensures: every product statement has exactly one target; the result equals
    the input schedule's (the verifier proves it for each use).
    """
    stages = tuple(s for stage in schedule.stages for s in _single_target(stage))
    return replace(schedule, stages=stages)
