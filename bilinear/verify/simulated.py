"""What a simulated schedule's buffers hold, and which algorithm product a statement computes.

Each buffer holds a Form over atoms: ``A11`` and ``B12`` (the original blocks),
``C11⁰`` (C's original content) and ``A11*B12`` (bilinear terms).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..ir import Form, Multiply, operand_of


def original_c(block: str) -> str:
    return f"{block}⁰"


def kind_of(value: Form) -> str | None:
    """'A', 'B' or 'C' for a buffer value; ``None`` for zero; '?' when it mixes kinds."""
    kinds = {"C" if "*" in atom or atom.endswith("⁰") else operand_of(atom) for atom in value.names()}
    if not kinds:
        return None
    return kinds.pop() if len(kinds) == 1 else "?"


@dataclass(frozen=True)
class ProductUse:
    """A product statement and the algorithm product it computes: ``left*right == scale·M``."""

    stage: str
    statement: Multiply
    product: str | None
    scale: Fraction
