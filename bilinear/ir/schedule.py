"""Schedules: ordered stages of element-wise updates and product statements over buffers."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Union

from .form import Form, format_coefficient
from .names import OPERANDS, Span, operand_of


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
        if not self.form.terms:  # the language assigns no numbers: `T -= T` is how a statement zeroes T
            return f"{self.target} -= {self.target}"
        return f"{self.target} = {self.form}"


def net_effect(statements: tuple[Update, ...]) -> dict[str, Form]:
    """Each buffer the statements change, run in order, with its final value over the buffers' values at
    the start (what one fused element-wise kernel computes); one they leave as it was is not listed."""
    values: dict[str, dict[str, Fraction]] = {}
    for statement in statements:
        total: dict[str, Fraction] = {}
        for name, coef in statement.form.terms:
            coef = coef.numerator if coef.denominator == 1 else coef  # int arithmetic where it can
            for inner, inner_coef in values.get(name, {name: 1}).items():
                total[inner] = total.get(inner, 0) + coef * inner_coef
        values[statement.target] = {name: coef for name, coef in total.items() if coef != 0}
    return {target: Form.of(value) for target, value in values.items() if value != {target: 1}}


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

    def product_text(self) -> str:
        """``(left) * (right)``, without the targets."""
        def factor(form: Form) -> str:
            return str(form) if len(form.terms) == 1 and form.terms[0][1] == 1 else f"({form})"

        return f"{factor(self.left)} * {factor(self.right)}"

    def __str__(self) -> str:
        product = self.product_text()
        if self.overwrite and len(self.targets.terms) == 1:
            (target, coef), = self.targets.terms
            scale = "" if coef == 1 else ("-" if coef == -1 else f"{format_coefficient(coef)}*")
            return f"{target} = {scale}{product}"
        return f"{product} -> {' '.join(target_text(name, c) for name, c in self.targets.terms)}"


def target_text(name: str, coef: Fraction) -> str:
    """One target of a product statement as written: ``+C12``, ``-2*C21``."""
    return ("+" if coef > 0 else "-") + ("" if abs(coef) == 1 else f"{format_coefficient(abs(coef))}*") + name


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
    unused: tuple[Temporary, ...] = ()  # declared, read and written by no statement: not in temporaries (none allocates them)

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

    @property
    def writes_inputs(self) -> bool:
        """Whether some statement writes an A or B block (an in-place schedule may only add into C)."""
        return any(isinstance(s, Update) and operand_of(s.target) in ("A", "B") for _, s in self.statements())

    def temporary(self, name: str) -> Temporary | None:
        return next((t for t in self.temporaries if t.name == name), None)

    def statements(self) -> Iterable[tuple[Stage, Statement]]:
        for stage in self.stages:
            for statement in stage.statements:
                yield stage, statement
