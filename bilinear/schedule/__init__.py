"""Scheduling passes: stages from dependencies, default schedules, fusion, single-target products,
C = A·B from an accumulating schedule."""

from .basis import single_target
from .default import default_schedule
from .from_zero import from_zero
from .stages import depends, fuse_elementwise, group_stages

__all__ = ["default_schedule", "depends", "from_zero", "fuse_elementwise", "group_stages", "single_target"]
