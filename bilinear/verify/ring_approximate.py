"""Approximate (border-rank) schemes: the Brent equations as Laurent polynomials in a parameter x.

For every triple (A block, B block, C block) the coefficient Σ_r u·v·w is a
Laurent polynomial in x; the scheme holds *in the limit x → 0* when none has
a negative power and every constant term is the classical one.  It is then
exact for no fixed x: the error is O(x^σ), while single products carry up to
x^-φ, so rounding errors grow like u·x^-φ (Bini, Lotti and Romani 1980).
Checked with sympy.  See :mod:`bilinear.verify.rings` for the other rings.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where an approximate scheme is checked: it takes 0.3 s
    import sympy

from ..diagnostics import Diagnostic, counted
from ..ir import Form, Shape, Span, block_name
from .algorithm import describe_difference
from .expand import classical
from .ring_tensor import block_indices


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
                raise ValueError(f"{operand} side has {counted(len(table), 'row')}; {self.shape} needs "
                                 f"{len(self.shape.blocks(operand))}")
            if any(len(row) != len(self.u[0]) for row in table):
                raise ValueError("every row needs one entry per product")

    @property
    def rank(self) -> int:
        return len(self.u[0])

    @property
    def not_exact_because(self) -> str:
        return (
            f"{self.name} is an approximate (border-rank) scheme: its coefficients depend on {self.parameter} (one "
            f"that holds for every {self.parameter} is exact once a value is substituted; else only in the limit "
            f"{self.parameter} → 0)"
        )


def is_laurent(expr: sympy.Expr, parameter: sympy.Symbol) -> bool:
    """Whether ``expr`` is a Laurent polynomial in ``parameter`` with rational coefficients (what
    :func:`laurent_terms` reads): 1/(1 + x) is not one."""
    import sympy

    return all(coefficient.is_Rational and power.is_Integer
               for coefficient, power in (term.as_coeff_exponent(parameter)
                                          for term in sympy.Add.make_args(sympy.expand(expr))))


def laurent_terms(expr: sympy.Expr, parameter: sympy.Symbol) -> dict[int, Fraction]:
    """``{power: coefficient}`` of a Laurent polynomial with rational coefficients."""
    terms: dict[int, Fraction] = defaultdict(Fraction)
    import sympy

    for term in sympy.Add.make_args(sympy.expand(expr)):
        coefficient, power = term.as_coeff_exponent(parameter)
        terms[int(power)] += Fraction(int(coefficient.p), int(coefficient.q))
    return {power: c for power, c in terms.items() if c != 0}


def _triple_sums(scheme: ApproximateScheme) -> dict[tuple[int, int, int], dict[int, Fraction]]:
    """Σ_r u_ar v_br w_cr for every (a, b, c) some product touches, as Laurent terms."""
    import sympy

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
            if not entries:  # a factor of zero (W's, for a product no C block uses): the product has no term
                break
            powers.append(min((min(terms) for terms in entries if terms), default=0))
        else:
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
