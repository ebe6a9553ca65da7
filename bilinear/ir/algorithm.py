"""Algorithms: named sums, products and outputs of a scheme ⟨m,k,n;R⟩."""

from __future__ import annotations

from dataclasses import dataclass

from .form import Form
from .names import Shape, Span


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

    @property
    def signature(self) -> str:
        """``<m,k,n;R>``, as a header writes it."""
        return self.shape.signature(self.rank)

    def product(self, name: str) -> Product:
        return next(p for p in self.products if p.name == name)
