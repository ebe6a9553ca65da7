"""Runs a lowered plan on real matrices: it walks the problem tree lowering built and binds views.

A problem's views (:class:`Bound`) are listed in the order of its node's form,
which holds their exact coefficients; everything about kernels (which launch,
which slot a view binds, the coefficients) was decided by lowering
(:mod:`bilinear.lower.leaves`).  What is left for run time depends on sizes:
at each level the largest part whose dimensions the algorithm's shape divides
runs the level's schedule, the peeled rows and columns are fixed up with leaf
products, and recursion stops where blocks would be too small.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..ir import Form, Multiply, parse_block
from ..lower.elementwise import ElementwiseKernel
from ..lower.host import writes_inputs
from ..lower.leaves import PARTS, FlatGroup, ProblemForm, ProblemNode, ProductLaunch
from ..lower.options import LEAF_KINDS
from ..lower.scales import largest_leaf_scale
from ..lower.plan import LevelPlan, Lowered, call_workspace_bytes, leaf_shapes, recurses, top_modes, workspace_shapes
from ..processes import stops_held
from .backend import Backend, View
from .breadth import BreadthFirstRunner
from .views import spans_meet
from .leaf_kinds import leaf_gemm, leaf_workspace_bytes


@dataclass(frozen=True)
class Bound:
    """The views of a problem ``targets += (Σ a)(Σ b)``, in its form's order."""

    a: tuple[View, ...]
    b: tuple[View, ...]
    c: tuple[View, ...]

    @property
    def dims(self) -> tuple[int, int, int]:
        a, b = self.a[0], self.b[0]
        return a.shape[0], a.shape[1], b.shape[1]

    def sub(self, rows: slice, inner: slice, cols: slice) -> Bound:
        return Bound(
            tuple(v[rows, inner] for v in self.a),
            tuple(v[inner, cols] for v in self.b),
            tuple(v[rows, cols] for v in self.c),
        )

    def peeled(self, part: str, shape) -> Bound:
        """A strip an odd size leaves: rows below the split part ("m"), columns right of it
        ("n"), or the inner dimension beyond it ("k")."""
        M, K, N = self.dims
        Mm, Km, Nm = M - M % shape.m, K - K % shape.k, N - N % shape.n
        if part == "m":
            return self.sub(slice(Mm, M), slice(0, K), slice(0, N))
        if part == "n":
            return self.sub(slice(0, Mm), slice(0, K), slice(Nm, N))
        if part == "k":
            return self.sub(slice(0, Mm), slice(Km, K), slice(0, Nm))
        return self.sub(slice(0, Mm), slice(0, Km), slice(0, Nm))


def _block(view: View, size: tuple[int, int], row: int, col: int) -> View:
    rows, cols = size
    return view[(row - 1) * rows : row * rows, (col - 1) * cols : col * cols]


class Executor:
    """Runs one lowered program on one backend."""

    def __init__(self, lowered: Lowered, backend: Backend):
        self.lowered = lowered
        self.backend = backend
        self.options = lowered.options
        self.leaf = leaf = leaf_gemm(self.options, backend)  # single-view leaves: the leaf kind's GEMM
        self.alpha = 1.0
        self.largest_leaf_scale = largest_leaf_scale(lowered)  # what alpha may be multiplied by (alpha_refusal)
        self.workspace: dict[tuple[int, str], View] = {}
        # The GEMM library's own workspace for this plan's graphs, by handle (cuBLAS's: graphs.py); not
        # counted as held workspace (matmul reuses that for the schedule's, which cannot use this)
        self.graph_gemm_workspace: dict[int, View] = {}
        self._last_dims: tuple[int, int, int] | None = None  # the last call's M, K, N
        # Called as observer(level, step name, "begin" | "end") around every step (bench's stage times).
        self.observer: Callable[[int, str, str], None] | None = None
        # Single-view leaves: the leaf kind's GEMM, or the innermost levels breadth-first with it under them.
        self.breadth = (
            BreadthFirstRunner(lowered.breadth, backend, self.options.cutoff, leaf, self.options.launch)
            if lowered.breadth else None
        )
        self.gemm = self.breadth or leaf

    # --- entry --------------------------------------------------------------------------
    def run(self, A: View, B: View, C: View, alpha: float = 1.0, beta: float = 0.0) -> None:
        """``C = alpha·A@B + beta·C``, in place on C."""
        dims = _dims(A, B)
        if dims != self._last_dims:
            # A new shape: the leaf's kept buffer (the Ozaki leaf's) goes, as the schedule's own
            # workspace does, so the leaves of this shape size it anew.  Never within a call.  The
            # breadth-first runner's stays: its views of each leaf size are kept while the buffer
            # holds them (shapes that alternate had allocated it on every call, and their graphs
            # had gone stale).
            getattr(self.leaf, "release", lambda: None)()
            self._last_dims = dims
        # Everything the call allocates, before anything is written: a failed allocation (out of
        # device memory) then leaves A, B and C as they were, an in-place schedule's A and B too.
        self.workspace = self._allocate_workspace(*dims)
        self._reserve_leaves(*dims)
        if not self.lowered.levels and self.options.leaf != "fused":
            self.gemm(A, B, C, alpha, beta)  # no depth-first level: the leaf takes beta itself
            return
        # beta is 0 where the schedule overwrites (CompiledProduct); where C starts at zero, an
        # accumulating one runs its from-zero plan, and C needs no zeroing
        overwrites, _ = top_modes(self.lowered, *dims, beta)
        if not overwrites and beta != 1:
            self.backend.scale(C, beta)
        self.alpha = alpha
        if not writes_inputs(self.lowered):
            self.solve(self.lowered.top(overwrites), Bound((A,), (B,), (C,)))
            return
        # An in-place schedule restores A and B in its last stages: Ctrl-C waits for them (in the middle,
        # it had left the caller's A and B transformed), and an error raised before them says so.
        with stops_held():
            try:
                self.solve(self.lowered.top(overwrites), Bound((A,), (B,), (C,)))
            except Exception as error:
                error.add_note(f"{self.lowered.name} overwrites A and B in place and restores them in its last stages: "
                               "this call stopped before those ran, so A and B may no longer hold their values")
                raise

    def last_ran(self, M: int, K: int, N: int) -> bool:
        """Whether the last call was M×K×N (its workspace then serves this one as it is)."""
        return self._last_dims == (M, K, N)

    def workspace_bytes(self, M: int, K: int, N: int) -> int:
        """Bytes of workspace a product of this size needs (0 for in-place schedules with library leaves):
        breadth-first levels hold three buffers, each as large as the largest any leaf GEMM of the call
        splits into (not the largest one leaf's three: a hybrid's strips split too)."""
        # the temporaries, the breadth-first buffers (none without them), and the Ozaki leaf's, which its GEMMs share
        return call_workspace_bytes(self.lowered, M, K, N) + leaf_workspace_bytes(self.lowered, self.leaf, M, K, N)

    @property
    def leaf_takes_budget(self) -> bool:
        """Whether its leaf GEMM runs in tiles of C that fit a budget (the Ozaki leaf's)."""
        return hasattr(self.leaf, "budget")

    def leaf_budget(self, room: int | None) -> bool:
        """Give the leaf GEMM ``room`` device bytes (the Ozaki leaf then runs in tiles of C that fit;
        None: no budget, all of C at once); False where the leaf kind takes no budget."""
        if not self.leaf_takes_budget:
            return False
        self.leaf.budget = room
        return True

    def release_leaf(self) -> None:
        """Let the leaves' kept buffers go (the breadth-first runner's and the Ozaki leaf's workspace,
        and the library's for graphs)."""
        for gemm in (self.breadth, self.leaf):
            getattr(gemm, "release", lambda: None)()
        self.graph_gemm_workspace = {}

    def _reserve_leaves(self, M: int, K: int, N: int) -> None:
        """Allocate now the buffers the leaf GEMMs of an M×K×N call take on first use (of every
        strip and leaf shape: they grow to the largest, and a call then allocates none)."""
        if (reserve := getattr(self.gemm, "reserve", None)) is not None:
            for dims in leaf_shapes(self.lowered, M, K, N):
                reserve(*dims)

    def leaf_buffers(self) -> tuple:
        """Device buffers the leaf GEMM keeps between calls (the Ozaki leaf's workspace), which a
        captured graph writes and so holds."""
        return getattr(self.leaf, "buffers", tuple)()

    def _allocate_workspace(self, M: int, K: int, N: int) -> dict[tuple[int, str], View]:
        """The temporaries of this size: the last call's when they have the same shapes (so a
        captured graph's workspace stays where the graph writes it), else new ones."""
        shapes = workspace_shapes(self.lowered, M, K, N)
        if {key: view.shape for key, view in self.workspace.items()} == shapes:
            return self.workspace
        self.workspace = {}  # the old ones go before the new are allocated: never both held
        return {key: self.backend.empty(rows, cols, self.options.dtype) for key, (rows, cols) in shapes.items()}

    # --- recursion ------------------------------------------------------------------------
    def _recurses(self, level: int, dims: tuple[int, int, int]) -> bool:
        levels = self.lowered.levels
        return level < len(levels) and recurses(levels[level], self.options, *dims)

    def solve(self, node: ProblemNode, problem: Bound) -> None:
        if node.flat:
            self._flat([(problem, node.form.overwrite)], node.level, node.flat)
            return
        if node.plan is None or not self._recurses(node.level, problem.dims):
            self._leaves(node.leaf, [(node.form, problem, node.form.overwrite)])
            return
        if node.zero_targets:
            for view in problem.c:
                self.backend.scale(view, 0.0)
        overwrite = node.form.overwrite and not node.zero_targets
        shape = node.plan.algorithm.shape
        # Peeled rows and columns: before the schedule (it may leave A and B changed until it
        # restores them, or for good), except the K fix-up, which adds into the part the
        # schedule writes and reads only blocks the schedule never touches.
        for part in ("m", "n"):
            self._leaves(node.leaf, [(node.form, problem.peeled(part, shape), overwrite)])
        self.run_schedule(node, problem.peeled("main", shape))
        self._leaves(node.leaf, [(node.form, problem.peeled("k", shape), False)])

    def run_schedule(self, node: ProblemNode, problem: Bound) -> None:
        plan, level = node.plan, node.level
        buffers = self._buffers(plan, problem, level)
        for step, lowered_step in zip(plan.steps, node.steps):
            if self.observer:
                self.observer(level, step.name, "begin")
            if isinstance(step, ElementwiseKernel):
                self.backend.elementwise(step, [self._single_view(buffers, name) for name in step.buffers])
            else:
                bound = [self._child(statement, buffers) for statement in step.statements]
                overwrites = [statement.overwrite for statement in step.statements]
                if lowered_step.flat:
                    self._flat(list(zip(bound, overwrites)), level + 1, lowered_step.flat)
                elif lowered_step.children and all(self._recurses(level + 1, b.dims) for b in bound):
                    for child, sub in zip(lowered_step.children, bound):
                        self.solve(child, sub)
                else:
                    self._leaves(lowered_step.launch, list(zip(lowered_step.forms, bound, overwrites)))
            if self.observer:
                self.observer(level, step.name, "end")

    def _buffers(self, plan: LevelPlan, problem: Bound, level: int) -> dict[str, tuple[View, ...]]:
        shape = plan.algorithm.shape
        M, K, N = problem.dims
        size = {"A": (M // shape.m, K // shape.k), "B": (K // shape.k, N // shape.n), "C": (M // shape.m, N // shape.n)}
        sources = {"A": problem.a, "B": problem.b, "C": problem.c}
        buffers: dict[str, tuple[View, ...]] = {}
        for operand in ("A", "B", "C"):
            for name in shape.blocks(operand):
                _, row, col = parse_block(name)
                buffers[name] = tuple(_block(view, size[operand], row, col) for view in sources[operand])
        for temp in plan.schedule.temporaries:
            rows, cols = size[temp.like]
            buffers[temp.name] = (self.workspace[(level, plan.slots[temp.name])][:rows, :cols],)
        return buffers

    @staticmethod
    def _single_view(buffers: dict[str, tuple[View, ...]], name: str) -> View:
        """The one view an element-wise statement acts on (lowering refused a level where an operand
        it touches is a sum of views: ``lower.leaves._single_views``).  C blocks may carry a
        coefficient: element-wise statements act on the raw view (see ``lower.leaves.sub_problem``)."""
        (view,) = buffers[name]
        return view

    @staticmethod
    def _child(statement: Multiply, buffers: dict[str, tuple[View, ...]]) -> Bound:
        """A statement's sub-problem, its views in the order ``lower.leaves.sub_problem`` gives their form."""

        def views(form: Form) -> tuple[View, ...]:
            return tuple(view for name, _ in form.terms for view in buffers[name])

        return Bound(views(statement.left), views(statement.right), views(statement.targets))

    # --- flattened pure-product subtrees (fused leaves) ------------------------------------------
    def _flat(self, roots: list[tuple[Bound, bool]], start: int, table: tuple[tuple[FlatGroup, ...], ...]) -> None:
        """Every leaf product of the subtrees under ``roots``, one launch per lowered group."""
        for problem, overwrite in roots:
            if overwrite:  # the products accumulate: start from zero
                for view in problem.c:
                    self.backend.scale(view, 0.0)
        dims, stop = roots[0][0].dims, start
        while self._recurses(stop, dims):
            shape = self.lowered.levels[stop].algorithm.shape
            dims = (dims[0] // shape.m, dims[1] // shape.k, dims[2] // shape.n)
            stop += 1
        groups: dict[tuple[int, str], list[Bound]] = {}

        def walk(problem: Bound, depth: int) -> None:
            if depth == stop:
                groups.setdefault((depth, "main"), []).append(problem)
                return
            plan = self.lowered.levels[depth]
            for part in PARTS:
                groups.setdefault((depth, part), []).append(problem.peeled(part, plan.algorithm.shape))
            buffers = self._buffers(plan, problem.peeled("main", plan.algorithm.shape), depth)
            for stage in plan.steps:
                for statement in stage.statements:
                    walk(self._child(statement, buffers), depth + 1)

        for problem, _ in roots:
            walk(problem, start)
        for group in table[stop - start]:
            self._launch(group.launch, groups[(group.depth, group.part)])

    # --- leaves -----------------------------------------------------------------------------
    def _leaves(self, launch: ProductLaunch | None, items: Sequence[tuple[ProblemForm, Bound, bool]]) -> None:
        """Leaf products: one fused launch for all of them, or a library GEMM per target."""
        M, K, N = items[0][1].dims
        if M == 0 or N == 0 or (K == 0 and not any(overwrite for _, _, overwrite in items)):
            return  # nothing to write
        if LEAF_KINDS[self.options.leaf].sums:
            for _, problem, overwrite in items:  # the kernel only accumulates
                if overwrite:
                    for view in problem.c:
                        self.backend.scale(view, 0.0)
            self._launch(launch, [problem for _, problem, _ in items])
            return
        calls = []
        for form, problem, overwrite in items:
            if len(problem.a) != 1 or len(problem.b) != 1:
                raise ValueError("library GEMM leaves multiply single views; operand sums need the fused leaf")
            calls.append(self._statement(form, problem, overwrite))
        # Concurrent only with the backend's own GEMM: a breadth-first runner or an Ozaki leaf
        # reuses one workspace from call to call.
        library = self.gemm == self.backend.gemm
        if self.options.launch != "serial" and library and _apart([view for _, problem, _ in items for view in problem.c]):
            self.backend.concurrently(calls)
        else:
            for call in calls:
                call()

    def _statement(self, form: ProblemForm, problem: Bound, overwrite: bool) -> Callable[[], None]:
        """One leaf statement's GEMMs (one per target), as a call to issue now or on a stream."""
        scales = [self.alpha * float(coef) for coef in form.targets]

        def call() -> None:
            for scale, view in zip(scales, problem.c):
                self.gemm(problem.a[0], problem.b[0], view, scale, 0.0 if overwrite else 1.0)

        return call

    def _launch(self, launch: ProductLaunch, problems: Sequence[Bound]) -> None:
        """Bind each problem's views to the launch's slots and launch it (nothing to add when α is 0)."""
        M, K, N = problems[0].dims
        if min(M, K, N) == 0 or self.alpha == 0:
            return
        spec = launch.spec
        views: tuple[list, list, list] = ([None] * spec.n_a, [None] * spec.n_b, [None] * spec.n_c)
        for slots, problem in zip(launch.slots, problems, strict=True):
            for side, side_slots, side_views in zip(views, slots, (problem.a, problem.b, problem.c)):
                for slot, view in zip(side_slots, side_views, strict=True):
                    side[slot] = view
        self.backend.fused(launch, views, (M, N, K), self.alpha * float(launch.scale))


def _apart(views: Sequence[View]) -> bool:
    """Whether no two target views share memory, so their statements may run concurrently: by
    byte ranges, so column blocks of one C (C11 beside C12) run one after another, as measured."""
    return not any(spans_meet(x, y) for i, x in enumerate(views) for y in views[i + 1 :])


def _dims(A: View, B: View) -> tuple[int, int, int]:
    return A.shape[0], A.shape[1], B.shape[1]
