"""Which statement the verifier blames for a wrong C block, pinned where the rest of the suite let a changed line
pass: a source-mutation audit of bilinear/verify/blame.py against tests/test_diagnostics.py,
tests/test_reliability_answers.py and tests/test_verify_counts_mutations.py.  42 mutants: 35 killed by the suite,
4 equivalent (each turns a ``return None`` into the same ``return None``, lines 24, 29, 42 and 54), 3 killed here,
none left unjudged.  The three: ``dropped_c``'s ``if setting is None`` taken as never true (it then returned a
``None`` culprit with a note quoting `None`), ``wrong_weight``'s ``isinstance(statement, Multiply)`` dropped (an
element-wise update among a block's writers then raised AttributeError), and ``dropped_c``'s
``schedule.overwrites_c`` dropped.  The last cannot show through the verifier (under ``overwrite`` a block holding
C⁰ content has read poisoned C and is not weighed, so nothing misses exactly C11⁰): it is pinned on dropped_c itself,
whose contract is an accumulating schedule.  Hand-made mutants the tool does not make: every product statement taken
for a setter (``statement.overwrite`` as ``True``) and the targets of a statement leaving a block out joined by
" and " throughout passed the suite and are killed here; ``computing[-1]`` for ``computing[0]``, "only" notes always
joined, ``', and '`` as ``', '``, no line numbers in the quoted statements and the setter test's two branches
swapped were already killed.  No bug found.
"""

from __future__ import annotations

from helpers.schedules import INNER_TWO, verification_errors

from bilinear.frontend import program_from_text
from bilinear.ir import Form
from bilinear.verify.blame import dropped_c


ONE = """\
algorithm one <1,1,1;1>:
  M1 = A11 * B11
  C11 = M1

"""


def test_a_block_emptied_by_an_update_that_reads_it_blames_its_last_writer():
    """X copies C11 (C11⁰), `C11 -= X` empties C11 by reading it, then `A11 * B11 -> +C11` adds M1: C11 misses
    exactly C11⁰, yet no statement set C11 without reading it, and an update writes it, so no product is weighed.
    The error stands at the last writer (line 9) with only the writers as notes (a mutant returned a None culprit,
    the schedule's line 5, with a note quoting `None`; another raised AttributeError weighing the update)."""
    (error,) = verification_errors(ONE + """\
schedule s for one:
  temp X: C
  stage c: X = C11
  stage z: C11 -= X
  stage p: A11 * B11 -> +C11
""")
    assert error.message == "C11 ends holding A11*B11 but must hold A11*B11 + C11⁰; misses C11⁰"
    assert (error.span.line, error.span.column) == (9, 12)
    assert error.notes == ("C11 is written by `C11 -= X` (line 8, stage z); `A11 * B11 -> +C11` (line 9, stage p)",)


def test_an_accumulating_product_statement_is_no_setter():
    """X = M2, then `A11 * B11 -> +C11 +X` adds M1 into C11 (keeping C11⁰) and X, then `C11 = X` sets C11 to
    M1 + M2: C11 misses exactly C11⁰, and the statement that dropped it is `C11 = X` (line 10), not the first
    writer of C11, the product statement on line 9 (which adds, not sets)."""
    (error,) = verification_errors(INNER_TWO + """\
schedule s for two:
  temp X: C
  stage p2: X = A12 * B21
  stage p1: A11 * B11 -> +C11 +X
  stage s: C11 = X
""")
    assert error.message == "C11 ends holding A11*B11 + A12*B21 but must hold A11*B11 + A12*B21 + C11⁰; misses C11⁰"
    assert error.span.line == 10
    assert error.notes[0] == ("schedule s accumulates into C (C += A·B, the default), and `C11 = X` sets C11, "
                              "dropping its original content: declare the schedule `overwrite` to compute C = A·B, "
                              "or write += there")


def test_three_other_targets_are_named_with_commas_and_a_last_and():
    """M1 = A11·B11 is in all four C blocks of four; `A11 * B11 -> +C11 +C12 +C13` leaves C14 out, and its targets
    are named "C11, C12 and C13" (not "C11 and C12 and C13")."""
    (error,) = verification_errors("""\
algorithm four <1,1,4;4>:
  M1 = A11 * B11
  M2 = A11 * (B12 - B11)
  M3 = A11 * (B13 - B11)
  M4 = A11 * (B14 - B11)
  C11 = M1
  C12 = M1 + M2
  C13 = M1 + M3
  C14 = M1 + M4

schedule s for four:
  stage p1: A11 * B11 -> +C11 +C12 +C13
  stage p2: A11 * (B12 - B11) -> +C12;  A11 * (B13 - B11) -> +C13;  A11 * (B14 - B11) -> +C14
""")
    assert error.message.startswith("C14 ends holding") and error.span.line == 12
    assert error.notes[0] == ("`A11 * B11 -> +C11 +C12 +C13` adds M1 to C11, C12 and C13 only; four's C14 has it "
                              "times 1: add +C14")


def test_dropped_c_blames_no_setter_in_an_overwrite_schedule():
    """dropped_c is for accumulating schedules: under `overwrite`, with C11 missing exactly C11⁰ and its writers
    `C11 = A11 * B11` (a setter) and `C11 -= X`, it returns None; the same writes under an accumulating schedule
    give the setter."""
    text = ONE + """\
schedule s for one: {properties}
  temp X: C
  stage c: X = C11
  stage s: C11 = A11 * B11
  stage t: C11 -= X
"""
    missing = Form.symbol("C11⁰")
    for properties, want in (("overwrite", None), ("accumulate", "C11 = A11 * B11")):
        (schedule,) = program_from_text(text.format(properties=properties), "blame.bl").schedules
        writes = [(stage, statement) for stage in schedule.stages[1:] for statement in stage.statements]
        found = dropped_c(schedule, writes, "C11", missing)
        assert (None if found is None else str(found[0])) == want
