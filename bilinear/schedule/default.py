"""A schedule for an algorithm that has none.

- ``fused`` leaves: one stage holding every product, each with its operand
  sums and all its targets; the fused product kernel forms the sums while it
  loads tiles and adds into every target, so no workspace is needed.  Large
  schemes get several such stages (:data:`FUSED_STAGE_VIEWS`), so each launch's
  kernel compiles in seconds.
- ``cublas`` leaves: a library GEMM multiplies two buffers, so an operand
  that is a sum is first formed in a temporary (one A-shaped X and one
  B-shaped Y, reused); single blocks are used in place.  Multi-target
  products are left for :func:`~bilinear.schedule.basis.single_target`.
"""

from __future__ import annotations

from ..ir import Algorithm, Form, Multiply, Schedule, Stage, Temporary, Update
from ..verify.expand import Expansion, expansion_of
from .stages import group_stages


def _targets(expansion: Expansion, product: str) -> Form:
    return Form.of({block: form.coefficient(product) for block, form in expansion.outputs.items()})


def _operand(form: Form, temp: str, program: list) -> Form:
    """The form itself when it is one (scaled) block, else a temporary holding it."""
    if len(form.terms) == 1:
        return form
    program.append(Update(temp, form))
    return Form.symbol(temp)


#: The fused product kernel instantiates one load pipeline per distinct (left views, right views)
#: pair of its products, unrolled over the views, and NVCC/NVRTC's time grows faster than
#: linearly with their total: on a 73-product ⟨4,4,6⟩ scheme (51 pairs, 547 views) nvcc -arch=sm_90
#: ran over 5 CPU minutes and 18 GB before it was stopped, while 4 products (4 pairs, 42 views)
#: took 8 s and 8 products (7 pairs, 73 views) 18 s.  So the fused default schedule splits its
#: products into stages (one launch each) whose distinct pairs load at most this many views; the
#: launches compile in parallel (``runtime.prepare.compile_ahead``).  The shipped schemes keep one
#: stage (grey333: 51 views), except grey234 (85: two stages).
FUSED_STAGE_VIEWS = 64


def fused_chunks(pairs: list[tuple[int, int]], budget: int = FUSED_STAGE_VIEWS) -> list[list[int]]:
    """Product indices in stages, in order: a stage takes products while the distinct
    (left, right) pairs among them load at most ``budget`` views (a product past it alone)."""
    chunks: list[list[int]] = []
    seen: set[tuple[int, int]] = set()
    views = 0
    for index, pair in enumerate(pairs):
        cost = 0 if pair in seen else sum(pair)
        if chunks and views + cost <= budget:
            chunks[-1].append(index)
        else:
            chunks.append([index])
            seen, views, cost = set(), 0, sum(pair)
        seen.add(pair)
        views += cost
    return chunks


def default_name(algorithm: str, leaf: str) -> str:
    """What :func:`default_schedule` names the schedule it derives for ``leaf`` leaves."""
    return f"{algorithm}_fused" if leaf == "fused" else f"{algorithm}_cublas"


def is_default_name(schedule: Schedule) -> bool:
    """Whether ``schedule`` is named as :func:`default_schedule` names the one it derives (a name in
    no file, which messages should not quote as the user's)."""
    return schedule.name in {default_name(schedule.algorithm, leaf) for leaf in ("cublas", "fused")}


def default_schedule(algorithm: Algorithm, leaf: str = "cublas") -> Schedule:
    """A verified-by-construction schedule computing C += A·B with ``algorithm``.

    Assumes: a checked algorithm.  Ensures: every product of the algorithm is
    computed once; temporaries only where an operand is a sum and the leaf
    cannot form it (``cublas``), counted in ``Schedule.temporaries``.
    """
    expansion = expansion_of(algorithm)
    products = [
        (u, v, _targets(expansion, p.name)) for p, (u, v) in zip(algorithm.products, expansion.factors)
    ]
    products = [(u, v, w) for u, v, w in products if w.terms]  # a product no output uses is not computed
    if leaf == "fused":
        chunks = fused_chunks([(len(u.terms), len(v.terms)) for u, v, _ in products])
        stages = tuple(
            Stage("products" if len(chunks) == 1 else f"products_{number}", tuple(Multiply(*products[i]) for i in chunk))
            for number, chunk in enumerate(chunks, start=1)
        )
        return Schedule(default_name(algorithm.name, "fused"), algorithm.name, frozenset({"accumulate"}), (), stages)
    program: list = []
    for u, v, w in products:
        left = _operand(u, "X", program)
        right = _operand(v, "Y", program)
        program.append(Multiply(left, right, w))
    used = {name for s in program for name in s.writes()}
    temporaries = tuple(Temporary(name, like) for name, like in (("X", "A"), ("Y", "B")) if name in used)
    return Schedule(
        default_name(algorithm.name, "cublas"), algorithm.name, frozenset({"accumulate"}), temporaries, group_stages(tuple(program))
    )
