"""Scheduling passes: stages from dependencies, default schedules, fusion, single-target products."""

from .basis import single_target
from .default import default_schedule
from .stages import depends, fuse_elementwise, group_stages

__all__ = ["default_schedule", "depends", "fuse_elementwise", "group_stages", "single_target"]
