"""What an algorithm or schedule costs: products, additions, stages, flops, bytes.

Counts are per level of recursion, for one problem of size M×K by K×N whose
blocks are (M/m)×(K/k), (K/k)×(N/n) and (M/m)×(N/n).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Algorithm, Form, Multiply, Schedule, Stage, Update, net_effect, operand_of
from .expand import Expansion, expansion_of


@dataclass(frozen=True)
class AlgorithmCounts:
    products: int
    additions: int  # block additions as written, sharing named sums
    additions_unshared: int  # block additions if every product and output is formed on its own
    additions_by_side: tuple[int, int, int]  # A side, B side, C side, as written
    classical_products: int
    unused_products: int = 0  # products no output uses: verified, never computed

    @property
    def computed_products(self) -> int:
        return self.products - self.unused_products

    @property
    def speedup_per_level(self) -> float | None:
        """Classical products over those this scheme computes; None for a scheme with none (it computes nothing)."""
        return self.classical_products / self.computed_products if self.computed_products else None


def _adds(form) -> int:
    return max(len(form.terms) - 1, 0)


def side_of(expansion: Expansion, form: Form, name: str) -> str:
    """The side a named sum is on: its expansion's, or for one that cancels to zero its terms'."""
    if side := expansion.operand(name):
        return side
    return next((side for term in form.names() if (side := operand_of(term) or expansion.operand(term))), "C")


def used_names(algorithm: Algorithm) -> set[str]:
    """The names some output depends on, as written: products, sums and blocks."""
    depends = {s.name: s.form.names() for s in algorithm.sums}
    depends.update({p.name: p.left.names() + p.right.names() for p in algorithm.products})
    used: set[str] = set()
    pending = [name for output in algorithm.outputs for name in output.form.names()]
    while pending:
        name = pending.pop()
        if name not in used:
            used.add(name)
            pending.extend(depends.get(name, ()))
    return used


def count_algorithm(algorithm: Algorithm) -> AlgorithmCounts:
    """Products, and the additions of what an output uses (a product or sum none uses is never computed)."""
    expansion = expansion_of(algorithm)
    shape = algorithm.shape
    used = used_names(algorithm)
    side = {"A": 0, "B": 0, "C": 0}
    for entry in algorithm.sums:
        if entry.name in used:
            side[side_of(expansion, entry.form, entry.name)] += _adds(entry.form)
    for product in algorithm.products:
        if product.name in used:
            side["A"] += _adds(product.left)
            side["B"] += _adds(product.right)
    for output in algorithm.outputs:
        side["C"] += _adds(output.form)
    # without sharing, each product is formed from its expansion: one that cancels out of every output
    # (S = M8 + M1, then S - M8) is never formed
    unshared = sum(_adds(u) + _adds(v) for product, (u, v) in zip(algorithm.products, expansion.factors)
                   if expansion.uses[product.name]) + sum(_adds(w) for w in expansion.outputs.values())
    return AlgorithmCounts(
        products=algorithm.rank,
        additions=sum(side.values()),
        additions_unshared=unshared,
        additions_by_side=(side["A"], side["B"], side["C"]),
        classical_products=shape.m * shape.k * shape.n,
        unused_products=sum(1 for product in algorithm.products if not expansion.uses[product.name]),
    )


def block_elements(algorithm: Algorithm, operand: str, M: int, K: int, N: int) -> int:
    """Elements in one block of ``operand`` at the first level of an M×K×N product."""
    shape = algorithm.shape
    rows = {"A": M // shape.m, "B": K // shape.k, "C": M // shape.m}[operand]
    cols = {"A": K // shape.k, "B": N // shape.n, "C": N // shape.n}[operand]
    return rows * cols


def algorithm_flops(algorithm: Algorithm, M: int, K: int, N: int) -> tuple[int, int]:
    """(multiplication flops at the leaves of one level, addition flops) for M×K×N."""
    counts = count_algorithm(algorithm)
    shape = algorithm.shape
    leaf = 2 * (M // shape.m) * (K // shape.k) * (N // shape.n) * counts.computed_products
    a, b, c = counts.additions_by_side
    adds = a * block_elements(algorithm, "A", M, K, N) + b * block_elements(algorithm, "B", M, K, N)
    adds += c * block_elements(algorithm, "C", M, K, N)
    return leaf, adds


@dataclass(frozen=True)
class ScheduleCounts:
    stages: int
    elementwise_stages: int
    product_stages: int
    elementwise_statements: int
    product_statements: int
    target_updates: int  # block accumulations done by product epilogues
    elementwise_blocks_moved: dict[str, int]  # per block shape (A, B, C): buffers read + written, per stage, summed
    temporaries: int

    def launches(self, fused_leaves: bool) -> int:
        """Kernel launches one level issues where its products are leaves: a kernel per element-wise
        stage, and a library GEMM per product (with fused leaves, one kernel per product stage)."""
        return self.elementwise_stages + (self.product_stages if fused_leaves else self.product_statements)


@dataclass(frozen=True)
class CompiledCounts:
    """What a schedule's element-wise passes move as ``compile`` runs it with ``leaf`` and ``fuse``
    (the passes live above this layer, which fills this in: bilinear.lower.levels.compiled_counts)."""

    leaf: str
    fuse: bool
    counts: ScheduleCounts | None  # the plan as the schedule computes (C += A·B, or C = A·B where it overwrites C)
    from_zero: ScheduleCounts | None  # the plan run where C starts at zero (beta = 0), where there is one
    refused: str | None = None  # why compile refuses the schedule with these leaves (then no counts)


def _stage_traffic(stage: Stage) -> tuple[set[str], set[str]]:
    """(buffers read, buffers written) by an element-wise stage.  An ordered stage (a fused pass) runs as
    one kernel over its net effect: a buffer whose first value no statement uses is not read (`C21 = C22`
    then `C22 += C21` had counted C21 read), and one left as it was is not written."""
    if not stage.ordered:
        return (set().union(*(s.reads() for s in stage.statements)),
                set().union(*(s.writes() for s in stage.statements)))
    effect = net_effect(stage.statements)
    return {name for form in effect.values() for name in form.names()}, set(effect)


def count_schedule(schedule: Schedule) -> ScheduleCounts:
    elementwise = [s for s in schedule.stages if not s.is_product_stage()]
    moved: dict[str, int] = {}
    for stage in elementwise:
        read, written = _stage_traffic(stage)
        for buffer in [*read, *written]:
            temp = schedule.temporary(buffer)
            like = temp.like if temp else operand_of(buffer)
            moved[like] = moved.get(like, 0) + 1
    statements = [s for _, s in schedule.statements()]
    multiplies = [s for s in statements if isinstance(s, Multiply)]
    return ScheduleCounts(
        stages=len(schedule.stages),
        elementwise_stages=len(elementwise),
        product_stages=len(schedule.stages) - len(elementwise),
        elementwise_statements=sum(isinstance(s, Update) for s in statements),
        product_statements=len(multiplies),
        target_updates=sum(len(m.targets.terms) for m in multiplies),
        elementwise_blocks_moved=moved,
        temporaries=len(schedule.temporaries),
    )
