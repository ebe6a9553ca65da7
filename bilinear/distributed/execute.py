"""Running a verified plan on one rank: operand sums, local products, partial C, reduction.

Each rank

1. has A and B (replicated, or broadcast from rank 0),
2. for each of its tasks forms the operand sums of its product band (a view
   of A or B itself where the sum is one block with coefficient 1 and the
   local product does not write its inputs), multiplies them with the
   single-GPU runtime (any scheme, levels and leaf: msmes, rsmm, cuBLAS or
   fused leaves), and adds the result with its weights into its partial C
   (straight from the GEMM when the product has one target),
3. computes its fringe products into its partial C, and
4. sums the partials into the output layout (an all-reduce, or a reduction
   to rank 0).

The partials start as β·C where a rank holds C (rank 0's copy when C is
whole, each rank's own block in the 2D layout) and as zero elsewhere, so the
sum is ``αA·B + βC``.  Workspace is allocated once per call and counted in
:func:`workspace_bytes`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from .comm import Comm
from .plan import Plan


@dataclass
class Local:
    """The single-GPU products a rank runs: the product itself and the classical one for fringes."""

    product: Any  # a CompiledProduct (or any f(A, B, out=, alpha=, beta=))
    classical: Any
    writes_inputs: bool  # an in-place schedule: never hand it views of A or B
    growth: float = 1.0  # the local levels' error growth over the classical product's, at every level asked for
    name: str = "cuBLAS"
    levels: int = 0  # asked for: a product recurses through fewer where its blocks get too small
    accumulates: bool = True  # False for schedules that compute C = A·B (beta must be 0): use the product buffer


_BAND_ROWS = 64  # rows of a NumPy operand sum's scaled term at a time


@functools.cache
def _combine_kernel(arity: int, accumulate: bool):
    """``y (+)= Σ c_i·x_i`` as one CuPy element-wise kernel (no temporaries, any strides)."""
    import cupy

    inputs = ", ".join([f"T x{i}" for i in range(arity)] + [f"T c{i}" for i in range(arity)])
    body = " + ".join(f"c{i} * x{i}" for i in range(arity))
    return cupy.ElementwiseKernel(
        inputs,
        "T y",
        f"y = {'y + ' if accumulate else ''}{body}",
        f"bilinear_combine{arity}{'a' if accumulate else ''}",
    )


def combine(xp: Any, out: Any, terms: list[tuple[float, Any]], accumulate: bool) -> None:
    """``out = Σ c·x`` (or ``out += Σ c·x``) over same-shaped views."""
    if out.size == 0:
        return
    if xp.__name__ == "cupy":
        coefs = [xp.asarray(c, dtype=out.dtype) for c, _ in terms]
        _combine_kernel(len(terms), accumulate)(*[x for _, x in terms], *coefs, out)
        return
    for n, (coef, x) in enumerate(terms):
        if n == 0 and not accumulate:
            xp.multiply(x, coef, out=out)
        elif coef in (1, -1):
            (xp.add if coef == 1 else xp.subtract)(out, x, out=out)
        else:  # in bands of rows: c·x whole is a temporary the size of a block, beyond the workspace counted
            for start in range(0, out.shape[0], _BAND_ROWS):
                rows = slice(start, start + _BAND_ROWS)
                out[rows] += coef * x[rows]


class RankProgram:
    """One rank's share of a plan, bound to its local products and communicator."""

    def __init__(self, plan: Plan, comm: Comm, local: Local):
        self.plan, self.comm, self.local, self.xp = plan, comm, local, comm.xp
        self.rank = comm.rank

    # views -----------------------------------------------------------------

    def _block(self, matrix: Any, i: int, j: int, rows: int, cols: int, band: tuple[int, int] | None = None) -> Any:
        start, stop = band if band is not None else (0, rows)
        return matrix[i * rows + start : i * rows + stop, j * cols : (j + 1) * cols]

    def _operand(self, matrix: Any, coefficients, rows: int, cols: int, band, buffer: Any) -> Any:
        """Σ c·block (band rows of each block), as a view of ``matrix`` where that is safe, else in ``buffer``."""
        if len(coefficients) == 1 and coefficients[0][1] == 1 and not self.local.writes_inputs:
            (i, j), _ = coefficients[0]
            return self._block(matrix, i, j, rows, cols, band)
        height = (band[1] - band[0]) if band is not None else rows
        out = buffer[:height, :cols]
        terms = [(float(c), self._block(matrix, i, j, rows, cols, band)) for (i, j), c in coefficients]
        combine(self.xp, out, terms, accumulate=False)
        return out

    # the work ----------------------------------------------------------------

    def _task(self, task, A, B, C, alpha: float, buffers) -> None:
        plan = self.plan
        product = plan.decomposition.products[task.product]
        rows, inner, cols = plan.block
        band = plan.task_rows(task)
        if not _runs(plan, task):
            return
        U = self._operand(A, product.u, rows, inner, band, buffers.get("U"))
        V = self._operand(B, product.v, inner, cols, None, buffers.get("V"))
        targets = [(float(w), self._block(C, i, c, rows, cols, band)) for (i, c), w in product.w]
        if self.local.accumulates and (len(targets) == 1 or self.local.writes_inputs):
            self._accumulate_in_place(U, V, targets, alpha)
            return
        M = buffers["M"][: band[1] - band[0], :cols]
        self.local.product(U, V, out=M, alpha=alpha, beta=0.0)
        for weight, target in targets:
            combine(self.xp, target, [(weight, M)], accumulate=True)

    def _accumulate_in_place(self, U, V, targets, alpha: float) -> None:
        """``T_i += w_i·U·V`` for every target with no product buffer, by a change of basis of the targets:
        ``T_i -= (w_i/w_1)·T_1`` (i > 1), then ``T_1 += w_1·U·V``, then ``T_i += (w_i/w_1)·T_1``.
        Exact in exact arithmetic; what memory-minimal (in-place) local schedules use."""
        (first, T1), others = targets[0], targets[1:]
        for weight, T in others:
            combine(self.xp, T, [(1.0, T), (-weight / first, T1)], accumulate=False)
        self.local.product(U, V, out=T1, alpha=alpha * first, beta=1.0)
        for weight, T in others:
            combine(self.xp, T, [(weight / first, T1)], accumulate=True)

    def _fringe(self, kind: str, A, B, C, alpha: float) -> None:
        Mc, Kc, Nc = self.plan.core
        views = {
            "inner": (A[:Mc, Kc:], B[Kc:, :Nc], C[:Mc, :Nc]),
            "rows": (A[Mc:, :], B, C[Mc:, :]),
            "cols": (A[:Mc, :], B[:, Nc:], C[:Mc, Nc:]),
        }[kind]
        if 0 in self.plan.fringe_dims(kind):
            return
        a, b, c = views
        self.local.classical(a, b, out=c, alpha=alpha, beta=1.0)

    def buffers(self, dtype: str) -> dict[str, Any]:
        shapes = _buffer_shapes(self.plan)
        needed = _needed(self.plan, self.rank, self.local.writes_inputs, self.local.accumulates)
        return {name: self.xp.empty(shapes[name], dtype=dtype) for name in needed}

    def run(self, A: Any, B: Any, partial: Any, alpha: float) -> None:
        """Add this rank's share of ``αA·B`` into ``partial``."""
        buffers = self.buffers(str(partial.dtype))
        for task in self.plan.tasks_of(self.rank):
            self._task(task, A, B, partial, alpha, buffers)
        for fringe in self.plan.fringe_of(self.rank):
            self._fringe(fringe.kind, A, B, partial, alpha)


def _runs(plan: Plan, task) -> bool:
    """Whether a task multiplies anything: its band of rows, the inner dimension and the columns are not empty."""
    band = plan.task_rows(task)
    return 0 not in (band[1] - band[0], plan.block[1], plan.block[2])


def _buffer_shapes(plan: Plan) -> dict[str, tuple[int, int]]:
    rows, inner, cols = plan.block
    return {"U": (rows, inner), "V": (inner, cols), "M": (rows, cols)}


def _needed(plan: Plan, rank: int, writes_inputs: bool, accumulates: bool = True) -> set[str]:
    """The buffers one rank's tasks use: operand sums that are not plain blocks, and a product buffer where
    products cannot be added straight into their targets (several targets, unless the local schedule is
    in-place and so memory-minimal: then a change of basis does it; or a schedule that overwrites C)."""
    needed: set[str] = set()
    for task in filter(lambda task: _runs(plan, task), plan.tasks_of(rank)):  # (an empty core's had taken 2 GiB)
        product = plan.decomposition.products[task.product]
        for name, part in (("U", product.u), ("V", product.v)):
            if len(part) > 1 or part[0][1] != 1 or writes_inputs:
                needed.add(name)
        if not accumulates or (len(product.w) > 1 and not writes_inputs):
            needed.add("M")
    return needed


def workspace_bytes(plan: Plan, rank: int, itemsize: int, writes_inputs: bool = False, accumulates: bool = True) -> int:
    """Bytes of operand-sum and product buffers one rank allocates per call."""
    shapes = _buffer_shapes(plan)
    return itemsize * sum(shapes[n][0] * shapes[n][1] for n in _needed(plan, rank, writes_inputs, accumulates))


def rank_workspace_bytes(plan: Plan, rank: int, itemsize: int, writes_inputs: bool, accumulates: bool) -> int:
    """Bytes one rank allocates per call beyond its A, B and C: operand sums and products, and the
    copies of A, B and a partial C where the layout does not give the rank the whole matrices
    (what ``plan`` prints; ``run`` adds the local products' own workspace)."""
    M, K, N = plan.shape
    extra = workspace_bytes(plan, rank, itemsize, writes_inputs, accumulates)
    if plan.inputs == "block2d" or (plan.inputs == "root" and rank != 0):
        extra += itemsize * (M * K + K * N)
    if plan.output == "block2d" or (plan.output == "root" and rank != 0):
        extra += itemsize * M * N
    return extra
