"""A schedule for an algorithm that has none.

- ``fused`` leaves: one stage holding every product, each with its operand
  sums and all its targets; the fused product kernel forms the sums while it
  loads tiles and adds into every target, so no workspace is needed.
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
    if leaf == "fused":
        stage = Stage("products", tuple(Multiply(u, v, w) for u, v, w in products))
        return Schedule(f"{algorithm.name}_fused", algorithm.name, frozenset({"accumulate"}), (), (stage,))
    program: list = []
    for u, v, w in products:
        left = _operand(u, "X", program)
        right = _operand(v, "Y", program)
        program.append(Multiply(left, right, w))
    used = {name for s in program for name in s.writes()}
    temporaries = tuple(Temporary(name, like) for name, like in (("X", "A"), ("Y", "B")) if name in used)
    return Schedule(
        f"{algorithm.name}_cublas", algorithm.name, frozenset({"accumulate"}), temporaries, group_stages(tuple(program))
    )
