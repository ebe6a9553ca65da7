"""Breadth-first levels: the innermost levels of a product run as one Kronecker power.

With ``b`` breadth-first levels of algorithms ⟨m_i,k_i,n_i;R_i⟩ the operands are
cut into a grid of (Π m_i)×(Π k_i) A blocks and (Π k_i)×(Π n_i) B blocks, and
the R = Π R_i products of the Kronecker power (:mod:`bilinear.lower.decompose`)
run from workspace:

1. ``split`` A: one kernel reads every A block once and writes all R left
   operands ``S_r = Σ u_r·A_blk`` (the same for B: ``T_r``);
2. the R leaf GEMMs ``P_r = S_r·T_r`` (one library call each, or one batched call);
3. ``merge``: one kernel reads the R products once and writes every C block,
   ``C_blk = α·Σ w_r·P_r + β·C_blk``.

Depth-first recursion (OpenCL/K-G-I report, §"iterative") instead moves every
level's sums through memory separately; here each matrix crosses memory once
per pass however many levels the power spans, and the host issues four
launches plus the leaf GEMMs.  The price is workspace, R·(m'k' + k'n' + m'n')
elements for leaf blocks of m'×k'×n', which :func:`workspace_elements` states
so the planner can keep it within a budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..ir import Algorithm, Span
from .decompose import Coefficients, Decomposition, breadth_first, compose, one_step
from .elementwise import CTYPES, VECTOR, _literal
from .leaves import ProblemForm, ProblemNode
from .levels import check_range
from .options import MAX_BREADTH_PRODUCTS, MAX_BREADTH_TERMS, TooLarge
from .render import render

Terms = tuple[tuple[int, Fraction], ...]  # (flat input index, exact coefficient)

# A vector path moves 2 doubles (4 floats) per load, so it holds twice the registers; past
# this many live inputs (or products read per output) it would spill, and its code doubles
# NVRTC's time, so only the scalar path is generated.
VECTOR_INPUTS = 16


@dataclass(frozen=True)
class SplitKernel:
    """``out[r] = Σ coef·block[i]`` for every output r: the blocks of a grid_rows×grid_cols grid."""

    name: str
    dtype: str
    grid_rows: int
    grid_cols: int
    outputs: tuple[Terms, ...]

    @property
    def inputs(self) -> tuple[int, ...]:
        """The grid blocks some output reads (flat, row-major), each once."""
        return tuple(sorted({index for terms in self.outputs for index, _ in terms}))


@dataclass(frozen=True)
class MergeKernel:
    """``C[q] = α·Σ coef·P[r] + β·C[q]`` for every block q of a grid_rows×grid_cols grid of C."""

    name: str
    dtype: str
    grid_rows: int
    grid_cols: int
    products: int
    outputs: tuple[Terms, ...]  # per C block (flat, row-major): (product index, coefficient)


@dataclass(frozen=True)
class BreadthFirst:
    """Everything breadth-first levels need: the power, and its three kernels."""

    decomposition: Decomposition
    dtype: str
    split_a: SplitKernel
    split_b: SplitKernel
    merge: MergeKernel
    algorithms: tuple[Algorithm, ...] = ()  # per level, outermost first

    @property
    def schemes(self) -> tuple[tuple[str, tuple[int, int, int]], ...]:
        """Per level, outermost first: its algorithm's name and ⟨m,k,n⟩."""
        return tuple((a.name, (a.shape.m, a.shape.k, a.shape.n)) for a in self.algorithms)

    @property
    def grid(self) -> tuple[int, int, int]:
        d = self.decomposition
        return d.rows, d.inner, d.cols

    @property
    def rank(self) -> int:
        return self.decomposition.rank

    @property
    def terms(self) -> int:
        """Terms of the three kernels' sums, each a line of unrolled code (what building them takes)."""
        return sum(len(terms) for kernel in (self.split_a, self.split_b, self.merge) for terms in kernel.outputs)

    def main_dims(self, M: int, K: int, N: int) -> tuple[int, int, int]:
        """The largest part of an M×K×N product the grid divides."""
        gm, gk, gn = self.grid
        return M - M % gm, K - K % gk, N - N % gn

    def leaf_dims(self, M: int, K: int, N: int) -> tuple[int, int, int]:
        gm, gk, gn = self.grid
        Mm, Km, Nm = self.main_dims(M, K, N)
        return Mm // gm, Km // gk, Nm // gn

    def workspace_elements(self, M: int, K: int, N: int) -> int:
        """Workspace elements for an M×K×N product: every product's two operands and its result."""
        m, k, n = self.leaf_dims(M, K, N)
        return self.rank * (m * k + k * n + m * n)

    def kernels(self) -> tuple[SplitKernel | MergeKernel, ...]:
        return (self.split_a, self.split_b, self.merge)


def _flat(coefficients: Coefficients, cols: int) -> Terms:
    return tuple(sorted((row * cols + col, coef) for (row, col), coef in coefficients))


def power(algorithms: tuple[Algorithm, ...]) -> Decomposition:
    """The Kronecker power of verified algorithms, outermost first (one per breadth-first level)."""
    if not algorithms:
        raise ValueError("breadth-first levels need at least one algorithm")
    if len(set(algorithms)) == 1:
        return breadth_first(algorithms[0], len(algorithms))
    total = one_step(algorithms[0])
    for algorithm in algorithms[1:]:
        total = compose(total, one_step(algorithm))
    return total


def lower_breadth_first(algorithms: tuple[Algorithm, ...], dtype: str, prefix: str) -> BreadthFirst:
    """The breadth-first plan of ``algorithms`` (the innermost levels, outermost first).

    Raises:
        TooLarge: past MAX_BREADTH_PRODUCTS products in the batch, before any of it is built.
    """
    if (products := math.prod(algorithm.rank for algorithm in algorithms)) > MAX_BREADTH_PRODUCTS:
        raise TooLarge(f"{len(algorithms)} breadth-first levels of {algorithms[0].name} run {products} products in one "
                       f"batch, more than {MAX_BREADTH_PRODUCTS} (lowering them would take minutes and gigabytes); use "
                       "fewer breadth-first levels")
    d = power(algorithms)
    tag = f"{prefix}_{dtype}_bf{len(algorithms)}"  # a .cu holds both element types: one extern "C" name each
    split_a = SplitKernel(f"{tag}_split_a", dtype, d.rows, d.inner, tuple(_flat(p.u, d.inner) for p in d.products))
    split_b = SplitKernel(f"{tag}_split_b", dtype, d.inner, d.cols, tuple(_flat(p.v, d.cols) for p in d.products))
    into: list[list[tuple[int, Fraction]]] = [[] for _ in range(d.rows * d.cols)]
    for r, product in enumerate(d.products):
        for index, coef in _flat(product.w, d.cols):
            into[index].append((r, coef))
    merge = MergeKernel(f"{tag}_merge", dtype, d.rows, d.cols, d.rank, tuple(tuple(terms) for terms in into))
    # the Kronecker power multiplies the levels' coefficients: in range one by one, maybe not together
    check_range((coef for kernel in (split_a, split_b, merge) for terms in kernel.outputs for _, coef in terms), dtype,
                f"{len(algorithms)} breadth-first level(s) of {algorithms[0].name} multiply by", algorithms[0].span)
    return BreadthFirst(d, dtype, split_a, split_b, merge, algorithms)


def check_under(plan: BreadthFirst, tops: dict[bool, ProblemNode], span: Span | None) -> None:
    """Refuse breadth-first levels under the depth-first ones of the problem tree ``tops``: a leaf
    GEMM scales its products by its form's targets (normalized: library GEMMs see plain views),
    and the merge multiplies by its coefficients too, in range one by one, maybe not together
    (2^-70 · 2^-70 in float32 made the library's products NaN)."""
    scales = {abs(coef) for form in _problem_forms(tops) for coef in form.normalized().targets if coef}
    merges = {abs(coef) for terms in plan.merge.outputs for _, coef in terms if coef}
    if scales and merges:
        check_range((max(scales) * max(merges), min(scales) * min(merges)), plan.dtype,
                    "depth-first levels' coefficients times those of the breadth-first level(s) below them multiply by",
                    span)


def _problem_forms(tops: dict[bool, ProblemNode]) -> set[ProblemForm]:
    """Every problem form in the tree: those a leaf GEMM may run (a node's, or a peeled strip of
    it; a step's, where its sub-problems do not recurse)."""
    forms: set[ProblemForm] = set()
    visited: set[int] = set()

    def visit(node: ProblemNode) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        forms.add(node.form)
        for step in node.steps:
            if step is not None:
                forms.update(step.forms)
                for child in step.children:
                    visit(child)

    for top in tops.values():
        visit(top)
    return forms


# --- rendering ---------------------------------------------------------------------------


def _signed(terms: Terms, dtype: str) -> list[dict]:
    """Sign and magnitude of each term, so the template writes ``- x`` rather than ``+ -1.0 * x``."""
    return [
        {"index": i, "sign": "-" if c < 0 else "+", "scale": None if abs(c) == 1 else _literal(abs(c), dtype)}
        for i, c in terms
    ]


def check_buildable(plan: BreadthFirst, remedy: str = "use fewer breadth-first levels") -> None:
    """Refuse kernels too large to build in minutes (:data:`MAX_BREADTH_TERMS`), saying ``remedy``.

    Raises:
        TooLarge: past MAX_BREADTH_TERMS terms.
    """
    if plan.terms > MAX_BREADTH_TERMS:
        raise TooLarge(f"{plan.decomposition.name}'s breadth-first split and merge kernels have {plan.terms} terms, "
                       f"more than {MAX_BREADTH_TERMS}: nvcc or NVRTC would take many minutes to build them (they are "
                       f"unrolled); {remedy}")


def render_breadth_first(plan: BreadthFirst, linkage: str = 'extern "C"') -> str:
    """CUDA source of the three kernels (compiles with nvcc and NVRTC); ``linkage``: see
    :meth:`~bilinear.lower.plan.Lowered.cuda_source`.

    Raises:
        TooLarge: for kernels too large to build (:func:`check_buildable`).
    """
    check_buildable(plan)
    vector, width, components = VECTOR[plan.dtype]
    splits = [
        {
            "name": k.name,
            "grid_cols": k.grid_cols,
            "inputs": [{"index": i, "row": i // k.grid_cols, "col": i % k.grid_cols} for i in k.inputs],
            "outputs": [_signed(terms, k.dtype) for terms in k.outputs],
            "vector": len(k.inputs) <= VECTOR_INPUTS,
        }
        for k in (plan.split_a, plan.split_b)
    ]
    merge = plan.merge
    merges = [
        {"row": q // merge.grid_cols, "col": q % merge.grid_cols, "terms": _signed(terms, merge.dtype)}
        for q, terms in enumerate(merge.outputs)
    ]
    return render(
        "breadth.cu.j2",
        linkage=linkage,
        ctype=CTYPES[plan.dtype],
        vector=vector,
        width=width,
        components=components,
        splits=splits,
        merge={"name": merge.name, "outputs": merges,
               "vector": max(len(terms) for terms in merge.outputs) * len(merge.outputs) <= VECTOR_INPUTS**2},
    )
