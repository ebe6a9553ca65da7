"""Mathematica list files ``.m`` (Kauers, flips, Perminov): ``{{A_1, B_1, C_1}, {A_2, B_2, C_2}, ...}``.

Each product r is three matrices of rational numbers (``1``, ``-2/3``):
A_r is m×k (the A side), B_r is k×n (the B side) and C_r is n×m — the trace
convention, so entry (j, i) of C_r is product r's coefficient in C_ij.  The
list is a subset of Python's expression grammar once braces are brackets,
so Python's parser (:func:`ast.parse`) reads it into a tree, fast and
without evaluating anything; :class:`_Lists` accepts only nested lists of
whole numbers and fractions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ...ir import Algorithm, Shape, Span
from ...verify.rings import ModularScheme
from ..loader import read_source
from .common import (TOO_MANY_DIGITS, algorithm_from_tables, blank_leading_zeros, check_decimal,
                     check_side, fail, identifier, modulus_in_name, named_so, past_digit_limit, python_tree, rank_mismatch, whole_file)
from .kauers import name_facts


@dataclass(frozen=True)
class _Parsed:
    """What Python's parser reads of a list: brackets for braces, leading zeros blanked, and the
    indentation before its first line taken out (Python's "unexpected indent"; nothing to Mathematica),
    with that line and how many columns it lost."""

    text: str
    line: int
    indent: int

    @classmethod
    def of(cls, text: str) -> _Parsed:
        text = blank_leading_zeros(text.translate(str.maketrans("{}", "[]")))
        start = len(text) - len(text.lstrip())
        line_start = text.rfind("\n", 0, start) + 1
        return cls(text[:line_start] + text[start:], text.count("\n", 0, start) + 1, start - line_start)

    def column(self, line: int, column: int) -> int:
        """A 1-based column of the parsed text as a column of the file."""
        return column + (self.indent if line == self.line else 0)


class _Lists:
    """Nested lists of rationals from the tree of one file, every node located for diagnostics."""

    def __init__(self, path: Path, parsed: _Parsed):
        self.path, self.parsed = path, parsed
        self.lines = [line.encode() for line in parsed.text.split("\n")]  # ast's offsets count UTF-8 bytes

    def span(self, node: ast.AST) -> Span:
        column = self.parsed.column(node.lineno, node.col_offset + 1)
        return Span(str(self.path), node.lineno, column, node.lineno, column + 1)

    def number(self, node: ast.AST) -> Fraction:
        sign = 1
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            sign, node = (-1 if isinstance(node.op, ast.USub) else 1), node.operand
        if isinstance(node, ast.Constant) and type(node.value) is int:
            check_decimal(self.lines[node.lineno - 1][node.col_offset:node.end_col_offset].decode(), self.span(node))
            return Fraction(sign * node.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            numerator, denominator = self.number(node.left), self.number(node.right)
            if denominator == 0:
                fail("division by zero in a coefficient", self.span(node.right))
            return sign * numerator / denominator
        fail("expected a rational number such as 3 or -2/3", self.span(node))

    def matrix(self, node: ast.AST, what: str) -> list[list[Fraction]]:
        if not isinstance(node, ast.List) or not node.elts or not all(isinstance(row, ast.List) for row in node.elts):
            fail(f"expected {what}: a matrix {{{{...}}, {{...}}}}", self.span(node))
        rows = [[self.number(entry) for entry in row.elts] for row in node.elts]
        if any(len(row) != len(rows[0]) for row in rows) or not rows[0]:
            fail(f"{what} has rows of different lengths", self.span(node))
        return rows

    def entry_spans(self, node: ast.List) -> list[list[Span]]:
        """Where each entry of a matrix that :meth:`matrix` read is written."""
        return [[self.span(entry) for entry in row.elts] for row in node.elts]


def _tree(text: str, parsed: _Parsed, path: Path) -> ast.AST:
    if "[" in text or "]" in text:  # brackets would become lists too; a Mathematica list has none
        line = text[: text.find("[") if "[" in text else text.find("]")].count("\n") + 1
        fail("unexpected '[' or ']' in a Mathematica list", Span(str(path), line, 1, line, 2))
    try:
        return python_tree(parsed.text).body
    except SyntaxError as error:
        line = error.lineno or 1
        column = parsed.column(line, error.offset or 1)
        if past_digit_limit(error):
            fail(TOO_MANY_DIGITS, Span(str(path), line, column, line, column + 1))
        reason = (error.msg or "").split(".")[0].translate(str.maketrans("[]", "{}"))  # the braces it read
        fail(f"this is not a Mathematica list of products ({reason})", Span(str(path), line, column, line, column + 1))
    except (RecursionError, MemoryError, ValueError):
        fail("the list nests too deeply to read", whole_file(path))


def read_mathematica(path: Path, shape: Shape | None = None) -> Algorithm | ModularScheme:
    """A ``.m`` scheme; a ModularScheme when the name marks it valid modulo p (``mod2``, ``Z2``)."""
    text = read_source(path, text_of="Mathematica text")
    parsed = _Parsed.of(text)
    tree, lists = _tree(text, parsed, path), _Lists(path, parsed)
    if not isinstance(tree, ast.List) or not tree.elts:
        fail("expected a list of products {{A, B, C}, ...}", whole_file(path))
    triples = []
    for node in tree.elts:
        if not isinstance(node, ast.List) or len(node.elts) != 3:
            fail("expected a product {A, B, C}: three matrices", lists.span(node))
        triples.append(tuple(lists.matrix(m, f"the {side} matrix") for m, side in zip(node.elts, ("A", "B", "C"))))
    a, b, _ = triples[0]
    found = check_side(Shape(len(a), len(a[0]), len(b[0])), f"the first product of {path.name}", lists.span(tree.elts[0]))
    for node, (a, b, c) in zip(tree.elts, triples):
        dims = ((len(a), len(a[0])), (len(b), len(b[0])), (len(c), len(c[0])))
        if dims != ((found.m, found.k), (found.k, found.n), (found.n, found.m)):
            fail(
                f"this product's matrices are {' , '.join(f'{r}x{c}' for r, c in dims)}; {found} needs "
                f"A {found.m}x{found.k}, B {found.k}x{found.n} and C {found.n}x{found.m} (transposed)",
                lists.span(node),
            )
    named, named_rank, origin = name_facts(path)
    rank_mismatch(named_rank, len(triples), origin, whole_file(path))
    if named is not None and named != found:
        fail(f"{origin} says {named}, but the matrices are {found}", whole_file(path))
    if shape is not None and shape != found:
        fail(f"the matrices are {found}, but the shape given is {shape}", whole_file(path))
    located = [tuple(lists.entry_spans(matrix) for matrix in node.elts) for node in tree.elts]
    modulus = modulus_in_name(path) or (2 if "Z2" in path.stem.split("_") else 0)
    spans = [lists.span(node) for node in tree.elts]
    algorithm = algorithm_from_tables(
        identifier(path.stem, "scheme"), found, *_tables(triples, found), path.name, whole_file(path),
        product_spans=spans, entry_spans=_tables(located, found)
    )
    return ModularScheme(algorithm, modulus, named_so(path)) if modulus else algorithm


def _tables(triples: list, shape: Shape) -> tuple[list, list, list]:
    """U, V and W (C row-major) of the products' {A, B, C} matrices, or of where their entries are written."""
    u = [[t[0][i][j] for t in triples] for i in range(shape.m) for j in range(shape.k)]
    v = [[t[1][i][j] for t in triples] for i in range(shape.k) for j in range(shape.n)]
    w = [[t[2][j][i] for t in triples] for i in range(shape.m) for j in range(shape.n)]  # C_r is transposed
    return u, v, w


def looks_like_mathematica(text: str) -> bool:
    return text.lstrip().startswith("{") and not text.lstrip().startswith('{\n  "') and '"' not in text[:200]
