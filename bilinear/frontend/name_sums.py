"""A sum of names read from the one token the fast parser makes of it (NAME_SUM in frontend.grammar),
and the names every token holds, checked for length.

``M1 + M2 - B[1,3]``: each term a sign (none before the first: +) and a name or a block, as LARK reads
``expr "+" term`` and ``"-" factor`` over refs; the token is one line, so each term's span is the token's
line and its columns plus the term's offset.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction

from lark import Token

from ..diagnostics import BilinearError, Diagnostic
from ..ir import Span
from ..ir.names import LONGEST_NAME
from .syntax_errors import QUOTED_TOKEN

# a sign, then a block `B[1, 3]` (name, row, column) or a name (NAME_SUM took nothing else)
_TERM = re.compile(r"([-+]?)[\t \f]*(?:([A-Za-z_][A-Za-z0-9_]*)\[[\t \f]*([0-9]+)[\t \f]*,[\t \f]*([0-9]+)[\t \f]*\]"
                   r"|([A-Za-z_][A-Za-z0-9_]*))")
_PLUS, _MINUS = Fraction(1), Fraction(-1)


def terms(token: Token) -> Iterator[tuple[Fraction, str, int | None, int | None, int, int]]:
    """(coefficient ±1, name, block row or None, block column or None, first column, column after it) of each term."""
    column = token.column
    for term in _TERM.finditer(token):
        sign, block, row, col, name = term.groups()
        coefficient = _MINUS if sign == "-" else _PLUS
        if block:
            yield coefficient, block, int(row), int(col), column + term.start(2), column + term.end()
        else:
            yield coefficient, name, None, None, column + term.start(5), column + term.end()


def refuse_long_names(tree, path: str) -> None:
    """Refuse the first name (in file order) longer than :data:`LONGEST_NAME`, quoting its beginning.

    Raises:
        BilinearError: located at that name (a block's with its indices).
    """
    # iter_subtrees_topdown, not scan_values, which recurses: a sum of a few hundred terms is as deep
    # (RecursionError); nor iter_subtrees, which orders the nodes for 7x the time
    names = (name for subtree in tree.iter_subtrees_topdown() for child in subtree.children
             if isinstance(child, Token) for name in _names(child))
    long = [name for name in names if len(name[3]) > LONGEST_NAME]
    if long:
        line, column, end, name = min(long)
        raise BilinearError(Diagnostic(f"a name of {len(name)} characters, where a name has at most "
                                       f"{LONGEST_NAME}: '{name[:QUOTED_TOKEN]}…'", Span(path, line, column, line, end)))


def _names(token: Token) -> Iterator[tuple[int, int, int, str]]:
    """(line, first column, column after it, name) of each name a token holds: a NAME, a BLOCK's
    (`B[1,2]`: B, located at the whole block) and a NAME_SUM's terms'."""
    if token.type == "NAME":
        yield token.line, token.column, token.end_column, str(token)
    elif token.type == "BLOCK":
        yield token.line, token.column, token.end_column, token[: token.find("[")]
    elif token.type == "NAME_SUM":
        yield from ((token.line, start, end, name) for _, name, _, _, start, end in terms(token))
