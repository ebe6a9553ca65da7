"""The stability quantities (verify/stability.py) pinned where the rest of the suite let a changed line pass: a
source-mutation audit of it.  112 mutants (annotations left out): 86 killed by tests/test_stability.py,
test_report_mutations.py and test_rings_report_mutations.py; the 26 others judged by hand, 6 of them
killed here, 20 equivalent:

- ``list(values)`` skipped (lines 111 and 149): the callers pass dict views, which iterate again;
- the float path of ``_log_hypot_in_range`` given up more often: its answer None, or taken only above 1
  (line 133); its refusal test (line 130) made to hold for more values (the ``and`` made ``or`` or an
  operand of it dropped, a comparison with 0 reversed or its 0 made 1, the outer ``!=`` made ``==``).
  The exact path that follows gives the same logarithm, later;
- the underflow clause ``(f == 0) != (v == 0)`` dropped (line 130): a value that underflows to 0 beside a
  normal one changes the norm by less than 10^-30 of it, and alone it leaves a zero norm, which the float
  path already refuses; ``<`` as ``<=`` against the least normal float (itself normal);
- ``as_float``'s sign test at 0 or 1 (``>=``, ``> 1``): neither overflows;
- a C block's longest path starting from 1 rather than 0 (line 180): a product's path α + β is at least 2;
- ``frozen=True`` dropped from LevelGrowth and Stability: no code writes to them (not behaviour).

No bug found.
"""

from __future__ import annotations

import math
from fractions import Fraction

from bilinear.frontend.loader import program_from_text
from bilinear.verify.stability import _log_norm2, as_float, stability


def _stability(text: str):
    return stability(program_from_text(text, "s.bl").algorithms[0])


def test_a_value_beyond_the_float_range_is_an_infinity_of_its_sign():
    """10^400 and −10^400 overflow a float: +inf and −inf, not an OverflowError, None or the wrong sign."""
    assert as_float(Fraction(10**400)) == math.inf
    assert as_float(-(10**400)) == -math.inf
    assert as_float(Fraction(-(10**400), 3)) == -math.inf


def test_a_growth_term_beyond_the_float_range_is_infinite():
    """M1 = (10^200·A11)·(10^200·B11) into C11: ‖u‖‖v‖‖w‖ = 10^400, past the float range, so γ = inf."""
    big = 10**200
    result = _stability(f"algorithm big <1,1,1;1>:\n  M1 = ({big}*A11) * ({big}*B11)\n  C11 = M1\n")
    assert result.growth_factor == math.inf


def test_a_subnormal_coefficient_is_normed_exactly():
    """3·10^-322 is a subnormal float, held to 1 part in 60: its logarithm is taken from the rational
    (log 3 − 322·log 10), not from the float (3.0138…·10^-322), whose logarithm is off by 0.0046."""
    value = Fraction(3, 10**322)
    assert math.isclose(_log_norm2([value]), math.log(3) - 322 * math.log(10), rel_tol=0, abs_tol=1e-12)
    assert _log_norm2([value, Fraction(0)]) == _log_norm2([value])


def test_a_fractional_weight_enters_e_over_its_denominator():
    """M1 = (½·A11)·B11 and C11 = 2·M1: e = |2|·‖u‖₁‖v‖₁ = 2·½·1 = 1, the weight ½ scaled to the common
    denominator 2 as 1, not as 2·2 = 4 (which made e 4)."""
    result = _stability("algorithm half <1,1,1;1>:\n  M1 = (1/2*A11) * B11\n  C11 = 2*M1\n")
    assert result.e_vector == (Fraction(1),)
    assert result.q_vector == (3,)
