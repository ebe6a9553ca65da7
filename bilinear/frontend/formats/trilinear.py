"""One product line of a Kauers or flips ``.exp`` file: (Σ a)·(Σ b)·(Σ c).

A line is an arithmetic expression of entries (``a11``…``c99``) and whole
numbers with ``+ - * /`` and parentheses (a number may stand right before
the entry it multiplies, ``2b21``, and factors may stand side by side,
``(…) (…) (…)``: stars are put in), which is a subset of Python's
expression grammar: Python's own parser (:func:`ast.parse`, written in C)
reads it into a tree — nothing is evaluated — and :func:`_value` keeps what
makes it one product: every factor is a sum of entries of one letter,
numbers scale factors, nothing else.  A lark grammar read the same lines at
a tenth of the speed (2 minutes for Kauers' catalogue), which is why this
reader uses ``ast``.  Numbers that multiply the whole product
(``(...)*(...)*(...)/3``) scale the c factor; a number next to one sum
(``3*(9*a11 - a12)``) scales that sum.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ...ir import Span
from .common import TOO_MANY_DIGITS, blank_leading_zeros, check_decimal, fail, past_digit_limit, python_tree

_LETTERS = "abc"
_ENTRY = re.compile(r"([abc])([1-9])([1-9])")
WHOLE_PRODUCT = "a product is (sum of a-entries)*(sum of b-entries)*(sum of c-entries)"
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


@dataclass(frozen=True)
class Factor:
    """A sum of entries of one letter: ``{(row, col): coefficient}``."""

    letter: str
    terms: dict[tuple[int, int], Fraction]

    def scaled(self, by: Fraction | int) -> Factor:
        if by == 1:
            return self
        return Factor(self.letter, {key: c * by for key, c in self.terms.items()})


@dataclass(frozen=True)
class Term:
    """A product of factors (at most one per letter) times a number; a plain number has no factors."""

    scale: Fraction | int
    factors: dict[str, Factor] = field(default_factory=dict)


@dataclass(frozen=True)
class TrilinearProduct:
    """One line: the a, b and c factors, where each entry was first written, and the line."""

    factors: tuple[dict[tuple[int, int], Fraction], ...]
    entry_spans: dict[tuple[str, int, int], Span]
    span: Span


class _Line:
    """The state of reading one line: where it is, and where each entry was first seen."""

    def __init__(self, path: Path, number: int, text: str, indent: int, inserted: list[int]):
        self.path, self.number, self.text = path, number, text
        self.indent, self.inserted = indent, inserted
        self.entry_spans: dict[tuple[str, int, int], Span] = {}

    def column(self, offset: int) -> int:
        """The 1-based column in the file of an offset into the text Python parsed."""
        return offset + 1 + self.indent - bisect.bisect_right(self.inserted, offset)

    def chars(self, byte_offset: int) -> int:
        """An offset of ast's (UTF-8 bytes) in characters of the text."""
        return byte_offset if self.text.isascii() else len(self.text.encode()[:byte_offset].decode(errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        end = self.chars(node.end_col_offset) if node.end_lineno == node.lineno else len(self.text)
        start = self.column(self.chars(node.col_offset))
        return Span(str(self.path), self.number, start, self.number, max(self.column(end), start + 1))

    def value(self, node: ast.AST) -> Term:
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub):
            return self.sum(node)
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Mult, ast.Div):
            return self.product(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.value(node.operand)
            return _scale(inner, -1) if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Constant) and type(node.value) is int:
            check_decimal(self.text.encode()[node.col_offset:node.end_col_offset].decode(), self.span(node))
            return Term(node.value)
        if isinstance(node, ast.Name):
            return self.entry(node)
        return self.unexpected(node)

    def unexpected(self, node: ast.AST):
        if isinstance(node, ast.BinOp):
            fail(f"unexpected operator in a product: only + - * / are allowed; {WHOLE_PRODUCT}", self.span(node))
        one_line = node.end_lineno == node.lineno
        found = self.text[self.chars(node.col_offset): self.chars(node.end_col_offset)] if one_line else "this"
        fail(f"unexpected {found!r} in a product: expected entries such as a11, whole numbers, + - * / and parentheses", self.span(node))

    def entry(self, node: ast.Name) -> Term:
        match = _ENTRY.fullmatch(node.id)
        if match is None:
            letter = node.id[0] if node.id[0] in _LETTERS else "a"
            fail(f"expected an entry {letter}11..{letter}99, found '{node.id}'", self.span(node))
        letter, i, j = match.group(1), int(match.group(2)), int(match.group(3))
        self.entry_spans.setdefault((letter, i, j), self.span(node))
        return Term(1, {letter: Factor(letter, {(i, j): 1})})

    def chain(self, node: ast.BinOp, operators: tuple[type, ...]) -> tuple[ast.AST, list[tuple[ast.BinOp, ast.AST]]]:
        """``x op y op z`` as (x, [(node, y), (node, z)]), walked without recursion (sums may be long)."""
        rest = []
        while isinstance(node, ast.BinOp) and type(node.op) in operators:
            rest.append((node, node.right))
            node = node.left
        return node, rest[::-1]

    def sum(self, node: ast.BinOp) -> Term:
        first, rest = self.chain(node, (ast.Add, ast.Sub))
        values = [(1, self.value(first))] + [(-1 if isinstance(op.op, ast.Sub) else 1, self.value(r)) for op, r in rest]
        if not any(t.factors for _, t in values):
            return Term(sum(sign * t.scale for sign, t in values))
        factors = [_single(t) for _, t in values]
        if None in factors:
            which = "a number" if any(not t.factors for _, t in values) else "a product of factors"
            fail(f"a sum adds {which} to entries: {WHOLE_PRODUCT}", self.span(node))
        letters = sorted({f.letter for f in factors})
        if len(letters) > 1:
            fail(f"a sum mixes {letters[0]}- and {letters[1]}-entries: {WHOLE_PRODUCT}", self.span(node))
        combined: dict[tuple[int, int], Fraction] = {}
        for (sign, _), factor in zip(values, factors):
            for key, c in factor.terms.items():
                combined[key] = combined.get(key, 0) + sign * c
        return Term(1, {letters[0]: Factor(letters[0], combined)})

    def product(self, node: ast.BinOp) -> Term:
        first, rest = self.chain(node, (ast.Mult, ast.Div))
        result = self.value(first)
        for op, operand in rest:
            right = self.value(operand)
            if isinstance(op.op, ast.Div):
                if right.factors:
                    fail("only numbers divide: a coefficient may be n/d, not a division by entries", self.span(operand))
                if right.scale == 0:
                    fail("division by zero in a coefficient", self.span(operand))
                result = _scale(result, Fraction(1, 1) / right.scale)
                continue
            result = self.multiply(result, right, operand)
        return result

    def multiply(self, left: Term, right: Term, operand: ast.AST) -> Term:
        zero, other = (left, right) if not left.factors and left.scale == 0 else (right, left)
        # 0*a22 in a sum is a zero coefficient (the plain form reads it so); zero times the whole
        # product, or times a number, is a mistake
        if not zero.factors and zero.scale == 0 and len(other.factors) != 1:
            fail("the product is multiplied by zero", self.span(operand))
        if not left.factors or not right.factors:
            number, other = (left, right) if not left.factors else (right, left)
            return _scale(other, number.scale)
        twice = sorted(set(left.factors) & set(right.factors))
        if twice:
            fail(f"two factors of {twice[0]}-entries multiply: {WHOLE_PRODUCT}", self.span(operand))
        return Term(left.scale * right.scale, {**left.factors, **right.factors})


def _single(term: Term) -> Factor | None:
    """The one factor of a term, with the term's number folded in; None for a number or a product."""
    if len(term.factors) != 1:
        return None
    (factor,) = term.factors.values()
    return factor.scaled(term.scale)


def _scale(term: Term, by: Fraction) -> Term:
    factor = _single(term)
    if factor is not None:  # a number next to one sum belongs to that sum: 3*(9*a11 - a12)
        return Term(1, {factor.letter: factor.scaled(by)})
    return Term(term.scale * by, term.factors)


def _explicit(line: str) -> tuple[str, list[int]]:
    """The line with the multiplications real files leave implicit made explicit, and the offsets of
    the inserted stars: a number before the entry it scales (``2b21``, flips' structured files) and
    factors side by side (``(a13 - a32) (b12 + b21) c13``, ``a31 (-b13 + b15)``: Mathematica's
    juxtaposition, as Perminov's copies of the flips solutions write them; ``a33 b33 c33``).  Two
    entries of one letter side by side (``a11 a12``) stay an error: that is a missing sign in a sum.  A number
    before an entry scales it, with or without a space (``2 b31``)."""
    out, inserted = [], []
    previous = ""  # the last character that is not a space
    number = False  # whether it ends a number (not an entry's indices)
    letter = ""  # the letter of the entry it ends, if it ends one
    for position, character in enumerate(line):
        entry = _starts_entry(line, position)
        scales = entry and number  # 2b21, 2 b31
        follows_factor = (character == "(" and (previous == ")" or previous.isalnum())) or (entry and previous == ")")
        other_factor = entry and letter not in ("", character)  # a33 b33 c33
        if scales or follows_factor or other_factor:
            inserted.append(len(out))
            out.append("*")
        out.append(character)
        if not character.isspace():
            number = character.isdigit() and (number or not previous.isalnum())
            letter = character if entry else letter if character.isdigit() and letter else ""
            previous = character
    return "".join(out), inserted


def _starts_entry(line: str, position: int) -> bool:
    """An entry (``a12``, ``c31``) starts here: a letter a, b or c, a digit after it, no letter before."""
    if line[position] not in _LETTERS or not line[position + 1: position + 2].isdigit():
        return False
    before = position - 1
    while before >= 0 and line[before].isdigit():
        before -= 1
    return before < 0 or not (line[before].isalpha() or line[before] == "_")


def _tree(text: str, reader: _Line) -> ast.AST:
    blanked = blank_leading_zeros(text)  # (parse_product took those that began the line)
    try:
        return python_tree(blanked).body
    except SyntaxError as error:
        _adjacent_operands(blanked, reader)
        offset = (error.offset or 1) - 1
        column = reader.column(offset)
        found = text[offset] if offset < len(text) else None
        what = f"'{found}'" if found else "the end of the line"
        reason = (error.msg or "").split(".")[0]
        span = Span(str(reader.path), reader.number, column, reader.number, column + 1)
        if past_digit_limit(error):
            fail(TOO_MANY_DIGITS, Span(str(reader.path), reader.number, 1, reader.number, 2))
        if "never closed" in reason:
            fail(f"{what} is never closed: {WHOLE_PRODUCT}", span)
        fail(f"unexpected {what} in a product ({reason}): {WHOLE_PRODUCT}", span)
    except (RecursionError, MemoryError, ValueError):
        fail("the product nests too deeply to read", Span(str(reader.path), reader.number, 1, reader.number, 2))


def _adjacent_operands(text: str, reader: _Line) -> None:
    """Two operands with no operator between them (``(a11 b12)``, ``(b11)(c11)``), said plainly."""
    previous = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            operand_end = token.type in (tokenize.NAME, tokenize.NUMBER) or token.string == ")"
            operand_start = token.type in (tokenize.NAME, tokenize.NUMBER) or token.string == "("
            if previous is not None and operand_start:
                column = reader.column(token.start[1])
                span = Span(str(reader.path), reader.number, column, reader.number, column + len(token.string))
                fail(f"expected an operator (+ - * /) between '{previous.string}' and '{token.string}'", span)
            previous = token if operand_end else None
    except (tokenize.TokenError, SyntaxError):
        return  # the parser's own message says what is wrong
    if text.rstrip() and text.rstrip()[-1] in "+-*/":
        column = reader.column(len(text.rstrip()) - 1)
        span = Span(str(reader.path), reader.number, column, reader.number, column + 1)
        fail(f"expected an entry or a number after '{text.rstrip()[-1]}', found the end of the line", span)


# The form nearly every line of the catalogues has, ``(-a13 + 2*a14)*(3*(b11 - b21))*(c11 + c31)/3``:
# three parenthesised sums of entries with whole-number factors, a sum perhaps scaled by a whole
# number, the line perhaps divided by one.  A line of exactly this regular language is read by
# two regular expressions (the whole line is matched first, so nothing is skipped); every other
# line, and every error, goes through Python's parser below, which reads the same values.  Digits
# are ASCII ([0-9], not \d): another script's are refused there, at their place.
_TERM = r"\s*(?:[0-9]+\s*\*?\s*)?[abc][1-9][1-9]\s*"  # 2*b21, 2b21, 2 b21
_SUM = rf"\s*[+-]?{_TERM}(?:[+-]{_TERM})*"
_FACTOR = rf"\(\s*(?:([+-]?)\s*([0-9]+)\s*\*\s*\(({_SUM})\)|({_SUM}))\s*\)"
_PLAIN_LINE = re.compile(rf"{_FACTOR}\s*\*\s*{_FACTOR}\s*\*\s*{_FACTOR}\s*(?:/\s*([0-9]+)\s*)?")
_PLAIN_TERM = re.compile(r"([+-]?)\s*(?:([0-9]+)\s*\*?\s*)?([abc])([1-9])([1-9])")


def _plain_product(line: str, number: int, path: Path, whole: Span) -> TrilinearProduct | None:
    """The product of a line of the plain form above, or None (then the full reader decides)."""
    indent = len(line) - len(line.lstrip())
    match = _PLAIN_LINE.fullmatch(line, indent)
    if match is None:
        return None
    factors: dict[str, dict[tuple[int, int], Fraction | int]] = {}
    spans: dict[tuple[str, int, int], Span] = {}
    for first in (1, 5, 9):
        sign, multiplier, _, _ = match.group(first, first + 1, first + 2, first + 3)
        group = first + 2 if multiplier is not None else first + 3
        scale = (-1 if sign == "-" else 1) * int(multiplier) if multiplier is not None else 1
        terms: dict[tuple[int, int], Fraction | int] = {}
        letters = set()
        for term in _PLAIN_TERM.finditer(line, match.start(group), match.end(group)):
            sign, digits, letter, i, j = term.groups()
            letters.add(letter)
            key = (int(i), int(j))
            coef = int(digits) if digits else 1
            terms[key] = terms.get(key, 0) + (-coef if sign == "-" else coef) * scale
            start = term.start(3) + 1
            spans.setdefault((letter, *key), Span(str(path), number, start, number, start + 3))
        if len(letters) != 1 or next(iter(letters)) in factors or scale == 0:
            return None  # a sum mixing letters, two sums of one letter, a zero: the full reader says why
        factors[letters.pop()] = terms
    divisor = int(match.group(13)) if match.group(13) is not None else 1
    if divisor == 0:
        return None
    result = []
    for letter in _LETTERS:
        divide = divisor if letter == "c" else 1  # a number that scales the whole product scales c
        terms = {key: Fraction(c, divide) for key, c in factors[letter].items() if c != 0}
        if not terms:
            return None  # a zero factor: the full reader reports it
        result.append(terms)
    return TrilinearProduct(tuple(result), spans, whole)


def parse_product(line: str, number: int, path: Path) -> TrilinearProduct:
    """One product line; a located BilinearError when it is not (Σ a)·(Σ b)·(Σ c)."""
    whole = Span(str(path), number, 1, number, len(line) + 1)
    try:
        plain = _plain_product(line, number, path, whole)
    except ValueError:  # int() of a number past Python's digit limit
        fail(TOO_MANY_DIGITS, whole)
    if plain is not None:
        return plain
    stripped = line.strip()
    zeros = len(stripped) - len(stripped.lstrip("0")) if stripped.lstrip("0")[:1].isdigit() else 0  # 07*(…): 7*(…)
    text, inserted = _explicit(stripped[zeros:])
    reader = _Line(path, number, text, len(line) - len(line.lstrip()) + zeros, inserted)
    try:
        term = reader.value(_tree(text, reader))
    except RecursionError:
        fail("the product nests parentheses too deeply to read", whole)
    missing = [letter for letter in _LETTERS if letter not in term.factors]
    if missing:
        fail(f"the product has no factor of {missing[0]}-entries: {WHOLE_PRODUCT}", whole)
    factors = []
    for letter in _LETTERS:
        terms = {key: Fraction(c) for key, c in term.factors[letter].terms.items() if c != 0}
        if not terms:
            fail(f"the sum of {letter}-entries is zero: the product has a zero factor", whole)
        factors.append(terms)
    if term.scale != 1:
        factors[2] = {key: c * term.scale for key, c in factors[2].items()}
    return TrilinearProduct(tuple(factors), reader.entry_spans, whole)
