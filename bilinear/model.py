"""The performance model (MSMES thesis §3.5): T ≥ max(T_flop, T_gmem) per launch, summed.

An element-wise launch moves bytes: every slot it reads and writes, once, at
the measured copy bandwidth.  A leaf product does 2·m·n·k flops at the
measured library GEMM rate for its size (interpolated between measured sizes
in log scale).  A product stage that recurses costs what its sub-problems
cost.  The model ranks configurations (``levels="auto"``) and is printed
beside the measured stage times by ``bilinear bench``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .diagnostics import BilinearError
from .lower.breadth import BreadthFirst
from .lower.elementwise import ElementwiseKernel
from .lower.options import TooLarge
from .lower.ozaki_host import moduli_refusal
from .lower.plan import LevelPlan, Lowered, broken_condition, recurses

_ITEMSIZE = {"float32": 4, "float64": 8}
# Memory accesses per term of a sum NumPy evaluates (``c * view`` reads the view and writes a
# temporary; adding it reads both and writes the sum), and per target a product adds into.
_SUM_PASSES = 5


@dataclass(frozen=True)
class Ceilings:
    """Measured on the GPU: copy bandwidth (bytes/s, read + write) and GEMM rates (flop/s) by size."""

    device: str
    dtype: str
    bandwidth: float
    gemm_rate: tuple[tuple[int, float], ...]  # (n, flop/s) for square n×n×n products, ascending n
    fused_rate: tuple[tuple[int, float], ...] = field(default=())  # the fused product kernel, if measured
    launch_seconds: float = 0.0  # host time to issue one launch: many tiny launches are bound by it
    # whether a stage's products run at once (one fused launch, concurrent streams): not on the CPU,
    # where the NumPy backend multiplies them one after another
    concurrent: bool = True
    # whether sums are formed in passes over memory, a temporary per term (the NumPy backend's
    # expressions: element-wise stages, and a fused leaf's operand sums and target updates) rather
    # than in one kernel that reads each block once (or the product kernel, whose rate includes them)
    sums_in_passes: bool = False

    def rate(self, M: int, K: int, N: int, fused: bool = False) -> float:
        """Flop rate for an M×K×N product: the measured rate at the cube root of its volume."""
        table = self.fused_rate if fused and self.fused_rate else self.gemm_rate
        size = (M * K * N) ** (1 / 3)
        if size <= table[0][0]:
            return table[0][1] * size / table[0][0]  # small products: latency-bound, rate falls with size
        for (n0, r0), (n1, r1) in zip(table, table[1:]):
            if size <= n1:
                weight = (math.log(size) - math.log(n0)) / (math.log(n1) - math.log(n0))
                return r0 + weight * (r1 - r0)
        return table[-1][1]


def elementwise_bytes(kernel: ElementwiseKernel, block_elements: dict[str, int], dtype: str,
                      in_passes: bool = False) -> int:
    """Bytes one launch of an element-wise kernel moves: each slot read once and written once, or
    ``in_passes`` as NumPy evaluates it: each assignment's terms one expression at a time
    (``_SUM_PASSES`` accesses a term), its sum then stored (read and written)."""
    total = 0
    for group in kernel.groups:
        if in_passes:
            total += sum(_SUM_PASSES * len(a.terms) + 2 for a in group.assignments) * block_elements[group.like]
        else:
            total += (len(group.reads) + len(group.writes)) * block_elements[group.like]
    return total * _ITEMSIZE[dtype]


@dataclass(frozen=True)
class StepPrediction:
    """Predicted seconds of one level-1 step and what bounds it."""

    name: str
    seconds: float
    flops: float
    bytes: float


def _block_elements(plan: LevelPlan, M: int, K: int, N: int) -> tuple[dict[str, int], tuple[int, int, int]]:
    shape = plan.algorithm.shape
    bm, bk, bn = M // shape.m, K // shape.k, N // shape.n
    return {"A": bm * bk, "B": bk * bn, "C": bm * bn}, (bm, bk, bn)


def _running(lowered: Lowered, level: int) -> LevelPlan:
    """The plan a level runs in the call modelled, C = A·B (beta = 0, as bench and ``matmul`` call):
    at the top an accumulating schedule's from-zero plan.  Below, the plan itself, though products
    that set their block run the from-zero plan there too: a few element-wise bytes more."""
    plan = lowered.levels[level]
    return plan.running(True) if level == 0 else plan


def predict_steps(lowered: Lowered, ceilings: Ceilings, M: int, K: int, N: int, level: int = 0) -> list[StepPrediction]:
    """The predicted time of every step of one level (recursing into product stages)."""
    options = lowered.options
    fused = options.leaf == "fused"
    if level >= len(lowered.levels) or not recurses(lowered.levels[level], options, M, K, N):
        if _breadth_runs(lowered, M, K, N):
            return predict_breadth(lowered.breadth, ceilings, M, K, N, options.launch)
        flops = 2.0 * M * K * N
        return [StepPrediction("leaf", flops / ceilings.rate(M, K, N, fused), flops, 0.0)]
    plan = _running(lowered, level)
    elements, (bm, bk, bn) = _block_elements(plan, M, K, N)
    steps = []
    for step in plan.steps:
        if isinstance(step, ElementwiseKernel):
            moved = elementwise_bytes(step, elements, options.dtype, ceilings.sums_in_passes)
            steps.append(StepPrediction(step.name, moved / ceilings.bandwidth, 0.0, float(moved)))
            continue
        inner = predict_steps(lowered, ceilings, bm, bk, bn, level + 1)
        count = len(step.statements)
        concurrent = ceilings.concurrent and (fused or options.launch != "serial")  # one launch, or streams
        if concurrent and inner[0].name == "leaf":  # the whole stage: as one product of its volume
            flops = count * inner[0].flops
            seconds = flops / ceilings.rate(bm * count, bk, bn, fused)
        else:
            flops = count * sum(s.flops for s in inner)
            seconds = count * sum(s.seconds for s in inner)
        steps.append(StepPrediction(step.name, seconds, flops, count * sum(s.bytes for s in inner)))
    peeled = _peeling_flops(plan, M, K, N)
    if peeled:
        steps.append(StepPrediction("peeling", peeled / ceilings.rate(M, K, N), peeled, 0.0))
    if level == 0 and fused and ceilings.sums_in_passes:
        moved = _SUM_PASSES * _leaf_terms(lowered, M, K, N).elements() * _ITEMSIZE[options.dtype]
        steps.append(StepPrediction("operand sums", moved / ceilings.bandwidth, 0.0, float(moved)))
    return steps


@dataclass(frozen=True)
class _LeafTerms:
    """The leaf products of a product with fused leaves: their dimensions, and the terms of their
    left and right operand sums and of their targets, summed over them (a level's statement with
    t terms over sub-problems whose operands hold u terms each gives t·u)."""

    left: int
    right: int
    targets: int
    dims: tuple[int, int, int]

    def elements(self) -> int:
        """Elements over all terms' blocks: what evaluating the sums reads once."""
        m, k, n = self.dims
        return self.left * m * k + self.right * k * n + self.targets * m * n


def _leaf_terms(lowered: Lowered, M: int, K: int, N: int, level: int = 0, overwrite: bool = True) -> _LeafTerms:
    """Over the tree of plans a call runs, C = A·B at the top (``_running``), each product's own
    below (an accumulating fallback or a from-zero plan: ``LevelPlan.running``)."""
    if level >= len(lowered.levels) or not recurses(lowered.levels[level], lowered.options, M, K, N):
        return _LeafTerms(1, 1, 1, (M, K, N))
    plan = lowered.levels[level].running(overwrite)
    _, (bm, bk, bn) = _block_elements(plan, M, K, N)
    left = right = targets = 0
    dims = (bm, bk, bn)
    for statement in (s for step in plan.steps if not isinstance(step, ElementwiseKernel) for s in step.statements):
        inner = _leaf_terms(lowered, bm, bk, bn, level + 1, statement.overwrite)
        left += len(statement.left.terms) * inner.left
        right += len(statement.right.terms) * inner.right
        targets += len(statement.targets.terms) * inner.targets
        dims = inner.dims
    return _LeafTerms(left, right, targets, dims)


def _breadth_runs(lowered: Lowered, M: int, K: int, N: int) -> bool:
    return lowered.breadth is not None and min(lowered.breadth.leaf_dims(M, K, N)) >= max(lowered.options.cutoff, 1)


def predict_breadth(plan: BreadthFirst, ceilings: Ceilings, M: int, K: int, N: int,
                    launch: str = "serial") -> list[StepPrediction]:
    """Breadth-first levels: each split reads its operand once and writes every product's sum, the
    leaves run at the library's rate for their size, the merge reads every product and writes C."""
    Mm, Km, Nm = plan.main_dims(M, K, N)
    m, k, n = plan.leaf_dims(M, K, N)
    R, size = plan.rank, _ITEMSIZE[plan.dtype]
    moved = {
        "split A": (Mm * Km + R * m * k) * size,
        "split B": (Km * Nm + R * k * n) * size,
        "merge": (R * m * n + Mm * Nm) * size,
    }
    steps = [StepPrediction(name, moved[name] / ceilings.bandwidth, 0.0, float(moved[name])) for name in ("split A", "split B")]
    flops = 2.0 * R * m * k * n
    # Leaves issued together (streams, or one batched call) run as one product of their volume.
    rate = ceilings.rate(m, k, n) if launch == "serial" else ceilings.rate(m * R, k, n)
    steps.append(StepPrediction("leaves", flops / rate, flops, 0.0))
    steps.append(StepPrediction("merge", moved["merge"] / ceilings.bandwidth, 0.0, float(moved["merge"])))
    peeled = 2.0 * (M * N * K - Mm * Nm * Km)
    if peeled:
        steps.append(StepPrediction("peeling", peeled / ceilings.rate(M, K, N), peeled, 0.0))
    return steps


def _peeling_flops(plan: LevelPlan, M: int, K: int, N: int) -> float:
    shape = plan.algorithm.shape
    Mm, Km, Nm = M - M % shape.m, K - K % shape.k, N - N % shape.n
    return 2.0 * (M * N * K - Mm * Nm * Km)


def count_launches(lowered: Lowered, M: int, K: int, N: int, level: int = 0, one_launch_fused: bool = True) -> int:
    """Kernel launches (GEMMs and element-wise kernels) one product issues; ``one_launch_fused``
    False: a fused stage's products, and batched leaves, one call each (the NumPy backend's)."""
    options = lowered.options
    if level >= len(lowered.levels) or not recurses(lowered.levels[level], options, M, K, N):
        if not _breadth_runs(lowered, M, K, N):
            return 1
        # two splits and the merge, around the leaves: one strided-batched call, or a call each (NumPy
        # has no batched call: its backend makes one a leaf)
        batched = options.launch == "batched" and one_launch_fused
        return 3 + (1 if batched else lowered.breadth.rank)
    plan = _running(lowered, level)
    _, (bm, bk, bn) = _block_elements(plan, M, K, N)
    total = 0
    for step in plan.steps:
        if isinstance(step, ElementwiseKernel):
            total += 1
        else:
            inner = count_launches(lowered, bm, bk, bn, level + 1, one_launch_fused)
            fused_leaf = one_launch_fused and options.leaf == "fused" and inner == 1
            total += 1 if fused_leaf else len(step.statements) * inner
    return total


def predict(lowered: Lowered, ceilings: Ceilings, M: int, K: int, N: int, graph: bool = False) -> float:
    """Predicted seconds for the whole product: the device's work, or the host's launches if slower.
    ``graph``: replayed from a CUDA graph, whose launches the host issued once, at capture."""
    device = sum(step.seconds for step in predict_steps(lowered, ceilings, M, K, N))
    if graph:
        return device
    launches = count_launches(lowered, M, K, N, one_launch_fused=ceilings.concurrent)
    if lowered.options.leaf == "fused" and ceilings.sums_in_passes:  # two expressions a term: scale, add
        terms = _leaf_terms(lowered, M, K, N)
        launches += 2 * (terms.left + terms.right + terms.targets)
    return max(device, launches * ceilings.launch_seconds)


def leaf_alone(leaves: Iterable[str]) -> str:
    """What runs at levels 0: the library's GEMM (its rate is what the ceilings hold), or the ozaki
    leaf alone where it is the only leaf asked for, as it takes the moduli and scaling asked for (a
    cuBLAS product would refuse them)."""
    return "ozaki" if tuple(leaves) == ("ozaki",) else "cublas"


def choose_levels(lowered_for: Callable[[int, str], Lowered], ceilings: Ceilings, M: int, K: int, N: int,
                  leaves: Iterable[str] = ("cublas",), max_levels: int = 4) -> tuple[int, str, float]:
    """The (levels, leaf) the model predicts fastest, with its predicted seconds; levels 0 is the library
    alone.  Levels whose ozaki leaves a fixed count of moduli refuses are passed over: at their inner
    dimension (a deeper level halves it), or where the levels can grow the leaves' error bound past
    the largest C can be (:func:`~bilinear.lower.ozaki_host.moduli_refusal`); where all are, the
    leaf alone is the last resort (its call says why).  Levels stop where a schedule's shape
    condition breaks, or where the lowering would be too large (fused leaves past their kernel cap),
    or where a deeper level cannot be lowered at all (an in-place schedule that does not restore its
    inputs runs at the top only): more levels would not be either.  A scheme no leaf can lower at
    one level is an error."""
    leaves = tuple(leaves)
    alone = (0, leaf_alone(leaves), 2.0 * M * K * N / ceilings.rate(M, K, N))
    # the ozaki leaf alone, where moduli too few for k refuse it, is the last resort (its call says why)
    best = alone if alone[1] != "ozaki" or not moduli_refusal(lowered_for(0, "ozaki"), M, K, N) else None
    refusals = []  # why each leaf could not lower one level
    for leaf in leaves:
        for levels in range(1, max_levels + 1):
            try:
                lowered = lowered_for(levels, leaf)
            except TooLarge:
                break
            except (BilinearError, ValueError) as error:
                if levels == 1:
                    refusals.append(error)
                break
            if broken_condition(lowered, M, K, N):  # its blocks break a shape condition: it cannot run
                break
            if moduli_refusal(lowered, M, K, N):  # fixed moduli keep no correct bit of C here; a deeper level halves k
                continue
            seconds = predict(lowered, ceilings, M, K, N)
            if best is None or seconds < best[2]:
                best = (levels, leaf, seconds)
    if leaves and len(refusals) == len(leaves):
        raise refusals[0]
    return best or alone
