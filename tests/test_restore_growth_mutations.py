"""Restoration bounds pinned where the rest of the suite let a changed line pass: a source-mutation audit of
bilinear/verify/restore_growth.py against tests/test_restore_growth.py.  61 mutants: 53 killed by the suite,
none equivalent, 8 killed here (RestoreGrowth's ``frozen``; ``bound``'s default 0.0 for an operand with no
blocks; ``_is_float``'s numerator limit ``< 2**24``, three ways: ``<=``, ``3**24``, ``2**25``, since made exact; ``_roundings``'s
``max(len - 1, 0)`` as ``max(len - 1, 1)``; ``coef * inner`` as ``coef / inner`` in a buffer's content; the
temporaries' ``likes`` dropped from the operand test), none left unjudged.  No bug found.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bilinear.ir import Form, Multiply, Schedule, Stage, Update
from bilinear.ir.schedule import Temporary
from bilinear.verify.restore_growth import RestoreGrowth, _is_float, restore_growth

BLOCKS = {"A": ("A11", "A12"), "B": ("B11",)}


def _update(target: str, **terms) -> Update:
    return Update(target, Form.of({name: Fraction(c) for name, c in terms.items()}))


def _product(left: str) -> Multiply:
    return Multiply(Form.symbol(left), Form.symbol("B11"), Form.symbol("C11"))


def _schedule(*stages: Stage, temporaries: tuple[Temporary, ...] = ()) -> Schedule:
    return Schedule("s", "t", frozenset({"inplace", "restore"}), temporaries, stages)


def test_a_coefficient_no_float32_holds_rounds_once_more():
    """A11 = A11 + c·A12 has magnitude 1 + c: with c = 2^24 − 1 it rounds twice (the addition, the product),
    2·2^24 = 33554432; with c = 2^24 + 1, which no float32 holds, three times, 3·(2^24 + 2) = 50331654; with
    c = 2^24 (a 25-bit numerator, but float32 holds it) twice, 2·(2^24 + 1) = 33554434 (it had counted three)."""
    def own(c: int) -> tuple:
        return restore_growth(_schedule(Stage("up", (_update("A11", A11=1, A12=c),))), BLOCKS).blocks["A"]

    assert own(2**24 - 1) == ((33554432.0, 0.0), (0.0, 0.0))
    assert own(2**24 + 1) == ((50331654.0, 0.0), (0.0, 0.0))
    assert own(2**24) == ((33554434.0, 0.0), (0.0, 0.0))


def test_exactly_the_coefficients_float32_holds_are_taken_as_exact():
    """2^-150 (below the smallest subnormal, 2^-149) and 2^128 (past the largest float) had been taken as
    exact, 2^24 and 2^30 as inexact; the edges of the range either way."""
    exact = [Fraction(2**24), Fraction(2**30), Fraction(1, 2**149), Fraction(3, 2**149), Fraction(2**127),
             Fraction((2**24 - 1) * 2**104), Fraction(-(2**24 - 1), 2**149), Fraction(0), Fraction(-5, 8)]
    inexact = [Fraction(1, 2**150), Fraction(3, 2**150), Fraction(2**128), Fraction((2**24 + 1) * 2**103),
               Fraction(2**24 + 1), Fraction(1, 3), Fraction(2**25 - 1, 2**30)]
    assert [_is_float(c) for c in exact] == [True] * len(exact)
    assert [_is_float(c) for c in inexact] == [False] * len(inexact)


@given(st.integers(-(2**26), 2**26), st.integers(-170, 140))
def test_a_coefficient_is_exact_where_a_float32_round_trip_keeps_it(numerator, exponent):
    """Against NumPy: c is exact where float32(c) == c (float64 holds every float32, so float(c) of a float32
    value is c itself; an inexact c comes back as another number, or as 0 or infinity)."""
    coef = Fraction(numerator) * Fraction(2) ** exponent
    with np.errstate(over="ignore", under="ignore"):
        single = float(np.float32(float(coef)))
    assert _is_float(coef) == (math.isfinite(single) and Fraction(single) == coef)


def test_an_operand_with_no_blocks_is_bounded_by_zero():
    """Asked only about A, the growth bounds B by 0.0, over no level below and over one of bound 5."""
    growth = restore_growth(_schedule(Stage("up", (_update("A11", A11=1, A12=1),))), {"A": ("A11", "A12")})
    assert growth.blocks == {"A": ((2.0, 0.0), (0.0, 0.0))}
    assert growth.bound("B") == 0.0 and growth.bound("B", 5.0) == 0.0


def test_the_growth_is_frozen():
    """A RestoreGrowth's blocks cannot be reassigned."""
    growth = RestoreGrowth({"A": ((1.0, 0.0),)})
    with pytest.raises(dataclasses.FrozenInstanceError):
        growth.blocks = {}  # type: ignore[misc]
    assert growth.bound("A") == 1.0


def test_a_negation_does_not_round():
    """A11 = −A11, a product hands it down (magnitude 1), A11 = −A11 again: one term by −1 is exact, so A11
    ends within 0 + 1·G, not 2 + 1·G."""
    growth = restore_growth(_schedule(Stage("neg", (_update("A11", A11=-1),)), Stage("p", (_product("A11"),)),
                                      Stage("back", (_update("A11", A11=-1),))), BLOCKS)
    assert growth.blocks["A"] == ((0.0, 1.0), (0.0, 0.0))


def test_a_coefficient_scales_a_buffers_content():
    """A11 += 2·A12 (rounds 2·(1 + 2) = 6; A11 = A11 + 2·A12, magnitude 3); A12 += 2·A11 (rounds 2·(1 + 2·3) =
    14; A12 = 2·A11 + 5·A12, magnitude 7, not the 4 of 2·A11 + 2·A12); a product hands A12 down (7); A12 −=
    2·A11 rounds 2·(7 + 2·3) = 26, A11 −= 2·A12 2·(3 + 2·1) = 10.  A11: 6 + 2·14 + 2·26 + 10 = 96 and 2·7 =
    14; A12: 14 + 26 = 40 and 7 (A11's first rounding goes in and out of A12)."""
    growth = restore_growth(_schedule(Stage("u1", (_update("A11", A11=1, A12=2),)),
                                      Stage("u2", (_update("A12", A12=1, A11=2),)),
                                      Stage("p", (_product("A12"),)),
                                      Stage("d2", (_update("A12", A12=1, A11=-2),)),
                                      Stage("d1", (_update("A11", A11=1, A12=-2),))), BLOCKS)
    assert growth.blocks["A"] == ((96.0, 14.0), (40.0, 7.0))


def test_a_temporary_shaped_like_a_carries_its_errors():
    """T1 = A11 + A12 (a temporary like A) rounds 1·2; a product hands T1 down (magnitude 2); A11 = T1 − A12
    rounds 1·(2 + 1): A11 ends within 2 + 3 = 5 and 2·G (with T1 left out, 1 and 0)."""
    growth = restore_growth(_schedule(Stage("t", (_update("T1", A11=1, A12=1),)), Stage("p", (_product("T1"),)),
                                      Stage("back", (_update("A11", T1=1, A12=-1),)),
                                      temporaries=(Temporary("T1", "A"),)), BLOCKS)
    assert growth.blocks["A"] == ((5.0, 2.0), (0.0, 0.0))
