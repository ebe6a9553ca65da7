"""Matrix chains over several GPUs (MSMES thesis ch. 5).

``chain([A1, …, An])`` (called on every rank, every matrix on every rank):

1. picks the parenthesization by dynamic programming on the modelled time
   of each product (its flops at one GPU's measured rate),
2. walks the product tree in waves of independent products and decides
   per wave, as ch. 5 recommends: with at least as many independent
   products as ranks, run them side by side, one product per rank (longest
   first, each result broadcast to every rank); with fewer, compare that
   with running each product in turn over all ranks (the distributed
   product: its arithmetic at a measured speed-up, its bytes at a measured
   rate, :class:`ChainModel`) and take the faster,
3. runs the plan and returns the chain's product on every rank.

The plan is data (:class:`ChainPlan`), printed by :meth:`ChainPlan.describe`.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..lower.options import check_count
from ..runtime.views import is_row_major
from .agree import different_calls, is_matrix, line_strided, sample_of
from .comm import AgreedError, short
from .plan import positive_float


@dataclass(frozen=True)
class ChainModel:
    """What the planner knows about the machine: rates it measured or was given.

    A product over every rank takes its flops at ``speedup`` times one GPU's rate plus its A, B
    and C's bytes at ``moved`` bytes/s (the pieces sent and the result gathered).  A speed-up
    measured on one large square product alone had predicted a chain of smaller ones at 99.6 ms
    on 4 H200s where it took 145.0 (session 60): movement weighs more on smaller products, and
    :meth:`fitted` tells the two apart from two sizes (at 16384 and 32768: 151.7 predicted, 146.5
    measured).
    """

    rate: float = 50e12  # one GPU's GEMM flop/s
    speedup: float = 1.8  # the distributed product's speed-up over one GPU on its arithmetic, at these ranks
    bandwidth: float = 100e9  # bytes/s of broadcasting a result to every rank
    itemsize: int = 8
    moved: float = math.inf  # bytes/s at which the distributed product moves A, B and C (inf: no cost)

    def __post_init__(self) -> None:
        # a speed-up of 0 had divided by zero in the planner, a negative rate predicted negative times
        for name in ("rate", "speedup", "bandwidth"):
            if not positive_float(getattr(self, name)):
                raise ValueError(f"ChainModel's {name} must be a positive finite number, not {getattr(self, name)!r}")
        if not (self.moved == math.inf or positive_float(self.moved)):
            raise ValueError(f"ChainModel's moved must be a positive number of bytes/s or inf, not {self.moved!r}")
        check_count(self.itemsize, "ChainModel's itemsize", 1)

    def one_gpu(self, m: int, k: int, n: int) -> float:
        return 2.0 * m * k * n / self.rate

    def all_gpus(self, m: int, k: int, n: int) -> float:
        return self.one_gpu(m, k, n) / self.speedup + self.itemsize * (m * k + k * n + m * n) / self.moved

    @classmethod
    def fitted(cls, rate: float, timings: Sequence[tuple[tuple[int, int, int], float]], **fields) -> ChainModel:
        """The model whose products over every rank take the times measured at two sizes:
        ``timings`` holds ((m, k, n), seconds) twice.  Where the two do not tell arithmetic from
        movement (times in proportion to flops, or not growing as they should), the larger
        product's speed-up alone, as before."""
        if not positive_float(rate):  # (0 had divided by zero below)
            raise ValueError(f"ChainModel's rate must be a positive finite number, not {rate!r}")
        if len(timings := list(timings)) != 2:
            raise ValueError(f"fitted takes two timings, ((m, k, n), seconds) each, not {len(timings)}")
        for dims, seconds in timings:  # (a NaN had been passed over, the model built from the other timing alone)
            if not positive_float(seconds):
                raise ValueError(f"a timing must be a positive finite number of seconds, not {seconds!r}")
            if len(dims := tuple(dims)) != 3:
                raise ValueError(f"a timing's size must be three numbers m, k, n, not {dims!r}")
            for label, dimension in zip("mkn", dims):
                check_count(dimension, f"a timing's {label}", 1)
        if tuple(timings[0][0]) == tuple(timings[1][0]):
            raise ValueError(f"fitted takes timings at two sizes, not both at {tuple(timings[0][0])!r}")
        itemsize = fields.get("itemsize", 8)
        (small, t_small), (large, t_large) = sorted(timings, key=lambda timing: math.prod(timing[0]))
        flops = [2.0 * math.prod(dims) / rate for dims in (small, large)]  # one GPU's seconds
        moved = [itemsize * (m * k + k * n + m * n) for m, k, n in (small, large)]
        determinant = flops[0] * moved[1] - flops[1] * moved[0]
        if determinant:
            per_flop = (t_small * moved[1] - t_large * moved[0]) / determinant  # 1 / speedup
            per_byte = (flops[0] * t_large - flops[1] * t_small) / determinant  # 1 / moved
            if per_flop > 0 and per_byte > 0:
                return cls(rate=rate, speedup=1 / per_flop, moved=1 / per_byte, **fields)
        return cls(rate=rate, speedup=flops[1] / t_large, **fields)


@dataclass(frozen=True)
class Step:
    """``left @ right`` into node ``node``; ``rank`` is None when the product runs over every rank."""

    node: int
    left: int
    right: int
    dims: tuple[int, int, int]
    rank: int | None


@dataclass(frozen=True)
class ChainPlan:
    """Waves of steps; node ids below n are the inputs, ids from n on the products in order."""

    inputs: int
    order: str  # the parenthesization, e.g. "((A1 A2) (A3 A4))"
    waves: tuple[tuple[Step, ...], ...]
    predicted_seconds: float

    def name(self, node: int) -> str:
        """A node as the order names it: inputs A1, A2, ..., products P1, P2, ... in order."""
        return f"A{node + 1}" if node < self.inputs else f"P{node - self.inputs + 1}"

    def describe(self) -> str:
        lines = [f"chain of {self.inputs} matrices: {self.order}; predicted {self.predicted_seconds * 1e3:.1f} ms"]
        for number, wave in enumerate(self.waves, 1):
            where = "side by side" if wave[0].rank is not None else "each over every rank"
            steps = ", ".join(
                f"{self.name(s.node)} = {self.name(s.left)}·{self.name(s.right)} {'x'.join(map(str, s.dims))}"
                + (f" on rank {s.rank}" if s.rank is not None else "")
                for s in wave
            )
            lines.append(f"  wave {number} ({where}): {steps}")
        return "\n".join(lines)


MAX_CHAIN = 128  # parenthesize is cubic in the length, and recurses once per matrix


def parenthesize(dims: Sequence[int], cost) -> tuple[float, Any]:
    """The cheapest product tree of matrices ``dims[i] × dims[i+1]``: (cost, tree of indices); of
    trees that cost the same, the shallowest (its products run in fewer waves, more side by side)."""
    count = len(dims) - 1

    @functools.cache
    def best(i: int, j: int) -> tuple[float, int, Any]:  # cost, height, tree
        if i == j:
            return 0.0, 0, i
        options = []
        for split in range(i, j):
            (lc, lh, lt), (rc, rh, rt) = best(i, split), best(split + 1, j)
            options.append((lc + rc + cost(dims[i], dims[split + 1], dims[j + 1]), max(lh, rh) + 1, (lt, rt)))
        # costs equal but for rounding (sums in another order) count as equal
        return min(options, key=lambda option: (float(f"{option[0]:.12g}"), option[1]))

    total, _, tree = best(0, count - 1)
    return total, tree


def _order(tree: Any) -> str:
    return f"A{tree + 1}" if isinstance(tree, int) else f"({_order(tree[0])} {_order(tree[1])})"


def _levels(tree: Any, dims: Sequence[int], count: int):
    """Products of the tree as (node, left, right, dims, height), numbered from ``count``."""
    products: list[tuple[int, int, int, tuple[int, int, int], int]] = []

    def walk(t) -> tuple[int, int, int, int]:  # node, rows, cols, height
        if isinstance(t, int):
            return t, dims[t], dims[t + 1], 0
        left, right = walk(t[0]), walk(t[1])
        node = count + len(products)
        height = max(left[3], right[3]) + 1
        products.append((node, left[0], right[0], (left[1], left[2], right[2]), height))
        return node, left[1], right[2], height

    walk(tree)
    return products


def _wave(products, ranks: int, model: ChainModel) -> tuple[tuple[Step, ...], float]:
    """One wave: side by side (longest first, to the least-loaded rank) or each product over every rank;
    side by side wherever it has a product for every rank, as thesis ch. 5 has it (no rank idles, and
    none waits on another's collectives), the model deciding only for fewer."""
    load = [0.0] * ranks
    side: list[Step] = []
    for node, left, right, dims, _ in sorted(products, key=lambda p: -model.one_gpu(*p[3])):
        rank = min(range(ranks), key=lambda r: load[r])
        load[rank] += model.one_gpu(*dims) + model.itemsize * dims[0] * dims[2] / model.bandwidth
        side.append(Step(node, left, right, dims, rank))
    together = sum(model.all_gpus(*p[3]) for p in products)
    if len(products) >= ranks or max(load) <= together:
        return tuple(sorted(side, key=lambda s: s.node)), max(load)
    return tuple(Step(node, left, right, dims, None) for node, left, right, dims, _ in products), together


def plan_chain(shapes: Sequence[tuple[int, int]], ranks: int, model: ChainModel = ChainModel()) -> ChainPlan:
    """The plan for a chain of matrices with these shapes over ``ranks`` ranks."""
    check_count(ranks, "ranks", 1)
    if len(shapes) < 2:
        raise ValueError("a chain needs at least two matrices")
    if len(shapes) > MAX_CHAIN:
        raise ValueError(f"a chain of at most {MAX_CHAIN} matrices is planned, not {len(shapes)}; multiply it in parts")
    for dimension in (d for shape in shapes for d in shape):
        check_count(dimension, "a chain's dimension", 0)
    for (_, cols), (rows, _) in zip(shapes, shapes[1:]):
        if cols != rows:
            raise ValueError(f"the chain's shapes do not fit: {list(shapes)}")
    dims = [shapes[0][0]] + [cols for _, cols in shapes]
    _, tree = parenthesize(dims, lambda m, k, n: model.one_gpu(m, k, n))
    products = _levels(tree, dims, len(shapes))
    waves, total = [], 0.0
    for height in range(1, max(p[4] for p in products) + 1):
        wave, seconds = _wave([p for p in products if p[4] == height], ranks, model)
        waves.append(wave)
        total += seconds
    return ChainPlan(len(shapes), _order(tree), tuple(waves), total)


def run_chain(plan: ChainPlan, matrices: Sequence[Any], product: Any) -> Any:
    """Run a plan on this rank; ``product`` is a DistributedProduct (its comm and local products are used)."""
    comm, local = product.comm, product.local
    xp = comm.xp
    nodes: dict[int, Any] = dict(enumerate(matrices))
    for wave in plan.waves:
        failure = None
        for step in wave:
            left, right = nodes[step.left], nodes[step.right]
            m, _, n = step.dims
            if step.rank is None:  # the distributed product: its own agreement refuses on every rank
                nodes[step.node] = product(left, right)
                continue
            try:  # the allocation too: out of memory on one rank is said on every rank
                result = xp.empty((m, n), dtype=left.dtype)
                if step.rank == comm.rank:
                    # an in-place local schedule would write (and only approximately restore) the chain's matrices
                    multiply = local.classical if local.writes_inputs else local.product
                    multiply(left, right, out=result, alpha=1.0, beta=0.0)
            except Exception as error:  # noqa: BLE001 - said on every rank below: the others would wait for it
                failure, result = failure or short(f"{type(error).__name__}: {error}"), None
            nodes[step.node] = result
        if any(step.rank is not None for step in wave):
            _agree_on_failures(comm, failure)
        for step in wave:
            if step.rank is not None:
                comm.bcast(nodes[step.node], step.rank)
    return nodes[max(nodes)]


def _agree_on_failures(comm, failure: str | None) -> None:
    """Raise on every rank when a rank's own product failed (the others had waited at the next
    broadcast until the timeout, then blamed a dead rank)."""
    for rank, said in enumerate(comm.agree(failure)):
        if said is not None:
            raise AgreedError(f"a product of the chain failed on rank {rank}: {said}")


def chain(matrices: Sequence[Any], product: Any, model: ChainModel | None = None) -> tuple[Any, ChainPlan]:
    """The product of a chain of matrices (every one on every rank), and the plan that computed it.

    Raises:
        ValueError: for a product whose inputs or output are not replicated: the chain hands it
            whole matrices on every rank and takes a whole result back (a block2d product had
            returned 64 times the chain's product on 4 ranks).
    """
    if not hasattr(product, "comm"):
        raise TypeError(f"chain needs a distributed product (bilinear.distributed.compile), not {type(product).__name__}")
    if (product.inputs, product.output) != ("replicated", "replicated"):
        raise ValueError(f"chain needs a product with replicated inputs and output, not inputs={product.inputs!r} "
                         f"and output={product.output!r}: every rank holds every matrix of the chain")
    matrices = list(matrices)  # a generator was used up by the shapes
    shapes = [tuple(m.shape) if is_matrix(m) else None for m in matrices]
    row_major = [is_matrix(m) and is_row_major(line_strided(m, product.comm.xp)) for m in matrices]
    # with a sample of each matrix's entries: replicated inputs are the same matrices on every rank (the waves had
    # mixed ranks' own matrices into no rank's product), as product()'s agreement checks them
    samples = [sample_of(m) if shape is not None else None for m, shape in zip(matrices, shapes)]
    described = repr((shapes, [str(getattr(m, "dtype", type(m).__name__)) for m in matrices], row_major,
                      samples)).encode()
    if model is not None and not isinstance(model, ChainModel):  # ("fast" had failed in the planner, unnamed)
        raise TypeError(f"model must be a ChainModel, not {type(model).__name__}")
    model = model or ChainModel()
    # digests, as agree.facts sends its options: a long chain's shapes would not fit the exchange; and the model,
    # from which each rank plans the same waves (ranks that planned apart had crossed their exchanges)
    digests = [hashlib.sha256(text).hexdigest()[:16] for text in (described, repr(model).encode())]
    everyone = product.comm.agree(":".join(digests))
    if problem := different_calls(everyone):
        raise AgreedError(problem)
    if len({said.split(":")[0] for said in everyone}) > 1:
        raise AgreedError("the ranks were called with different chains (their number, shapes, dtypes, layouts or "
                          "entries of matrices differ); every rank passes the same chain")
    if len(set(everyone)) > 1:
        raise AgreedError("the ranks planned the chain with different models (ChainModel); every rank passes the "
                          "same one")
    for index, (matrix, shape) in enumerate(zip(matrices, shapes)):  # alike on every rank: they agreed
        if shape is None:
            what = f"an array of shape {matrix.shape}" if hasattr(matrix, "shape") else type(matrix).__name__
            raise ValueError(f"matrix {index} of the chain is not a matrix (2-D array): {what}")
    _check_dtypes(matrices, getattr(product.local.product, "dtype", None))
    if False in row_major:  # said here, not by the wave that meets it, of an intermediate product's B
        index = row_major.index(False)
        module = type(matrices[index]).__module__.split(".")[0]
        raise ValueError(f"matrix {index} of the chain is not row-major (C-contiguous, or row slices of one): pass "
                         f"{'np' if module == 'numpy' else module}.ascontiguousarray(it)")
    plan = plan_chain(shapes, product.comm.size, model)
    return run_chain(plan, matrices, product), plan


def _check_dtypes(matrices: list, compiled: str | None) -> None:
    """Every matrix of the chain in its product's dtype (matrix 0's where the product has none), said
    before any wave runs: a mismatch was found at the wave that met it, named by the intermediate
    product's shape."""
    wanted = (compiled or str(matrices[0].dtype)) if matrices else None
    for index, matrix in enumerate(matrices):
        if str(matrix.dtype) != wanted:
            whose = f"the product was compiled for {wanted}" if compiled else f"matrix 0 is {wanted}"
            raise ValueError(f"matrix {index} of the chain is {matrix.dtype}, but {whose}: a chain multiplies matrices "
                             "of its product's dtype")
