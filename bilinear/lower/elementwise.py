"""Element-wise stages to kernel specs: one kernel per stage.

A stage's net effect on each element is a linear map: every buffer it writes
ends as a combination of the values the buffers held when the stage began
(statements of a concurrent stage do not conflict, and an ordered stage runs
in order per element, so simulating the statements in order gives that map).
The kernel loads each source once, computes each written value directly from
the loaded ones (one rounding chain per output, however many statements
produced it), and stores each destination once.

Statements are grouped by the block shape they act on (A, B or C blocks and
the temporaries shaped like them), because A and B blocks differ in size for
rectangular problems; the launch's second grid dimension picks the group.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..ir import Schedule, Stage, net_effect
from ..schedule.effect import crossing_shapes, like_of
from .render import render

CTYPES = {"float64": "double", "float32": "float"}
VECTOR = {"float64": ("double2", 2, ("x", "y")), "float32": ("float4", 4, ("x", "y", "z", "w"))}


@dataclass(frozen=True)
class Assignment:
    """``slot := Σ coef · (value of slot at the start of the stage)``."""

    target: int
    terms: tuple[tuple[int, Fraction], ...]


@dataclass(frozen=True)
class Group:
    """Statements over blocks of one shape: ``like`` is 'A', 'B' or 'C'."""

    like: str
    reads: tuple[int, ...]
    writes: tuple[int, ...]
    assignments: tuple[Assignment, ...]


@dataclass(frozen=True)
class ElementwiseKernel:
    """Everything the template needs for one element-wise stage."""

    name: str
    dtype: str
    buffers: tuple[str, ...]  # slot -> buffer (block or temporary) name
    groups: tuple[Group, ...]

    @property
    def slots(self) -> int:
        return len(self.buffers)


def lower_elementwise(stage: Stage, schedule: Schedule, name: str, dtype: str) -> ElementwiseKernel:
    """The kernel spec for one element-wise stage.

    Assumes: a verified schedule; ``stage`` holds only Updates.
    Ensures: one group per block shape; each group reads and writes only
    buffers of its shape, so groups are independent.
    """
    buffers, groups = _body(stage, schedule)
    return ElementwiseKernel(name, dtype, buffers, groups)


# Lowering runs once per element type (``bilinear compile`` writes both); a stage's buffers and
# groups do not depend on it, so they are kept per schedule object, each with its stage (held, so
# the ids stay theirs).
_BODIES: dict[int, tuple[Schedule, dict[int, tuple[Stage, tuple]]]] = {}


def _body(stage: Stage, schedule: Schedule) -> tuple[tuple[str, ...], tuple[Group, ...]]:
    entry = _BODIES.get(id(schedule))
    if entry is None or entry[0] is not schedule:
        if len(_BODIES) >= 4:
            _BODIES.pop(next(iter(_BODIES)))
        entry = _BODIES[id(schedule)] = (schedule, {})
    hit = entry[1].get(id(stage))
    if hit is None or hit[0] is not stage:
        hit = entry[1][id(stage)] = (stage, _compute_body(stage, schedule))
    return hit[1]


def _compute_body(stage: Stage, schedule: Schedule) -> tuple[tuple[str, ...], tuple[Group, ...]]:
    effect = net_effect(stage.statements)
    buffers = tuple(sorted({target for target in effect} | {n for form in effect.values() for n in form.names()}))
    slot = {buffer: index for index, buffer in enumerate(buffers)}
    groups = []
    for like in ("A", "B", "C"):
        targets = sorted(t for t in effect if like_of(t, schedule) == like)
        if not targets:
            continue
        reads = sorted({slot[n] for t in targets for n in effect[t].names()})
        assignments = tuple(Assignment(slot[t], tuple((slot[n], c) for n, c in effect[t].terms)) for t in targets)
        groups.append(Group(like, tuple(reads), tuple(slot[t] for t in targets), assignments))
    crossing = crossing_shapes(effect, schedule)
    if crossing is not None:
        raise ValueError(f"a stage writes a {crossing[0]}-shaped buffer that a {crossing[1]}-shaped statement reads in "
                         "the same stage; split the stage")
    return buffers, tuple(groups)


# --- rendering ---------------------------------------------------------------------------


def _literal(coef: Fraction, dtype: str) -> str:
    value = repr(float(coef))
    return value if dtype == "float64" else value + "f"


def _terms(assignment: Assignment, dtype: str) -> list[dict]:
    """Sign and magnitude of each term, so the template writes ``- x`` rather than ``+ -1.0 * x``."""
    return [
        {"slot": s, "sign": "-" if c < 0 else "+", "scale": None if abs(c) == 1 else _literal(abs(c), dtype)}
        for s, c in assignment.terms
    ]


def _assignment(assignment: Assignment, dtype: str, components: tuple[str, ...]) -> dict:
    """The right-hand sides, ``- 0.5 * v3 + v4`` per vector component and for one element (the
    template pastes them: building them here costs a fraction of a template loop per term)."""
    terms = [(t["sign"], f"{t['scale']} * " if t["scale"] else "", t["slot"]) for t in _terms(assignment, dtype)]
    if not terms:  # a sum that cancels (C11 = C11 - C11): the block is cleared
        zero = f" {_literal(Fraction(0), dtype)}"
        return {"target": assignment.target, "scalar": zero, "vector": {c: zero for c in components}}
    return {
        "target": assignment.target,
        "scalar": "".join(f" {sign} {scale}v{slot}" for sign, scale, slot in terms),
        "vector": {c: "".join(f" {sign} {scale}v{slot}.{c}" for sign, scale, slot in terms) for c in components},
    }


def render_elementwise(kernel: ElementwiseKernel, linkage: str = 'extern "C"') -> str:
    """CUDA source for one element-wise kernel (compiles with nvcc and NVRTC); ``linkage``: see
    :meth:`~bilinear.lower.plan.Lowered.cuda_source`."""
    vector, width, components = VECTOR[kernel.dtype]
    groups = [
        {
            "like": g.like,
            "reads": g.reads,
            "writes": g.writes,
            "assignments": [_assignment(a, kernel.dtype, components) for a in g.assignments],
        }
        for g in kernel.groups
    ]
    return render(
        "elementwise.cu.j2",
        kernel=kernel,
        linkage=linkage,
        ctype=CTYPES[kernel.dtype],
        vector=vector,
        width=width,
        components=components,
        groups=groups,
    )
