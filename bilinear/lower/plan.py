"""Lowering: a verified program to a launch plan per level of recursion, and every fused
product launch the plan can make, computed before anything runs."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ..collector import cycles_uncollected
from ..diagnostics import BilinearError, Diagnostic
from ..ir import Algorithm, Program, Schedule, Stage
from ..verify import Report, ScheduleReport, ShapeCondition, verify_program, verify_used
from ..verify.expand import expansion_of
from .breadth import BreadthFirst, check_under, lower_breadth_first, render_breadth_first
from .elementwise import ElementwiseKernel, render_elementwise
from .fallback_runs import runs_its_fallback
from .leaves import ProblemNode, ProductLaunch, all_launches, launches_for, problem_tree
from .product import ProductStageSpec, default_config, render_product_stages
from .refusals import fallback_named, refuse_destroying_below_top
from .levels import (
    DTYPES,
    LAUNCH_PRODUCTS,
    LAUNCH_SUM_SHAPES,
    LEAVES,
    KernelNames,
    LevelPlan,
    Options,
    default_for,
    Step,
    level_plan,
    prepare_schedule,
    recurses,
    with_compiled_counts,
)

__all__ = ["DTYPES", "LAUNCH_PRODUCTS", "LEAVES", "LevelPlan", "Lowered", "Options", "Step", "lower",
           "prepare_schedule", "verification"]


@dataclass(frozen=True)
class Lowered:
    """A whole lowered program: one plan per level, outermost first, and the problem tree
    holding every fused product launch (:mod:`bilinear.lower.leaves`)."""

    name: str
    options: Options
    levels: tuple[LevelPlan, ...]
    tops: dict = field(default_factory=dict, compare=False)  # overwrites C? -> ProblemNode
    breadth: BreadthFirst | None = None  # the innermost options.breadth levels, run breadth-first
    # With a workspace limit: the same product with one breadth-first level fewer (it runs
    # depth-first instead), for calls whose breadth-first workspace would pass the limit.
    fewer_breadth: Lowered | None = None

    def top(self, overwrites: bool) -> ProblemNode:
        return self.tops[overwrites]

    def kernels(self) -> tuple[ElementwiseKernel, ...]:
        """The element-wise stage kernels, each once."""
        seen: dict[str, ElementwiseKernel] = {}
        for level in self.levels:
            for kernel in level.kernels():
                seen.setdefault(kernel.name, kernel)
        return tuple(seen.values())

    def product_launches(self) -> tuple[ProductLaunch, ...]:
        """Every fused product launch any size can make (fused leaves; none with library leaves)."""
        return all_launches(self.tops)

    def launches_for(self, M: int, K: int, N: int, beta: float | None = None) -> tuple[ProductLaunch, ...]:
        """The fused launches an M×K×N product may make: a call with ``beta``, or with any beta."""
        modes = zip((True, False), top_modes(self, M, K, N, beta))
        found = (launch for mode, runs in modes if runs
                 for launch in launches_for(self.levels, self.options, self.top(mode), (M, K, N)))
        return tuple({launch.spec.name: launch for launch in found}.values())

    def kernel_names(self) -> list[str]:
        """Every kernel :meth:`cuda_source` defines, in its order: element-wise stages,
        breadth-first split and merge, fused product stages."""
        breadth = [k.name for k in self.breadth.kernels()] if self.breadth is not None else []
        return [k.name for k in self.kernels()] + breadth + [spec.name for spec in self.product_specs()]

    def with_fallbacks(self) -> tuple[Lowered, ...]:
        """This plan, then those with fewer breadth-first levels a workspace limit falls back to."""
        plans = [self]
        while plans[-1].fewer_breadth is not None:
            plans.append(plans[-1].fewer_breadth)
        return tuple(plans)

    def library_kernel_names(self) -> list[str]:
        """Every kernel a library of this plan defines: its own and its fallbacks', each once."""
        return list(dict.fromkeys(name for plan in self.with_fallbacks() for name in plan.kernel_names()))

    def product_specs(self) -> tuple[ProductStageSpec, ...]:
        return tuple(launch.spec for launch in self.product_launches())

    def cuda_source(self, skip: frozenset[str] = frozenset(), linkage: str = 'extern "C"') -> str:
        """Every generated kernel: element-wise stages, then fused product stages (default tile configs);
        those named in ``skip`` left out (a library's fallback plans share a schedule's kernels).  A
        library's element-wise and breadth-first kernels are ``static``, its own: named after schedules,
        two libraries' could meet (strassen's and a schedule strassen_cublas's); NVRTC's are found by name."""
        breadth = self.options.breadth
        levels = f"{self.options.levels} level(s)" + (f" ({breadth} breadth-first)" if breadth else "")
        kinds = "Element-wise stage kernels" + (", breadth-first split and merge kernels" if breadth else "")
        header = (
            f"// Generated by bilinear for {self.name}: {levels}, {self.options.leaf} leaves, {self.options.dtype}.\n"
            f"// {kinds}; product stages run as library GEMMs or fused product kernels.\n\n"
        )
        parts = [render_elementwise(k, linkage) for k in self.kernels() if k.name not in skip]
        if self.breadth is not None:
            parts.append(render_breadth_first(self.breadth, linkage))
        specs = tuple(spec for spec in self.product_specs() if spec.name not in skip)
        if specs:
            parts.append(render_product_stages([(spec, default_config(spec)) for spec in specs]))
        return header + "\n".join(parts)


def _resolve(definition: Algorithm | Schedule, program: Program) -> tuple[Schedule | None, Algorithm]:
    if isinstance(definition, Schedule):
        return definition, program.algorithm(definition.algorithm)
    return None, definition


@dataclass(frozen=True)
class Verified:
    """A program and the report that proves it: what :func:`lower` takes."""

    program: Program
    report: Report

    def __post_init__(self) -> None:
        if not self.report.ok:
            raise BilinearError(*(d for entry in self.report.entries for d in entry.errors))

    def shape_conditions(self, schedule: str) -> tuple[ShapeCondition, ...]:
        """What the block shapes must meet for schedule ``schedule`` (the report's "requires")."""
        return next((entry.shape_conditions for entry in self.report.entries
                     if isinstance(entry, ScheduleReport) and entry.schedule.name == schedule), ())


def verification(program: Program) -> Report:
    """``program``'s verification report, with what each schedule moves as compiled beside what it
    moves as written (:func:`with_compiled_counts`)."""
    return with_compiled_counts(verify_program(program))


def verified(program: Program) -> Verified:
    """Verify ``program``; raises BilinearError with the diagnostics when it does not verify."""
    return Verified(program, verify_program(program))  # counts as compiled are for reports: lowering needs none


@cycles_uncollected()
def lower(program: Verified | Program, options: Options, per_level: tuple[str, ...] | None = None,
          name: str | None = None) -> Lowered:
    """Lower a verified program's main definition (or one definition name per level) to a launch plan,
    named ``name`` (default :func:`library_name`: kernels, functions and files are named after it).

    A plain :class:`Program` is verified first (pass :class:`Verified` where the report is at hand).

    Raises:
        BilinearError: when a named definition does not exist or the program does not verify.
    """
    checked = program if isinstance(program, Verified) else verified(program)
    # a used file's definitions a level names too (verify_program proves the file's own alone)
    return _lower(Verified(checked.program, verify_used(checked.program, per_level, checked.report)), options, per_level, name)


def library_name(program: Program, per_level: tuple[str, ...] | None) -> str:
    """What a lowered product, its library and files are named: the file's main definition, or a
    hybrid's definitions in level order, a run of one as its count ("msmes_grey333", "msmes_strassen_x2";
    it had been named after the innermost level's alone, then each definition once, so that
    winograd,grey333,winograd and winograd,grey333 wrote the same files and functions)."""
    if not per_level:
        return program.main.name
    runs = [(name, len(list(run))) for name, run in itertools.groupby(per_level)]
    return "_".join(name if count == 1 else f"{name}_x{count}" for name, count in runs)


def _lower(checked: Verified, options: Options, per_level: tuple[str, ...] | None, library: str | None,
           asked: Options | None = None) -> Lowered:
    program = checked.program
    fewer = None
    if options.breadth and options.workspace_limit is not None:
        batched_alone = options.breadth == 1 and options.launch == "batched"  # nothing left to batch
        fallback = replace(options, breadth=options.breadth - 1, launch="serial" if batched_alone else options.launch)
        with fallback_named(fallback, asked or options):
            fewer = _lower(checked, fallback, per_level, library, asked or options)
    names = per_level or (program.main.name,) * options.levels
    if len(names) != options.levels:
        raise BilinearError(Diagnostic(f"{len(names)} per-level definitions given for {options.levels} levels"))
    resolved = []
    for name in names:
        definition = program.definition(name)
        if definition is None:
            raise BilinearError(Diagnostic(f"{name} is not defined in {program.path}"))
        resolved.append(_resolve(definition, program))
    depth_first = len(resolved) - options.breadth
    # Breadth-first levels multiply by the algorithm itself (its Kronecker power); a schedule
    # given for them orders depth-first work only, so only its algorithm is used.
    innermost = tuple(algorithm for _, algorithm in resolved[depth_first:])
    name = library or library_name(program, per_level)
    breadth = lower_breadth_first(innermost, options.dtype, _identifier(name)) if innermost else None
    resolved = resolved[:depth_first]
    refuse_destroying_below_top(resolved)
    kernel_names = KernelNames(_identifier(name), always=name != library_name(program, per_level))
    carried = _levels_carrying_sums(resolved) if options.leaf == "fused" else 0
    plans = []
    for level, (schedule, algorithm) in enumerate(resolved):
        if schedule is None:
            leaf = "fused" if level >= len(resolved) - carried else "cublas"
            schedule, level_options = default_for(algorithm, leaf), replace(options, leaf=leaf)
            conditions = ()  # a default schedule's temporaries hold their own operand's sums
        else:
            level_options, conditions = options, checked.shape_conditions(schedule.name)
        below = resolved[level + 1][0] if level + 1 < len(resolved) else None
        # A from-zero plan sets products whose level below would then run its overwriting schedule, while
        # the products it adds to run that schedule's fallback: one call would hold both their temporaries
        # (msmes over rsmm: twice the workspace).  There C is zeroed, as before, and every product adds.
        zeroed = below is None or not below.overwrites_c
        # An overwriting schedule's fallback (its default schedule) passes operand sums down only to the
        # leaves: above another level it runs cuBLAS's default, as a level without a schedule does there.
        fallback_leaf = None if level == len(resolved) - 1 else "cublas"
        plan = level_plan(schedule, algorithm, level_options, kernel_names, zeroed=zeroed, fallback_leaf=fallback_leaf)
        plans.append(replace(plan, shape_conditions=conditions))
    plans = tuple(_unrun_conditions_dropped(plans))
    tops = problem_tree(plans, options, _identifier(name))
    if breadth is not None and plans:
        check_under(breadth, tops, innermost[0].span)
    return Lowered(name, options, plans, tops, breadth, fewer)


def _identifier(name: str) -> str:
    """A CUDA identifier made of a definition's name."""
    cleaned = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return cleaned if cleaned[:1].isalpha() else f"k_{cleaned}"


def _levels_carrying_sums(resolved: list[tuple[Schedule | None, Algorithm]]) -> int:
    """How many of the innermost levels run the fused default schedule (operand sums carried
    down to the kernel): the last level when it has no schedule of its own, and the levels
    above it while the leaf products below stay within one launch's bounds."""
    carried, products, shapes = 0, 1, {(1, 1)}
    for schedule, algorithm in reversed(resolved):
        if schedule is not None:
            break
        lengths = {(len(u.terms), len(v.terms)) for u, v in expansion_of(algorithm).factors}
        products *= len(algorithm.products)
        shapes = {(a * u, b * v) for a, b in shapes for u, v in lengths}
        if carried and (products > LAUNCH_PRODUCTS or len(shapes) > LAUNCH_SUM_SHAPES):
            break
        carried += 1
    return carried


def _unrun_conditions_dropped(plans: list[LevelPlan]) -> Iterator[LevelPlan]:
    """The plans, with no shape conditions on a level whose schedule never runs (its accumulating
    fallback, a default schedule with none, runs at every call): they had refused products that met
    every condition of what runs."""
    for level, plan in enumerate(plans):
        yield replace(plan, shape_conditions=()) if level and runs_its_fallback(plan, plans[level - 1]) else plan


# --- what a run of a given size needs (shared by the executor and the manifest) ------------------


def level_dims(lowered: Lowered, M: int, K: int, N: int):
    """(level, plan, block dimensions) for every level an M×K×N product reaches."""
    dims = (M, K, N)
    for level, plan in enumerate(lowered.levels):
        if not recurses(plan, lowered.options, *dims):
            return
        shape = plan.algorithm.shape
        dims = (dims[0] // shape.m, dims[1] // shape.k, dims[2] // shape.n)
        yield level, plan, dims


def broken_condition(lowered: Lowered, M: int, K: int, N: int) -> str | None:
    """Why an M×K×N product cannot run: a level it reaches splits it into blocks that break a
    shape condition of that level's schedule; None when every level's blocks meet them."""
    if not any(plan.shape_conditions for plan in lowered.levels):  # most schedules: nothing to walk per call
        return None
    for level, plan, (bm, bk, bn) in level_dims(lowered, M, K, N):
        for condition in plan.shape_conditions:
            if not condition.holds((bm, bk, bn)):
                return (f"schedule {plan.schedule.name} requires {condition}: at level {level + 1} of this {M}x{K} @ "
                        f"{K}x{N} product its blocks are {bm}x{bk} @ {bk}x{bn}; choose sizes whose blocks meet it, "
                        "or fewer levels")
    return None


def leaf_dims(lowered: Lowered, M: int, K: int, N: int) -> tuple[int, int, int]:
    """The block dimensions of the leaf products depth-first levels leave (M, K, N with none)."""
    dims = (M, K, N)
    for _, _, dims in level_dims(lowered, M, K, N):
        pass
    return dims


def leaf_shapes(lowered: Lowered, M: int, K: int, N: int) -> Iterator[tuple[int, int, int]]:
    """Every shape of leaf GEMM an M×K×N product runs: the strips each depth-first level peels
    off an odd size, then the leaves at the bottom."""
    level = 0
    while level < len(lowered.levels) and recurses(lowered.levels[level], lowered.options, M, K, N):
        shape = lowered.levels[level].algorithm.shape
        Mm, Km, Nm = M - M % shape.m, K - K % shape.k, N - N % shape.n
        yield from (dims for dims in ((M - Mm, K, N), (Mm, K, N - Nm), (Mm, K - Km, Nm)) if min(dims) > 0)
        M, K, N = M // shape.m, K // shape.k, N // shape.n
        level += 1
    yield M, K, N


def gemm_shapes(lowered: Lowered, M: int, K: int, N: int) -> Iterator[tuple[int, int, int]]:
    """Every shape of GEMM the leaf kind runs in an M×K×N product: each leaf GEMM's, or where
    breadth-first levels split it, the strips past their grid and the grid's leaves (the C++
    ``gemm_shapes``)."""
    plan = lowered.breadth
    for m, k, n in leaf_shapes(lowered, M, K, N):
        dims = plan.leaf_dims(m, k, n) if plan is not None else None
        if dims is None or min(dims) < max(lowered.options.cutoff, 1):
            yield m, k, n
            continue
        (lm, lk, ln), (gm, gk, gn) = dims, plan.grid
        yield from ((m - lm * gm, k, n), (lm * gm, k, n - ln * gn), (lm, lk, ln), (lm * gm, k - lk * gk, ln * gn))


def breadth_parts(lowered: Lowered, M: int, K: int, N: int, align: int = 1) -> tuple[int, int, int]:
    """Elements of the breadth-first levels' three buffers (the operands of A, of B, the products)
    an M×K×N call holds: each the largest any leaf GEMM of the call splits into, rounded up to
    ``align`` (leaf GEMMs too small to split, and products without breadth-first levels, need none)."""
    plan = lowered.breadth
    parts = [0, 0, 0]
    if plan is None:
        return (0, 0, 0)
    for dims in leaf_shapes(lowered, M, K, N):
        m, k, n = plan.leaf_dims(*dims)
        if min(m, k, n) >= max(lowered.options.cutoff, 1):
            for i, count in enumerate((m * k, k * n, m * n)):
                parts[i] = max(parts[i], -(-plan.rank * count // align) * align)
    return parts[0], parts[1], parts[2]


def call_workspace_bytes(lowered: Lowered, M: int, K: int, N: int, align: int = 1) -> int:
    """Bytes an M×K×N call holds: every temporary and the breadth-first levels' three buffers, each
    rounded up to ``align`` elements."""
    itemsize = 8 if lowered.options.dtype == "float64" else 4
    return workspace_bytes(lowered, M, K, N, align) + sum(breadth_parts(lowered, M, K, N, align)) * itemsize


def top_modes(lowered: Lowered, M: int, K: int, N: int, beta: float | None = None) -> tuple[bool, bool]:
    """Whether the top-level product overwrites C, and whether it accumulates into C.

    It overwrites where the first schedule computes C = A*B and splits the product, and where it
    accumulates but the call's C starts at zero (``beta`` 0): its from-zero plan runs then. With
    ``beta`` None (a call not yet made), both modes a call may take are true.
    """
    first = lowered.levels[0] if lowered.levels else None
    if first is None or not recurses(first, lowered.options, M, K, N):
        return False, True
    if first.schedule.overwrites_c:
        return True, False
    from_zero = first.from_zero is not None and (beta is None or beta == 0)
    return from_zero, beta is None or not from_zero


def workspace_shapes(lowered: Lowered, M: int, K: int, N: int) -> dict[tuple[int, str], tuple[int, int]]:
    """Temporaries of every plan that can run at every level, keyed by level and slot (the plans of
    a level share slots: ``LevelPlan.slots``), with their dimensions there.

    An overwriting schedule runs where its parent overwrites; its accumulating
    fallback only where the parent accumulates.  An accumulating schedule's from-zero plan
    runs where its parent overwrites, with the plan's own temporaries (and none sits above an
    overwriting level), so one workspace serves calls with any beta (``top_modes`` with none).
    """
    shapes = {}
    overwrite, accumulate = top_modes(lowered, M, K, N)
    for level, plan, (bm, bk, bn) in level_dims(lowered, M, K, N):
        size = {"A": (bm, bk), "B": (bk, bn), "C": (bm, bn)}
        running = [
            candidate
            for candidate, wanted in (
                (plan, overwrite or not plan.schedule.overwrites_c),
                (plan.accumulate_fallback, accumulate),
                (plan.from_zero, overwrite),  # its temporaries are the plan's own: the same keys
            )
            if candidate is not None and wanted
        ]
        for candidate in running:
            for temp in candidate.schedule.temporaries:  # (the candidates share slots: LevelPlan.slots)
                shapes[(level, candidate.slots[temp.name])] = size[temp.like]
        statements = [s for p in running for step in p.steps if isinstance(step, Stage) for s in step.statements]
        overwrite = any(s.overwrite for s in statements)
        accumulate = any(not s.overwrite for s in statements)
    return shapes


def workspace_bytes(lowered: Lowered, M: int, K: int, N: int, align: int = 1) -> int:
    """Bytes of every temporary an M×K×N call holds, each rounded up to ``align`` elements (the
    C++ library's :data:`~bilinear.lower.host_code.TEMP_ALIGN`; the Python runtime's are not)."""
    itemsize = 8 if lowered.options.dtype == "float64" else 4
    return sum(-(-rows * cols // align) * align * itemsize for rows, cols in workspace_shapes(lowered, M, K, N).values())
