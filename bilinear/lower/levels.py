"""One level of recursion: the options lowering takes, and the plan a level runs.

Each level gets the schedule it runs (a shipped one, or the default schedule
for an algorithm that has none), transformed for its leaf kind (single-target
products for library GEMMs, fused element-wise stages) and re-verified; its
element-wise stages become kernels, its product stages stay product
statements for the executor to recurse into or hand to the leaf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

from ..ir import Algorithm, Schedule, Stage
from ..schedule import default_schedule, fuse_elementwise, single_target
from ..verify.schedule import verify_schedule
from .elementwise import ElementwiseKernel, lower_elementwise

LEAVES = ("cublas", "fused")
DTYPES = ("float32", "float64")

# With fused leaves, an algorithm's default schedule carries its operand sums down to the
# fused kernel, and over several such levels the leaf products multiply and so do their
# sums' lengths.  NVRTC's time for one kernel grows faster than linearly with its distinct
# (left terms, right terms) pairs (one pipeline each: nvcc takes 76 s on winograd's 14), so a
# level carries sums down only while the products below fit one launch and their pairs stay
# few; above, its sums are formed in temporaries, with single-target products, so every
# branch below launches the same kernels.  (grey333 carried down three levels needed 28
# kernels holding 1,901 pipelines, 95 in one; now 8 holding 48.  `benchmarks/host_costs.py`
# prints both counts for every shipped configuration.)
LAUNCH_PRODUCTS = 512
LAUNCH_SUM_SHAPES = 12


@dataclass(frozen=True)
class Options:
    """How to lower: element type, levels of recursion, leaf kind, element-wise fusion."""

    dtype: str = "float64"
    levels: int = 1
    leaf: str = "cublas"
    fuse: bool = True
    cutoff: int = 1  # stop recursing when a block would have a dimension below this

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be float32 or float64, not {self.dtype!r}")
        if self.leaf not in LEAVES:
            raise ValueError(f"leaf must be one of {', '.join(LEAVES)}, not {self.leaf!r}")
        if self.levels < 0:
            raise ValueError(f"levels must be >= 0, not {self.levels}")
        if self.cutoff < 1:
            raise ValueError(f"cutoff must be >= 1, not {self.cutoff}")


Step = Union[ElementwiseKernel, Stage]


@dataclass(frozen=True)
class LevelPlan:
    """What one level of recursion runs."""

    algorithm: Algorithm
    schedule: Schedule
    steps: tuple[Step, ...]
    accumulate_fallback: "LevelPlan | None" = field(default=None)

    def kernels(self) -> tuple[ElementwiseKernel, ...]:
        own = tuple(s for s in self.steps if isinstance(s, ElementwiseKernel))
        return own + (self.accumulate_fallback.kernels() if self.accumulate_fallback else ())


def _identifier(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def prepare_schedule(schedule: Schedule, algorithm: Algorithm, options: Options) -> Schedule:
    """The schedule as it runs: single-target products for library leaves, fused element-wise stages.

    Every transformed schedule is verified again; a failure here is a bug in a pass.
    """
    prepared = single_target(schedule) if options.leaf == "cublas" else schedule
    if options.fuse:
        prepared = fuse_elementwise(prepared)
    check = verify_schedule(prepared, algorithm)
    if not check.ok:
        raise AssertionError(f"internal error: a scheduling pass broke {schedule.name}: {check.errors[0].message}")
    return prepared


def level_plan(schedule: Schedule, algorithm: Algorithm, options: Options) -> LevelPlan:
    prepared = prepare_schedule(schedule, algorithm, options)
    steps: list[Step] = []
    for index, stage in enumerate(prepared.stages):
        if stage.is_product_stage():
            steps.append(stage)
        else:
            name = _identifier(f"{prepared.name}_{options.dtype}_s{index}")
            steps.append(lower_elementwise(stage, prepared, name, options.dtype))
    fallback = None
    if schedule.overwrites_c:
        # Products that accumulate into C cannot recurse into a schedule that overwrites C.
        fallback = level_plan(default_schedule(algorithm, options.leaf), algorithm, options)
    return LevelPlan(algorithm, prepared, tuple(steps), fallback)


def recurses(plan: LevelPlan, options: Options, M: int, K: int, N: int) -> bool:
    """Whether a level splits an M×K×N problem (every block at least ``cutoff`` wide)."""
    shape = plan.algorithm.shape
    return min(M // shape.m, K // shape.k, N // shape.n) >= options.cutoff
