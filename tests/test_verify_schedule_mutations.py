"""The schedule verifier pinned where the rest of the suite let a changed line pass: a source-mutation audit of
bilinear/verify/schedule.py.  243 mutants.  Mutants 0-17 ran against tests/test_diagnostics.py,
test_from_zero.py, test_verify_simulated_mutations.py and test_shape_condition_mutations.py (not slow); for
time, mutants 18-242 ran against the last two and the 8 tests of test_diagnostics.py that reach the simulation.

155 killed by the suite; 75 killed here; 13 equivalent; none left unjudged:
- 6 ``return None`` / ``return False`` made ``return None``: lines 92, 96, 99, 104 already return None, and
  ``_poisoned``'s two ``return False`` are only tested for truth;
- ``elif operand is None and ...`` (line 137) without ``operand is None``: an operand block reaching the elif
  holds its own kind, which is its ``like``;
- a zero read's shape condition (line 156) without the ``like`` test: equal shapes give no condition;
- the poison test on a product's target (line 185) without ``not statement.overwrite``: a ``=`` product's
  ``before`` is the empty form, which holds no C⁰;
- ``_normalized`` scaling by 2/first coefficient: the catalogue and the lookup normalize alike;
- ``value or '0'`` as ``value or False`` (lines 172, 306, 325): the value is always a Form, and the empty
  Form is truthy and prints as 0, so the ``or`` never applies.

No bug found.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest
from helpers.schedules import INNER_TWO

from bilinear.frontend import program_from_text
from bilinear.ir import Form, Schedule, Stage, Update, block_name
from bilinear.verify import ShapeCondition, verify_schedule
from bilinear.verify.schedule import ScheduleCheck


def _load(text: str):
    program = program_from_text(text, "s.bl")
    (schedule,) = [d for d in program.own_definitions() if isinstance(d, Schedule)]
    return schedule, program.algorithm(schedule.algorithm)


def check(text: str) -> ScheduleCheck:
    """What the verifier says (the lazy simulation, then the full one where that rejects)."""
    return verify_schedule(*_load(text))


def said(result: ScheduleCheck) -> list[tuple[str, tuple[str, ...]]]:
    return [(error.message, error.notes) for error in result.errors]


def test_a_product_never_computed_is_named_with_its_factors():
    """Of two's M1 = A11*B11 and M2 = A12*B21, a schedule computing only M1 is told "schedule s never computes
    M2 = (A12) * (B21)": the second product's own factors (not None, not M1's)."""
    result = check(INNER_TWO + "schedule s for two:\n  stage p: A11 * B11 -> +C11\n")
    assert [message for message, _ in said(result)] == [
        "schedule s never computes M2 = (A12) * (B21)",
        "C11 ends holding A11*B11 + C11⁰ but must hold A11*B11 + A12*B21 + C11⁰; misses A12*B21",
    ]


def test_a_wrong_product_names_the_last_writer_of_its_other_factor():
    """T is written B11 (stage w1) then B21 (stage w2); `A11 * T` is A11*B21, no product of two.  Its notes
    name M1 (sharing the left factor A11), T's value B21 and its last writer, `T = B21` in stage w2 on line 9
    (not the first, `T = B11`)."""
    result = check(INNER_TWO + "schedule s for two:\n  temp T: B\n  stage w1: T = B11\n  stage w2: T = B21\n"
                   "  stage p: A11 * T -> +C11\n")
    assert said(result)[0] == (
        "`A11 * T -> +C11` multiplies (A11) * (B21), which is not a product of two",
        ("M1 = (A11) * (B11) shares a factor; its right factor is B11, but T holds B21",
         "T was last written by `T = B21` (line 9, stage w2)"),
    )


def test_a_wrong_product_is_compared_first_with_a_product_not_computed_yet():
    """After `A11 * B11` computed M1, `A11 * B21` shares A11 with M1 and B21 with M2: the note names M2, not
    computed yet ("its left factor is A12, but A11 holds A11"), and says A11 "has not been written"."""
    result = check(INNER_TWO + "schedule s for two:\n  stage p: A11 * B11 -> +C11\n  stage q: A11 * B21 -> +C11\n")
    assert said(result)[0] == (
        "`A11 * B21 -> +C11` multiplies (A11) * (B21), which is not a product of two",
        ("M2 = (A12) * (B21) shares a factor; its left factor is A12, but A11 holds A11", "A11 has not been written"),
    )


ONE = """algorithm n1 <1,1,1;1>:
  M1 = A11 * B11
  C11 = M1

"""


def test_a_product_into_one_of_its_own_factors_is_refused():
    """`T * B11 -> +T` (T: A, set to A11) writes its own factor T: told so, then that it adds a product into
    T, which holds A11; the later `A11 * B11 -> +C11` computes M1 again (T * B11 had taken M1)."""
    result = check(ONE + "schedule s for n1:\n  temp T: A\n  stage a: T = A11\n  stage p: T * B11 -> +T\n"
                   "  stage q: A11 * B11 -> +C11\n")
    assert said(result) == [
        ("`T * B11 -> +T` writes T, one of its own factors: a product kernel reads its factors while it writes its "
         "targets", ("write the product into another buffer (a temp of C's shape)",)),
        ("`T * B11 -> +T` adds a product into T, which holds A11", ()),
        ("`A11 * B11 -> +C11` computes M1 again", ("M1 was already computed by `T * B11 -> +T` in stage p",)),
    ]


def test_a_product_accumulated_into_an_unwritten_temporary_is_refused():
    """`A11 * B11 -> +C11 + T` adds into T (temp of C's shape) before anything wrote it: that one error, and
    nothing else (C11 ends right)."""
    result = check(ONE + "schedule s for n1:\n  temp T: C\n  stage p: A11 * B11 -> +C11 + T\n")
    assert said(result) == [("`A11 * B11 -> +C11 +T` accumulates into T before anything is written to it", ())]


def test_a_stage_of_products_and_updates_is_refused():
    """Stage p holds `A11 * B11 -> +C11` and `T = A11`: the only error is that it mixes product statements with
    the update `T = A11`, blamed on the update (line 7, column 31)."""
    result = check(ONE + "schedule s for n1:\n  temp T: A\n  stage p: A11 * B11 -> +C11; T = A11\n")
    assert said(result) == [("stage p mixes product statements with the element-wise update `T = A11`; a stage holds "
                             "either products or updates",
                             ("move the update to a stage of its own (before or after, as it needs)",))]
    assert (result.errors[0].span.line, result.errors[0].span.column) == (7, 31)


def test_an_operand_block_set_to_the_other_operand_is_refused():
    """In place, `A11 = B11` after the product: "A11 would hold a B-side value (B11); A blocks hold an A-side
    value", the schedule's only error (without `restore` nothing else checks A11)."""
    result = check(ONE + "schedule s for n1: inplace\n  stage p: A11 * B11 -> +C11\n  stage w: A11 = B11\n")
    assert said(result) == [("A11 would hold a B-side value (B11); A blocks hold an A-side value", ())]


def test_values_of_two_kinds_added_are_refused():
    """`A11 += B11` then `A11 -= B11`: the first mixes A11 and B11 (told once, with both values); A11 is
    then unknown, so the second is skipped silently, and C11 ends right."""
    result = check(ONE + "schedule s for n1: inplace\n  stage p: A11 * B11 -> +C11\n  stage m: A11 += B11\n"
                   "  stage n: A11 -= B11\n")
    assert said(result) == [("`A11 += B11` mixes values of different kinds: A11 holds A11, B11 holds B11", ())]


def test_an_ordered_stage_may_rewrite_what_its_earlier_statement_wrote():
    """An in-place, restoring n1 schedule ends with one stage f: A11 = 2·A11, then A11 = A11/2.  Ordered (run in
    order per element) it verifies with no error, A11 restored; the same stage concurrent is refused (one error): `A11 = 2*A11`
    conflicts with the other, writing A11 which that reads."""
    schedule, algorithm = _load(ONE + "schedule s for n1: inplace, restore\n  stage p: A11 * B11 -> +C11\n")
    halves = (Update("A11", Form.of({"A11": 2})), Update("A11", Form.of({"A11": Fraction(1, 2)})))
    for ordered in (True, False):
        fused = dataclasses.replace(schedule, stages=(*schedule.stages, Stage("f", halves, ordered=ordered)))
        result = verify_schedule(fused, algorithm)
        if ordered:
            assert result.ok and result.final["A11"] == Form.symbol("A11")
        else:
            assert [e.message for e in result.errors] == [
                "`A11 = 2*A11` conflicts with `A11 = 1/2*A11` in stage f: it writes A11, which the other reads"]


UNRESTORED = "  stage p: A11 * B11 -> +C11\n  stage a: A11 = 2*A11\n  stage b: A11 = 3*A11\n  stage z: B11 -= B11\n"


def test_an_input_not_restored_is_refused_only_under_restore():
    """A11 doubled (stage a, line 7) then tripled (stage b, line 8), B11 zeroed (stage z, line 9).  Under
    `inplace, restore`: "A11 ends holding 6*A11", blamed on line 8 (the last write) with both writes noted, and
    "B11 ends holding 0", blamed on line 9.  Under `inplace` alone the same statements are no error."""
    result = check(ONE + "schedule s for n1: inplace, restore\n" + UNRESTORED)
    assert said(result) == [
        ("A11 ends holding 6*A11; `restore` needs it to end as A11",
         ("A11 is written by `A11 = 2*A11` (line 7, stage a); `A11 = 3*A11` (line 8, stage b)",)),
        ("B11 ends holding 0; `restore` needs it to end as B11", ("B11 is written by `B11 -= B11` (line 9, stage z)",)),
    ]
    assert [error.span.line for error in result.errors] == [8, 9]
    assert check(ONE + "schedule s for n1: inplace\n" + UNRESTORED).errors == ()


def _naive(m: int, n: int, doubled: set[tuple[int, int]]) -> str:
    """A <m,1,n> algorithm of m·n products, C[i,j] = A[i,1]·B[1,j], and a one-stage schedule of it that adds
    the product into C[i,j] twice over for each (i, j) in ``doubled``."""
    products, outputs, statements = [], [], []
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            a, b, c = block_name("A", i, 1), block_name("B", 1, j), block_name("C", i, j)
            products.append(f"  M{len(products) + 1} = {a} * {b}")
            outputs.append(f"  {c} = M{len(products)}")
            statements.append(f"{a} * {b} -> {'2*' if (i, j) in doubled else '+'}{c}")
    return (f"algorithm t <{m},1,{n};{m * n}>:\n" + "\n".join(products + outputs) + "\n\nschedule s for t:\n  stage p: "
            + "; ".join(statements) + "\n")


def test_c_blocks_past_the_ninth_row_and_column_are_named_with_brackets():
    """<10,1,1> with C91 and C[10,1] given their product twice: exactly those two are told, C91 by its plain
    name and the tenth row as C[10,1]; likewise C19 and C[1,10] of <1,1,10> (a block named C101 or C[9,1]
    is no buffer of the schedule)."""
    for m, n, ninth, tenth in ((10, 1, (9, 1), (10, 1)), (1, 10, (1, 9), (1, 10))):
        result = check(_naive(m, n, {ninth, tenth}))
        c9, c10 = block_name("C", *ninth), block_name("C", *tenth)
        assert (c9, c10) == (("C91", "C[10,1]") if m == 10 else ("C19", "C[1,10]"))
        a9, b9 = block_name("A", ninth[0], 1), block_name("B", 1, ninth[1])
        a10, b10 = block_name("A", tenth[0], 1), block_name("B", 1, tenth[1])
        assert [e.message.split(";")[0] for e in result.errors] == [
            f"{c9} ends holding 2*{a9}*{b9} + {c9}⁰ but must hold {a9}*{b9} + {c9}⁰",
            f"{c10} ends holding 2*{a10}*{b10} + {c10}⁰ but must hold {a10}*{b10} + {c10}⁰",
        ]


def test_a_schedule_check_is_a_frozen_value():
    """The check of a right n1 schedule has no errors and one product use; its fields cannot be reassigned
    (unfrozen, ``errors`` could be emptied after the check).  ``final`` (a dict) takes no part in equality or
    the hash: the check with ``final`` emptied equals it and hashes alike (compared, the check is unhashable)."""
    result = check(ONE + "schedule s for n1:\n  stage p: A11 * B11 -> +C11\n")
    assert result.ok and len(result.product_uses) == 1
    emptied = dataclasses.replace(result, final={})
    assert emptied == result and hash(emptied) == hash(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.errors = ()  # type: ignore[misc]


POISON = ("reads C11, which holds C's original content (C11⁰); an overwrite schedule must never read it: C may hold NaN "
          "or inf, which no later subtraction cancels")
POISON_NOTE = ("schedule s is declared `overwrite` (C = A·B); write each C block with `=` before reading it",)


def test_an_overwrite_schedule_copying_c_is_told_once():
    """Under `overwrite`, `T = C11` reads C's original content: told once.  T is then unknown, so `C11 += T` after
    `C11 = A11 * B11` is not told again (as reading T holding C11⁰), nor is C11's end value."""
    result = check(ONE + "schedule s for n1: overwrite\n  temp T: C\n  stage a: T = C11\n  stage p: C11 = A11 * B11\n"
                   "  stage q: C11 += T\n")
    assert said(result) == [(f"`T = C11` {POISON}", POISON_NOTE)]


def test_an_overwrite_schedule_accumulating_a_product_into_c_is_told_once():
    """Under `overwrite`, `A11 * B11 -> +C11` adds into C's original content: that one error (C11 is then unknown,
    so not told again as ending A11*B11 + C11⁰ where A11*B11 is due)."""
    result = check(ONE + "schedule s for n1: overwrite\n  stage p: A11 * B11 -> +C11\n")
    assert said(result) == [(f"`A11 * B11 -> +C11` {POISON}", POISON_NOTE)]


def test_a_temporary_shaped_like_a_holding_b_gives_two_write_conditions():
    """T, declared like A (M×K blocks), is set to B11 (K×N) and used as the right factor: the schedule verifies,
    on the two write conditions K/k = N/n and M/m = K/k for T (read False: a write, not a read)."""
    result = check(ONE + "schedule s for n1:\n  temp T: A\n  stage w: T = B11\n  stage p: A11 * T -> +C11\n")
    assert result.ok
    assert result.shape_conditions == (ShapeCondition("K", "N", "T", "A", "B", False),
                                       ShapeCondition("M", "K", "T", "A", "B", False))


def test_a_c_block_ending_zero_is_said_to_hold_0():
    """`C11 -= C11` alone: M1 is never computed, and C11 "ends holding 0" (not an empty value) where A11*B11 +
    C11⁰ is due, blamed on that statement (line 6)."""
    result = check(ONE + "schedule s for n1:\n  stage z: C11 -= C11\n")
    assert said(result) == [
        ("schedule s never computes M1 = (A11) * (B11)", ()),
        ("C11 ends holding 0 but must hold A11*B11 + C11⁰; misses A11*B11, C11⁰",
         ("C11 is written by `C11 -= C11` (line 6, stage z)",)),
    ]
    assert result.errors[1].span.line == 6


def test_an_overwrite_schedule_must_end_c_as_the_bare_product():
    """Under `overwrite`, `C11 = A11 * B11` then `C11 += C11`: C11 ends 2*A11*B11 where A11*B11 (no C11⁰) is
    due; blamed on the last write, `C11 = 2*C11` on line 7, not the product on line 6."""
    result = check(ONE + "schedule s for n1: overwrite\n  stage p: C11 = A11 * B11\n  stage d: C11 += C11\n")
    assert said(result) == [
        ("C11 ends holding 2*A11*B11 but must hold A11*B11; has +2*A11*B11 where it needs +A11*B11",
         ("C11 is written by `C11 = A11 * B11` (line 6, stage p); `C11 = 2*C11` (line 7, stage d)",)),
    ]
    assert result.errors[0].span.line == 7


def test_a_product_of_an_unwritten_factor_is_told_once_on_either_side():
    """`A11 * T -> +C11` with T (like B) never written, and `T * B11 -> +C11` with T (like A) never written: each
    says only "T is read before anything is written to it" (line 7); the product is skipped (no factor
    error, no missing M1: the skipped statement may have been it, and C11 is unknown)."""
    for temp, statement in (("B", "A11 * T"), ("A", "T * B11")):
        result = check(ONE + f"schedule s for n1:\n  temp T: {temp}\n  stage p: {statement} -> +C11\n")
        assert said(result) == [("T is read before anything is written to it", ())]
        assert result.errors[0].span.line == 7 and result.product_uses == ()


def test_a_factor_of_the_wrong_kind_is_refused_and_the_product_skipped():
    """T (like A) set to B11 then used as the left factor: "the left factor ... holds B11, not an A-side value";
    T (like B) set to A11 as the right factor: "... holds A11, not a B-side value"; T (like B) set to
    B11 - B11: "... holds 0".  Each is the only error (the product is skipped: no use, C11 unknown)."""
    cases = (("A", "B11", "T * B11", "the left factor of `T * B11 -> +C11` holds B11, not an A-side value"),
             ("B", "A11", "A11 * T", "the right factor of `A11 * T -> +C11` holds A11, not a B-side value"),
             ("B", "B11 - B11", "A11 * T", "the right factor of `A11 * T -> +C11` holds 0, not a B-side value"))
    for like, value, product, message in cases:
        result = check(ONE + f"schedule s for n1:\n  temp T: {like}\n  stage w: T = {value}\n  stage p: {product} -> +C11\n")
        assert said(result) == [(message, ())]
        assert result.product_uses == ()


def test_a_product_into_a_c_block_left_unknown_by_a_refused_read_is_not_told_again():
    """`C11 = U` (U never written) is told; C11 is then unknown, so `A11 * B11 -> +C11` adds into it silently
    (not "accumulates into C11 before anything is written") and C11's end is not told either.  C11 keeps the
    value it had (C11⁰): the refused statements are not simulated."""
    result = check(ONE + "schedule s for n1:\n  temp U: C\n  stage a: C11 = U\n  stage p: A11 * B11 -> +C11\n")
    assert said(result) == [("U is read before anything is written to it", ())]
    assert result.final["C11"] == Form.symbol("C11⁰")


TWINS = "algorithm tw <1,1,1;2>:\n  M1 = A11 * B11\n  M2 = (2*A11) * (4*B11)\n  C11 = 0.5*M1 + 0.0625*M2\n\n"


def test_proportional_products_are_taken_in_turn_with_their_scales():
    """tw's M1 = A11*B11 and M2 = (2*A11)*(4*B11) are proportional (M2 = 8·M1).  `A11 * B11` then
    `(4*A11) * (2*B11)` compute M1 (scale 1) then M2 (8/8 = 1); in the other order the first is M1 times 8
    and the second M2 times 1/8.  Both orders verify: each product computed once."""
    first = check(TWINS + "schedule s for tw:\n  stage p: A11 * B11 -> 0.5*C11\n  stage q: (4*A11) * (2*B11) -> 0.0625*C11\n")
    assert first.ok
    assert [(use.stage, use.product, use.scale) for use in first.product_uses] == [("p", "M1", 1), ("q", "M2", 1)]
    swapped = check(TWINS + "schedule s for tw:\n  stage q: (4*A11) * (2*B11) -> 0.0625*C11\n  stage p: A11 * B11 -> 0.5*C11\n")
    assert swapped.ok
    assert [(use.stage, use.product, use.scale) for use in swapped.product_uses] == [
        ("q", "M1", 8), ("p", "M2", Fraction(1, 8))]


def test_of_proportional_products_the_one_an_output_uses_is_taken():
    """M1 = A11*B11 is used by no output, M2 = (2*A11)*B11 by C11 = 0.5*M2: `A11 * B11 -> +C11` is M2 times 1/2
    (not M1, which left M2 "never computed"), and the schedule verifies."""
    result = check("algorithm tw <1,1,1;2>:\n  M1 = A11 * B11\n  M2 = (2*A11) * B11\n  C11 = 0.5*M2\n\n"
                   "schedule s for tw:\n  stage p: A11 * B11 -> +C11\n")
    assert result.ok
    assert [(use.product, use.scale) for use in result.product_uses] == [("M2", Fraction(1, 2))]


def test_two_statements_computing_no_product_are_not_one_product_computed_twice():
    """`A11 * B21` and `A12 * B11` are both no product of two: each is told as such (2 errors), then both M1 and
    M2 as never computed, then C11's end: 5 errors, none saying a product is computed again."""
    result = check(INNER_TWO + "schedule s for two:\n  stage p: A11 * B21 -> +C11\n  stage q: A12 * B11 -> +C11\n")
    assert [message.split(",")[0] for message, _ in said(result)] == [
        "`A11 * B21 -> +C11` multiplies (A11) * (B21)",
        "`A12 * B11 -> +C11` multiplies (A12) * (B11)",
        "schedule s never computes M1 = (A11) * (B11)",
        "schedule s never computes M2 = (A12) * (B21)",
        "C11 ends holding A11*B21 + A12*B11 + C11⁰ but must hold A11*B11 + A12*B21 + C11⁰; has +A11*B21",
    ]
    assert [(use.product, use.scale) for use in result.product_uses] == [(None, 0), (None, 0)]


def test_an_input_left_unknown_is_not_told_again_under_restore():
    """Under `inplace, restore`, A11 doubled, then `A11 += B11` mixes kinds: that one error.  A11 is then
    unknown, so its stale 2*A11 is not told again as not restored."""
    result = check(ONE + "schedule s for n1: inplace, restore\n  stage p: A11 * B11 -> +C11\n  stage a: A11 = 2*A11\n"
                   "  stage m: A11 += B11\n")
    assert said(result) == [("`A11 += B11` mixes values of different kinds: A11 holds 2*A11, B11 holds B11", ())]


def test_a_product_set_into_an_unknown_c_block_makes_it_known_again():
    """`C11 = U` (U never written) leaves C11 unknown; `C11 = A11 * B11` then sets it, so C11 is checked at the
    end: it holds A11*B11 where A11*B11 + C11⁰ is due (2 errors; the second blamed on line 8)."""
    result = check(ONE + "schedule s for n1:\n  temp U: C\n  stage a: C11 = U\n  stage p: C11 = A11 * B11\n")
    assert [message for message, _ in said(result)] == [
        "U is read before anything is written to it",
        "C11 ends holding A11*B11 but must hold A11*B11 + C11⁰; misses C11⁰",
    ]
    assert result.errors[1].span.line == 8


def test_a_product_computed_past_its_proportional_twins_is_computed_again():
    """M1 = (2*A11)*B11 (used: C11 = 0.5*M1) and M2 = A11*B11 (used by no output).  `A11 * B11 -> +C11` three
    times: M1 times 1/2 (the used twin first), then M2 (the unused twin, not M1 again), then M1 again, told
    as computed again, with where it was first computed (stage p)."""
    result = check("algorithm tw <1,1,1;2>:\n  M1 = (2*A11) * B11\n  M2 = A11 * B11\n  C11 = 0.5*M1\n\nschedule s for tw:\n"
                   "  stage p: A11 * B11 -> +C11\n  stage q: A11 * B11 -> +C11\n  stage r: A11 * B11 -> +C11\n")
    assert [(use.stage, use.product, use.scale) for use in result.product_uses] == [
        ("p", "M1", Fraction(1, 2)), ("q", "M2", 1), ("r", "M1", Fraction(1, 2))]
    assert said(result)[0] == ("`A11 * B11 -> +C11` computes M1 again",
                               ("M1 was already computed by `A11 * B11 -> +C11` in stage p",))
    assert result.errors[0].span.line == 9


def test_a_product_added_at_the_wrong_weight_is_blamed_with_its_weight():
    """`A11 * B11 -> 2*C11`: C11 ends 2*A11*B11 + C11⁰; the error notes that the statement adds M1 to C11 times
    2 where n1's C11 has it times 1, then who wrote C11."""
    result = check(ONE + "schedule s for n1:\n  stage p: A11 * B11 -> 2*C11\n")
    assert said(result) == [
        ("C11 ends holding 2*A11*B11 + C11⁰ but must hold A11*B11 + C11⁰; has +2*A11*B11 where it needs +A11*B11",
         ("`A11 * B11 -> +2*C11` adds M1 to C11 times 2; n1's C11 has it times 1",
          "C11 is written by `A11 * B11 -> +2*C11` (line 6, stage p)")),
    ]


def test_a_wrong_product_sharing_no_factor_has_no_notes():
    """`(A11 + A12) * (B11 + B21)` shares no factor with two's M1 or M2: it is told as no product of two, with
    no notes (no product to compare it with), and both products as never computed."""
    result = check(INNER_TWO + "schedule s for two:\n  stage p: (A11 + A12) * (B11 + B21) -> +C11\n")
    assert said(result)[:3] == [
        ("`(A11 + A12) * (B11 + B21) -> +C11` multiplies (A11 + A12) * (B11 + B21), which is not a product of two",
         ()),
        ("schedule s never computes M1 = (A11) * (B11)", ()),
        ("schedule s never computes M2 = (A12) * (B21)", ()),
    ]
