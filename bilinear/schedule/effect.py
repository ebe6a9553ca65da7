"""The block shape of each buffer (element-wise kernels group their work by it), and where a run of
element-wise statements (its :func:`bilinear.ir.net_effect`) crosses shapes."""

from __future__ import annotations

from ..ir import Form, Schedule, operand_of


def like_of(buffer: str, schedule: Schedule) -> str:
    """The operand whose block shape a buffer has."""
    temp = schedule.temporary(buffer)
    return temp.like if temp is not None else operand_of(buffer)


def crossing_shapes(effect: dict[str, Form], schedule: Schedule) -> tuple[str, str] | None:
    """(the shape written, the shape that reads it) where one kernel could not run ``effect``
    (:func:`net_effect`'s result), else None.  A kernel runs each block shape's part over that
    shape's blocks, so no part may read a buffer another part writes."""
    written = {target: like_of(target, schedule) for target in effect}
    for target, like in written.items():
        for name in effect[target].names():
            if name in written and written[name] != like:
                return written[name], like
    return None
