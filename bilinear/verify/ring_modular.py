"""Modular schemes: the Brent equations modulo p (GF(2) catalogues, PLinOpt's Q(√3) as p = 1013² − 3) and over Q.

Rationals a/b count as a·b⁻¹ modulo p.  See :mod:`bilinear.verify.rings`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..diagnostics import Diagnostic, limited
from ..ir import Algorithm, Form, Shape, Span, block_name, parse_block
from .algorithm import brent_residual, describe_difference
from .expand import classical, expansion_of
from .ring_tensor import SHOWN_TERMS, block_indices, brent_tensor, classical_tensor


#: The start of a ModularScheme's reason where the user claimed the modulus (--mod, modulus=), not its file.
GIVEN_WITH_MOD = "given with --mod"


@dataclass(frozen=True)
class ModularScheme:
    """An algorithm whose Brent equations are claimed only modulo ``modulus`` (2 for GF(2)).

    ``algorithm`` holds the scheme's integer coefficients read over Q.
    """

    algorithm: Algorithm
    modulus: int
    reason: str = ""  # why the modulus, where the file gives one (a number standing for √3)

    def __post_init__(self) -> None:
        if self.modulus < 2:
            raise ValueError(f"a modulus is at least 2, not {self.modulus}")

    @property
    def name(self) -> str:
        return self.algorithm.name

    @property
    def span(self) -> Span | None:
        return self.algorithm.span

    @property
    def not_exact_because(self) -> str:
        because = f" ({self.reason})" if self.reason else ""
        return f"{self.name} is a scheme valid only modulo {self.modulus}{because}"


@dataclass(frozen=True)
class ModularReport:
    """What holds of a modular scheme: errors modulo p, and errors over Q."""

    scheme: ModularScheme
    modular_errors: tuple[Diagnostic, ...]
    rational_errors: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...] = ()
    # Every C block holds over Q (rational_errors names only blocks right modulo p): a scheme whose
    # denominators p divides fails modulo p and may still be exact
    exact_over_q: bool = False

    @property
    def holds(self) -> bool:
        """The Brent equations hold modulo p."""
        return not self.modular_errors

    @property
    def ok(self) -> bool:
        """The equations hold over Q too, so the scheme is an exact algorithm."""
        return not self.modular_errors and not self.rational_errors

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Both kinds, the first MAX_ERRORS of them and a count of the rest (as an algorithm's)."""
        return limited(self.modular_errors + self.rational_errors)


def _residue(value: Fraction, modulus: int) -> int:
    return value.numerator * pow(value.denominator, -1, modulus) % modulus


def _block_difference(computed: np.ndarray, expected: np.ndarray, shape: Shape) -> str:
    """The first few differing terms of one C block, in words."""
    a_index, b_index, _ = block_indices(shape)
    names = {
        f"{block_name('A', *a_index[a])}*{block_name('B', *b_index[b])}": (computed[a, b], expected[a, b])
        for a, b in zip(*np.nonzero(computed != expected))
    }
    shown = dict(list(names.items())[:SHOWN_TERMS])
    actual = Form.of({name: Fraction(int(got)) for name, (got, _) in shown.items()})
    wanted = Form.of({name: Fraction(int(want)) for name, (_, want) in shown.items()})
    text = describe_difference(actual, wanted)
    hidden = len(names) - len(shown)
    return text + (f" (and {hidden} more wrong terms)" if hidden else "")


def _singular_coefficient(algorithm: Algorithm, tables, p: int) -> Diagnostic | None:
    """A coefficient whose denominator p divides (it has no value modulo p): the first one written so,
    where it is written (an expanded one's denominator divides a product of written ones'; the whole
    scheme's span had pointed at its first line, or at another file of a PLinOpt scheme), else the
    smallest of the expanded scheme.  (The smallest expanded one had been named beside the first
    written one, as if they were one: "the coefficient 1/3 ... (written -2/3·M1 ...)".)"""
    singular = sorted({c for table in tables for row in table for c in row if math.gcd(c.denominator, p) != 1}, key=abs)
    if not singular:
        return None
    written = [(f"{s.name} = ...", s.form, s.span) for s in algorithm.sums]
    written += [(f"{x.name}'s {side} factor", form, x.span) for x in algorithm.products
                for side, form in (("A", x.left), ("B", x.right))]
    written += [(f"{o.block} = ...", o.form, o.span) for o in algorithm.outputs]
    for owner, form, span in written:
        for name, c in form.terms:
            if math.gcd(c.denominator, p) != 1:
                return Diagnostic(f"{_no_value(c, p)} (written {c}·{name} in {owner})", dict(form.spans).get(name) or span)
    return Diagnostic(_no_value(singular[0], p), None)


def _no_value(coefficient: Fraction, p: int) -> str:
    return f"the coefficient {coefficient} has no value modulo {p}: its denominator is not invertible"


def check_modular(scheme: ModularScheme) -> ModularReport:
    """The Brent equations modulo p and over Q, on exact integer tensors.

    Assumes: coefficients whose denominators are prime to p (integers, as the
    catalogues write them, or PLinOpt's rationals).  Ensures: one error per C
    block wrong modulo p and, separately, one per C block wrong over Q.
    """
    algorithm, p = scheme.algorithm, scheme.modulus
    tables = expansion_of(algorithm).tables()
    over_q = brent_residual(expansion_of(algorithm))  # the one exact check over Q (verify.tensor)
    spans = {o.block: o.span for o in algorithm.outputs}
    if (singular := _singular_coefficient(algorithm, tables, p)) is not None:  # over Q, then, all that is said
        # (its wrong blocks listed: none had been, beside exact_over_q False)
        wrong = tuple(Diagnostic(f"{block} is wrong over Q too: {_rational_difference(block, residual, algorithm.shape)}",
                                 spans.get(block) or algorithm.span) for block, residual in over_q.items())
        return ModularReport(scheme, (singular,), wrong, exact_over_q=not over_q)
    residues = [
        np.array([[_residue(c, p) for c in row] for row in table], dtype=object) for table in tables
    ]
    tensor = brent_tensor(*residues)  # int64 for small residues: a modulus past it reduces whole numbers
    reduced_all = (tensor if p <= np.iinfo(np.int64).max else tensor.astype(object)) % p
    expected = classical_tensor(algorithm.shape)
    modular, rational = [], []
    for c, (i, j) in enumerate(block_indices(algorithm.shape)[2]):
        block = block_name("C", i, j)
        span = spans.get(block) or algorithm.span
        reduced = reduced_all[:, :, c]
        if (reduced != expected[:, :, c]).any():
            difference = _block_difference(reduced, expected[:, :, c], algorithm.shape)
            modular.append(Diagnostic(f"{block} is wrong modulo {p}: {difference}", span))
        elif block in over_q:
            difference = _rational_difference(block, over_q[block], algorithm.shape)
            rational.append(Diagnostic(f"{block} holds only modulo {p}: over Q it {difference}", span))
    return ModularReport(scheme, tuple(modular), tuple(rational), exact_over_q=not over_q)


def _rational_difference(block: str, residual: Form, shape: Shape) -> str:
    """The first few wrong terms of a C block over Q, in A block then B block order, in words."""
    a_index, b_index, _ = block_indices(shape)
    names = (f"{block_name('A', *a)}*{block_name('B', *b)}" for a in a_index for b in b_index)
    order = {name: n for n, name in enumerate(names)}
    _, i, j = parse_block(block)
    expected = classical(i, j, shape.k)
    pairs = [(name, expected.coefficient(name) + coef, expected.coefficient(name)) for name, coef in residual.terms]
    pairs.sort(key=lambda pair: order[pair[0]])
    shown = pairs[:SHOWN_TERMS]
    text = describe_difference(Form.of({n: got for n, got, _ in shown}), Form.of({n: want for n, _, want in shown}))
    hidden = len(pairs) - len(shown)
    return text + (f" (and {hidden} more wrong terms)" if hidden else "")
