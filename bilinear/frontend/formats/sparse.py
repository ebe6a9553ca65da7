"""PLinOpt's matrices: ``.sms`` sparse matrices and ``.slp`` straight-line programs, both as :class:`Sparse`.

``.sms``: an optional ``#`` comment, a header ``rows cols R``, 1-based
``i j value`` lines, ``0 0 0`` at the end.  ``.slp``: one assignment per line,
``var:=expression;`` over inputs ``i0…``, outputs ``o0…`` and temporaries, with
``+ - * /`` and rational constants; it computes the matrix that maps the inputs
to the outputs, read here by Python's parser (:func:`ast.parse`, nothing is
evaluated) into exact linear forms.  A header is checked against what the
file holds before any dense table is made, so a file that declares a huge
matrix costs nothing.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from pathlib import Path

from ...ir import Span
from ..loader import read_source, source_lines
from ...diagnostics import brief
from .common import TOO_MANY_DIGITS, check_decimal, fail, line_span, past_digit_limit, python_tree, rational, token_span, whole_file


Assigned = tuple[str, int]  # a program's variable and which assignment of it (1, 2, …): each is a value of its own


@dataclass(frozen=True)
class Steps:
    """A straight-line program as written: each assignment over what it reads (input indices, and
    earlier assignments), and the assignment that is each output row's final value."""

    assignments: tuple[tuple[Assigned, dict[int | Assigned, Fraction], Span], ...]
    outputs: tuple[Assigned, ...]


@dataclass(frozen=True)
class Sparse:
    """A matrix: 0-based entries, where each was written, and the header (or the file) for diagnostics;
    read from a straight-line program, also that program's steps."""

    rows: int
    cols: int
    entries: dict[tuple[int, int], Fraction]
    spans: dict[tuple[int, int], Span]
    header: Span
    comments: tuple[str, ...] = ()
    steps: Steps | None = None

    def dense(self) -> list[list[Fraction]]:
        table = [[Fraction(0)] * self.cols for _ in range(self.rows)]
        for (i, j), value in self.entries.items():
            table[i][j] = value
        return table

    def row_span(self, i: int) -> Span:
        return self._first_spans.get(i, self.header)

    @cached_property
    def _first_spans(self) -> dict[int, Span]:
        """Each row's earliest-written entry's span, found in one pass (a row at a time would be quadratic)."""
        first: dict[int, Span] = {}
        for (row, _), span in self.spans.items():
            if row not in first or span.line < first[row].line:
                first[row] = span
        return first


def _placeholder_symbol(token: str) -> bool:
    """A letter that is not part of a number's spelling (1e5, inf: the rational reader says what
    is wrong with those)."""
    try:
        float(token)
    except ValueError:
        return any(c.isalpha() for c in token)
    return False


def read_sms(path: Path) -> Sparse:
    """One ``.sms`` sparse matrix, with every malformed line reported where it is."""
    header = None
    entries: dict[tuple[int, int], Fraction] = {}
    spans: dict[tuple[int, int], Span] = {}
    comments: list[str] = []
    ended = False
    last = whole_file(path)
    for number, line in enumerate(source_lines(read_source(path, text_of="PLinOpt text")), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            comments.append(stripped.lstrip("# "))
            continue
        if not stripped:
            continue
        span = line_span(path, number, line)
        last = span
        tokens = stripped.split()
        if ended:
            fail("text after the end marker '0 0 0'", span)
        if header is None:
            if len(tokens) != 3 or not all(t.isdigit() and t.isascii() for t in tokens[:2]):
                fail("expected the header 'rows cols type', e.g. '7 4 R'", span)
            header = (int(tokens[0]), int(tokens[1]), span)
            if 0 in header[:2]:
                fail(f"the header declares a {header[0]}x{header[1]} matrix; a scheme's matrices have at least one row and column", span)
            continue
        if len(tokens) != 3 or not all(t.isdigit() and t.isascii() for t in tokens[:2]):
            fail("expected an entry 'row column value' (1-based), or '0 0 0' at the end", span)
        i, j = int(tokens[0]), int(tokens[1])
        if (i, j) == (0, 0):
            if tokens[2] != "0":  # 0 0 5 had ended the matrix as well
                fail(f"expected the end marker '0 0 0', not '{brief(' '.join(tokens))}'", span)
            ended = True
            continue
        rows, cols, _ = header
        if not (1 <= i <= rows and 1 <= j <= cols):
            fail(f"entry ({i},{j}) is outside the {rows}x{cols} matrix of the header", span)
        if (i - 1, j - 1) in entries:
            fail(f"entry ({i},{j}) is given twice", span, f"first given at {spans[(i - 1, j - 1)]}")
        value_column = line.index(tokens[2], line.index(tokens[1], line.index(tokens[0]) + len(tokens[0])) + len(tokens[1])) + 1
        value_span = token_span(path, number, value_column, tokens[2])
        if _placeholder_symbol(tokens[2]):
            _symbolic_entry(tokens[2], comments, value_span)
        entries[(i - 1, j - 1)] = rational(tokens[2], value_span)
        spans[(i - 1, j - 1)] = span
    if header is None:
        fail("the matrix has no header 'rows cols type'", last)
    if not ended:
        fail("the matrix ends without its '0 0 0' line; the file may be truncated", last)
    _check_declared_size(header[0], header[1], entries, header[2])
    return Sparse(header[0], header[1], entries, spans, header[2], tuple(comments))


def _symbolic_entry(token: str, comments: list[str], span: Span) -> None:
    said = next((c for c in comments if "placeholder" in c.lower()), None)
    fail(
        f"the coefficient {token!r} holds a symbol" + (f" ({said})" if said else ""),
        span,
        "bilinear verifies schemes over Q, Q(ε), Q(i) and GF(p); an algebraic number such as √3 is not one of them",
    )


def _check_declared_size(rows: int, cols: int, entries: dict, span: Span) -> None:
    """A scheme's matrix has an entry in (nearly) every row and column, so a header far beyond the
    rows and columns the entries use is refused before a dense table is made (a few empty rows get
    their own, more precise message later: a product with a zero factor)."""
    used_rows = {i for i, _ in entries}
    used_cols = {j for _, j in entries}
    if rows > len(used_rows) + _SLACK or cols > len(used_cols) + _SLACK:
        fail(
            f"the header declares a {rows}x{cols} matrix, but the file holds {len(entries)} entries in "
            f"{len(used_rows)} rows and {len(used_cols)} columns; a scheme's matrix uses every row and column",
            span,
        )


_SLACK = 1024  # empty rows or columns tolerated before the header is called a lie


# --- straight-line programs ------------------------------------------------------------------

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


_Linear = tuple  # (numerators: dict[input, int], denominator: int): a linear form with one denominator, in lowest terms


class _Program:
    """Linear forms over the inputs, one per variable, as the program assigns them.

    A form is kept as integer numerators over one denominator (:data:`_Linear`),
    not as Fractions: a program of 50,000 lines (PLinOpt's ⟨32,32,32;15096⟩)
    adds forms of hundreds of terms, and integer arithmetic is what makes
    that seconds rather than minutes.
    """

    def __init__(self, path: Path):
        self.path = path
        self.values: dict[str, _Linear] = {}
        self.outputs: dict[int, tuple[_Linear, Span]] = {}
        self.inputs = 0  # one more than the largest input index read
        self.inputs_read: set[int] = set()
        self.text = ""  # the expression being read (ASCII: ast's byte columns are its characters)

    def span(self, number: int, node: ast.AST, offset: int) -> Span:
        return Span(str(self.path), number, offset + node.col_offset + 1, number, offset + (node.end_col_offset or node.col_offset) + 1)

    def form(self, node: ast.AST, number: int, offset: int) -> _Linear | Fraction:
        """A linear form (numerators, denominator) or a number (Fraction)."""
        if isinstance(node, ast.Constant) and type(node.value) is int:  # 1_0, 0x10 are Python's, not PLinOpt's
            check_decimal(self.text[node.col_offset:node.end_col_offset], self.span(number, node, offset))
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.form(node.operand, number, offset)
            return _times(value, Fraction(-1 if isinstance(node.op, ast.USub) else 1))
        if isinstance(node, ast.Name):
            return self.variable(node, number, offset)
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub):
            left, right = self.form(node.left, number, offset), self.form(node.right, number, offset)
            if isinstance(left, Fraction) or isinstance(right, Fraction):
                if isinstance(left, Fraction) and isinstance(right, Fraction):
                    return left + right if isinstance(node.op, ast.Add) else left - right
                fail("a straight-line program for a linear map adds no constants", self.span(number, node, offset))
            return _plus(left, right, 1 if isinstance(node.op, ast.Add) else -1)
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Mult, ast.Div):
            left, right = self.form(node.left, number, offset), self.form(node.right, number, offset)
            if isinstance(node.op, ast.Div):
                if not isinstance(right, Fraction):
                    fail("only numbers divide in a linear program", self.span(number, node.right, offset))
                if right == 0:
                    fail("division by zero", self.span(number, node.right, offset))
                return _times(left, 1 / right)
            if not isinstance(left, Fraction) and not isinstance(right, Fraction):
                fail("a linear program multiplies variables only by numbers", self.span(number, node, offset))
            return _times(right, left) if isinstance(left, Fraction) else _times(left, right)
        fail("expected a linear expression of variables and numbers with + - * /", self.span(number, node, offset))

    def variable(self, node: ast.Name, number: int, offset: int) -> _Linear:
        name = node.id
        if name in self.values:
            return self.values[name]
        if name[0] == "i" and name[1:].isdigit():
            index = int(name[1:])
            self.inputs = max(self.inputs, index + 1)
            self.inputs_read.add(index)
            return {index: 1}, 1
        fail(f"{name} is used before it is assigned", self.span(number, node, offset))


def _times(value, by: Fraction):
    if isinstance(value, Fraction):
        return value * by
    numerators, denominator = value
    if by == 1:
        return value
    if by == 0:
        return {}, 1
    return _lowest({k: c * by.numerator for k, c in numerators.items()}, denominator * by.denominator)


def _plus(left: _Linear, right: _Linear, sign: int) -> _Linear:
    """left + sign·right."""
    (lefts, left_den), (rights, right_den) = left, right
    common = math.lcm(left_den, right_den)
    by_left, by_right = common // left_den, sign * (common // right_den)
    total = {k: c * by_left for k, c in lefts.items()} if by_left != 1 else dict(lefts)
    for key, c in rights.items():
        total[key] = total.get(key, 0) + c * by_right
    return _lowest({k: c for k, c in total.items() if c}, common)


def _lowest(numerators: dict[int, int], denominator: int) -> _Linear:
    divisor = math.gcd(denominator, *numerators.values())  # denominators stay positive: Fractions' are
    if divisor != 1:
        numerators = {k: c // divisor for k, c in numerators.items()}
    return numerators, denominator // divisor


def read_slp(path: Path) -> Sparse:
    """The matrix a straight-line program computes: row o is output ``o<row>``, column i is input
    ``i<col>``; and its steps, each assignment over the variables it reads (read by the same
    :class:`_Program`, each assigned variable standing for itself)."""
    program, steps = _Program(path), _Program(path)
    assignments, versions, finals = [], {}, {}
    comments = []
    for number, line in enumerate(source_lines(read_source(path, text_of="PLinOpt text")), start=1):
        if line.lstrip().startswith("#"):
            comments.append(line.strip().lstrip("# "))
            continue
        statement, _, rest = line.split("#", 1)[0].partition(";")
        if ":=" not in statement:
            continue  # PLinOpt ignores lines without an assignment
        if rest.strip():  # dropped unread, a second assignment had been lost
            fail(f"one statement a line: found {rest.strip()!r} after the first ';'",
                 token_span(path, number, len(statement) + 2 + len(rest) - len(rest.lstrip()), rest.strip()))
        target, expression = statement.split(":=", 1)
        target = target.strip()
        span = line_span(path, number, line)
        if not _VARIABLE.fullmatch(target) or (target[0] == "i" and target[1:].isdigit()):
            fail(f"expected 'variable:=expression', assigning a variable that is not an input; found {target!r}", span)
        offset = statement.index(":=") + 2 + (len(expression) - len(expression.lstrip()))
        if strange := _NON_ASCII.search(expression):  # none left, so ast's byte columns are characters
            fail(f"a straight-line program's names and numbers are ASCII; found {strange.group()!r}",
                 token_span(path, number, statement.index(":=") + 3 + strange.start(), strange.group()))
        try:
            tree = python_tree(expression.strip()).body
        except SyntaxError as error:
            column = offset + (error.offset or 1)
            if past_digit_limit(error):
                fail(TOO_MANY_DIGITS, Span(str(path), number, column, number, column + 1))
            fail(f"this is not a linear expression ({(error.msg or '').split('.')[0]})", Span(str(path), number, column, number, column + 1))
        except (RecursionError, MemoryError, ValueError):
            fail("the expression nests too deeply to read", span)
        program.text = steps.text = expression.strip()
        value = program.form(tree, number, offset)
        if isinstance(value, Fraction):
            fail("a straight-line program for a linear map assigns no constants", span)
        program.values[target] = value
        assigned = (target, versions.get(target, 0) + 1)
        assignments.append((assigned, _fractions(steps.form(tree, number, offset)), span))
        versions[target] = assigned[1]
        steps.values[target] = ({assigned: 1}, 1)
        if target[0] == "o" and target[1:].isdigit():
            program.outputs[int(target[1:])] = (value, span)
            finals[int(target[1:])] = assigned
    if not program.outputs:
        fail(f"{path.name} assigns no outputs o0, o1, ...", whole_file(path))
    rows = max(program.outputs) + 1
    # As for an .sms header: indices far past the ones used are refused before a table is made for them
    for kind, largest, used in (("o", rows, len(program.outputs)), ("i", program.inputs, len(program.inputs_read))):
        if largest > used + _SLACK:
            fail(f"{path.name} uses {kind}{largest - 1} but {'assigns' if kind == 'o' else 'reads'} only {used} "
                 f"{'outputs' if kind == 'o' else 'inputs'} in all; "
                 "a scheme's program uses every input and assigns every output", whole_file(path))
    missing = sorted(set(range(rows)) - set(program.outputs))
    if missing:
        fail(f"{path.name} never assigns o{missing[0]}, although it assigns o{rows - 1}", whole_file(path))
    entries, spans = {}, {}
    fractions: dict[tuple[int, int], Fraction] = {}  # a scheme has few distinct coefficients: make each once
    for row, ((numerators, denominator), span) in program.outputs.items():
        for col, c in numerators.items():
            value = fractions.get((c, denominator))
            if value is None:
                value = fractions[(c, denominator)] = Fraction(c, denominator)
            entries[(row, col)] = value
            spans[(row, col)] = span
    outputs = tuple(finals[row] for row in range(rows))
    return Sparse(rows, program.inputs, entries, spans, whole_file(path), tuple(comments), Steps(tuple(assignments), outputs))


def _fractions(value: _Linear) -> dict:
    numerators, denominator = value
    return {key: Fraction(c, denominator) for key, c in numerators.items()}
