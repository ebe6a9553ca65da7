"""The report's text for schemes that are not exact algorithms over Q (bilinear/report_rings.py), the
exact tensors their checks use (verify/ring_tensor.py) and the dispatch that names the three rings together
(verify/rings.py), pinned where the rest of the suite let a changed line pass: a source-mutation audit of
the three modules.

The suite reads these entries through a few catalogue schemes and CLI runs, checking a status or one
line of each, so much went unseen when changed.  Of the text: the approximate "FAILED in the limit"
status, the "substitute a value" line, σ and φ swapped (Bini's σ = φ = 1); every modular "Brent
equations: hold modulo p; over Q N C blocks are wrong" line (its condition, the count, the wording);
"without --mod it" advised where --mod's claim is followed by the file's own; and nearly all of a complex
entry (its FAILED status, the Brent line and its condition, "not compiled:", and ring_details' choice of
function for it: no test reached a complex scheme's Markdown cell).  Of the tensors: the classical tensor
in Python integers (check_complex scales it by a denominator that may pass 2⁶³), and every choice of
brent_tensor's exact dtype (the bound of absolute values, cubed, times the number of products, float64 below
2⁵², int64 below 2⁶², the tables converted, an int64 result) -- the suite's tables are all small.  Of rings:
the names it exports and the two unions.

58 mutants of report_rings.py: 41 killed by the suite, 1 equivalent (``elif not wrong_over_q`` as
``elif True``: it is reached only when ``ok``, which has no block wrong over Q), 16 killed here.
38 of ring_tensor.py: 22 killed by the suite, 6 equivalent (``max(0, ...)`` for ``max(1, ...)``, an empty
table's 0 for 1, and ``u.shape[1]`` for ``max(1, u.shape[1])``: the bound only picks a dtype, float64 for
all of these; ``<= 2**52``: sums up to 2⁵² are exact in float64; int64 for float64 below 2⁵²: exact too,
and the result is int64 either way; ``w.T`` for its contiguous copy: layout only), 10 killed here.  12 of
rings.py: 7 killed by the suite, 5 killed here.  No bug was found.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from bilinear.frontend import program_from_text
from bilinear.ir import Shape, Span
from bilinear.report_rings import (NOT_COMPILED, approximate_status, approximate_text, complex_status, complex_text,
                                   modular_status, modular_text, ring_details)
from bilinear.verify import rings
from bilinear.verify.ring_tensor import block_indices, brent_tensor, classical_tensor
from bilinear.verify.rings import (ApproximateReport, ApproximateScheme, ComplexReport, ComplexScheme, ModularReport,
                                   ModularScheme, check_inexact)

NEVER = f"  {NOT_COMPILED}"  # the last line of every entry that is never compiled
SPAN = Span("t", 1, 1, 1, 2)


# --- report_rings: approximate schemes ----------------------------------------------------------------


def _approximate(holds: bool, order: int | None, cancellation: int) -> dict:
    """An approximate entry as report_data gives it; the parameter is ``e`` (not ``x``) so that a changed
    placeholder shows."""
    return {"kind": "approximate", "name": "bini", "shape": "<3,2,2;10>", "parameter": "e",
            "holds_in_the_limit": holds, "error_order": order, "cancellation": cancellation}


def test_the_never_compiled_line_is_said_in_these_words():
    assert NOT_COMPILED == "not an exact algorithm over Q, so it is never compiled"


def test_an_approximate_scheme_holding_in_the_limit_names_its_order_and_its_cancellation_apart():
    """σ = 2 and φ = 3 differ, so the error's order and the products' cancellation cannot swap unseen
    (the suite's Bini has σ = φ = 1), nor the minus sign of x^-φ go."""
    assert approximate_text(_approximate(True, 2, 3)) == [
        "approximate scheme bini <3,2,2;10>: holds in the limit e → 0 only",
        "  Brent equations: every C block equals its classical sum plus O(e^2): an approximate (border-rank) "
        "scheme, exact only in the limit, for no fixed e",
        "  single products carry up to e^-3, so rounding errors grow like u·e^-3 as e shrinks",
        NEVER,
    ]


def test_an_approximate_scheme_holding_for_every_value_says_to_substitute_one():
    """No cancellation (φ = 0): no line about rounding errors."""
    assert approximate_text(_approximate(True, None, 0)) == [
        "approximate scheme bini <3,2,2;10>: holds for every e (not only in the limit e → 0)",
        "  Brent equations: hold for every e; substitute a value for e to get an exact algorithm",
        NEVER,
    ]


def test_a_failed_approximate_scheme_has_no_brent_line_but_keeps_its_cancellation():
    """A failed scheme with no order: the "hold for every e" line had been added when `and` read `or`."""
    assert approximate_text(_approximate(False, None, 1)) == [
        "approximate scheme bini <3,2,2;10>: FAILED in the limit e → 0",
        "  single products carry up to e^-1, so rounding errors grow like u·e^-1 as e shrinks",
        NEVER,
    ]
    assert approximate_text(_approximate(False, 1, 0)) == ["approximate scheme bini <3,2,2;10>: FAILED in the limit e → 0",
                                                           NEVER]


def test_approximate_status_for_each_outcome():
    assert approximate_status(_approximate(False, 1, 1)) == "FAILED in the limit e → 0"
    assert approximate_status(_approximate(True, None, 0)) == "holds for every e (not only in the limit e → 0)"
    assert approximate_status(_approximate(True, 1, 1)) == "holds in the limit e → 0 only"


# --- report_rings: modular schemes --------------------------------------------------------------------


def _modular(holds: bool, wrong: int, exact: bool, reason: str = "", modulus: int = 3) -> dict:
    """A modular entry as report_data gives it: ``ok`` is "holds modulo p and no block wrong over Q"."""
    return {"kind": "modular", "name": "k", "shape": "<3,3,3;23>", "modulus": modulus, "modulus_reason": reason,
            "holds_modulo": holds, "wrong_over_q": wrong, "exact_over_q": exact, "ok": holds and not wrong}


def test_modular_status_for_each_outcome():
    assert modular_status(_modular(False, 0, True)) == "FAILED modulo 3"
    assert modular_status(_modular(True, 5, False)) == "holds modulo 3 only"
    assert modular_status(_modular(True, 0, True)) == "verified over Q (and so modulo 3)"


def test_a_scheme_holding_only_modulo_p_counts_its_blocks_wrong_over_q():
    """5 wrong blocks modulo 3: the count (not the modulus) stands before "C blocks"."""
    assert modular_text(_modular(True, 5, False, "the name k-mod3 says so")) == [
        "modular scheme k <3,3,3;23>: holds modulo 3 only",
        "  modulus: the name k-mod3 says so",
        "  Brent equations: hold modulo 3; over Q 5 C blocks are wrong (above)",
        NEVER,
    ]


def test_a_scheme_failing_modulo_p_and_wrong_over_q_is_never_compiled_and_says_no_brent_line():
    """A coefficient 1/3 has no value modulo 3 and the scheme is wrong over Q in 2 blocks (check_modular's
    singular path): the "hold modulo" line needs the scheme to hold, not only blocks wrong over Q."""
    assert modular_text(_modular(False, 2, False)) == ["modular scheme k <3,3,3;23>: FAILED modulo 3", NEVER]


def test_a_scheme_failing_modulo_p_but_exact_over_q_says_how_to_read_it_over_q():
    """--mod 3 alone claimed it: reading it without --mod gives the exact algorithm."""
    assert modular_text(_modular(False, 0, True, "given with --mod 3")) == [
        "modular scheme k <3,3,3;23>: FAILED modulo 3",
        "  modulus: given with --mod 3",
        "  over Q it is an exact algorithm: without --mod it verifies and compiles",
    ]


def test_a_scheme_verified_over_q_shows_its_figures_over_q():
    """No modulus reason: no "modulus:" line, and the file's own claim is left by importing it."""
    assert modular_text(_modular(True, 0, True)) == [
        "modular scheme k <3,3,3;23>: verified over Q (and so modulo 3)",
        "  over Q it is an exact algorithm: the .bl file `bilinear import` writes of it verifies with its figures "
        "(products, additions, stability) and compiles",
    ]


def test_without_mod_is_advised_only_where_mod_alone_claimed_the_modulus():
    """"given with --mod 3" is --mod's claim alone; with the file's reason after it, or --mod of another
    modulus, dropping --mod would leave the file's claim, so the import is advised (a prefix test, or the
    reason without its modulus, had let these through)."""
    def advice(reason: str, modulus: int = 3) -> str:
        return modular_text(_modular(True, 0, True, reason, modulus))[-1]
    assert advice("given with --mod 3").startswith("  over Q it is an exact algorithm: without --mod it verifies with")
    for reason, modulus in (("given with --mod 3; the name k-mod3 says so", 3), ("given with --mod 3", 5),
                            ("given with --mod", 3)):
        assert advice(reason, modulus).startswith(
            "  over Q it is an exact algorithm: the .bl file `bilinear import` writes of it verifies"), reason


# --- report_rings: complex schemes and the Markdown cell ----------------------------------------------


def _complex(holds: bool) -> dict:
    return {"kind": "complex", "name": "ae", "shape": "<4,4,4;48>", "holds_over_q_i": holds,
            "why_not_compiled": "ae has complex coefficients"}


def test_complex_text_for_each_outcome():
    assert complex_status(_complex(True)) == "holds over Q(i) (complex rationals)"
    assert complex_status(_complex(False)) == "FAILED over Q(i)"
    assert complex_text(_complex(True)) == [
        "complex scheme ae <4,4,4;48>: holds over Q(i) (complex rationals)",
        "  Brent equations: hold exactly over Q(i), real and imaginary parts checked as integer tensors",
        "  not compiled: ae has complex coefficients",
    ]
    assert complex_text(_complex(False)) == ["complex scheme ae <4,4,4;48>: FAILED over Q(i)",
                                             "  not compiled: ae has complex coefficients"]


def test_ring_details_join_the_lines_below_the_status_stripped_with_semicolons():
    assert ring_details(_modular(True, 5, False, "the name k-mod3 says so")) == (
        "modulus: the name k-mod3 says so; Brent equations: hold modulo 3; over Q 5 C blocks are wrong (above); "
        f"{NOT_COMPILED}")
    assert ring_details(_complex(False)) == "not compiled: ae has complex coefficients"
    assert ring_details(_approximate(False, 1, 0)) == NOT_COMPILED


# --- ring_tensor ----------------------------------------------------------------------------------------


def test_block_indices_of_a_shape_with_three_different_sides():
    """⟨2,3,1⟩: A is 2×3, B 3×1, C 2×1, each row-major and 1-based (the suite's shapes were mostly square)."""
    a, b, c = block_indices(Shape(2, 3, 1))
    assert a == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]
    assert b == [(1, 1), (2, 1), (3, 1)]
    assert c == [(1, 1), (2, 1)]
    assert block_indices(Shape(1, 2, 3))[1] == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]


def test_the_classical_tensor_of_a_shape_with_three_different_sides():
    """⟨2,3,4⟩: A(i,l)·B(l,j) lands in C(i,j), indexed as block_indices orders the blocks, in Python
    integers (check_complex multiplies it by a common denominator that may pass 2⁶³)."""
    shape = Shape(2, 3, 4)
    tensor = classical_tensor(shape)
    assert tensor.shape == (6, 12, 8) and tensor.dtype == object
    a, b, c = block_indices(shape)
    ones = {(a[x], b[y], c[z]) for x, y, z in zip(*np.nonzero(tensor))}
    assert ones == {((i, l), (l, j), (i, j)) for i in range(1, 3) for l in range(1, 4) for j in range(1, 5)}
    assert set(tensor.flatten().tolist()) == {0, 1}


def _exact(u, v, w) -> list:
    """Σ_r u·v·w in Python integers, as nested lists."""
    return [[[sum(int(u[a][r]) * int(v[b][r]) * int(w[c][r]) for r in range(len(u[0]))) for c in range(len(w))]
             for b in range(len(v))] for a in range(len(u))]


def test_brent_tensor_of_small_tables_is_int64_and_exact_in_every_a_block():
    """Two A blocks, three B blocks and four C blocks of two products: every slice is computed (not left
    empty, not the first A block's) and the result is int64, not the float64 BLAS used."""
    u = np.array([[1, 2], [-3, 1]])
    v = np.array([[1, 0], [2, -1], [0, 5]])
    w = np.array([[1, 1], [0, 2], [-1, 0], [3, -2]])
    out = brent_tensor(u, v, w)
    assert out.dtype == np.int64 and out.shape == (2, 3, 4)
    assert out.tolist() == _exact(u, v, w)


def test_brent_tensor_is_exact_past_float64_with_negative_entries():
    """(−(2¹⁸+1))³ needs 55 bits: the bound is taken of absolute values (the largest entry, −2¹⁸−1, would have
    chosen float64), cubed, and float64 stops below 2⁵²."""
    big = -(2**18 + 1)
    u = v = w = np.array([[big]])
    out = brent_tensor(u, v, w)
    assert out.dtype == np.int64 and int(out[0, 0, 0]) == big**3 == -(2**54 + 3 * 2**36 + 3 * 2**18 + 1)


def test_brent_tensor_bounds_its_sums_by_the_number_of_products():
    """Eight products of 2¹⁷³ = 2⁵¹ each (but the last, 1) over one B block: 7·2⁵¹ + 1 passes 2⁵³, so the
    bound counts the products, not the B blocks."""
    row = [2**17] * 7 + [1]
    u = v = w = np.array([row])
    assert int(brent_tensor(u, v, w)[0, 0, 0]) == 7 * 2**51 + 1


def test_brent_tensor_goes_to_python_integers_past_int64():
    """2²¹·2²¹·2²¹ = 2⁶³ overflows int64 (to −2⁶³): from 2⁶² on the sums are Python integers, even for
    int64 tables."""
    one = np.array([[2**21]], dtype=np.int64)
    out = brent_tensor(one, one, one)
    assert out.dtype == object and out[0, 0, 0] == 2**63


def test_a_complex_scheme_whose_denominators_pass_2_to_the_63_holds():
    """u = 2⁻³², v = 2⁻³², w = 2⁶⁴ over ⟨1,1,1⟩: u·v·w = 1, with a common scale of 2⁶⁴ that the classical
    tensor is multiplied by."""
    def side(x: Fraction) -> tuple:
        return (((x, Fraction(0)),),)  # one row (the one block) of one product
    scheme = ComplexScheme("big", Shape(1, 1, 1), side(Fraction(1, 2**32)), side(Fraction(1, 2**32)),
                           side(Fraction(2**64)), SPAN)
    assert rings.check_complex(scheme).errors == ()


# --- rings ------------------------------------------------------------------------------------------------


def _each_kind() -> tuple[ApproximateScheme, ModularScheme, ComplexScheme]:
    """One ⟨1,1,1;1⟩ scheme of each ring, each holding: u = x (v = 1, w = 1/x), A11·B11 read modulo 2, and
    u = i, v = −i, w = 1."""
    x = sympy.Symbol("x")
    approximate = ApproximateScheme("a", Shape(1, 1, 1), x, ((x,),), ((sympy.Integer(1),),), ((1 / x,),),
                                    (((SPAN,),) * 3), SPAN)
    modular = ModularScheme(program_from_text("algorithm m <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n",
                                              "m.bl").algorithms[0], 2)
    complex_ = ComplexScheme("c", Shape(1, 1, 1), (((Fraction(0), Fraction(1)),),), (((Fraction(0), Fraction(-1)),),),
                             (((Fraction(1), Fraction(0)),),), SPAN)
    return approximate, modular, complex_


def test_check_inexact_checks_each_scheme_in_its_own_ring():
    approximate, modular, complex_ = _each_kind()
    reports = [check_inexact(scheme) for scheme in (approximate, modular, complex_)]
    assert [type(report) for report in reports] == [ApproximateReport, ModularReport, ComplexReport]
    assert [report.scheme for report in reports] == [approximate, modular, complex_]
    assert all(report.holds for report in reports)
    assert [report.ok for report in reports] == [False, True, False]


def test_every_inexact_kind_is_an_inexact_scheme_and_its_report_an_inexact_report():
    for scheme in _each_kind():
        assert isinstance(scheme, rings.InexactScheme)
        assert isinstance(check_inexact(scheme), rings.InexactReport)


def test_the_names_rings_exports_all_exist():
    assert rings.__all__ == ["ApproximateReport", "ApproximateScheme", "ComplexReport", "ComplexScheme", "Gaussian",
                             "InexactReport", "InexactScheme", "ModularReport", "ModularScheme", "check_approximate",
                             "check_complex", "check_inexact", "check_modular", "laurent_terms"]
    assert all(hasattr(rings, name) for name in rings.__all__)
