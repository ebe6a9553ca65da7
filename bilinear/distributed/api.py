"""The distributed product, called on every rank: ``bilinear.distributed.compile`` and ``matmul``."""

from __future__ import annotations

import hashlib
import math
import operator
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

from ..diagnostics import counted
from ..ir import Program, Schedule
from ..runtime.backend import LIBRARY_NAMES, NotPickled
from ..runtime.arguments import real_scalar
from ..runtime.views import is_contiguous
from .check import verify_plan
from .comm import SHARING, AgreedError, Comm, DistributedError, given_comm, short
from ..lower.decompose import Decomposition, growth_ratio
from .execute import Local, RankProgram, combine, rank_workspace_bytes
from .agree import facts, judge, line_strided, same_blocks
from .layout import block_of, block_shape, gather, scatter_sum
from .plan import INPUT_LAYOUTS, OUTPUT_LAYOUTS, Plan, make_plan, positive_float
from .steps import algorithm_of, check_in_range, decomposition_for


def local_products(program: Program, dtype: str, levels: int, leaf: str, backend: str) -> Local:
    """The single-GPU products one rank runs: ``program`` at ``levels`` levels, and the library GEMM."""
    from ..api import compile

    classical = compile(program, dtype=dtype, levels=0, leaf="cublas", backend=backend)
    if not levels:
        return Local(classical, classical, writes_inputs=False, name=LIBRARY_NAMES.get(backend, backend))
    writes_inputs, accumulates = local_roles(program)
    return Local(
        compile(program, dtype=dtype, levels=levels, leaf=leaf, backend=backend),
        classical,
        writes_inputs=writes_inputs,
        accumulates=accumulates,
        growth=growth_ratio(algorithm_of(program)) ** levels,
        name=f"{program.main.name} L{levels} {leaf}",
        levels=levels,
    )


def local_roles(program: Program) -> tuple[bool, bool]:
    """Whether ``program``'s main definition, as a rank's local product (one level or more), writes
    its inputs (an in-place schedule) and accumulates into C (not a schedule that computes C = A·B)."""
    main = program.main
    schedule = isinstance(main, Schedule)
    return schedule and main.inplace, not (schedule and main.overwrites_c)


#: What a rank runs at no local levels, where neither a local scheme nor a leaf is used.
NO_LOCAL_LEVELS = "each rank multiplies its products with the library's GEMM (cuBLAS, NumPy's on the CPU), no scheme and no leaf"
#: local_levels_refusal's words (leaf, local, joiner, levels needed, levels refused): the API's, the CLI's (True).
_LEVEL_WORDS = {False: ("leaf={!r}", "local=", " and ", "levels of 1 or more", "levels=0"),
                True: ("--leaf {}", "--local", ", ", "--levels 1 or more", "--levels 0")}


def local_levels_refusal(levels: int, leaf: str, local: bool, cli: bool = False) -> str | None:
    """Why a leaf other than cublas, or a ``local`` scheme, cannot be asked for at ``levels`` local levels
    (at none a rank runs the library's GEMM alone; they had been dropped without a word), or None: one
    rule for compile and for ``run``/``bench --gpus`` (``cli``: in the command line's words)."""
    leaf_word, local_word, joiner, some, none = _LEVEL_WORDS[cli]
    given = [word for word, unused in ((leaf_word.format(leaf), leaf != "cublas"), (local_word, local)) if unused]
    if levels or not given:
        return None
    verb = "applies" if len(given) == 1 else "apply"
    return f"{joiner.join(given)} {verb} only with {some}; at {none} {NO_LOCAL_LEVELS}"


BALANCES = ("static", "dynamic")
PROBE_PARTS = 64  # dynamic balance: a rank given no work gets about 1/64 of the next call's


class DistributedProduct(NotPickled):
    """``C = αA·B + βC`` over every rank of ``comm``; call it on every rank with the same arguments.

    With ``inputs="replicated"`` every rank passes A and B; with ``"root"``
    rank 0 does and the others pass ``None``; with ``"block2d"`` each rank
    passes its block (:mod:`.layout`; whole matrices passed on every rank are refused where their
    blocks do not fit together, and on a square grid of ranks, where they do, rank 0 warns, unless
    they are constant: a constant matrix's blocks are alike by right).  With
    ``output="replicated"`` every
    rank gets C; with ``"root"`` rank 0 does and the others get ``None``;
    with ``"block2d"`` each rank gets its block of C.
    """

    def __init__(
        self,
        decomposition: Decomposition,
        local: Local,
        comm: Comm,
        *,
        inputs: str = "replicated",
        output: str = "replicated",
        weights: Sequence[float] | None = None,
        bands: int | None = None,
        balance: str = "static",
    ):
        if balance not in BALANCES:
            raise ValueError(f"balance must be one of {BALANCES}, not {balance!r}")
        for name, value, allowed in (("inputs", inputs, INPUT_LAYOUTS), ("output", output, OUTPUT_LAYOUTS)):
            if value not in allowed:  # a bare KeyError at the first call before
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if weights is not None and (len(weights) != comm.size or not all(map(positive_float, weights))):
            raise ValueError(f"weights must be {comm.size} positive numbers, one per rank, not {weights!r}")
        weights = None if weights is None else [float(w) for w in weights]
        self.decomposition, self.local, self.comm = decomposition, local, comm
        self.inputs, self.output, self.weights, self.bands = inputs, output, weights, bands
        self.balance = balance
        # what the ranks compare before a call: a name and a count would let a file edited on one node
        # (other coefficients under the same name) run its products into the others' sums
        self._decomposition_digest = hashlib.sha256(repr(decomposition).encode()).hexdigest()
        self._plans: dict[tuple[int, int, int], Plan] = {}

    def describe(self) -> str:
        d = self.decomposition
        return f"{d.name} ({d.rank} products) over {counted(self.comm.size, 'rank')}, local {self.local.name}"

    def plan(self, M: int, K: int, N: int) -> Plan:
        """The verified plan for one shape (cached); raises if it does not verify."""
        key = (M, K, N)
        if key not in self._plans:
            plan = make_plan(
                self.decomposition,
                key,
                self.comm.size,
                bands=self.bands,
                weights=self.weights,
                inputs=self.inputs,
                output=self.output,
            )
            check = verify_plan(plan)
            if not check.ok:
                raise AgreedError("the distributed plan does not verify: " + "; ".join(check.problems[:3]))
            self._plans[key] = plan
        return self._plans[key]

    def workspace_bytes(self, M: int, K: int, N: int, itemsize: int) -> int:
        """Bytes this rank allocates per call beyond its A, B and C: operand sums, products, the
        copies of A, B and a partial C where the layout does not give the rank the whole matrices,
        and its local products' own workspace."""
        plan = self.plan(M, K, N)
        return (rank_workspace_bytes(plan, self.comm.rank, itemsize, self.local.writes_inputs, self.local.accumulates)
                + self._local_workspace_bytes(plan))

    def _local_workspace_bytes(self, plan: Plan) -> int:
        """The most workspace the local product holds over this rank's tasks (one call's at a time:
        it is allocated anew where the shape changes)."""
        product = self.local.product
        if not hasattr(product, "workspace_bytes"):  # a caller's own product
            return 0
        return max((product.workspace_bytes(*dims) for dims in plan.task_dims(self.comm.rank)), default=0)

    def memory_bytes(self, M: int, K: int, N: int, itemsize: int) -> int:
        """Everything this rank holds during a call: its A, B and C (as the layouts give them) and the workspace."""
        rank, ranks = self.comm.rank, self.comm.size
        held = {
            "replicated": lambda r, c: r * c,
            "root": lambda r, c: r * c if rank == 0 else 0,
            "block2d": lambda r, c: math.prod(block_shape(rank, ranks, r, c)),
        }
        own = held[self.inputs](M, K) + held[self.inputs](K, N) + held[self.output](M, N)
        return itemsize * own + self.workspace_bytes(M, K, N, itemsize)

    def _agree(self, A: Any, B: Any, out: Any, alpha: float, beta: float) -> tuple[int, int, int, str]:
        """The global shape and dtype, the same on every rank, or one error on every rank
        (:mod:`.agree`), before anything is written."""
        d = self.decomposition
        options = {"decompositions": (d.name, d.rank, self._decomposition_digest), "layouts": (self.inputs, self.output),
                   "balances": self.balance, "bands": self.bands,
                   "weights": tuple(float(w) for w in self.weights) if self.weights else None,
                   "dtypes": getattr(self.local.classical, "dtype", None),  # one rank's float32 products had gone alone
                   "local products": self.local.name}
        # samples of A and B (block2d: whole matrices passed as blocks; replicated: each rank's own), and of a
        # replicated C that beta adds in (rank 0's is added)
        sampled = self.inputs in ("block2d", "replicated")
        seeded = self.output == "replicated" and _nonzero(beta)
        everyone = self.comm.agree(facts(A, B, out, alpha, beta, options, blocks=sampled, out_sample=seeded,
                                         xp=self.comm.xp))
        M, K, N, dtype = judge(everyone, self.inputs, self.output, getattr(self.local.product, "dtype", None))
        if self.inputs == "block2d" and self.comm.rank == 0 and same_blocks(everyone):
            warnings.warn(f"every rank passed the same blocks of A and B; under block2d inputs each rank passes its "
                          f"own block, and this call multiplies the {M}x{K} and {K}x{N} matrices they form", stacklevel=3)
        return M, K, N, dtype

    def _inputs(self, A: Any, B: Any, M: int, K: int, N: int, dtype: str) -> tuple[Any, Any]:
        if self.inputs == "replicated":
            return A, B
        if self.inputs == "block2d":
            return gather(self.comm, A, M, K, dtype), gather(self.comm, B, K, N, dtype)
        xp = self.comm.xp
        if self.comm.rank == 0:
            A, B = xp.ascontiguousarray(A), xp.ascontiguousarray(B)
        else:
            A, B = xp.empty((M, K), dtype=dtype), xp.empty((K, N), dtype=dtype)
        self.comm.bcast(A, 0)
        self.comm.bcast(B, 0)
        return A, B

    def _output(self, out: Any, M: int, N: int, dtype: str) -> tuple[Any, Any]:
        """This rank's output (None where the layout gives it none), checked or allocated, and its β·C seed."""
        xp, rank = self.comm.xp, self.comm.rank
        shape = {
            "replicated": (M, N), "root": (M, N) if rank == 0 else None,
            "block2d": block_shape(rank, self.comm.size, M, N),
        }[self.output]
        if shape is None:
            return None, None
        if out is None:
            return xp.zeros(shape, dtype=dtype), None
        if tuple(out.shape) != shape or str(out.dtype) != dtype:
            raise DistributedError(f"rank {rank}: out is {out.dtype} {tuple(out.shape)}, not {dtype} {shape}")
        return out, out

    def _seed(self, partial: Any, C: Any, beta: float) -> None:
        """``partial = β·C`` where this rank holds C (rank 0 only when C is whole), zero elsewhere."""
        partial.fill(0)
        if C is None or beta == 0 or (self.output != "block2d" and self.comm.rank != 0):
            return
        whole = (slice(None), slice(None))
        rows, cols = block_of(self.comm.rank, self.comm.size, *partial.shape) if self.output == "block2d" else whole
        combine(self.comm.xp, partial[rows, cols], [(beta, C)], accumulate=False)

    def _run_locally(self, plan: Plan, A: Any, B: Any, partial: Any, alpha: float) -> float:
        """This rank's share, and the seconds it took; a failure on any rank is raised on every rank
        (before any reduction waits on it)."""
        started = time.perf_counter()
        try:
            RankProgram(plan, self.comm, self.local).run(A, B, partial, float(alpha))
            if self.balance == "dynamic" and self.comm.xp.__name__ == "cupy":
                self.comm.xp.cuda.get_current_stream().synchronize()  # the time of the work, not of its issue
            status = None
        except Exception as error:  # reported to every rank below, then raised there
            status = short(f"{type(error).__name__}: {error}")
        seconds = time.perf_counter() - started
        failed = [(rank, s) for rank, s in enumerate(self.comm.agree(status, SHARING)) if s]
        if failed:
            raise AgreedError("; ".join(f"rank {rank} failed: {s}" for rank, s in failed))
        return seconds

    def __call__(self, A: Any, B: Any, out: Any = None, alpha: float = 1.0, beta: float = 0.0) -> Any:
        given = out  # returned as it came, not its view with line strides
        A, B, out = (line_strided(x, self.comm.xp) for x in (A, B, out))
        M, K, N, dtype = self._agree(A, B, out, alpha, beta)
        alpha, beta = real_scalar(alpha, "alpha", dtype), real_scalar(beta, "beta", dtype)  # agreed on every rank
        A, B = self._inputs(A, B, M, K, N, dtype)
        out, C = self._output(out, M, N, dtype)
        whole = out is not None and self.output != "block2d" and is_contiguous(out)
        partial = out if whole else self.comm.xp.empty((M, N), dtype=dtype)
        if partial is out:
            self._seed_in_place(partial, beta if C is not None else 0.0)
        else:
            self._seed(partial, C, beta)
        plan = self.plan(M, K, N)
        if alpha != 0:  # else C = beta·C exactly, as BLAS (an in-place local schedule's basis changes had rounded it)
            seconds = self._run_locally(plan, A, B, partial, alpha)
            if self.balance == "dynamic":
                self._rebalance(plan, seconds)
        if self.output == "replicated":
            self.comm.allreduce(partial)
        elif self.output == "root":
            self.comm.reduce(partial, 0)
        else:
            scatter_sum(self.comm, partial, out)
        if out is not None and self.output != "block2d" and partial is not out:
            out[...] = partial
        return given if given is not None and out is not None else out

    def _rebalance(self, plan: Plan, seconds: float) -> None:
        """Thesis ch. 5's dynamic balancing: each rank's measured rate on this call weights the next plans,
        so a slow rank (a straggler, a slower GPU) gives work away.  Plans are rebuilt and proven again
        only when some rank's share would move by more than 5 %."""
        rate = plan.flops_of(self.comm.rank) / max(seconds, 1e-9)
        rates = [float(r) for r in self.comm.agree(rate)]
        measured = [r for r in rates if r > 0]
        if not measured:
            return
        # A rank given no work this call measured nothing: a probe of about 1/PROBE_PARTS of the work
        # measures it again (one slow call had idled it for good; the slowest measured rate instead
        # gave a lasting straggler half the work of 2 ranks on every other call)
        idle = [r <= 0 for r in rates]
        rates = [sum(measured) / PROBE_PARTS if i else r for r, i in zip(rates, idle)]
        old = list(self.weights) if self.weights else [1.0] * self.comm.size
        new_share, old_share = [r / sum(rates) for r in rates], [w / sum(old) for w in old]
        if any(idle) or max(abs(a - b) for a, b in zip(new_share, old_share)) > 0.05:
            self.weights = rates
            self._plans.clear()

    def _seed_in_place(self, partial: Any, beta: float) -> None:
        """``partial`` is this rank's C itself: scale it by β on rank 0, clear it elsewhere."""
        if self.comm.rank != 0 or beta == 0:
            partial.fill(0)
        elif beta != 1:
            combine(self.comm.xp, partial, [(beta, partial)], accumulate=False)


def _nonzero(beta: Any) -> bool:
    """Whether beta may be nonzero (a value that is not a number is refused later, on every rank)."""
    try:
        return float(beta) != 0
    except (TypeError, ValueError):
        return False


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
    balance: str = "static",
    comm: Comm | None = None,
) -> DistributedProduct:
    """A distributed product over every rank of ``MPI.COMM_WORLD`` (call on every rank).

    Args:
        scheme: the .bl file (or program) whose algorithm decomposes the product globally.
        decomposition: ``"bfs"`` (breadth-first steps of ``scheme``) or ``"2d"`` (classical tiles).
        steps: breadth-first steps (default: the fewest that give every rank a product, up to 4096 products).
        local: what each rank multiplies its products with (default ``scheme`` itself,
            e.g. an in-place MSMES schedule), at ``levels`` levels with ``leaf`` leaves; at
            ``levels=0`` a rank runs the library's GEMM, and a ``leaf`` or ``local`` is refused.
        backend: ``"cupy"`` (NCCL) or ``"numpy"`` (MPI); default CuPy when a GPU is there.
        weights: relative speeds of the ranks (uneven shares); equal by default.
        balance: ``"static"`` (the weights as given), or ``"dynamic"``: every call measures each
            rank's rate and the next call's plan gives slow ranks less (thesis ch. 5).
        comm: the ranks' transport (default: the backend's over ``MPI.COMM_WORLD``).
    """
    from ..api import load
    from ..runtime.cupy_backend import cupy_available

    if isinstance(levels, bool) or not hasattr(levels, "__index__"):  # "auto" had ended in a TypeError
        raise ValueError(f"levels must be a whole number of local levels, not {levels!r} (the distributed product "
                         "does not choose them per shape)")
    levels = operator.index(levels)
    if why := local_levels_refusal(levels, leaf, local is not None):
        raise ValueError(why)
    backend = backend or ("cupy" if cupy_available() else "numpy")
    comm = given_comm(comm, backend)
    program = scheme if isinstance(scheme, Program) else load(scheme)
    local_program = program if local is None else (local if isinstance(local, Program) else load(local))
    global_products = decomposition_for(program, comm.size, decomposition, steps)
    per_rank = local_products(local_program, dtype, levels, leaf, backend)  # (checks dtype)
    check_in_range(global_products, dtype)
    return DistributedProduct(
        global_products,
        per_rank,
        comm,
        inputs=inputs,
        output=output,
        weights=weights,
        balance=balance,
    )


_PRODUCTS: dict[tuple, DistributedProduct] = {}


def matmul(
    A: Any,
    B: Any,
    out: Any = None,
    alpha: float = 1.0,
    beta: float = 0.0,
    *,
    scheme: str | Path = "winograd.bl",
    local: str | Path | None = None,
    levels: int = 1,
    **options: Any,
) -> Any:
    """``αA·B + βC`` over every rank (call on every rank); see :func:`compile` for the options.

    The default decomposes with Strassen-Winograd and multiplies locally
    with Winograd at one level and cuBLAS leaves (inputs never written).
    ``dtype=`` names the element type where a rank passes no A (root inputs);
    otherwise A's is used.
    """
    from ..lower.options import plain_dtype
    from ..paths import algorithms_dir

    scheme = Path(scheme)
    if not scheme.exists() and (algorithms_dir() / scheme).exists():
        scheme = algorithms_dir() / scheme
    # dtype= where given (ranks that pass no A under root or block2d inputs need it), else A's
    dtype = plain_dtype(options.pop("dtype", None) or getattr(A, "dtype", None) or "float64")
    key = (str(scheme), str(local), levels, str(dtype), tuple(sorted((k, repr(v)) for k, v in options.items())))
    if key not in _PRODUCTS:
        _PRODUCTS[key] = compile(scheme, local=local, levels=levels, dtype=dtype, **options)
    return _PRODUCTS[key](A, B, out=out, alpha=alpha, beta=beta)
