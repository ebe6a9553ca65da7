"""The C++ host layer of a compiled artifact: ``<name>.h`` and the recursion in ``<name>.cu``.

The host code runs the very launch plan the Python executor runs (the problem tree of
:mod:`bilinear.lower.leaves`): one C++ function per problem node, one per flattened
launch table, one per fused product kernel.  Everything is computed here into plain
dataclasses: the C++ expression of every view (a block of a parent view, a temporary, a
peeled strip), the slot arrays of every fused launch, the element-wise launches' groups;
``host.cu.j2`` only arranges them, and its fixed helpers (a view, cuBLAS calls, zeroing,
workspace) hold no numbers of their own.

Interface (column-major, like ``cublasDgemm`` with ``CUBLAS_OP_N``): ``C = alpha·A·B +
beta·C`` with A m×k, B k×n, C m×n.  Internally it is the row-major product Cᵀ = Bᵀ·Aᵀ.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import Multiply, Stage, Temporary, parse_block
from ..verify.restore_growth import restore_growth
from .elementwise import VECTOR, ElementwiseKernel
from .host_code import (
    BreadthCode,
    ChildCall,
    Condition,
    EwCall,
    EwGroup,
    FlatCase,
    FlatCode,
    FusedCall,
    GemmCall,
    HostDtype,
    KernelCode,
    Leaf,
    NodeCode,
    ProductOp,
    Temp,
)
from .ozaki_host import k_limit_text, k_limits, ozaki_code
from .leaves import FlatGroup, Keys, ProblemForm, ProblemNode, ProductLaunch, own_keys, sub_problem
from .levels import LevelPlan
from .plan import Lowered
from .product import c_literal, default_config, plan_kernel
from .scales import alpha_scale, largest_leaf_scale
from .render import render

BLAS = {"float64": ("double", "cublasDgemm", "cublasDgeam", "dgemm"), "float32": ("float", "cublasSgemm", "cublasSgeam", "sgemm")}
BATCHED = {"float64": "cublasDgemmStridedBatched", "float32": "cublasSgemmStridedBatched"}
SIDES = ("a", "b", "c")
# Row and column dimension arrays (by depth) of each operand's blocks inside a flattened table.
_DIMS = {"A": ("Md", "Kd"), "B": ("Kd", "Nd"), "C": ("Md", "Nd")}
# What each peeled strip shifts, per operand: (row offset, column offset) as C++ in depth g.
_PEEL = {
    "m": {"A": ("Md[{g1}] * {m}", "0"), "B": ("0", "0"), "C": ("Md[{g1}] * {m}", "0")},
    "n": {"A": ("0", "0"), "B": ("0", "Nd[{g1}] * {n}"), "C": ("0", "Nd[{g1}] * {n}")},
    "k": {"A": ("0", "Kd[{g1}] * {k}"), "B": ("Kd[{g1}] * {k}", "0"), "C": ("0", "0")},
    "main": {"A": ("0", "0"), "B": ("0", "0"), "C": ("0", "0")},
}
_PEEL_DIMS = {
    "m": ("Md[{g}] - Md[{g1}] * {m}", "Kd[{g}]", "Nd[{g}]"),
    "n": ("Md[{g1}] * {m}", "Kd[{g}]", "Nd[{g}] - Nd[{g1}] * {n}"),
    "k": ("Md[{g1}] * {m}", "Kd[{g}] - Kd[{g1}] * {k}", "Nd[{g1}] * {n}"),
}


def restores_inputs(lowered: Lowered) -> bool:
    """Whether every in-place schedule it runs restores A and B (one that declares no `restore`
    runs at the top level only, and leaves them changed)."""
    plans = [p for plan in lowered.levels for p in (plan, plan.accumulate_fallback) if p is not None]
    return all(plan.schedule.restores for plan in plans if plan.schedule.inplace)


def writes_inputs(lowered: Lowered) -> bool:
    """Whether some schedule writes A or B blocks (in-place schedules overwrite and restore them)."""
    return levels_write_inputs(lowered.levels)


def levels_write_inputs(levels) -> bool:
    """Whether some of these levels' schedules (their accumulating fallbacks too) write A or B blocks."""
    plans = [p for plan in levels for p in (plan, plan.accumulate_fallback) if p is not None]
    return any(plan.schedule.writes_inputs for plan in plans)


def restore_growth_after(levels, operand: str) -> float:
    """The worst-case restoration error of ``operand`` ('A' or 'B') after these levels ran, outermost
    first, in units of u·max|X| (:mod:`bilinear.verify.restore_growth`, composed from the innermost
    out): a level's plans (its fallbacks too) count by the largest of theirs."""
    below = 0.0
    for plan in reversed(levels):
        below = max(restore_growth(p.schedule, {operand: p.algorithm.shape.blocks(operand)}).bound(operand, below)
                    for p in (plan, plan.accumulate_fallback, plan.from_zero) if p is not None)
    return below


class _Host:
    def __init__(self, lowered: Lowered):
        self.lowered = lowered
        self.nodes: dict[int, NodeCode] = {}
        self.flats: list[FlatCode] = []
        self.kernels: dict[str, KernelCode] = {}
        self.temps: dict[tuple[int, str], int] = {}
        self.temp_list: list[Temp] = []
        self._names: dict[int, str] = {}

    # --- names ---------------------------------------------------------------------------------
    def node_name(self, node: ProblemNode) -> str:
        if id(node) not in self._names:
            self._names[id(node)] = f"node{len(self._names)}"
            self.nodes[id(node)] = self._node(node)
        return self._names[id(node)]

    def kernel(self, launch: ProductLaunch) -> str:
        spec = launch.spec
        if spec.name not in self.kernels:
            plan = plan_kernel(spec, default_config(spec))
            self.kernels[spec.name] = KernelCode(spec.name, (spec.n_a, spec.n_b, spec.n_c), plan.smem_bytes, plan.vec, plan.vec_sides)
        return spec.name

    def temp(self, level: int, plan: LevelPlan, temp: Temporary) -> str:
        """The temporary's workspace slot (``LevelPlan.slots``: a level's plans share them)."""
        key = (level, plan.slots[temp.name])
        first = self.lowered.levels[0]
        # at level 0, an overwriting schedule's and its fallback's own; a from-zero plan's are its plan's
        top = (plan.schedule.name == first.schedule.name and first.schedule.overwrites_c) if level == 0 and \
            first.from_zero is None else None
        if key not in self.temps:
            self.temps[key] = len(self.temp_list)
            rows, cols = {"A": ("bm", "bk"), "B": ("bk", "bn"), "C": ("bm", "bn")}[temp.like]
            self.temp_list.append(Temp(level, rows, cols, top))
        elif self.temp_list[self.temps[key]].top != top:  # the slot of both: whichever runs needs it
            self.temp_list[self.temps[key]] = replace(self.temp_list[self.temps[key]], top=None)
        return f"x.temps[{self.temps[key]}]"

    # --- leaves --------------------------------------------------------------------------------
    def leaf(self, launch: ProductLaunch | None, items, dims: tuple[str, str, str]) -> Leaf:
        """``items``: (form, (a views, b views, c views), overwrite) per product."""
        fused = self.lowered.options.leaf == "fused"
        zero = tuple(v for _, views, overwrite in items if overwrite and fused for v in views[2])
        if fused:
            slots = [[None] * n for n in (launch.spec.n_a, launch.spec.n_b, launch.spec.n_c)]
            for product_slots, (_, views, _) in zip(launch.slots, items, strict=True):
                for side, side_slots, side_views in zip(slots, product_slots, views):
                    for slot, view in zip(side_slots, side_views, strict=True):
                        side[slot] = view
            call = FusedCall(self.kernel(launch), *(tuple(s) for s in slots), c_literal(launch.scale))
            return Leaf(dims, zero, call, ())
        gemms = []
        for form, (a, b, c), overwrite in items:
            if len(a) != 1 or len(b) != 1:
                raise ValueError("library GEMM leaves multiply single views; operand sums need the fused leaf")
            for coef, view in zip(form.targets, c):
                gemms.append(GemmCall(a[0], b[0], view, c_literal(coef), "0" if overwrite else "1"))
        return Leaf(dims, (), None, tuple(gemms))

    # --- nodes ---------------------------------------------------------------------------------
    def _node(self, node: ProblemNode) -> NodeCode:
        form = node.form
        own = tuple(tuple(f"{side}[{i}]" for i in range(n)) for side, n in zip(SIDES, _counts(form)))
        whole = self.leaf(node.leaf, [(form, own, form.overwrite)], ("M", "K", "N"))
        name = self._names[id(node)]
        if node.flat:
            flat = self.flat_function(node.flat, node.level, [(form, own_keys(form), form.overwrite)], own)
            return NodeCode(name, node.level, _counts(form), flat, "false", (1, 1, 1), False, (), (), (), None, whole)
        if node.plan is None:
            return NodeCode(name, node.level, _counts(form), None, "false", (1, 1, 1), False, (), (), (), None, whole)
        shape = node.plan.algorithm.shape
        overwrite = form.overwrite and not node.zero_targets
        peel_views = {part: tuple(tuple(_peeled(v, side, part) for v in views) for side, views in zip("ABC", own))
                      for part in ("m", "n", "k")}
        peels = (
            self.leaf(node.leaf, [(form, peel_views["m"], overwrite)], ("M - Mm", "K", "N")),
            self.leaf(node.leaf, [(form, peel_views["n"], overwrite)], ("Mm", "K", "N - Nm")),
        )
        peel_k = self.leaf(node.leaf, [(form, peel_views["k"], False)], ("Mm", "K - Km", "Nm"))
        buffers, views_of = [], {}
        for side, operand in zip(own, "ABC"):
            rows, cols = {"A": ("bm", "bk"), "B": ("bk", "bn"), "C": ("bm", "bn")}[operand]
            for block in shape.blocks(operand):
                _, row, col = parse_block(block)
                names = []
                for i, view in enumerate(side):
                    # A12_0, and A_1_10_0 where the block's name (A[1,10]) is no C identifier
                    variable = f"{block if block.isidentifier() else f'{operand}_{row}_{col}'}_{i}"
                    buffers.append((variable, f"at({view}, {row - 1}LL * {rows}, {col - 1}LL * {cols})"))
                    names.append(variable)
                views_of[block] = tuple(names)
        for temp in node.plan.schedule.temporaries:
            views_of[temp.name] = (self.temp(node.level, node.plan, temp),)
        ops = []
        for step, lowered_step in zip(node.plan.steps, node.steps):
            if isinstance(step, ElementwiseKernel):
                ops.append(self.elementwise(step, views_of))
            else:
                ops.append(self.products(node, step, lowered_step, views_of))
        return NodeCode(
            name, node.level, _counts(form), None,
            f"M / {shape.m} >= {self.lowered.options.cutoff} && K / {shape.k} >= {self.lowered.options.cutoff} && "
            f"N / {shape.n} >= {self.lowered.options.cutoff}",
            (shape.m, shape.k, shape.n), node.zero_targets, peels, tuple(buffers), tuple(ops), peel_k, whole,
        )

    def elementwise(self, kernel: ElementwiseKernel, views_of) -> EwCall:
        views = [views_of[buffer][0] for buffer in kernel.buffers]  # one each: lowering refused sums of views
        dims = {"A": ("bm", "bk"), "B": ("bk", "bn"), "C": ("bm", "bn")}
        groups = tuple(EwGroup(*dims[g.like], tuple(sorted(set(g.reads) | set(g.writes)))) for g in kernel.groups)
        return EwCall(kernel.name, tuple(views), groups, VECTOR[kernel.dtype][1])

    def products(self, node: ProblemNode, stage: Stage, lowered_step, views_of) -> ProductOp:
        bound = [tuple(tuple(v for name, _ in expr.terms for v in views_of[name]) for expr in (s.left, s.right, s.targets))
                 for s in stage.statements]
        overwrites = [s.overwrite for s in stage.statements]
        next_level = node.level + 1
        dims = ("bm", "bk", "bn")
        if lowered_step.flat:
            roots = [(form, keys, s.overwrite) for form, keys, s in zip(lowered_step.forms, self._keys(node, stage), stage.statements)]
            flat_views = tuple(tuple(v for views in bound for v in views[side]) for side in range(3))
            name = self.flat_function(lowered_step.flat, next_level, roots, flat_views)
            return ProductOp(name, flat_views, (), "false", None)
        children = tuple(
            ChildCall(self.node_name(child), *views) for child, views in zip(lowered_step.children, bound)
        )
        items = list(zip(lowered_step.forms, bound, overwrites))
        check = "false"
        if children:
            shape, cutoff = self.lowered.levels[next_level].algorithm.shape, self.lowered.options.cutoff
            check = f"bm / {shape.m} >= {cutoff} && bk / {shape.k} >= {cutoff} && bn / {shape.n} >= {cutoff}"
        return ProductOp(None, ((), (), ()), children, check, self.leaf(lowered_step.launch, items, dims))

    def _keys(self, node: ProblemNode, stage: Stage) -> list[Keys]:
        return [sub_problem(s, node.form, own_keys(node.form), node.plan)[1] for s in stage.statements if isinstance(s, Multiply)]

    # --- flattened tables ----------------------------------------------------------------------
    def flat_function(self, table, start: int, roots, root_views) -> str:
        """A function launching the table's groups for the depth a run stops at; ``roots`` are
        (form, keys, overwrite) and ``root_views`` the roots' views concatenated per side."""
        name = f"flat{len(self.flats)}"
        self.flats.append(None)  # reserve the index: children never nest flat tables
        index: list[dict] = [{}, {}, {}]
        position = [0, 0, 0]
        zero = []
        for form, keys, overwrite in roots:
            for side in range(3):
                for key in keys[side]:
                    index[side].setdefault(key, position[side])
                    if side == 2 and overwrite:
                        zero.append(f"c[{position[side]}]")
                    position[side] += 1
        cases = []
        for offset, groups in enumerate(table):
            cases.append(FlatCase(start + offset, tuple(self._flat_leaf(group, start, index) for group in groups)))
        self.flats[int(name[4:])] = FlatCode(name, start, tuple(zero), tuple(cases))
        return name

    def _flat_leaf(self, group: FlatGroup, start: int, index) -> Leaf:
        g, levels = group.depth, self.lowered.levels
        if group.part == "main":
            dims = (f"Md[{g}]", f"Kd[{g}]", f"Nd[{g}]")
        else:
            shape = levels[g].algorithm.shape
            dims = tuple(d.format(g=g, g1=g + 1, m=shape.m, k=shape.k, n=shape.n) for d in _PEEL_DIMS[group.part])
        slots = []
        for side, count in enumerate((group.launch.spec.n_a, group.launch.spec.n_b, group.launch.spec.n_c)):
            by_slot: list = [None] * count
            for product_slots, keys in zip(group.launch.slots, group.launch.keys, strict=True):
                for slot, key in zip(product_slots[side], keys[side]):
                    by_slot[slot] = self._address(key, side, index[side], start, g, group.part)
            slots.append(tuple(by_slot))
        call = FusedCall(self.kernel(group.launch), *slots, c_literal(group.launch.scale))
        return Leaf(dims, (), call, ())

    def _address(self, key, side: int, roots: dict, start: int, depth: int, part: str) -> str:
        steps = []
        while key not in roots:
            key, block = key
            steps.append(block)
        view = f"{SIDES[side]}[{roots[key]}]"
        for d, block in enumerate(reversed(steps), start=start):
            operand, row, col = parse_block(block)
            rows, cols = _DIMS[operand]
            view = f"at({view}, {row - 1}LL * {rows}[{d + 1}], {col - 1}LL * {cols}[{d + 1}])"
        operand = "ABC"[side]
        shape = self.lowered.levels[depth].algorithm.shape if part != "main" else None
        row_off, col_off = _PEEL[part][operand]
        if shape is not None:
            row_off = row_off.format(g1=depth + 1, m=shape.m, n=shape.n, k=shape.k)
            col_off = col_off.format(g1=depth + 1, m=shape.m, n=shape.n, k=shape.k)
        if (row_off, col_off) != ("0", "0"):
            view = f"at({view}, {row_off}, {col_off})"
        return view


def _counts(form: ProblemForm) -> tuple[int, int, int]:
    return len(form.a), len(form.b), len(form.targets)


def _peeled(view: str, operand: str, part: str) -> str:
    row, col = {
        "m": {"A": ("Mm", "0"), "B": ("0", "0"), "C": ("Mm", "0")},
        "n": {"A": ("0", "0"), "B": ("0", "Nm"), "C": ("0", "Nm")},
        "k": {"A": ("0", "Km"), "B": ("Km", "0"), "C": ("0", "0")},
    }[part][operand]
    return view if (row, col) == ("0", "0") else f"at({view}, {row}, {col})"


def host_dtype(lowered: Lowered, name: str) -> HostDtype:
    """The host layer of one dtype, with the plans of fewer breadth-first levels a workspace limit
    falls back to."""
    top, *fallbacks = [_host_plan(plan, name, f"_bf{plan.options.breadth}" if plan is not lowered else "")
                       for plan in lowered.with_fallbacks()]
    # the inputs are const only where no plan a call may run writes them (its overlap check then runs
    # whichever plan does), and restored only where every plan that writes them restores them
    return replace(top, fallbacks=tuple(fallbacks), workspace_limit=lowered.options.workspace_limit,
                   const_inputs=all(plan.const_inputs for plan in (top, *fallbacks)),
                   restores_inputs=all(plan.restores_inputs for plan in (top, *fallbacks)),
                   oz_limit_text=k_limit_text(lowered))


def _host_plan(lowered: Lowered, name: str, namespace_suffix: str) -> HostDtype:
    """The host layer of one lowered plan, in the namespace ``<name>_<dtype>_host<namespace_suffix>``."""
    host = _Host(lowered)
    top_acc = host.node_name(lowered.top(False))
    top_ow = host.node_name(lowered.top(True)) if True in lowered.tops else None
    ctype, gemm, geam, suffix = BLAS[lowered.options.dtype]
    return HostDtype(
        function=f"{name}_{suffix}",
        namespace=f"{name}_{lowered.options.dtype}_host{namespace_suffix}",
        dtype=lowered.options.dtype,
        ctype=ctype,
        gemm=gemm,
        geam=geam,
        width=VECTOR[lowered.options.dtype][1],
        levels=tuple((p.algorithm.shape.m, p.algorithm.shape.k, p.algorithm.shape.n) for p in lowered.levels),
        cutoff=lowered.options.cutoff,
        const_inputs=not writes_inputs(lowered),
        restores_inputs=restores_inputs(lowered),
        top_overwrites=top_ow,
        top_accumulates=top_acc,
        top_from_zero=top_ow is not None and not lowered.levels[0].schedule.overwrites_c,
        nodes=tuple(host.nodes.values()),
        flats=tuple(host.flats),
        kernels=tuple(host.kernels.values()),
        temps=tuple(host.temp_list),
        conditions=tuple(Condition(level, f"b{c.have.lower()} == b{c.need.lower()}", c.described(plan.algorithm.shape))
                         for level, plan in enumerate(lowered.levels) for c in plan.shape_conditions),
        breadth=_breadth(lowered),
        direct_leaf=not lowered.levels and lowered.options.leaf != "fused",
        ozaki=ozaki_code(lowered.options, name),
        oz_limits=k_limits(lowered),
        alpha_scale=alpha_scale(largest_leaf_scale(lowered)),
    )


def _breadth(lowered: Lowered) -> BreadthCode | None:
    plan = lowered.breadth
    if plan is None:
        return None
    # ozaki leaves run one after another, sharing the leaf's workspace (as BreadthFirstRunner's)
    batched = lowered.options.launch == "batched" and lowered.options.leaf == "cublas"
    return BreadthCode(plan.split_a.name, plan.split_b.name, plan.merge.name, plan.grid, plan.rank, batched,
                       BATCHED[lowered.options.dtype])


#: What a shape condition's M, K, N are, for the header and the manifest alike.
CONDITION_DIMS = ("M, K, N are the level's problem: at level 1 M = n, K = k, N = m (the row-major C^T = B^T A^T the "
                  "library computes), and at each level below, the blocks of the level above")


def render_header(name: str, hosts: list[HostDtype], comments: tuple[str, ...] = ()) -> str:
    """The header; ``comments``: ``//`` lines after its first two (the sources' header comments)."""
    return render("host.h.j2", name=name, guard=f"BILINEAR_{name}_H", hosts=hosts, condition_dims=CONDITION_DIMS,
                  comments=comments)


def render_host(name: str, hosts: list[HostDtype]) -> str:
    return render("host.cu.j2", name=name, header=f"{name}.h", hosts=hosts)

