"""Linear forms ``Σ c·x`` over named things, with exact rational coefficients."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Iterable, Mapping, Union

from .names import Span


def _digits(value: int) -> str:
    """An integer as text; past Python's digit limit for str(int) (4300 digits, the readers' limit
    too), its sign and number of digits."""
    try:
        return str(value)
    except ValueError:
        return f"{'-' if value < 0 else ''}<a {_digit_count(value)}-digit number>"


def _digit_count(value: int) -> int:
    digits = int(value.bit_length() * 0.30102999566398120) + 1  # log10(2); exact to within one
    return digits - 1 if abs(value) < 10 ** (digits - 1) else digits


_ONE = Fraction(1)


def _name(term: tuple[str, Fraction]) -> str:
    return term[0]


_SMALL = {value: Fraction(value) for value in range(-16, 17)}  # Fraction(int) is slow; sums make millions


def _fraction(value: Union[int, Fraction, str]) -> Fraction:
    if isinstance(value, Fraction):
        return value
    return _SMALL.get(value) if type(value) is int and -16 <= value <= 16 else Fraction(value)


def format_coefficient(coef: Fraction) -> str:
    return _digits(coef.numerator) if coef.denominator == 1 else f"{_digits(coef.numerator)}/{_digits(coef.denominator)}"


def written_coefficient(coef: Fraction) -> str:
    """A coefficient as a file states it, every digit.  One past the readers' digit limit (Python's)
    is refused: the placeholder that messages show had been written, and the file did not read back.

    Raises:
        ValueError: for a numerator or denominator of more digits than the readers take.
    """
    try:
        return str(coef.numerator) if coef.denominator == 1 else f"{coef.numerator}/{coef.denominator}"
    except ValueError:
        digits = max(_digit_count(coef.numerator), _digit_count(coef.denominator))
        raise ValueError(f"a coefficient has {digits} digits, more than the readers take ({sys.get_int_max_str_digits()}"
                         "): a file with it would not read back") from None


@dataclass(frozen=True)
class Form:
    """A linear combination ``Σ c·x`` of named things (blocks, sums, products, buffers).

    Terms are sorted by name and carry no zero coefficients, so equal forms
    compare equal.  ``spans`` remembers where each name was written; it does
    not take part in comparisons.
    """

    terms: tuple[tuple[str, Fraction], ...] = ()
    spans: tuple[tuple[str, Span], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        names = [name for name, _ in self.terms]
        if names != sorted(set(names)):
            raise ValueError(f"form terms must be sorted and unique: {names}")
        if not all(coef for _, coef in self.terms):
            raise ValueError("form terms must not have zero coefficients")

    @classmethod
    def of(cls, mapping: Mapping[str, Union[int, Fraction]], spans: Iterable[tuple[str, Span]] = ()) -> Form:
        terms = tuple(sorted(((name, f) for name, c in mapping.items() if (f := _fraction(c))), key=_name))
        return cls._checked(terms, tuple(spans))

    @classmethod
    def symbol(cls, name: str, span: Span | None = None) -> Form:
        return cls._checked(((name, _ONE),), ((name, span),) if span else ())

    @classmethod
    def _checked(cls, terms: tuple[tuple[str, Fraction], ...], spans: tuple[tuple[str, Span], ...]) -> Form:
        """A Form whose terms are sorted, unique and nonzero by construction, made without
        __post_init__'s checks of them (the verifier and the passes make hundreds of thousands)."""
        form = object.__new__(cls)
        object.__setattr__(form, "terms", terms)
        object.__setattr__(form, "spans", spans)
        return form

    def as_dict(self) -> dict[str, Fraction]:
        return dict(self.terms)

    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.terms)

    @cached_property
    def _lookup(self) -> dict[str, Fraction]:
        return dict(self.terms)  # built once: coefficient() is called in loops over every name

    def coefficient(self, name: str) -> Fraction:
        return self._lookup.get(name, Fraction(0))

    @cached_property
    def _span_lookup(self) -> dict[str, Span]:
        return dict(reversed(self.spans))  # where each name is first written (`M1 + Q + Q`: the first Q)

    def span_of(self, name: str) -> Span | None:
        return self._span_lookup.get(name)

    def is_zero(self) -> bool:
        return not self.terms

    def scale(self, factor: Union[int, Fraction]) -> Form:
        return Form.of({name: c * factor for name, c in self.terms}, self.spans)

    def __add__(self, other: Form) -> Form:
        total = self.as_dict()
        for name, coef in other.terms:
            total[name] = total.get(name, Fraction(0)) + coef
        return Form.of(total, self.spans + other.spans)

    def __sub__(self, other: Form) -> Form:
        total = self.as_dict()
        for name, coef in other.terms:
            total[name] = total.get(name, 0) - coef
        return Form.of(total, self.spans + other.spans)

    def __neg__(self) -> Form:
        return self.scale(-1)

    def substitute(self, expansions: Mapping[str, Form]) -> Form:
        """Replace every name that has an expansion by it; keep the others."""
        total: dict[str, Fraction] = {}
        for name, coef in self.terms:
            for inner, inner_coef in expansions.get(name, Form.symbol(name)).terms:
                total[inner] = total.get(inner, Fraction(0)) + coef * inner_coef
        return Form.of(total)

    def with_coefficient(self, name: str, coef: Union[int, Fraction]) -> Form:
        """A copy with one coefficient set (0 removes the term)."""
        mapping = self.as_dict()
        mapping[name] = _fraction(coef)
        return Form.of(mapping, self.spans)

    def ratio_to(self, other: Form) -> Fraction | None:
        """λ with ``self == λ·other`` (λ ≠ 0), or ``None`` if there is none."""
        if self.is_zero() or self.names() != other.names():
            return None
        (name, coef), *_ = self.terms
        ratio = coef / other.coefficient(name)
        return ratio if self == other.scale(ratio) else None

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for index, (name, coef) in enumerate(self.terms):
            sign = "-" if coef < 0 else "+"
            size = abs(coef)
            text = name if size == 1 else f"{format_coefficient(size)}*{name}"
            parts.append(("-" if sign == "-" else "") + text if index == 0 else f"{sign} {text}")
        return " ".join(parts)
