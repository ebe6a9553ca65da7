"""Two levels of a schedule as one schedule over the product shape's blocks.

Run recursively, each level launches its own element-wise stages: the outer level's pass before
a product and the inner level's first pass over that product's operands read and write the same
memory one after the other, and so do the inner level's restoring pass and the outer level's next
one.  Written as one schedule of ⟨m₁m₂,k₁k₂,n₁n₂⟩ (the Kronecker product of the two algorithms,
:func:`bilinear.compose.kronecker`), those passes are adjacent stages, which
:func:`bilinear.schedule.stages.fuse_elementwise` merges into one kernel each: MSMES² moves 272
quarter blocks of A and B where MSMES at two levels moves 440.

The outer schedule's statements act on its blocks; each becomes the same statement on every
sub-block (``A21 += A22`` on ⟨2,2,2⟩ blocks is ``A31 += A33``, ``A32 += A34``, ... on ⟨4,4,4⟩ ones).
Each outer product runs the inner schedule on the sub-blocks of its operands, its products adding
into the sub-blocks of the outer product's targets.  The outer products of one stage run their
inner schedules in lock-step (inner stage s of all of them is one stage) where no two of them
share an operand block the inner schedule writes, else one after another.
"""

from __future__ import annotations

from fractions import Fraction

from ..compose import nested
from ..ir import Form, Multiply, Schedule, Shape, Stage, Update
from ..ir.names import LONGEST_NAME, block_name, parse_block


class ScheduleProductError(ValueError):
    """Why two schedules cannot be written as one."""


C_REFUSAL = ("the inner schedule's element-wise statements touch C, which an outer product's targets spread over "
             "several blocks")


def _gives_inputs_back(schedule: Schedule) -> bool:
    """It declares `restore`, or writes neither A nor B (an in-place schedule may only add into C: verify
    says it gives them back, and a schedule product took it for one that changes them)."""
    return schedule.restores or not schedule.writes_inputs


def schedule_product(outer: Schedule, outer_shape: Shape, inner: Schedule, inner_shape: Shape,
                     algorithm: str, name: str) -> Schedule:
    """``outer`` on the blocks of ``outer_shape`` with ``inner`` inside each product, as one schedule
    for ``algorithm`` (the Kronecker product of the two algorithms)."""
    for schedule in (outer, inner):
        _check_supported(schedule)
    if inner.inplace and not _gives_inputs_back(inner):
        raise ScheduleProductError(f"schedule {inner.name} overwrites A or B without restoring them: inside each outer "
                                   "product it would leave the outer schedule's blocks changed; give an inner schedule "
                                   "that restores (restore)")
    grids = {"A": (inner_shape.m, inner_shape.k), "B": (inner_shape.k, inner_shape.n), "C": (inner_shape.m, inner_shape.n)}
    stages: list[Stage] = []
    for stage in outer.stages:
        if stage.is_product_stage():
            stages += _expanded_products(stage, inner, grids)
        else:
            statements = tuple(s for update in stage.statements for s in _sub_updates(update, grids))
            stages.append(Stage(stage.name, statements, ordered=stage.ordered))
    writing = [schedule for schedule in (outer, inner) if schedule.inplace]  # no temporaries: inplace is writing A or B
    properties = {"inplace"} if writing else set()
    if writing and all(_gives_inputs_back(schedule) for schedule in writing):
        properties.add("restore")
    properties |= (outer.properties | inner.properties) & {"accumulate"}
    return Schedule(name, algorithm, frozenset(properties), (), _uniquely_named(stages))


def _fitting(name: str, number: int) -> str:
    """``name``, numbered from 2 on, cut to the longest a .bl name may have (two stage names of 200
    characters join into one of 413, and no option renames stages)."""
    suffix = "" if number == 1 else f"_{number}"
    return name[: LONGEST_NAME - len(suffix)] + suffix


def _uniquely_named(stages: list[Stage]) -> tuple[Stage, ...]:
    """The stages, a name that repeats an earlier one numbered (an outer stage named ``products1_pre``
    beside the expansion of ``products1`` and the inner ``pre``), each within a name's length."""
    taken: set[str] = set()
    named = []
    for stage in stages:
        name, number = _fitting(stage.name, 1), 1
        while name in taken:
            number += 1
            name = _fitting(stage.name, number)
        taken.add(name)
        named.append(stage if name == stage.name else Stage(name, stage.statements, ordered=stage.ordered))
    return tuple(named)


def product_refusal(schedule: Schedule) -> str | None:
    """Why ``schedule`` cannot be one level of a product of schedules, or None."""
    if schedule.temporaries:
        return (f"schedule {schedule.name} has temporaries; a product of schedules is written for schedules over the "
                "operands' blocks alone (in-place ones such as msmes)")
    if schedule.overwrites_c or any(isinstance(s, Multiply) and s.overwrite for _, s in schedule.statements()):
        return (f"schedule {schedule.name} overwrites C; a product of schedules is written for schedules whose "
                "products add into C")
    return None


def _check_supported(schedule: Schedule) -> None:
    if why := product_refusal(schedule):
        raise ScheduleProductError(why)


def _sub(name: str, row: int, col: int, grids: dict) -> str:
    """Sub-block (row, col) of an outer block, as a block of the product shape."""
    operand, i, j = parse_block(name)
    return block_name(operand, *nested((i, j), (row, col), grids[operand]))


def _sub_updates(update: Update, grids: dict) -> list[Update]:
    """An outer element-wise statement, on every sub-block of its target."""
    operand = parse_block(update.target)[0]
    if any(grids[parse_block(n)[0]] != grids[operand] for n in update.form.names()):
        raise ScheduleProductError(f"`{update}` combines blocks that the inner scheme splits differently")
    rows, cols = grids[operand]
    return [Update(_sub(update.target, r, c, grids), Form.of({_sub(n, r, c, grids): k for n, k in update.form.terms}))
            for r in range(1, rows + 1) for c in range(1, cols + 1)]


def _expanded_products(stage: Stage, inner: Schedule, grids: dict) -> list[Stage]:
    """An outer product stage as the inner schedule's stages, run in lock-step by each group of its products."""
    stages = []
    groups = _lock_step_groups(stage.statements, inner)
    for number, group in enumerate(groups, 1):
        suffix = f"_{number}" if len(groups) > 1 else ""
        for inner_stage in inner.stages:
            statements = tuple(s for product in group for s in _inner_statements(product, inner_stage, grids))
            stages.append(Stage(f"{stage.name}{suffix}_{inner_stage.name}", statements, ordered=inner_stage.ordered))
    return stages


def _lock_step_groups(products: tuple[Multiply, ...], inner: Schedule) -> list[list[Multiply]]:
    """Products whose inner schedules may run side by side: none writes an operand block another reads."""
    writes = {parse_block(s.target)[0] for _, s in inner.statements() if isinstance(s, Update)}
    groups: list[list[Multiply]] = []
    for product in products:
        mine = set(product.left.names()) | set(product.right.names())
        group = next((g for g in groups if not any(_shares_written(mine, other, writes) for other in g)), None)
        if group is None:
            groups.append([product])
        else:
            group.append(product)
    return groups


def _shares_written(mine: set[str], other: Multiply, writes: set[str]) -> bool:
    theirs = set(other.left.names()) | set(other.right.names())
    return any(parse_block(name)[0] in writes for name in mine & theirs)


def _inner_statements(product: Multiply, inner_stage: Stage, grids: dict) -> list:
    """The inner stage's statements on the sub-blocks of ``product``'s operands and targets."""
    factors = {"A": product.left, "B": product.right}
    if any(len(f.terms) != 1 for f in factors.values()) and any(isinstance(s, Update) for s in inner_stage.statements):
        raise ScheduleProductError(f"`{product}` multiplies a sum, which the inner schedule's statements would overwrite")
    result = []
    for statement in inner_stage.statements:
        if isinstance(statement, Update):
            result.append(_operand_update(statement, factors, grids))
        else:
            result.append(_sub_product(statement, product, factors, grids))
    return result


def _operand_form(form: Form, factors: dict, grids: dict) -> Form:
    """An inner form over A and B blocks, as a form over the sub-blocks of the outer factors."""
    terms: dict[str, Fraction] = {}
    for name, coefficient in form.terms:
        operand, row, col = parse_block(name)
        if operand == "C":
            raise ScheduleProductError(C_REFUSAL)
        for outer_name, scale in factors[operand].terms:
            sub = _sub(outer_name, row, col, grids)
            terms[sub] = terms.get(sub, 0) + coefficient * scale
    return Form.of(terms)


def _operand_update(update: Update, factors: dict, grids: dict) -> Update:
    form = _operand_form(update.form, factors, grids)  # refuses C, which the target may be too
    if parse_block(update.target)[0] == "C":
        raise ScheduleProductError(C_REFUSAL)
    (target, scale), = factors[parse_block(update.target)[0]].terms
    sub_target = _sub(target, *parse_block(update.target)[1:], grids)
    # the sub-blocks hold scale·(the inner schedule's blocks): a linear update reads the same way
    return Update(sub_target, form.scale(Fraction(1) / scale) if scale != 1 else form)


def _sub_product(statement: Multiply, product: Multiply, factors: dict, grids: dict) -> Multiply:
    targets: dict[str, Fraction] = {}
    for inner_target, weight in statement.targets.terms:
        _, row, col = parse_block(inner_target)
        for outer_target, outer_weight in product.targets.terms:
            sub = _sub(outer_target, row, col, grids)
            targets[sub] = targets.get(sub, 0) + weight * outer_weight
    return Multiply(_operand_form(statement.left, factors, grids), _operand_form(statement.right, factors, grids),
                    Form.of(targets))
