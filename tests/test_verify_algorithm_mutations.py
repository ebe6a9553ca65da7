"""The Brent-equation check's diagnostics (verify.algorithm) pinned where the rest of the suite let a
changed line pass: a source-mutation audit of verify/algorithm.py.

The suite checks verdicts and messages on whole catalogues and on one-entry mutants of Strassen and
a few imported files: a wrong block there has one wrong term, its fix is a product's factor or a C
coefficient, and every dimension is reached.  So the separator between two wrong coefficients, a list
of exactly twelve terms (the cut), the terms kept past RESIDUAL_WHOLE, a fourth fix, the order of the
notes, the notes and line of a second wrong block, the rank floor's C count, the reach of a row or
column that only C or only B touches, and every fix inside a named sum (its scaling by what the sum
meets, by its product's weight and by a sum of products' own coefficients; the order of a B sum's
terms; a change that would empty a sum; a sum gaining itself) could change unseen, as could the guards
that keep the search from forming candidates that cannot match.  Each test here checks a scheme of
at most five products over a shape of at most five blocks a side, worked out by hand in its docstring.
"""
from __future__ import annotations

from bilinear.frontend import program_from_text
from bilinear.ir import Algorithm, Form, Output, Shape
from bilinear.verify import algorithm as brent
from bilinear.verify.algorithm import brent_residual, single_coefficient_fixes, verify_algorithm
from bilinear.verify.expand import bilinear as bilinear_of
from bilinear.verify.expand import expansion_of


def _algorithm(text: str) -> Algorithm:
    return program_from_text(text, "one.bl").algorithms[0]


def _messages(text: str, **options) -> list[tuple[str, int, tuple[str, ...]]]:
    return [(error.message, error.span.line, error.notes) for error in verify_algorithm(_algorithm(text), **options)]


# --- describe_difference: how a wrong block's terms are listed --------------------------------------------


def test_two_wrong_coefficients_are_listed_apart_by_semicolons():
    """⟨1,2,1⟩: C11 must be A11·B11 + A12·B21; 2·M1 − M2 gives 2·A11·B11 − A12·B21, both terms present
    with the wrong coefficient (2 for 1, −1 for 1).  Each "X where it needs Y" holds a comma-free clause,
    so the two are joined by "; " (a ", " reads as one list).  No single coefficient fixes both: no note."""
    text = "algorithm two <1,2,1;2>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  C11 = 2*M1 - M2\n"
    assert _messages(text) == [(
        "C11 is wrong: it computes 2*A11*B11 - A12*B21 but must be A11*B11 + A12*B21; has +2*A11*B11 where it "
        "needs +A11*B11; -A12*B21 where it needs +A12*B21", 4, ())]


def test_exactly_twelve_extra_terms_are_all_shown_with_no_count_of_more():
    """⟨1,4,1⟩ with the one product (A11+A12+A13+A14)·(B11+B21+B31+B41): 16 terms A1i·Bj1, of which the
    4 with i = j are C11's, so 16 − 4 = 12 = SHOWN_TERMS should not be there: all twelve are listed and
    nothing is said of more (not "and 0 more").  The computed sum, of 16 terms, shows its first 12 and
    its count.  One product where ⟨1,4,1⟩ needs max(4, 4, 1) = 4: the rank note."""
    text = "algorithm dense <1,4,1;1>:\n  M1 = (A11 + A12 + A13 + A14) * (B11 + B21 + B31 + B41)\n  C11 = M1\n"
    computed = " + ".join(f"A1{i}*B{j}1" for i in range(1, 4) for j in range(1, 5))
    extra = ", ".join(f"+A1{i}*B{j}1" for i in range(1, 5) for j in range(1, 5) if i != j)
    assert _messages(text) == [(
        f"C11 is wrong: it computes {computed} … (16 terms) but must be A11*B11 + A12*B21 + A13*B31 + A14*B41; "
        f"has {extra} that should not be there", 3,
        ("no ⟨1,4,1⟩ scheme has fewer than 4 products (A, B and C have 4, 4 and 1 blocks); this one has 1: "
         "is it complete?",))]


def test_a_residual_past_the_whole_limit_shows_every_term_it_keeps(monkeypatch):
    """The ⟨1,4,1⟩ product above, with RESIDUAL_WHOLE lowered to 10: its 12 wrong terms are past it, so
    the block is counted (12) and its first SHOWN_TERMS = 12 terms kept, and all 12 are shown as computed
    minus classical (each +1: the product has them, the classical sum has not).  No fix is searched."""
    monkeypatch.setattr(brent, "RESIDUAL_WHOLE", 10)
    text = "algorithm dense <1,4,1;1>:\n  M1 = (A11 + A12 + A13 + A14) * (B11 + B21 + B31 + B41)\n  C11 = M1\n"
    extra = ", ".join(f"+A1{i}*B{j}1" for i in range(1, 5) for j in range(1, 5) if i != j)
    assert _messages(text) == [(
        f"C11 is wrong: 12 of its terms differ from A11*B11 + A12*B21 + A13*B31 + A14*B41, the classical sum, "
        f"among them {extra} (computed minus classical)", 3,
        ("no ⟨1,4,1⟩ scheme has fewer than 4 products (A, B and C have 4, 4 and 1 blocks); this one has 1: "
         "is it complete?", "no single-coefficient fix was searched for: 12 terms are wrong (the search covers up to 10)"))]


def test_a_residual_past_the_whole_limit_keeps_twelve_terms_of_a_block(monkeypatch):
    """⟨1,5,1⟩ with (A11+…+A15)·(B11+…+B51) and RESIDUAL_WHOLE lowered to 10: 25 − 5 = 20 wrong terms,
    counted, of which SHOWN_TERMS = 12 are kept and shown, in row-major order: A11 with B21…B51 (4),
    A12 with B11, B31…B51 (4), A13 with B11, B21, B41, B51 (4); A14·B11, the 13th, is left out."""
    monkeypatch.setattr(brent, "RESIDUAL_WHOLE", 10)
    text = ("algorithm dense <1,5,1;1>:\n  M1 = (A11 + A12 + A13 + A14 + A15) * (B11 + B21 + B31 + B41 + B51)\n"
            "  C11 = M1\n")
    kept = ", ".join(f"+A1{i}*B{j}1" for i in range(1, 4) for j in range(1, 6) if i != j)
    ((message, line, notes),) = _messages(text)
    assert message == (f"C11 is wrong: 20 of its terms differ from A11*B11 + A12*B21 + A13*B31 + A14*B41 + A15*B51, "
                       f"the classical sum, among them {kept} (computed minus classical)")
    assert line == 3
    assert notes[-1] == "no single-coefficient fix was searched for: 20 terms are wrong (the search covers up to 10)"


# --- the notes -------------------------------------------------------------------------------------------


def test_the_first_three_of_four_single_coefficient_fixes_are_noted():
    """⟨1,1,1⟩: M1 = M2 = A11·B11 and C11 = M1 − M2 computes 0 where A11·B11 is due.  Four single changes
    fix it: A11 or B11 in M1 from 1 to 2 (then 2 − 1 = 1), M1 in C11 from 1 to 2, M2 in C11 from −1 to 0.
    (A11 or B11 in M2 to 0 would leave M2 an empty factor: not offered.)  All four are whole numbers, so
    they keep the search's order (products' factors, then outputs) and the first three are noted."""
    text = "algorithm zero <1,1,1;2>:\n  M1 = A11 * B11\n  M2 = A11 * B11\n  C11 = M1 - M2\n"
    assert _messages(text) == [("C11 is wrong: it computes 0 but must be A11*B11; misses A11*B11", 4, (
        "changing the coefficient of A11 in the left factor of M1 from 1 to 2 (line 2) would make every equation hold",
        "changing the coefficient of B11 in the right factor of M1 from 1 to 2 (line 2) would make every equation hold",
        "changing the coefficient of M1 in C11 from 1 to 2 (line 4) would make every equation hold",
    ))]


def test_each_wrong_block_is_located_at_its_own_equation_and_only_the_first_has_the_notes():
    """⟨2,1,1⟩ with one product (A11 + A21)·B11 for both C blocks: C11 (line 3) gains A21·B11 and C21
    (line 4) gains A11·B11.  One product is fewer than max(2, 1, 2) = 2: that note goes with the first
    error only, and the second error points at its own line 4, not the first's line 3."""
    text = "algorithm shared <2,1,1;1>:\n  M1 = (A11 + A21) * B11\n  C11 = M1\n  C21 = M1\n"
    assert _messages(text) == [
        ("C11 is wrong: it computes A11*B11 + A21*B11 but must be A11*B11; has +A21*B11 that should not be there", 3,
         ("no ⟨2,1,1⟩ scheme has fewer than 2 products (A, B and C have 2, 1 and 2 blocks); this one has 1: is it "
          "complete?",)),
        ("C21 is wrong: it computes A11*B11 + A21*B11 but must be A21*B11; has +A11*B11 that should not be there", 4,
         ()),
    ]


def test_the_reach_note_comes_after_the_rank_note_and_before_the_search_note():
    """⟨1,2,1⟩ with M1 = (2·A11)·B11 (through named sums S1 and T1): no product reaches column 2 of A or
    row 2 of B, and one product is fewer than max(2, 2, 1) = 2.  With a fix search limit of 1 sum the
    two named sums are past it.  The notes go from the most to the least telling: the rank, the reach,
    then why no fix is offered."""
    text = "algorithm narrow <1,2,1;1>:\n  S1 = 2*A11\n  T1 = B11\n  M1 = S1 * T1\n  C11 = M1\n"
    assert _messages(text, fix_search_sums=1) == [(
        "C11 is wrong: it computes 2*A11*B11 but must be A11*B11 + A12*B21; misses A12*B21; has +2*A11*B11 "
        "where it needs +A11*B11", 5, (
            "no ⟨1,2,1⟩ scheme has fewer than 2 products (A, B and C have 2, 2 and 1 blocks); this one has 1: is "
            "it complete?",
            "no product reaches column 2 of A and row 2 of B: the products fit ⟨1,1,1⟩, inside this scheme's "
            "⟨1,2,1⟩; a shape taken from a file's name or --shape may be the wrong one",
            "no single-coefficient fix was searched for: the program has 2 named sums (the search covers up to 1)"))]


def test_the_rank_floor_counts_the_c_blocks_too():
    """⟨2,1,2⟩ (an outer product): A and B have 2 blocks each but C has 4, and each C block needs its own
    product, so fewer than max(2, 2, 4) = 4 products cannot be right.  Three products, C22 = M3 =
    A21·B11 where A21·B12 is due: the rank note says 4 (a floor of max(2, 2) = 2 said nothing)."""
    text = ("algorithm outer <2,1,2;3>:\n  M1 = A11 * B11\n  M2 = A11 * B12\n  M3 = A21 * B11\n"
            "  C11 = M1\n  C12 = M2\n  C21 = M3\n  C22 = M3\n")
    assert _messages(text) == [(
        "C22 is wrong: it computes A21*B11 but must be A21*B12; has +A21*B11 that should not be there; misses "
        "A21*B12", 8,
        ("no ⟨2,1,2⟩ scheme has fewer than 4 products (A, B and C have 2, 2 and 4 blocks); this one has 3: is "
         "it complete?",))]


# --- reach_note: which dimensions no product reaches -----------------------------------------------------


def test_a_row_reached_by_c_alone_is_reached():
    """⟨2,1,1⟩ with M1 = A11·B11 for both C11 and C21: no product reads A21, but C21 is written, so row 2
    is reached (rows count A's and C's, columns of A B's rows too): the wrong C21 carries no reach note,
    only the rank note (one product where max(2, 1, 2) = 2 are needed)."""
    text = "algorithm rows <2,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n  C21 = M1\n"
    assert _messages(text) == [(
        "C21 is wrong: it computes A11*B11 but must be A21*B11; has +A11*B11 that should not be there; misses "
        "A21*B11", 4,
        ("no ⟨2,1,1⟩ scheme has fewer than 2 products (A, B and C have 2, 1 and 2 blocks); this one has 1: is "
         "it complete?",))]


def test_a_column_reached_by_c_alone_is_reached():
    """The transpose: ⟨1,1,2⟩ with M1 = A11·B11 for both C11 and C12: no product reads B12, but C12 is
    written, so column 2 is reached: only the rank note (one product where max(1, 2, 2) = 2 are needed)."""
    text = "algorithm cols <1,1,2;1>:\n  M1 = A11 * B11\n  C11 = M1\n  C12 = M1\n"
    assert _messages(text) == [(
        "C12 is wrong: it computes A11*B11 but must be A11*B12; has +A11*B11 that should not be there; misses "
        "A11*B12", 4,
        ("no ⟨1,1,2⟩ scheme has fewer than 2 products (A, B and C have 1, 2 and 2 blocks); this one has 1: is "
         "it complete?",))]


def test_a_column_of_a_reached_only_as_a_row_of_b_is_reached():
    """⟨1,2,1⟩ with M1 = A11·(B11 + B21): A's column 2 is never read, but B's row 2 is, and the two are
    one index (l in A1l·Bl1): reached, no reach note.  C11 gains A11·B21 and misses A12·B21."""
    text = "algorithm cols <1,2,1;1>:\n  M1 = A11 * (B11 + B21)\n  C11 = M1\n"
    assert _messages(text) == [(
        "C11 is wrong: it computes A11*B11 + A11*B21 but must be A11*B11 + A12*B21; has +A11*B21 that should "
        "not be there; misses A12*B21", 3,
        ("no ⟨1,2,1⟩ scheme has fewer than 2 products (A, B and C have 2, 2 and 1 blocks); this one has 1: is "
         "it complete?",))]


def test_a_scheme_with_no_products_has_no_reach_note():
    """No product at all (a file cut short before its first, built here as an Algorithm: the frontend
    asks for C11 as a sum of products): every dimension is reached 0 times, and a note that no product
    reaches any row or column would add nothing to the errors and the rank note (0 of max(2, 2, 1) = 2).
    C11 computes 0 and misses both classical terms."""
    algorithm = Algorithm("nil", Shape(1, 2, 1), (), (), (Output("C11", Form()),))
    assert [(error.message, error.notes) for error in verify_algorithm(algorithm)] == [(
        "C11 is wrong: it computes 0 but must be A11*B11 + A12*B21; misses A11*B11, A12*B21",
        ("no ⟨1,2,1⟩ scheme has fewer than 2 products (A, B and C have 2, 2 and 1 blocks); this one has 0: is "
         "it complete?",))]


# --- single_coefficient_fixes: which changes are offered --------------------------------------------------


def test_a_change_that_matches_one_wrong_term_but_not_the_other_is_no_fix():
    """⟨1,2,1⟩: C11 = M1 + M2 + M3 + M4 − M5 with M3 = A11·(B11 + B21) and M4 = M5 = A11·(B11 + 2·B21)
    (which cancel) has M3's A11·B11 + A11·B21 too many.  Dropping M3 (1 to 0) fixes it.  Dropping M4
    takes away A11·B11 + 2·A11·B21: right on the first term, 1 too many on the second, so no fix (nor
    M5 from −1 to −2); a ratio checked on one term only offered both.  (A11 in M3 to 0 would empty M3.)"""
    text = ("algorithm over <1,2,1;5>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  M3 = A11 * (B11 + B21)\n"
            "  M4 = A11 * (B11 + 2*B21)\n  M5 = A11 * (B11 + 2*B21)\n  C11 = M1 + M2 + M3 + M4 - M5\n")
    assert _messages(text) == [(
        "C11 is wrong: it computes 2*A11*B11 + A11*B21 + A12*B21 but must be A11*B11 + A12*B21; has +A11*B21 that "
        "should not be there; has +2*A11*B11 where it needs +A11*B11", 7,
        ("changing the coefficient of M3 in C11 from 1 to 0 (line 7) would make every equation hold",))]


def test_a_product_that_feeds_a_right_block_is_not_searched(monkeypatch):
    """⟨2,1,1⟩: M1 = (2·A11)·B11 for C11 and M2 = A21·B11 for C21; only C11 is wrong (2·A11·B11).  The
    fixes are A11 in M1 from 2 to 1 (whole, first), B11 in M1 from 1 to ½ and M1 in C11 from 1 to ½.
    M2 feeds C21, which is right, so no change of its factors can help: only M1's two candidates
    (A11 against B11, and 2·A11 against B11) are formed, not M2's A11 against B11 as well."""
    formed = []
    monkeypatch.setattr(brent, "bilinear", lambda left, right: formed.append((str(left), str(right))) or
                        bilinear_of(left, right))
    text = "algorithm twice <2,1,1;2>:\n  M1 = (2*A11) * B11\n  M2 = A21 * B11\n  C11 = M1\n  C21 = M2\n"
    assert _messages(text) == [(
        "C11 is wrong: it computes 2*A11*B11 but must be A11*B11; has +2*A11*B11 where it needs +A11*B11", 4, (
            "changing the coefficient of A11 in the left factor of M1 from 2 to 1 (line 2) would make every equation "
            "hold",
            "changing the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 2) would make every "
            "equation hold",
            "changing the coefficient of M1 in C11 from 1 to 1/2 (line 4) would make every equation hold"))]
    assert formed == [("A11", "B11"), ("2*A11", "B11")]


def _fixes(text: str) -> list[str]:
    expansion = expansion_of(_algorithm(text))
    return single_coefficient_fixes(expansion, brent_residual(expansion), "one.bl")


def test_a_fix_inside_a_sum_of_a_blocks_is_scaled_by_what_the_sum_meets():
    """⟨1,1,1⟩: S1 = A11 and M1 = (2·S1)·B11, so C11 = M1 is 2·A11·B11.  A unit more of A11 in S1 adds
    2·A11·B11 (S1 meets B11 with weight 2 in M1, and M1 has weight 1 in C11), so A11 in S1 goes from 1
    to 1 − 1/2 = 1/2; unscaled, the step was −1, to 0, which would empty S1 and was dropped.  All five
    fixes (the whole ones first): A11 added to M1's left factor at −1 (2·S1 − A11 = A11), S1's 2 to 1,
    B11's 1 to ½, M1's 1 in C11 to ½, A11's 1 in S1 to ½."""
    assert _fixes("algorithm s <1,1,1;1>:\n  S1 = A11\n  M1 = (2*S1) * B11\n  C11 = M1\n") == [
        "the coefficient of A11 in the left factor of M1 from 0 to -1 (line 3)",
        "the coefficient of S1 in the left factor of M1 from 2 to 1 (line 3)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 3)",
        "the coefficient of M1 in C11 from 1 to 1/2 (line 4)",
        "the coefficient of A11 in S1 from 1 to 1/2 (line 2)",
    ]


def test_a_fix_inside_a_sum_of_b_blocks_keeps_a_before_b():
    """The mirror image: T1 = B11 and M1 = A11·(2·T1).  The change of B11 in T1 meets A11 with weight 2:
    its terms are A11*B11 (A's block first, as the residual names them), and it goes from 1 to 1/2.
    Named B11*A11, the change matched none of the residual's terms and the fix was lost."""
    assert _fixes("algorithm t <1,1,1;1>:\n  T1 = B11\n  M1 = A11 * (2*T1)\n  C11 = M1\n") == [
        "the coefficient of B11 in the right factor of M1 from 0 to -1 (line 3)",
        "the coefficient of T1 in the right factor of M1 from 2 to 1 (line 3)",
        "the coefficient of A11 in the left factor of M1 from 1 to 1/2 (line 3)",
        "the coefficient of M1 in C11 from 1 to 1/2 (line 4)",
        "the coefficient of B11 in T1 from 1 to 1/2 (line 2)",
    ]


def test_a_fix_inside_a_sum_of_products_is_scaled_by_its_weight_in_the_output():
    """P1 = M1 (M1 = A11·B11) and C11 = 2·P1: a unit more of M1 in P1 adds 2·A11·B11 (P1's weight 2 in
    C11), so M1 in P1 goes from 1 to 1/2; unscaled, to 0 (an empty P1, dropped).  The other fixes: −M1
    added to C11, P1's 2 in C11 to 1, A11's or B11's 1 in M1 to ½."""
    assert _fixes("algorithm p <1,1,1;1>:\n  M1 = A11 * B11\n  P1 = M1\n  C11 = 2*P1\n") == [
        "the coefficient of M1 in C11 from 0 to -1 (line 4)",
        "the coefficient of P1 in C11 from 2 to 1 (line 4)",
        "the coefficient of A11 in the left factor of M1 from 1 to 1/2 (line 2)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 2)",
        "the coefficient of M1 in P1 from 1 to 1/2 (line 3)",
    ]


def test_a_sum_that_feeds_a_right_block_is_not_searched(monkeypatch):
    """⟨2,1,1⟩: M1 = (2·A11)·B11 for C11 (wrong: 2·A11·B11) and M2 = S1·B11 with S1 = A21 for C21
    (right).  A change inside S1 reaches C21 alone, never C11: its candidates are not listed.  Those
    listed are M1's left and right factors and C11's equation, in that order."""
    listed = []
    candidates = brent._candidates
    monkeypatch.setattr(brent, "_candidates", lambda form, names, algorithm: listed.append(str(form)) or
                        candidates(form, names, algorithm))
    text = "algorithm sums <2,1,1;2>:\n  S1 = A21\n  M1 = (2*A11) * B11\n  M2 = S1 * B11\n  C11 = M1\n  C21 = M2\n"
    assert _fixes(text) == [
        "the coefficient of A11 in the left factor of M1 from 2 to 1 (line 3)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 3)",
        "the coefficient of M1 in C11 from 1 to 1/2 (line 5)",
    ]
    assert listed == ["2*A11", "B11", "M1"]


def test_a_change_that_would_empty_a_sum_is_not_offered_nor_a_sum_that_reads_itself():
    """⟨1,1,1⟩: S1 = A11 and M1 = (A11 + S1)·B11 compute 2·A11·B11.  Dropping A11 or S1 from M1's left
    factor (1 to 0) fixes it, as do B11's or M1's 1 to ½.  So would A11 in S1 from 1 to 0, but S1 would
    be empty; and S1 cannot gain itself (S1 = A11 − S1 is no definition), though −S1 would fix it too."""
    assert _fixes("algorithm s <1,1,1;1>:\n  S1 = A11\n  M1 = (A11 + S1) * B11\n  C11 = M1\n") == [
        "the coefficient of A11 in the left factor of M1 from 1 to 0 (line 3)",
        "the coefficient of S1 in the left factor of M1 from 1 to 0 (line 3)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 3)",
        "the coefficient of M1 in C11 from 1 to 1/2 (line 4)",
    ]


def test_a_fix_inside_a_sum_is_scaled_by_the_weight_of_its_product_in_the_output():
    """S1 = A11, M1 = S1·B11, C11 = 2·M1: a unit more of A11 in S1 adds 2·A11·B11 (M1's weight 2 in
    C11), so A11 in S1 goes from 1 to 1/2 (without the weight, to 0: an empty S1, dropped).  M1's 2 in
    C11 to 1 comes first, the only whole change; then −½·A11 added to M1's left factor, S1's or B11's 1
    to ½."""
    assert _fixes("algorithm s <1,1,1;1>:\n  S1 = A11\n  M1 = S1 * B11\n  C11 = 2*M1\n") == [
        "the coefficient of M1 in C11 from 2 to 1 (line 4)",
        "the coefficient of A11 in the left factor of M1 from 0 to -1/2 (line 3)",
        "the coefficient of S1 in the left factor of M1 from 1 to 1/2 (line 3)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 3)",
        "the coefficient of A11 in S1 from 1 to 1/2 (line 2)",
    ]


def test_a_sum_whose_uses_cancel_in_a_right_block_can_still_be_fixed():
    """⟨2,1,1⟩: S1 = 2·A11 feeds M1 and M2 (both S1·B11); C11 = M1 (2·A11·B11, wrong) and C21 = M1 − M2 + M3
    (M3 = A21·B11: right, S1's two uses cancelling).  So S1 meets C11 only, and A11 in S1 from 2 to 1 fixes
    all; kept at weight 0, C21 counted as touched and the fix was lost.  M1 feeds both blocks, so its
    factors are not searched; C11's M1 to ½, or −½·M2 added to C11, fix it too."""
    text = ("algorithm s <2,1,1;3>:\n  S1 = 2*A11\n  M1 = S1 * B11\n  M2 = S1 * B11\n  M3 = A21 * B11\n  C11 = M1\n"
            "  C21 = M1 - M2 + M3\n")
    assert _fixes(text) == [
        "the coefficient of A11 in S1 from 2 to 1 (line 2)",
        "the coefficient of M1 in C11 from 1 to 1/2 (line 6)",
        "the coefficient of M2 in C11 from 0 to -1/2 (line 6)",
    ]


def test_a_sum_of_products_is_valued_with_its_coefficients():
    """P1 = 2·M1 (M1 = A11·B11) and C11 = P1: P1 is 2·A11·B11, so P1 in C11 goes from 1 to 1/2 (valued
    as M1 alone, from 1 to 0: C11 would be empty of P1 and still wrong).  The whole changes first: −M1
    added to C11, M1's 2 in P1 to 1; then A11's or B11's 1 in M1 to ½."""
    assert _fixes("algorithm p <1,1,1;1>:\n  M1 = A11 * B11\n  P1 = 2*M1\n  C11 = P1\n") == [
        "the coefficient of M1 in C11 from 0 to -1 (line 4)",
        "the coefficient of M1 in P1 from 2 to 1 (line 3)",
        "the coefficient of A11 in the left factor of M1 from 1 to 1/2 (line 2)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 2)",
        "the coefficient of P1 in C11 from 1 to 1/2 (line 4)",
    ]


def test_only_a_factor_whose_other_side_matches_the_residual_is_searched(monkeypatch):
    """⟨1,2,1⟩: M1 = (2·A11)·B11, M2 = A12·B21, C11 = M1 + M2 has one A11·B11 too many: an outer product
    of {A11} and {B11}.  M2 feeds C11 too, but its other factors (B21, A12) are not {B11} or {A11}: no
    change of its factors gives A11·B11, so none is formed; only M1's (A11 against B11, 2·A11 against
    B11).  The fixes: A11 in M1 from 2 to 1, B11 in M1 or M1 in C11 from 1 to ½."""
    formed = []
    monkeypatch.setattr(brent, "bilinear", lambda left, right: formed.append((str(left), str(right))) or
                        bilinear_of(left, right))
    assert _fixes("algorithm u <1,2,1;2>:\n  M1 = (2*A11) * B11\n  M2 = A12 * B21\n  C11 = M1 + M2\n") == [
        "the coefficient of A11 in the left factor of M1 from 2 to 1 (line 2)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 2)",
        "the coefficient of M1 in C11 from 1 to 1/2 (line 4)",
    ]
    assert formed == [("A11", "B11"), ("2*A11", "B11")]


def test_a_sum_of_b_blocks_can_gain_a_block_it_does_not_have():
    """⟨1,2,1⟩: T1 = B11, M1 = A11·T1, M2 = A12·B21, M3 = A11·B21 and C11 = M1 + M2 − M3 has −A11·B21
    where none is due.  Giving T1 a B21 (0 to 1) makes M1 = A11·B11 + A11·B21, which M3 cancels; so do
    B21 added to M1's right factor, A11 to M2's left factor, and dropping M3 from C11.  T1's candidates
    are every B block (not the products' names, as for a sum of products)."""
    text = "algorithm t <1,2,1;3>:\n  T1 = B11\n  M1 = A11 * T1\n  M2 = A12 * B21\n  M3 = A11 * B21\n  C11 = M1 + M2 - M3\n"
    assert _fixes(text) == [
        "the coefficient of B21 in the right factor of M1 from 0 to 1 (line 3)",
        "the coefficient of A11 in the left factor of M2 from 0 to 1 (line 4)",
        "the coefficient of M3 in C11 from -1 to 0 (line 6)",
        "the coefficient of B21 in T1 from 0 to 1 (line 2)",
    ]
