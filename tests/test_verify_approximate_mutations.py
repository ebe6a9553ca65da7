"""Approximate (border-rank) schemes (verify.ring_approximate) pinned where the rest of the suite let a
changed line pass: a source-mutation audit of verify/ring_approximate.py, and of verify/lazy.py after it.

The suite's approximate schemes are Bini's ⟨3,2,2;10⟩ (and two corruptions of it) and three catalogue
files checked only for ``holds``.  Bini's products carry x⁻¹ at most, every divergent block in them has
a single negative power, and no product mixes powers within an entry or across a factor's rows.  So φ
(the cancellation) could be read from an entry's highest power, from a factor's best row, or as the
least of the three factors' powers rather than their sum, and still be 1; a block diverging as x⁻² and
x⁻¹ could list them in either order, joined by anything, each showing the constant term's form; a block
that both diverges and tends to the wrong limit could join its two complaints any way; and the Laurent
check could skip its expansion, ask one term rather than all, or take x^½ for a power.  The table-size
guard of :class:`ApproximateScheme` (which the importers never reach) could let rows of the wrong
length through.  Each test here checks a scheme of one to three products over ⟨1,1,1⟩ (whose classical
tensor is A11·B11 in C11) or ⟨1,2,1⟩ (A11·B11 + A12·B21), worked out by hand in its docstring.  The audit
found one wrong figure: φ counted a product that no C block uses (its W column zero, taken for x⁰), so an exact
scheme was said to lose accuracy like u·x⁻¹; fixed, with the test that showed it.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import sympy
from helpers.schedules import ONE, schedule_for

from bilinear.diagnostics import BilinearError
from bilinear.frontend.importers import read_catalogue
from bilinear.ir import Shape, Span
from bilinear.verify.ring_approximate import ApproximateScheme, is_laurent
from bilinear.verify.rings import ApproximateReport, check_approximate

X = sympy.Symbol("x")


def _read(tmp_path: Path, text: str) -> ApproximateScheme:
    """A fast-matmul ``-approx`` file: U's rows, ``#``, V's rows, ``#``, W's rows (one per block)."""
    path = tmp_path / "tiny-approx"
    path.write_text(text, encoding="utf-8")
    scheme = read_catalogue(path, "fast-matmul")
    assert isinstance(scheme, ApproximateScheme)
    return scheme


def _check(tmp_path: Path, text: str) -> ApproximateReport:
    return check_approximate(_read(tmp_path, text))


# --- the table sizes --------------------------------------------------------------------------------

SPAN = Span("t", 1, 1, 1, 2)


def _direct(u, v, w) -> ApproximateScheme:
    """An ⟨1,2,1⟩ scheme built without a reader: A11, A12 / B11, B21 / C11."""
    spans = tuple(tuple(SPAN for _ in table) for table in (u, v, w))
    return ApproximateScheme("t", Shape(1, 2, 1), X, u, v, w, spans, SPAN)


def test_a_table_with_too_few_rows_is_refused_with_the_count():
    """⟨1,2,1⟩ has two A blocks; a U of one row was let through when "too few" read as "too many"
    (!= as >), and the message had lost its "rows"."""
    with pytest.raises(ValueError) as caught:
        _direct(((1, 1),), ((1, 0), (0, 1)), ((1, 1),))
    assert str(caught.value) == "A side has 1 row; ⟨1,2,1⟩ needs 2"


def test_a_row_shorter_than_the_first_is_refused():
    """U's rows have 2 and 1 entries: one row short is enough (it had needed every row of a table
    to differ from U's first, any as all; or a row longer than it, != as >)."""
    with pytest.raises(ValueError) as caught:
        _direct(((1, 1), (1,)), ((1, 0), (0, 1)), ((1, 1),))
    assert str(caught.value) == "every row needs one entry per product"


# --- what a Laurent polynomial is -------------------------------------------------------------------


def test_a_power_of_a_sum_is_a_laurent_polynomial_once_expanded(tmp_path):
    """``(1+x)2`` is (x + 1)², as gen.py reads the suffix: 1 + 2x + x², a Laurent polynomial, so the
    reader takes it (unexpanded, the one term (x + 1)**2 has no rational coefficient, and the entry
    was refused).  C11 = (1+x)²·A11·B11 tends to A11·B11 with error O(x¹); φ = 0."""
    report = _check(tmp_path, "(1+x)2\n#\n1\n#\n1\n")
    assert (report.holds, report.order, report.cancellation) == (True, 1, 0)


def test_every_term_must_be_a_rational_multiple_of_an_integer_power(tmp_path):
    """x + 1/(1+x) has one good term and one bad one: every term must pass (any had let it in)."""
    path = tmp_path / "tiny-approx"
    path.write_text("(x+(1+x)i)\n#\n1\n#\n1\n", encoding="utf-8")
    with pytest.raises(BilinearError) as caught:
        read_catalogue(path, "fast-matmul")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.message == ("'(x+(1+x)i)' is x + 1/(x + 1), not a Laurent polynomial in x (a sum of rational "
                                  "multiples of powers of x)")
    assert (diagnostic.span.line, diagnostic.span.column) == (1, 1)


def test_a_fractional_power_is_not_a_laurent_polynomial():
    """gen.py's grammar writes no x^½, but is_laurent is the reader's check: its power must be an integer."""
    assert not is_laurent(sympy.sqrt(X), X)
    assert not is_laurent(1 + X ** sympy.Rational(3, 2), X)
    assert is_laurent(X ** 2 - sympy.Rational(1, 2) / X, X)


# --- φ: the most negative power a single product carries --------------------------------------------


def test_phi_takes_each_entry_at_its_lowest_power(tmp_path):
    """M1 = (1 + x⁻¹)·A11 · B11 → C11, M2 = (x + x⁻¹)·A11 · B11 → −C11: C11 = (1 + x⁻¹) − (x + x⁻¹) =
    1 − x, so A11·B11 in the limit, error O(x¹).  Each product's A factor reaches x⁻¹, so φ = 1 (read at
    each entry's highest power, 0 and 1, it was 0)."""
    report = _check(tmp_path, "(1+xi) (x+xi)\n#\n1 1\n#\n1 -1\n")
    assert (report.holds, report.order, report.cancellation) == (True, 1, 1)
    assert report.errors == ()


def test_phi_takes_each_factor_at_its_lowest_row(tmp_path):
    """⟨1,2,1⟩: M1 = (A11 + x⁻¹A12)(B11 + xB21) → C11, M2 = (xA11 + x⁻¹A12)·B11 → −C11.
    M1 = A11B11 + x·A11B21 + x⁻¹·A12B11 + A12B21, M2 = x·A11B11 + x⁻¹·A12B11, so
    C11 = A11B11 + A12B21 + x·(A11B21 − A11B11): it holds, error O(x¹).  Both A factors have a row
    with x⁻¹, so φ = 1 (from each factor's highest row, x⁰ + x¹ and x¹ + x⁰, it was 0)."""
    report = _check(tmp_path, "1 x\nxi xi\n#\n1 1\nx 0\n#\n1 -1\n")
    assert report.scheme.shape == Shape(1, 2, 1)
    assert (report.holds, report.order, report.cancellation) == (True, 1, 1)


def test_phi_adds_the_three_factors_powers(tmp_path):
    """M1 = x⁻¹A11 · x⁻¹B11 → x²C11 is exactly A11·B11 for every x (order None), and its single term
    carries x⁻¹·x⁻¹·x² = x⁰: φ = 0 (the least of the three powers, −1, had made it 1)."""
    report = _check(tmp_path, "xi\n#\nxi\n#\nx2\n")
    assert (report.holds, report.order, report.cancellation) == (True, None, 0)


def test_phi_is_zero_when_every_product_carries_a_positive_power(tmp_path):
    """M1 = x·A11 · B11 → C11 tends to 0, not A11·B11: no product carries a negative power, so φ = 0
    (φ started from 1 rather than 0 had said −1)."""
    report = _check(tmp_path, "x\n#\n1\n#\n1\n")
    (error,) = report.errors
    assert error.message == "C11 is wrong in the limit x → 0: it tends to 0 but must be A11*B11; misses A11*B11"
    assert (report.holds, report.order, report.cancellation) == (False, 1, 0)



def test_a_product_no_c_block_uses_carries_no_power_into_phi(tmp_path):
    """M1 = A11 · B11 → C11, M2 = x⁻¹A11 · B11, used by no C block (its W column is 0): C11 = M1 is
    A11·B11 for every x.  φ is "the largest power of 1/x in any single term u·v·w (0 when there is
    none)", and M2 has no nonzero term u·v·w; W's empty column had counted as x⁰, so φ was 1 and the report
    said "single products carry up to x^-1, so rounding errors grow like u·x^-1", of an exact scheme."""
    report = _check(tmp_path, "1 xi\n#\n1 1\n#\n1 0\n")
    assert (report.holds, report.order) == (True, None)
    assert report.cancellation == 0


# --- the messages of a block that diverges ----------------------------------------------------------


def test_a_block_diverging_at_two_powers_lists_each_with_its_own_form(tmp_path):
    """M1 = x⁻²A11 · B11 → C11, M2 = A11 · x⁻¹B11 → −2C11, M3 = A11 · B11 → C11:
    C11 = x⁻²·A11B11 − 2x⁻¹·A11B11 + A11B11.  Its limit term is right; it diverges, the most negative
    power first, each with its own coefficient (−2 at x⁻¹, not the limit's 1), joined by " + "; φ = 2,
    and no positive power, so order None.  Located at W's row, line 5."""
    report = _check(tmp_path, "x2i 1 1\n#\n1 xi 1\n#\n1 -2 1\n")
    (error,) = report.errors
    assert error.message == "C11 diverges as x → 0: it has x**-2*(A11*B11) + x**-1*(-2*A11*B11)"
    assert error.span.line == 5
    assert (report.holds, report.order, report.cancellation) == (False, None, 2)


def test_a_block_that_diverges_and_has_the_wrong_limit_says_both(tmp_path):
    """M1 = x⁻¹A11 · B11 → C11, M2 = A11 · xB11 → C11: C11 = x⁻¹·A11B11 + x·A11B11 diverges and has
    no constant term (it tends to 0 where A11·B11 is due): one error, its two parts joined by "; "."""
    report = _check(tmp_path, "xi 1\n#\n1 x\n#\n1 1\n")
    (error,) = report.errors
    assert error.message == (
        "C11 diverges as x → 0: it has x**-1*(A11*B11); "
        "C11 is wrong in the limit x → 0: it tends to 0 but must be A11*B11; misses A11*B11"
    )
    assert (report.holds, report.order, report.cancellation) == (False, 1, 1)


# --- verify.lazy: the fast schedule simulation ------------------------------------------------------
#
# The suite runs the lazy simulation on the shipped schedules (integer coefficients, each C block's
# C⁰ kept once) and on corruptions the full simulation also rejects; verify_schedule's answer was
# all it asked of most schedules.  A rejection by the lazy simulation is re-run in full, so only a
# wrong acceptance changes a verdict: reading ⅓ as 1, a C⁰ kept twice, or one C block of two losing
# it, were accepted.  The fast path itself was not pinned: every schedule could be simulated in full.

TWO = "algorithm two <1,1,2;2>:\n  M1 = A11 * B11\n  M2 = A11 * B12\n  C11 = M1\n  C12 = M2\n\n"


def _said(schedule, algorithm) -> tuple[list[str], list[str]]:
    """(the lazy simulation's messages, verify_schedule's): the tests below need both."""
    from bilinear.verify.lazy import LazySimulation, verify_schedule

    return ([e.message for e in LazySimulation(schedule, algorithm).run().errors],
            [e.message for e in verify_schedule(schedule, algorithm).errors])


def test_a_fraction_is_read_as_itself_not_as_its_numerator():
    """X = ⅓·A11, then C11 += X·B11: C11 ends as C11⁰ + ⅓·A11·B11, wrong.  Taking ⅓ as its
    numerator 1 (where the coefficient is read, or where X's value is) made X = A11, and the lazy
    simulation accepted it; the full simulation's diagnostic is the one given."""
    from bilinear.verify.lazy import LazySimulation, verify_schedule

    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: A\n  stage s1: X = 1/3*A11\n"
                                            "  stage p1: C11 += X * B11\n")
    assert not LazySimulation(schedule, algorithm).run().ok
    check = verify_schedule(schedule, algorithm)
    assert [e.message for e in check.errors] == [
        "C11 ends holding 1/3*A11*B11 + C11⁰ but must hold A11*B11 + C11⁰; has +1/3*A11*B11 where it needs +A11*B11"]


def test_a_right_schedule_with_fractions_is_accepted_by_the_lazy_simulation():
    """X = ⅓·A11, then X·B11 → +3·C11: C11 = C11⁰ + 3·⅓·A11·B11, right, decided without the full
    simulation: its final C11 is the symbol *V0 (the full one's would be A11*B11 + C11⁰)."""
    from bilinear.verify.lazy import LazySimulation, verify_schedule

    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: A\n  stage s1: X = 1/3*A11\n"
                                            "  stage p1: X * B11 -> +3*C11\n")
    assert LazySimulation(schedule, algorithm).run().ok
    check = verify_schedule(schedule, algorithm)
    assert check.ok and str(check.final["C11"]) == "*V0" and str(check.final["X"]) == "1/3*A11"


def test_a_zeroed_temporary_is_zero_not_a_c_value():
    """X = A11 − A11 is 0 (no kind); X += A11 makes it A11, an A value.  Taking the 0 for a C value
    (a fresh *V symbol) made X + A11 a mix of kinds, which the lazy simulation rejected."""
    from bilinear.verify.lazy import LazySimulation

    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: A\n  stage s1: X = A11 - A11\n"
                                            "  stage s2: X += A11\n  stage p1: C11 += X * B11\n")
    check = LazySimulation(schedule, algorithm).run()
    assert check.ok and str(check.final["X"]) == "A11"


def test_a_read_mixing_kinds_is_refused_by_the_lazy_simulation():
    """X = A11 + B11 mixes an A value and a B value: the lazy simulation hands such a read to the
    full one, which reports it (== as != had passed every mixed read on, and every plain one to it)."""
    from bilinear.verify.lazy import LazySimulation

    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: A\n  stage s1: X = A11 + B11\n"
                                            "  stage p1: C11 += X * B11\n")
    check = LazySimulation(schedule, algorithm).run()
    assert not check.ok
    assert check.errors[0].message == "`X = A11 + B11` mixes values of different kinds: A11 holds A11, B11 holds B11"


def test_c_original_content_kept_twice_is_wrong():
    """C11 = 2·C11, then C11 += A11·B11: C11 ends as 2·C11⁰ + A11·B11, where C11⁰ + A11·B11 is due.
    C11⁰'s weight {C11: 2} is not {C11: 1}; unchecked, the lazy simulation accepted it."""
    from bilinear.verify.lazy import verify_schedule

    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  stage s1: C11 = 2*C11\n"
                                            "  stage p1: C11 += A11 * B11\n")
    check = verify_schedule(schedule, algorithm)
    assert [e.message for e in check.errors] == [
        "C11 ends holding A11*B11 + 2*C11⁰ but must hold A11*B11 + C11⁰; has +2*C11⁰ where it needs +C11⁰"]


def test_one_c_block_of_two_losing_its_original_content_is_wrong():
    """⟨1,1,2⟩, accumulating: C11 = A11·B11 drops C11⁰ while C12 += A11·B12 keeps C12⁰.  Any C
    block that loses it is wrong (it had taken all of them to)."""
    from bilinear.verify.lazy import verify_schedule

    schedule, algorithm = schedule_for(TWO, "schedule s for two:\n  stage p1: C11 = A11 * B11;  C12 += A11 * B12\n")
    check = verify_schedule(schedule, algorithm)
    assert [e.message for e in check.errors] == ["C11 ends holding A11*B11 but must hold A11*B11 + C11⁰; misses C11⁰"]


@pytest.mark.parametrize("header, body", [("schedule s for one:", "C11 += A11 * B11"),
                                          ("schedule s for one: overwrite", "C11 = A11 * B11")])
def test_the_lazy_simulation_decides_a_schedule_that_never_reads_c_s_original_content(header, body):
    """An accumulating schedule, and an overwrite one that never reads C: both are decided by the
    lazy simulation, whose final C11 is the symbol *V0 (the full one's, C11⁰ + A11*B11 or A11*B11).
    Only an overwrite schedule that reads C's original content goes to the full simulation at once."""
    from bilinear.verify.lazy import verify_schedule

    schedule, algorithm = schedule_for(ONE, f"{header}\n  stage p1: {body}\n")
    check = verify_schedule(schedule, algorithm)
    assert check.ok and str(check.final["C11"]) == "*V0"


def test_the_lazy_simulation_refuses_c_original_content_left_in_an_overwrite_schedule():
    """Overwrite: X = A11·B11, then C11 += X, an update that reads C11⁰ (C may hold NaN).  The lazy
    simulation does not see that read (its values are symbols), so it must refuse the C11⁰ left in
    C11, weight {C11: 1}, which is right for an accumulating schedule only (unasked, it accepted it).
    verify_schedule sends such a schedule to the full simulation, which names the read."""
    from bilinear.verify.lazy import LazySimulation, verify_schedule

    schedule, algorithm = schedule_for(ONE, "schedule s for one: overwrite\n  temp X: C\n  stage p1: X = A11 * B11\n"
                                            "  stage s1: C11 += X\n")
    assert [e.message for e in LazySimulation(schedule, algorithm).run().errors] == [
        "C11⁰ ends in the wrong C blocks: {'C11': Fraction(1, 1)}"]
    (error,) = verify_schedule(schedule, algorithm).errors
    assert error.message.startswith("`C11 += X` reads C11, which holds C's original content (C11⁰); ")


def test_a_read_of_an_unwritten_temporary_is_reported_by_the_lazy_simulation():
    """Y = X reads the temporary X before anything is written to it; Y is never used, and C11 +=
    A11·B11 is right.  The lazy simulation hands the read to the full one's, which reports it (a
    silent None had left Y unknown and the schedule accepted)."""
    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: A\n  temp Y: A\n  stage s1: Y = X\n"
                                            "  stage p1: C11 += A11 * B11\n")
    assert _said(schedule, algorithm) == (["X is read before anything is written to it"],
                                          ["X is read before anything is written to it"])


def test_c_original_content_that_also_ends_in_another_block_is_wrong():
    """⟨1,1,2⟩, accumulating: C12 += C11 first, so C12 ends as C12⁰ + C11⁰ + A11·B12.  C11⁰'s weight
    is {C11: 1, C12: 1}: right in its own block, wrong in C12 (asking only its own block's weight
    had accepted it)."""
    from bilinear.verify.lazy import verify_schedule

    schedule, algorithm = schedule_for(TWO, "schedule s for two:\n  stage s1: C12 += C11\n"
                                            "  stage p1: C11 += A11 * B11;  C12 += A11 * B12\n")
    assert [e.message for e in verify_schedule(schedule, algorithm).errors] == [
        "C12 ends holding A11*B12 + C11⁰ + C12⁰ but must hold A11*B12 + C12⁰; has +C11⁰ that should not be there"]


def test_c_original_content_that_cancels_through_c_values_is_lost():
    """X = C11 (C11⁰, kept as *V0), C11 −= X (C11⁰ − *V0, kept as *V1), C11 += A11·B11: C11 ends as
    A11·B11, its C11⁰ gone.  Propagated back, C11⁰'s weights cancel to an empty {}: lost as surely as
    one that never reaches a C block (asking only for a missing entry had accepted it)."""
    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: C\n  stage s1: X = C11\n"
                                            "  stage s2: C11 -= X\n  stage p1: C11 += A11 * B11\n")
    assert _said(schedule, algorithm) == (["a C block loses its original value"],
                                          ["C11 ends holding A11*B11 but must hold A11*B11 + C11⁰; misses C11⁰"])
