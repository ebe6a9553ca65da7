"""The checks that turn a parsed schedule or coefficient table into IR (frontend/check_schedule.py and
frontend/check_table.py) pinned where the rest of the suite let a changed line pass: a source-mutation
audit of both modules.

The suite checks these diagnostics mostly through whole files (msmes, Strassen, naive2x2) and a few
messages matched by their first words, so much of what the schedule checks say went unseen when
changed: the suggestion for an algorithm misspelt after `for`, where a twice-defined stage says it
was first defined, where "declared inplace but declares temporaries" points and what it lists, which
declared temporaries a schedule keeps as unused (a temporary only written included), a misspelt
property close enough to suggest under the usual cutoff but not a stricter one, a property given
twice, `accumulate, overwrite` as the only two properties, a B block (not only an A block)
overwritten without `inplace`, a product written into an input block reported twice, the count of
the other statements that overwrite inputs, a temporary named like a one- or two-index block, a
temporary declared twice, the "did you mean" over the declared temporaries, where a statement that
sets a block to its own value is reported, where a product written into an A block is reported, a
product written into a B block, and the operand advised for a name beside blocks of two operands.
Of the table checks: where a second section of one letter is reported, short rows measured against a
declared rank, rows that disagree among themselves under a declared rank, which section's line a
zero column points at, the line each output and each factor's block remembers, and the rank a table
without one declares.

Each test writes a schedule or table of a few lines inline (over a <1,2,1> algorithm of two products
and one named sum) and checks the exact message, notes and line:column.  The audit found two places
wrong, fixed with the tests that showed them: a stage defined three times was told it was first defined
at its second definition, and a product written into its own B factor was reported at the factor it
reads, not at the target; and "1 more statements", "V has 1 rows" now say one in the singular.
"""

from __future__ import annotations

import pytest

from bilinear.diagnostics import BilinearError
from bilinear.frontend import program_from_text

# C11 = A11·B11 + A12·B21 in two products, with a named sum S (lines 1-5; a schedule starts on line 6)
PAIR = "algorithm pair <1,2,1;2>:\n  S = A11 + A12\n  M1 = A11 * B11\n  M2 = A12 * B21\n  C11 = M1 + M2\n"
PRODUCTS = "A11 * B11 -> +C11;  A12 * B21 -> +C11"
WITH_T = "T = A11;  T * B11 -> +C11;  A12 * B21 -> +C11"  # the products, the first through a temporary T
INPLACE_ADVICE = "add `inplace` (and `restore`, if the inputs must come back) to the schedule's properties"
NOT_A_BUFFER = "a schedule reads and writes blocks and temporaries"


def _errors(text: str) -> list[tuple[int, int, str, tuple[str, ...]]]:
    """Every diagnostic ``text`` raises, as (line, column, message, notes)."""
    diagnostics = pytest.raises(BilinearError, program_from_text, text, "t.bl").value.diagnostics
    return [(d.span.line, d.span.column, d.message, d.notes) for d in diagnostics]


def _schedule(body: str):
    """The one schedule of PAIR followed by ``body``."""
    (schedule,) = program_from_text(PAIR + body, "t.bl").schedules
    return schedule


# ---- check_schedule.py: the algorithm a schedule names ------------------------------------------------


def test_a_misspelt_algorithm_is_suggested():
    """`for pairs` said only "define it in this file or `use` the file that does" when the suggestion
    over the defined algorithms was dropped."""
    assert _errors(PAIR + f"schedule s for pairs:\n  stage p: {PRODUCTS}\n") == [
        (6, 1, "schedule s is for pairs, which is not defined", ("did you mean pair?",))]


def test_a_schedule_for_itself_is_reported_at_the_schedule_with_a_suggestion():
    """The schedule's own name after `for`: the error at its header, with the algorithms close to it."""
    assert _errors(PAIR + f"schedule pai for pai:\n  stage p: {PRODUCTS}\n") == [
        (6, 1, "schedule pai is for itself; a schedule is for an algorithm: name the one it orders",
         ("did you mean pair?",))]


def test_an_algorithm_nothing_is_close_to_gets_the_advice_to_define_it():
    """The other branch of the same note: nothing close, so the advice to define or `use` it."""
    assert _errors(PAIR + f"schedule s for zzz:\n  stage p: {PRODUCTS}\n") == [
        (6, 1, "schedule s is for zzz, which is not defined", ("define it in this file or `use` the file that does",))]


# ---- stages -------------------------------------------------------------------------------------------


def test_a_stage_defined_twice_points_at_the_second_and_names_the_first():
    """The note named the second definition itself ("first defined at t.bl:8:3") when it was taken
    from the stage being reported rather than from the one seen before."""
    text = PAIR + f"schedule s for pair:\n  stage p: {PRODUCTS}\n  stage p: C11 += 0*C11\n"
    assert _errors(text)[0] == (8, 3, "stage p is defined twice", ("first defined at t.bl:7:3",))


def test_a_stage_defined_three_times_names_its_first_definition_each_time():
    """check_schedule.build_schedule had overwritten ``stage_names[stage.name]`` on every stage, so the
    third `stage p` was told it was "first defined at" the second one."""
    text = PAIR + (f"schedule s for pair:\n  stage p: {PRODUCTS}\n  stage p: A11 * B11 -> +C11\n"
                   "  stage p: A12 * B21 -> +C11\n")
    assert [(line, notes) for line, _, message, notes in _errors(text) if message == "stage p is defined twice"] == [
        (8, ("first defined at t.bl:7:3",)), (9, ("first defined at t.bl:7:3",))]


# ---- properties ---------------------------------------------------------------------------------------


def test_a_property_misspelt_by_three_letters_is_still_suggested():
    """`inpl` is 0.73 like `inplace`: a stricter cutoff (0.9) dropped the suggestion, and with it the
    assumption that the rest is checked as inplace (the A11 update then added a second error)."""
    text = PAIR + f"schedule s for pair: inpl\n  stage p: A11 += A12;  {PRODUCTS}\n"
    ((line, column, message, notes),) = _errors(text)
    assert (line, column, message) == (6, 22, "unknown schedule property 'inpl'")
    assert notes[0] == "did you mean inplace? (the rest of s is checked as if it said inplace)"
    assert notes[1].startswith("known properties: inplace (")


def test_a_property_given_twice_is_reported_at_its_second_mention():
    text = PAIR + f"schedule s for pair: restore, restore\n  stage p: {PRODUCTS}\n"
    assert _errors(text) == [(6, 31, "property restore is given twice", ())]


def test_accumulate_and_overwrite_alone_are_refused():
    """With exactly these two properties: a strict subset test (`<`) let them through to the IR."""
    text = PAIR + f"schedule s for pair: accumulate, overwrite\n  stage p: {PRODUCTS}\n"
    assert _errors(text) == [(6, 1, "schedule s cannot both accumulate into C and overwrite it", ())]


def test_a_correct_schedule_keeps_its_properties():
    """The properties that reach the Schedule are those written (none assumed, none dropped)."""
    schedule = _schedule("schedule s for pair: overwrite, restore\n  stage p: C11 = A11 * B11;  A12 * B21 -> +C11\n")
    assert schedule.properties == frozenset({"overwrite", "restore"})


# ---- inputs overwritten without inplace ---------------------------------------------------------------


def test_a_b_block_overwritten_without_inplace_is_refused():
    """Only A blocks had been looked for."""
    text = PAIR + f"schedule s for pair:\n  stage p: B21 += B11;  {PRODUCTS}\n"
    assert _errors(text) == [(7, 12, "the statement overwrites input block B21, but schedule s is not declared inplace",
                              (INPLACE_ADVICE,))]


def test_two_statements_overwriting_inputs_count_one_more():
    """The note counts the other statements: "1 more" for two (with `more > 1` it was left out)."""
    text = PAIR + f"schedule s for pair:\n  stage p: A11 += A12;  {PRODUCTS}\n  stage q: B11 = 2*B11\n"
    ((line, column, message, notes),) = _errors(text)
    assert (line, column) == (7, 12)
    assert message == "the statement overwrites input block A11, but schedule s is not declared inplace"
    assert notes[1:] == ("1 more statement of s overwrites A or B blocks",)


def test_three_statements_overwriting_inputs_count_two_more():
    text = PAIR + f"schedule s for pair:\n  stage p: A11 += A12;  {PRODUCTS}\n  stage q: B11 = 2*B11;  A12 -= A11\n"
    assert _errors(text)[0][3][1:] == ("2 more statements of s overwrite A or B blocks",)


def test_a_product_written_into_an_a_block_is_one_error():
    """A product statement's A target is the product check's error alone: taken also as an update of
    an input, it added "the statement overwrites input block A12" beside it."""
    text = PAIR + "schedule s for pair:\n  stage p: A11 * B11 -> +A12\n"
    assert _errors(text) == [(7, 26, "a product cannot be written into A12: targets are C blocks or temporaries", ())]


def test_a_product_written_into_a_b_block_is_refused():
    """Only A targets had been refused."""
    text = PAIR + "schedule s for pair: inplace\n  stage p: A12 * B21 -> +B11;  A11 * B11 -> +C11\n"
    assert [(line, message) for line, _, message, _ in _errors(text)] == [
        (7, "a product cannot be written into B11: targets are C blocks or temporaries")]


def test_a_product_written_into_its_own_factor_points_at_the_target():
    """_name_span looks through the left factor, the right factor, then the targets, so for
    `A11 * B11 -> +B11` it had found the factor B11 first (the note in _check_inputs_kept says why
    pointing at a read block misleads)."""
    text = PAIR + "schedule s for pair:\n  stage p: A11 * B11 -> +B11\n"
    assert _errors(text) == [(7, 26, "a product cannot be written into B11: targets are C blocks or temporaries", ())]


# ---- temporaries --------------------------------------------------------------------------------------


def test_temporaries_under_inplace_are_listed_at_the_first():
    """The error points at the first temporary (not the schedule) and lists every one."""
    text = PAIR + f"schedule s for pair: inplace\n  temp T: A\n  temp U: A\n  stage p: {PRODUCTS}\n"
    assert _errors(text) == [(7, 8, "schedule s is declared inplace but declares temporaries (T, U)",
                              ("inplace means no workspace: overwrite A and B blocks instead",))]


def test_unused_temporaries_are_set_apart():
    """A temporary no statement reads or writes is in ``unused``, not in ``temporaries``."""
    schedule = _schedule(f"schedule s for pair:\n  temp T: A\n  temp U: B\n  stage p: {WITH_T}\n")
    assert [t.name for t in schedule.temporaries] == ["T"]
    assert [t.name for t in schedule.unused] == ["U"]


def test_a_temporary_only_written_is_still_allocated():
    """Written and never read, T is still a temporary of the schedule (a statement writes it): taken
    as used only where read, it went to ``unused``, which none allocates."""
    schedule = _schedule(f"schedule s for pair:\n  temp T: C\n  stage p: T = A11 * B11;  {PRODUCTS}\n")
    assert ([t.name for t in schedule.temporaries], schedule.unused) == (["T"], ())


@pytest.mark.parametrize("name", ["A11", "B2"])
def test_a_temporary_named_like_a_block_is_refused(name):
    """Two-index (A11) and one-index (B2) block names each: with `and` for `or`, neither was refused."""
    text = PAIR + f"schedule s for pair:\n  temp {name}: A\n  stage p: {PRODUCTS}\n"
    assert _errors(text) == [(7, 8, f"{name} is a block name; choose another name for the temporary", ())]


def test_a_temporary_declared_twice_is_reported_at_the_second():
    text = PAIR + f"schedule s for pair:\n  temp T: A\n  temp T: B\n  stage p: {WITH_T}\n"
    assert _errors(text) == [(8, 8, "temporary T is declared twice", ())]


# ---- the names a statement reads and writes -----------------------------------------------------------


def test_a_named_sum_read_as_a_buffer_is_spelt_out():
    text = PAIR + "schedule s for pair:\n  stage p: S * B11 -> +C11\n"
    assert _errors(text) == [(7, 12, "S is a named sum of pair, not a buffer: " + NOT_A_BUFFER,
                              ("write the blocks it sums instead: A11 + A12",))]


def test_a_product_read_as_a_buffer_names_its_factors_in_order():
    text = PAIR + "schedule s for pair:\n  stage p: C11 += M2\n"
    assert _errors(text) == [(7, 19, "M2 is a product of pair, not a buffer: " + NOT_A_BUFFER,
                              ("compute it with a product statement of its factors: `(A12) * (B21) -> ...`",))]


def test_a_keyword_read_as_a_buffer_says_it_is_a_keyword():
    """Not "declare it: temp for: C", which would not parse."""
    text = PAIR + "schedule s for pair:\n  stage p: C11 += for\n"
    assert _errors(text) == [(7, 19, "for is neither a block nor a declared temporary",
                              ("for is a keyword of the language: a temporary needs another name",))]


def test_a_misspelt_temporary_is_suggested():
    text = PAIR + "schedule s for pair:\n  temp Tmp: C\n  stage p: Tmp = A11 * B11;  C11 += Tmq\n"
    assert _errors(text) == [(8, 37, "Tmq is neither a block nor a declared temporary", ("did you mean Tmp?",))]


def test_an_undeclared_name_beside_blocks_of_two_operands_is_shaped_like_a():
    """Blocks of C and B beside it say nothing: the advice falls back to A (it said B, or whichever
    side a set gave up first, neither of which is A here)."""
    text = PAIR + "schedule s for pair:\n  stage p: X = C11 + B21\n"
    assert _errors(text) == [(7, 12, "X is neither a block nor a declared temporary", ("declare it: temp X: A",))]


def test_an_update_that_changes_nothing_is_refused_at_the_statement():
    """`C11 += C11 - C11` sets C11 to itself; the error points at the whole statement."""
    text = PAIR + f"schedule s for pair:\n  stage p: {PRODUCTS}\n  stage q: C11 += C11 - C11\n"
    assert _errors(text) == [(8, 12, "the statement changes nothing: it sets C11 to its own value", ())]


# ---- check_table.py ------------------------------------------------------------------------------------

TABLE = "table t <1,2,1;2>:\n  U: 1 0\n     0 1\n  V: 1 0\n     0 1\n  W: 1 1\n"


def test_a_table_section_given_twice_is_reported_at_the_second():
    text = TABLE.replace("  W: 1 1\n", "  U: 1 1\n     1 1\n")
    assert _errors(text) == [(6, 3, "table t has two U sections", ()), (1, 1, "table t has no W section", ())]


def test_short_rows_are_measured_against_the_declared_rank():
    """One row agrees with rank 3, so the rank is not the error: every other row is, at its own line."""
    text = TABLE.replace("<1,2,1;2>", "<1,2,1;3>").replace("U: 1 0\n", "U: 1 0 1\n")
    assert _errors(text) == [(line, 6, "this row has 2 entries; table t declares rank 3", ()) for line in (3, 4, 5, 6)]


def test_rows_that_disagree_among_themselves_are_each_measured_against_the_rank():
    """Rows of 2 and 4 entries under rank 3: not "declares rank 3 but has 2 columns" (that is for
    rows that all agree), but every row at its own line."""
    text = TABLE.replace("<1,2,1;2>", "<1,2,1;3>").replace("     0 1\n  V", "     0 1 0 1\n  V")
    assert _errors(text) == [(2, 6, "this row has 2 entries; table t declares rank 3", ()),
                             (3, 6, "this row has 4 entries; table t declares rank 3", ())] + [
        (line, 6, "this row has 2 entries; table t declares rank 3", ()) for line in (4, 5, 6)]


def test_a_wrong_rank_agreed_on_by_every_row_is_one_error():
    text = TABLE.replace("<1,2,1;2>", "<1,2,1;3>")
    assert _errors(text) == [(1, 1, "table t declares rank 3 but has 2 columns", ())]


def test_a_wrong_rank_over_one_column_says_column():
    """<1,1,1;2> over rows of one entry said "declares rank 2 but has 1 columns"."""
    text = "table t <1,1,1;2>:\n  U: 1\n  V: 1\n  W: 1\n"
    assert _errors(text) == [(1, 1, "table t declares rank 2 but has 1 column", ())]


def test_without_a_rank_the_odd_row_out_is_the_error():
    text = TABLE.replace("<1,2,1;2>", "<1,2,1>").replace("V: 1 0\n     0 1\n", "V: 1 0\n     0 1 0\n")
    assert _errors(text) == [(5, 6, "this row has 3 entries; the other rows have 2", ())]


def test_a_section_with_too_few_rows_is_reported_at_its_letter():
    text = TABLE.replace("V: 1 0\n     0 1\n", "V: 1 0\n")
    assert _errors(text) == [(4, 3, "V has 1 row; ⟨1,2,1⟩ needs 2, one per B block (B11..B21, row-major)", ())]


@pytest.mark.parametrize("letter, change, line", [("U", ("     0 1\n  V", "     0 0\n  V"), 2),
                                                   ("V", ("     0 1\n  W", "     1 0\n  W"), 4)])
def test_a_zero_column_points_at_its_section(letter, change, line):
    text = TABLE.replace(*change)
    assert _errors(text) == [(line, 3, f"column 2 of {letter} is all zero: product M2 has a zero factor", ())]


def test_each_output_of_a_table_remembers_its_w_row():
    """The outputs of <1,2,2> (C11, C12) point at their own W rows (lines 9 and 10), not at the table."""
    text = ("table t <1,2,2;4>:\n  U: 1 0 1 0\n     0 1 0 1\n  V: 1 0 0 0\n     0 0 1 0\n     0 1 0 0\n     0 0 0 1\n"
            "  W: 1 1 0 0\n     0 0 1 1\n")
    (algorithm,) = program_from_text(text, "t.bl").algorithms
    assert [(output.block, output.span.line) for output in algorithm.outputs] == [("C11", 8), ("C12", 9)]
    assert [(str(p.left), str(p.right)) for p in algorithm.products][:2] == [("A11", "B11"), ("A12", "B21")]
    # each block of a factor remembers its own row of U or V (a suggestion to change an entry names that line)
    assert [algorithm.products[1].left.span_of("A12").line, algorithm.products[2].right.span_of("B12").line] == [3, 5]


def test_a_table_without_a_rank_declares_none():
    """The rank counted from the rows is the algorithm's rank, not a declared one."""
    (algorithm,) = program_from_text(TABLE.replace("<1,2,1;2>", "<1,2,1>"), "t.bl").algorithms
    assert (algorithm.declared_rank, algorithm.rank) == (None, 2)
    (declared,) = program_from_text(TABLE, "t.bl").algorithms
    assert declared.declared_rank == 2
