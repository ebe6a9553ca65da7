"""What lowering refuses about where a level runs, and what a workspace limit's fallback adds to it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from ..diagnostics import BilinearError, Diagnostic
from ..ir import Algorithm, Schedule
from .levels import Options

_FALLBACK = "--workspace-limit"


def refuse_destroying_below_top(resolved: list[tuple[Schedule | None, Algorithm]]) -> None:
    """An in-place schedule without ``restore`` leaves its A and B changed.  At the top level
    those are the caller's inputs, which the schedule declares it consumes; below, they are
    blocks (or sums) the level above still reads, so the product would be wrong."""
    for level, (schedule, _) in enumerate(resolved):
        if level > 0 and schedule is not None and schedule.inplace and not schedule.restores:
            raise BilinearError(
                Diagnostic(
                    f"schedule {schedule.name} is in place and does not restore A and B, so it can run only at the "
                    f"top level; at level {level + 1} it would destroy blocks the level above still reads",
                    schedule.span,
                    notes=("use one level (--levels 1, levels=1), declare and prove `restore`, or give the lower levels "
                           "another schedule",),
                )
            )


@contextmanager
def fallback_named(fallback: Options, asked: Options) -> Iterator[None]:
    """Say that a refusal is of a plan a workspace limit falls back to (``fallback``), which the user
    never asked for (``asked``): with ``--breadth 1`` a non-restoring schedule runs at the top only, but
    the limit's depth-first fallback puts it at level 2, and "at level 2" alone had not said why."""
    try:
        yield
    except BilinearError as error:
        if any(note.startswith(_FALLBACK) for d in error.diagnostics for note in d.notes):
            raise  # a fallback further down has said so
        note = (f"{_FALLBACK} {asked.workspace_limit}: where the workspace of --breadth {asked.breadth} does not fit, "
                f"the product runs with fewer breadth-first levels, and the plan with --breadth {fallback.breadth} is "
                f"the one refused; drop the limit to keep --breadth {asked.breadth} at every size")
        first, *rest = error.diagnostics
        raise BilinearError(replace(first, notes=(*first.notes, note)), *rest) from None
