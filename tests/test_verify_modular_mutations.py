"""Modular schemes (verify.ring_modular) pinned where the rest of the suite let a changed line pass: a
source-mutation audit of verify/ring_modular.py, and of verify/ring_complex.py after it.

The suite's modular schemes are GF(2) catalogues and PLinOpt's √3 stand-in: integer coefficients, or
denominators such as 3 that are their own inverse modulo 2, and prime moduli only.  So taking a
denominator d for d⁻¹, or asking "does p divide d" where the rule is "is d prime to p" (the same for a
prime p, not for a composite one), still gave the right answers; so did messages cut at the wrong
term or located at the wrong line.  Its complex schemes were two one-product archives (AlphaEvolve's
⟨4,4,4;48⟩ is not in every checkout): three of the four real and all four imaginary terms of
(ur + i·ui)(vr + i·vi)(wr + i·wi) could change sign unseen.  Each test here checks a scheme of a few
products over ⟨1,1,1⟩ (whose classical tensor is the one entry A11·B11 in C11), or over ⟨1,6,1⟩ or
⟨2,10,1⟩ where a message's cut is the question, worked out by hand in its docstring.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from bilinear.frontend import program_from_text
from bilinear.ir import Shape, Span, block_name
from bilinear.verify.ring_tensor import block_indices
from bilinear.verify.rings import ComplexScheme, ModularScheme, check_complex, check_modular

ONE = Shape(1, 1, 1)


def _scheme(text: str, modulus: int) -> ModularScheme:
    return ModularScheme(program_from_text(text, "one.bl").algorithms[0], modulus)


# --- the modulus --------------------------------------------------------------------------------------


@pytest.mark.parametrize("modulus", [1, 0, -2])
def test_a_modulus_below_2_is_refused(modulus):
    """Modulo 1 every residue is 0, so any scheme whatever would "hold": a modulus is at least 2."""
    text = "algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"
    with pytest.raises(ValueError, match=f"a modulus is at least 2, not {modulus}"):
        _scheme(text, modulus)


# --- rationals a/b as a·b⁻¹ ---------------------------------------------------------------------------

HALVED = "algorithm halved <1,1,1;1>:\n  M1 = (1/2*A11) * B11\n  C11 = 2*M1\n"  # ½·2 = 1: exact over Q


def test_a_denominator_counts_as_its_inverse_modulo_p():
    """C11 = 2·((½·A11)·B11) is exact over Q.  Modulo 5, ½ is 2⁻¹ = 3 (2·3 = 6 ≡ 1), so C11 has
    2·3 = 6 ≡ 1 times A11·B11: it holds.  Taking ½ as 2 (its denominator, not its inverse) gives
    2·2 = 4 ≢ 1, "wrong modulo 5".  (Modulo 2 or with a denominator 3 modulo 2 the two agree: 3 ≡ 3⁻¹ ≡ 1.)"""
    report = check_modular(_scheme(HALVED, 5))
    assert report.holds and report.ok and report.exact_over_q
    assert report.errors == ()


def test_a_wrong_residue_of_a_fraction_is_named_by_its_value_modulo_p():
    """C11 = 3·((½·A11)·B11) is 3/2·A11·B11 over Q; modulo 5, 3·2⁻¹ = 3·3 = 9 ≡ 4: wrong, with +4.

    It is wrong over Q too (3/2 ≠ 1), so it is not exact over Q, though no rational error is listed:
    those name only blocks right modulo p ("holds only modulo 5" would be false of C11)."""
    report = check_modular(_scheme(HALVED.replace("2*M1", "3*M1"), 5))
    assert not report.holds and not report.exact_over_q and report.rational_errors == ()
    assert [e.message for e in report.modular_errors] == ["C11 is wrong modulo 5: has +4*A11*B11 where it needs +A11*B11"]


# --- a denominator with no inverse: "prime to p", not "not divisible by p" -----------------------------


@pytest.mark.parametrize(("text", "written", "where"), [
    (HALVED, "1/2·A11 in M1's A factor", (2, 13)),
    ("algorithm halved <1,1,1;1>:\n  M1 = A11 * (1/2*B11)\n  C11 = 2*M1\n", "1/2·B11 in M1's B factor", (2, 19)),
    ("algorithm halved <1,1,1;1>:\n  M1 = (2*A11) * B11\n  C11 = 1/2*M1\n", "1/2·M1 in C11 = ...", (3, 13)),
], ids=["A factor", "B factor", "output"])
def test_a_denominator_sharing_a_factor_with_a_composite_modulus_has_no_value(text, written, where):
    """Modulo 4, 2 has no inverse (2·x is even, never ≡ 1) though 4 does not divide 2: ½ has no value
    modulo 4, so each scheme (½·2 = 1 over ⟨1,1,1⟩, exact over Q) fails there, at the ½ it writes (its
    term's block or product name: line 2 columns 13 and 19 in a factor, line 3 column 13 in C11; not
    the product's or output's name in column 3).  Asking whether p divides the denominator let ½
    through to pow(2, -1, 4), a ValueError, or lost where it is written."""
    report = check_modular(_scheme(text, 4))
    assert not report.holds and report.exact_over_q and report.rational_errors == ()
    (error,) = report.modular_errors
    assert error.message == ("the coefficient 1/2 has no value modulo 4: its denominator is not invertible "
                             f"(written {written})")
    assert error.span is not None and (error.span.line, error.span.column) == where


def test_a_block_wrong_over_q_beside_a_coefficient_with_no_value_is_shown_at_its_own_line():
    """C11 = 3·((½·A11)·B11) modulo 2: ½ has no value there, so that is the one modular error, and
    over Q C11 has 3/2·A11·B11 where it needs A11·B11, a rational error located at C11's line (3),
    not at the algorithm's first line (1)."""
    report = check_modular(_scheme(HALVED.replace("2*M1", "3*M1"), 2))
    assert not report.holds and not report.exact_over_q
    (error,) = report.rational_errors
    assert error.message == "C11 is wrong over Q too: has +3/2*A11*B11 where it needs +A11*B11"
    assert error.span is not None and error.span.line == 3


# --- how many wrong terms a message names ---------------------------------------------------------------


def test_a_block_wrong_modulo_p_names_its_first_four_wrong_terms_and_counts_the_rest():
    """Over ⟨1,6,1⟩, C11 = A11·B11 + A12·B21 + … + A16·B61; one product M1 = A11·B11 as C11 misses
    the five terms A12·B21 … A16·B61 modulo 2: the first four (SHOWN_TERMS) are named, the fifth counted."""
    report = check_modular(_scheme("algorithm short <1,6,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", 2))
    assert [e.message for e in report.errors] == [
        "C11 is wrong modulo 2: misses A12*B21, A13*B31, A14*B41, A15*B51 (and 1 more wrong terms)"]


def _wide() -> str:
    """⟨2,10,1⟩ classically (C11 = Σ A1l·Bl1 by M1…M10, C21 = Σ A2l·Bl1 by N1…N10), plus 2·E in C11."""
    a1, a2 = ([f"A{row}{l}" for l in range(1, 10)] + [f"A[{row},10]"] for row in (1, 2))
    b = [f"B{l}1" for l in range(1, 10)] + ["B[10,1]"]
    lines = ["algorithm wide <2,10,1;21>:"]
    lines += [f"  M{l + 1} = {a1[l]} * {b[l]}" for l in range(10)]
    lines += [f"  N{l + 1} = {a2[l]} * {b[l]}" for l in range(10)]
    lines += ["  E = (A[1,10] + A21 + A22 + A23 + A24) * B11",
              "  C11 = " + " + ".join(f"M{l}" for l in range(1, 11)) + " + 2*E",
              "  C21 = " + " + ".join(f"N{l}" for l in range(1, 11))]
    return "\n".join(lines) + "\n"


def test_a_block_right_only_modulo_p_names_its_first_wrong_terms_in_block_order_not_by_name():
    """⟨2,10,1⟩ with C11 = (its classical sum) + 2·(A[1,10] + A21 + A22 + A23 + A24)·B11: modulo 2 it
    holds; over Q C11 has five terms 2·A·B11 too many.  In block order (A's row 1 before row 2)
    A[1,10] comes first, so the four named are A[1,10], A21, A22, A23 and A24 is the one counted;
    by name ("A2…" sorts before "A[…") A[1,10] would be the one left out."""
    report = check_modular(_scheme(_wide(), 2))
    assert report.holds and not report.exact_over_q
    assert [e.message for e in report.rational_errors] == [
        "C11 holds only modulo 2: over Q it has +2*A21*B11, +2*A22*B11, +2*A23*B11, +2*A[1,10]*B11 that should "
        "not be there (and 1 more wrong terms)"]


# --- complex schemes (verify.ring_complex) ------------------------------------------------------------


def _complex(shape: Shape, *products) -> ComplexScheme:
    """A scheme of (u, v, w) products, each a mapping of block to a Python complex (or Fraction, real),
    its tables' rows in block_indices order."""
    a_index, b_index, c_index = block_indices(shape)

    def table(index, operand, side):
        rows = [block_name(operand, *at) for at in index]
        return tuple(tuple(_gaussian(product[side].get(row, 0)) for product in products) for row in rows)

    return ComplexScheme("tiny", shape, table(a_index, "A", 0), table(b_index, "B", 1), table(c_index, "C", 2),
                         Span("tiny", 1, 1, 1, 1))


def _gaussian(x) -> tuple[Fraction, Fraction]:
    return (x, Fraction(0)) if isinstance(x, Fraction) else (Fraction(x.real), Fraction(x.imag))


def _one(*products) -> ComplexScheme:
    """⟨1,1,1⟩ products given as (u, v, w) numbers for A11, B11 and C11: the scheme holds iff Σ u·v·w = 1."""
    return _complex(ONE, *(({"A11": u}, {"B11": v}, {"C11": w}) for u, v, w in products))


@pytest.mark.parametrize("products", [
    [(1, 1j, -1j)],  # real part −ur·vi·wi = −(1·1·(−1)) = 1
    [(1j, 1, -1j)],  # real part −ui·vr·wi = −(1·1·(−1)) = 1
    [(1j, -1j, 1)],  # real part −ui·vi·wr = −(1·(−1)·1) = 1
    [(1, 1, 1j), (1j, 1, -1), (1, 1, 1)],  # imaginary ur·vr·wi = 1 and ui·vr·wr = −1 cancel; real 1
    [(1, 1, 1j), (1, 1j, -1), (1, 1, 1)],  # imaginary ur·vr·wi = 1 and ur·vi·wr = −1 cancel; real 1
    [(1, 1, 1j), (1j, 1j, 1j), (1, 1, 1)],  # imaginary 1 and −ui·vi·wi = −1 cancel (i³ = −i); real 1
], ids=["ur.vi.wi", "ui.vr.wi", "ui.vi.wr", "ui.vr.wr", "ur.vi.wr", "ui.vi.wi"])
def test_every_term_of_a_complex_product_has_its_sign(products):
    """(ur + i·ui)(vr + i·vi)(wr + i·wi) has real part ur·vr·wr − ui·vi·wr − ur·vi·wi − ui·vr·wi and
    imaginary part ur·vr·wi + ur·vi·wr + ui·vr·wr − ui·vi·wi.  Each scheme here is 1 over ⟨1,1,1⟩ only
    through one of those terms (in the comment): with its sign flipped the real part is −1, or the
    imaginary parts 2 or −2 where they cancel.  It holds, and is still not ok: ok means an exact
    algorithm over Q that bilinear compiles, never a complex scheme."""
    report = check_complex(_one(*products))
    assert report.holds and not report.ok and report.errors == ()


@pytest.mark.parametrize(("products", "message"), [
    ([(1, 1, 1 + 1j)], "(1+i)*A11*B11 (needs 1)"),  # real part right: the imaginary part alone is wrong
    ([(1, 1, 1 - 1j)], "(1-i)*A11*B11 (needs 1)"),
    ([(1, 1, -1j)], "-i*A11*B11 (needs 1)"),
    ([(1, 1, 2 - 3j)], "(2-3i)*A11*B11 (needs 1)"),
    ([(1, 1, 0)], "0*A11*B11 (needs 1)"),  # a term missing: 0, not 0i
    ([(Fraction(1, 2), 1, 1)], "1/2*A11*B11 (needs 1)"),  # scaled by 2 inside: needs 1, not 2
], ids=["1+i", "1-i", "-i", "2-3i", "0", "1/2"])
def test_a_wrong_complex_term_is_named_by_its_value(products, message):
    """Σ u·v·w over ⟨1,1,1⟩ is the one product's u·v·w: 1+i, 1−i, −i, 2−3i, 0 and ½, each ≠ 1, shown
    as that Gaussian number (±i for a unit imaginary part) beside the 1 that C11 needs."""
    (error,) = check_complex(_one(*products)).errors
    assert error.message == f"C11 is wrong over Q(i): it has {message}"


def test_complex_denominators_are_cleared_by_their_least_common_multiple_in_each_table():
    """u = (½, ⅓), v = (1, 3/2), w = (1, 1): ½·1·1 + ⅓·(3/2)·1 = ½ + ½ = 1, so it holds.  U's entries
    are whole numbers over 6 (the lcm of 2 and 3; over 3, the max, ½ would be 3/2, cut to 1), V's over
    2, W's over 1, and the classical tensor is scaled by 6·2·1 = 12, every table's denominator."""
    half, third = Fraction(1, 2), Fraction(1, 3)
    assert check_complex(_one((half, 1, 1), (third, Fraction(3, 2), 1))).holds
    assert not check_complex(_one((half, 1, 1), (third, 1, 1))).holds  # ½ + ⅓ = 5/6


def test_a_complex_block_names_its_first_four_wrong_terms_and_counts_the_rest():
    """⟨1,6,1⟩ by the one product A11·B11 in C11 misses A12·B21 … A16·B61: four named, one counted."""
    shape = Shape(1, 6, 1)
    (error,) = check_complex(_complex(shape, ({"A11": 1}, {"B11": 1}, {"C11": 1}))).errors
    assert error.message == ("C11 is wrong over Q(i): it has 0*A12*B21 (needs 1), 0*A13*B31 (needs 1), "
                             "0*A14*B41 (needs 1), 0*A15*B51 (needs 1) and 1 more wrong terms")
