"""A table's rows (frontend/table_rows.py) and composed schemes (compose.py) pinned where the rest of the
suite let a changed line pass: a source-mutation audit of both modules.

The suite reads rows through lark's old messages, a hypothesis test of well-formed rows and numbers of
5000 digits, so the edges went unseen: a plain entry one digit past the limit (with the limit moved by
one, Python's int refused it with a ValueError), a scanned numerator of exactly the limit, and 0/0
(which reached Fraction's ZeroDivisionError when the check was changed).  It composes strassen, square, as the first factor of its one Kronecker product and checks
no default name, so a swapped outer dimension, the default names, the declared rank, the refusals of a
bad order or name, an unused product kept by permute, and the note for two unused products or a first
one went unseen.  Each test checks the exact value, or message and line:column; the audit found no bug
in either module.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from conftest import ROOT
from helpers import schemes as S

import bilinear
from bilinear.compose import kronecker, nested, permute, unused_note, unused_products
from bilinear.diagnostics import BilinearError
from bilinear.frontend.formats.common import MAX_DIGITS, TOO_MANY_DIGITS
from bilinear.frontend.loader import find_scheme, program_from_text
from bilinear.frontend.parser import parse_text
from bilinear.verify import report_algorithm

STRASSEN = (ROOT / "algorithms" / "strassen.bl").read_text()
LAST = "  M7 = (A12 - A22) * (B21 + B22)\n"
S9 = STRASSEN.replace("<2,2,2;7>", "<2,2,2;9>").replace(LAST, LAST + "  M8 = A11 * B11\n  M9 = A12 * B21\n")
BAD_NAME = ("name must be an identifier in .bl (an ASCII letter or _, then letters, digits or _; not a keyword "
            "or a block name like A11), not '2bad'")


def _table(u_row: str) -> str:
    """A <1,1,1;1> table whose U row is ``u_row`` (line 2, the row from column 6)."""
    return f"table t <1,1,1;1>:\n  U: {u_row}\n  V: 1\n  W: 1\n"


def _row(u_row: str) -> list[Fraction]:
    """The entries ``u_row`` reads as."""
    (_uses, (table,)) = parse_text(_table(u_row), "t.bl")
    (letter, ((numbers, _span),), _section_span) = table.sections[0]
    assert letter == "U"
    return list(numbers)


def _refusal(u_row: str) -> list[tuple[str, int, int, int]]:
    """(message, line, column, end column) of each diagnostic ``u_row`` is refused with."""
    with pytest.raises(BilinearError) as caught:
        program_from_text(_table(u_row), "t.bl")
    return [(d.message, d.span.line, d.span.column, d.span.end_column) for d in caught.value.diagnostics]


def _shipped(name: str):
    """The shipped algorithm ``name``."""
    return bilinear.load(find_scheme(name)).algorithm(name)


# ---- table_rows.py -----------------------------------------------------------------------------------


def test_the_limit_is_python_s():
    """The tests below are written for 4300 digits, Python's default."""
    assert (MAX_DIGITS, TOO_MANY_DIGITS) == (4300, "a number of more than 4300 digits cannot be read")


def test_a_plain_entry_one_digit_past_the_limit_is_refused_where_it_stands():
    """`len(text) > MAX_DIGITS + 1` read 4301 digits with int(), whose ValueError escaped unreported."""
    assert _refusal("1" * 4301) == [(TOO_MANY_DIGITS, 2, 6, 6 + 4301)]


def test_a_scanned_numerator_of_exactly_the_limit_is_read():
    """`>=` for `>` on the scanned entry's digits refused a number of 4300 digits after a spaced sign."""
    assert _row("- " + "7" * 4300 + " 1") == [-Fraction(int("7" * 4300)), 1]
    assert _row("7" * 4300) == [Fraction(int("7" * 4300))]


def test_zero_over_zero_is_a_division_by_zero_at_its_place():
    """Only a nonzero numerator over 0 was tested: `and int(numerator)` let 0/0 reach Fraction."""
    assert _refusal("0/0") == [("division by zero in a coefficient", 2, 6, 9)]
    assert _refusal("1 -0 / 00") == [("division by zero in a coefficient", 2, 8, 15)]


def test_rows_with_signs_and_blanks_read_as_their_entries():
    """A spaced sign sends a row to the scanner; plain rows repeat entries read once."""
    assert _row("+ 1 -2/4 3-4 +5") == [1, Fraction(-1, 2), 3, -4, 5]
    assert _row("-1 -1 2/6 2/6") == [-1, -1, Fraction(1, 3), Fraction(1, 3)]


# ---- compose.py --------------------------------------------------------------------------------------


def test_a_kronecker_product_with_a_rectangular_first_factor_verifies_and_is_named_for_both():
    """The suite's one product had strassen, square, outside: outer.k for outer.m went unseen."""
    first, second = _shipped("grey234"), _shipped("strassen")
    result = kronecker(first, second)
    assert (result.name, result.shape.m, result.shape.k, result.shape.n, result.rank) == (
        "grey234_x_strassen", 4, 6, 8, 140)
    assert result.declared_rank == 140 and report_algorithm(result).ok
    expected = S.kron(S.from_algorithm(first), S.from_algorithm(second))
    got = S.from_algorithm(result)
    assert all(np.array_equal(x, y) for a, b in zip((got.U, got.V, got.W), (expected.U, expected.V, expected.W))
               for x, y in zip(a, b))


def test_a_product_and_a_permutation_are_named_as_asked_or_for_their_sources():
    """Default names `FIRST_x_SECOND` and `NAME_ORDER`, a name= kept, products M1..MR in order."""
    strassen, grey = _shipped("strassen"), _shipped("grey234")
    assert kronecker(strassen, grey, name="sg").name == "sg"
    permuted = permute(grey, "nkm")
    assert (permuted.name, permuted.declared_rank) == ("grey234_nkm", 20)
    assert [p.name for p in permuted.products] == [f"M{r}" for r in range(1, 21)]
    assert permute(grey, "kmn", name="g").name == "g"


def test_a_bad_order_or_name_is_refused_in_words():
    """The refusals of permute and kronecker: the orders listed, the name checked in each."""
    strassen = _shipped("strassen")
    with pytest.raises(ValueError) as caught:
        permute(strassen, "xyz")
    assert str(caught.value) == "the target order must be one of mkn, knm, nmk, nkm, mnk, kmn, not 'xyz'"
    for call in (lambda: permute(strassen, "nkm", name="2bad"), lambda: kronecker(strassen, strassen, name="2bad")):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == BAD_NAME


def test_unused_products_are_named_in_one_note_and_left_out():
    """The suite's unused product was one, and last: `are` for two, and a first one unused, went unchecked."""
    algorithm = program_from_text(S9, "s9.bl").main
    assert unused_products(algorithm) == ["M8", "M9"]
    assert unused_note(algorithm, "left out") == "note: M8, M9, which no output uses, are left out"
    assert unused_note(_shipped("strassen"), "left out") is None
    first = STRASSEN.replace("<2,2,2;7>", "<2,2,2;8>").replace("  M1 =", "  M8 = A11 * B11\n  M1 =")
    assert unused_note(program_from_text(first, "s8.bl").main, "dropped") == (  # the first product unused
        "note: M8, which no output uses, is dropped")
    for order in ("mkn", "kmn"):
        assert permute(algorithm, order).rank == 7
    assert kronecker(algorithm, algorithm).rank == 49 and report_algorithm(kronecker(algorithm, algorithm)).ok


def test_a_nested_block_counts_whole_outer_blocks_of_the_inner_grid():
    """Block (1,2) of outer block (2,3) in a grid of 3 rows and 4 columns is (2-1)*3+1, (3-1)*4+2."""
    assert nested((2, 3), (1, 2), (3, 4)) == (4, 10)
