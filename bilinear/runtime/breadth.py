"""Breadth-first levels at run time: split, the leaf GEMMs, merge (see :mod:`bilinear.lower.breadth`).

A :class:`BreadthFirstRunner` has the signature of a library GEMM,
``run(a, b, c, alpha, beta)``, so depth-first levels above hand it their leaf
products exactly as they would hand them to cuBLAS.  Its workspace is kept
for the last leaf size, so repeated calls see the same buffers (a captured graph holds its own
references to the buffers it writes).
"""

from __future__ import annotations

from ..lower.breadth import BreadthFirst
from .backend import Backend, View


class BreadthFirstRunner:
    """``c = alpha·a@b + beta·c`` through the breadth-first levels of ``plan``."""

    def __init__(self, plan: BreadthFirst, backend: Backend, cutoff: int = 1, gemm=None, launch: str = "serial"):
        self.plan = plan
        self.backend = backend
        self.gemm = gemm or backend.gemm  # the leaf kind's GEMM (cuBLAS, or the Ozaki leaf)
        self.cutoff = max(cutoff, 1)
        # "serial": one leaf GEMM after another; "streams": spread over concurrent streams;
        # "batched": one strided-batched library call.  Library leaves only: another leaf kind
        # (Ozaki) reuses its workspace from call to call, so its leaves run one after another.
        self.launch = launch if self.gemm == backend.gemm else "serial"
        self.workspace: dict[tuple[int, int, int], tuple[View, View, View]] = {}  # views of _parts, by leaf size
        self._parts: list[View | None] = [None, None, None]

    def runs(self, M: int, K: int, N: int) -> bool:
        """Whether an M×K×N product splits: its leaf blocks are at least ``cutoff`` each way."""
        return min(self.plan.leaf_dims(M, K, N)) >= self.cutoff

    def _buffers(self, m: int, k: int, n: int) -> tuple[View, View, View]:
        """The workspace for leaves of this size: views of three buffers (the operands of A, of B,
        and the products), each grown to the largest size a call needs (reserved before it writes
        anything) and kept for the next calls, their views with it (one product called at many sizes
        holds one set, of the largest; growing drops every view, and release_workspace the buffers)."""
        if (m, k, n) not in self.workspace:
            shapes = ((m, k), (k, n), (m, n))
            counts = [self.plan.rank * rows * cols for rows, cols in shapes]
            if any(part is None or part.size < count for part, count in zip(self._parts, counts)):
                sizes = [max(count, 0 if part is None else part.size) for part, count in zip(self._parts, counts)]
                self.release()  # the old ones first
                self._parts = [self.backend.empty(size, 1, self.plan.dtype).reshape(-1) for size in sizes]
            self.workspace[(m, k, n)] = tuple(
                part[:count].reshape(self.plan.rank, rows, cols) for part, count, (rows, cols) in zip(self._parts, counts, shapes)
            )
        return self.workspace[(m, k, n)]

    def reserve(self, M: int, K: int, N: int) -> None:
        """Allocate now what an M×K×N call allocates: the split buffers, and the leaf GEMM's own for
        the leaves and the strips an odd size peels off."""
        inner = getattr(self.gemm, "reserve", lambda m, k, n: None)
        if not self.runs(M, K, N):
            inner(M, K, N)
            return
        Mm, Km, Nm = self.plan.main_dims(M, K, N)
        leaves = self.plan.leaf_dims(Mm, Km, Nm)
        self._buffers(*leaves)
        for dims in ((M - Mm, K, N), (Mm, K, N - Nm), (Mm, K - Km, Nm), leaves):
            if min(dims) > 0:
                inner(*dims)

    def release(self) -> None:
        """Drop the workspace (the next call allocates it anew); a captured graph keeps its views."""
        self.workspace.clear()
        self._parts = [None, None, None]

    @property
    def held_bytes(self) -> int:
        return sum(part.nbytes for part in self._parts if part is not None)

    def __call__(self, a: View, b: View, c: View, alpha: float, beta: float) -> None:
        M, K, N = a.shape[0], a.shape[1], b.shape[1]
        if not self.runs(M, K, N):
            self.gemm(a, b, c, alpha, beta)
            return
        Mm, Km, Nm = self.plan.main_dims(M, K, N)
        gemm = self.gemm
        # The fringe an odd size leaves: rows below and columns right of the split part, then
        # the inner dimension beyond it, added into the part the merge has written.
        if Mm < M:
            gemm(a[Mm:], b, c[Mm:], alpha, beta)
        if Nm < N:
            gemm(a[:Mm], b[:, Nm:], c[:Mm, Nm:], alpha, beta)
        self._main(a[:Mm, :Km], b[:Km, :Nm], c[:Mm, :Nm], alpha, beta)
        if Km < K:
            gemm(a[:Mm, Km:], b[Km:, :Nm], c[:Mm, :Nm], alpha, 1.0)

    def _main(self, a: View, b: View, c: View, alpha: float, beta: float) -> None:
        plan, backend = self.plan, self.backend
        left, right, products = self._buffers(*plan.leaf_dims(a.shape[0], a.shape[1], b.shape[1]))
        backend.split(plan, plan.split_a, a, left)
        backend.split(plan, plan.split_b, b, right)
        if self.launch == "batched":
            backend.gemm_batched(left, right, products)
        elif self.launch == "streams":
            gemm = self.gemm
            backend.concurrently([
                (lambda r: lambda: gemm(left[r], right[r], products[r], 1.0, 0.0))(r) for r in range(plan.rank)
            ])
        else:
            for r in range(plan.rank):
                self.gemm(left[r], right[r], products[r], 1.0, 0.0)
        backend.merge(plan, products, c, alpha, beta)
