"""The distributed product, called on every rank: ``bilinear.distributed.compile`` and ``matmul``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..ir import Program, Schedule
from .check import verify_plan
from .comm import Comm, DistributedError, make_comm
from .decompose import Decomposition, breadth_first, growth_ratio, tiles_2d
from .execute import Local, RankProgram, workspace_bytes
from .plan import Plan, make_plan


def default_steps(rank: int, ranks: int) -> int:
    """The fewest breadth-first steps that give every rank at least one product."""
    steps, products = 1, rank
    while products < ranks:
        steps, products = steps + 1, products * rank
    return steps


def decomposition_for(program: Program, ranks: int, kind: str = "bfs", steps: int | None = None) -> Decomposition:
    """``'bfs'``: breadth-first steps of the program's algorithm; ``'2d'``: classical 2D tiles."""
    if kind == "2d":
        return tiles_2d(ranks)
    if kind != "bfs":
        raise ValueError(f"decomposition must be 'bfs' or '2d', not {kind!r}")
    main = program.main
    algorithm = program.algorithm(main.algorithm) if isinstance(main, Schedule) else main
    return breadth_first(algorithm, steps or default_steps(algorithm.rank, ranks))


def local_products(program: Program, dtype: str, levels: int, leaf: str, backend: str) -> Local:
    """The single-GPU products one rank runs: ``program`` at ``levels`` levels, and the library GEMM."""
    from ..api import compile

    classical = compile(program, dtype=dtype, levels=0, leaf="cublas", backend=backend)
    if not levels:
        return Local(classical, classical, writes_inputs=False)
    main = program.main
    algorithm = program.algorithm(main.algorithm) if isinstance(main, Schedule) else main
    return Local(
        compile(program, dtype=dtype, levels=levels, leaf=leaf, backend=backend), classical,
        writes_inputs=isinstance(main, Schedule) and main.inplace,
        accumulates=not (isinstance(main, Schedule) and main.overwrites_c),
        growth=growth_ratio(algorithm) ** levels, name=f"{main.name} L{levels} {leaf}",
    )


class DistributedProduct:
    """``C = αA·B + βC`` over every rank of ``comm``; call it on every rank with the same arguments.

    With ``inputs="replicated"`` every rank passes A and B; with ``"root"``
    rank 0 does and the others pass ``None``.  With ``output="replicated"``
    every rank gets C; with ``"root"`` rank 0 does and the others get ``None``.
    """

    def __init__(self, decomposition: Decomposition, local: Local, comm: Comm, *, inputs: str = "replicated",
                 output: str = "replicated", weights: Sequence[float] | None = None, bands: int | None = None):
        self.decomposition, self.local, self.comm = decomposition, local, comm
        self.inputs, self.output, self.weights, self.bands = inputs, output, weights, bands
        self._plans: dict[tuple[int, int, int], Plan] = {}

    def describe(self) -> str:
        d = self.decomposition
        return f"{d.name} ({d.rank} products) over {self.comm.size} ranks, local {self.local.name}"

    def plan(self, M: int, K: int, N: int) -> Plan:
        """The verified plan for one shape (cached); raises if it does not verify."""
        key = (M, K, N)
        if key not in self._plans:
            plan = make_plan(self.decomposition, key, self.comm.size, bands=self.bands, weights=self.weights,
                             inputs=self.inputs, output=self.output)
            check = verify_plan(plan)
            if not check.ok:
                raise DistributedError("the distributed plan does not verify: " + "; ".join(check.problems[:3]))
            self._plans[key] = plan
        return self._plans[key]

    def workspace_bytes(self, M: int, K: int, N: int, itemsize: int) -> int:
        """Bytes this rank allocates per call beyond A, B and C: operand sums, products, and copies
        of A, B or a partial C where the layout does not give the rank its own."""
        plan = self.plan(M, K, N)
        extra = workspace_bytes(plan, self.comm.rank, itemsize, self.local.writes_inputs, self.local.accumulates)
        if self.inputs == "root" and self.comm.rank != 0:
            extra += itemsize * (M * K + K * N)
        if self.output == "root" and self.comm.rank != 0:
            extra += itemsize * M * N
        return extra

    def _agree(self, A: Any, B: Any, out: Any, alpha: float, beta: float) -> tuple[int, int, int, str]:
        mine = (
            None if A is None else tuple(A.shape), None if B is None else tuple(B.shape),
            None if A is None else str(A.dtype), None if out is None else tuple(out.shape), float(alpha), float(beta),
        )
        everyone = self.comm.agree(mine)
        holders = [v for r, v in enumerate(everyone) if self.inputs == "replicated" or r == 0]
        if any(v[:3] != holders[0][:3] or v[4:] != holders[0][4:] for v in holders) or None in holders[0][:3]:
            raise DistributedError(
                "the ranks were called with different arguments: "
                + "; ".join(f"rank {r}: A {v[0]}, B {v[1]}, {v[2]}, alpha {v[4]}, beta {v[5]}" for r, v in enumerate(everyone))
            )
        (M, K), (K2, N), dtype = holders[0][0], holders[0][1], holders[0][2]
        if K != K2:
            raise DistributedError(f"A is {M}x{K} and B is {K2}x{N}: inner dimensions differ")
        return M, K, N, dtype

    def _inputs(self, A: Any, B: Any, M: int, K: int, N: int, dtype: str) -> tuple[Any, Any]:
        if self.inputs == "replicated":
            return A, B
        xp = self.comm.xp
        if self.comm.rank == 0:
            A, B = xp.ascontiguousarray(A), xp.ascontiguousarray(B)
        else:
            A, B = xp.empty((M, K), dtype=dtype), xp.empty((K, N), dtype=dtype)
        self.comm.bcast(A, 0)
        self.comm.bcast(B, 0)
        return A, B

    def _run_locally(self, plan: Plan, A: Any, B: Any, partial: Any, alpha: float, beta: float) -> None:
        """This rank's share; a failure on any rank is raised on every rank (before any reduction waits on it)."""
        try:
            RankProgram(plan, self.comm, self.local).run(A, B, partial, float(alpha), float(beta))
            status = None
        except Exception as error:  # reported to every rank below, then raised there
            status = f"{type(error).__name__}: {error}"[:400]
        failed = [(rank, s) for rank, s in enumerate(self.comm.agree(status)) if s]
        if failed:
            raise DistributedError("; ".join(f"rank {rank} failed: {s}" for rank, s in failed))

    def __call__(self, A: Any, B: Any, out: Any = None, alpha: float = 1.0, beta: float = 0.0) -> Any:
        M, K, N, dtype = self._agree(A, B, out, alpha, beta)
        A, B = self._inputs(A, B, M, K, N, dtype)
        xp = self.comm.xp
        holds_output = self.output == "replicated" or self.comm.rank == 0
        if not holds_output:
            out = None  # this rank's partial C is workspace (counted in workspace_bytes)
        elif out is None:
            out, beta = xp.zeros((M, N), dtype=dtype), 0.0
        elif out.shape != (M, N) or str(out.dtype) != dtype:
            raise DistributedError(f"rank {self.comm.rank}: out is {out.dtype} {out.shape}, not {dtype} {(M, N)}")
        partial = xp.empty((M, N), dtype=dtype) if out is None else out if out.flags.c_contiguous else xp.ascontiguousarray(out)
        self._run_locally(self.plan(M, K, N), A, B, partial, alpha, beta)
        if self.output == "replicated":
            self.comm.allreduce(partial)
        else:
            self.comm.reduce(partial, 0)
        if out is not None and partial is not out:
            out[...] = partial
        return out


def compile(
    scheme: str | Path | Program,
    *,
    decomposition: str = "bfs",
    steps: int | None = None,
    local: str | Path | Program | None = None,
    levels: int = 1,
    leaf: str = "cublas",
    dtype: str = "float64",
    backend: str | None = None,
    inputs: str = "replicated",
    output: str = "replicated",
    weights: Sequence[float] | None = None,
    comm: Comm | None = None,
) -> DistributedProduct:
    """A distributed product over every rank of ``MPI.COMM_WORLD`` (call on every rank).

    Args:
        scheme: the .bl file (or program) whose algorithm decomposes the product globally.
        decomposition: ``"bfs"`` (breadth-first steps of ``scheme``) or ``"2d"`` (classical tiles).
        steps: breadth-first steps (default: the fewest that give every rank a product).
        local: what each rank multiplies its products with (default ``scheme`` itself,
            e.g. an in-place MSMES schedule), at ``levels`` levels with ``leaf`` leaves.
        backend: ``"cupy"`` (NCCL) or ``"numpy"`` (MPI); default CuPy when a GPU is there.
        weights: relative speeds of the ranks (uneven shares; see :func:`measure_weights`).
    """
    from ..api import load
    from ..runtime.cupy_backend import cupy_available

    backend = backend or ("cupy" if cupy_available() else "numpy")
    comm = comm or make_comm(backend)
    program = scheme if isinstance(scheme, Program) else load(scheme)
    local_program = program if local is None else (local if isinstance(local, Program) else load(local))
    return DistributedProduct(
        decomposition_for(program, comm.size, decomposition, steps),
        local_products(local_program, dtype, levels, leaf, backend),
        comm, inputs=inputs, output=output, weights=weights,
    )


_PRODUCTS: dict[tuple, DistributedProduct] = {}


def matmul(A: Any, B: Any, out: Any = None, alpha: float = 1.0, beta: float = 0.0, *, scheme: str | Path = "winograd.bl",
           local: str | Path | None = None, levels: int = 1, **options: Any) -> Any:
    """``αA·B + βC`` over every rank (call on every rank); see :func:`compile` for the options.

    The default decomposes with Strassen-Winograd and multiplies locally
    with Winograd at one level and cuBLAS leaves (inputs never written).
    """
    from ..paths import algorithms_dir

    scheme = Path(scheme)
    if not scheme.exists() and (algorithms_dir() / scheme).exists():
        scheme = algorithms_dir() / scheme
    dtype = str(getattr(A, "dtype", None) or options.pop("dtype", "float64"))
    key = (str(scheme), str(local), levels, dtype, tuple(sorted((k, repr(v)) for k, v in options.items())))
    if key not in _PRODUCTS:
        _PRODUCTS[key] = compile(scheme, local=local, levels=levels, dtype=dtype, **options)
    return _PRODUCTS[key](A, B, out=out, alpha=alpha, beta=beta)
