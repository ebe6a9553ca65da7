"""Dependency analysis: statements into stages that may run concurrently, and fusion.

Every pass here is a pure function of the IR; each result is meant to go back
through :func:`bilinear.verify.verify_schedule` (the tests do so).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from ..ir import Multiply, Schedule, Stage, Statement, net_effect
from .effect import crossing_shapes


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
    (in the sense of :func:`depends`) that holds statements of its kind.
    Linear in the statements' reads and writes: per buffer it keeps the last
    stage of each kind of reader and writer instead of comparing every pair.
    """
    last = _LastUse()
    stages: list[list[Statement]] = []
    by_kind: dict[str, list[int]] = {"product": [], "elementwise": []}
    for statement in statements:
        earliest = 1 + last.after(statement)
        candidates = by_kind[_kind(statement)]
        position = bisect_left(candidates, earliest)
        if position < len(candidates):
            index = candidates[position]
        else:
            index = max(earliest, len(stages))
            stages.append([])
            candidates.append(index)
        stages[index].append(statement)
        last.record(statement, index)
    return tuple(Stage(f"{prefix}{i + 1}", tuple(group)) for i, group in enumerate(stages))


class _LastUse:
    """Per buffer, the last stage index of: accumulating writers, other writers, and readers other than
    an accumulation reading its own target (that read is in the stage its write is recorded at, so the
    accumulating writer's entry orders whatever the read would)."""

    def __init__(self) -> None:
        self.accumulating_writer: dict[str, int] = {}
        self.other_writer: dict[str, int] = {}
        self.other_reader: dict[str, int] = {}

    def after(self, statement: Statement) -> int:
        """The last stage ``statement`` depends on (-1 for none)."""
        reads, writes, accumulates = statement.reads(), statement.writes(), statement.is_accumulation()
        latest = -1
        for buffer in reads | writes:
            if accumulates and buffer in writes:
                # accumulations into one target commute: only other writers and readers order it
                found = (self.other_writer.get(buffer, -1), self.other_reader.get(buffer, -1))
            else:
                found = (self.accumulating_writer.get(buffer, -1), self.other_writer.get(buffer, -1))
                if buffer in writes:
                    found += (self.other_reader.get(buffer, -1),)
            latest = max(latest, *found)
        return latest

    def record(self, statement: Statement, index: int) -> None:
        writes, accumulates = statement.writes(), statement.is_accumulation()
        for buffer in writes:
            table = self.accumulating_writer if accumulates else self.other_writer
            table[buffer] = max(table.get(buffer, -1), index)
        for buffer in statement.reads() - (writes if accumulates else frozenset()):
            self.other_reader[buffer] = max(self.other_reader.get(buffer, -1), index)


def fuse_elementwise(schedule: Schedule) -> Schedule:
    """Merge each run of consecutive element-wise stages into one ordered stage.

    Assumes: a schedule whose element-wise statements act element by element.
    Ensures: the same result with one launch per run, each buffer read and
    written once per run instead of once per stage.
    """
    fused: list[Stage] = []
    for stage in schedule.stages:
        previous = fused[-1] if fused else None
        if (previous is not None and not previous.is_product_stage() and not stage.is_product_stage()
                and crossing_shapes(net_effect(previous.statements + stage.statements), schedule) is None):
            fused[-1] = Stage(
                f"{previous.name}+{stage.name}", previous.statements + stage.statements, previous.span, ordered=True
            )
        else:
            fused.append(stage)
    return replace(schedule, stages=tuple(fused))
