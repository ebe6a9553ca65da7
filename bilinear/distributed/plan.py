"""Distributed plans: which rank multiplies which share of which global product.

A plan is data, built per shape by small pure functions and checked exactly
(:mod:`bilinear.distributed.check`) before anything runs:

- the **core** of the matrices (dimensions cut to multiples of the
  decomposition's grid) is multiplied by the decomposition's products; each
  product goes whole to one rank, and the products that do not divide evenly
  over the ranks are cut into row bands (data parallelism, as the thesis's
  Table 4.4 groups do): band b of a product multiplies rows b of its A-side
  operand by the whole B-side operand and adds into rows b of its C targets;
- the **fringe** (the rows, columns and inner slice past the core; odd sizes
  are peeled, never padded) is three classical products given to the ranks
  with the least work;
- every rank adds what it computes into its partial C, and the partials are
  summed into the output layout.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Sequence

from ..lower.decompose import Decomposition
from ..lower.options import check_count
from ..runtime.arguments import check_sizes

INPUT_LAYOUTS = ("replicated", "root", "block2d")
OUTPUT_LAYOUTS = ("replicated", "root", "block2d")
FRINGES = ("inner", "rows", "cols")  # C_core += A[:, Kc:] B[Kc:, :]; C[Mc:, :] = A[Mc:] B; C[:Mc, Nc:] = A B[:, Nc:]


@dataclass(frozen=True)
class Task:
    """Rows ``bands[0]:bands[1]`` (of ``Plan.bands``) of global product ``product``, on ``rank``."""

    rank: int
    product: int
    bands: tuple[int, int]

    @property
    def band_count(self) -> int:
        return self.bands[1] - self.bands[0]


@dataclass(frozen=True)
class FringeTask:
    """One of the three classical fringe products (see ``FRINGES``), on ``rank``."""

    rank: int
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in FRINGES:
            raise ValueError(f"a fringe task is one of {FRINGES}, not {self.kind!r}")


@dataclass(frozen=True)
class Plan:
    """How ``ranks`` processes compute ``C = αA·B + βC`` for one shape."""

    decomposition: Decomposition
    shape: tuple[int, int, int]  # M, K, N
    ranks: int
    bands: int
    tasks: tuple[Task, ...]
    fringe: tuple[FringeTask, ...]
    inputs: str = "replicated"
    output: str = "replicated"

    def __post_init__(self) -> None:
        if self.inputs not in INPUT_LAYOUTS:
            raise ValueError(f"inputs must be one of {INPUT_LAYOUTS}, not {self.inputs!r}")
        if self.output not in OUTPUT_LAYOUTS:
            raise ValueError(f"output must be one of {OUTPUT_LAYOUTS}, not {self.output!r}")

    @property
    def core(self) -> tuple[int, int, int]:
        """The dimensions the decomposition multiplies: each cut to a multiple of its grid."""
        M, K, N = self.shape
        d = self.decomposition
        return M - M % d.rows, K - K % d.inner, N - N % d.cols

    @property
    def block(self) -> tuple[int, int, int]:
        """One global block's rows, inner size and columns."""
        Mc, Kc, Nc = self.core
        d = self.decomposition
        return Mc // d.rows, Kc // d.inner, Nc // d.cols

    def band_rows(self, band: int) -> tuple[int, int]:
        """Rows ``[start, stop)`` of band ``band`` within a block (bands differ by at most one row)."""
        rows = self.block[0]
        return band * rows // self.bands, (band + 1) * rows // self.bands

    def task_rows(self, task: Task) -> tuple[int, int]:
        """Rows ``[start, stop)`` within a block that ``task``'s bands cover."""
        return self.band_rows(task.bands[0])[0], self.band_rows(task.bands[1] - 1)[1]

    def task_dims(self, rank: int | None = None) -> set[tuple[int, int, int]]:
        """The (rows, inner, cols) of the local products the tasks run (``rank``'s, or every rank's),
        those with nothing to multiply left out."""
        _, inner, cols = self.block
        tasks = self.tasks if rank is None else self.tasks_of(rank)
        heights = {stop - start for start, stop in map(self.task_rows, tasks)}
        return {(rows, inner, cols) for rows in heights if min(rows, inner, cols) > 0}

    def tasks_of(self, rank: int) -> tuple[Task, ...]:
        return tuple(t for t in self.tasks if t.rank == rank)

    def fringe_of(self, rank: int) -> tuple[FringeTask, ...]:
        return tuple(f for f in self.fringe if f.rank == rank)

    def fringe_dims(self, kind: str) -> tuple[int, int, int]:
        """The (rows, inner, cols) one fringe product multiplies."""
        (M, K, N), (Mc, Kc, Nc) = self.shape, self.core
        return {"inner": (Mc, K - Kc, Nc), "rows": (M - Mc, K, N), "cols": (Mc, K, N - Nc)}[kind]

    def flops_of(self, rank: int) -> float:
        """Multiply-add flops (2·m·k·n) of one rank's products, fringe included."""
        _, inner, cols = self.block
        core = sum(2.0 * (stop - start) * inner * cols for start, stop in map(self.task_rows, self.tasks_of(rank)))
        return core + sum(2.0 * math.prod(self.fringe_dims(f.kind)) for f in self.fringe_of(rank))


def positive_float(weight: object) -> bool:
    """A positive number that is a finite float (NumPy's numbers too; 10**400 is not one)."""
    if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
        return False
    try:
        return 0 < float(weight) < math.inf
    except OverflowError:
        return False


def _quotas(units: int, weights: Sequence[float]) -> list[int]:
    """Integers summing to ``units`` in proportion to ``weights`` (largest remainder)."""
    largest = max(weights)
    shares = [w / largest for w in weights]  # weights near 1e308 would sum (and scale) past the floats
    total = sum(shares)
    exact = [units * w / total for w in shares]
    quotas = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda p: (quotas[p] - exact[p], p))
    for p in by_remainder[: units - sum(quotas)]:
        quotas[p] += 1
    return quotas


def default_bands(products: int, ranks: int) -> int:
    """The fewest bands that give every rank an equal share: ranks / gcd(products mod ranks, ranks)."""
    return ranks // math.gcd(products % ranks, ranks)


def assign(products: int, ranks: int, bands: int, weights: Sequence[float] | None = None) -> tuple[Task, ...]:
    """Products to ranks in proportion to ``weights``: whole products first, then the rest in row bands.

    Ensures every (product, band) pair is given to exactly one rank.
    """
    weights = list(weights) if weights is not None else [1.0] * ranks
    if len(weights) != ranks or not all(map(positive_float, weights)):
        raise ValueError(f"need {ranks} positive weights, not {weights}")
    weights = [float(w) for w in weights]
    quota = _quotas(products * bands, weights)
    tasks: list[Task] = []
    product = 0
    while product < products:  # whole products, to the rank with the most quota left
        rank = max(range(ranks), key=lambda p: (quota[p], -p))
        if quota[rank] < bands:
            break
        tasks.append(Task(rank, product, (0, bands)))
        quota[rank] -= bands
        product += 1
    rank, band = 0, 0
    for product in range(product, products):  # what is left, band by band in rank order
        band = 0
        while band < bands:
            while quota[rank] == 0:
                rank += 1
            take = min(quota[rank], bands - band)
            tasks.append(Task(rank, product, (band, band + take)))
            quota[rank] -= take
            band += take
    return tuple(sorted(tasks, key=lambda t: (t.rank, t.product, t.bands)))


def _with_fringe(plan: Plan, weights: Sequence[float] | None) -> Plan:
    """Give each fringe product to the rank that would end it soonest: the fewest flops with it, over
    the rank's weight (by flops so far, a rank weighted slow, given the least core work, took every
    fringe product).

    Empty fringes are given too (and skipped when run), so a plan's structure,
    and its proof, do not depend on the shape.
    """
    speeds = [float(w) for w in weights] if weights is not None else [1.0] * plan.ranks
    fringe: list[FringeTask] = []
    for kind in FRINGES:
        rank = min(range(plan.ranks),
                   key=lambda p: (replace(plan, fringe=(*fringe, FringeTask(p, kind))).flops_of(p) / speeds[p], p))
        fringe.append(FringeTask(rank, kind))
    return replace(plan, fringe=tuple(fringe))


def make_plan(
    decomposition: Decomposition,
    shape: tuple[int, int, int],
    ranks: int,
    *,
    bands: int | None = None,
    weights: Sequence[float] | None = None,
    inputs: str = "replicated",
    output: str = "replicated",
) -> Plan:
    """The plan for ``ranks`` processes: balanced by ``weights`` (equal by default).

    ``bands`` defaults to the fewest that balance equal ranks exactly
    (:func:`default_bands`), or 8 per rank with uneven weights.
    """
    ranks = check_count(ranks, "ranks", 1)
    if len(shape) != 3:
        raise ValueError(f"shape must be (M, K, N), not {tuple(shape)}")
    shape = check_sizes(*shape)
    weights = None if weights is None else list(weights)  # read once: a generator's would be spent below
    if bands is None:
        even = weights is None or all(weight == weights[0] for weight in weights)  # unhashable ones refused later
        bands = default_bands(decomposition.rank, ranks) if even else 8 * ranks
    bands = check_count(bands, "bands", 1)
    tasks = assign(decomposition.rank, ranks, bands, weights)
    return _with_fringe(Plan(decomposition, tuple(shape), ranks, bands, tasks, (), inputs, output), weights)
