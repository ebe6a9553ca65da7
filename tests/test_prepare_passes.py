"""The passes a level's schedule goes through (bilinear.lower.levels.prepare_schedule): what they
produce is verified once, and a pass that breaks a schedule is named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import ROOT

import bilinear
from bilinear.diagnostics import BilinearError
from bilinear.frontend.loader import program_from_text
from bilinear.ir import Schedule
from bilinear.lower import levels
from bilinear.lower.elementwise import ElementwiseKernel
from bilinear.lower.levels import (PASSES, KernelNames, Options, Pass, default_for, level_plan, prepare_schedule,
                                   recurses)


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


# A source-mutation audit of lower/levels.py (session 78): each test fails under a change the suite had let
# through.

BIG = "1" + "0" * 400


def test_a_second_kernel_with_a_taken_name_is_suffixed_v2():
    names = KernelNames()
    first = ElementwiseKernel("s_float64_s0", "float64", ("A11",), ())
    other = ElementwiseKernel("s_float64_s0", "float64", ("A12",), ())
    assert names.unique(first).name == "s_float64_s0"
    assert names.unique(other).name == "s_float64_s0_v2"


def test_a_schedule_coefficient_past_the_range_is_said_to_be_beyond_it():
    text = (f"algorithm s <1,1,1;1>:\n  M1 = {BIG}*A11 * B11\n  C11 = M1/{BIG}\n"
            f"schedule t for s:\n  temp X: A\n  stage e: X = {BIG}*A11\n  stage p: X * B11 -> +1/{BIG}*C11\n")
    with pytest.raises(BilinearError) as caught:
        bilinear.compile(program_from_text(text, "s.bl"), backend="numpy")
    (error,) = caught.value.diagnostics
    assert error.span.line == 6 and "multiplies A11 by a coefficient beyond the float64 range" in error.message


def _plan(name):
    program = bilinear.load(ROOT / "algorithms" / f"{name}.bl")
    algorithm = program.algorithms[0]
    return level_plan(default_for(algorithm, "cublas"), algorithm, Options())


def test_a_level_recurses_when_its_blocks_are_exactly_the_cutoff_wide():
    plan = _plan("strassen")
    assert recurses(plan, Options(cutoff=4), 8, 8, 8)
    assert not recurses(plan, Options(cutoff=5), 8, 8, 8)


def test_recursion_compares_each_dimension_with_its_own_split():
    plan = _plan("grey234")
    assert (plan.algorithm.shape.m, plan.algorithm.shape.k, plan.algorithm.shape.n) == (2, 3, 4)
    assert not recurses(plan, Options(cutoff=2), 4, 4, 8)  # K=4 splits into 3 blocks of 1
    assert recurses(plan, Options(cutoff=2), 4, 6, 8)


def test_a_from_zero_plan_that_does_not_verify_is_dropped(monkeypatch):
    program = bilinear.load(ROOT / "algorithms" / "strassen.bl")
    algorithm = program.algorithms[0]
    real = levels.from_zero
    def short_of_its_last_stage(schedule, blocks):  # a from-zero plan that no longer computes C
        plan = real(schedule, blocks)
        return plan and replace(plan, stages=plan.stages[:-1])

    monkeypatch.setattr(levels, "from_zero", short_of_its_last_stage)
    plan = level_plan(default_for(algorithm, "cublas"), algorithm, Options())
    assert plan.from_zero is None
