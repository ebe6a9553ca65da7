"""The accuracy harness's rules pinned where the rest of the suite let a changed line pass: a
source-mutation audit of measure.py (the exact reference product, the error's scale, the bound and
the verdicts), where an unnoticed change could let a wrong product pass as accurate.

Each test states one rule on a case small enough to follow by hand; the figures are derived in the
docstrings (powers of two, so every value below is exact), not copied from a run.  Nothing here
needs a GPU.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from bilinear import measure
from bilinear.measure import bound_verdict, error_bound, exact_product, relative_error, within_bound

# --- the bound and the verdicts ------------------------------------------------------------------


def test_the_bound_at_k_of_1_is_8u():
    """8·u·√K·ρ^L at K = 1, ρ = 1: 8·2^-53·1·1 = 2^-50 in float64, 8·2^-24 = 2^-21 in float32 (√K is
    taken of K itself, never less than 1: K = 0 reads as K = 1, and K = 1 must not read as K = 2)."""
    assert error_bound("float64", 1, 1.0) == 2.0**-50
    assert error_bound("float32", 1, 1.0) == 2.0**-21
    assert error_bound("float64", 0, 1.0) == 2.0**-50


def test_an_error_equal_to_its_bound_passes():
    """'At most the bound': an error of exactly 2^-50 passes K = 1's bound of 2^-50 (trivial 1)."""
    assert within_bound(2.0**-50, error_bound("float64", 1, 1.0), 1.0)
    assert bound_verdict(2.0**-50, 2.0**-50, 1.0, 1.0) == ""


def test_a_bound_equal_to_the_zero_products_error_checks_nothing():
    """A bound of 0.5 where a C of zeros has an error of 0.5 passes C = 0: nothing is checked, so
    even an error of 0 is not 'within' it, and the verdict says NOT CHECKED (not EXCEEDS THE BOUND,
    and not silence).  8·u·√K alone is 0.5 / ρ = 0.5 / 2 = 0.25, below 0.5: the growth is why."""
    assert not within_bound(0.0, 0.5, trivial=0.5)
    assert bound_verdict(0.0, 0.5, 0.5, 2.0) == (
        "   NOT CHECKED: the bound passes even a C of zeros (its error would be 5.0e-01; "
        "the scheme's error growth is too large)")


def test_where_8u_root_k_alone_equals_the_zero_products_error_the_long_k_is_why():
    """Bound 0.5 with ρ^L = 2: 8·u·√K alone is 0.25, and a C of zeros has an error of 0.25 too.
    'Passes' is 'at or past' (the NOT CHECKED rule, bound >= trivial), so 8·u·√K alone already passes
    C = 0: the K is why, not the scheme."""
    assert bound_verdict(0.0, 0.5, 0.25, 2.0) == (
        "   NOT CHECKED: the bound passes even a C of zeros (its error would be 2.5e-01; "
        "8·u·√K alone, 2.5e-01, passes it at this K, before any error growth)")


def test_growth_in_recovers_the_bounds_growth_factor():
    """growth_in undoes error_bound's 8·u·√K: at K = 100, ρ = 3/2, L = 2 the bound is 8·2^-53·10·9/4 =
    180·2^-53, and 8·u·√K alone is 80·2^-53, so ρ^L = 180/80 = 9/4 (all exact in binary).  It is what
    the report's NOT CHECKED line divides by to tell a long K from a large growth."""
    bound = error_bound("float64", 100, 1.5, 2)
    assert bound == 180 * 2.0**-53
    assert measure.growth_in(bound, "float64", 100) == 2.25
    assert measure.growth_in(error_bound("float32", 100, 1.5, 2), "float32", 100) == 2.25


# --- the error's scale ---------------------------------------------------------------------------


def test_an_error_past_float64s_range_is_inf_not_zero():
    """A = B = [[2^-600]]: the scale ‖A‖‖B‖ = 2^-1200 is exact as a Fraction (float64 would give 0).
    A C of [[1]] against a reference of [[0]] is off by 1: relative error 1 / 2^-1200 = 2^1200, past
    float64's largest (about 2^1024), so it reads inf, and no bound passes it; 0 would pass any."""
    A = np.array([[2.0**-600]])
    error = relative_error(np.array([[1.0]]), np.array([[0.0]]), A, A)
    assert error == np.inf
    assert not within_bound(error, error_bound("float64", 1, 1.0), 1.0)


def test_a_negative_beta_adds_to_the_scale():
    """The scale is |α|·‖A‖‖B‖ + |β|·‖C‖: A = [[2]], B = [[4]], C = [[8]], α = -1/2, β = -1 give
    1/2·2·4 + 1·8 = 12.  With β·‖C‖ it would be 4 - 8 = -4, and every error divided by it negative:
    at most any bound, a wrong C passing.  C off by 3 reads 3/12 = 1/4, well past K = 1's bound."""
    A, B, C = np.array([[2.0]]), np.array([[4.0]]), np.array([[8.0]])
    scale = measure.error_scale(A, B, -0.5, -1.0, C)
    assert scale == 12
    error = relative_error(np.array([[3.0]]), np.array([[0.0]]), A, B, scale=scale)
    assert error == 0.25 and not within_bound(error, error_bound("float64", 1, 1.0), 1.0)


# --- the exact reference product -----------------------------------------------------------------


def test_the_reference_sums_its_slice_products_smallest_first():
    """A = [[1, 2^-53, 2^-80]], B = three ones: A@B = 1 + 2^-53 + 2^-80 exactly, just past the
    midpoint between 1 and the next float64, 1 + 2^-52, so the correctly rounded product is 1 + 2^-52.
    With K = 3 each slice keeps the bits down to 2^(e+β-52) below its row's 2^e > largest, β =
    ceil((55 + 2) / 2) = 29: 1's slice (down to 2^-22) holds the 1 alone, the next (2^-53 ≤ largest <
    2^-52: down to 2^-75) the 2^-53 alone, the last the 2^-80; B is one slice of ones.  Smallest first,
    2^-80 + 2^-53 is exact and adding 1 rounds once, up; largest first, 1 + 2^-53 is a tie that rounds
    to even, to 1, and adding 2^-80 leaves 1: an error the reference must not make."""
    A, B = np.array([[1.0, 2.0**-53, 2.0**-80]]), np.ones((3, 1))
    exact = 1 + Fraction(1, 2**53) + Fraction(1, 2**80)
    assert float(exact) == 1 + 2.0**-52
    assert exact_product(A, B)[0, 0] == 1 + 2.0**-52


def test_each_slice_is_short_enough_that_its_products_are_exact():
    """A = [[a, -a]], B = [[a], [b]] with a = 1 + 2^-30, b = 1 + 2^-31: A@B = a(a - b) = (1 + 2^-30)·2^-31
    = 2^-31 + 2^-61, a float64.  Neither product is one: a² = 1 + 2^-29 + 2^-60 and ab = 1 + 2^-30 +
    2^-31 + 2^-61 each span more than 53 bits, and whichever of them rounds (with or without a fused
    multiply-add) the difference comes out 2^-31, 2^-31 + 2^-60 or 2^-31 - 2^-61.  At K = 2, β = 28:
    the first slices are [1, -1] and [1, 1] (bits down to 2^-23, a negative entry's to 2^-24), the second
    [2^-30, -2^-30] and [2^-30, 2^-31], and their four products 0, 2^-31, 0 and 2^-61 are exact, as is their sum.  A
    slice that kept the 2^-30 (a smaller β, down to 2^-32 at β = 19) would be a plain product."""
    a, b = 1 + 2.0**-30, 1 + 2.0**-31
    A, B = np.array([[a, -a]]), np.array([[a], [b]])
    assert Fraction(a) * (Fraction(a) - Fraction(b)) == Fraction(1, 2**31) + Fraction(1, 2**61)
    assert exact_product(A, B)[0, 0] == 2.0**-31 + 2.0**-61


def test_an_operand_whose_largest_magnitude_is_2_to_the_900_is_still_split():
    """'Past 2^900' is multiplied plainly: 2^900 itself is split.  A = [[p, -p, 2^900]] and
    B = [[p], [q], [0]] with p = 1 + 2^-52, q = 1 + 2^-51: A@B = p² - pq = p(p - q) = -(1 + 2^-52)·2^-52
    = -(2^-52 + 2^-104), a float64 (the 2^900 meets a 0).  p² = 1 + 2^-51 + 2^-104 and pq = 1 + 3·2^-52
    + 2^-103 both round, and every order of a plain dot (each product rounded, or one fused) misses:
    -2^-52, -2^-52 + 2^-104 or -2^-52 - 2^-103.  Split (the row's 2^900 takes the first slice, then
    [1, -1, 0] and [2^-52, -2^-52, 0]; B's column [1, 1, 0] and [2^-52, 2^-51, 0]) every product is exact."""
    p, q = 1 + 2.0**-52, 1 + 2.0**-51
    A, B = np.array([[p, -p, 2.0**900]]), np.array([[p], [q], [0.0]])
    assert Fraction(p) * (Fraction(p) - Fraction(q)) == -(Fraction(1, 2**52) + Fraction(1, 2**104))
    assert exact_product(A, B)[0, 0] == -(2.0**-52 + 2.0**-104)
    assert exact_product(B.T, A.T)[0, 0] == -(2.0**-52 + 2.0**-104)  # the 2^900 in B


@pytest.mark.parametrize("big", [2.0**1000, -(2.0**1000)])
@pytest.mark.parametrize("operand", ["A", "B"])
def test_an_operand_past_2_to_the_900_either_sign_is_multiplied_plainly(operand, big):
    """A 2^1000 or -2^1000 anywhere in A or B: its slice would need σ = 2^(1001+β) = 2^1029 at K = 2
    (β = 28), past float64's range, and (x + inf) - inf is NaN; the plain product [[±2^1000, 1]]·[[1], [0]]
    is ±2^1000, a float64.  Both signs of both operands count: the test is on the largest magnitude."""
    row, column = np.array([[big, 1.0]]), np.array([[1.0], [0.0]])
    A, B = (row, column) if operand == "A" else (column.T, row.T)
    assert exact_product(A, B)[0, 0] == big


def test_a_row_of_four_magnitudes_takes_four_slices():
    """A = [[1, 2^-30, r, -s]], B = [[0], [0], [3], [3]] with r = 2^-60(1 + 2^-52), s = 2^-60(1 - 2^-53):
    A@B = 3(r - s) = 3(2^-112 + 2^-113) = 9·2^-113 (the 1 and the 2^-30 meet zeros).  At K = 4, β = 29:
    the slices of A's row are [1, 0, 0, 0] (bits down to 2^-22), [0, 2^-30, 0, 0] (down to 2^-52),
    [0, 0, 2^-60, -2^-60] (down to 2^-82) and the rest, [0, 0, 2^-112, 2^-113]; B is one slice.  Their
    products with B are 0, 0, 0 and 9·2^-113, all exact.  Were the rest left in the third slice, it
    would multiply 3r = 3·2^-60 + 3·2^-112 and 3s = 3·2^-60 - 3·2^-113, neither a float64 (3r rounds to
    3·2^-60 + 2^-110, 3s to 3·2^-60 - 2^-111), and every order of that dot, fused or not, misses:
    12, 11 or 10 times 2^-113."""
    r, s = 2.0**-60 * (1 + 2.0**-52), 2.0**-60 * (1 - 2.0**-53)
    A, B = np.array([[1.0, 2.0**-30, r, -s]]), np.array([[0.0], [0.0], [3.0], [3.0]])
    assert 3 * (Fraction(r) - Fraction(s)) == Fraction(9, 2**113)
    assert exact_product(A, B)[0, 0] == 9 * 2.0**-113


def test_the_reference_splits_an_eighth_of_the_rows_at_a_time():
    """float64_reference holds, beside its result, a tile of A's slices and one of B's with _slices'
    working copies: MOST_SLICES + 3 = 7 float64 arrays of a tile's rows by K each.  A tile is at most an
    eighth of the rows (rounded up) and at most BLOCK_ELEMENTS // K rows, never less than one row, so at
    64×64×64 (2^24 // 64 rows is far more) a tile is 8 rows: 8 bytes·7·64·(8 + 8) = 57,344 bytes; at
    9×64×1, ceil(9/8) = 2 rows and 1 column: 8·7·64·3 = 10,752.  Narrower inputs: float64 copies of A
    and B, 8·(64·64 + 64·64) = 65,536."""
    assert measure.reference_bytes(64, 64, 64, "float64") == 57_344
    assert measure.reference_bytes(9, 64, 1, "float64") == 10_752
    assert measure.reference_bytes(64, 64, 64, "float32") == 65_536


def test_the_checks_are_counted_eight_float64_blocks():
    """check_bytes: eight float64 temporaries of one block, a block being the largest matrix or
    BLOCK_ELEMENTS = 2^24 elements, whichever is less: 8·8·(64·64) = 262,144 bytes at 64×64×64, and at
    1×2^25×1 (A and B of 2^25 elements) 8·8·2^24 = 2^30."""
    assert measure.check_bytes(64, 64, 64) == 262_144
    assert measure.check_bytes(1, 2**25, 1) == 2**30


def test_an_empty_inner_dimension_gives_beta_c():
    """K = 0: A@B is the M×N zero matrix (a sum of no terms), so the reference is β·C; nothing is split
    (an empty A has no largest element to split by).  C = [[2, 4, 6], [8, 10, 12]], β = 1/2: [[1, 2, 3],
    [4, 5, 6]]."""
    A, B = np.zeros((2, 0)), np.zeros((0, 3))
    assert np.array_equal(exact_product(A, B), np.zeros((2, 3)))
    C = np.array([[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]])
    assert np.array_equal(measure.float64_reference(A, B, C, 1.0, 0.5), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


# --- restoration ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "bits"), [("float64", 52), ("float32", 23)])
def test_a_restoration_one_ulp_off_reads_one_ulp(dtype, bits):
    """The spacing of float64 numbers in [1, 2) is 2^-52 (float32's 2^-23), and in [2, 4) twice that:
    before = [[1, 3]], after = [[1 + 2^-52, 3 + 2^-51]] is one ulp off in each element, so 1 ulp max;
    relative to the element, 2^-52 (the larger of 2^-52 and 2^-51/3); normwise the largest difference
    over the largest element, 2^-51 / 3."""
    spacing = 2.0**-bits
    before = np.array([[1.0, 3.0]], dtype=dtype)
    after = np.array([[1 + spacing, 3 + 2 * spacing]], dtype=dtype)
    restored = measure.restoration(after, before)
    assert restored.max_ulps == 1.0 and not restored.exact
    assert restored.max_relative == spacing and restored.normwise == 2 * spacing / 3
