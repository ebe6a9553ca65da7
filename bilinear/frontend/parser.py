"""Text to IR: the one Transformer that builds the IR from the lark tree.

The transformer evaluates expressions into :class:`~bilinear.ir.Form` values
(sums of named things), products of two forms, or plain numbers, and turns
each rule into an IR node with its source span.  The grammar is in
:mod:`bilinear.frontend.grammar`, the raw definitions it builds in
:mod:`bilinear.frontend.raw`, syntax errors in words in
:mod:`bilinear.frontend.syntax_errors`.  Name resolution and the checks that
need a whole definition live in :mod:`bilinear.frontend.check`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

from lark import Token, Transformer_NonRecursive, v_args
from lark.exceptions import UnexpectedInput, VisitError

from ..collector import cycles_uncollected
from ..diagnostics import BilinearError, Diagnostic
from ..ir import (
    Form,
    Multiply,
    Output,
    Product,
    Shape,
    Span,
    Stage,
    Sum,
    Temporary,
    Update,
    block_name,
    operand_of,
    shape_too_large,
)
from . import name_sums
from .formats.common import TOO_MANY_DIGITS
from .grammar import LARK, NAME_SUMS_LARK
from .raw import RawAlgorithm, RawDefinition, RawSchedule, RawTable, Use
from .syntax_errors import syntax_error
from .table_rows import row_values


# The parts of a BLOCK token (`B[10, 3]`), which the grammar matched whole.
_BLOCK = re.compile(r"(\w+)\[\s*(\d+)\s*,\s*(\d+)\s*\]")


@dataclass(frozen=True)
class _Bilinear:
    """The value of ``(left) * (right)`` while an expression is evaluated."""

    left: Form
    right: Form


class _Sum:
    """A sum being built.  ``a + b + c + …`` parses as a left-deep tree, and adding Forms pairwise
    would copy the growing sum at every step (10^4 terms took minutes); this accumulates in place,
    which is safe because each partial sum is consumed once, by its parent."""

    __slots__ = ("spans", "terms")

    def __init__(self, form: Form):
        self.terms: dict[str, Fraction] = dict(form.terms)
        self.spans: list = list(form.spans)

    def add(self, form: Form, sign: int) -> _Sum:
        terms = self.terms
        for name, coef in form.terms:  # (a Fraction's arithmetic with an int is slow: not sign * coef)
            coef = coef if sign > 0 else -coef
            terms[name] = coef if (before := terms.get(name)) is None else before + coef
        self.spans.extend(form.spans)
        return self

    def add_name(self, name: str, span: Span, coef: Fraction) -> None:
        """Add ``coef·name``, as add does ``Form.symbol(name, span)`` (frontend.name_sums' terms, without a Form each)."""
        terms = self.terms
        terms[name] = coef if (before := terms.get(name)) is None else before + coef
        self.spans.append((name, span))

    def form(self) -> Form:
        return Form.of(self.terms, self.spans)


def _done(value):
    """A finished value: a pending sum becomes its Form."""
    return value.form() if isinstance(value, _Sum) else value


_Value = Union[Fraction, Form, _Bilinear]


def _describe(value: _Value) -> str:
    if isinstance(value, Fraction):
        return "a number"
    if isinstance(value, Form):
        return f"the sum {value}"
    return "a product"


@v_args(meta=True)
class _ToIR(Transformer_NonRecursive):
    """Builds IR nodes; raises :class:`BilinearError` for mistakes inside a rule.

    Non-recursive, because ``a + b + ...`` is a left-deep tree: a sum of a few
    hundred terms would exhaust Python's recursion limit.
    """

    def __init__(self, path: str):
        super().__init__(visit_tokens=False)  # no rule is a token's: lark's look-up of each token's callback skipped
        self.path = path
        self._entries_read: dict[str, Fraction] = {}  # a table's entries by their text, each read once

    # --- helpers ---------------------------------------------------------
    def _span(self, meta) -> Span:
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _token_span(self, token: Token) -> Span:
        return Span(self.path, token.line, token.column, token.end_line, token.end_column)

    def _fail(self, message: str, span: Span, *notes: str) -> None:
        raise BilinearError(Diagnostic(message, span, notes=notes))

    # --- numbers and references ----------------------------------------------
    def number(self, meta, children):
        return Fraction(str(children[0]))

    def ref(self, meta, children):
        name, row, col = children
        span = self._span(meta)
        if row is None:
            return Form.symbol(str(name), span)
        return self._block(str(name), int(row), int(col), span)

    def block_ref(self, meta, children):
        name, row, col = _BLOCK.fullmatch(children[0]).groups()
        return self._block(name, int(row), int(col), self._span(meta))

    def _block(self, name: str, row: int, col: int, span: Span) -> Form:
        return Form.symbol(self._block_name(name, row, col, span), span)

    def _block_name(self, name: str, row: int, col: int, span: Span) -> str:
        if name not in ("A", "B", "C"):
            self._fail(f"only blocks of A, B and C take [row,col] indices, not {name}", span)
        if row < 1 or col < 1:
            self._fail(f"block indices start at 1: {name}[{row},{col}]", span)
        return block_name(name, row, col)

    def name_sum(self, meta, children):
        total, line = _Sum(Form()), children[0].line
        for coefficient, name, row, col, start, end in name_sums.terms(children[0]):
            span = Span(self.path, line, start, line, end)
            total.add_name(name if row is None else self._block_name(name, row, col, span), span, coefficient)
        return total

    # --- expressions ----------------------------------------------------------
    def add(self, meta, children):
        return self._combine(meta, children[0], children[1], 1)

    def sub(self, meta, children):
        return self._combine(meta, children[0], children[1], -1)

    def _combine(self, meta, left: _Value | _Sum, right: _Value | _Sum, sign: int) -> _Value | _Sum:
        right = _done(right)
        if isinstance(left, _Sum) and isinstance(right, Form):
            return left.add(right, sign)
        left = _done(left)
        if isinstance(left, Fraction) and isinstance(right, Fraction):
            return left + sign * right
        if isinstance(left, Form) and isinstance(right, Form):
            return _Sum(left).add(right, sign)
        if isinstance(left, _Bilinear) or isinstance(right, _Bilinear):
            self._fail(
                "a product cannot be added to other terms here",
                self._span(meta),
                "in an algorithm, name each product on its own line (M1 = ... * ...) and add the names; in a "
                "schedule, accumulate it (C11 += A11 * B11, or A11 * B11 -> +C11)",
            )
        self._fail(f"cannot add {_describe(left)} and {_describe(right)}", self._span(meta))

    def neg(self, meta, children):
        (value,) = map(_done, children)
        if isinstance(value, _Bilinear):
            return _Bilinear(-value.left, value.right)
        return -value

    def mul(self, meta, children):
        left, right = map(_done, children)
        if isinstance(left, Fraction):
            return self._scaled(right, left)
        if isinstance(right, Fraction):
            return self._scaled(left, right)
        if isinstance(left, Form) and isinstance(right, Form):
            return _Bilinear(left, right)
        self._fail(
            "a product has exactly two factors",
            self._span(meta),
            "write (sum of A blocks) * (sum of B blocks); name a product before using it",
        )

    def div(self, meta, children):
        value, divisor = map(_done, children)
        if not isinstance(divisor, Fraction):
            self._fail(f"can only divide by a number, not by {_describe(divisor)}", self._span(meta))
        if divisor == 0:
            self._fail("division by zero in a coefficient", self._span(meta))
        return self._scaled(value, 1 / divisor)

    @staticmethod
    def _scaled(value: _Value, factor: Fraction) -> _Value:
        if isinstance(value, _Bilinear):
            return _Bilinear(value.left.scale(factor), value.right)
        if isinstance(value, Form):
            return value.scale(factor)
        return value * factor

    # --- algorithms -------------------------------------------------------------
    def shape(self, meta, children):
        m, k, n, rank = children
        dims = [int(m), int(k), int(n)]
        if min(dims) < 1:
            self._fail(f"a shape needs positive block counts, not <{m},{k},{n}>", self._span(meta))
        if problem := shape_too_large(*dims):
            self._fail(problem, self._span(meta))
        return Shape(*dims), (int(rank) if rank is not None else None)

    def equation(self, meta, children):
        target, value = map(_done, children)
        return self._single_name(target), value, self._span(meta)

    def _single_name(self, form: Form) -> str:
        (name, _), = form.terms
        return name

    def algorithm(self, meta, children):
        name, (shape, rank), *equations = children
        sums, products, outputs = [], [], []
        for target, value, span in equations:
            if isinstance(value, Fraction):
                must = "a sum of products" if operand_of(target) == "C" else "a sum of blocks or a product"
                self._fail(f"{target} is a constant; it must be {must}", span)
            if operand_of(target) == "C":
                if isinstance(value, _Bilinear):
                    self._fail(
                        f"{target} is a product; name it (M = ... * ...) and write {target} as a sum of products",
                        span,
                    )
                outputs.append(Output(target, value, span))
            elif isinstance(value, _Bilinear):
                try:
                    products.append(Product(target, value.left, value.right, span))
                except ValueError as error:  # a zero factor: say so at the product's own line
                    self._fail(str(error), span)
            else:
                sums.append(Sum(target, value, span))
        return RawAlgorithm(str(name), shape, rank, tuple(sums), tuple(products), tuple(outputs), self._span(meta))

    # --- tables -------------------------------------------------------------------
    def sign(self, meta, children):
        return str(children[0])

    def table_row(self, meta, children):
        return row_values(children[0], self.path, self._entries_read), self._span(meta)

    def table_section(self, meta, children):
        letter, *rows = children
        return str(letter), tuple(rows), self._span(meta)

    def table(self, meta, children):
        name, (shape, rank), *sections = children
        return RawTable(str(name), shape, rank, tuple(sections), self._span(meta))

    # --- schedules ------------------------------------------------------------------
    def temp_decl(self, meta, children):
        *names, like = children
        if str(like) not in ("A", "B", "C"):
            self._fail(f"a temporary is shaped like an A, B or C block, not {str(like)!r}", self._token_span(like))
        return tuple(Temporary(str(n), str(like), self._token_span(n)) for n in names)

    def assign(self, meta, children):
        return str(children[0])

    def update(self, meta, children):
        target_form, op, value = (_done(c) for c in children)
        target, span = self._single_name(target_form), self._span(meta)
        if isinstance(value, Fraction):
            self._fail(f"cannot assign a number to {target}; statements combine buffers", span)
        sign = -1 if op == "-=" else 1
        if isinstance(value, _Bilinear):
            targets = Form.symbol(target, target_form.span_of(target)).scale(sign)
            return Multiply(value.left, value.right, targets, overwrite=(op == "="), span=span)
        if op == "=":
            return Update(target, value, span)
        return Update(target, Form.symbol(target) + value.scale(sign), span)

    def coefficient(self, meta, children):
        if len(children) == 1:  # a decimal, exact
            return Fraction(str(children[0]))
        numerator, denominator = children
        if denominator is not None and int(denominator) == 0:
            self._fail("division by zero in a coefficient", self._span(meta))
        return Fraction(int(numerator), int(denominator) if denominator is not None else 1)

    def target(self, meta, children):
        sign, coef, ref = children
        value = (coef if coef is not None else Fraction(1)) * (-1 if sign == "-" else 1)
        if value == 0:
            self._fail("a target coefficient cannot be zero", self._span(meta))
        return ref.scale(value)

    def multiply(self, meta, children):
        value, *targets = map(_done, children)
        span = self._span(meta)
        if not isinstance(value, _Bilinear):
            self._fail(
                f"the left side of '->' must be a product of two factors, not {_describe(value)}",
                span,
            )
        total = _Sum(Form())
        for target in targets:
            if target.names()[0] in total.terms:
                self._fail(f"{target.names()[0]} is named twice as a target", span)
            total.add(target, 1)
        return Multiply(value.left, value.right, total.form(), overwrite=False, span=span)

    def stage(self, meta, children):
        name, *statements = children
        return Stage(str(name), tuple(statements), self._span(meta))

    def schedule(self, meta, children):
        name, algorithm, *rest = children
        properties = [t for t in rest if isinstance(t, Token)]
        temporaries = tuple(t for group in rest if isinstance(group, tuple) for t in group)
        stages = tuple(s for s in rest if isinstance(s, Stage))
        return RawSchedule(
            str(name),
            str(algorithm),
            tuple((str(p), self._token_span(p)) for p in properties if p is not None),
            temporaries,
            stages,
            self._span(meta),
        )

    # --- files ---------------------------------------------------------------------
    def use_decl(self, meta, children):
        return Use(str(children[0])[1:-1], self._span(meta))

    def start(self, meta, children):
        uses = tuple(c for c in children if isinstance(c, Use))
        definitions = tuple(c for c in children if not isinstance(c, Use))
        return uses, definitions


def parse_text(text: str, path: str) -> tuple[tuple[Use, ...], tuple[RawDefinition, ...]]:
    """Parse one file's text into its uses and raw definitions.

    Raises:
        BilinearError: on a syntax error or a malformed expression.
    """
    with cycles_uncollected():
        lines = text if text.endswith("\n") else text + "\n"
        try:
            tree = NAME_SUMS_LARK.parse(lines)
        except UnexpectedInput:  # the language's own parser reads what the fast one does not, and says what is wrong
            try:
                tree = LARK.parse(lines)
            except UnexpectedInput as error:
                raise BilinearError(syntax_error(error, text, path)) from None
        name_sums.refuse_long_names(tree, path)
        return _transformed(tree, path)


def _transformed(tree, path: str) -> tuple[tuple[Use, ...], tuple[RawDefinition, ...]]:
    try:
        return _ToIR(path).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, BilinearError):
            raise error.orig_exc from None
        if isinstance(error.orig_exc, ValueError):  # an IR node refused what was written
            meta = getattr(error.obj, "meta", None)
            span = Span(path, meta.line, meta.column, meta.end_line, meta.end_column) if meta and not meta.empty else None
            message = str(error.orig_exc)
            if "integer string conversion" in message:  # Python's own limit, whose message names its internals
                message = TOO_MANY_DIGITS
            raise BilinearError(Diagnostic(message, span)) from None
        raise
