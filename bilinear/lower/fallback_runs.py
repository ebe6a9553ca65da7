"""Which level runs its accumulating fallback rather than its own schedule: lowering drops the
shape conditions of a schedule that never runs, and the notes and ``bilinear run`` name what runs."""

from __future__ import annotations

from ..ir import Multiply
from .levels import LevelPlan


def runs_its_fallback(plan: LevelPlan, above: LevelPlan) -> bool:
    """Whether ``plan``'s level, below ``above``'s, runs its accumulating fallback at every call: its
    schedule sets C, and no product of the level above does."""
    return plan.schedule.overwrites_c and not any(_sets_c(p) for p in (above, above.from_zero, above.accumulate_fallback))


def _sets_c(plan: LevelPlan | None) -> bool:
    """Whether a plan has a product that sets its target (a call of the level below with C = A·B)."""
    return plan is not None and any(isinstance(statement, Multiply) and statement.overwrite
                                    for stage in plan.schedule.stages for statement in stage.statements)
