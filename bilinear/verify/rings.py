"""The Brent equations over rings other than Q: approximate, modular and complex schemes.

Catalogues hold three kinds of schemes that are not exact algorithms over Q:

- **approximate** (APA, border-rank) schemes, whose coefficients are Laurent
  polynomials in a parameter (``x`` in fast-matmul's ``*-approx`` files, where
  ``xi`` is 1/x).  For every triple (A block, B block, C block) the
  coefficient Σ_r u·v·w is a Laurent polynomial in x; the scheme holds *in
  the limit x → 0* when none has a negative power and every constant term is
  the classical one.  It is then exact for no fixed x: the error is O(x^σ),
  while single products carry up to x^-φ, so rounding errors grow like
  u·x^-φ (Bini, Lotti and Romani 1980).  Checked with sympy.
- **modular** schemes, valid only modulo p (Kauers's ``*.mod2.exp``,
  AlphaTensor's ``factorizations_f2.npz``, p = 2; PLinOpt's schemes over
  Q(√3) written with 1013 standing for √3, p = 1013² − 3): checked modulo p,
  rationals a/b as a·b⁻¹, and over Q.
- **complex** schemes over Q(i) (AlphaEvolve's ⟨4,4,4;48⟩): checked exactly,
  real and imaginary parts as integer tensors.

The exact check :func:`~bilinear.verify.ring_tensor.brent_tensor` computes
Σ_r u·v·w on integer tables.

None becomes an exact :class:`~bilinear.ir.Algorithm` that code
generation could take: an :class:`ApproximateScheme` holds sympy
coefficients, a :class:`ModularScheme` only wraps the algorithm its
coefficients would give over Q, to say that it is claimed modulo p, and a
:class:`ComplexScheme` holds complex rationals.  ``bilinear.api.load``
refuses all three, saying why; ``bilinear.api.verify`` reports them with
:class:`ApproximateReport`, :class:`ModularReport` and :class:`ComplexReport`,
whose ``ok`` means "an exact algorithm over Q" and is therefore never true of
an approximate or complex scheme, while ``holds`` says whether the scheme is
what it claims to be.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy

from ..diagnostics import Diagnostic
from ..ir import Algorithm, Form, Shape, Span, block_name
from .algorithm import describe_difference
from .expand import Expansion, classical
from .ring_tensor import block_indices, brent_tensor, classical_tensor, scaled_tables

# --- approximate schemes ----------------------------------------------------------


@dataclass(frozen=True)
class ApproximateScheme:
    """U, V, W tables whose entries are Laurent polynomials (sympy) in ``parameter``.

    ``u`` has one row per A block (row-major), ``v`` one per B block, ``w``
    one per C block; each row has one entry per product.  ``row_spans``
    locates the rows of u, v and w in the source.
    """

    name: str
    shape: Shape
    parameter: sympy.Symbol
    u: tuple[tuple[sympy.Expr, ...], ...]
    v: tuple[tuple[sympy.Expr, ...], ...]
    w: tuple[tuple[sympy.Expr, ...], ...]
    row_spans: tuple[tuple[Span, ...], tuple[Span, ...], tuple[Span, ...]]
    span: Span

    def __post_init__(self) -> None:
        for table, operand in ((self.u, "A"), (self.v, "B"), (self.w, "C")):
            if len(table) != len(self.shape.blocks(operand)):
                raise ValueError(f"{operand} side has {len(table)} rows; {self.shape} needs {len(self.shape.blocks(operand))}")
            if any(len(row) != len(self.u[0]) for row in table):
                raise ValueError("every row needs one entry per product")

    @property
    def rank(self) -> int:
        return len(self.u[0])

    @property
    def not_exact_because(self) -> str:
        return (
            f"{self.name} is an approximate (border-rank) scheme: its coefficients depend on {self.parameter}, "
            f"and it is exact only in the limit {self.parameter} → 0"
        )


def laurent_terms(expr: sympy.Expr, parameter: sympy.Symbol) -> dict[int, Fraction]:
    """``{power: coefficient}`` of a Laurent polynomial with rational coefficients."""
    terms: dict[int, Fraction] = defaultdict(Fraction)
    for term in sympy.Add.make_args(sympy.expand(expr)):
        coefficient, power = term.as_coeff_exponent(parameter)
        terms[int(power)] += Fraction(int(coefficient.p), int(coefficient.q))
    return {power: c for power, c in terms.items() if c != 0}


def _triple_sums(scheme: ApproximateScheme) -> dict[tuple[int, int, int], dict[int, Fraction]]:
    """Σ_r u_ar v_br w_cr for every (a, b, c) some product touches, as Laurent terms."""
    sums: dict[tuple[int, int, int], sympy.Expr] = defaultdict(lambda: sympy.Integer(0))
    for r in range(scheme.rank):
        us = [(a, row[r]) for a, row in enumerate(scheme.u) if row[r] != 0]
        vs = [(b, row[r]) for b, row in enumerate(scheme.v) if row[r] != 0]
        ws = [(c, row[r]) for c, row in enumerate(scheme.w) if row[r] != 0]
        for a, ue in us:
            for b, ve in vs:
                for c, we in ws:
                    sums[(a, b, c)] += ue * ve * we
    return {key: laurent_terms(value, scheme.parameter) for key, value in sums.items()}


def _most_negative_power(scheme: ApproximateScheme) -> int:
    """φ: the largest power of 1/x in any single term u·v·w (0 when there is none)."""
    lowest = 0
    for r in range(scheme.rank):
        powers = []
        for table in (scheme.u, scheme.v, scheme.w):
            entries = [laurent_terms(row[r], scheme.parameter) for row in table if row[r] != 0]
            powers.append(min((min(terms) for terms in entries if terms), default=0))
        lowest = min(lowest, sum(powers))
    return -lowest


@dataclass(frozen=True)
class ApproximateReport:
    """What holds of an approximate scheme.

    ``errors`` name every C block that diverges or has the wrong limit;
    ``order`` is σ (the error is O(x^σ); ``None`` when the equations hold for
    every x) and ``cancellation`` is φ.
    """

    scheme: ApproximateScheme
    errors: tuple[Diagnostic, ...]
    order: int | None
    cancellation: int
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def holds(self) -> bool:
        """The Brent equations hold in the limit x → 0."""
        return not self.errors

    @property
    def ok(self) -> bool:
        """Never: an approximate scheme is not an exact algorithm, whatever its limit."""
        return False


def _power_text(parameter: sympy.Symbol, power: int) -> str:
    return f"{parameter}**{power}" if power != 1 else str(parameter)


def check_approximate(scheme: ApproximateScheme) -> ApproximateReport:
    """The Brent equations as Laurent polynomials in the scheme's parameter.

    Assumes: a well-formed scheme (as the importers build it).
    Ensures: one error per C block with a negative power of x or a wrong
    constant term, located at that block's row of W.
    """
    sums = _triple_sums(scheme)
    a_index, b_index, c_index = block_indices(scheme.shape)
    x = scheme.parameter
    per_block: dict[int, dict[int, dict[str, Fraction]]] = defaultdict(lambda: defaultdict(dict))
    for (a, b, c), terms in sums.items():
        name = f"{block_name('A', *a_index[a])}*{block_name('B', *b_index[b])}"
        for power, coefficient in terms.items():
            per_block[c][power][name] = coefficient
    errors = []
    for c, (i, j) in enumerate(c_index):
        block = block_name("C", i, j)
        powers = per_block.get(c, {})
        expected = classical(i, j, scheme.shape.k)
        limit = Form.of(powers.get(0, {}))
        problems = []
        divergent = sorted(p for p in powers if p < 0)
        if divergent:
            parts = " + ".join(f"{_power_text(x, p)}*({Form.of(powers[p])})" for p in divergent)
            problems.append(f"{block} diverges as {x} → 0: it has {parts}")
        if limit != expected:
            problems.append(
                f"{block} is wrong in the limit {x} → 0: it tends to {limit} but must be {expected}; "
                f"{describe_difference(limit, expected)}"
            )
        if problems:
            errors.append(Diagnostic("; ".join(problems), scheme.row_spans[2][c]))
    positive = [p for terms in sums.values() for p in terms if p > 0]
    return ApproximateReport(scheme, tuple(errors), min(positive, default=None), _most_negative_power(scheme))


# --- modular schemes ------------------------------------------------------------------


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
        return self.modular_errors + self.rational_errors


def _residue(value: Fraction, modulus: int) -> int:
    return value.numerator * pow(value.denominator, -1, modulus) % modulus


_SHOWN_TERMS = 4


def _block_difference(computed: np.ndarray, expected: np.ndarray, shape: Shape) -> str:
    """The first few differing terms of one C block, in words."""
    a_index, b_index, _ = block_indices(shape)
    names = {
        f"{block_name('A', *a_index[a])}*{block_name('B', *b_index[b])}": (computed[a, b], expected[a, b])
        for a, b in zip(*np.nonzero(computed != expected))
    }
    shown = dict(list(names.items())[:_SHOWN_TERMS])
    actual = Form.of({name: Fraction(int(got)) for name, (got, _) in shown.items()})
    wanted = Form.of({name: Fraction(int(want)) for name, (_, want) in shown.items()})
    text = describe_difference(actual, wanted)
    hidden = len(names) - len(shown)
    return text + (f" (and {hidden} more wrong terms)" if hidden else "")


def check_modular(scheme: ModularScheme) -> ModularReport:
    """The Brent equations modulo p and over Q, on exact integer tensors.

    Assumes: coefficients whose denominators are prime to p (integers, as the
    catalogues write them, or PLinOpt's rationals).  Ensures: one error per C
    block wrong modulo p and, separately, one per C block wrong over Q.
    """
    algorithm, p = scheme.algorithm, scheme.modulus
    tables = Expansion(algorithm).tables()
    singular = sorted({c for table in tables for row in table for c in row if math.gcd(c.denominator, p) != 1}, key=abs)
    if singular:
        message = f"the coefficient {singular[0]} has no value modulo {p}: its denominator is not invertible"
        return ModularReport(scheme, (Diagnostic(message, algorithm.span),), ())
    residues = [
        np.array([[_residue(c, p) for c in row] for row in table], dtype=object) for table in tables
    ]
    reduced_all = brent_tensor(*residues) % p
    (u, v, w), scale = scaled_tables(algorithm)
    over_q = brent_tensor(u, v, w)
    expected = classical_tensor(algorithm.shape)
    spans = {o.block: o.span for o in algorithm.outputs}
    modular, rational = [], []
    for c, (i, j) in enumerate(block_indices(algorithm.shape)[2]):
        block = block_name("C", i, j)
        span = spans.get(block) or algorithm.span
        reduced = reduced_all[:, :, c]
        if (reduced != expected[:, :, c]).any():
            difference = _block_difference(reduced, expected[:, :, c], algorithm.shape)
            modular.append(Diagnostic(f"{block} is wrong modulo {p}: {difference}", span))
        elif (over_q[:, :, c] != scale * expected[:, :, c]).any():
            computed = np.vectorize(lambda x: Fraction(int(x), scale), otypes=[object])(over_q[:, :, c])
            difference = _rational_difference(computed, expected[:, :, c], algorithm.shape)
            rational.append(Diagnostic(f"{block} holds only modulo {p}: over Q it {difference}", span))
    return ModularReport(scheme, tuple(modular), tuple(rational))


def _rational_difference(computed: np.ndarray, expected: np.ndarray, shape: Shape) -> str:
    a_index, b_index, _ = block_indices(shape)
    pairs = [
        (f"{block_name('A', *a_index[a])}*{block_name('B', *b_index[b])}", computed[a, b], Fraction(int(expected[a, b])))
        for a, b in zip(*np.nonzero(computed != expected))
    ]
    shown = pairs[:_SHOWN_TERMS]
    text = describe_difference(Form.of({n: got for n, got, _ in shown}), Form.of({n: want for n, _, want in shown}))
    hidden = len(pairs) - len(shown)
    return text + (f" (and {hidden} more wrong terms)" if hidden else "")


# --- complex schemes --------------------------------------------------------------------

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
            for a, b in list(zip(*wrong))[:_SHOWN_TERMS]
        ]
        more = len(wrong[0]) - len(terms)
        text = ", ".join(terms) + (f" and {more} more wrong terms" if more else "")
        errors.append(Diagnostic(f"{block_name('C', i, j)} is wrong over Q(i): it has {text}", scheme.span))
    return ComplexReport(scheme, tuple(errors))


# --- both -------------------------------------------------------------------------------

InexactScheme = ApproximateScheme | ModularScheme | ComplexScheme
InexactReport = ApproximateReport | ModularReport | ComplexReport


def check_inexact(scheme: InexactScheme) -> InexactReport:
    """The report for either kind of scheme that is not an exact algorithm over Q."""
    if isinstance(scheme, ApproximateScheme):
        return check_approximate(scheme)
    if isinstance(scheme, ComplexScheme):
        return check_complex(scheme)
    return check_modular(scheme)
