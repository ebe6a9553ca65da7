"""Checking and timing a distributed product against one GPU's library GEMM, in one run.

Every rank draws the same random normal A and B (same seed, on its own
device), so replicated inputs need no transfer.  A repetition is timed on
every rank with CUDA events after a barrier and counted as the slowest
rank's time; the one-GPU GEMM (cuBLAS on rank 0's GPU, NumPy on the CPU)
is timed in the same process, interleaved with ours.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..diagnostics import counted
from ..measure import error_bound as measure_bound
from ..measure import bound_verdict, figures_text, growth_in, median, ratio_text, time_device, within_bound
from ..bench_outputs import WRITTEN_BY
from ..runtime.run import growth_run, levels_run
from .api import DistributedProduct
from .comm import AgreedError
from .layout import block_of


@dataclass(frozen=True)
class DistributedResult:
    dims: tuple[int, int, int]
    dtype: str
    ranks: int
    plan: str
    error: float  # against the one-GPU product in float64 (the float64 product itself on the CPU)
    bound: float
    seconds: float  # median over repetitions of the slowest rank
    one_gpu_seconds: float
    workspace_bytes: int  # the largest over ranks, beyond A, B and C
    memory_bytes: int  # the largest over ranks: A, B and C as the layouts give them, and the workspace
    backend: str = "cupy"  # "numpy": ranks on the CPU, the reference NumPy's product
    levels_run: int = 0  # the most local levels any rank's products recursed through (the bound's)
    levels_requested: int = 0
    trivial: float = 1.0  # the error a C of zeros would have: a bound at or past it checks nothing
    # what tells two runs apart beside the plan's line: the global decomposition and the layouts
    decomposition: str = ""
    global_products: int = 0
    inputs: str = "replicated"
    output: str = "replicated"

    @property
    def speedup(self) -> float:
        return self.one_gpu_seconds / self.seconds

    @property
    def within_bound(self) -> bool:
        return within_bound(self.error, self.bound, self.trivial)

    def describe(self) -> str:
        M, K, N = self.dims
        tflops = 2.0 * M * K * N / self.seconds / 1e12
        device, reference = ("GPU", "one GPU's GEMM") if self.backend == "cupy" else ("rank", "one rank's NumPy product")
        return "\n".join(
            [
                f"{self.plan}: {M}x{K} @ {K}x{N} {self.dtype} on {counted(self.ranks, 'rank')}",
                *([f"  local levels run {self.levels_run} of the {self.levels_requested} requested (a rank's "
                   "blocks are too small for more; the bound counts those that ran)"]
                  if self.levels_run != self.levels_requested else []),
                f"  relative error  {self.error:.3e}   (bound {self.bound:.3e})"
                + bound_verdict(self.error, self.bound, self.trivial, growth_in(self.bound, self.dtype, K)),
                f"  time            {figures_text(self.seconds * 1e3, 2)} ms ({figures_text(tflops, 1)} TFLOP/s "
                f"effective); {reference} {figures_text(self.one_gpu_seconds * 1e3, 2)} ms: speed-up "
                f"{ratio_text(self.speedup)}",
                f"  memory per {device} (largest) {figures_text(self.memory_bytes / 2**30, 2)} GiB, "
                f"of which workspace {figures_text(self.workspace_bytes / 2**30, 2)} GiB",
            ]
        )

    def as_dict(self) -> dict:
        # each row says who wrote it: bench --json replaces only such rows
        return asdict(self) | {"speedup": self.speedup, "written_by": WRITTEN_BY}


def same_inputs(xp: Any, M: int, K: int, N: int, dtype: str, seed: int) -> tuple[Any, Any]:
    """The same random normal A and B on every rank, drawn on the rank's own device."""
    rng = xp.random.default_rng(seed) if hasattr(xp.random, "default_rng") else xp.random.RandomState(seed)
    return rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype)


def local_levels(product: DistributedProduct, M: int, K: int, N: int) -> tuple[int, float]:
    """The most levels the local products recurse through in an M×K×N call, and the largest error
    growth ρ_1·…·ρ_L among the products the plan gives them: fewer levels than asked for where a
    rank's blocks are too small (``--levels 20`` at n = 16 runs 3)."""
    local = product.local
    if not hasattr(local.product, "executor_for"):  # a caller's own product: what it was built with
        return local.levels, local.growth
    ran = [(levels_run(local.product, *dims), growth_run(local.product, *dims))
           for dims in product.plan(M, K, N).task_dims()]
    return max((levels for levels, _ in ran), default=0), max((growth for _, growth in ran), default=1.0)


def error_bound(product: DistributedProduct, dtype: str, M: int, K: int, N: int) -> float:
    """``bilinear run``'s bound, 8·u·√K·ρ, with ρ the growth of the global steps times that of the
    local levels that ran."""
    return _bound(product, dtype, (M, K, N), local_levels(product, M, K, N)[1])


def _bound(product: DistributedProduct, dtype: str, dims: tuple[int, int, int], local_growth: float) -> float:
    """The bound with the global steps' growth where they ran: a shape smaller than their grid in
    any dimension is peeled whole (3³ under three steps of Strassen had been judged by ρ³)."""
    ran = all(product.plan(*dims).core)
    return measure_bound(dtype, dims[1], (product.decomposition.growth_ratio if ran else 1.0) * local_growth)


#: Rows of the exact product the error is summed over at a time.
ERROR_BAND = 4096


def held_bytes(product: DistributedProduct, M: int, K: int, N: int, itemsize: int) -> int:
    """What :func:`measure` holds on a rank at most: the whole A and B every rank draws (the layouts'
    pieces are views of them) and a whole C, the product's own C where its output is not replicated,
    rank 0's one-GPU product, the local products' workspace, and a band of the float64 check (below
    float64, B and a band of A in float64 too: the check had held them uncounted)."""
    partial = M * N if product.output != "replicated" else 0
    elements = M * K + K * N + 2 * M * N + partial
    widened = 8 * (K * N + ERROR_BAND * K) if itemsize < 8 else 0
    return itemsize * elements + 2 * 8 * ERROR_BAND * N + widened + product.workspace_bytes(M, K, N, itemsize)


def device_refusal(product: DistributedProduct, sizes: list[tuple[int, int, int]], dtype: str,
                   advice: str = "smaller sizes (-n, -m, -k)") -> str | None:
    """Why a run of these sizes cannot fit the ranks' devices (the same on every rank: the largest
    rank's need), or None; a GPU rank holds a fraction of the operands' work, so the one-device
    check (nine matrices) had refused 49152³ on four H200s."""
    xp, itemsize = product.comm.xp, np.dtype(dtype).itemsize
    if not hasattr(xp, "cuda"):  # ranks on the CPU share the host's memory: checked before (run.check_fits)
        return None
    total = -int(product.comm.max(-xp.cuda.Device().mem_info[1]))  # the smallest device's
    for M, K, N in sizes:
        needed = int(product.comm.max(held_bytes(product, M, K, N, itemsize)))
        if needed > total:
            return (f"a {M}x{K} @ {K}x{N} {dtype} run needs about {needed / 2**30:.1f} GiB on a rank's device, more "
                    f"than its {total / 2**30:.1f} GiB; choose {advice} or more GPUs")
    return None


def _squared_error(xp: Any, C: Any, A: Any, B: Any, rows: slice, cols: slice, band: int = ERROR_BAND) -> tuple[float, float]:
    """‖C − (A·B)[rows, cols]‖² and ‖(A·B)[rows, cols]‖² with A·B in float64, a band of rows at a time
    (49152² needs no second copy; A is widened a band at a time, B whole: held_bytes counts them)."""
    B64 = B[:, cols].astype("float64", copy=False)
    squared = reference = 0.0
    for start in range(0, C.shape[0], band):
        stop = min(start + band, C.shape[0])
        exact = A[rows.start + start : rows.start + stop].astype("float64", copy=False) @ B64
        squared += float(xp.linalg.norm(C[start:stop].astype("float64") - exact)) ** 2
        reference += float(xp.linalg.norm(exact)) ** 2
    return squared, reference


def layout_pieces(product: DistributedProduct, A: Any, B: Any, C: Any | None = None) -> dict:
    """What this rank passes and gets in the product's layouts, cut from the whole matrices every rank holds."""
    comm = product.comm

    def piece(X: Any, layout: str) -> tuple[Any, tuple[slice, slice]] | tuple[None, None]:
        if layout == "block2d":
            region = block_of(comm.rank, comm.size, *X.shape)
            return X[region], region
        if layout == "replicated" or comm.rank == 0:
            return X, (slice(0, X.shape[0]), slice(0, X.shape[1]))
        return None, None

    (a, _), (b, _) = piece(A, product.inputs), piece(B, product.inputs)
    shape = (A.shape[0], B.shape[1])
    out, region = piece(C if C is not None else product.comm.xp.empty(shape, dtype=A.dtype), product.output)
    return {"A": a, "B": b, "out": out, "region": region}


#: What the other ranks wait for while rank 0 alone works, and why it may not come: a timeout
#: there had blamed a dead or unanswering rank while rank 0 was still at work.
CHECKING = ("waiting for rank 0's check of the product", "rank 0 alone compares the product with a float64 "
            "reference, and had not finished; raise the limit for sizes this large")
BLOCK_CHECKS = ("waiting for the other ranks' checks of their blocks", "another rank had not finished comparing "
                "its block with a float64 reference, or stopped answering; raise the limit for sizes this large")
TIMING = ("waiting for rank 0's timing of one device's product", "rank 0 alone times it, and had not finished; "
          "raise the limit for sizes this large")


def _error(product: DistributedProduct, ours: Any, region, A: Any, B: Any) -> tuple[float, float]:
    """The relative error of the whole product, from each rank's part of it (once per element), and
    the error a C of zeros would have (measure.zero_error)."""
    comm, xp = product.comm, product.comm.xp
    counted = ours is not None and (product.output == "block2d" or comm.rank == 0)
    squared = _squared_error(xp, ours, A, B, *region) if counted and ours.size else (0.0, 0.0)
    waiting = BLOCK_CHECKS if product.output == "block2d" else CHECKING
    total, reference = (sum(float(pair[i]) for pair in comm.agree(squared, waiting)) for i in (0, 1))
    scale = float(xp.linalg.norm(A.astype("float64", copy=False)))
    scale *= float(xp.linalg.norm(B.astype("float64", copy=False)))
    return (total**0.5 / scale, reference**0.5 / scale) if scale else (total**0.5, 1.0)


def measure(
    product: DistributedProduct, M: int, K: int, N: int, dtype: str, repeat: int = 5, seed: int = 0
) -> DistributedResult:
    """Check one product against the one-GPU GEMM, then time both, interleaved.

    Raises:
        AgreedError: on every rank, when the ranks asked for different runs (a rank with
            another ``--repeat`` had fallen out of step and read another collective's bytes).
    """
    comm, xp = product.comm, product.comm.xp
    if len(set(comm.agree((M, K, N, dtype, repeat, seed)))) > 1:
        raise AgreedError("the ranks asked for different runs (sizes, dtype, repetitions or seed); start every "
                               "rank with the same options")
    A, B = same_inputs(xp, M, K, N, dtype, seed)
    given = layout_pieces(product, A, B)
    ours = product(given["A"], given["B"], out=given["out"])
    error, trivial = _error(product, ours, given["region"], A, B)
    # of the plan that call ran: dynamic balance may plan the timed calls anew
    levels, growth = local_levels(product, M, K, N)
    bound = _bound(product, dtype, (M, K, N), growth)
    single = xp.empty((M, N), dtype=dtype) if comm.rank == 0 else None
    times, single_times = [], []
    for _ in range(repeat + 1):  # the first of each is a warm-up
        comm.barrier()
        call = lambda: product(given["A"], given["B"], out=given["out"])  # noqa: E731
        times.append(comm.max(time_device(call, xp, repeat=1, warmup=0)[0]))
        comm.barrier()
        mine = time_device(lambda: xp.matmul(A, B, out=single), xp, repeat=1, warmup=0)[0] if comm.rank == 0 else 0.0
        single_times.append(comm.max(mine, TIMING))
    itemsize = A.dtype.itemsize
    return DistributedResult(
        dims=(M, K, N),
        dtype=dtype,
        ranks=comm.size,
        plan=product.describe(),
        error=error,
        bound=bound,
        trivial=trivial,
        seconds=median(times[1:]),
        one_gpu_seconds=median(single_times[1:]),
        workspace_bytes=int(comm.max(product.workspace_bytes(M, K, N, itemsize))),
        memory_bytes=int(comm.max(product.memory_bytes(M, K, N, itemsize))),
        backend="numpy" if xp is np else "cupy",
        levels_run=levels,
        levels_requested=product.local.levels,
        decomposition=product.decomposition.name,
        global_products=product.decomposition.rank,
        inputs=product.inputs,
        output=product.output,
    )
