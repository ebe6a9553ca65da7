"""Leaf products lowered ahead of time: every fused product launch a plan can make.

A problem is ``targets += (Σ a)(Σ b)`` over views; its *form* is the exact
coefficient of each view, in the order the executor binds them.  The form of
every sub-problem follows from its parent's form and the level's schedule,
not from sizes or pointers, so lowering walks the recursion once, symbolically,
into a tree of :class:`ProblemNode`: per node, the plan it runs, its product
statements' sub-problems, and the fused launches that multiply them, with
every slot named by the buffer it binds and every coefficient an exact
fraction until the spec renders it.  Sizes decide only how deep a run goes:
for each depth it may stop at, the node holds that depth's launches.  The
executor walks the same tree with views and binds them; it computes nothing
about kernels.

Pure-product levels (fused default schedules that carry operand sums down)
are *flattened*: all leaf products of a subtree go out in one launch per
(depth, part), where the part is the main block or one of the three peeled
strips (rows, columns, inner dimension) an odd size leaves at that depth.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

from ..ir import Form, Multiply, Stage, operand_of
from .levels import LAUNCH_PRODUCTS, LevelPlan, Options, check_range, check_sub_problem, recurses, sum_refusal
from .options import MAX_FUSED_KERNELS, MAX_PRODUCT_TARGETS, TooLarge
from .product import FusedProduct, ProductStageSpec, SpecTerm
from .product_kernel import kernel_coefficients

ONE = Fraction(1)
PARTS = ("m", "n", "k")  # peeled strips, in the order the executor fixes them up
Keys = tuple[tuple, tuple, tuple]  # per side, what each view is (its buffer path): slots by name


@dataclass(frozen=True)
class ProblemForm:
    """The exact coefficient of each view of a problem ``targets += (Σ a)(Σ b)``, in binding order."""

    a: tuple[Fraction, ...]
    b: tuple[Fraction, ...]
    targets: tuple[Fraction, ...]
    overwrite: bool = False

    def normalized(self) -> ProblemForm:
        """Fold a one-view operand's coefficient into the targets, so library GEMMs see plain views."""
        scale, a, b = ONE, self.a, self.b
        if len(a) == 1:
            scale, a = scale * a[0], (ONE,)
        if len(b) == 1:
            scale, b = scale * b[0], (ONE,)
        return ProblemForm(a, b, tuple(t * scale for t in self.targets), self.overwrite)


TOP = ProblemForm((ONE,), (ONE,), (ONE,))


@dataclass(frozen=True)
class ProductLaunch:
    """One launch of a fused product kernel: its spec, and for each product the slot that
    each of its a, b and target views binds (views with one buffer path share a slot)."""

    spec: ProductStageSpec
    slots: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...]
    depth: int  # the recursion depth its products are multiplied at
    scale: Fraction = ONE  # α is multiplied by this at launch (the first target's coefficient)
    keys: tuple[Keys, ...] = field(default=(), compare=False, repr=False)  # each product's buffer paths


@dataclass(frozen=True)
class FlatGroup:
    """The leaf products of a flattened subtree at one depth and part, in one launch."""

    depth: int
    part: str  # "main", or a peeled strip: "m", "n", "k"
    launch: ProductLaunch


@dataclass(frozen=True, eq=False)
class ProductStep:
    """A product stage of a node's plan: its statements' sub-problems and how they run."""

    forms: tuple[ProblemForm, ...]  # one per statement
    children: tuple[ProblemNode, ...] = ()  # when the sub-problems may recurse
    launch: ProductLaunch | None = None  # fused leaves: all sub-problems in one launch
    flat: tuple[tuple[FlatGroup, ...], ...] = ()  # flattened: the launches per depth it stops at


@dataclass(frozen=True, eq=False)
class ProblemNode:
    """A problem of one form at one level, and everything lowering decided for it."""

    level: int
    form: ProblemForm
    plan: LevelPlan | None = None  # what runs when it splits (None at the last level)
    zero_targets: bool = False  # overwriting under an accumulating schedule: zero C, then add
    steps: tuple[ProductStep | None, ...] = ()  # aligned with plan.steps (None: element-wise)
    leaf: ProductLaunch | None = None  # fused leaves: this problem (or a peeled strip) alone
    flat: tuple[tuple[FlatGroup, ...], ...] = ()  # it flattens: launches per depth it stops at


def own_keys(form: ProblemForm) -> Keys:
    return tuple(tuple((side, i) for i in range(len(coefs))) for side, coefs in zip("abc", (form.a, form.b, form.targets)))


def sub_problem(statement: Multiply, form: ProblemForm, keys: Keys, plan: LevelPlan) -> tuple[ProblemForm, Keys]:
    """A product statement's problem: each named buffer expands to the parent's views of it.

    An A, B or C block is the matching block of every view of the parent's operand; a
    temporary is one view.  The order is the executor's (``Executor._child``).

    Element-wise statements act on the raw views, so a value in a temporary is in the raw scale
    of its kind, whatever the temporary's shape: an A (B) sum as A's (B's) blocks are, a product as
    C's are.  So a temporary in a factor is scaled as that side's blocks are, and one a product
    goes into as C's blocks are (the parent's ``+1/2*C22``); an operand of several views takes
    no element-wise statement, so there its temporaries need no scale.
    """
    side_of = {"A": 0, "B": 1, "C": 2}
    parent = (form.a, form.b, form.targets)

    def scale_of(side: int) -> Fraction:
        views = parent[side]
        return views[0] if len(views) == 1 and views[0] else ONE

    def expand(expression: Form, position: int) -> tuple[tuple[Fraction, ...], tuple]:
        coefs, names = [], []
        for name, coef in expression.terms:
            if plan.schedule.temporary(name) is not None:
                coefs.append(coef * scale_of(position))
                names.append((("temp", plan.schedule.name), name))
                continue
            side = side_of[operand_of(name)]
            for parent_coef, parent_key in zip(parent[side], keys[side]):
                coefs.append(coef * parent_coef)
                names.append((parent_key, name))
        return tuple(coefs), tuple(names)

    (a, ka), (b, kb), (t, kt) = expand(statement.left, 0), expand(statement.right, 1), expand(statement.targets, 2)
    return ProblemForm(a, b, t, statement.overwrite).normalized(), (ka, kb, kt)


def _single_views(plan: LevelPlan, form: ProblemForm, level: int) -> None:
    """Refuse, when lowering, a level whose element-wise statements touch an operand that is here a
    sum of several views (a fused leaf keeps a product's several targets): found at the first call
    before, with the same words."""
    views = {"A": form.a, "B": form.b, "C": form.targets}
    for step in plan.steps:
        if isinstance(step, Stage):
            continue  # products take sums of views
        for buffer in step.buffers:
            operand = operand_of(buffer)  # None for a temporary: always one view
            count = len(views[operand]) if operand else 1
            if count != 1:
                raise ValueError(sum_refusal(plan.schedule, level, buffer, count))


def product_launch(items: Sequence[tuple[ProblemForm, Keys]], dtype: str, depth: int, prefix: str = "") -> ProductLaunch:
    """The launch multiplying every item: distinct buffer paths become slots, in order of first use.

    The first target's coefficient moves out of the spec into the launch's ``scale``, so launches
    that differ only by an overall factor (signs, mostly) share one kernel.  Its name is made of its
    structure, after ``prefix`` (the library's name): two libraries holding the same kernel would
    otherwise both export one extern "C" name, and no program could link both.
    """
    scale = items[0][0].targets[0]
    sides: tuple[dict, dict, dict] = ({}, {}, {})
    products, slots = [], []
    for form, keys in items:
        per_side, terms = [], []
        for index, coefs in zip(range(3), (form.a, form.b, tuple(t / scale for t in form.targets))):
            taken = tuple(sides[index].setdefault(key, len(sides[index])) for key in keys[index])
            per_side.append(taken)
            terms.append(tuple(SpecTerm(slot, coef) for slot, coef in zip(taken, coefs)))
        products.append(FusedProduct(*terms))
        slots.append(tuple(per_side))
    counts = [len(side) for side in sides]
    structure = repr((dtype, products, counts))
    name = f"{prefix}{'_' if prefix else ''}fused_{dtype}_{hashlib.sha256(structure.encode()).hexdigest()[:12]}"
    spec = ProductStageSpec(name, dtype, tuple(products), *counts, batch=1)
    return ProductLaunch(spec, tuple(slots), depth, scale, tuple(keys for _, keys in items))


def only_accumulating_products(plan: LevelPlan) -> bool:
    return all(
        isinstance(step, Stage) and all(isinstance(s, Multiply) and not s.overwrite for s in step.statements)
        for step in plan.steps
    ) and not plan.schedule.temporaries


def product_count(plan: LevelPlan) -> int:
    return sum(len(step.statements) for step in plan.steps)


class _TreeBuilder:
    """Builds the problem tree of a lowered program (memoized by level and form)."""

    def __init__(self, levels: tuple[LevelPlan, ...], options: Options, prefix: str):
        self.levels = levels
        self.options = options
        self.prefix = prefix
        self.fused = options.leaf == "fused"
        self._nodes: dict[tuple[int, ProblemForm], ProblemNode] = {}
        self._launches: dict[tuple, ProductLaunch] = {}
        self._kernels: set[str] = set()

    def flattens(self, level: int, problems: int) -> bool:
        """Whether ``problems`` subtrees from ``level`` down go out flattened: fused leaves,
        every level from there only accumulates products in one stage (a schedule split into
        several stages keeps one launch per stage: see ``schedule.default.FUSED_STAGE_VIEWS``),
        and their leaf products fit one launch."""
        below = self.levels[level:]
        if not self.fused or not below or not all(only_accumulating_products(p) for p in below):
            return False
        if any(sum(isinstance(step, Stage) for step in p.steps) > 1 for p in below):
            return False
        return problems * math.prod(product_count(p) for p in below) <= LAUNCH_PRODUCTS

    def launch(self, items: Sequence[tuple[ProblemForm, Keys]], depth: int) -> ProductLaunch:
        key = (tuple(items), depth)
        if key not in self._launches:
            if max(len(form.targets) for form, _ in items) > MAX_PRODUCT_TARGETS:
                self._refuse(f"add one product into more than {MAX_PRODUCT_TARGETS} C views after {depth} levels")
            self._launches[key] = launch = product_launch(items, self.options.dtype, depth, self.prefix)
            schedule = self.levels[max(depth - 1, 0)].schedule if self.levels else None
            check_range((launch.scale, *kernel_coefficients(launch.spec)), self.options.dtype,
                        f"a fused product kernel {depth} level(s) down multiplies by", schedule and schedule.span)
            self._kernels.add(launch.spec.name)
            if len(self._kernels) > MAX_FUSED_KERNELS:  # refused as soon as it is known, not after the whole tree
                self._refuse(f"need more than {MAX_FUSED_KERNELS} distinct product kernels (each compiled on first use)")
        return self._launches[key]

    def _refuse(self, why: str) -> None:
        raise TooLarge(f"fused leaves at {len(self.levels)} levels of {self.levels[0].schedule.name} {why}; use fewer "
                         "levels or cublas leaves (with fused leaves, a schedule that adds each product into several C "
                         "blocks multiplies them at every level)")

    def sub(self, statement: Multiply, form: ProblemForm, keys: Keys, plan: LevelPlan, level: int) -> tuple[ProblemForm, Keys]:
        """A statement's sub-problem (:func:`sub_problem`), refused where no leaf could run it."""
        found = sub_problem(statement, form, keys, plan)
        check_sub_problem((found[0].a, found[0].b, found[0].targets), statement, plan.schedule, level, self.options)
        return found

    def node(self, level: int, form: ProblemForm) -> ProblemNode:
        key = (level, form)
        if key not in self._nodes:
            self._nodes[key] = self._build(level, form)
        return self._nodes[key]

    def _build(self, level: int, form: ProblemForm) -> ProblemNode:
        items = [(form, own_keys(form))]
        leaf = self.launch(items, level) if self.fused else None
        if self.flattens(level, 1):
            return ProblemNode(level, form, leaf=leaf, flat=self.flat_table(items, level))
        if level == len(self.levels):
            return ProblemNode(level, form, leaf=leaf)
        plan = self.levels[level].running(form.overwrite)
        zero = form.overwrite and not plan.schedule.overwrites_c
        _single_views(plan, form, level)
        steps = tuple(self._step(step, form, plan, level) if isinstance(step, Stage) else None for step in plan.steps)
        return ProblemNode(level, form, plan, zero, steps, leaf)

    def _step(self, stage: Stage, form: ProblemForm, plan: LevelPlan, level: int) -> ProductStep:
        items = [self.sub(statement, form, own_keys(form), plan, level) for statement in stage.statements]
        forms = tuple(f for f, _ in items)
        if self.flattens(level + 1, len(items)):
            return ProductStep(forms, flat=self.flat_table(items, level + 1))
        children = tuple(self.node(level + 1, f) for f in forms) if level + 1 < len(self.levels) else ()
        return ProductStep(forms, children, self.launch(items, level + 1) if self.fused else None)

    def flat_table(self, roots: Sequence[tuple[ProblemForm, Keys]], start: int) -> tuple[tuple[FlatGroup, ...], ...]:
        """For each depth a flattened run from ``start`` can stop at, its launches."""
        return tuple(self._flat_groups(roots, start, stop) for stop in range(start, len(self.levels) + 1))

    def _flat_groups(self, roots, start: int, stop: int) -> tuple[FlatGroup, ...]:
        groups: dict[tuple[int, str], list] = {}

        def walk(form: ProblemForm, keys: Keys, depth: int) -> None:
            if depth == stop:
                groups.setdefault((depth, "main"), []).append((form, keys))
                return
            for part in PARTS:
                groups.setdefault((depth, part), []).append((form, keys))
            plan = self.levels[depth]
            for stage in plan.steps:
                for statement in stage.statements:
                    walk(*self.sub(statement, form, keys, plan, depth), depth + 1)

        for form, keys in roots:
            walk(form, keys, start)
        return tuple(FlatGroup(depth, part, self.launch(items, depth)) for (depth, part), items in groups.items())


def problem_tree(levels: tuple[LevelPlan, ...], options: Options, prefix: str = "") -> dict[bool, ProblemNode]:
    """The top problem's node, by whether it overwrites C (an overwriting first schedule that splits
    it, or an accumulating one's from-zero plan where a call's C starts at zero); ``prefix`` begins
    every fused kernel's name."""
    builder = _TreeBuilder(levels, options, prefix)
    tops = {False: builder.node(0, TOP)}
    if levels and (levels[0].schedule.overwrites_c or levels[0].from_zero is not None):
        tops[True] = builder.node(0, ProblemForm(TOP.a, TOP.b, TOP.targets, overwrite=True))
    return tops


def all_launches(tops: dict[bool, ProblemNode]) -> tuple[ProductLaunch, ...]:
    """Every fused launch in the tree, each spec once, in a stable order."""
    seen: dict[str, ProductLaunch] = {}
    visited: set[int] = set()

    def add(launch: ProductLaunch | None) -> None:
        if launch is not None:
            seen.setdefault(launch.spec.name, launch)

    def visit(node: ProblemNode) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        add(node.leaf)
        for table in node.flat:
            for group in table:
                add(group.launch)
        for step in node.steps:
            if step is None:
                continue
            add(step.launch)
            for table in step.flat:
                for group in table:
                    add(group.launch)
            for child in step.children:
                visit(child)

    for top in tops.values():
        visit(top)
    return tuple(seen.values())


def _peels(shape, size: tuple[int, int, int]) -> bool:
    return bool(size[0] % shape.m or size[1] % shape.k or size[2] % shape.n)


def launches_for(levels: tuple[LevelPlan, ...], options: Options, top: ProblemNode, dims: tuple[int, int, int]) -> tuple[ProductLaunch, ...]:
    """The fused launches an M×K×N run starting at ``top`` makes: what to compile before timing it."""
    found: dict[str, ProductLaunch] = {}

    def add(launch: ProductLaunch | None) -> None:
        if launch is not None:
            found.setdefault(launch.spec.name, launch)

    def add_flat(table, start: int, size: tuple[int, int, int]) -> None:
        sizes, depth = {start: size}, start
        while depth < len(levels) and recurses(levels[depth], options, *size):
            shape = levels[depth].algorithm.shape
            size = (size[0] // shape.m, size[1] // shape.k, size[2] // shape.n)
            depth += 1
            sizes[depth] = size
        for group in table[depth - start]:
            if group.part == "main" or _peels(levels[group.depth].algorithm.shape, sizes[group.depth]):
                add(group.launch)

    def visit(node: ProblemNode, size: tuple[int, int, int]) -> None:
        if node.flat:
            add_flat(node.flat, node.level, size)
            return
        if node.plan is None or not recurses(node.plan, options, *size):
            add(node.leaf)
            return
        shape = node.plan.algorithm.shape
        if _peels(shape, size):
            add(node.leaf)
        sub = (size[0] // shape.m, size[1] // shape.k, size[2] // shape.n)
        for step in node.steps:
            if step is None:
                continue
            if step.flat:
                add_flat(step.flat, node.level + 1, sub)
            elif step.children and recurses(levels[node.level + 1], options, *sub):
                for child in step.children:
                    visit(child, sub)
            else:
                add(step.launch)

    visit(top, dims)
    return tuple(found.values())
