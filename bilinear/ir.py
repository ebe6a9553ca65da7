"""The intermediate representation of algorithms and schedules.

Every node is a frozen dataclass with tuple fields, validated in
``__post_init__`` and changed with :func:`dataclasses.replace`.  Nodes that come
from source text keep a :class:`Span` so diagnostics can point at it.

Blocks are named as in the papers: ``A11`` is row 1, column 1 of A's grid of
blocks (1-based); where an index exceeds 9 the name is ``A[10,3]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Iterable, Mapping, Union

OPERANDS = ("A", "B", "C")


@dataclass(frozen=True)
class Span:
    """A region of a source file: 1-based line and column, end exclusive."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


_BLOCK_SHORT = re.compile(r"^([ABC])([1-9])([1-9])$")
_BLOCK_LONG = re.compile(r"^([ABC])\[(\d+),(\d+)\]$")


def block_name(operand: str, row: int, col: int) -> str:
    """The canonical name of a block: ``A12``, or ``A[10,3]`` past 9."""
    if row <= 9 and col <= 9:
        return f"{operand}{row}{col}"
    return f"{operand}[{row},{col}]"


def parse_block(name: str) -> tuple[str, int, int] | None:
    """``(operand, row, col)`` for a block name, ``None`` for any other name."""
    match = _BLOCK_SHORT.match(name) or _BLOCK_LONG.match(name)
    if not match:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


def operand_of(name: str) -> str | None:
    """``'A'``, ``'B'`` or ``'C'`` for a block name, else ``None``."""
    parsed = parse_block(name)
    return parsed[0] if parsed else None


@dataclass(frozen=True)
class Shape:
    """⟨m,k,n⟩: A is split into m×k blocks, B into k×n, C into m×n."""

    m: int
    k: int
    n: int

    def __post_init__(self) -> None:
        if min(self.m, self.k, self.n) < 1:
            raise ValueError(f"shape ⟨{self.m},{self.k},{self.n}⟩ has a zero dimension")
        if problem := shape_too_large(self.m, self.k, self.n):
            raise ValueError(problem)

    def grid(self, operand: str) -> tuple[int, int]:
        """Rows and columns of blocks of one operand."""
        return {"A": (self.m, self.k), "B": (self.k, self.n), "C": (self.m, self.n)}[operand]

    def blocks(self, operand: str) -> tuple[str, ...]:
        """The operand's block names in row-major order."""
        rows, cols = self.grid(operand)
        return tuple(block_name(operand, i, j) for i in range(1, rows + 1) for j in range(1, cols + 1))

    def contains(self, name: str) -> bool:
        parsed = parse_block(name)
        if parsed is None:
            return False
        operand, row, col = parsed
        rows, cols = self.grid(operand)
        return 1 <= row <= rows and 1 <= col <= cols

    def __str__(self) -> str:
        return f"⟨{self.m},{self.k},{self.n}⟩"


# The largest m·k·n (classical products) accepted: ⟨64,64,64⟩.  Every check is at least linear
# in it, and a ⟨1000,1000,1000⟩ header of three lines would otherwise run for minutes.
MAX_SHAPE_VOLUME = 1 << 18


def shape_too_large(m: int, k: int, n: int) -> str | None:
    """Why ⟨m,k,n⟩ is too large to check, or None."""
    if m * k * n > MAX_SHAPE_VOLUME:
        return (
            f"shape ⟨{m},{k},{n}⟩ is too large: {m * k * n} classical products, and at most "
            f"{MAX_SHAPE_VOLUME} (⟨64,64,64⟩) are supported"
        )
    return None


def _digits(value: int) -> str:
    """An integer as text; past Python's digit limit for str(int), its sign and number of digits."""
    if value.bit_length() <= 13000:  # about 3900 digits: below the 4300-digit limit
        return str(value)
    digits = int(value.bit_length() * 0.30102999566398120) + 1  # log10(2); exact to within one
    if abs(value) < 10 ** (digits - 1):
        digits -= 1
    return f"{'-' if value < 0 else ''}<a {digits}-digit number>"


def _fraction(value: Union[int, Fraction, str]) -> Fraction:
    return value if isinstance(value, Fraction) else Fraction(value)


def format_coefficient(coef: Fraction) -> str:
    return _digits(coef.numerator) if coef.denominator == 1 else f"{_digits(coef.numerator)}/{_digits(coef.denominator)}"


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
        terms = tuple(sorted((name, _fraction(c)) for name, c in mapping.items() if c != 0))
        return cls(terms, tuple(spans))

    @classmethod
    def symbol(cls, name: str, span: Span | None = None) -> Form:
        return cls(((name, Fraction(1)),), ((name, span),) if span else ())

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
        return dict(self.spans)

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
        return self + other.scale(-1)

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


# --- algorithms ---------------------------------------------------------------


@dataclass(frozen=True)
class Sum:
    """A named intermediate sum (Winograd's S1 = A21 + A22, U2 = M1 + M6)."""

    name: str
    form: Form
    span: Span | None = None


@dataclass(frozen=True)
class Product:
    """``name = (Σ u·A-side) * (Σ v·B-side)``; forms may name blocks or sums."""

    name: str
    left: Form
    right: Form
    span: Span | None = None

    def __post_init__(self) -> None:
        if self.left.is_zero() or self.right.is_zero():
            raise ValueError(f"product {self.name} has a zero factor")


@dataclass(frozen=True)
class Output:
    """``C12 = Σ w·products`` (products or named sums of products)."""

    block: str
    form: Form
    span: Span | None = None


@dataclass(frozen=True)
class Algorithm:
    """A bilinear algorithm ⟨m,k,n;R⟩ in the order its definitions were written."""

    name: str
    shape: Shape
    sums: tuple[Sum, ...]
    products: tuple[Product, ...]
    outputs: tuple[Output, ...]
    declared_rank: int | None = None
    span: Span | None = None
    tabular: bool = False

    def __post_init__(self) -> None:
        names = [s.name for s in self.sums] + [p.name for p in self.products]
        if len(names) != len(set(names)):
            raise ValueError(f"algorithm {self.name} defines a name twice")

    @property
    def rank(self) -> int:
        return len(self.products)

    def product(self, name: str) -> Product:
        return next(p for p in self.products if p.name == name)


# --- schedules ----------------------------------------------------------------


@dataclass(frozen=True)
class Temporary:
    """Workspace with the dimensions of one block of ``like`` (``'A'``, ``'B'`` or ``'C'``)."""

    name: str
    like: str
    span: Span | None = None

    def __post_init__(self) -> None:
        if self.like not in OPERANDS:
            raise ValueError(f"temporary {self.name} must be shaped like an A, B or C block")


@dataclass(frozen=True)
class Update:
    """An element-wise statement ``target := form`` over buffers.

    ``A21 += A22`` is stored as ``A21 := A21 + A22``.
    """

    target: str
    form: Form
    span: Span | None = None

    def reads(self) -> frozenset[str]:
        return frozenset(self.form.names())

    def writes(self) -> frozenset[str]:
        return frozenset({self.target})

    def is_accumulation(self) -> bool:
        """True for ``t += f`` where ``f`` does not read ``t``."""
        return self.form.coefficient(self.target) == 1

    def __str__(self) -> str:
        rest = self.form - Form.symbol(self.target) if self.is_accumulation() else self.form
        if self.is_accumulation() and rest.terms and all(c < 0 for _, c in rest.terms):
            return f"{self.target} -= {-rest}"
        if self.is_accumulation() and rest.terms:
            return f"{self.target} += {rest}"
        return f"{self.target} = {self.form}"


@dataclass(frozen=True)
class Multiply:
    """A product statement: ``(left) * (right)`` times each coefficient into its target.

    With ``overwrite`` the targets are set (``C21 = X * Y``), otherwise the
    product is accumulated (``A21 * B11 -> +C21 -C22``).
    """

    left: Form
    right: Form
    targets: Form
    overwrite: bool = False
    span: Span | None = None

    def __post_init__(self) -> None:
        if self.targets.is_zero():
            raise ValueError("a product statement needs at least one target")

    def reads(self) -> frozenset[str]:
        own = frozenset() if self.overwrite else frozenset(self.targets.names())
        return frozenset(self.left.names()) | frozenset(self.right.names()) | own

    def writes(self) -> frozenset[str]:
        return frozenset(self.targets.names())

    def is_accumulation(self) -> bool:
        return not self.overwrite

    def __str__(self) -> str:
        def factor(form: Form) -> str:
            return str(form) if len(form.terms) == 1 and form.terms[0][1] == 1 else f"({form})"

        product = f"{factor(self.left)} * {factor(self.right)}"
        if self.overwrite and len(self.targets.terms) == 1:
            (target, coef), = self.targets.terms
            scale = "" if coef == 1 else ("-" if coef == -1 else f"{format_coefficient(coef)}*")
            return f"{target} = {scale}{product}"
        targets = " ".join(
            ("+" if c > 0 else "-") + ("" if abs(c) == 1 else f"{format_coefficient(abs(c))}*") + name
            for name, c in self.targets.terms
        )
        return f"{product} -> {targets}"


Statement = Union[Update, Multiply]

PROPERTIES = {
    "inplace": "overwrites A and B instead of using workspace (no temporaries)",
    "restore": "every A and B block ends equal to its original",
    "accumulate": "computes C += A·B (the default)",
    "overwrite": "computes C = A·B; the original C is not read",
}


@dataclass(frozen=True)
class Stage:
    """Statements that run as one launch.

    A concurrent stage (the default) holds statements that may run at the
    same time, so they must not conflict.  An ``ordered`` stage is element-wise
    only and runs its statements in order for each element (a fused kernel:
    each thread does every statement on its element, so a statement sees the
    ones before it); the fusion and change-of-basis passes produce these.
    """

    name: str
    statements: tuple[Statement, ...]
    span: Span | None = None
    ordered: bool = False

    def __post_init__(self) -> None:
        if self.ordered and any(isinstance(s, Multiply) for s in self.statements):
            raise ValueError(f"ordered stage {self.name} may only hold element-wise statements")

    def is_product_stage(self) -> bool:
        return any(isinstance(s, Multiply) for s in self.statements)


@dataclass(frozen=True)
class Schedule:
    """An ordered list of stages that computes an algorithm's product."""

    name: str
    algorithm: str
    properties: frozenset[str]
    temporaries: tuple[Temporary, ...]
    stages: tuple[Stage, ...]
    span: Span | None = None

    def __post_init__(self) -> None:
        unknown = self.properties - PROPERTIES.keys()
        if unknown:
            raise ValueError(f"unknown schedule properties {sorted(unknown)}")
        if {"accumulate", "overwrite"} <= self.properties:
            raise ValueError("a schedule cannot both accumulate and overwrite C")

    @property
    def overwrites_c(self) -> bool:
        return "overwrite" in self.properties

    @property
    def inplace(self) -> bool:
        return "inplace" in self.properties

    @property
    def restores(self) -> bool:
        return "restore" in self.properties

    def temporary(self, name: str) -> Temporary | None:
        return next((t for t in self.temporaries if t.name == name), None)

    def statements(self) -> Iterable[tuple[Stage, Statement]]:
        for stage in self.stages:
            for statement in stage.statements:
                yield stage, statement


Definition = Union[Algorithm, Schedule]


@dataclass(frozen=True)
class Program:
    """Everything one file defines, with what it ``use``s, resolved and checked.

    ``own`` names the definitions written in the file itself (in order).
    """

    path: str
    algorithms: tuple[Algorithm, ...]
    schedules: tuple[Schedule, ...]
    own: tuple[str, ...]

    def algorithm(self, name: str) -> Algorithm | None:
        return next((a for a in self.algorithms if a.name == name), None)

    def schedule(self, name: str) -> Schedule | None:
        return next((s for s in self.schedules if s.name == name), None)

    def definition(self, name: str) -> Definition | None:
        return self.algorithm(name) or self.schedule(name)

    def own_definitions(self) -> tuple[Definition, ...]:
        return tuple(d for d in (self.definition(name) for name in self.own) if d is not None)

    @property
    def main(self) -> Definition:
        """The last definition written in the file: what ``compile`` and ``run`` use."""
        return self.own_definitions()[-1]
