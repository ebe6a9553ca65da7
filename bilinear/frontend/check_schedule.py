"""Schedules resolved against the algorithm they name: buffers, temporaries and properties checked."""

from __future__ import annotations

import difflib

from ..diagnostics import counted
from ..ir import PROPERTIES, Algorithm, Multiply, Schedule, Span, Update, operand_of, parse_block
from ..ir.names import KEYWORDS
from .findings import ONE_INDEX_BLOCK, Findings, check_block, suggest
from .raw import RawSchedule


def build_schedule(raw: RawSchedule, algorithms: dict[str, Algorithm], schedules_for: dict[str, str] | None = None) -> Schedule:
    """Resolve a schedule against the algorithm it names (``schedules_for``: the other schedules'
    algorithms, by name, to tell a schedule named by mistake)."""
    findings = Findings()
    algorithm = algorithms.get(raw.algorithm)
    inner = (schedules_for or {}).get(raw.algorithm)
    if algorithm is None and raw.algorithm == raw.name:  # the suggestion below would repeat what was written
        findings.error(f"schedule {raw.name} is for itself; a schedule is for an algorithm: name the one it orders",
                       raw.span, *(suggest(raw.algorithm, algorithms) or ()))
    elif algorithm is None and inner is not None:
        findings.error(
            f"schedule {raw.name} is for {raw.algorithm}, which is a schedule (for {inner}); a schedule is for an "
            f"algorithm: write `schedule {raw.name} for {inner}`",
            raw.span,
        )
    elif algorithm is None:
        findings.error(
            f"schedule {raw.name} is for {raw.algorithm}, which is not defined",
            raw.span,
            *(suggest(raw.algorithm, algorithms) or ("define it in this file or `use` the file that does",)),
        )
    findings.raise_if_any()
    properties = _check_properties(raw, findings)
    temporaries = _check_temporaries(raw, findings)
    stage_names: dict[str, Span] = {}
    for stage in raw.stages:
        if stage.name in stage_names:  # (each later one is told where the first one is)
            findings.error(f"stage {stage.name} is defined twice", stage.span, f"first defined at {stage_names[stage.name]}")
        else:
            stage_names[stage.name] = stage.span
        if not stage.statements:
            findings.error(f"stage {stage.name} has no statements", stage.span)
        for statement in stage.statements:
            _check_statement(statement, algorithm, temporaries, raw.name, findings)
    _check_inputs_kept(raw, properties, findings)
    if "inplace" in properties and raw.temporaries:
        findings.error(
            f"schedule {raw.name} is declared inplace but declares temporaries ({', '.join(t.name for t in raw.temporaries)})",
            raw.temporaries[0].span,
            "inplace means no workspace: overwrite A and B blocks instead",
        )
    if not raw.stages:
        findings.error(f"schedule {raw.name} has no stages", raw.span)
    findings.raise_if_any()
    used = {name for stage in raw.stages for statement in stage.statements for name in statement.reads() | statement.writes()}
    return Schedule(raw.name, raw.algorithm, frozenset(properties), tuple(t for t in raw.temporaries if t.name in used),
                    raw.stages, raw.span, tuple(t for t in raw.temporaries if t.name not in used))


def _check_properties(raw: RawSchedule, findings: Findings) -> set[str]:
    properties: set[str] = set()
    assumed: set[str] = set()  # a misspelt property's suggestion, for checking the rest
    for name, span in raw.properties:
        if name not in PROPERTIES:
            close = difflib.get_close_matches(name, list(PROPERTIES), n=1, cutoff=0.6)
            findings.error(
                f"unknown schedule property {name!r}",
                span,
                *((f"did you mean {close[0]}? (the rest of {raw.name} is checked as if it said {close[0]})",) if close else ()),
                "known properties: " + ", ".join(f"{k} ({v})" for k, v in PROPERTIES.items()),
            )
            # one error for one typo: `inplac` had added one "not declared inplace" per statement
            assumed.update(close)
        elif name in properties:
            findings.error(f"property {name} is given twice", span)
        properties.add(name)
    if {"accumulate", "overwrite"} <= properties:
        findings.error(f"schedule {raw.name} cannot both accumulate into C and overwrite it", raw.span)
    return (properties | assumed) & PROPERTIES.keys()


def _check_inputs_kept(raw: RawSchedule, properties: set[str], findings: Findings) -> None:
    """Without `inplace`, the first update of an A or B block is the error (one per statement had
    buried anything else the schedule got wrong)."""
    if "inplace" in properties:
        return
    writes = [(statement, name) for stage in raw.stages for statement in stage.statements
              if not isinstance(statement, Multiply) for name in sorted(statement.writes()) if operand_of(name) in ("A", "B")]
    if writes:
        (statement, name), more = writes[0], len({id(statement) for statement, _ in writes}) - 1
        findings.error(
            f"the statement overwrites input block {name}, but schedule {raw.name} is not declared inplace",
            # the whole statement: its target carries no span, and the first A12 in `A12 = A11 + A12`
            # that does is one it reads
            statement.span,
            "add `inplace` (and `restore`, if the inputs must come back) to the schedule's properties",
            *((f"{counted(more, 'more statement')} of {raw.name} overwrite{'' if more > 1 else 's'} A or B "
               "blocks",) if more else ()),
        )


def _check_temporaries(raw: RawSchedule, findings: Findings) -> dict[str, str]:
    temporaries: dict[str, str] = {}
    for temp in raw.temporaries:
        if parse_block(temp.name) or ONE_INDEX_BLOCK.match(temp.name):
            findings.error(f"{temp.name} is a block name; choose another name for the temporary", temp.span)
        elif temp.name in KEYWORDS:  # it was taken, and the first statement to use it did not parse
            findings.error(f"{temp.name} is a keyword of the language; choose another name for the temporary", temp.span)
        elif temp.name in temporaries:
            findings.error(f"temporary {temp.name} is declared twice", temp.span)
        temporaries[temp.name] = temp.like
    return temporaries


def _check_statement(statement, algorithm: Algorithm, temporaries, schedule: str, findings: Findings) -> None:
    owner = f"the algorithm of {schedule}"
    products = {product.name: product for product in algorithm.products}
    sums = {named.name: named for named in algorithm.sums}
    # with the names whose terms cancel (`A11 + T9 - T9`), which the statement's sums dropped as written
    written = {name for form in _forms(statement) for name, _ in form.spans}
    for name in sorted(statement.reads() | statement.writes() | written):
        span = _name_span(statement, name)
        if name in temporaries:
            continue
        if name in products:  # `C11 += M1`: the advice had been to declare a temporary M1
            product = products[name]
            findings.error(
                f"{name} is a product of {algorithm.name}, not a buffer: a schedule reads and writes blocks and temporaries",
                span,
                f"compute it with a product statement of its factors: `({product.left}) * ({product.right}) -> ...`",
            )
        elif name in sums:  # declared as a temporary it would be read before written: say what it is
            findings.error(f"{name} is a named sum of {algorithm.name}, not a buffer: a schedule reads and writes "
                           "blocks and temporaries", span, f"write the blocks it sums instead: {sums[name].form}")
        elif not check_block(name, algorithm.shape, span, findings, owner):
            declare = (f"{name} is a keyword of the language: a temporary needs another name" if name in KEYWORDS
                       else f"declare it: temp {name}: {_like(statement, name)}")
            findings.error(f"{name} is neither a block nor a declared temporary", span,
                           *(suggest(name, temporaries) or (declare,)))
    if isinstance(statement, Update) and statement.form.as_dict() == {statement.target: 1}:
        # `A22 += A22 - A22`: stored as `A22 := A22`, it had counted as a write of A22
        findings.error(f"the statement changes nothing: it sets {statement.target} to its own value", statement.span)
    for name in statement.writes():
        if isinstance(statement, Multiply) and operand_of(name) in ("A", "B"):  # at the target: a factor may read it too
            span = statement.targets.span_of(name) or statement.span
            findings.error(f"a product cannot be written into {name}: targets are C blocks or temporaries", span)


def _like(statement, name: str) -> str:
    """The operand a temporary ``name`` would be shaped like in ``statement``: C where it holds a
    product, else the side of the factor or of the blocks beside it (A where that says nothing)."""
    if isinstance(statement, Multiply):
        left = name in statement.left.names() or statement.left.span_of(name) is not None  # (cancelled: spans only)
        return "C" if name in statement.writes() else "A" if left else "B"
    sides = {operand_of(other) for other in statement.reads() | statement.writes()} - {None}
    return sides.pop() if len(sides) == 1 else "A"


def _forms(statement) -> list:
    return [statement.form] if hasattr(statement, "form") else [statement.left, statement.right, statement.targets]


def _name_span(statement, name: str) -> Span | None:
    for form in _forms(statement):
        span = form.span_of(name)
        if span:
            return span
    return statement.span
