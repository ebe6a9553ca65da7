"""What compile and run say of a build that runs otherwise than asked: options that change nothing,
and a hybrid level whose schedule never runs (none is taken without a word); and of a library that
takes nvcc minutes to build."""

from __future__ import annotations

from ..report_sizes import bytes_text
from ..schedule import fuse_elementwise
from .fallback_runs import runs_its_fallback
from .levels import LevelPlan
from .manifest import LARGEST_SIDE, kernel_count, library_call_bytes
from .options import MANY_KERNELS
from .plan import Lowered


def unused_options(lowered: Lowered, what: str = "library") -> list[str]:
    """Options given that change nothing in this library (``what``: run's "product"), each said (none is
    dropped without a word)."""
    options, unused = lowered.options, []
    if options.levels == 0 and options.cutoff != 1:
        unused.append(f"--cutoff {options.cutoff} changes nothing: at --levels 0 no level recurses")
    if options.levels == 0 and options.launch != "serial":
        unused.append(f"--launch {options.launch} changes nothing: at --levels 0 the product is one GEMM")
    if options.workspace_limit is not None and library_call_bytes(lowered, *[LARGEST_SIDE] * 3) == 0:
        unused.append(f"--workspace-limit {options.workspace_limit} changes nothing: this {what} needs no workspace "
                      "at any size")
    if not options.fuse and not any(_would_fuse(plan) for plan in lowered.levels):
        unused.append("--no-fuse changes nothing: no level has consecutive element-wise stages to fuse")
    return unused + _schedules_never_run(lowered.levels)


def _schedules_never_run(levels: tuple[LevelPlan, ...]) -> list[str]:
    """A level whose schedule sets C (rsmm: C = A·B) below one whose products all add into C runs its
    accumulating fallback at every call: its own kernels are compiled and never launched."""
    said = []
    for level, (above, plan) in enumerate(zip(levels, levels[1:]), start=2):
        if runs_its_fallback(plan, above):
            said.append(f"level {level}'s {plan.schedule.name} sets C (C = A·B), but every product of level {level - 1} "
                        f"({above.schedule.name}) adds into C: level {level} runs {plan.accumulate_fallback.schedule.name}, "
                        f"its algorithm's default schedule, throughout, and {plan.schedule.name}'s kernels are never "
                        "launched")
    return said


def _would_fuse(plan: LevelPlan) -> bool:
    """Whether the fusing pass would merge stages of a level's plans (its schedule, the fallback and
    from-zero plans beside it)."""
    plans = (plan, plan.accumulate_fallback, plan.from_zero)
    return any(len(fuse_elementwise(p.schedule).stages) < len(p.schedule.stages) for p in plans if p is not None)


def build_notes(data: dict) -> list[str]:
    """A library with more kernels than nvcc builds in minutes (:data:`MANY_KERNELS`), said with what builds
    fewer: a catalogue scheme of a few hundred products compiled depth-first has a kernel per stage."""
    kernels = kernel_count(data)
    if kernels <= MANY_KERNELS:
        return []
    source = next(info["bytes"] for name, info in data["files"].items() if name.endswith(".cu"))
    options = data["options"]
    breadth = ("; --breadth runs a level's products as one batch of a few kernels (in more workspace)"
               if options["breadth"] < options["levels"] else "")
    return [f"the library holds {kernels} kernels in {bytes_text(source)} of CUDA, more than {MANY_KERNELS}: nvcc takes "
            f"minutes to build it{breadth}"]
