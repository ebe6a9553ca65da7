"""Algorithms: named sums, products and outputs of a scheme ⟨m,k,n;R⟩."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from fractions import Fraction

from .form import Form
from .names import IDENTIFIER, LONGEST_NAME, Shape, Span


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
        for side, form in (("left", self.left), ("right", self.right)):
            if not isinstance(form, Form):  # a product built in Python (None had raised AttributeError)
                raise TypeError(f"product {self.name}'s {side} factor must be a Form, not {reprlib.repr(form)}")
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


def check_built_types(algorithm: Algorithm) -> None:
    """Refuse, by name, what no .bl file could have given an algorithm built in Python: a name that is
    not one (5 had verified, then broken compile), a declared rank that is not a whole number, a factor,
    sum or output that is not a Form."""
    name = algorithm.name
    if not (isinstance(name, str) and IDENTIFIER.fullmatch(name) and len(name) <= LONGEST_NAME):
        raise ValueError(f"algorithm name must be a .bl name (an ASCII letter or _, then letters, digits or _; "
                         f"at most {LONGEST_NAME} characters), not {reprlib.repr(name)}")
    rank = algorithm.declared_rank
    if rank is not None and (type(rank) is not int or rank < 1):
        raise ValueError(f"algorithm {name}'s declared rank must be a whole number or None, not {reprlib.repr(rank)}")
    parts = [(f"product {p.name}'s {side} factor", form) for p in algorithm.products
             for side, form in (("left", p.left), ("right", p.right))]
    parts += [(f"sum {s.name}'s form", s.form) for s in algorithm.sums]
    parts += [(f"output {o.block}'s form", o.form) for o in algorithm.outputs]
    for what, form in parts:
        if not isinstance(form, Form):
            raise TypeError(f"algorithm {name}: {what} must be a Form, not {reprlib.repr(form)}")
        # exact numbers only: NumPy's int64 broke Fraction's hash in compile, a float the verifier
        for term, coef in form.terms:
            if type(coef) not in (int, Fraction):
                raise TypeError(f"algorithm {name}: {what} has {term}'s coefficient {str(coef)[:40]} of type "
                                f"{type(coef).__name__}, not an int or Fraction (Form.of converts NumPy's whole numbers)")
