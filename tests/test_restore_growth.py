"""The worst case of an in-place schedule's roundings on the inputs it restores (verify.restore_growth),
and what `bilinear run` says with it where a restoration passes C's bound."""

from __future__ import annotations

import shutil
from fractions import Fraction

import pytest
from conftest import ROOT

import bilinear
from bilinear.ir import Form, Multiply, Schedule, Stage, Update
from bilinear.measure import Restoration
from bilinear.runtime.run import RunResult, plans_run, restore_bounds
from bilinear.verify.restore_growth import restore_growth

U64 = 2.0**-53
BLOCKS = {"A": ("A11", "A12"), "B": ("B11",)}


def _update(target: str, **terms) -> Update:
    return Update(target, Form.of({name: Fraction(c) for name, c in terms.items()}))


def _product(left: str) -> Multiply:
    return Multiply(Form.symbol(left), Form.symbol("B11"), Form.symbol("C11"))


def _schedule(*stages: Stage) -> Schedule:
    return Schedule("s", "t", frozenset({"inplace", "restore"}), (), stages)


def test_an_update_its_product_and_its_inverse():
    """A11 += A12 rounds once, at most 1·(1 + 1); its product hands A11 + A12 (magnitude 2) down; A11 -= A12
    rounds at most 1·(2 + 1): A11 ends within 5 + 2·G (units of u·max|A|), A12 untouched."""
    growth = restore_growth(_schedule(Stage("up", (_update("A11", A11=1, A12=1),)),
                                      Stage("p", (_product("A11"),)),
                                      Stage("down", (_update("A11", A11=1, A12=-1),))), BLOCKS)
    assert growth.blocks["A"] == ((5.0, 2.0), (0.0, 0.0))
    assert growth.bound("A") == 5.0 and growth.bound("A", 10.0) == 25.0
    assert growth.blocks["B"] == ((0.0, 1.0),)  # B11 is only handed down


def test_an_error_taken_back_out_cancels():
    """A12's own hand-down goes into A11 with A11 += A12 and out again with A11 -= A12: A11 keeps only its own
    (a sum of absolute weights over the updates had counted it twice)."""
    growth = restore_growth(_schedule(Stage("p0", (_product("A12"),)),
                                      Stage("up", (_update("A11", A11=1, A12=1),)),
                                      Stage("p", (_product("A11"),)),
                                      Stage("down", (_update("A11", A11=1, A12=-1),))), BLOCKS)
    assert growth.blocks["A"] == ((5.0, 2.0), (0.0, 1.0))


def test_a_coefficient_a_float_cannot_hold_rounds_twice_more():
    """13/7: the product by it rounds, and so does the literal the kernel writes for it."""
    growth = restore_growth(_schedule(Stage("up", (_update("A11", A11=1, A12=Fraction(13, 7)),)),
                                      Stage("down", (_update("A11", A11=1, A12=Fraction(-13, 7)),))), BLOCKS)
    own = 3 * (1 + 13 / 7) + 3 * ((1 + 13 / 7) + 13 / 7)
    assert growth.blocks["A"][0] == (pytest.approx(own), 0.0)


def test_an_ordered_stage_counts_its_net_effect():
    """A fused stage computes each output from the loaded values: A11 += A12 then A11 -= A12 in one
    ordered stage leaves A11 as it was, with no rounding at all."""
    stage = Stage("both", (_update("A11", A11=1, A12=1), _update("A11", A11=1, A12=-1)), ordered=True)
    assert restore_growth(_schedule(stage), BLOCKS).blocks["A"] == ((0.0, 0.0), (0.0, 0.0))


def test_msmes_by_hand():
    """A11: handed down in products1 (1) and as A11 + A22 in products2 (2); A11 += A22 rounds at most 1·2,
    A11 -= A22 1·3; A22's own hand-down goes in and out with A22.  So 5 + 3·G.  A21: A21 += A22 rounds
    1·2, A21 -= A11 1·(2 + 2), A21 += A11 1·(2 + 1) and A11 -= A22 1·3 comes with A11: 12; handed down
    as A21 + A22 (2) and A21 − A11 (2), with A22's (1) and A11 + A22's (2): 7.  Compiled, restore1 and
    restore2 run as one fused stage, whose three-term sums round more: the worst block has 22 + 7·G,
    22 at one level and 22 + 7·22 = 176 at two."""
    program = bilinear.load("msmes")
    schedule = program.schedule("msmes")
    shape = program.algorithm(schedule.algorithm).shape
    growth = restore_growth(schedule, {"A": shape.blocks("A"), "B": shape.blocks("B")})
    assert dict(zip(shape.blocks("A"), growth.blocks["A"])) == {
        "A11": (5.0, 3.0), "A12": (11.0, 5.0), "A21": (12.0, 7.0), "A22": (0.0, 1.0)}
    assert growth.bound("A") == growth.bound("B") == 12.0
    product = bilinear.compile("msmes", levels=2, backend="numpy")
    assert restore_bounds(plans_run(product, 8, 8, 8), "float64") == (U64 * 176 / (1 - U64 * 176),) * 2
    assert restore_bounds(plans_run(product, 2, 2, 2), "float64") == (U64 * 22 / (1 - U64 * 22),) * 2


@pytest.mark.parametrize("levels", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_msmes_restores_within_its_worst_case(levels, dtype):
    product = bilinear.compile("msmes", levels=levels, dtype=dtype, backend="numpy")
    result = bilinear.runtime.run.run_once(product, 3 * 2**levels, 3 * 2**levels, 3 * 2**levels, repeat=1)
    assert result.inputs_written
    for restored, bound in zip((result.restored_a, result.restored_b), result.restore_bounds):
        assert 0 < restored.normwise <= bound


def _result(normwise: float, bound: float) -> RunResult:
    past = Restoration(1e6, 1e-9, normwise)
    return RunResult("s", (4, 4, 4), "numpy", 1e-16, 1e-17, 1e-14, 1.0, 1.0, None, Restoration(0, 0, 0), past,
                     restore_bounds=(0.0, bound), levels_run=1)


def test_run_says_whether_rounding_can_be_why_a_restoration_passed_c_bound():
    within = _result(1e-13, 1e-12).describe().splitlines()
    assert within[-3].endswith("B EXCEEDS THE BOUND")
    assert within[-2] == ("  (within the worst case of the schedules' roundings (B 1.00e-12): their chain of in-place "
                          "updates loses this much, as its arithmetic allows)")
    beyond = _result(1e-11, 1e-12).describe().splitlines()
    assert beyond[-2] == "  (B past the worst case of the schedules' roundings too (B 1.00e-12): rounding is not why)"
    assert "worst case" not in _result(1e-15, 1e-12).describe()


def test_a_detour_past_c_bound_is_told_within_its_roundings(capsys, tmp_path):
    """msmes with B22 += 2^40·B21 and its inverse: B comes back 3e-4 off, past C's bound, which the
    exit says; the worst case of those roundings, 2^40·(u·(1 + 2^40 + …)) scale, allows it (5.40e-03 while
    2^40, which a float32 holds, was counted as one rounding more)."""
    from bilinear.cli import main

    text = (ROOT / "algorithms" / "msmes.bl").read_text()
    text = text.replace("  stage products2:", "  stage detour1:    B22 += 1099511627776*B21\n  stage products2:")
    text = text.replace("  stage restore1:", "  stage detour2:    B22 -= 1099511627776*B21\n  stage restore1:")
    (tmp_path / "detour.bl").write_text(text)
    shutil.copy(ROOT / "algorithms" / "strassen.bl", tmp_path / "strassen.bl")
    assert main(["run", str(tmp_path / "detour.bl"), "-n", "64", "--backend", "numpy", "--repeat", "1"]) == 1
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if "restored to" in line)
    assert lines[at].endswith("   B EXCEEDS THE BOUND")
    assert lines[at + 1].startswith("  (within the worst case of the schedules' roundings (B 4.91e-03)")


def test_a_coefficient_below_one_rounds_its_product_too():
    """A11 = A11 + A12/2: the addition and the product by 1/2 (a coefficient other than ±1) each round, at most
    u·(1 + 1/2): 3 units, not the 1.5 of the addition alone (a source mutation had counted only coefficients
    above 1)."""
    growth = restore_growth(_schedule(Stage("up", (_update("A11", A11=1, A12=Fraction(1, 2)),))), BLOCKS)
    assert growth.blocks["A"] == ((3.0, 0.0), (0.0, 0.0))


def test_a_product_of_a_sum_hands_no_input_down():
    """(A11 + A12) * B11 multiplies a sum formed apart: the level below overwrites no input (a source mutation that
    handed a sum's buffers down raised ValueError)."""
    left = Form.of({"A11": Fraction(1), "A12": Fraction(1)})
    growth = restore_growth(_schedule(Stage("p", (Multiply(left, Form.symbol("B11"), Form.symbol("C11")),))), BLOCKS)
    assert growth.blocks["A"] == ((0.0, 0.0), (0.0, 0.0))
    assert growth.blocks["B"] == ((0.0, 1.0),)
