"""A coefficient table's row, read from the one token the grammar makes of it (ROW in grammar.lark).

Lark built a tree node for every entry, and a table is mostly entries: the ⟨16,16,16;2401⟩ table of
strassen⁴, 1.9 million of them, took over a minute to load.  The row is read here as the grammar
read it: entries ``[sign] INT ["/" INT]`` with blanks allowed between their parts, so ``1-1`` is two
entries and ``- 1 / 2`` one; a malformed row is reported where and as lark reported it.
"""

from __future__ import annotations

import re
from fractions import Fraction

from lark import Token

from ..diagnostics import BilinearError, Diagnostic
from ..ir import Span
from .formats.common import MAX_DIGITS, TOO_MANY_DIGITS
from .syntax_errors import expected_words

_ENTRY = re.compile(r"[+-]?[0-9]+(?:/[0-9]+)?")
_PIECE = re.compile(r"[0-9]+|[^ \t\f]")  # a run of digits, or one other character
_AT_AN_ENTRY = expected_words({"ROW", "_NL"})  # where an entry may begin, or the row end
_A_WHOLE_NUMBER = expected_words({"INT"})  # after a sign or a '/'


def row_values(row: Token, path: str, seen: dict[str, Fraction]) -> tuple[Fraction, ...]:
    """The row's entries.  Rows of blank-separated entries are split and each distinct entry is read
    once (`seen`, kept by the caller for its file); any other row is scanned piece by piece.

    Raises:
        BilinearError: an entry that is malformed, divides by zero or has too many digits.
    """
    values = []
    for text in row.split():
        value = seen.get(text)
        if value is None:
            if (value := _plain_entry(text)) is None:
                return _scanned(row, path)
            seen[text] = value
        values.append(value)
    return tuple(values)


def _plain_entry(text: str) -> Fraction | None:
    """`-3` or `1/2` as a Fraction; None for anything that needs the scanner's reading or its error."""
    if not _ENTRY.fullmatch(text):
        return None
    if len(text) > MAX_DIGITS:  # the scanner says which number is too long
        return None
    numerator, _, denominator = text.partition("/")
    if denominator and int(denominator) == 0:  # the scanner places the error
        return None
    return Fraction(int(numerator), int(denominator) if denominator else 1)


def _scanned(row: Token, path: str) -> tuple[Fraction, ...]:
    pieces = [(match.start(), match.group()) for match in _PIECE.finditer(row)]
    values, index = [], 0

    def expect_digits(expected: str) -> str:
        if index == len(pieces):
            _fail(row, path, "unexpected end of line; expected " + expected, len(row), 1)
        offset, piece = pieces[index]
        if not piece.isdigit():
            _fail(row, path, f"unexpected '{piece}'; expected {expected}", offset, len(piece))
        return piece

    while index < len(pieces):
        start, sign = pieces[index][0], pieces[index][1]
        if sign in "+-":
            index += 1
        numerator = expect_digits(_A_WHOLE_NUMBER if sign in "+-" else _AT_AN_ENTRY)
        index += 1
        denominator = "1"
        if index < len(pieces) and pieces[index][1] == "/":
            index += 1
            denominator = expect_digits(_A_WHOLE_NUMBER)
            index += 1
        end = pieces[index - 1][0] + len(pieces[index - 1][1])
        values.append(_entry(row, path, sign == "-", numerator, denominator, start, end))
    return tuple(values)


def _entry(row: Token, path: str, negative: bool, numerator: str, denominator: str, start: int, end: int) -> Fraction:
    if max(len(numerator), len(denominator)) > MAX_DIGITS:
        _fail(row, path, TOO_MANY_DIGITS, start, end - start)
    if int(denominator) == 0:
        _fail(row, path, "division by zero in a coefficient", start, end - start)
    value = Fraction(int(numerator), int(denominator))
    return -value if negative else value


def _fail(row: Token, path: str, message: str, offset: int, width: int) -> None:
    column = row.column + offset  # a row is one line: its columns are the token's plus the offset
    raise BilinearError(Diagnostic(message, Span(path, row.line, column, row.line, column + width)))
