"""Dependency analysis: statements into stages that may run concurrently, and fusion.

Every pass here is a pure function of the IR; each result is meant to go back
through :func:`bilinear.verify.schedule.verify_schedule` (the tests do so).
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import Multiply, Schedule, Stage, Statement


def depends(later: Statement, earlier: Statement) -> bool:
    """True when ``later`` must run after ``earlier`` (read-after-write, write-after-read, write-after-write).

    Two accumulations into the same target commute, so they do not depend on
    each other through that target.
    """
    both_accumulate = later.is_accumulation() and earlier.is_accumulation()
    shared_targets = later.writes() & earlier.writes() if both_accumulate else frozenset()
    later_reads = later.reads() - shared_targets
    earlier_reads = earlier.reads() - shared_targets
    return bool(
        earlier.writes() & later_reads
        or later.writes() & earlier_reads
        or (later.writes() & earlier.writes()) - shared_targets
    )


def _kind(statement: Statement) -> str:
    return "product" if isinstance(statement, Multiply) else "elementwise"


def group_stages(statements: tuple[Statement, ...], prefix: str = "stage") -> tuple[Stage, ...]:
    """Group a straight-line program into as few concurrent stages as its dependencies allow.

    Assumes: ``statements`` in an order that computes the intended result.
    Ensures: running the stages in order computes the same result; statements
    of one stage are all element-wise or all products and do not conflict.
    Each statement goes to the earliest stage after everything it depends on
    that holds statements of its kind.
    """
    placed: list[tuple[Statement, int]] = []
    stages: list[list[Statement]] = []
    kinds: list[str] = []
    for statement in statements:
        earliest = 1 + max((index for other, index in placed if depends(statement, other)), default=-1)
        index = next((i for i in range(earliest, len(stages)) if kinds[i] == _kind(statement)), None)
        if index is None:
            index = max(earliest, len(stages))
            stages.append([])
            kinds.append(_kind(statement))
        stages[index].append(statement)
        placed.append((statement, index))
    return tuple(Stage(f"{prefix}{i + 1}", tuple(group)) for i, group in enumerate(stages))


def fuse_elementwise(schedule: Schedule) -> Schedule:
    """Merge each run of consecutive element-wise stages into one ordered stage.

    Assumes: a schedule whose element-wise statements act element by element.
    Ensures: the same result with one launch per run, each buffer read and
    written once per run instead of once per stage.
    """
    fused: list[Stage] = []
    for stage in schedule.stages:
        previous = fused[-1] if fused else None
        if previous is not None and not previous.is_product_stage() and not stage.is_product_stage():
            fused[-1] = Stage(
                f"{previous.name}+{stage.name}", previous.statements + stage.statements, previous.span, ordered=True
            )
        else:
            fused.append(stage)
    return replace(schedule, stages=tuple(fused))
