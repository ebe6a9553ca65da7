"""Readers for catalogue scheme files (see ``../shared/schemes/README.md``).

:func:`read_catalogue` is the one entry point; :func:`detect_format` picks a
reader from the file's name or content.  Every reader returns a
:data:`Scheme` — an exact :class:`~bilinear.ir.Algorithm`, or, for schemes
that are not exact over Q, an :class:`~bilinear.verify.rings.ApproximateScheme`
or :class:`~bilinear.verify.rings.ModularScheme` — and reports malformed
input as a :class:`~bilinear.diagnostics.BilinearError` located at
file:line:col, never as a traceback.

Formats (:data:`FORMATS`):

- ``fast-matmul`` (arbenson/fast-matmul ``codegen/algorithms``): U, V and W
  blocks of numbers separated by ``#`` lines, one row per block (row-major),
  one column per product; the shape is inferred from the row counts or given.
  Entries are rationals, or in ``*-approx`` files powers of one parameter
  following fast-matmul's ``gen.py`` grammar: ``x``, ``-x``, ``x2`` (x²),
  ``xi`` (1/x), ``x2i`` (1/x²) — an approximate scheme.  ``eliminated-*``
  files add rows to U and V and columns to W for common subexpressions, and
  after ``# Substitution information`` three blocks defining them: A-side
  sums ``A_X1…`` over A blocks, B-side sums ``B_X1…`` over B blocks, and
  output sums ``M_X1…`` over products (fast-matmul's own names); they
  become named sums, so the shared additions are kept and verified.
- ``plinopt`` (jgdumas/plinopt ``data``): three sparse matrices
  ``NAME_L.sms`` (A side, one row per product), ``NAME_R.sms`` (B side) and
  ``NAME_P.sms`` (output map, one row per C block); a header
  ``rows cols type``, 1-based ``i j value`` lines, ``0 0 0`` at the end.
  Any one of the three paths finds the other two.
- ``kauers`` (mkauers/matrix-multiplication): one product per line,
  ``(Σ a)*(Σ b)*(Σ c)`` with rational coefficients and an optional overall
  ``/d`` or ``*d``; trace convention, so a term c_ki feeds C_ik.  The shape
  is the three-digit token of the file or folder name (``333``, ``224``),
  else the largest indices; ``mod2`` in the name marks a scheme valid only
  modulo 2 (``mod0``: over Q).
- ``alphatensor`` (google-deepmind/alphatensor ``algorithms``): ``.npz``
  archives keyed ``"n,m,p"``; pick one with ``key``.  Factors decompose
  (A, B) ↦ (AB)ᵀ, so W's rows run over Cᵀ.  Rectangular entries are pickled
  object arrays; loading them executes code from the file, so they are
  refused unless ``allow_pickle=True``.  ``*_f2.npz`` is valid only modulo 2.
"""

from __future__ import annotations

import difflib
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from fractions import Fraction
from itertools import product as cartesian
from pathlib import Path

import numpy as np
import sympy

from ..diagnostics import BilinearError, Diagnostic
from ..ir import Algorithm, Form, Output, Product, Shape, Span, Sum, block_name, parse_block
from ..verify.rings import ApproximateScheme, ModularScheme
from .loader import read_source

FORMATS = ("fast-matmul", "plinopt", "kauers", "alphatensor")

Scheme = Algorithm | ApproximateScheme | ModularScheme

# Words the .bl grammar reserves; a scheme named after one could not be written back.
_KEYWORDS = {"algorithm", "table", "schedule", "use", "for", "stage", "temp"}


def _fail(message: str, span: Span | None, *notes: str) -> None:
    raise BilinearError(Diagnostic(message, span, notes=notes))


def parse_shape(text: str | None) -> Shape | None:
    """``"2,3,4"`` to a Shape; raises a BilinearError (without location) when malformed."""
    if text is None:
        return None
    try:
        m, k, n = (int(part) for part in text.split(","))
        return Shape(m, k, n)
    except ValueError:
        raise BilinearError(Diagnostic(f"--shape must be three positive whole numbers m,k,n, not {text!r}")) from None


def infer_shape(rows_a: int, rows_b: int, rows_c: int) -> Shape | None:
    """The unique ⟨m,k,n⟩ with mk, kn, mn rows, if there is one."""
    candidates = [
        Shape(m, k, n)
        for m, k, n in cartesian(range(1, rows_a + 1), repeat=3)
        if m * k == rows_a and k * n == rows_b and m * n == rows_c
    ]
    return candidates[0] if len(candidates) == 1 else None


def identifier(text: str, prefix: str = "scheme") -> str:
    """A valid .bl name made from a file name: ``grey333-23-152`` → ``grey333_23_152``.

    Names that would not be one (``378-ffdb``, ``A12``, ``table``) get ``prefix_`` in front.
    """
    name = re.sub(r"\W", "_", text, flags=re.ASCII)
    if not re.match(r"[A-Za-z_]", name) or parse_block(name) or name in _KEYWORDS:
        name = f"{prefix}_{name}"
    return name


def _whole_file(path: Path) -> Span:
    return Span(str(path), 1, 1, 1, 2)


def _token_span(path: Path, line_number: int, column: int, text: str) -> Span:
    return Span(str(path), line_number, column, line_number, column + len(text))


def _rational(token: str, span: Span) -> Fraction:
    try:
        return Fraction(token)
    except (ValueError, ZeroDivisionError):
        raise BilinearError(Diagnostic(f"{token!r} is not a rational coefficient", span)) from None


def _shape_mismatch(found: Shape, given: Shape, where: str, span: Span) -> None:
    if found != given:
        _fail(f"{where} says {found}, but the shape given is {given}", span)


# --- fast-matmul ---------------------------------------------------------------------

# fast-matmul's coefficient grammar (gen.py parse_coeff): a parameter letter,
# optionally a power digit, optionally 'i' for the reciprocal, optionally negated.
_PARAMETER_ENTRY = re.compile(r"^(-?)([a-z])([1-9]?)(i?)$")


@dataclass(frozen=True)
class _Row:
    """One line of numbers: the entries (Fraction, or sympy for a parameter) and where."""

    entries: tuple[Fraction | sympy.Expr, ...]
    span: Span


@dataclass(frozen=True)
class _Section:
    """A block of rows and the ``#`` line that opened it (``""`` for none)."""

    rows: tuple[_Row, ...]
    heading: str

    @property
    def span(self) -> Span:
        return self.rows[0].span

    @property
    def width(self) -> int:
        return len(self.rows[0].entries)


def _fast_matmul_entry(token: str, span: Span) -> Fraction | sympy.Expr:
    parameter = _PARAMETER_ENTRY.match(token)
    if parameter is None:
        if re.search(r"[A-Za-z]", token):
            _fail(
                f"{token!r} is not a coefficient",
                span,
                "entries are rationals (3, -1/2, 0.25) or powers of one parameter: "
                "x, -x, x2 (x squared), xi (1/x), x2i (1/x squared)",
            )
        return _rational(token, span)
    sign, letter, power, reciprocal = parameter.groups()
    exponent = int(power or 1) * (-1 if reciprocal else 1)
    return (-1 if sign else 1) * sympy.Symbol(letter) ** exponent


def _fast_matmul_sections(text: str, path: Path) -> list[_Section]:
    sections: list[_Section] = []
    rows: list[_Row] = []
    heading = pending = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            if rows:
                sections.append(_Section(tuple(rows), heading))
                rows = []
            pending = stripped
            continue
        if not stripped:
            continue
        if not rows:
            heading = pending
        entries = []
        for match in re.finditer(r"\S+", line):
            span = _token_span(path, number, match.start() + 1, match.group())
            entries.append(_fast_matmul_entry(match.group(), span))
        rows.append(_Row(tuple(entries), Span(str(path), number, 1, number, len(line) + 1)))
    if rows:
        sections.append(_Section(tuple(rows), heading))
    return sections


def _split_substitutions(sections: list[_Section], path: Path) -> tuple[list[_Section], list[_Section]]:
    """(U, V, W) and the three substitution blocks of an ``eliminated-*`` file (or none)."""
    if len(sections) < 3:
        _fail(f"expected U, V and W blocks separated by '#' lines; found {len(sections)}", _whole_file(path))
    main, rest = sections[:3], sections[3:]
    if not rest:
        return main, []
    if "substitution" not in rest[0].heading.lower():
        _fail(
            f"found {len(sections)} blocks of numbers; a fast-matmul file has U, V and W, and only an eliminated "
            "scheme has more (three blocks after a '# Substitution information' line)",
            rest[0].span,
        )
    if len(rest) != 3:
        _fail(
            f"expected three substitution blocks (A side, B side, products) after '# Substitution information'; "
            f"found {len(rest)}",
            rest[0].span,
        )
    return main, rest


def _substitution_counts(subs: list[_Section]) -> tuple[int, int, int]:
    """How many A-side, B-side and product substitutions an eliminated scheme defines."""
    return tuple(len(s.rows) for s in subs) if subs else (0, 0, 0)


def _check_widths(section: _Section, letter: str, width: int, meaning: str) -> None:
    for row in section.rows:
        if len(row.entries) != width:
            _fail(f"this row of {letter} has {len(row.entries)} entries; it needs {width}, {meaning}", row.span)


def _fast_matmul_shape(
    main: list[_Section], subs: list[_Section], shape: Shape | None, path: Path
) -> Shape:
    # Substitution rows extend U and V; the product substitutions extend W's columns, not its rows.
    extra = (*_substitution_counts(subs)[:2], 0)
    rows_a, rows_b, rows_c = len(main[0].rows) - extra[0], len(main[1].rows) - extra[1], len(main[2].rows)
    if shape is None:
        shape = infer_shape(rows_a, rows_b, rows_c)
        if shape is None:
            _fail(
                f"cannot infer the shape from {rows_a}, {rows_b} and {rows_c} rows; give --shape m,k,n",
                _whole_file(path),
            )
    for letter, section, operand, sub_rows in zip("UVW", main, "ABC", extra):
        want = len(shape.blocks(operand))
        if len(section.rows) - sub_rows != want:
            rows, cols = shape.grid(operand)
            substitutions = f" plus {sub_rows} substitution rows" if sub_rows else ""
            _fail(
                f"{letter} has {len(section.rows)} rows; {shape} needs {want}{substitutions}, one per {operand} block "
                f"({block_name(operand, 1, 1)}..{block_name(operand, rows, cols)}, row-major)",
                section.span,
            )
    return shape


def read_fast_matmul(path: Path, shape: Shape | None = None) -> Algorithm | ApproximateScheme:
    """A fast-matmul coefficient file: exact, eliminated (with named sums) or approximate."""
    sections = _fast_matmul_sections(read_source(path), path)
    main, subs = _split_substitutions(sections, path)
    shape = _fast_matmul_shape(main, subs, shape, path)
    rank = main[0].width
    extra = _substitution_counts(subs)
    _check_widths(main[0], "U", rank, "one per product")
    _check_widths(main[1], "V", rank, "one per product")
    _check_widths(main[2], "W", rank + extra[2], "one per product" + (" and one per product substitution" if subs else ""))
    for section, letter, width in zip(subs, "ABM", (shape.m * shape.k, shape.k * shape.n, rank)):
        meaning = "one per product" if letter == "M" else f"one per {letter} block"
        _check_widths(section, f"the {letter} substitutions", width, meaning)
    parameters = {
        symbol for section in sections for row in section.rows for e in row.entries
        if isinstance(e, sympy.Expr) for symbol in e.free_symbols
    }
    if parameters:
        return _approximate(main, subs, shape, parameters, path)
    return _exact_fast_matmul(main, subs, shape, path)


def _approximate(
    main: list[_Section], subs: list[_Section], shape: Shape, parameters: set, path: Path
) -> ApproximateScheme:
    if len(parameters) > 1:
        _fail(f"an approximate scheme has one parameter; this one has {', '.join(sorted(map(str, parameters)))}", main[0].span)
    if subs:
        _fail("substitutions in an approximate scheme are not supported; give the scheme without them", subs[0].span)
    tables = [tuple(tuple(_symbolic(e) for e in row.entries) for row in section.rows) for section in main]
    spans = tuple(tuple(row.span for row in section.rows) for section in main)
    _check_factors_nonzero([[[e != 0 for e in row] for row in table] for table in tables[:2]], main)
    return ApproximateScheme(identifier(path.name), shape, parameters.pop(), *tables, spans, _whole_file(path))


def _symbolic(entry: Fraction | sympy.Expr) -> sympy.Expr:
    return entry if isinstance(entry, sympy.Expr) else sympy.Rational(entry.numerator, entry.denominator)


def _check_factors_nonzero(nonzero: list[list[list[bool]]], sections: list[_Section]) -> None:
    """Every product needs a nonzero column in U and in V (``nonzero[side][row][r]``)."""
    for letter, table, section in zip("UV", nonzero, sections):
        for r in range(len(table[0])):
            if not any(row[r] for row in table):
                _fail(f"product {r + 1} has a zero factor: column {r + 1} of {letter} is all zero", section.span)


def _column_form(rows: tuple[_Row, ...], names: list[str], r: int) -> Form:
    return Form.of({name: row.entries[r] for name, row in zip(names, rows)})


def _exact_fast_matmul(main: list[_Section], subs: list[_Section], shape: Shape, path: Path) -> Algorithm:
    rank = main[0].width
    extra = _substitution_counts(subs)
    a_names = list(shape.blocks("A")) + [f"A_X{s + 1}" for s in range(extra[0])]
    b_names = list(shape.blocks("B")) + [f"B_X{s + 1}" for s in range(extra[1])]
    m_names = [f"M{r + 1}" for r in range(rank)]
    w_names = m_names + [f"M_X{s + 1}" for s in range(extra[2])]
    _check_factors_nonzero(
        [[[e != 0 for e in row.entries] for row in section.rows] for section in main[:2]], main
    )
    sums = []
    for section, prefix, bases in zip(subs, ("A_X", "B_X", "M_X"), (a_names, b_names, m_names)):
        for s, row in enumerate(section.rows):
            form = Form.of(dict(zip(bases, row.entries)))
            if form.is_zero():
                _fail(f"substitution {prefix}{s + 1} is all zero", row.span)
            sums.append(Sum(f"{prefix}{s + 1}", form, row.span))
    products = tuple(
        Product(m_names[r], _column_form(main[0].rows, a_names, r), _column_form(main[1].rows, b_names, r), main[0].span)
        for r in range(rank)
    )
    outputs = tuple(
        Output(block, Form.of(dict(zip(w_names, row.entries))), row.span)
        for block, row in zip(shape.blocks("C"), main[2].rows)
    )
    return Algorithm(
        identifier(path.name), shape, tuple(sums), products, outputs, rank, _whole_file(path), tabular=not subs
    )


# --- plinopt -------------------------------------------------------------------------

_PLINOPT_PARTS = {"L": "A side", "R": "B side", "P": "output map"}
_PLINOPT_NAME = re.compile(r"^(?P<stem>.+)_(?P<part>[LRP])\.(?P<suffix>sms|slp)$")


@dataclass(frozen=True)
class _Sparse:
    """A plinopt ``.sms`` matrix: 0-based entries and where each was written."""

    rows: int
    cols: int
    entries: dict[tuple[int, int], Fraction]
    spans: dict[tuple[int, int], Span]
    header: Span

    def dense(self) -> list[list[Fraction]]:
        table = [[Fraction(0)] * self.cols for _ in range(self.rows)]
        for (i, j), value in self.entries.items():
            table[i][j] = value
        return table

    def row_span(self, i: int) -> Span:
        return min((s for (row, _), s in self.spans.items() if row == i), key=lambda s: s.line, default=self.header)


def plinopt_paths(path: Path) -> dict[str, Path]:
    """The ``_L``, ``_R`` and ``_P`` ``.sms`` files of the scheme ``path`` belongs to."""
    match = _PLINOPT_NAME.match(path.name)
    if match is None:
        _fail(
            f"{path.name} is not a plinopt scheme file: a scheme is three files NAME_L.sms, NAME_R.sms and NAME_P.sms",
            None,
        )
    paths = {part: path.with_name(f"{match['stem']}_{part}.sms") for part in _PLINOPT_PARTS}
    if match["suffix"] == "slp":
        _fail(
            f"{path.name} is a plinopt straight-line program; bilinear reads a scheme from its .sms matrices "
            f"({paths['L'].name}, {paths['R'].name}, {paths['P'].name})",
            None,
        )
    missing = [p.name for p in paths.values() if not p.exists()]
    if missing:
        _fail(
            f"cannot find {' and '.join(missing)} beside {path.name}: a plinopt scheme needs its "
            "_L (A side), _R (B side) and _P (output map) matrices",
            None,
        )
    return paths


def read_sms(path: Path) -> _Sparse:
    """One ``.sms`` sparse matrix, with every malformed line reported where it is."""
    header = None
    entries: dict[tuple[int, int], Fraction] = {}
    spans: dict[tuple[int, int], Span] = {}
    ended = False
    last = _whole_file(path)
    for number, line in enumerate(read_source(path).splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        span = Span(str(path), number, 1, number, len(line) + 1)
        last = span
        tokens = stripped.split()
        if ended:
            _fail("text after the end marker '0 0 0'", span)
        if header is None:
            if len(tokens) != 3 or not all(re.fullmatch("[0-9]+", t) for t in tokens[:2]):
                _fail("expected the header 'rows cols type', e.g. '7 4 R'", span)
            header = (int(tokens[0]), int(tokens[1]), span)
            continue
        if len(tokens) != 3 or not all(re.fullmatch("[0-9]+", t) for t in tokens[:2]):
            _fail("expected an entry 'row column value' (1-based), or '0 0 0' at the end", span)
        i, j = int(tokens[0]), int(tokens[1])
        if (i, j) == (0, 0):
            ended = True
            continue
        rows, cols, _ = header
        if not (1 <= i <= rows and 1 <= j <= cols):
            _fail(f"entry ({i},{j}) is outside the {rows}x{cols} matrix of the header", span)
        if (i - 1, j - 1) in entries:
            _fail(f"entry ({i},{j}) is given twice", span, f"first given at {spans[(i - 1, j - 1)]}")
        value_column = line.index(tokens[2], line.index(tokens[1]) + len(tokens[1])) + 1
        entries[(i - 1, j - 1)] = _rational(tokens[2], _token_span(path, number, value_column, tokens[2]))
        spans[(i - 1, j - 1)] = span
    if header is None:
        _fail("the matrix has no header 'rows cols type'", last)
    if not ended:
        _fail("the matrix ends without its '0 0 0' line; the file may be truncated", last)
    return _Sparse(header[0], header[1], entries, spans, header[2])


def _name_shape(name: str, pattern: str) -> Shape | None:
    match = re.search(pattern, name)
    return Shape(*(int(g) for g in match.groups())) if match else None


def read_plinopt(path: Path, shape: Shape | None = None) -> Algorithm:
    """A plinopt scheme from any one of its ``_L``/``_R``/``_P`` ``.sms`` paths."""
    paths = plinopt_paths(path)
    left, right, post = (read_sms(paths[part]) for part in "LRP")
    rank = left.rows
    for matrix, part, count, what in ((right, "R", right.rows, "rows"), (post, "P", post.cols, "columns")):
        if count != rank:
            _fail(f"{paths[part].name} has {count} {what}; {paths['L'].name} has {rank} rows, one per product", matrix.header)
    named = _name_shape(paths["L"].name, r"^(\d+)x(\d+)x(\d+)_")
    inferred = infer_shape(left.cols, right.cols, post.rows)
    if shape is None:
        shape = named or inferred
    if shape is None:
        _fail(
            f"cannot infer the shape from {left.cols}, {right.cols} and {post.rows} columns and rows; give --shape m,k,n",
            left.header,
        )
    if named is not None:
        _shape_mismatch(named, shape, f"the file name {paths['L'].name}", left.header)
    for matrix, part, count, operand, what in (
        (left, "L", left.cols, "A", "columns"), (right, "R", right.cols, "B", "columns"), (post, "P", post.rows, "C", "rows")
    ):
        if count != len(shape.blocks(operand)):
            _fail(
                f"{paths[part].name} has {count} {what}; {shape} needs {len(shape.blocks(operand))}, one per {operand} block",
                matrix.header,
            )
    u, v, w = left.dense(), right.dense(), post.dense()
    products = []
    for r in range(rank):
        factors = (Form.of(dict(zip(shape.blocks("A"), u[r]))), Form.of(dict(zip(shape.blocks("B"), v[r]))))
        for matrix, part, form in ((left, "L", factors[0]), (right, "R", factors[1])):
            if form.is_zero():
                _fail(f"product {r + 1} has a zero factor: row {r + 1} of {paths[part].name} is empty", matrix.header)
        products.append(Product(f"M{r + 1}", *factors, left.row_span(r)))
    outputs = tuple(
        Output(block, Form.of({f"M{r + 1}": c for r, c in enumerate(w[i])}), post.row_span(i))
        for i, block in enumerate(shape.blocks("C"))
    )
    name = identifier(paths["L"].name[: -len("_L.sms")], "plinopt")
    return Algorithm(name, shape, (), tuple(products), outputs, rank, left.header, tabular=True)


# --- kauers ----------------------------------------------------------------------------

_KAUERS_TOKEN = re.compile(r"\s*([0-9]+|[A-Za-z]\w*|\S)")


@dataclass(frozen=True)
class _Token:
    text: str
    span: Span


@dataclass(frozen=True)
class _KauersProduct:
    """One line: the a, b and c factors as {(row, col): coefficient}, and the line's span."""

    factors: tuple[dict[tuple[int, int], Fraction], ...]
    entry_spans: dict[tuple[str, int, int], Span]
    span: Span


class _KauersLine:
    """A recursive-descent parser for ``(Σ a)*(Σ b)*(Σ c)[/d]``."""

    def __init__(self, line: str, number: int, path: Path):
        self.tokens = [
            _Token(m.group(1), _token_span(path, number, m.start(1) + 1, m.group(1)))
            for m in _KAUERS_TOKEN.finditer(line)
        ]
        self.position = 0
        self.end = Span(str(path), number, len(line.rstrip()) + 1, number, len(line.rstrip()) + 2)
        self.line_span = Span(str(path), number, 1, number, len(line) + 1)
        self.entry_spans: dict[tuple[str, int, int], Span] = {}

    def peek(self) -> str | None:
        return self.tokens[self.position].text if self.position < len(self.tokens) else None

    def here(self) -> Span:
        return self.tokens[self.position].span if self.position < len(self.tokens) else self.end

    def take(self) -> _Token:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, text: str, what: str) -> None:
        if self.peek() != text:
            found = f"'{self.peek()}'" if self.peek() is not None else "the end of the line"
            _fail(f"expected {what}, found {found}", self.here())
        self.take()

    def at_number(self) -> bool:
        return self.peek() is not None and re.fullmatch("[0-9]+", self.peek()) is not None

    def whole_number(self) -> int:
        if not self.at_number():
            found = f"'{self.peek()}'" if self.peek() is not None else "the end of the line"
            _fail(f"expected a number, found {found}", self.here())
        return int(self.take().text)

    def number(self) -> Fraction:
        """``n`` or ``n/d``."""
        value = Fraction(self.whole_number())
        if self.peek() == "/":
            self.take()
            span = self.here()
            denominator = self.whole_number()
            if denominator == 0:
                _fail("division by zero in a coefficient", span)
            value /= denominator
        return value

    def product(self) -> _KauersProduct:
        factors = []
        for index, letter in enumerate("abc"):
            if index:
                self.expect("*", "'*' between the factors")
            factors.append(self.factor(letter))
        scale = Fraction(1)
        while self.peek() in ("*", "/"):
            operator = self.take().text
            span = self.here()
            value = Fraction(self.whole_number())
            if value == 0:
                _fail("division by zero in a coefficient" if operator == "/" else "the product is multiplied by zero", span)
            scale = scale * value if operator == "*" else scale / value
        if self.peek() is not None:
            _fail(f"unexpected '{self.peek()}' after the product", self.here())
        factors[2] = {key: c * scale for key, c in factors[2].items()}
        return _KauersProduct(tuple(factors), self.entry_spans, self.line_span)

    def factor(self, letter: str) -> dict[tuple[int, int], Fraction]:
        opening = self.here()
        self.expect("(", f"'(' opening the sum of {letter}-entries")
        terms: dict[tuple[int, int], Fraction] = {}
        first = True
        while self.peek() != ")":
            sign = Fraction(1)
            if self.peek() in ("+", "-"):
                sign = Fraction(-1 if self.take().text == "-" else 1)
            elif not first:
                self.expect("+", f"'+', '-' or ')' in the sum of {letter}-entries")
            coefficient = sign * self.coefficient()
            span = self.here()
            entry = self.entry(letter)
            terms[entry] = terms.get(entry, Fraction(0)) + coefficient
            self.entry_spans.setdefault((letter, *entry), span)
            first = False
        self.take()
        terms = {key: c for key, c in terms.items() if c != 0}
        if not terms:
            _fail(f"the sum of {letter}-entries is zero: the product has a zero factor", opening)
        return terms

    def coefficient(self) -> Fraction:
        if self.at_number():
            value = self.number()
            self.expect("*", "'*' between a coefficient and its entry")
            return value
        return Fraction(1)

    def entry(self, letter: str) -> tuple[int, int]:
        token = self.tokens[self.position] if self.position < len(self.tokens) else None
        match = re.fullmatch(r"([abc])([1-9])([1-9])", token.text) if token else None
        if match is None:
            found = f"'{token.text}'" if token else "the end of the line"
            _fail(f"expected an entry {letter}11..{letter}99, found {found}", self.here())
        if match.group(1) != letter:
            _fail(
                f"{token.text} is in the wrong factor: a product is (sum of a-entries)*(sum of b-entries)*(sum of c-entries)",
                token.span,
            )
        self.take()
        return int(match.group(2)), int(match.group(3))


def _kauers_name_facts(path: Path) -> tuple[Shape | None, str, int]:
    """(shape, where it came from, modulus; 0 for Q) from the file or folder name."""
    modulus = 0
    for token in re.split(r"[-_.]", path.name):
        match = re.fullmatch(r"mod([0-9]+)", token)
        if match:
            modulus = int(match.group(1))
    if modulus == 1:
        _fail(f"'mod1' in the name {path.name}: a modulus is at least 2 ('mod0' means over Q)", _whole_file(path))
    for source in (path.name, path.parent.name):
        shapes = {t for t in re.split(r"[-_.]", source) if re.fullmatch(r"[1-9]{3}", t)}
        if len(shapes) == 1:
            token = shapes.pop()
            return Shape(*(int(d) for d in token)), f"the name '{source}'", modulus
    return None, "", modulus


def read_kauers(path: Path, shape: Shape | None = None) -> Algorithm | ModularScheme:
    """A ``.exp`` scheme; a ModularScheme when its name marks it valid modulo p."""
    products = []
    for number, line in enumerate(read_source(path).splitlines(), start=1):
        if line.strip() and not line.strip().startswith("#"):
            products.append(_KauersLine(line, number, path).product())
    if not products:
        _fail(f"{path.name} holds no products: expected one '(a..)*(b..)*(c..)' line per product", _whole_file(path))
    named, origin, modulus = _kauers_name_facts(path)
    if shape is not None:
        if named is not None:
            _shape_mismatch(named, shape, origin, _whole_file(path))
        origin = "the shape given"
    elif named is not None:
        shape = named
    else:
        shape, origin = _kauers_inferred_shape(products), "the largest indices"
    _check_kauers_indices(products, shape, origin)
    if modulus:
        _check_integers(products, modulus)
    algorithm = _kauers_algorithm(products, shape, path)
    return ModularScheme(algorithm, modulus) if modulus else algorithm


def _kauers_inferred_shape(products: list[_KauersProduct]) -> Shape:
    """⟨m,k,n⟩ from the largest indices: a is m×k, b is k×n, c (transposed) is n×m."""
    a, b, c = ([key for p in products for key in p.factors[side]] for side in range(3))
    m = max(max(i for i, _ in a), max(j for _, j in c))
    k = max(max(j for _, j in a), max(i for i, _ in b))
    n = max(max(j for _, j in b), max(i for i, _ in c))
    return Shape(m, k, n)


def _check_kauers_indices(products: list[_KauersProduct], shape: Shape, origin: str) -> None:
    grids = {"a": shape.grid("A"), "b": shape.grid("B"), "c": shape.grid("C")[::-1]}
    for product in products:
        for (letter, i, j), span in product.entry_spans.items():
            rows, cols = grids[letter]
            if not (i <= rows and j <= cols):
                what = {"a": "A", "b": "B", "c": "Cᵀ (c-indices are transposed)"}[letter]
                _fail(f"{letter}{i}{j} is outside {shape} (from {origin}): {what} has {rows}x{cols} entries", span)


def _check_integers(products: list[_KauersProduct], modulus: int) -> None:
    for product in products:
        for factor in product.factors:
            for value in factor.values():
                if value.denominator != 1:
                    _fail(f"a scheme valid modulo {modulus} has integer coefficients, not {value}", product.span)


def _kauers_algorithm(products: list[_KauersProduct], shape: Shape, path: Path) -> Algorithm:
    outputs: dict[str, dict[str, Fraction]] = {block: {} for block in shape.blocks("C")}
    first_use: dict[str, Span] = {}  # a C block's diagnostics point at its first c-entry
    built = []
    for r, product in enumerate(products):
        a, b, c = product.factors
        name = f"M{r + 1}"
        left = Form.of({block_name("A", i, j): v for (i, j), v in a.items()})
        right = Form.of({block_name("B", i, j): v for (i, j), v in b.items()})
        built.append(Product(name, left, right, product.span))
        for (k, i), value in c.items():  # trace convention: c_ki is C_ik
            outputs[block_name("C", i, k)][name] = value
            first_use.setdefault(block_name("C", i, k), product.entry_spans[("c", k, i)])
    return Algorithm(
        identifier(path.name.removesuffix(".exp"), "kauers"),
        shape,
        (),
        tuple(built),
        tuple(Output(block, Form.of(terms), first_use.get(block)) for block, terms in outputs.items()),
        len(built),
        _whole_file(path),
        tabular=True,
    )


# --- alphatensor --------------------------------------------------------------------------

_ZIP_MAGIC = b"PK\x03\x04"


def _normal_key(key: str) -> str:
    return ",".join(part.strip() for part in re.split(r"[,x×]", key.strip()))


def _choose_key(keys: list[str], key: str | None, shape: Shape | None, path: Path) -> str:
    if key is None and shape is not None:
        key = f"{shape.m},{shape.k},{shape.n}"
    if key is None:
        if len(keys) == 1:
            return keys[0]
        _fail(
            f"{path.name} holds {len(keys)} schemes; choose one with --key (e.g. --key {keys[0]})",
            _whole_file(path),
            "keys: " + " ".join(keys),
        )
    wanted = _normal_key(key)
    if wanted not in keys:
        close = difflib.get_close_matches(wanted, keys, n=3)
        _fail(
            f"{path.name} has no scheme {wanted!r}",
            _whole_file(path),
            *((f"did you mean {' or '.join(close)}?",) if close else ()),
            "keys: " + " ".join(keys),
        )
    return wanted


def _factor_arrays(raw: np.ndarray, where: str, span: Span) -> list[np.ndarray]:
    """The U, V, W arrays of one archive entry, checked to be numeric 2-D tables."""
    if raw.dtype == object:
        parts = list(raw.ravel())
    elif raw.ndim == 3:
        parts = list(raw)
    else:
        parts = []
    if len(parts) != 3 or not all(isinstance(p, np.ndarray) and p.ndim == 2 for p in parts):
        _fail(f"{where} is not three factor matrices U, V, W (found an array of shape {raw.shape})", span)
    for letter, part in zip("UVW", parts):
        if part.dtype.kind not in "iuf":
            _fail(f"{where}: {letter} holds {part.dtype} values, not numbers", span)
        if part.dtype.kind == "f" and not np.isfinite(part).all():
            _fail(f"{where}: {letter} holds a value that is not finite", span)
    return parts


# What zipfile, zlib and numpy's .npy parser raise for a damaged archive.
_DAMAGED = (
    OSError, EOFError, ValueError, KeyError, NotImplementedError, RuntimeError, zipfile.BadZipFile, zlib.error, struct.error
)


def _archive_entry(path: Path, shape: Shape | None, key: str | None, allow_pickle: bool) -> tuple[np.ndarray, str]:
    """The chosen entry of an archive whose zip signature was checked, and its key."""
    span = _whole_file(path)
    try:
        archive = np.load(path, allow_pickle=allow_pickle)
    except _DAMAGED as error:
        _fail(f"cannot read {path.name} as an .npz archive: {error}", span)
    with archive:
        chosen = _choose_key(list(archive.files), key, shape, path)
        try:
            return archive[chosen], chosen
        except _DAMAGED as error:
            if isinstance(error, ValueError) and "allow_pickle" in str(error):
                _fail(
                    f"scheme {chosen} of {path.name} is a pickled object array; reading it runs code stored in the "
                    "file, so bilinear refuses unless you allow it",
                    span,
                    "if you trust the file, pass --allow-pickle (allow_pickle=True)",
                )
            _fail(f"cannot read scheme {chosen} of {path.name}: {error}", span)
        except Exception as error:
            if not allow_pickle:
                raise
            # Unpickling, which the user allowed, can raise anything at all.
            _fail(f"cannot unpickle scheme {chosen} of {path.name}: {type(error).__name__}: {error}", span)


def read_alphatensor(
    path: Path, shape: Shape | None = None, key: str | None = None, allow_pickle: bool = False
) -> Algorithm | ModularScheme:
    """One scheme of an AlphaTensor ``.npz`` archive (``key`` ``"n,m,p"``)."""
    span = _whole_file(path)
    try:
        with path.open("rb") as stream:
            magic = stream.read(4)
    except OSError as error:
        _fail(f"cannot read {path}: {error.strerror or error}", None)
    if magic != _ZIP_MAGIC:
        _fail(f"{path.name} is not an .npz archive (a zip file of arrays)", span)
    raw, chosen = _archive_entry(path, shape, key, allow_pickle)
    where = f"scheme {chosen} of {path.name}"
    try:
        dims = Shape(*(int(part) for part in chosen.split(",")))
    except (TypeError, ValueError):
        _fail(f"{where}: the key is not 'n,m,p'", span)
    if shape is not None:
        _shape_mismatch(dims, shape, f"the key {chosen!r}", span)
    u, v, w = _factor_arrays(raw, where, span)
    rank = u.shape[1]
    for letter, part, want in (("U", u, dims.m * dims.k), ("V", v, dims.k * dims.n), ("W", w, dims.n * dims.m)):
        if part.shape != (want, rank):
            _fail(f"{where}: {letter} is {part.shape[0]}x{part.shape[1]}; {dims} with {rank} products needs {want}x{rank}", span)
    modulus = 2 if path.stem.endswith("_f2") else 0
    if modulus and not all(np.all(np.mod(part, 1) == 0) for part in (u, v, w)):
        _fail(f"{where}: a scheme valid modulo {modulus} has integer coefficients", span)
    algorithm = _alphatensor_algorithm(u, v, w, dims, identifier(f"{path.stem}_{dims.m}x{dims.k}x{dims.n}"), where, span)
    return ModularScheme(algorithm, modulus) if modulus else algorithm


def _exact(value) -> Fraction:
    # Integers and binary floats (0.125) are exact rationals; Fraction keeps them so.
    return Fraction(int(value)) if float(value).is_integer() else Fraction(float(value))


def _alphatensor_algorithm(u, v, w, dims: Shape, name: str, where: str, span: Span) -> Algorithm:
    products = []
    for r in range(u.shape[1]):
        left = Form.of({block: _exact(c) for block, c in zip(dims.blocks("A"), u[:, r])})
        right = Form.of({block: _exact(c) for block, c in zip(dims.blocks("B"), v[:, r])})
        if left.is_zero() or right.is_zero():
            _fail(f"{where}: product {r + 1} has a zero factor (column {r + 1} of {'U' if left.is_zero() else 'V'})", span)
        products.append(Product(f"M{r + 1}", left, right, span))
    outputs = []
    for i in range(dims.m):
        for j in range(dims.n):
            row = w[j * dims.m + i]  # W runs over Cᵀ row-major: its row j·m + i is C_ij
            outputs.append(Output(block_name("C", i + 1, j + 1), Form.of({f"M{r + 1}": _exact(c) for r, c in enumerate(row)})))
    return Algorithm(name, dims, (), tuple(products), tuple(outputs), len(products), span, tabular=True)


# --- choosing a reader ----------------------------------------------------------------------

_BL_START = re.compile(r"^(algorithm|table|schedule|use)\b")


def detect_format(path: Path) -> str:
    """``'bl'`` or the catalogue format a file is in, from its suffix, else its content.

    Raises:
        BilinearError: when the file cannot be read.
    """
    suffix = path.suffix.lower()
    by_suffix = {".bl": "bl", ".npz": "alphatensor", ".sms": "plinopt", ".slp": "plinopt", ".exp": "kauers"}
    if suffix in by_suffix:
        return by_suffix[suffix]
    try:
        with path.open("rb") as stream:
            if stream.read(4) == _ZIP_MAGIC:
                return "alphatensor"
    except OSError:
        pass  # read_source below reports why the file cannot be read
    for line in read_source(path).splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _BL_START.match(stripped):
            return "bl"
        return "kauers" if stripped.startswith("(") else "fast-matmul"
    return "fast-matmul"


def read_catalogue(
    path: Path,
    format: str | None = None,
    shape: Shape | None = None,
    *,
    key: str | None = None,
    allow_pickle: bool = False,
) -> Scheme:
    """Read one scheme from a catalogue file.

    Args:
        path: the file (for plinopt, any of the ``_L``/``_R``/``_P`` files).
        format: one of :data:`FORMATS`; detected when omitted.
        shape: the block shape, where the file does not say it.
        key: which scheme of an AlphaTensor archive (``"3,3,3"``).
        allow_pickle: let AlphaTensor's pickled (rectangular) entries load;
            this runs code stored in the file, so only for trusted files.

    Returns:
        An exact Algorithm, or an ApproximateScheme or ModularScheme for
        schemes that are exact only in a limit or modulo p.

    Raises:
        BilinearError: located at the malformed line, entry or option.
    """
    path = Path(path)
    format = format or detect_format(path)
    if format == "bl":
        _fail(f"{path.name} is a .bl file; load it with bilinear.load, not as a catalogue scheme", None)
    if format not in FORMATS:
        _fail(f"unknown input format {format!r}; known: bl, {', '.join(FORMATS)}", None)
    if key is not None and format != "alphatensor":
        _fail(f"--key picks a scheme inside an AlphaTensor .npz archive; a {format} file holds one scheme", None)
    if format == "alphatensor":
        return read_alphatensor(path, shape, key, allow_pickle)
    reader = {"fast-matmul": read_fast_matmul, "plinopt": read_plinopt, "kauers": read_kauers}[format]
    return reader(path, shape)


__all__ = [
    "FORMATS",
    "Scheme",
    "detect_format",
    "identifier",
    "infer_shape",
    "parse_shape",
    "read_catalogue",
]
