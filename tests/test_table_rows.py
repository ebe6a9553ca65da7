"""A coefficient table's rows: one token each, read in Python (bilinear/frontend/table_rows.py).

The messages below are lark's, as it gave them when every entry was its own rule; reading the
row in Python must keep them, with their places."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bilinear.diagnostics import BilinearError
from bilinear.frontend.loader import program_from_text
from bilinear.frontend.parser import parse_text


def _table(u_row: str, rank: int = 1) -> str:
    return f"table t <1,1,1;{rank}>:\n  U: {u_row}\n  V: {' '.join(['1'] * rank)}\n  W: {' '.join(['1'] * rank)}\n"


@pytest.mark.parametrize("row, message, column, end", [
    ("1 x", "unexpected 'x'; expected '+', '-', '/', a whole number or the end of the line", 8, 9),
    ("0.5", "unexpected '.'; expected '+', '-', '/', a whole number or the end of the line", 7, 8),
    ("1 -", "unexpected end of line; expected a whole number", 9, 10),
    ("1 / / 2", "unexpected '/'; expected a whole number", 10, 11),
    ("/2", "unexpected '/'; expected '+', '-', a whole number or the end of the line", 6, 7),
    ("1/2/3", "unexpected '/'; expected '+', '-', a whole number or the end of the line", 9, 10),
    ("1/0", "division by zero in a coefficient", 6, 9),
    ("- 3 / 00", "division by zero in a coefficient", 6, 14),
    ("+ +1", "unexpected '+'; expected a whole number", 8, 9),
    ("1/", "unexpected end of line; expected a whole number", 8, 9),
    ("1 - x", "unexpected 'x'; expected a whole number", 10, 11),
    ("1 / x", "unexpected 'x'; expected a whole number", 10, 11),
    ("1/2 x", "unexpected 'x'; expected '+', '-', a whole number or the end of the line", 10, 11),
    ("1/2 3 x", "unexpected 'x'; expected '+', '-', '/', a whole number or the end of the line", 12, 13),
    ("1 /  2 x", "unexpected 'x'; expected '+', '-', a whole number or the end of the line", 13, 14),
    ("\u22121", "unexpected '−' U+2212 (MINUS SIGN); expected '+', '-', a whole number or the end of the line", 6, 7),
    ("1" * 5000, "a number of more than 4300 digits cannot be read", 6, 5006),
    ("1 1/" + "1" * 5000, "a number of more than 4300 digits cannot be read", 8, 5010),
])
def test_a_malformed_row_is_reported_where_and_as_the_grammar_reported_it(row, message, column, end):
    with pytest.raises(BilinearError) as caught:
        program_from_text(_table(row), "t.bl")
    assert [(d.message, d.span.line, d.span.column, d.span.end_column) for d in caught.value.diagnostics] == [
        (message, 2, column, end)]


def test_after_a_table_the_next_definition_or_a_row_is_expected():
    with pytest.raises(BilinearError) as caught:
        program_from_text(_table("1") + "M1 = 2\n", "t.bl")
    assert [d.message for d in caught.value.diagnostics] == [
        "unexpected 'M1'; expected '+', '-', 'algorithm', 'schedule', 'table', 'use', U:, V: or W:, "
        "a whole number or the end of the file"]


def test_a_section_without_rows_expects_an_entry():
    with pytest.raises(BilinearError) as caught:
        program_from_text("table z <1,1,1;1>:\n  U: 1\n  V: 1\n  W:   # no row\n\n", "t.bl")
    assert [d.message for d in caught.value.diagnostics] == ["unexpected end of file; expected '+', '-' or a whole number"]


_BLANKS = st.text(alphabet=" \t\f", max_size=2)
_ENTRY = st.tuples(st.sampled_from(["", "+", "-"]), st.integers(0, 10**30), st.none() | st.integers(1, 10**30))


@st.composite
def _rows(draw):
    """Entries with blanks anywhere the grammar allows them: inside an entry (`- 1 / 2`), and
    between entries, where they may be left out before a sign (`1-1` is two entries)."""
    entries = draw(st.lists(_ENTRY, min_size=1, max_size=12))
    text, values = draw(_BLANKS), []
    for index, (sign, numerator, denominator) in enumerate(entries):
        if index:
            text += draw(_BLANKS) if sign else " " + draw(_BLANKS)
        text += sign + draw(_BLANKS) + str(numerator)
        if denominator is not None:
            text += draw(_BLANKS) + "/" + draw(_BLANKS) + str(denominator)
        value = Fraction(numerator, denominator or 1)
        values.append(-value if sign == "-" else value)
    return text + draw(_BLANKS), values


@settings(max_examples=200, deadline=None)
@given(_rows())
def test_every_row_the_grammar_allows_reads_as_its_entries(row):
    text, values = row
    (_uses, (table,)) = parse_text(_table(text, len(values)), "t.bl")
    (letter, ((numbers, _span),), _section_span) = table.sections[0]
    assert (letter, list(numbers)) == ("U", values)


def test_a_table_of_two_million_entries_loads_in_seconds():
    """strassen⁴'s ⟨16,16,16;2401⟩ as a table (1.9 million entries) took over a minute to load:
    lark built a tree node per entry.  About 2 s once a row is one token."""
    rank, rows = 2401, 256
    row = " ".join("1" if c % 3 else "-1" for c in range(rank)) + "\n"
    text = f"table big <16,16,16;{rank}>:\n" + "".join(f"  {letter}:\n" + row * rows for letter in "UVW")
    start = time.perf_counter()
    program = program_from_text(text, "big.bl")
    assert len(program.main.products) == rank
    assert time.perf_counter() - start < 20
