"""The exact Brent check (verify.tensor) pinned where the rest of the suite let a changed line pass: a
source-mutation audit of verify/tensor.py.

The suite's schemes are strassen-like: small integer coefficients, or a power of two moved from a
factor to its weights, so a wrong number type (float64 or int64 past what it holds exactly), a bound
that forgot a sign or a factor, or a residual summary cut at the wrong place still gave the right
answer.  Each test here gives the check a few products over ⟨1,1,1⟩ or ⟨1,2,1⟩ whose residual is
worked out by hand in its docstring (the classical tensor of ⟨1,1,1⟩ is the one entry A11·B11 in C11,
of ⟨1,2,1⟩ the two entries A11·B11 and A12·B21 in C11), with odd integers past 2⁵³ (not exact in
float64) or products past 2⁶³ (not exact in int64) where a number type is the question.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from bilinear.ir import Form, Shape
from bilinear.verify import tensor

ONE = Shape(1, 1, 1)
WIDE = Shape(1, 2, 1)  # A11 A12 times B11 over B21: C11 = A11·B11 + A12·B21


def _entries(shape: Shape, products, strategy: str | None = None) -> dict[tuple[str, str, str], Fraction]:
    """residual_entries of products given as (u, v, w) mappings of blocks to coefficients."""
    left, right, outputs = zip(*((Form.of(u), Form.of(v), Form.of(w)) for u, v, w in products))
    return tensor.residual_entries(shape, left, right, outputs, strategy)


def _summary(shape: Shape, products, keep: int, whole: int) -> tensor.ResidualSummary:
    left, right, outputs = zip(*((Form.of(u), Form.of(v), Form.of(w)) for u, v, w in products))
    return tensor.residual_summary(shape, left, right, outputs, keep, whole)


# --- choosing the strategy ----------------------------------------------------------------------------


def test_the_terms_strategy_takes_exactly_up_to_the_limit():
    """"terms" for T up to TERMS_LIMIT (the module docstring's "T up to"), "blocks" from one past it."""
    assert tensor.choose_strategy(tensor.TERMS_LIMIT) == "terms"
    assert tensor.choose_strategy(tensor.TERMS_LIMIT + 1) == "blocks"


# --- number types: every place a coefficient can sit --------------------------------------------------


@pytest.mark.parametrize("strategy", tensor.STRATEGIES)
@pytest.mark.parametrize("place", ["u", "v", "w"])
@pytest.mark.parametrize("x", [2**53 + 1, -(2**53 + 1), 2**63 + 3, -(2**63 + 3)],
                         ids=["2^53+1", "-(2^53+1)", "2^63+3", "-(2^63+3)"])
def test_a_large_odd_coefficient_in_any_factor_is_exact(x, place, strategy):
    """One product over ⟨1,1,1⟩ with x in one factor and 1 in the other two computes x·A11·B11 in
    C11, so the residual is the one entry x − 1: 2⁵³, −2⁵³−2, 2⁶³+2 and −2⁶³−4.

    2⁵³+1 is the least positive integer float64 does not hold (it rounds to 2⁵³, and 2⁵³ − 1 is then
    exact: an answer off by one); 2⁶³+3 is past int64, and in float64 it and 2⁶³+3 − 1 both round
    to 2⁶³.  So each must reach int64 or Python integers by its bound or its table's peak, taken on
    |x| whatever its sign: in U the slice bound, in V and W the dense table's type and the slice
    bound, term by term the bound on Σ|terms|."""
    factors = {"u": {"A11": 1}, "v": {"B11": 1}, "w": {"C11": 1}}
    block = {"u": "A11", "v": "B11", "w": "C11"}[place]
    factors[place] = {block: x}
    product = (factors["u"], factors["v"], factors["w"])
    assert _entries(ONE, [product], strategy) == {("A11", "B11", "C11"): Fraction(x - 1)}


@pytest.mark.parametrize("strategy", tensor.STRATEGIES)
def test_a_product_of_two_factors_within_float64_is_exact(strategy):
    """u = 1, v = 2²⁷+1, w = 2²⁷+3 over ⟨1,1,1⟩: the one term is (2²⁷+1)(2²⁷+3) = 2⁵⁴ + 4·2²⁷ + 3
    = 2⁵⁴+2²⁹+3, the residual 2⁵⁴+2²⁹+2.  Each factor is exact in float64 but their product is not
    (past 2⁵⁴ float64 holds multiples of 4: +3 rounds to +4, and +4 − 1 rounds back to +4), so the
    slice bound must multiply the two peaks, not add them (2²⁸+5 would say float64 is exact)."""
    product = ({"A11": 1}, {"B11": 2**27 + 1}, {"C11": 2**27 + 3})
    assert _entries(ONE, [product], strategy) == {("A11", "B11", "C11"): Fraction(2**54 + 2**29 + 2)}


@pytest.mark.parametrize("strategy", tensor.STRATEGIES)
def test_a_product_past_int64_of_factors_within_it_is_exact(strategy):
    """u = 2³², v = 2³¹+1, w = 1 over ⟨1,1,1⟩: every factor fits int64, the one term 2⁶³+2³² does not
    (int64 stops at 2⁶³−1; it would wrap to −2⁶³+2³²).  The residual is 2⁶³+2³²−1.  The bounds
    (term by term 2⁶³+2³²+1, by blocks the same) are past 2⁶², so both go by Python integers; a limit
    of 2⁶⁴ instead of 2⁶² would have let int64 wrap."""
    product = ({"A11": 2**32}, {"B11": 2**31 + 1}, {"C11": 1})
    assert _entries(ONE, [product], strategy) == {("A11", "B11", "C11"): Fraction(2**63 + 2**32 - 1)}


def test_the_term_bound_sums_absolute_values():
    """u = 2⁴⁰·A11 − 2⁴⁰·A12, v = 2⁴⁰·B11, w = C11 over ⟨1,2,1⟩ (term by term): the terms are
    +2⁸⁰ (A11·B11) and −2⁸⁰ (A12·B11), so the residual is 2⁸⁰−1 at A11·B11, −2⁸⁰ at A12·B11 and
    −1 at A12·B21 (the classical term no product makes).  u's coefficients sum to 0 but their
    absolute values to 2⁴¹: the bound 2⁴¹·2⁴⁰ + 2 must send this to Python integers (int64 would
    wrap 2⁸⁰ to 0)."""
    product = ({"A11": 2**40, "A12": -(2**40)}, {"B11": 2**40}, {"C11": 1})
    assert _entries(WIDE, [product], "terms") == {
        ("A11", "B11", "C11"): Fraction(2**80 - 1),
        ("A12", "B11", "C11"): Fraction(-(2**80)),
        ("A12", "B21", "C11"): Fraction(-1),
    }


def test_the_term_bound_counts_each_products_factor_to_the_common_denominator():
    """Two products over ⟨1,1,1⟩, both A11·B11 into C11: u = 2⁻⁴⁰ and u = 2³⁰ (v = w = 1).  The common
    denominator L is 2⁴⁰, so the second product's terms are scaled by its factor 2⁴⁰ to 2⁷⁰: the
    bound must count that factor (without it, 1 + 2³⁰ + 2⁴⁰ would allow int64, which wraps 2⁷⁰ to 0).
    The residual is 2⁻⁴⁰ + 2³⁰ − 1."""
    products = [({"A11": Fraction(1, 2**40)}, {"B11": 1}, {"C11": 1}), ({"A11": 2**30}, {"B11": 1}, {"C11": 1})]
    assert _entries(ONE, products, "terms") == {("A11", "B11", "C11"): Fraction(1, 2**40) + 2**30 - 1}


@pytest.mark.parametrize("strategy", tensor.STRATEGIES)
def test_a_tiny_coefficient_keeps_its_classical_term(strategy):
    """u = 2⁻⁷⁰·A11, v = B11, w = C11 over ⟨1,1,1⟩: L = 2⁷⁰, the one term scaled is 1 and the
    classical entry −L = −2⁷⁰, so the residual is 2⁻⁷⁰ − 1.  Only the classical part (L·mkn term by
    term, + L per slice) puts the bound past int64 and float64: float64 would give 1 − 2⁷⁰ as −2⁷⁰
    (the answer −1), int64 cannot hold −2⁷⁰ at all."""
    product = ({"A11": Fraction(1, 2**70)}, {"B11": 1}, {"C11": 1})
    assert _entries(ONE, [product], strategy) == {("A11", "B11", "C11"): Fraction(1, 2**70) - 1}


@pytest.mark.parametrize("strategy", tensor.STRATEGIES)
def test_an_unused_product_with_a_huge_coefficient_changes_nothing(strategy):
    """Over ⟨1,1,1⟩: product 1 is (2⁵³+1)·A11 times B11 into C11, product 2 is 2⁷⁰·A11 times B11 into
    no C block (w = 0).  Product 2 adds nothing, so the residual is 2⁵³ (as in the odd-coefficient
    test).  Its w is empty: its column scales by 1 (an lcm of no denominators), not 0 (which makes
    L = 0).  Its bound term is 0, so the numbers go by int64 (2⁵³+2 < 2⁶²): term by term 2⁷⁰ in u's
    numerators cannot enter int64 and must fall back to Python integers; by blocks product 2 must be
    left out of A11's slice, as its 2⁷⁰ is within no bound."""
    products = [({"A11": 2**53 + 1}, {"B11": 1}, {"C11": 1}), ({"A11": 2**70}, {"B11": 1}, {})]
    assert _entries(ONE, products, strategy) == {("A11", "B11", "C11"): Fraction(2**53)}


def test_a_run_of_slices_takes_the_number_type_of_its_largest_bound(monkeypatch):
    """By blocks over ⟨1,2,1⟩ with CALL_WORK large enough that A11 and A12 share one call: product 1
    is (2⁵³+1)·A11 times B11 into C11 (A11's bound 2⁵³+2: int64), product 2 is A12 times B21 into C11
    (A12's bound 2: float64 would do).  The call must use int64 for both: float64 rounds 2⁵³+1 to 2⁵³
    and A11·B11's residual 2⁵³ comes out 2⁵³−1.  A12·B21 is right, so it is the only entry."""
    monkeypatch.setattr(tensor, "CALL_WORK", 1 << 40)
    products = [({"A11": 2**53 + 1}, {"B11": 1}, {"C11": 1}), ({"A12": 1}, {"B21": 1}, {"C11": 1})]
    assert _entries(WIDE, products, "blocks") == {("A11", "B11", "C11"): Fraction(2**53)}


@pytest.mark.parametrize("call_work", [0, 1 << 40], ids=["a-call-a-block", "one-call"])
def test_a_slice_of_a_rectangular_shape_meets_its_own_classical_slice(call_work, monkeypatch):
    """The classical algorithm of ⟨2,3,1⟩, by blocks: six products A_il·B_l1 into C_i1, so the
    residual is empty.  A block a = A_il is number (i−1)·k + (l−1) in row-major order (k = 3 columns);
    its classical slice is B_l1 into C_i1.  Reading a's row and column with n = 1 in place of k would
    put A12's slice in C21 and A13's and later ones past C's two blocks."""
    monkeypatch.setattr(tensor, "CALL_WORK", call_work)
    products = [({f"A{i}{l}": 1}, {f"B{l}1": 1}, {f"C{i}1": 1}) for i in (1, 2) for l in (1, 2, 3)]
    assert _entries(Shape(2, 3, 1), products, "blocks") == {}


# --- the residual summary -------------------------------------------------------------------------------


def test_the_summary_keeps_fractions_and_holds_every_entry_up_to_whole():
    """u = A11/2, v = B11, w = C11 over ⟨1,1,1⟩: the residual is the one entry 1/2 − 1 = −1/2 (L = 2,
    its scaled value 1 − 2 = −1 over L).  With whole = 1 there are at most `whole` entries, so every
    entry is held; with whole = 0 there are more, so none is (every is None) but the first is."""
    half = [({"A11": Fraction(1, 2)}, {"B11": 1}, {"C11": 1})]
    entry = {("A11", "B11", "C11"): Fraction(-1, 2)}
    assert _entries(ONE, half) == entry
    held = _summary(ONE, half, keep=1, whole=1)
    assert held.counts == {"C11": 1} and held.every == entry and held.first == {"C11": {("A11", "B11"): Fraction(-1, 2)}}
    cut = _summary(ONE, half, keep=1, whole=0)
    assert cut.counts == {"C11": 1} and cut.every is None and cut.first == {"C11": {("A11", "B11"): Fraction(-1, 2)}}


def test_the_summary_keeps_at_most_keep_entries_over_several_slices(monkeypatch):
    """By blocks over ⟨1,2,1⟩, one product A12·B11 into C11: the residual is −1 at A11·B11 (A11's
    slice: one entry), +1 at A12·B11 and −1 at A12·B21 (A12's slice: two).  With keep = 2 the first
    slice gives one entry and the second may add only one more (the first of its two, B11 before
    B21): three counted, two kept."""
    monkeypatch.setattr(tensor, "TERMS_LIMIT", -1)
    summary = _summary(WIDE, [({"A12": 1}, {"B11": 1}, {"C11": 1})], keep=2, whole=0)
    assert summary.counts == {"C11": 3}
    assert summary.first == {"C11": {("A11", "B11"): Fraction(-1), ("A12", "B11"): Fraction(1)}}
