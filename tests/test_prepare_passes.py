"""The passes a level's schedule goes through (bilinear.lower.levels.prepare_schedule): what they
produce is verified once, and a pass that breaks a schedule is named."""

from __future__ import annotations

from dataclasses import replace

import pytest

import bilinear
from bilinear.ir import Schedule
from bilinear.lower import levels
from bilinear.lower.levels import PASSES, Options, Pass, prepare_schedule


def _msmes():
    program = bilinear.load("algorithms/msmes.bl")
    return program.main, program.algorithm(program.main.algorithm)


def _counting_verifier(monkeypatch) -> list[Schedule]:
    checked: list[Schedule] = []
    verify = levels.verify_schedule
    monkeypatch.setattr(levels, "verify_schedule", lambda schedule, algorithm: checked.append(schedule) or verify(schedule, algorithm))
    return checked


def test_the_passes_result_is_verified_once_not_after_each_pass(monkeypatch):
    """Each pass's result had been verified: two simulations where one proves the result, and the
    largest schemes' compile spent most of its time there (AlphaTensor's <11,11,11;896>)."""
    schedule, algorithm = _msmes()
    checked = _counting_verifier(monkeypatch)
    prepared = prepare_schedule(replace(schedule, name="msmes_once"), algorithm, Options(fuse=True))
    assert checked == [prepared]


def _drops_a_restore(schedule: Schedule) -> Schedule:
    """A broken pass: the last stage (a restore of A and B) is lost."""
    return replace(schedule, stages=schedule.stages[:-1])


def test_a_pass_that_breaks_the_schedule_is_named_and_the_ones_before_it_are_not(monkeypatch):
    schedule, algorithm = _msmes()
    monkeypatch.setattr(levels, "PASSES", (*PASSES, Pass("drop the restore", lambda options: True, _drops_a_restore)))
    with pytest.raises(AssertionError, match=r"^internal error: the pass 'drop the restore' broke msmes_broken: "):
        prepare_schedule(replace(schedule, name="msmes_broken"), algorithm, Options(fuse=True))


def test_a_first_pass_that_breaks_the_schedule_is_named_though_a_later_one_runs(monkeypatch):
    schedule, algorithm = _msmes()
    monkeypatch.setattr(levels, "PASSES", (Pass("drop the restore", lambda options: True, _drops_a_restore), *PASSES))
    with pytest.raises(AssertionError, match=r"^internal error: the pass 'drop the restore' broke msmes_first: "):
        prepare_schedule(replace(schedule, name="msmes_first"), algorithm, Options(fuse=True))
