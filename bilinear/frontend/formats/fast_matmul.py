"""fast-matmul coefficient files (arbenson/fast-matmul ``codegen/algorithms``).

U, V and W blocks of numbers separated by ``#`` lines, one row per block
(row-major), one column per product; the shape is inferred from the row
counts or given.  Entries are rationals, or in ``*-approx`` files
coefficients in one parameter as fast-matmul's ``gen.py`` reads them
(``x``, ``-1/2x2``, ``2x``, ``xi`` = 1/x, ``(x+x2)``, ``(1+-x)``; the lark
grammar ``fast_matmul_coefficient.lark``) — an approximate scheme.
``eliminated`` files add rows to U and V and columns to W for common
subexpressions and, after ``# Substitution information``, three blocks
defining them (any may be empty): A-side sums ``A_X1…`` over A blocks,
B-side sums ``B_X1…`` over B blocks and output sums ``M_X1…`` over products
(fast-matmul's own names); they become named sums, so the shared additions
are kept and verified.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

from typing import TYPE_CHECKING

from lark import Lark, Transformer, UnexpectedInput
from lark.exceptions import VisitError

from ...ir import Algorithm, Form, Output, Product, Shape, Span, Sum, block_name
from ...verify.ring_approximate import is_laurent
from ...verify.rings import ApproximateScheme, ModularScheme
from ...diagnostics import brief, counted
from ..loader import read_source, source_lines
from .common import (check_side, fail, identifier, infer_shape, line_span, modulus_in_name, named_so, rank_mismatch, rational,
                     shape_mismatch, token_span, whole_file)

if TYPE_CHECKING:
    import sympy

Entry = "Fraction | sympy.Expr"


def _sympy():
    """sympy, imported where a coefficient holds a parameter: it takes 0.3 s, and exact files never need it."""
    import sympy

    return sympy


# gen.py reads each digit after a coefficient as another power (x99 is x^81), so a few characters
# compound to a power whose expansion never ends ((1+x)99999 is (1+x)^59049); the catalogue's reach x^4
MOST_POWER = 64


class _TooHighPower(ValueError):
    """A coefficient raised past MOST_POWER (its power)."""


class _Coefficient(Transformer):
    def number(self, children):
        return _sympy().Rational(str(children[0]))

    def scaled(self, children):
        return _sympy().Rational(str(children[0])) * children[1]

    def parameter(self, children):
        return _sympy().Symbol(str(children[0]))

    def negative(self, children):
        return -children[0]

    def reciprocal(self, children):
        if children[0] == 0:
            raise ZeroDivisionError
        return 1 / children[0]

    def power(self, children):
        value = children[0] ** int(children[1])
        highest = max((abs(p.exp) for p in value.atoms(_sympy().Pow)), default=0)
        if highest > MOST_POWER:  # checked as powers compound, before anything expands them
            raise _TooHighPower(int(highest))
        return value

    def total(self, children):
        return _sympy().Add(*children)


_EXPONENT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+")


@cache
def _coefficient_parser() -> Lark:
    return Lark.open("fast_matmul_coefficient.lark", rel_to=__file__, start="coefficient", parser="lalr")


def _parsed(token: str):
    """The expression gen.py's grammar reads ``token`` as, or None where it reads none or one that
    divides by zero (``0i``, the reciprocal of a sum that is zero: ``(1+-1)i``)."""
    try:
        return _Coefficient().transform(_coefficient_parser().parse(token))
    except VisitError as error:  # lark wraps what a rule raised
        if isinstance(error.orig_exc, ZeroDivisionError):
            return None
        if isinstance(error.orig_exc, _TooHighPower):
            raise error.orig_exc from None
        raise
    except (UnexpectedInput, ZeroDivisionError):
        return None


def entry(token: str, span: Span) -> Entry:
    """One coefficient: a Fraction, or a sympy expression in a parameter."""
    if not any(c.isalpha() for c in token) or _EXPONENT.fullmatch(token):  # 1e5: a number, as gen.py's float() reads it
        return rational(token, span)
    try:
        value = _parsed(token)
    except _TooHighPower as power:
        fail(f"{token!r} raises to a power of at least {power} (each digit after a coefficient is another power, as gen.py "
             f"reads it); powers past {MOST_POWER} are refused", span)
    except RecursionError:  # its tree's transform recurses once per suffix or parenthesis
        fail(f"{brief(repr(token), 40)} nests too deeply to read", span)
    if value is None:
        fail(
            f"{token!r} is not a coefficient",
            span,
            "entries are rationals (3, -1/2, 0.25) or, as fast-matmul's gen.py reads them, expressions in one "
            "parameter: x, -x, 2x, x2 (x squared), xi (1/x), -1/2x2i, (x+x2), (1+-x)",
        )
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    if len(value.free_symbols) > 1:  # refused for the whole scheme, where its parameters are gathered
        return value
    (parameter,) = value.free_symbols
    if not is_laurent(value, parameter):  # gen.py reads the reciprocal of a sum, (1+x)i
        fail(f"{token!r} is {value}, not a Laurent polynomial in {parameter} (a sum of rational multiples of "
             f"powers of {parameter})", span)
    return value


@dataclass(frozen=True)
class Row:
    """One line of numbers and where it is."""

    entries: tuple[Entry, ...]
    span: Span


@dataclass(frozen=True)
class Section:
    """A block of rows and the ``#`` line that opened it (``""`` for none); ``rows`` may be empty."""

    rows: tuple[Row, ...]
    heading: str
    heading_span: Span

    @property
    def span(self) -> Span:
        return self.rows[0].span if self.rows else self.heading_span

    @property
    def width(self) -> int:
        """What most rows hold (the first row's among equals): a long first row alone is the wrong one."""
        return Counter(len(row.entries) for row in self.rows).most_common(1)[0][0]


def sections(text: str, path: Path) -> tuple[list[Section], list[Section]]:
    """(U, V, W, ...) and the substitution blocks, which may be empty, of a file."""
    groups: list[Section] = []
    rows: list[Row] = []
    heading, heading_span = "", whole_file(path)
    for number, line in enumerate(source_lines(text), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            groups.append(Section(tuple(rows), heading, heading_span))
            rows, heading, heading_span = [], stripped, line_span(path, number, line)
            continue
        if not stripped:
            continue
        columns = [(i + 1, t) for i, t in _tokens(line)]
        rows.append(Row(tuple(entry(t, token_span(path, number, c, t)) for c, t in columns), line_span(path, number, line)))
    groups.append(Section(tuple(rows), heading, heading_span))
    # The heading after U, V and W: a comment above U naming substitutions is a comment (gen.py reads none)
    where = next((i for i, g in enumerate(groups)
                  if "substitution" in g.heading.lower() and sum(1 for h in groups[:i] if h.rows) >= 3), len(groups))
    main = [g for g in groups[:where] if g.rows]
    subs = groups[where:]
    if subs:  # A-side, B-side and product substitutions, each possibly empty
        surplus = [g for g in subs[3:] if g.rows]
        if surplus:
            fail("expected three substitution blocks (A side, B side, products) after '# Substitution information'; "
                 f"found {3 + len(surplus)}", surplus[0].span)
        subs = subs[:3] + [Section((), "#", subs[-1].heading_span)] * (3 - len(subs))
    return main, subs


def _tokens(line: str):
    position = 0
    for token in line.split():
        position = line.index(token, position)
        yield position, token
        position += len(token)


def _check_main(main: list[Section], subs: list[Section], path: Path) -> None:
    if len(main) < 3:
        fail(f"expected U, V and W blocks separated by '#' lines; found {len(main)}", whole_file(path))
    if len(main) > 3:
        fail(
            f"found {len(main)} blocks of numbers; a fast-matmul file has U, V and W, and only an eliminated "
            "scheme has more (three blocks after a '# Substitution information' line)",
            main[3].span,
        )


def _check_widths(section: Section, letter: str, width: int, meaning: str) -> None:
    for row in section.rows:
        if len(row.entries) != width:
            fail(f"this row of {letter} has {len(row.entries)} entries; it needs {width}, {meaning}", row.span)


#: fast-matmul's names: a scheme's author, its shape, products and additions (grey333-23-152,
#: eliminated-grey333-23-125, bini322-10-52-approx)
_NAME = re.compile(r"(?:eliminated-)?[A-Za-z]+([1-9])([1-9])([1-9])-([0-9]+)-[0-9]+(?:-approx)?")


def name_facts(path: Path) -> tuple[Shape | None, int | None, str]:
    """(shape, product count, where they came from) from a fast-matmul name, or (None, None, "")."""
    named = _NAME.fullmatch(path.name)
    if named is None:
        return None, None, ""
    return Shape(*(int(g) for g in named.groups()[:3])), int(named.group(4)), f"the name '{path.name}'"


def _shape(main: list[Section], extra: tuple[int, int, int], shape: Shape | None, path: Path) -> Shape:
    # Substitution rows extend U and V; the product substitutions extend W's columns, not its rows.
    rows_a, rows_b, rows_c = len(main[0].rows) - extra[0], len(main[1].rows) - extra[1], len(main[2].rows)
    named, _, origin = name_facts(path)
    if named is not None and shape is not None:
        shape_mismatch(named, shape, origin, whole_file(path))
    source = f", as {origin} says," if named is not None and shape is None else ""
    shape = shape or named  # the name's: a truncated file had read as another shape
    if shape is None:
        shape = infer_shape(rows_a, rows_b, rows_c)
        if shape is None:
            fail(f"cannot infer the shape from {rows_a}, {rows_b} and {rows_c} rows; give --shape m,k,n", whole_file(path))
        check_side(shape, f"the row counts of {path.name}", whole_file(path))
    for letter, section, operand, sub_rows in zip("UVW", main, "ABC", (*extra[:2], 0)):
        want = len(shape.blocks(operand))
        if len(section.rows) - sub_rows != want:
            rows, cols = shape.grid(operand)
            substitutions = f" plus {sub_rows} substitution rows" if sub_rows else ""
            fail(
                f"{letter} has {counted(len(section.rows), 'row')}; {shape}{source} needs {want}"
                f"{substitutions}, one per {operand} block "
                f"({block_name(operand, 1, 1)}..{block_name(operand, rows, cols)}, row-major)",
                section.span,
            )
    return shape


def read_fast_matmul(path: Path, shape: Shape | None = None) -> Algorithm | ApproximateScheme | ModularScheme:
    """A fast-matmul coefficient file: exact, eliminated (with named sums) or approximate; a ModularScheme
    where its name marks it valid modulo p (`mod2`), as the other formats' names do."""
    main, subs = sections(read_source(path, text_of="fast-matmul text"), path)
    _check_main(main, subs, path)
    extra = tuple(len(s.rows) for s in subs) if subs else (0, 0, 0)
    shape = _shape(main, extra, shape, path)
    rank = main[0].width
    _check_widths(main[0], "U", rank, "one per product")
    _check_widths(main[1], "V", rank, "one per product")
    widths = {len(row.entries) for row in main[2].rows}
    cut = (f"; every row of W has {max(widths)}: {max(widths) - rank} product substitutions, but the last block has "
           f"{extra[2]} rows (is the file cut short?)") if subs and len(widths) == 1 and max(widths) > rank + extra[2] else ""
    _check_widths(main[2], "W", rank + extra[2], "one per product" + (" and one per product substitution" if subs else "") + cut)
    rank_mismatch(name_facts(path)[1], rank, f"the name '{path.name}'", whole_file(path))
    for section, letter, width in zip(subs, "ABM", (shape.m * shape.k, shape.k * shape.n, rank)):
        meaning = "one per product" if letter == "M" else f"one per {letter} block"
        _check_widths(section, f"the {letter} substitutions", width, meaning)
    parameters = {
        s for section in main + subs for row in section.rows for e in row.entries
        if not isinstance(e, Fraction) for s in e.free_symbols
    }
    if parameters:
        return _approximate(main, subs, shape, parameters, path)
    algorithm = _exact(main, subs, shape, extra, path)
    return ModularScheme(algorithm, modulus, named_so(path)) if (modulus := modulus_in_name(path)) else algorithm


def _approximate(main: list[Section], subs: list[Section], shape: Shape, parameters: set, path: Path) -> ApproximateScheme:
    if len(parameters) > 1:
        fail(f"an approximate scheme has one parameter; this one has {', '.join(sorted(map(str, parameters)))}", main[0].span)
    if any(s.rows for s in subs):
        fail("substitutions in an approximate scheme are not supported; give the scheme without them", subs[0].span)
    tables = [tuple(tuple(_symbolic(e) for e in row.entries) for row in section.rows) for section in main]
    spans = tuple(tuple(row.span for row in section.rows) for section in main)
    _check_factors_nonzero(main)
    return ApproximateScheme(identifier(path.name), shape, parameters.pop(), *tables, spans, whole_file(path))


def _symbolic(value: Entry) -> sympy.Expr:
    return _sympy().Rational(value.numerator, value.denominator) if isinstance(value, Fraction) else value


def _check_factors_nonzero(main: list[Section]) -> None:
    """Every product needs a nonzero column in U and in V."""
    for letter, section in zip("UV", main):
        for r in range(section.width):
            if not any(row.entries[r] != 0 for row in section.rows):
                fail(f"product {r + 1} has a zero factor: column {r + 1} of {letter} is all zero", section.span)


def _exact(main: list[Section], subs: list[Section], shape: Shape, extra: tuple[int, ...], path: Path) -> Algorithm:
    rank = main[0].width
    a_names = list(shape.blocks("A")) + [f"A_X{s + 1}" for s in range(extra[0])]
    b_names = list(shape.blocks("B")) + [f"B_X{s + 1}" for s in range(extra[1])]
    m_names = [f"M{r + 1}" for r in range(rank)]
    w_names = m_names + [f"M_X{s + 1}" for s in range(extra[2])]
    _check_factors_nonzero(main)
    sums = []
    for section, prefix, bases in zip(subs, ("A_X", "B_X", "M_X"), (a_names, b_names, m_names)):
        for s, row in enumerate(section.rows):
            form = Form.of({name: c for name, c in zip(bases, row.entries) if c})
            if form.is_zero():
                fail(f"substitution {prefix}{s + 1} is all zero", row.span)
            sums.append(Sum(f"{prefix}{s + 1}", form, row.span))
    products = tuple(
        Product(m_names[r], _column(main[0].rows, a_names, r), _column(main[1].rows, b_names, r), main[0].span)
        for r in range(rank)
    )
    outputs = tuple(
        Output(block, Form.of({n: c for n, c in zip(w_names, row.entries) if c}), row.span)
        for block, row in zip(shape.blocks("C"), main[2].rows)
    )
    has_subs = any(s.rows for s in subs)
    return Algorithm(identifier(path.name), shape, tuple(sums), products, outputs, rank, whole_file(path), tabular=not has_subs)


def _column(rows: tuple[Row, ...], names: list[str], r: int) -> Form:
    """Column r of U or V as a factor; each term remembers its row's line (a fix names that line)."""
    used = [(name, row) for name, row in zip(names, rows) if row.entries[r]]
    return Form.of({name: row.entries[r] for name, row in used}, [(name, row.span) for name, row in used])


_TWO_LETTERS = re.compile(r"[a-hj-z][a-hj-z]")  # no parameter is named so


def looks_like_fast_matmul(text: str) -> bool:
    """Rows of whitespace-separated coefficients (digits, ``/ . - + ( )`` and parameter letters, a
    letter followed by nothing but ``i`` and digits, as gen.py's ``x2i``), each row with a digit,
    in blocks separated by ``#`` lines: lowercase prose ("this is a note") is not taken for one."""
    rows, unlike = _rows(text)
    return rows > 0 and not unlike


def first_unlike_row(text: str) -> int | None:
    """The first line that keeps ``text`` from reading as fast-matmul, where at least two thirds of its
    rows (three or more) do: a typo in a file without a suffix, which detection cannot place."""
    rows, unlike = _rows(text)
    return unlike[0] if unlike and rows >= max(3, 2 * len(unlike)) else None


def _rows(text: str) -> tuple[int, list[int]]:
    """How many rows (of the first 5000 lines) read as fast-matmul's, and the line numbers of those that do not."""
    rows, unlike = 0, []
    for number, line in enumerate(source_lines(text)[:5000], 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if (all(c.isdigit() or c in "/.-+() \t" or ("a" <= c <= "z") for c in stripped)
                and any(c.isdigit() for c in stripped) and not _TWO_LETTERS.search(stripped)):
            rows += 1
        else:
            unlike.append(number)
    return rows, unlike
