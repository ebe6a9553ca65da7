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
from typing import Callable, Union

from ..ir import Algorithm, Schedule, Stage
from ..schedule import default_schedule, fuse_elementwise, single_target
from ..verify.schedule import verify_schedule
from .elementwise import ElementwiseKernel, lower_elementwise
from .options import DTYPES, LAUNCH_PRODUCTS, LAUNCH_SUM_SHAPES, LEAVES, Options

__all__ = ["DTYPES", "LAUNCH_PRODUCTS", "LAUNCH_SUM_SHAPES", "LEAVES", "LevelPlan", "Options", "Step", "level_plan",
           "PASSES", "Pass", "prepare_schedule", "recurses"]

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


@dataclass(frozen=True)
class Pass:
    """A scheduling pass: ``run`` is a pure ``Schedule -> Schedule`` function, applied when
    ``enabled(options)``."""

    name: str
    enabled: Callable[[Options], bool]
    run: Callable[[Schedule], Schedule]


#: The passes a level's schedule goes through, in order.
PASSES = (
    # a library GEMM adds into one buffer: change the basis of C so every product has one target
    Pass("single target", lambda options: options.leaf == "cublas", single_target),
    # consecutive element-wise stages become one kernel that reads and writes each block once
    Pass("fuse element-wise stages", lambda options: options.fuse, fuse_elementwise),
)


def prepare_schedule(schedule: Schedule, algorithm: Algorithm, options: Options) -> Schedule:
    """The schedule as it runs: every enabled pass of :data:`PASSES`, each result verified
    again (a failure here is a bug in that pass)."""
    prepared = schedule
    for step in PASSES:
        if not step.enabled(options):
            continue
        prepared = step.run(prepared)
        check = verify_schedule(prepared, algorithm)
        if not check.ok:
            raise AssertionError(
                f"internal error: the pass {step.name!r} broke {schedule.name}: {check.errors[0].message}"
            )
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
