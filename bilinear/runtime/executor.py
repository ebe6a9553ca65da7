"""Runs a lowered plan on real matrices: recursion, dynamic peeling, α and β, workspace.

A problem is ``targets += (Σ a)(Σ b)`` (or ``=`` when it overwrites): its
operands are sums of views (one view unless the fused default schedule
carries operand sums down the recursion) and it may add into several targets
(products of in-place schedules such as MSMES do).  At each level the largest
part whose dimensions the algorithm's shape divides runs the level's
schedule; the peeled rows and columns are fixed up with leaf products.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from ..ir import Form, Multiply, Stage, parse_block
from ..lower.elementwise import ElementwiseKernel
from ..lower.plan import LAUNCH_PRODUCTS, LevelPlan, Lowered, recurses, top_modes, workspace_bytes, workspace_shapes
from .backend import Backend, LeafProduct, Term, View


@dataclass(frozen=True)
class Problem(LeafProduct):
    """A leaf product that may still be split further."""

    @property
    def dims(self) -> tuple[int, int, int]:
        a, b = self.a[0].view, self.b[0].view
        return a.shape[0], a.shape[1], b.shape[1]

    def sub(self, rows: slice, inner: slice, cols: slice) -> "Problem":
        return Problem(
            tuple(Term(t.coef, t.view[rows, inner]) for t in self.a),
            tuple(Term(t.coef, t.view[inner, cols]) for t in self.b),
            tuple(Term(t.coef, t.view[rows, cols]) for t in self.targets),
            self.overwrite,
        )


def normalized(problem: Problem) -> Problem:
    """Fold the coefficient of a one-view operand into the targets, so library GEMMs see plain views."""
    scale = 1.0
    a, b = problem.a, problem.b
    if len(a) == 1:
        scale *= a[0].coef
        a = (Term(1.0, a[0].view),)
    if len(b) == 1:
        scale *= b[0].coef
        b = (Term(1.0, b[0].view),)
    targets = tuple(Term(t.coef * scale, t.view) for t in problem.targets)
    return Problem(a, b, targets, problem.overwrite)


def _block(view: View, size: tuple[int, int], row: int, col: int) -> View:
    rows, cols = size
    return view[(row - 1) * rows : row * rows, (col - 1) * cols : col * cols]


class Executor:
    """Runs one lowered program on one backend."""

    def __init__(self, lowered: Lowered, backend: Backend):
        self.lowered = lowered
        self.backend = backend
        self.options = lowered.options
        self.workspace: dict[tuple[int, str], View] = {}
        # Called as observer(level, step name, "begin" | "end") around every step (bench's stage times).
        self.observer: Callable[[int, str, str], None] | None = None

    # --- entry --------------------------------------------------------------------------
    def run(self, A: View, B: View, C: View, alpha: float = 1.0, beta: float = 0.0) -> None:
        """``C = alpha·A@B + beta·C``, in place on C."""
        overwrites, _ = top_modes(self.lowered, *_dims(A, B))
        first = self.lowered.levels[0] if overwrites else None
        if overwrites and beta != 0:
            raise ValueError(
                f"{first.schedule.name} computes C = A*B and overwrites C, so beta must be 0 (got {beta}); "
                "use an accumulating schedule such as msmes for beta != 0"
            )
        if not overwrites and beta != 1:
            self.backend.scale(C, beta)
        self.workspace = self._allocate_workspace(*_dims(A, B))
        problem = Problem((Term(1.0, A),), (Term(1.0, B),), (Term(alpha, C),), overwrite=overwrites)
        self.solve(problem, 0)

    def workspace_bytes(self, M: int, K: int, N: int) -> int:
        """Bytes of workspace a product of this size needs (0 for in-place schedules)."""
        return workspace_bytes(self.lowered, M, K, N)

    def _allocate_workspace(self, M: int, K: int, N: int) -> dict[tuple[int, str], View]:
        return {
            key: self.backend.empty(rows, cols, self.options.dtype)
            for key, (rows, cols) in workspace_shapes(self.lowered, M, K, N).items()
        }

    # --- recursion ------------------------------------------------------------------------
    def _recurses(self, plan: LevelPlan, M: int, K: int, N: int) -> bool:
        return recurses(plan, self.options, M, K, N)

    def solve(self, problem: Problem, level: int) -> None:
        problem = normalized(problem)
        if self._flattens(level, 1):
            self._launch(self._flatten(problem, level))
            return
        plan = self.lowered.levels[level] if level < len(self.lowered.levels) else None
        if plan is None or not self._recurses(plan, *problem.dims):
            self.leaf([problem])
            return
        if plan.schedule.overwrites_c and not problem.overwrite:
            plan = plan.accumulate_fallback
        if problem.overwrite and not plan.schedule.overwrites_c:
            for target in problem.targets:
                self.backend.scale(target.view, 0.0)
            problem = replace(problem, overwrite=False)
        M, K, N = problem.dims
        shape = plan.algorithm.shape
        Mm, Km, Nm = M - M % shape.m, K - K % shape.k, N - N % shape.n
        # Peeled rows and columns: before the schedule (it may leave A and B changed until it
        # restores them, or for good), except the K fix-up, which adds into the part the
        # schedule writes and reads only blocks the schedule never touches.
        if Mm < M:
            self.leaf([problem.sub(slice(Mm, M), slice(0, K), slice(0, N))])
        if Nm < N:
            self.leaf([problem.sub(slice(0, Mm), slice(0, K), slice(Nm, N))])
        main = problem.sub(slice(0, Mm), slice(0, Km), slice(0, Nm))
        self.run_schedule(plan, main, level)
        if Km < K:
            self.leaf([replace(problem.sub(slice(0, Mm), slice(Km, K), slice(0, Nm)), overwrite=False)])

    def run_schedule(self, plan: LevelPlan, problem: Problem, level: int) -> None:
        buffers = self._buffers(plan, problem, level)
        for step in plan.steps:
            if self.observer:
                self.observer(level, step.name, "begin")
            if isinstance(step, ElementwiseKernel):
                self.backend.elementwise(step, [self._single_view(buffers, name) for name in step.buffers])
            else:
                self._products(step, buffers, level)
            if self.observer:
                self.observer(level, step.name, "end")

    def _buffers(self, plan: LevelPlan, problem: Problem, level: int) -> dict[str, tuple[Term, ...]]:
        shape = plan.algorithm.shape
        M, K, N = problem.dims
        size = {"A": (M // shape.m, K // shape.k), "B": (K // shape.k, N // shape.n), "C": (M // shape.m, N // shape.n)}
        sources = {"A": problem.a, "B": problem.b, "C": problem.targets}
        buffers: dict[str, tuple[Term, ...]] = {}
        for operand in ("A", "B", "C"):
            for name in shape.blocks(operand):
                _, row, col = parse_block(name)
                buffers[name] = tuple(
                    Term(t.coef, _block(t.view, size[operand], row, col)) for t in sources[operand]
                )
        for temp in plan.schedule.temporaries:
            rows, cols = size[temp.like]
            view = self.workspace[(level, f"{plan.schedule.name}.{temp.name}")][:rows, :cols]
            buffers[temp.name] = (Term(1.0, view),)
        return buffers

    @staticmethod
    def _single_view(buffers: dict[str, tuple[Term, ...]], name: str) -> View:
        """The one view an element-wise statement acts on.

        C blocks may carry a coefficient: the products are scaled by it, and
        element-wise statements on C are linear, so they act on the raw view.
        """
        terms = buffers[name]
        if len(terms) != 1:
            raise ValueError(
                f"an element-wise statement touches {name}, which here is a sum of {len(terms)} views; "
                "use this schedule with a single target (library leaves) or without in-place statements"
            )
        return terms[0].view

    def _products(self, stage: Stage, buffers: dict[str, tuple[Term, ...]], level: int) -> None:
        problems = [self._subproblem(statement, buffers) for statement in stage.statements]
        next_level = level + 1
        if self._flattens(next_level, len(problems)):
            self._launch([leaf for problem in problems for leaf in self._flatten(problem, next_level)])
            return
        nested = next_level < len(self.lowered.levels)
        if nested and all(self._recurses(self.lowered.levels[next_level], *p.dims) for p in problems):
            for problem in problems:
                self.solve(problem, next_level)
        else:
            self.leaf(problems)

    @staticmethod
    def _subproblem(statement: Multiply, buffers: dict[str, tuple[Term, ...]]) -> Problem:
        def combine(form: Form) -> tuple[Term, ...]:
            return tuple(Term(float(c) * t.coef, t.view) for name, c in form.terms for t in buffers[name])

        targets = tuple(
            Term(float(c) * t.coef, t.view) for name, c in statement.targets.terms for t in buffers[name]
        )
        return Problem(combine(statement.left), combine(statement.right), targets, statement.overwrite)

    # --- flattening pure-product levels (fused leaves) ------------------------------------------
    def _flattens(self, level: int, problems: int) -> bool:
        """Whether ``problems`` subtrees from ``level`` down go out flattened: every level only
        accumulates products (the fused default schedule), and their leaf products fit one
        launch.  Then they go out in as few launches as their sizes allow, with one kernel per
        structure instead of one per recursion branch."""
        levels = self.lowered.levels[level:]
        if self.options.leaf != "fused" or not levels or not all(_only_accumulating_products(p) for p in levels):
            return False
        leaves = problems * math.prod(_product_count(plan) for plan in levels)
        return leaves <= LAUNCH_PRODUCTS

    def _flatten(self, problem: Problem, level: int) -> list[Problem]:
        """The leaf products a pure-product subtree computes, peeled parts included."""
        problem = normalized(problem)
        if problem.overwrite:  # the products accumulate: start from zero
            for target in problem.targets:
                self.backend.scale(target.view, 0.0)
            problem = replace(problem, overwrite=False)
        if level >= len(self.lowered.levels) or not self._recurses(self.lowered.levels[level], *problem.dims):
            return [problem]
        plan = self.lowered.levels[level]
        M, K, N = problem.dims
        shape = plan.algorithm.shape
        Mm, Km, Nm = M - M % shape.m, K - K % shape.k, N - N % shape.n
        leaves = [
            problem.sub(slice(Mm, M), slice(0, K), slice(0, N)),
            problem.sub(slice(0, Mm), slice(0, K), slice(Nm, N)),
            problem.sub(slice(0, Mm), slice(Km, K), slice(0, Nm)),
        ]
        buffers = self._buffers(plan, problem.sub(slice(0, Mm), slice(0, Km), slice(0, Nm)), level)
        for stage in plan.steps:
            for statement in stage.statements:
                leaves += self._flatten(self._subproblem(statement, buffers), level + 1)
        return [leaf for leaf in leaves if min(leaf.dims) > 0]

    def _launch(self, leaves: list[Problem]) -> None:
        """One fused launch per leaf size, at most ``LAUNCH_PRODUCTS`` products each."""
        groups: dict[tuple[int, int, int], list[Problem]] = {}
        for leaf in leaves:
            groups.setdefault(leaf.dims, []).append(leaf)
        for group in groups.values():
            for start in range(0, len(group), LAUNCH_PRODUCTS):
                self.leaf(group[start : start + LAUNCH_PRODUCTS])

    # --- leaves -----------------------------------------------------------------------------
    def leaf(self, problems: Sequence[Problem]) -> None:
        problems = [normalized(p) for p in problems]
        if self.options.leaf == "fused":
            self.backend.fused_products(problems, self.options.dtype)
            return
        for problem in problems:
            if len(problem.a) != 1 or len(problem.b) != 1:
                raise ValueError("library GEMM leaves multiply single views; operand sums need the fused leaf")
            for target in problem.targets:
                beta = 0.0 if problem.overwrite else 1.0
                self.backend.gemm(problem.a[0].view, problem.b[0].view, target.view, target.coef, beta)


def _product_count(plan: LevelPlan) -> int:
    return sum(len(step.statements) for step in plan.steps)


def _only_accumulating_products(plan: LevelPlan) -> bool:
    return all(
        isinstance(step, Stage) and all(isinstance(s, Multiply) and not s.overwrite for s in step.statements)
        for step in plan.steps
    ) and not plan.schedule.temporaries


def _dims(A: View, B: View) -> tuple[int, int, int]:
    return A.shape[0], A.shape[1], B.shape[1]
