"""Every single-coefficient mutation of an algorithm or a schedule, at the IR level.

A mutation changes one written coefficient: a name absent from a form gets
coefficient ±1, a present coefficient c becomes c+1, c-1, -c or 0.  Mutants are
judged the way a user's file is: the frontend's static checks first (a mutant
they refuse is reported as a :class:`BilinearError`), then exact verification.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial

from bilinear.diagnostics import BilinearError, Diagnostic
from bilinear.frontend.check import build_algorithm, build_schedule
from bilinear.frontend.raw import RawAlgorithm, RawSchedule
from bilinear.ir import Algorithm, Form, Schedule, Update, format_coefficient
from bilinear.verify.algorithm import verify_algorithm
from bilinear.verify import verify_schedule


def changes(current: Fraction) -> tuple[Fraction, ...]:
    """The values one coefficient is changed to: 0 -> ±1; c -> c+1, c-1, -c, 0."""
    if current == 0:
        return (Fraction(1), Fraction(-1))
    return tuple(sorted({current + 1, current - 1, -current, Fraction(0)} - {current}))


@dataclass(frozen=True)
class Mutation:
    """One changed coefficient.

    ``site`` is worded as the verifier words a single-coefficient fix
    ("the coefficient of A11 in the left factor of M1"), so a test can look
    for the change that undoes the mutation among its suggestions.
    ``mutant`` is ``None`` when the IR itself refuses the change (a product
    with a zero factor, a product statement without a target); the frontend
    turns that refusal into a located error (see test_diagnostics.py).
    """

    site: str
    name: str
    before: Fraction
    after: Fraction
    mutant: Algorithm | Schedule | None
    refusal: str = ""

    def __str__(self) -> str:
        return f"{self.site}: {format_coefficient(self.before)} -> {format_coefficient(self.after)}"

    @property
    def undo(self) -> str:
        """The verifier's wording of the fix that reverts this mutation."""
        return f"{self.site} from {format_coefficient(self.after)} to {format_coefficient(self.before)}"


def _form_changes(form: Form, names) -> Iterator[tuple[str, Fraction, Fraction, Form]]:
    for name in names:
        before = form.coefficient(name)
        for after in changes(before):
            yield name, before, after, form.with_coefficient(name, after)


def _build(site, name, before, after, make, *args) -> Mutation:
    """The mutation ``make(*args)``, or its refusal by the IR."""
    try:
        return Mutation(site, name, before, after, make(*args))
    except ValueError as refusal:
        return Mutation(site, name, before, after, None, str(refusal))


def _swap(items: tuple, index: int, item) -> tuple:
    return items[:index] + (item,) + items[index + 1:]


# --- algorithms ---------------------------------------------------------------------


def algorithm_names(algorithm: Algorithm) -> tuple[str, ...]:
    """Every name a form of the algorithm could mention: all blocks, sums and products."""
    shape = algorithm.shape
    blocks = (*shape.blocks("A"), *shape.blocks("B"), *shape.blocks("C"))
    return (*blocks, *(s.name for s in algorithm.sums), *(p.name for p in algorithm.products))


def _with_sum(algorithm: Algorithm, index: int, form: Form) -> Algorithm:
    return replace(algorithm, sums=_swap(algorithm.sums, index, replace(algorithm.sums[index], form=form)))


def _with_factor(algorithm: Algorithm, index: int, side: str, form: Form) -> Algorithm:
    product = replace(algorithm.products[index], **{side: form})
    return replace(algorithm, products=_swap(algorithm.products, index, product))


def _with_output(algorithm: Algorithm, index: int, form: Form) -> Algorithm:
    return replace(algorithm, outputs=_swap(algorithm.outputs, index, replace(algorithm.outputs[index], form=form)))


def algorithm_mutations(algorithm: Algorithm) -> list[Mutation]:
    """Every single-coefficient mutation of every named sum, product factor and output."""
    names = algorithm_names(algorithm)
    found: list[Mutation] = []
    for index, entry in enumerate(algorithm.sums):
        for name, before, after, form in _form_changes(entry.form, names):
            site = f"the coefficient of {name} in {entry.name}"
            found.append(_build(site, name, before, after, _with_sum, algorithm, index, form))
    for index, product in enumerate(algorithm.products):
        for side in ("left", "right"):
            for name, before, after, form in _form_changes(getattr(product, side), names):
                site = f"the coefficient of {name} in the {side} factor of {product.name}"
                found.append(_build(site, name, before, after, _with_factor, algorithm, index, side, form))
    for index, output in enumerate(algorithm.outputs):
        for name, before, after, form in _form_changes(output.form, names):
            site = f"the coefficient of {name} in {output.block}"
            found.append(_build(site, name, before, after, _with_output, algorithm, index, form))
    return found


def judge_algorithm(algorithm: Algorithm) -> tuple[str | None, tuple[Diagnostic, ...]]:
    """How the algorithm is rejected ('static' or 'verify', ``None`` when accepted) and the diagnostics."""
    raw = RawAlgorithm(
        algorithm.name, algorithm.shape, algorithm.declared_rank, algorithm.sums, algorithm.products,
        algorithm.outputs, algorithm.span,
    )
    try:
        checked = build_algorithm(raw)
    except BilinearError as error:
        return "static", error.diagnostics
    errors = verify_algorithm(checked)
    return ("verify" if errors else None), errors


# --- schedules ---------------------------------------------------------------------------


def schedule_buffers(schedule: Schedule, algorithm: Algorithm) -> tuple[str, ...]:
    shape = algorithm.shape
    blocks = (*shape.blocks("A"), *shape.blocks("B"), *shape.blocks("C"))
    return (*blocks, *(t.name for t in schedule.temporaries))


def _with_statement(schedule: Schedule, stage_index: int, statement_index: int, **fields) -> Schedule:
    stage = schedule.stages[stage_index]
    statement = replace(stage.statements[statement_index], **fields)
    stage = replace(stage, statements=_swap(stage.statements, statement_index, statement))
    return replace(schedule, stages=_swap(schedule.stages, stage_index, stage))


def schedule_mutations(schedule: Schedule, algorithm: Algorithm) -> list[Mutation]:
    """Every single-coefficient mutation of every statement of a schedule.

    Element-wise statements: the coefficient of every buffer (the target's
    own included).  Product statements: the coefficient of every block of
    the factor's operand and every temporary in either factor, every target
    coefficient, a new C target, and each target moved to another C block.
    """
    buffers = schedule_buffers(schedule, algorithm)
    temporaries = tuple(t.name for t in schedule.temporaries)
    c_blocks = algorithm.shape.blocks("C")
    found: list[Mutation] = []

    def add(site, name, before, after, s, t, **fields):
        found.append(_build(site, name, before, after, partial(_with_statement, schedule, s, t, **fields)))

    for s, stage in enumerate(schedule.stages):
        for t, statement in enumerate(stage.statements):
            where = f"`{statement}` (stage {stage.name}, statement {t + 1})"
            if isinstance(statement, Update):
                for name, before, after, form in _form_changes(statement.form, buffers):
                    add(f"the coefficient of {name} in {where}", name, before, after, s, t, form=form)
                continue
            for side, operand in (("left", "A"), ("right", "B")):
                # A C block or a block of the other operand in a factor is a kind error, checked elsewhere.
                for name, before, after, form in _form_changes(
                    getattr(statement, side), (*algorithm.shape.blocks(operand), *temporaries)
                ):
                    add(f"the coefficient of {name} in the {side} factor of {where}", name, before, after, s, t, **{side: form})
            for name, before, after, form in _form_changes(statement.targets, c_blocks):
                add(f"the target coefficient of {name} in {where}", name, before, after, s, t, targets=form)
            for name, coef in statement.targets.terms:
                for other in c_blocks:
                    if statement.targets.coefficient(other) == 0:
                        moved = statement.targets.with_coefficient(name, 0).with_coefficient(other, coef)
                        add(f"the target {name} moved to {other} in {where}", other, Fraction(0), coef, s, t, targets=moved)
    return found


def judge_schedule(schedule: Schedule, algorithm: Algorithm) -> tuple[str | None, tuple[Diagnostic, ...]]:
    """How the schedule is rejected ('static' or 'verify', ``None`` when accepted) and the diagnostics."""
    raw = RawSchedule(
        schedule.name, schedule.algorithm, tuple((p, schedule.span) for p in sorted(schedule.properties)),
        schedule.temporaries, schedule.stages, schedule.span,
    )
    try:
        checked = build_schedule(raw, {algorithm.name: algorithm})
    except BilinearError as error:
        return "static", error.diagnostics
    errors = verify_schedule(checked, algorithm).errors
    return ("verify" if errors else None), errors


# --- applying the verifier's suggestions ----------------------------------------------

_FIX = re.compile(
    r"^changing the coefficient of (?P<name>\S+) in (?:the (?P<side>left|right) factor of (?P<product>\S+)|(?P<owner>\S+))"
    r" from (?P<before>\S+) to (?P<after>\S+)(?: \(line \d+\))? would make every equation hold$"
)


def apply_fix(algorithm: Algorithm, note: str) -> Algorithm:
    """The algorithm with the verifier's single-coefficient suggestion ``note`` applied."""
    match = _FIX.match(note)
    assert match, f"not a single-coefficient suggestion: {note!r}"
    name, after = match["name"], Fraction(match["after"])
    if match["product"]:
        index = next(i for i, p in enumerate(algorithm.products) if p.name == match["product"])
        product = algorithm.products[index]
        assert getattr(product, match["side"]).coefficient(name) == Fraction(match["before"])
        changed = replace(product, **{match["side"]: getattr(product, match["side"]).with_coefficient(name, after)})
        return replace(algorithm, products=_swap(algorithm.products, index, changed))
    for field_name in ("sums", "outputs"):
        items = getattr(algorithm, field_name)
        for index, item in enumerate(items):
            if getattr(item, "name", getattr(item, "block", None)) == match["owner"]:
                assert item.form.coefficient(name) == Fraction(match["before"])
                changed = replace(item, form=item.form.with_coefficient(name, after))
                return replace(algorithm, **{field_name: _swap(items, index, changed)})
    raise AssertionError(f"{match['owner']} is neither a sum nor an output of {algorithm.name}")
