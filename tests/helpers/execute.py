"""Run a schedule on concrete matrices: a numeric oracle for the symbolic verifier.

Blocks are random integer matrices of different sizes (A blocks 2×3, B blocks
3×2), so a schedule that commutes a product or mixes shapes fails too.
Statements run one after another in written order; :func:`conflicts` says,
independently of ``bilinear.verify``, which statements of one stage may not
share it (DESIGN.md: no read/write or write/write overlap, accumulations into
one target excepted).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bilinear.ir import Algorithm, Form, Multiply, Schedule, Update

_DIMS = {"A": (2, 3), "B": (3, 2), "C": (2, 2)}


@dataclass(frozen=True)
class Outcome:
    """What running the schedule did; ``ok`` when it computed what it declares."""

    ok: bool
    reason: str


def _random_blocks(algorithm: Algorithm, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        block: rng.integers(-9, 10, size=_DIMS[operand]).astype(object)
        for operand in "ABC"
        for block in algorithm.shape.blocks(operand)
    }


def _combine(form: Form, buffers: dict) -> np.ndarray | None:
    total = None
    for name, coef in form.terms:
        value = buffers.get(name)
        if value is None:
            return None
        total = value * coef if total is None else total + value * coef
    return total


def _grid(buffers: dict, algorithm: Algorithm, operand: str) -> np.ndarray:
    rows, cols = algorithm.shape.grid(operand)
    blocks = algorithm.shape.blocks(operand)
    return np.block([[buffers[blocks[i * cols + j]] for j in range(cols)] for i in range(rows)])


def run(schedule: Schedule, algorithm: Algorithm, seed: int = 0) -> Outcome:
    """Execute statement by statement and compare with C⁰ + A·B (or A·B), and A, B when restoring."""
    start = _random_blocks(algorithm, seed)
    buffers: dict = dict(start)
    buffers.update({t.name: None for t in schedule.temporaries})
    try:
        for stage in schedule.stages:
            for statement in stage.statements:
                reason = _execute(statement, buffers)
                if reason:
                    return Outcome(False, reason)
        a, b, c = (_grid(buffers, algorithm, operand) for operand in "ABC")
    except ValueError as error:  # numpy: shapes that do not fit
        return Outcome(False, f"shapes do not fit: {error}")
    a0, b0, c0 = (_grid(start, algorithm, operand) for operand in "ABC")
    want = a0.dot(b0) + (0 if schedule.overwrites_c else c0)
    if c.shape != want.shape or np.any(c != want):
        return Outcome(False, "C is wrong")
    if schedule.restores and (a.shape != a0.shape or b.shape != b0.shape or np.any(a != a0) or np.any(b != b0)):
        return Outcome(False, "A or B is not restored")
    return Outcome(True, "")


def _execute(statement, buffers: dict) -> str:
    """Run one statement on the buffers; a reason when it cannot run."""
    if isinstance(statement, Update):
        value = _combine(statement.form, buffers)
        if value is None:
            return f"`{statement}` reads an unwritten buffer"
        buffers[statement.target] = value
        return ""
    left, right = _combine(statement.left, buffers), _combine(statement.right, buffers)
    if left is None or right is None:
        return f"`{statement}` reads an unwritten buffer"
    product = left.dot(right)
    for target, coef in statement.targets.terms:
        before = 0 if statement.overwrite else buffers.get(target)
        if before is None:
            return f"`{statement}` accumulates into an unwritten {target}"
        buffers[target] = before + product * coef
    return ""


def _reads(statement) -> set[str]:
    if isinstance(statement, Update):
        reads = set(statement.form.names())
        accumulates = statement.form.coefficient(statement.target) == 1
        return reads - {statement.target} if accumulates else reads
    reads = set(statement.left.names()) | set(statement.right.names())
    return reads


def _writes(statement) -> set[str]:
    return {statement.target} if isinstance(statement, Update) else set(statement.targets.names())


def _accumulates(statement) -> bool:
    if isinstance(statement, Update):
        return statement.form.coefficient(statement.target) == 1
    return not statement.overwrite


def conflicts(schedule: Schedule) -> list[str]:
    """Pairs of statements of one (concurrent) stage that overlap, described."""
    found = []
    for stage in schedule.stages:
        kinds = {isinstance(statement, Multiply) for statement in stage.statements}
        if len(kinds) == 2:  # launched as products or as element-wise kernels, never both
            found.append(f"stage {stage.name} mixes products and element-wise updates")
        if getattr(stage, "ordered", False):
            continue  # an ordered stage runs its statements in order per element
        statements = stage.statements
        for i, first in enumerate(statements):
            for second in statements[i + 1:]:
                read_write = (_writes(first) & _reads(second)) | (_writes(second) & _reads(first))
                both = _writes(first) & _writes(second)
                if read_write or (both and not (_accumulates(first) and _accumulates(second))):
                    found.append(f"stage {stage.name}: `{first}` and `{second}`")
    return found


def honest(schedule: Schedule, algorithm: Algorithm) -> bool:
    """Correct on two random inputs and free of conflicts."""
    return not conflicts(schedule) and all(run(schedule, algorithm, seed).ok for seed in (1, 2))

