"""C = A·B with an accumulating schedule, without zeroing C first (DESIGN.md, "Scheduling").

A schedule that computes C += A·B computes C = A·B when C starts at zero, so a
call with beta = 0 used to zero C and then run it.  The passes before this one
change the basis of C ahead of the products (``single_target``): on a zero C
that whole change is zeros, read and written for nothing.  Knowing which C
blocks still hold zero, this pass drops their reads from element-wise
statements, drops statements that would write zero over zero, and turns the
first product into a zero block into one that sets it (a GEMM with beta = 0,
which reads no C either).  The result never reads C's original content, so it
is an ``overwrite`` schedule, and it is verified as one (C may then hold NaN:
nothing reads it).
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import Form, Multiply, Schedule, Stage, Update


def from_zero(schedule: Schedule, c_blocks: tuple[str, ...]) -> Schedule | None:
    """``schedule`` (accumulating, each product into one or several C blocks) as an overwrite
    schedule that never reads C's original content, or None where that needs more than
    dropping reads: a product into zero and non-zero blocks at once, a statement that
    would make a written block zero again, a C block no statement writes."""
    if schedule.overwrites_c:
        return None
    zero = set(c_blocks)
    stages: list[Stage] = []
    for stage in schedule.stages:
        if stage.is_product_stage():
            split = _products(stage, zero)
            if split is None:
                return None
            stages.extend(split)
            continue
        statements = _updates(stage, zero)
        if statements is None:
            return None
        if statements:
            # two additions into one block in a concurrent stage (C11 += T; C11 += U) where the first
            # now sets it: in order, as one thread does both (nothing else reads what they write)
            repeated = len({s.target for s in statements}) < len(statements)
            stages.append(replace(stage, statements=statements, ordered=stage.ordered or repeated))
    if zero:
        return None  # a block no statement writes would keep C's original content
    properties = (schedule.properties - {"accumulate"}) | {"overwrite"}
    return replace(schedule, properties=frozenset(properties), stages=tuple(stages))


def _updates(stage: Stage, zero: set[str]) -> tuple[Update, ...] | None:
    """An element-wise stage with the zero blocks' reads dropped (statements of a concurrent
    stage read nothing another writes, but may add into one target: taken in order, the first
    sets it and the others add to it)."""
    kept = []
    for statement in stage.statements:
        form = statement.form.substitute({name: Form() for name in statement.form.names() if name in zero})
        if form.is_zero():
            if statement.target not in zero:
                return None  # writing zero needs a statement the language has no form for
            continue  # zero over zero: nothing to do
        if form.names() == (statement.target,) and form.coefficient(statement.target) == 1:
            continue  # `C22 += C12` with C12 zero: C22 = C22 (unfused, such stages became empty kernels)
        zero.discard(statement.target)
        kept.append(replace(statement, form=form))
    return tuple(kept)


def _products(stage: Stage, zero: set[str]) -> list[Stage] | None:
    """A product stage whose products into zero blocks set them.  A product of the same stage
    that adds into a block another one sets must run after it: those go into a second stage
    (the products of one stage may run in any order)."""
    setting: list[Multiply] = []
    after: list[Multiply] = []
    set_here: set[str] = set()
    for statement in stage.statements:
        targets = set(statement.targets.names())
        if zero & {*statement.left.names(), *statement.right.names()}:
            return None  # a factor that reads a C block still holding zero
        if statement.overwrite or targets <= zero:
            if targets & set_here:
                return None  # two products setting one block: nothing this pass made
            zero -= targets
            set_here |= targets
            setting.append(replace(statement, overwrite=True))
        elif targets & zero:
            return None  # a sum into blocks some of which hold zero and some not
        else:
            (after if targets & set_here else setting).append(statement)
    stages = [replace(stage, statements=tuple(setting))] if setting else []
    return stages + ([replace(stage, name=f"{stage.name}.2", statements=tuple(after))] if after else [])
