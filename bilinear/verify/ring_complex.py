"""Complex schemes over Q(i) (AlphaEvolve's ⟨4,4,4;48⟩): the Brent equations exactly, real and imaginary parts apart.

See :mod:`bilinear.verify.rings`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..diagnostics import Diagnostic
from ..ir import Shape, Span, block_name
from .ring_tensor import SHOWN_TERMS, block_indices, brent_tensor, classical_tensor

Gaussian = tuple[Fraction, Fraction]  # a complex rational re + im·i, exactly


@dataclass(frozen=True)
class ComplexScheme:
    """U, V, W tables of complex rationals (Q(i)), as AlphaEvolve's ⟨4,4,4;48⟩ over ½·Z[i].

    Rows as in :class:`ApproximateScheme`: one per A, B and C block, one entry per product.
    """

    name: str
    shape: Shape
    u: tuple[tuple[Gaussian, ...], ...]
    v: tuple[tuple[Gaussian, ...], ...]
    w: tuple[tuple[Gaussian, ...], ...]
    span: Span

    @property
    def rank(self) -> int:
        return len(self.u[0])

    @property
    def not_exact_because(self) -> str:
        return (
            f"{self.name} has complex coefficients (in Q(i)): bilinear compiles real float32/float64 products, "
            "and this scheme's products and sums need complex arithmetic on every block"
        )


@dataclass(frozen=True)
class ComplexReport:
    """What holds of a complex scheme: the Brent equations over Q(i), exactly."""

    scheme: ComplexScheme
    errors: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def holds(self) -> bool:
        return not self.errors

    @property
    def ok(self) -> bool:
        """Never: a complex scheme is not a real algorithm bilinear can compile."""
        return False


def _gaussian_text(re: Fraction, im: Fraction) -> str:
    if im == 0:
        return str(re)
    imaginary = f"{'' if abs(im) == 1 else abs(im)}i"
    if re == 0:
        return ("-" if im < 0 else "") + imaginary
    return f"({re}{'-' if im < 0 else '+'}{imaginary})"


def check_complex(scheme: ComplexScheme) -> ComplexReport:
    """The Brent equations over Q(i): real and imaginary parts as exact integer tensors.

    Ensures: one error per wrong C block, naming its first wrong terms.
    """
    parts = []  # (re, im) integer tables per side, scaled by one common denominator each
    scale = 1
    for table in (scheme.u, scheme.v, scheme.w):
        denominator = math.lcm(1, *(x.denominator for row in table for entry in row for x in entry))
        parts.append(
            tuple(np.array([[int(entry[k] * denominator) for entry in row] for row in table], dtype=object) for k in (0, 1))
        )
        scale *= denominator
    (ur, ui), (vr, vi), (wr, wi) = parts
    # (u v w) = (ur + i ui)(vr + i vi)(wr + i wi), expanded into four real tensors each way
    real = brent_tensor(ur, vr, wr) - brent_tensor(ui, vi, wr) - brent_tensor(ur, vi, wi) - brent_tensor(ui, vr, wi)
    imag = brent_tensor(ur, vr, wi) + brent_tensor(ur, vi, wr) + brent_tensor(ui, vr, wr) - brent_tensor(ui, vi, wi)
    expected = classical_tensor(scheme.shape) * scale
    a_index, b_index, c_index = block_indices(scheme.shape)
    errors = []
    for c, (i, j) in enumerate(c_index):
        wrong = np.nonzero((real[:, :, c] != expected[:, :, c]) | (imag[:, :, c] != 0))
        if not len(wrong[0]):
            continue
        terms = [
            f"{_gaussian_text(Fraction(int(real[a, b, c]), scale), Fraction(int(imag[a, b, c]), scale))}"
            f"*{block_name('A', *a_index[a])}*{block_name('B', *b_index[b])}"
            f" (needs {int(expected[a, b, c]) // scale})"
            for a, b in list(zip(*wrong))[:SHOWN_TERMS]
        ]
        more = len(wrong[0]) - len(terms)
        text = ", ".join(terms) + (f" and {more} more wrong terms" if more else "")
        errors.append(Diagnostic(f"{block_name('C', i, j)} is wrong over Q(i): it has {text}", scheme.span))
    return ComplexReport(scheme, tuple(errors))
