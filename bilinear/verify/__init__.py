"""Exact verification of algorithms and schedules, and what they cost.

:func:`verify_program` checks every definition a file writes (and, through
them, what they use) and returns a :class:`Report`; the CLI renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Union

from ..diagnostics import Diagnostic, limited
from ..ir import Algorithm, Form, Program, Schedule
from .algorithm import verify_algorithm
from .counts import AlgorithmCounts, CompiledCounts, ScheduleCounts, count_algorithm, count_schedule, used_names
from .expand import Expansion
from .lazy import verify_schedule
from .schedule import ProductUse, ScheduleCheck, ShapeCondition, workspace_blocks
from .stability import Stability, stability


@dataclass(frozen=True)
class AlgorithmReport:
    algorithm: Algorithm
    errors: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...]
    counts: AlgorithmCounts
    stability: Stability

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class ScheduleReport:
    schedule: Schedule
    algorithm: Algorithm
    errors: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...]
    counts: ScheduleCounts
    workspace: dict[str, int]  # temporaries per level, by the operand they are shaped like
    product_uses: tuple[ProductUse, ...]
    shape_conditions: tuple[ShapeCondition, ...]  # the block shapes it needs (the report's "requires")
    algorithm_ok: bool = True
    compiled: CompiledCounts | None = None  # its counts as compiled, where a caller above this layer asked

    @property
    def ok(self) -> bool:
        return not self.errors and self.algorithm_ok


Entry = Union[AlgorithmReport, ScheduleReport]


@dataclass(frozen=True)
class Report:
    path: str
    entries: tuple[Entry, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return all(entry.ok for entry in self.entries)

    def __bool__(self) -> bool:
        """``if bilinear.verify(path):`` means "if it verified" (a dataclass is otherwise always true)."""
        return self.ok


def unused_warnings(algorithm: Algorithm) -> tuple[Diagnostic, ...]:
    """Products and sums that no output depends on."""
    used = used_names(algorithm)
    return tuple(
        Diagnostic(f"{item.name} is never used in an output", item.span, severity="warning")
        for item in (*algorithm.sums, *algorithm.products)
        if item.name not in used
    )


def report_algorithm(algorithm: Algorithm) -> AlgorithmReport:
    return AlgorithmReport(
        algorithm=algorithm,
        errors=limited(verify_algorithm(algorithm)),
        warnings=unused_warnings(algorithm),
        counts=count_algorithm(algorithm),
        stability=stability(algorithm),
    )


def _unrestored(schedule: Schedule, algorithm: Algorithm, check: ScheduleCheck) -> str:
    """What an in-place schedule without `restore` does to A and B, as the simulation ended them."""
    blocks = (*algorithm.shape.blocks("A"), *algorithm.shape.blocks("B"))
    if not check.errors and all(check.final.get(block) == Form.symbol(block) for block in blocks):
        return (f"schedule {schedule.name} gives A and B back as they were but does not declare `restore`; "
                "declare it, so callers may rely on it")
    return f"schedule {schedule.name} leaves A and B modified (no `restore`)"


def report_schedule(schedule: Schedule, algorithm: Algorithm) -> ScheduleReport:
    check: ScheduleCheck = verify_schedule(schedule, algorithm)
    warnings = tuple(Diagnostic(f"temporary {temp.name} is never used; nothing allocates it", temp.span, "warning")
                     for temp in schedule.unused)
    if schedule.inplace and not schedule.restores:
        warnings += (Diagnostic(_unrestored(schedule, algorithm, check), schedule.span, "warning"),)
    algorithm_ok = not verify_algorithm(algorithm)
    # said, not only counted: the entry had read FAILED with no error ("errors": [] in the JSON)
    failed = () if algorithm_ok else (Diagnostic(
        f"schedule {schedule.name} is for {algorithm.name}, which does not verify (its entry above says why); a "
        "schedule of it computes what it does", schedule.span),)
    return ScheduleReport(
        schedule=schedule,
        algorithm=algorithm,
        errors=limited(failed + check.errors),
        warnings=warnings,
        counts=count_schedule(schedule),
        workspace=workspace_blocks(schedule),
        product_uses=check.product_uses,
        shape_conditions=check.shape_conditions,
        algorithm_ok=algorithm_ok,
    )


def verify_program(program: Program) -> Report:
    """Verify every definition the program's own file writes.

    A schedule is reported together with a check of the algorithm it names,
    so ``verify msmes.bl`` also proves Strassen.
    """
    entries: list[Entry] = []
    reported: set[str] = set()
    for definition in program.own_definitions():
        if isinstance(definition, Schedule):
            algorithm = program.algorithm(definition.algorithm)
            if algorithm.name not in reported:
                entries.append(report_algorithm(algorithm))
                reported.add(algorithm.name)
            entries.append(report_schedule(definition, algorithm))
        elif definition.name not in reported:
            entries.append(report_algorithm(definition))
            reported.add(definition.name)
    return Report(program.path, tuple(entries))


def verify_used(program: Program, names: tuple[str, ...] | None, report: Report) -> Report:
    """``report`` (:func:`verify_program`'s) with those of the definitions ``names`` that a used file holds
    verified too: a hybrid names them per level, and a used file's own report is not at hand (one that did
    not verify had run, computing something else)."""
    known = {entry.schedule.name if isinstance(entry, ScheduleReport) else entry.algorithm.name for entry in report.entries}
    extra = []
    for name in dict.fromkeys(names or ()):
        definition = program.definition(name)
        if definition is None or name in known:  # (one not defined is refused where it is resolved)
            continue
        algorithm = program.algorithm(definition.algorithm) if isinstance(definition, Schedule) else definition
        extra.append(report_schedule(definition, algorithm) if isinstance(definition, Schedule) else report_algorithm(algorithm))
    return replace(report, entries=report.entries + tuple(extra)) if extra else report


__all__ = [
    "AlgorithmReport",
    "Expansion",
    "Report",
    "ScheduleReport",
    "ShapeCondition",
    "report_algorithm",
    "report_schedule",
    "verify_program",
    "verify_used",
]
