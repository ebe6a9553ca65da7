"""What a run of element-wise statements does: each written buffer's final value, and the block
shape of each buffer (element-wise kernels group their work by it)."""

from __future__ import annotations

from fractions import Fraction

from ..ir import Form, Schedule, Update, operand_of


def like_of(buffer: str, schedule: Schedule) -> str:
    """The operand whose block shape a buffer has."""
    temp = schedule.temporary(buffer)
    return temp.like if temp is not None else operand_of(buffer)


def net_effect(statements: tuple[Update, ...]) -> dict[str, Form]:
    """Each written buffer's final value over the buffers' values at the start."""
    values: dict[str, dict[str, Fraction]] = {}
    for statement in statements:
        total: dict[str, Fraction] = {}
        for name, coef in statement.form.terms:
            coef = coef.numerator if coef.denominator == 1 else coef  # int arithmetic where it can
            for inner, inner_coef in values.get(name, {name: 1}).items():
                total[inner] = total.get(inner, 0) + coef * inner_coef
        values[statement.target] = {name: coef for name, coef in total.items() if coef != 0}
    return {target: Form.of(value) for target, value in values.items()}


def crossing_shapes(effect: dict[str, Form], schedule: Schedule) -> tuple[str, str] | None:
    """(the shape written, the shape that reads it) where one kernel could not run ``effect``
    (:func:`net_effect`'s result), else None.  A kernel runs each block shape's part over that
    shape's blocks, so no part may read a buffer another part writes."""
    written = {target: like_of(target, schedule) for target, form in effect.items() if form != Form.symbol(target)}
    for target, like in written.items():
        for name in effect[target].names():
            if name in written and written[name] != like:
                return written[name], like
    return None
