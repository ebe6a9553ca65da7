"""One level of recursion: the options lowering takes, and the plan a level runs.

Each level gets the schedule it runs (a shipped one, or the default schedule for an algorithm that
has none), transformed for its leaf kind (single-target products for library GEMMs, fused element-wise
stages) and re-verified; its element-wise stages become kernels, its product stages stay product
statements for the executor to recurse into or hand to the leaf.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from fractions import Fraction
from typing import Callable, Iterable, Union

import numpy as np

from ..diagnostics import BilinearError, Diagnostic
from ..ir import Algorithm, Multiply, Schedule, Stage, Update
from ..ir.names import Span, operand_of
from ..schedule import default_schedule, from_zero, fuse_elementwise, single_target
from ..schedule.default import is_default_name
from ..verify import Report, ScheduleReport
from ..verify.counts import CompiledCounts, count_schedule
from ..verify.lazy import verify_schedule
from ..verify.schedule import ShapeCondition
from .elementwise import ElementwiseKernel, lower_elementwise
from .options import DTYPES, LAUNCH_PRODUCTS, LAUNCH_SUM_SHAPES, LEAF_KINDS, LEAVES, MAX_LEVELS, Options

__all__ = ["DTYPES", "LAUNCH_PRODUCTS", "LAUNCH_SUM_SHAPES", "LEAVES", "MAX_LEVELS", "KernelNames", "LevelPlan",
           "Options", "Step", "level_plan", "PASSES", "Pass", "prepare_schedule", "recurses",
           "with_compiled_counts"]

Step = Union[ElementwiseKernel, Stage]


@dataclass(frozen=True)
class LevelPlan:
    """What one level of recursion runs."""

    algorithm: Algorithm
    schedule: Schedule
    steps: tuple[Step, ...]
    accumulate_fallback: "LevelPlan | None" = field(default=None)
    # An accumulating schedule as it runs where its C starts at zero (beta = 0, or a product the
    # level above sets): it never reads C and sets where it would add (schedule.from_zero)
    from_zero: "LevelPlan | None" = field(default=None)
    # Block dimensions the schedule needs equal (a temporary holds another operand's blocks):
    # checked before a call runs (bilinear.lower.plan.broken_condition)
    shape_conditions: tuple[ShapeCondition, ...] = ()

    def kernels(self) -> tuple[ElementwiseKernel, ...]:
        own = tuple(s for s in self.steps if isinstance(s, ElementwiseKernel))
        others = (plan.kernels() for plan in (self.from_zero, self.accumulate_fallback) if plan is not None)
        return own + tuple(kernel for kernels in others for kernel in kernels)

    def running(self, overwrite: bool) -> LevelPlan:
        """The plan a problem at this level runs: products that accumulate cannot run an overwriting
        schedule (its accumulating fallback runs), and where C starts at zero the from-zero plan
        runs, which never reads it and zeroes nothing."""
        if self.schedule.overwrites_c and not overwrite:
            return self.accumulate_fallback
        return self.from_zero if overwrite and self.from_zero is not None else self

    @cached_property
    def slots(self) -> dict[str, str]:
        """Each temporary's workspace slot at its level: its shape (``like``) and its ordinal among
        the schedule's temporaries of that shape ("A0", "C1").  The plans of one level (a schedule,
        its accumulating fallback, its from-zero plan) run in turn, never at once, as its sibling
        products do: they share the slots.  (Before, each held its own: rsmm at two levels held
        Winograd's X and Y beside its own at the second, 384 MiB at 8192 where 320 serve.)"""
        seen: Counter[str] = Counter()
        slots = {}
        for temp in self.schedule.temporaries:
            slots[temp.name] = f"{temp.like}{seen[temp.like]}"
            seen[temp.like] += 1
        return slots


def _identifier(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


@dataclass(frozen=True)
class Pass:
    """A scheduling pass: ``run`` is a pure ``Schedule -> Schedule`` function, applied when
    ``enabled(options)``."""

    name: str
    enabled: Callable[[Options], bool]
    run: Callable[[Schedule], Schedule]


#: The passes a level's schedule goes through, in order.
PASSES = (
    # a library GEMM adds into one buffer: change the basis of C so every product has one target
    Pass("single target", lambda options: not LEAF_KINDS[options.leaf].sums, single_target),
    # consecutive element-wise stages become one kernel that reads and writes each block once
    Pass("fuse element-wise stages", lambda options: options.fuse, fuse_elementwise),
)


class _IdentityCache:
    """A few results keyed by the *identity* of the objects they were computed from (hashing a
    schedule of thousands of statements costs more than the lookup saves).  Each entry holds
    its key objects, so their ids stay theirs while the entry lives.  ``bilinear compile``
    lowers a program once per element type; the passes and their verification, which do not
    depend on it, then run once."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self.entries: dict[tuple, tuple[tuple, object]] = {}

    def get(self, objects: tuple, extra: tuple = ()):
        hit = self.entries.get((*map(id, objects), *extra))
        return hit[1] if hit is not None and all(a is b for a, b in zip(hit[0], objects)) else None

    def put(self, objects: tuple, extra: tuple, value) -> None:
        if len(self.entries) >= self.size:
            self.entries.pop(next(iter(self.entries)))
        self.entries[(*map(id, objects), *extra)] = (objects, value)


_DEFAULTS = _IdentityCache()
_PREPARED = _IdentityCache()


def default_for(algorithm: Algorithm, leaf: str) -> Schedule:
    """:func:`default_schedule`, the same object for the same algorithm object (so the
    passes below run once for both element types)."""
    found = _DEFAULTS.get((algorithm,), (leaf,))
    if found is None:
        found = default_schedule(algorithm, leaf)
        _DEFAULTS.put((algorithm,), (leaf,), found)
    return found


def prepare_schedule(schedule: Schedule, algorithm: Algorithm, options: Options) -> Schedule:
    """The schedule as it runs: every enabled pass of :data:`PASSES`, the last result verified again
    (a failure is a bug in a pass; only then are the others verified, to name it: a proof after each
    pass had been most of a large scheme's compile)."""
    steps = tuple(step for step in PASSES if step.enabled(options))
    key = (schedule, algorithm, *(step.run for step in steps))
    found = _PREPARED.get(key)
    if found is not None:
        return found
    results = [schedule]
    for step in steps:
        results.append(step.run(results[-1]))
    if steps and not verify_schedule(results[-1], algorithm).ok:
        for step, result in zip(steps, results[1:]):
            if not (check := verify_schedule(result, algorithm)).ok:
                raise AssertionError(f"internal error: the pass {step.name!r} broke {schedule.name}: "
                                     f"{check.errors[0].message}")
    _PREPARED.put(key, (), results[-1])
    return results[-1]


def compiled_counts(schedule: Schedule, algorithm: Algorithm, options: Options) -> CompiledCounts:
    """What ``schedule``'s element-wise passes move as compiled with ``options``: the passes of
    :data:`PASSES`, and :func:`from_zero` where compile builds that plan too.  Counted, not verified
    again (compile verifies what it runs; re-verifying a 2401-product schedule took a minute).
    None of them where the leaves cannot run its products (a sum of blocks under library leaves)."""
    if refused := leaf_refusal(schedule, options.leaf):
        return CompiledCounts(options.leaf, options.fuse, None, None, refused)
    prepared = schedule
    for step in PASSES:
        if step.enabled(options):
            prepared = step.run(prepared)
    zero = None
    if not schedule.overwrites_c and not LEAF_KINDS[options.leaf].sums:  # as level_plan builds it
        zero = from_zero(prepared, algorithm.shape.blocks("C"))
    return CompiledCounts(options.leaf, options.fuse, count_schedule(prepared), zero and count_schedule(zero))


def with_compiled_counts(report: Report, options: Options = Options()) -> Report:
    """``report`` with each verified schedule's :func:`compiled_counts`: written, msmes2 moves what
    msmes at two levels does; its saving is in the passes compile fuses, which the report shows."""
    def compiled(entry):
        if not isinstance(entry, ScheduleReport) or not entry.ok:
            return entry
        return replace(entry, compiled=compiled_counts(entry.schedule, entry.algorithm, options))

    return replace(report, entries=tuple(compiled(entry) for entry in report.entries))


class KernelNames:
    """Hands out kernel names, unique by construction within one lowered program.

    A kernel is named for its schedule and stage; two different kernels that would get one
    name (a schedule named like a generated default one, ``strassen_cublas``, or two names
    that differ only in characters CUDA identifiers cannot hold) get distinct suffixes, so
    the ``.cu`` file never drops a kernel and no launch runs another kernel's body.
    """

    def __init__(self, prefix: str = "", always: bool = False) -> None:
        self.bodies: dict[str, ElementwiseKernel] = {}  # name -> the kernel with its name blanked
        # The library's name begins every kernel's (where the schedule's does not already): rsmm's
        # library and winograd's both exported winograd_cublas_float64_s0, and no program linked both.
        # ``always``: a name given to the library (compile --name) begins them all, even a schedule's
        # that starts with it: --name strassen_cublas had exported strassen's default build's kernels.
        self.prefix = prefix
        self.always = always

    def unique(self, kernel: ElementwiseKernel) -> ElementwiseKernel:
        body = replace(kernel, name="")
        kept = not self.prefix or (kernel.name.startswith(f"{self.prefix}_") and not self.always)
        first = kernel.name if kept else f"{self.prefix}_{kernel.name}"
        name, number = first, 1
        while self.bodies.setdefault(name, body) != body:
            number += 1
            name = f"{first}_v{number}"
        return kernel if name == kernel.name else replace(kernel, name=name)


_COEFFICIENTS = _IdentityCache()


def _forms(schedule: Schedule):
    for stage in schedule.stages:
        for statement in stage.statements:
            forms = (statement.form,) if isinstance(statement, Update) else (statement.left, statement.right, statement.targets)
            for form in forms:
                yield stage, statement, form


class CoefficientOutOfRange(BilinearError):
    """A coefficient the kernels of one element type cannot hold (``compile`` leaves that type's
    function out rather than refusing the other)."""

    def __init__(self, dtype: str, *diagnostics: Diagnostic):
        super().__init__(*diagnostics)
        self.dtype = dtype

    def __reduce__(self):
        return type(self), (self.dtype, *self.diagnostics)


def check_range(numbers: Iterable[Fraction], dtype: str, what: str, span: Span | None) -> None:
    """Refuse the first nonzero of ``numbers`` past the normal range of ``dtype``: ``what`` (a
    statement, say) "multiplies ... by a coefficient of about 1e600".  For what kernels multiply by
    beyond the coefficients as written: their products through the levels, which each written one
    in range does not bound (a float() of one past the range had raised OverflowError)."""
    info = np.finfo(dtype)
    for coef in numbers:
        if coef and not info.tiny <= abs(coef) <= info.max:
            exponent = math.log10(abs(coef.numerator)) - math.log10(coef.denominator)
            raise CoefficientOutOfRange(dtype, Diagnostic(
                f"{what} a coefficient of about 1e{exponent:.0f}, {'beyond' if abs(coef) > 1 else 'below'} the {dtype} "
                f"range ({info.tiny:.3g} to {info.max:.3g} in magnitude); it cannot be run in {dtype}", span))


def leaf_refusal(schedule: Schedule, leaf: str) -> str | None:
    """Why ``leaf`` leaves cannot run one of ``schedule``'s products as written: one that multiplies a
    sum of blocks, where they multiply single ones (:func:`check_sub_problem` finds it in lowering)."""
    if LEAF_KINDS[leaf].sums:
        return None
    for stage in schedule.stages:
        for statement in stage.statements:
            if isinstance(statement, Multiply) and max(len(statement.left.terms), len(statement.right.terms)) > 1:
                return (f"the product {statement.product_text()} multiplies a sum of blocks, and {leaf} leaves "
                        "multiply single blocks")
    return None


def check_sub_problem(coefficients: tuple[tuple[Fraction, ...], ...], statement: Multiply, schedule: Schedule,
                      level: int, options: Options) -> None:
    """Refuse, located at ``statement``, a sub-problem (its A, B and target coefficients over the
    views they bind) that no leaf of ``options`` can run: a sum of several views under leaves
    that multiply single ones (found only by the first call, unlocated), or a coefficient that
    the levels multiply past the dtype's range."""
    a, b, targets = coefficients
    span = statement.span or schedule.span
    if not LEAF_KINDS[options.leaf].sums and (len(a) > 1 or len(b) > 1):
        raise BilinearError(Diagnostic(
            # the product, not the statement: passes split a statement's targets (the line shows them all)
            f"the product {statement.product_text()} in schedule {schedule.name} multiplies "
            f"a sum of blocks, and {options.leaf} leaves multiply "
            "single blocks: form the sum in an element-wise statement first (as the default schedules do), or use "
            "--leaf fused", span))
    check_range((*a, *b, *targets), options.dtype, f"`{statement}` in schedule {schedule.name} (level {level + 1}; its "
                "coefficients times the levels' above) multiplies its product by", span)


def sum_refusal(schedule: Schedule, level: int, buffer: str, count: int) -> str:
    """Why an element-wise statement may not touch ``buffer``, here a sum of ``count`` views, and what
    lowers instead; a derived default schedule by its algorithm's name (winograd_cublas is in no file).
    A C block is a sum of the level above's targets; an A or B block, of the blocks its factor adds."""
    where = f"(level {level + 1}) touches {buffer}, which here is a sum of {count} views"
    if is_default_name(schedule):
        return (f"an element-wise statement of {schedule.algorithm}'s default schedule {where}; fused leaves take such "
                f"sums only in their products: use --leaf cublas, or {schedule.algorithm} at the innermost level alone")
    operand = operand_of(buffer)
    if operand == "C":
        return (f"an element-wise statement of {schedule.name} {where} (the level above adds this product into {count} "
                "targets, which fused leaves keep apart); use library leaves (--leaf cublas, leaf='cublas'), where each "
                "target is one view, or a schedule whose element-wise statements leave C alone")
    return (f"an element-wise statement of {schedule.name} {where} (the level above multiplies a sum of its blocks); put "
            f"{schedule.name} where its A and B are single blocks (at the top level, or under a schedule whose products "
            f"multiply single blocks), or use a schedule that does not write {operand} there")


def _check_written(algorithm: Algorithm, dtype: str) -> None:
    """An algorithm's coefficients against ``dtype``'s range, each located where it is written: a
    default schedule's statements, derived from them, have no place in the file and internal names."""
    for product in algorithm.products:  # at the product: the parser moves a factor's scalar into the left one
        check_range((coef for form in (product.left, product.right) for _, coef in form.terms), dtype,
                    f"{product.name} has", product.span)
    for target, form, span in (*((s.name, s.form, s.span) for s in algorithm.sums),
                               *((o.block, o.form, o.span) for o in algorithm.outputs)):
        for name, coef in form.terms:
            check_range((coef,), dtype, f"{target} multiplies {name} by", form.span_of(name) or span)


def _check_coefficients(schedule: Schedule, dtype: str, algorithm: Algorithm) -> None:
    """Every coefficient the kernels multiply by must be a normal number of ``dtype``: one past
    its range becomes inf (NaN results), one below it 0 (a silently wrong product)."""
    info = np.finfo(dtype)
    distinct = _COEFFICIENTS.get((schedule,))
    if distinct is None:
        distinct = {abs(coef) for _, _, form in _forms(schedule) for _, coef in form.terms}
        _COEFFICIENTS.put((schedule,), (), distinct)
    if all(info.tiny <= coef <= info.max for coef in distinct):
        return
    for _, statement, form in _forms(schedule):
        for name, coef in form.terms:
            if not info.tiny <= abs(coef) <= info.max:
                if statement.span is None:  # derived from the algorithm: where the algorithm writes it
                    _check_written(algorithm, dtype)
                what = "beyond" if abs(coef) > 1 else "below"
                raise CoefficientOutOfRange(
                    dtype,
                    Diagnostic(
                        f"`{statement}` in schedule {schedule.name} multiplies {name} by a coefficient "
                        f"{what} the {dtype} range ({info.tiny:.3g} to {info.max:.3g} in magnitude); "
                        f"it cannot be run in {dtype}",
                        statement.span or schedule.span,
                    ),
                )


def _prepared_from_zero(prepared: Schedule, algorithm: Algorithm) -> Schedule | None:
    """:func:`from_zero` of a prepared schedule, verified (as an overwrite schedule: it must never
    read C), or None where the pass does not apply.  It only saves work, so a result that does not
    verify (a bug in the pass) leaves the level zeroing C as before rather than refusing it."""
    found = _PREPARED.get((prepared, algorithm, from_zero))
    if found is None:
        found = from_zero(prepared, algorithm.shape.blocks("C")) or False
        if found and not verify_schedule(found, algorithm).ok:
            found = False
        _PREPARED.put((prepared, algorithm, from_zero), (), found)
    return found or None


def _steps(prepared: Schedule, options: Options, names: KernelNames, prefix: str,
           kept: tuple[tuple[Stage, Step], ...] = ()) -> tuple[Step, ...]:
    """A schedule's steps: its product stages, and a kernel for each element-wise stage.  ``kept``:
    another plan's element-wise stages and their kernels (a from-zero plan's stages that are the
    plan's own run its kernels: one each in the .cu file, each step named as in that plan)."""
    unused = list(kept)
    steps: list[Step] = []
    for index, stage in enumerate(prepared.stages):
        if stage.is_product_stage():
            steps.append(stage)
        elif (same := next((i for i, (other, _) in enumerate(unused) if other == stage), None)) is not None:
            steps.append(unused.pop(same)[1])
        else:
            kernel = lower_elementwise(stage, prepared, _identifier(f"{prefix}_{options.dtype}_s{index}"), options.dtype)
            steps.append(names.unique(kernel))
    return tuple(steps)


def level_plan(schedule: Schedule, algorithm: Algorithm, options: Options, names: KernelNames | None = None,
               zeroed: bool = True, fallback_leaf: str | None = None) -> LevelPlan:
    """``zeroed``: with the plan for a C that starts at zero (none for an overwriting schedule's accumulating
    fallback, nor above an overwriting level); ``fallback_leaf``: that fallback's leaf (``options.leaf``)."""
    names = names if names is not None else KernelNames()
    prepared = prepare_schedule(schedule, algorithm, options)
    _check_coefficients(prepared, options.dtype, algorithm)
    own = _steps(prepared, options, names, prepared.name)
    fallback = from_zero_plan = None
    if schedule.overwrites_c:  # products that accumulate into C cannot recurse into a schedule that overwrites C
        fallback = level_plan(default_for(algorithm, leaf := fallback_leaf or options.leaf), algorithm,
                              replace(options, leaf=leaf), names, zeroed=False)
    if zeroed and not schedule.overwrites_c and not LEAF_KINDS[options.leaf].sums:  # library GEMMs: one target each
        variant = _prepared_from_zero(prepared, algorithm)
        if variant is not None:
            kept = tuple((stage, step) for stage, step in zip(prepared.stages, own) if not stage.is_product_stage())
            steps = _steps(variant, options, names, f"{prepared.name}_from_zero", kept)
            from_zero_plan = LevelPlan(algorithm, variant, steps)
    return LevelPlan(algorithm, prepared, own, fallback, from_zero_plan)


def recurses(plan: LevelPlan, options: Options, M: int, K: int, N: int) -> bool:
    """Whether a level splits an M×K×N problem (every block at least ``cutoff`` wide)."""
    shape = plan.algorithm.shape
    return min(M // shape.m, K // shape.k, N // shape.n) >= options.cutoff
