"""What every catalogue reader shares: locations, names, shapes, size limits, tables to algorithms.

Readers report malformed input as a :class:`~bilinear.diagnostics.BilinearError`
located at file:line:col; these helpers build those errors and the exact
:class:`~bilinear.ir.Algorithm` a table of coefficients describes.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

from ...diagnostics import BilinearError, Diagnostic, brief, counted
from ...ir import Algorithm, Form, Output, Product, Shape, Span, parse_block
from ...ir.names import KEYWORDS, LONGEST_NAME

# The largest block grid a catalogue scheme may declare: AlphaTensor's biggest
# is ⟨11,11,11⟩ and Perminov's ⟨16,16,16⟩; beyond this a header is a typo or an attack.
MAX_SIDE = 64


def fail(message: str, span: Span | None, *notes: str):
    """Raise one located diagnostic."""
    raise BilinearError(Diagnostic(message, span, notes=notes))


def whole_file(path: Path) -> Span:
    return Span.whole_file(path)


def token_span(path: Path, line_number: int, column: int, text: str) -> Span:
    return Span(str(path), line_number, column, line_number, column + max(1, len(text)))


def line_span(path: Path, line_number: int, line: str) -> Span:
    return Span(str(path), line_number, 1, line_number, len(line) + 1)


# The Mathematica and Kauers readers hand their text to Python's parser, which refuses a whole number
# with leading zeros (007: the catalogues' 7) and reads some the catalogues never write (0x1, 0b1, 0o1,
# 1_0).  The zeros become spaces first, columns kept, and every literal the tree holds is checked.
_LEADING_ZEROS = re.compile(r"(?<![\w.])0+(?=[0-9])")


def blank_leading_zeros(text: str) -> str:
    """``text`` with the leading zeros of its whole numbers as spaces (``007`` as ``  7``)."""
    return _LEADING_ZEROS.sub(lambda zeros: " " * len(zeros.group()), text)


def check_decimal(literal: str, span: Span) -> None:
    """Refuse a whole number written any other way than in decimal digits, where it stands."""
    if not literal.isascii() or not literal.isdigit():
        fail(f"'{literal}' is not a whole number in decimal digits", span)


# Python reads and writes integers of at most this many digits as text; a coefficient past it
# is refused before it is computed (``Fraction("1e1000000000")`` computes 10**1000000000).
MAX_DIGITS = sys.get_int_max_str_digits() or 4300
TOO_MANY_DIGITS = f"a number of more than {MAX_DIGITS} digits cannot be read"
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)$")
# p/q, or a decimal with an exponent perhaps: what the catalogues write, in ASCII digits only
_ASCII_NUMBER = re.compile(r"[+-]?(?:[0-9]+/[0-9]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


class TooManyDigits(ValueError):
    """A number past :data:`MAX_DIGITS`, refused before it was computed."""


def past_digit_limit(error: SyntaxError) -> bool:
    """Whether Python's parser stopped at its digit limit, in words that name its internals ("use
    sys.set_int_max_str_digits"): the readers that parse with ``ast`` say TOO_MANY_DIGITS instead."""
    return "integer string conversion" in (error.msg or "")


def python_tree(text: str, mode: str = "eval") -> ast.AST:
    """``ast.parse(text, mode)`` without Python's SyntaxWarnings of what it reads with a doubt (``1if`` as
    ``1 if``, ``"\\d"``): printed as ``<unknown>:1: SyntaxWarning: invalid decimal literal``, they name no file
    and speak of Python, and the readers say in their own words what they refuse.

    Raises:
        SyntaxError: as ast.parse does, for the readers to locate.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return ast.parse(text, mode=mode)


def exact_fraction(text: str) -> Fraction:
    """``Fraction(text)``, its digits and exponent bounded by :data:`MAX_DIGITS` first.

    Raises:
        TooManyDigits: the value would have more than MAX_DIGITS digits.
        ValueError, ZeroDivisionError: as ``Fraction`` does for malformed text.
    """
    text = text.strip()  # as Fraction() takes it: a JSON string " 1/2"
    if not _ASCII_NUMBER.fullmatch(text):  # Fraction() also reads 1_0 as 10, and any script's digits
        raise ValueError(f"{brief(text)!r} is not a number in ASCII decimal digits")
    exponent = _EXPONENT.search(text)
    # each of p/q within the limit is read (Python's limit is per number; the writers check each)
    digits = max(sum(c.isdigit() for c in part) for part in (text[: exponent.start()] if exponent else text).split("/"))
    if exponent:
        power = exponent.group(1).replace("_", "")
        digits += abs(int(power)) if len(power) <= 12 else MAX_DIGITS + 1
    if digits > MAX_DIGITS:
        raise TooManyDigits(f"{brief(text)!r}: {TOO_MANY_DIGITS}")
    return Fraction(text)


def rational(token: str, span: Span) -> Fraction:
    """``3``, ``-1/2``, ``0.25`` as an exact Fraction, or a located error."""
    try:
        return exact_fraction(token)
    except TooManyDigits as error:
        raise BilinearError(Diagnostic(str(error), span)) from None
    except (ValueError, ZeroDivisionError):
        raise BilinearError(Diagnostic(f"{token!r} is not a rational coefficient", span)) from None


def shape_mismatch(found: Shape, given: Shape, where: str, span: Span) -> None:
    if found != given:
        fail(f"{where} says {found}, but the shape given is {given}", span)


def rank_mismatch(named: int | None, rank: int, where: str, span: Span | None) -> None:
    """Refuse a scheme whose file name gives another product count (a truncated file, most
    likely: it had read as a smaller scheme), as ``export`` refuses to write one."""
    if named is not None and named != rank:
        fail(f"{where} says {counted(named, 'product')}, but it holds {rank}", span)


def check_side(shape: Shape, where: str, span: Span | None) -> Shape:
    """A declared shape, refused before anything is allocated when a side is 0 or absurd."""
    for side in (shape.m, shape.k, shape.n):
        if not 1 <= side <= MAX_SIDE:
            fail(f"{where} declares {shape}; every side must be between 1 and {MAX_SIDE}", span)
    return shape


# Numbers apart by ",", "x" or "×": "2,3,4", "2x3x4", "2 × 3 × 4" (ASCII digits: int() reads any script's)
_NUMBERS = re.compile(r"\s*[0-9]+\s*(?:[,x×]\s*[0-9]+\s*)*")


def comma_separated(text: str) -> str:
    """Numbers apart by "x" or "×" as "2,3,4" (--shape and --key take both spellings); any other text
    as it is, stripped ("max" holds an x but no dimensions)."""
    if not _NUMBERS.fullmatch(text):
        return text.strip()
    return ",".join(part.strip() for part in re.split("[,x×]", text))


def parse_shape(text: str | None) -> Shape | None:
    """``"2,3,4"`` (or ``"2x3x4"``) to a Shape; raises a BilinearError (without location) when malformed."""
    if text is None:
        return None
    try:
        dims = comma_separated(text)
        if not dims.isascii() or "_" in dims:  # int() reads 1_0 as 10, and any script's digits
            raise ValueError(text)
        m, k, n = (int(part) for part in dims.split(","))
        return check_side(Shape(m, k, n), "--shape", None)
    except ValueError:
        raise BilinearError(Diagnostic(f"--shape (shape=) must be three positive whole numbers m,k,n, not {text!r}")) from None


def _divisors(number: int) -> list[int]:
    small = [d for d in range(1, int(number**0.5) + 1) if number % d == 0]
    return sorted(set(small + [number // d for d in small]))


def infer_shape(rows_a: int, rows_b: int, rows_c: int) -> Shape | None:
    """The unique ⟨m,k,n⟩ with mk, kn, mn rows, if there is one (m ranges over the divisors of mk)."""
    if min(rows_a, rows_b, rows_c) < 1:
        return None
    candidates = []
    for m in _divisors(rows_a):
        k = rows_a // m
        if rows_b % k == 0 and m * (rows_b // k) == rows_c:
            candidates.append(Shape(m, k, rows_b // k))
    return candidates[0] if len(candidates) == 1 else None


def identifier(text: str, prefix: str = "scheme") -> str:
    """A valid .bl name made from a file name: ``grey333-23-152`` → ``grey333_23_152``.

    Names that would not be one (``378-ffdb``, ``A12``, ``table``) get ``prefix_`` in front.
    """
    name = re.sub(r"\W", "_", text, flags=re.ASCII)
    if not re.match(r"[A-Za-z_]", name) or parse_block(name) or name in KEYWORDS:
        name = f"{prefix}_{name}"
    return name[:LONGEST_NAME]  # (a file's name of 255 bytes, with the prefix, would be past it)


def named_so(path: Path) -> str:
    """A modular scheme's reason where its file's name gives the modulus (``mod2``, ``_f2``, ``Z2``)."""
    return f"the name {path.name} says so"


def modulus_in_name(path: Path) -> int:
    """``p`` for a ``modp`` token in the file name (``mod2``, ``MOD2``: suffixes are read in any case
    too; PLinOpt writes ``mod_2``), 0 for ``mod0`` or none (over Q)."""
    modulus = 0
    joined = re.sub(r"mod[-_]([0-9])", r"mod\1", path.name.lower())  # mod_2 is mod2
    for token in re.split(r"[-_.]", joined):
        match = re.fullmatch(r"mod([0-9]+)[a-z]?", token)
        if match:
            modulus = int(match.group(1))
    if modulus == 1:
        fail(f"'mod1' in the name {path.name}: a modulus is at least 2 ('mod0' means over Q)", whole_file(path))
    return modulus


Table = Sequence[Sequence[Fraction]]
Spans = Sequence[Sequence[Span]]  # aligned with a Table: where each of its entries is written


def algorithm_from_tables(
    name: str,
    shape: Shape,
    u: Table,
    v: Table,
    w: Table,
    where: str,
    span: Span,
    product_spans: Sequence[Span] | None = None,
    output_spans: Sequence[Span] | None = None,
    entry_spans: tuple[Spans, Spans, Spans] | None = None,
) -> Algorithm:
    """The algorithm of U (one row per A block, row-major), V (B blocks) and W (C blocks), one column per product.
    With ``entry_spans`` (U's, V's and W's) a fix is told its entry's line, and a C block is located at its
    first entry (``output_spans`` or ``span`` otherwise).

    Raises:
        BilinearError: a product with a zero factor, located at ``span``.
    """
    u_spans, v_spans, w_spans = entry_spans or (None, None, None)
    rank = len(u[0]) if u else 0
    products = []
    for r in range(rank):
        left = Form.of(*_terms(shape.blocks("A"), [row[r] for row in u], u_spans and [row[r] for row in u_spans]))
        right = Form.of(*_terms(shape.blocks("B"), [row[r] for row in v], v_spans and [row[r] for row in v_spans]))
        if left.is_zero() or right.is_zero():
            table = "U" if left.is_zero() else "V"
            fail(f"{where}: product {r + 1} has a zero factor (column {r + 1} of {table})", span)
        products.append(Product(f"M{r + 1}", left, right, product_spans[r] if product_spans else span))
    outputs, names = [], [f"M{r + 1}" for r in range(rank)]
    for i, (block, row) in enumerate(zip(shape.blocks("C"), w)):
        terms, spans = _terms(names, row, w_spans and w_spans[i])
        located = spans[0][1] if spans else (output_spans[i] if output_spans else span)
        outputs.append(Output(block, Form.of(terms, spans), located))
    return Algorithm(name, shape, (), tuple(products), tuple(outputs), rank, span, tabular=True)


def _terms(names: Sequence[str], values: Sequence[Fraction], spans: Sequence[Span] | None):
    """One column of U or V (or a row of W) as a form's terms by name, its zeros left out, and where each
    term is written (none without ``spans``)."""
    kept = [(name, value, where) for name, value, where in zip(names, values, spans or [None] * len(values)) if value]
    return {name: value for name, value, _ in kept}, [(name, where) for name, _, where in kept if where is not None]


def transposed_c_rows(w_by_ct: Table, shape: Shape) -> list:
    """W's rows reordered from Cᵀ row-major (the trace convention: row j·m + i is C_ij) to C row-major."""
    return [w_by_ct[j * shape.m + i] for i in range(shape.m) for j in range(shape.n)]


def unresolved(algorithm: Algorithm) -> str | None:
    """What is wrong with the names of an algorithm a reader built from named parts (fresh sums,
    substitutions), or None: a name used but defined nowhere, or a named sum that uses itself.  A
    ``.bl`` file gets these from :mod:`bilinear.frontend.check`, with lines."""
    shape = algorithm.shape
    defined = {*shape.blocks("A"), *shape.blocks("B"), *(s.name for s in algorithm.sums), *(p.name for p in algorithm.products)}
    forms = [s.form for s in algorithm.sums] + [f for p in algorithm.products for f in (p.left, p.right)]
    for form in [*forms, *(o.form for o in algorithm.outputs)]:
        for name in form.names():
            if name not in defined:
                return f"uses {name}, which is not defined"
    uses = {s.name: [n for n in s.form.names()] for s in algorithm.sums}
    done: set[str] = set()
    for start in uses:  # depth-first, iteratively: a chain of sums may be thousands long
        path, stack = set(), [(start, iter(uses[start]))]
        path.add(start)
        while stack:
            name, pending = stack[-1]
            child = next((n for n in pending if n in uses and n not in done), None)
            if child is None:
                stack.pop()
                path.discard(name)
                done.add(name)
            elif child in path:
                return f"has a named sum, {child}, that depends on itself"
            else:
                path.add(child)
                stack.append((child, iter(uses[child])))
    return None
