"""What a scheme or schedule costs (verify.counts) pinned where the rest of the suite let a changed line
pass: a source-mutation audit of verify/counts.py.

The suite checks its counts on the shipped schemes and their reports, through flops priced where
the blocks of A, B and C have one size (M = K = N over a square split), with every output a sum of
products and every zero sum made of blocks.  So a block's rows or columns taken from the wrong one
of M/m, K/k, N/n, additions priced at another operand's block size, a speedup of 0 (not None) for
a scheme that computes nothing, an empty output counted as -1 additions, a zero sum of named sums
put on the C side, a concurrent stage's traffic taken as its net effect, one target update counted
per product statement and no temporaries counted all went unseen.  Each test here counts a scheme
or schedule of a few lines, written inline, over a shape with distinct m, k, n where the shape is
the question, and derives every figure by hand in its docstring (with the wrong figure a changed
line gives, where that helps); a few pin what the suite caught only through larger schemes.

The audit went on to verify/conflicts.py (every mutant there already failed the suite's comparison
with the pairwise check) and verify/blame.py, whose notes the suite checks on Strassen schedules
with unscaled product statements, each leaving out one target at most, and on one setter that is the
block's only writer.  So a statement's scale (2·M1 added times 1/2) dropped from the weighing or the
quoted figures, the other targets of a statement that leaves a block out named wrongly, the first
statement computing a product taken for the last, the last setter of a block or an update that
reads it taken for the one that dropped its original content, products weighed where a setter
discarded them, and a statement computing no product looked up among the products' weights went
unseen: the last tests here verify schedules of two or three products for it.
"""

from __future__ import annotations

import dataclasses

from helpers.schedules import INNER_TWO, verification_errors

from bilinear.frontend import program_from_text
from bilinear.ir import Form, Stage, Update
from bilinear.verify.counts import algorithm_flops, block_elements, count_algorithm, count_schedule, used_names

# C11 = A11·B11 + A12·B21, C12 = A11·B12 + A12·B22, C13 = A11·B13 + A12·B23 over <1,2,3> in six
# products, three of them of named sums: M2 = R·B12 (R = S - A12 = A11, an A-side chain), M5 =
# S·B13 (S = A11 + A12) and M6 = A12·W (W = V + B22 - B13 - B21 = B23 - B13, a B-side chain that only
# M6's B factor reads); C13 = (A11 + A12)·B13 + A12·(B23 - B13).  X is a sum no product reads, M7 a
# product no output names.
SIDES = """\
algorithm sides <1,2,3;7>:
  S = A11 + A12
  R = S - A12
  X = A11 - A12
  V = B23 - B22 + B21
  W = V + B22 - B13 - B21
  M1 = A11 * B11
  M2 = R * B12
  M3 = A12 * B21
  M4 = A12 * B22
  M5 = S * B13
  M6 = A12 * W
  M7 = (A11 + A12) * (B11 - B13)
  C11 = M1 + M3
  C12 = M2 + M4
  C13 = M5 + M6
"""


def _algorithm(text: str):
    return program_from_text(text, "counts.bl").algorithms[0]


# --- products and the speedup ------------------------------------------------------------------------


def test_additions_by_side_count_what_an_output_uses_through_sums_and_both_factors():
    """As written: A side S (1) + R (1) = 2, X unread and M7's A11 + A12 never computed; B side V (2)
    + W (3) = 5, V reached only through W, W only through M6's B factor, M7's B11 - B13 not
    computed; C side 1 + 1 + 1 = 3.  Ten in all.  (Dropping a product's B factor from what it
    reads lost W and V: B 0; following no sum into the sums it reads lost V: B 3; counting every
    sum or every product added X, or M7's factors: A 3, B 6.)"""
    counts = count_algorithm(_algorithm(SIDES))
    assert counts.additions_by_side == (2, 5, 3)
    assert counts.additions == 10


def test_used_names_follow_sums_into_sums_and_both_factors():
    """C11..C13 name M1..M6; M2 reads R, R reads S; M6 reads W, W reads V: every sum but X, every
    block (both A blocks, all six B blocks), and every product but M7."""
    assert used_names(_algorithm(SIDES)) == {
        "M1", "M2", "M3", "M4", "M5", "M6", "S", "R", "V", "W",
        "A11", "A12", "B11", "B12", "B13", "B21", "B22", "B23"}


def test_additions_unshared_form_each_used_product_from_its_expansion():
    """Multiplied out, M5's A factor is A11 + A12 (1), M6's B factor B23 - B13 (1), M2's A11 (0);
    M7, which no output uses, is not formed (it would add 1 + 1); the outputs add 1 each (3): 5.
    (A factor alone or B factor alone: 4; M7 formed: 7; the outputs left out: 2.)"""
    assert count_algorithm(_algorithm(SIDES)).additions_unshared == 5


def test_classical_products_are_m_k_n_and_the_speedup_counts_computed_products():
    """<1,2,3>: 1·2·3 = 6 classical products (1·2·2 = 4 where n is taken for k); 7 products of which
    M7 no output uses: 6 computed, speedup 6/6 = 1 (not 6/7), one unused (not the six used)."""
    counts = count_algorithm(_algorithm(SIDES))
    assert (counts.products, counts.unused_products, counts.computed_products) == (7, 1, 6)
    assert counts.classical_products == 6
    assert counts.speedup_per_level == 1.0


def test_a_scheme_that_computes_nothing_has_no_speedup():
    """C11 = M1 - M1 is zero: M1 is never used, so the scheme computes no product and its speedup is
    None (1 classical product over 0 computed has no value; 0 is a figure it does not have).
    C11's form is empty: max(0 - 1, 0) = 0 additions, never -1."""
    counts = count_algorithm(_algorithm("algorithm none <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1 - M1\n"))
    assert (counts.products, counts.unused_products, counts.computed_products) == (1, 1, 0)
    assert counts.speedup_per_level is None
    assert (counts.additions, counts.additions_by_side, counts.additions_unshared) == (0, (0, 0, 0), 0)


def test_a_product_written_into_an_output_that_cancels_is_counted_as_written_only():
    """C11 = (M3 + M1) - M3 + M2 = M1 + M2 over <1,2,1>.  As written M3 is used (through S and C11):
    A 1, B 1 for its factors, C 1 (S) + 2 (C11) = 3: 5.  Multiplied out M3 cancels: unused, not
    formed, and C11 = M1 + M2 adds 1: unshared 1 (3 with M3's factors formed), speedup 2/2."""
    counts = count_algorithm(_algorithm(
        "algorithm cancels <1,2,1;3>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  M3 = (A11 + A12) * (B11 + B21)\n"
        "  S = M3 + M1\n  C11 = S - M3 + M2\n"))
    assert counts.additions_by_side == (1, 1, 3)
    assert counts.additions_unshared == 1
    assert (counts.unused_products, counts.computed_products, counts.speedup_per_level) == (1, 2, 1.0)


# --- the side of a sum that cancels to zero -----------------------------------------------------------


def test_a_zero_sum_of_named_a_sums_is_on_the_a_side():
    """Z = S - T with S = A11 + A12 and T = A12 + A11 is zero: its side is its terms', and its terms
    are named sums (no block name), so it is S's side, A.  A side: S 1, T 1, Z 1, M1's A11 + Z 1
    over <1,2,1>: 4, C11 = M1 + M2 1.  (Asking only the terms' own names found no side: Z on C.)"""
    counts = count_algorithm(_algorithm(
        "algorithm zero <1,2,1;2>:\n  S = A11 + A12\n  T = A12 + A11\n  Z = S - T\n"
        "  M1 = (A11 + Z) * B11\n  M2 = A12 * B21\n  C11 = M1 + M2\n"))
    assert counts.additions_by_side == (4, 0, 1)


def test_a_zero_sum_of_products_is_on_the_c_side():
    """U = V - W with V = M1 and W = M1 is zero, and no term has a side (V and W are sums of a
    product): C.  C side: V 0, W 0, U 1, C11 = M1 + U 1: 2; nothing on A or B."""
    counts = count_algorithm(_algorithm(
        "algorithm zero <1,1,1;1>:\n  M1 = A11 * B11\n  V = M1\n  W = M1\n  U = V - W\n  C11 = M1 + U\n"))
    assert counts.additions_by_side == (0, 0, 2)


# --- flops and block sizes ---------------------------------------------------------------------------


def test_block_elements_take_each_operands_own_dimensions():
    """<1,2,3> at M, K, N = 5, 14, 6: an A block is (5/1)×(14/2) = 35, a B block (14/2)×(6/3) = 14,
    a C block (5/1)×(6/3) = 10 (a swap of any two of M/m, K/k, N/n gives another value)."""
    sides = _algorithm(SIDES)
    assert [block_elements(sides, operand, 5, 14, 6) for operand in "ABC"] == [35, 14, 10]


def test_flops_are_two_per_leaf_multiply_add_and_additions_times_block_sizes():
    """<1,2,3> at 5, 14, 6: 6 computed products of (5×7)·(7×2) blocks, 2·5·7·2 = 140 flops each:
    840 (M7, unused, is not computed: 7 would give 980).  Additions A 2, B 5, C 3 over blocks of 35,
    14 and 10 elements: 70 + 70 + 30 = 170."""
    assert algorithm_flops(_algorithm(SIDES), 5, 14, 6) == (840, 170)


# --- schedules ---------------------------------------------------------------------------------------

# C11 = A11·B11, C12 = A11·B12 over <1,1,2> as M1 - M2 and M2, M1 = A11·(B11 + B12): the sum in a
# temporary Y (a B block), then one stage of two product statements, the second into two blocks.
TWO_ALGORITHM = """\
algorithm two <1,1,2;2>:
  M1 = A11 * (B11 + B12)
  M2 = A11 * B12
  C11 = M1 - M2
  C12 = M2

"""
TWO = TWO_ALGORITHM + """\
schedule s for two:
  temp Y: B
  stage e1: Y = B11 + B12
  stage p1: A11 * Y -> +C11;  A11 * B12 -> -C11 +C12
"""


def _schedule(text: str = TWO):
    return program_from_text(text, "counts.bl").schedules[0]


def test_schedule_counts_stages_statements_and_targets():
    """Two stages, one element-wise (e1) and one of products (p1); one update, two product
    statements with 1 + 2 = 3 target updates; one temporary.  e1 reads B11 and B12 and writes Y,
    a B-shaped temporary: 3 B blocks moved (reads only 2, writes only 1; Y by its own name none)."""
    counts = count_schedule(_schedule())
    assert (counts.stages, counts.elementwise_stages, counts.product_stages) == (2, 1, 1)
    assert (counts.elementwise_statements, counts.product_statements, counts.target_updates) == (1, 2, 3)
    assert counts.temporaries == 1
    assert counts.elementwise_blocks_moved == {"B": 3}


def test_launches_are_a_kernel_per_product_stage_with_fused_leaves_else_a_gemm_per_product():
    """One element-wise stage, one product stage of two statements: fused leaves launch 1 + 1 = 2
    kernels, library GEMM leaves 1 + 2 = 3."""
    counts = count_schedule(_schedule())
    assert (counts.launches(True), counts.launches(False)) == (2, 3)


def test_an_ordered_stage_moves_its_net_effect():
    """An ordered (fused) stage C11 = C12; C12 += C11; A11 += A12; A11 -= A12 runs as one kernel
    over its net effect: C11 := C12, C12 := 2·C12, A11 unchanged.  It reads C12 alone (C11's first
    value no statement uses) and writes C11 and C12: 3 C blocks, and no A block (statement by
    statement it would read C11, C12, A11, A12 and write C11, C12, A11: C 4, A 3)."""
    statements = (Update("C11", Form.symbol("C12")), Update("C12", Form.of({"C12": 1, "C11": 1})),
                  Update("A11", Form.of({"A11": 1, "A12": 1})), Update("A11", Form.of({"A11": 1, "A12": -1})))
    schedule = _schedule()
    fused = dataclasses.replace(schedule, stages=(schedule.stages[0], Stage("f", statements, ordered=True),
                                                  schedule.stages[1]))
    counts = count_schedule(fused)
    assert counts.elementwise_blocks_moved == {"B": 3, "C": 3}
    assert (counts.stages, counts.elementwise_stages, counts.product_stages, counts.elementwise_statements) == (3, 2, 1, 5)


def test_a_concurrent_stage_moves_what_its_statements_read_and_write_as_written():
    """A concurrent stage is not fused: `Y += B11;  Y -= B11` runs both statements, which read Y and
    B11 and write Y, though together they leave Y as it was.  With e1 (B11, B12 read, Y written: 3)
    that is 3 + 3 = 6 B blocks moved; taken as one kernel over its net effect (as an ordered stage
    is) the second stage would move nothing: 3."""
    counts = count_schedule(_schedule(TWO.replace("  stage p1:", "  stage e2: Y += B11;  Y -= B11\n  stage p1:")))
    assert counts.elementwise_blocks_moved == {"B": 6}
    assert (counts.elementwise_stages, counts.elementwise_statements) == (2, 3)


# --- blame: which statement a wrong C block points at (verify.blame) ----------------------------------


SCALED = TWO_ALGORITHM + """\
schedule s for two:
  temp Y: B
  temp Z: B
  stage e1: Y = 2*B11 + 2*B12;  Z = 2*B12
  stage p1: A11 * Y -> +1/2*C11;  A11 * Z -> +1/2*C11 +1/2*C12
"""


def test_a_product_statement_is_weighed_with_its_scale():
    """A11·Y is 2·M1 and adds into C11 times 1/2: M1 times 2·1/2 = 1, as two's C11 has it (taken
    without its scale, 1/2, it was blamed first, a right statement).  A11·Z is 2·M2 and adds into
    C11 times 1/2: M2 times 2·1/2 = 1 where C11 has it times -1, the culprit; its note says 1, the
    scale times the target's weight (1/2 without it).  C12 (2·1/2 = 1, as it should) is right."""
    (error,) = verification_errors(SCALED)
    assert error.message.startswith("C11 ends holding")
    assert error.notes[0] == "`A11 * Z -> +1/2*C11 +1/2*C12` adds M2 to C11 times 1; two's C11 has it times -1"


# M1 = A11·B11 in every C block of <1,1,3>, M2 and M3 the rest of C12 and C13.
THREE_ALGORITHM = """\
algorithm three <1,1,3;3>:
  M1 = A11 * B11
  M2 = A11 * (B12 - B11)
  M3 = A11 * (B13 - B11)
  C11 = M1
  C12 = M1 + M2
  C13 = M1 + M3

"""


def test_a_statement_that_leaves_a_block_out_is_told_its_scaled_target_and_named_with_its_others():
    """M1 = A11·B11 is in C11, C12 and C13 of three.  `(2*A11) * B11` computes 2·M1 and adds it into
    C11 and C12 (times 1/2) only: C13 misses M1, and the statement is told to add it times
    1 / 2 (+1/2*C13, not +C13), its other targets named as "C11 and C12" (not "C12" alone,
    nor "C11, C12")."""
    (error,) = verification_errors(THREE_ALGORITHM + """\
schedule s for three:
  stage p1: (2*A11) * B11 -> +1/2*C11 +1/2*C12
  stage p2: A11 * (B12 - B11) -> +C12;  A11 * (B13 - B11) -> +C13
""")
    assert error.message.startswith("C13 ends holding") and error.span.line == 10
    assert error.notes[0] == ("`(2*A11) * B11 -> +1/2*C11 +1/2*C12` adds M1 to C11 and C12 only; three's C13 has it "
                              "times 1: add +1/2*C13")


# M1 = A11·B11 as the whole of C11, computed into a C-shaped temporary X; the tests go on with how X reaches C11.
ONE_INTO_X = """\
algorithm one <1,1,1;1>:
  M1 = A11 * B11
  C11 = M1

schedule s for one:
  temp X: C
  stage p: X = A11 * B11
"""


def test_an_update_that_reads_the_block_does_not_drop_its_original_content():
    """C11 += X (X = M1) keeps C11⁰; C11 = X, after it, sets C11 to M1: C11 ends without C11⁰, and
    the statement that dropped it is the second (the first update writing C11 reads it)."""
    errors = verification_errors(ONE_INTO_X + """\
  stage s1: C11 += X
  stage s2: C11 = X
""")
    (error,) = [error for error in errors if error.message.startswith("C11 ends holding")]
    assert error.message == "C11 ends holding A11*B11 but must hold A11*B11 + C11⁰; misses C11⁰"
    assert error.span.line == 9
    assert error.notes[0].startswith("schedule s accumulates into C (C += A·B, the default), and `C11 = X` sets C11, ")


def test_a_statement_that_sets_a_block_is_blamed_over_the_weights_it_discards():
    """`A11 * B11 -> -C11` adds M1 with the wrong sign, then `C11 = A12 * B21` sets C11, discarding
    it and C11⁰: C11 misses A11*B11 and C11⁰.  The setter is to blame (line 8), with no note but
    the block's writers: weighing the products (M1 added times -1) would point at line 7, whose
    contribution is gone, and what C11 misses is more than its original content, so "declare the
    schedule overwrite" would not make it right."""
    (error,) = verification_errors(INNER_TWO + """\
schedule s for two:
  stage p1: A11 * B11 -> -C11
  stage p2: C11 = A12 * B21
""")
    assert error.message == "C11 ends holding A12*B21 but must hold A11*B11 + A12*B21 + C11⁰; misses A11*B11, C11⁰"
    assert error.span.line == 8
    assert error.notes == ("C11 is written by `A11 * B11 -> -C11` (line 7, stage p1); `C11 = A12 * B21` (line 8, stage p2)",)


def test_a_product_no_statement_adds_into_the_block_is_blamed_on_its_first_statement():
    """M1 = A11·B11 is in C11, C12 and C13 of three; two statements compute it, one adding it into
    C11, the other into C12, and none into C13.  Neither names C13, so the first that computes M1
    (line 10) is told to add it (not the second, line 11)."""
    errors = verification_errors(THREE_ALGORITHM + """\
schedule s for three:
  stage p1: A11 * B11 -> +C11
  stage p2: A11 * B11 -> +C12
  stage p3: A11 * (B12 - B11) -> +C12;  A11 * (B13 - B11) -> +C13
""")
    (error,) = [error for error in errors if error.message.startswith("C13 ends holding")]
    assert error.span.line == 10
    assert error.notes[0] == "`A11 * B11 -> +C11` adds M1 to C11 only; three's C13 has it times 1: add +C13"


def test_each_statement_computing_a_product_is_quoted_with_its_scale():
    """M1 computed twice into C11: `A11 * Y -> +1/2*C11` (Y = 2·(B11 + B12): 2·M1, times 1/2, so M1
    times 1) and `A11 * (B11 + B12) -> +C11` (M1 times 1): 2 where two's C11 has it times 1.  The
    last of them is blamed (line 11), and the first is quoted adding it times 2·1/2 = 1 (not 1/2).
    (That the second computes M1 again is an error of its own.)"""
    errors = verification_errors(TWO_ALGORITHM + """\
schedule s for two:
  temp Y: B
  stage e1: Y = 2*B11 + 2*B12
  stage p1: A11 * Y -> +1/2*C11;  A11 * B12 -> -C11 +C12
  stage p2: A11 * (B11 + B12) -> +C11
""")
    (error,) = [error for error in errors if error.message.startswith("C11 ends holding")]
    assert error.span.line == 11
    assert error.notes[0] == ("`A11 * (B11 + B12) -> +C11` adds M1 to C11 times 1, and `A11 * Y -> +1/2*C11` (line 10) "
                              "adds it times 1; two's C11 has it times 1")


def test_a_statement_that_computes_no_product_is_not_weighed():
    """`A11 * B11` is no product of two (M1 is A11·(B11 + B12)): C12 ends with an A11·B11 it should
    not have.  Of the products, only M2 adds into C12, times 1 as two's C12 has it, so no weight is
    wrong: the error stands at C12's last writer (line 8) with its writers listed, and the statement
    computing no product is not looked up among the products' weights (a KeyError)."""
    errors = verification_errors(TWO_ALGORITHM + """\
schedule s for two:
  stage p: A11 * B11 -> +C11 +C12;  A11 * B12 -> +C12
""")
    (error,) = [error for error in errors if error.message.startswith("C12 ends holding")]
    assert error.span.line == 8
    assert error.notes == ("C12 is written by `A11 * B11 -> +C11 +C12` (line 8, stage p); `A11 * B12 -> +C12` (line 8, "
                           "stage p)",)


def test_the_first_statement_that_sets_a_block_is_the_one_that_dropped_its_original_content():
    """C11 = X (X = M1) at line 8 sets C11, dropping C11⁰; C11 = X again at line 9 sets it to the same
    value, which held no C11⁰ by then: the first setter is blamed, not the last."""
    (error,) = verification_errors(ONE_INTO_X + """\
  stage s1: C11 = X
  stage s2: C11 = X
""")
    assert error.message == "C11 ends holding A11*B11 but must hold A11*B11 + C11⁰; misses C11⁰"
    assert error.span.line == 8
