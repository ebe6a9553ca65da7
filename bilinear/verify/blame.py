"""Which statement of a schedule to point at where a C block ends wrong, and what to say.

Assumes: the simulation's record of the block's writers (stage, statement), in order, and
the product statements it identified.  Ensures: a statement and its notes, or None where
neither rule below applies (the simulation then points at the block's last writer).
"""

from __future__ import annotations

from fractions import Fraction

from ..ir import Form, Multiply, Schedule, Stage, Statement, format_coefficient
from ..ir.schedule import target_text
from .expand import Expansion
from .simulated import ProductUse, original_c

Writes = list[tuple[Stage, Statement]]


def dropped_c(schedule: Schedule, writes: Writes, block: str, missing: Form) -> tuple[Statement, tuple[str]] | None:
    """The statement that set ``block`` in an accumulating schedule, where what the block misses
    is exactly its original content (`C11 = A11 * B11` where the schedule computes C += A·B)."""
    if schedule.overwrites_c or missing != Form.symbol(original_c(block)):
        return None
    setting = next((statement for _, statement in writes
                    if (statement.overwrite if isinstance(statement, Multiply) else block not in statement.form.names())),
                   None)
    if setting is None:
        return None
    return setting, (f"schedule {schedule.name} accumulates into C (C += A·B, the default), and `{setting}` sets "
                     f"{block}, dropping its original content: declare the schedule `overwrite` to compute C = A·B, "
                     "or write += there",)


def wrong_weight(expansion: Expansion, writes: Writes, uses: list[ProductUse],
                 block: str) -> tuple[Multiply, tuple[str]] | None:
    """Where only product statements add into ``block``, the one that adds its product times another
    coefficient than the algorithm's output has, 0 where it leaves the block out of its targets (the
    statement that last wrote the block may be right).  A product computed by several statements is
    weighed by what they add together (each alone may be right with the others: +C11, then +C22)."""
    if not all(isinstance(statement, Multiply) and not statement.overwrite for _, statement in writes):
        return None
    algorithm = expansion.algorithm
    weights = dict(zip((product.name for product in algorithm.products), expansion.weights))
    by_product: dict[str, list[ProductUse]] = {}
    for use in (use for use in uses if use.product is not None):
        by_product.setdefault(use.product, []).append(use)
    for product, computing in by_product.items():
        want = weights[product].coefficient(block)
        if sum(use.scale * use.statement.targets.coefficient(block) for use in computing) != want:
            naming = [use for use in computing if block in use.statement.targets.names()]
            culprit = naming[-1] if naming else computing[0]  # the last that adds it there, else the first
            return culprit.statement, (_weight_note(algorithm.name, culprit, block, want, naming[:-1]),)
    return None


def _weight_note(algorithm: str, use: ProductUse, block: str, want: Fraction, besides: list[ProductUse]) -> str:
    """What ``use``'s statement and the others computing its product (``besides``) add into ``block``
    and what the algorithm's output has, or, where the statement leaves the block out, the target it needs."""
    expected = f"{algorithm}'s {block} has it times {format_coefficient(want)}"
    if block in use.statement.targets.names():
        added = [f"`{each.statement}`{_line_of(each.statement)} adds it times "
                 f"{format_coefficient(each.scale * each.statement.targets.coefficient(block))}" for each in besides]
        have = format_coefficient(use.scale * use.statement.targets.coefficient(block))
        return f"`{use.statement}` adds {use.product} to {block} times {have}{''.join(', and ' + a for a in added)}; {expected}"
    *others, last = use.statement.targets.names()
    into = f"{', '.join(others)} and {last}" if others else last
    return f"`{use.statement}` adds {use.product} to {into} only; {expected}: add {target_text(block, want / use.scale)}"


def _line_of(statement: Statement) -> str:
    return f" (line {statement.span.line})" if statement.span else ""
