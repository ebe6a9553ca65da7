"""Algorithms expanded to coefficients: every product's factors over blocks,
every output over products, and the U, V, W tables.

Bilinear terms are written as Forms whose names are ``"A11*B12"``: a block of
A times a block of B, never commuted, so everything proven here holds for
matrix blocks and therefore at every level of recursion.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property

from ..ir import Algorithm, Form, block_name, operand_of


def bilinear(left: Form, right: Form) -> Form:
    """``(Σ u·A)(Σ v·B)`` as a Form over ``"A*B"`` names."""
    return Form.of({f"{a}*{b}": cu * cv for a, cu in left.terms for b, cv in right.terms})


def classical(i: int, j: int, k: int) -> Form:
    """What ``C[i,j]`` must equal: ``Σ_l A[i,l] B[l,j]``."""
    return Form.of({f"{block_name('A', i, l)}*{block_name('B', l, j)}": 1 for l in range(1, k + 1)})


_RECENT: list[tuple[Algorithm, Expansion]] = []


def expansion_of(algorithm: Algorithm) -> Expansion:
    """The shared Expansion of an algorithm (verification, counts and stability expand it once)."""
    for known, expansion in _RECENT:
        if known is algorithm:
            return expansion
    expansion = Expansion(algorithm)
    _RECENT.insert(0, (algorithm, expansion))
    del _RECENT[4:]
    return expansion


Integral = tuple[dict[str, int], int]  # a form as integer numerators over one positive denominator, in lowest terms


class Expansion:
    """Expansions of one algorithm's definitions (computed once, on demand).

    Named sums are expanded as integer numerators over one denominator
    (:data:`Integral`), without recursion, and made Forms only when asked for,
    each distinct coefficient made a Fraction once: a program of 50,000 sums
    (PLinOpt's ⟨32,32,32;15096⟩) then expands in integer additions rather
    than Fraction arithmetic, and a chain of sums of any length expands.
    """

    def __init__(self, algorithm: Algorithm):
        self.algorithm = algorithm
        self._sums = {s.name: s.form for s in algorithm.sums}
        self._memo: dict[str, Form] = {}
        self._integrals: dict[str, Integral] = {}
        self._derivatives: dict[str, dict[str, Fraction]] = {}  # name -> ∂S/∂name per named sum S (partial)
        self._fractions: dict[tuple[int, int], Fraction] = {}

    def of(self, name: str) -> Form:
        """A named sum expanded down to blocks or product names; blocks and products stay."""
        if name not in self._sums:
            return Form.symbol(name)
        if name not in self._memo:
            self._memo[name] = _as_form(self._integral_of(name), self._fractions)
        return self._memo[name]

    def operand(self, name: str) -> str | None:
        """'A' or 'B' for a named sum of blocks; None for a sum of products (or one that is zero)."""
        numerators = self._integral_of(name)[0] if name in self._sums else {name: 1}
        return operand_of(min(numerators)) if numerators else None

    def form(self, form: Form) -> Form:
        """A form with every named sum in it expanded."""
        if not any(name in self._sums for name, _ in form.terms):
            return Form(form.terms)  # nothing to expand (as in every table); spans dropped as below
        for name, _ in form.terms:
            if name in self._sums:
                self._integral_of(name)
        return _as_form(self._combined(form), self._fractions)

    def _integral_of(self, name: str) -> Integral:
        """A named sum's expansion, its sums' first: a depth-first walk on an explicit stack (chains of
        any length), each sum entered, then left once the sums it reads are expanded."""
        stack, entered = [(name, False)], set()
        while stack:
            top, leaving = stack.pop()
            if top in self._integrals:
                continue
            if leaving:
                self._integrals[top] = self._combined(self._sums[top])
                entered.discard(top)
                continue
            entered.add(top)
            stack.append((top, True))
            for term, _ in self._sums[top].terms:
                if term in entered:
                    raise ValueError(f"named sum {top} depends on itself")
                if term in self._sums and term not in self._integrals:
                    stack.append((term, False))
        return self._integrals[name]

    def _combined(self, form: Form) -> Integral:
        """Σ coef·(expansion of each term), every term's sums expanded already."""
        parts = []
        for name, coef in form.terms:
            numerators, denominator = self._integrals.get(name, ({name: 1}, 1))
            parts.append((numerators, coef.numerator, coef.denominator * denominator))
        common = math.lcm(*(denominator for _, _, denominator in parts))
        total: dict[str, int] = {}
        for numerators, numerator, denominator in parts:
            factor = numerator * (common // denominator)
            for key, c in numerators.items():
                total[key] = total.get(key, 0) + c * factor
        total = {key: c for key, c in total.items() if c}
        divisor = math.gcd(common, *total.values())
        return {key: c // divisor for key, c in total.items()}, common // divisor

    def partial(self, form: Form, name: str) -> Fraction:
        """∂form/∂name, with every other named sum expanded."""
        through = self._partials(name, [term for term, _ in form.terms])
        return sum((coef * (1 if term == name else through.get(term, 0)) for term, coef in form.terms), Fraction(0))

    def _partials(self, name: str, start: list[str]) -> dict[str, Fraction]:
        """∂S/∂name for the named sums S that ``start`` reads, and the sums they read: the walk of
        :meth:`_integral_of` (an explicit stack, chains of any length), kept per name."""
        known = self._derivatives.setdefault(name, {})
        stack, entered = [(term, False) for term in start if term in self._sums and term != name], set()
        while stack:
            top, leaving = stack.pop()
            if top in known:
                continue
            terms = self._sums[top].terms
            if leaving:
                known[top] = sum((c * (1 if t == name else known.get(t, 0)) for t, c in terms), Fraction(0))
                entered.discard(top)
                continue
            entered.add(top)
            stack.append((top, True))
            for term, _ in terms:
                if term in entered:
                    raise ValueError(f"named sum {top} depends on itself")
                if term in self._sums and term != name and term not in known:
                    stack.append((term, False))
        return known

    @cached_property
    def factors(self) -> tuple[tuple[Form, Form], ...]:
        """(u_r over A blocks, v_r over B blocks) per product."""
        return tuple((self.form(p.left), self.form(p.right)) for p in self.algorithm.products)

    @cached_property
    def outputs(self) -> dict[str, Form]:
        """Each C block over product names."""
        return {o.block: self.form(o.form) for o in self.algorithm.outputs}

    @cached_property
    def product_terms(self) -> tuple[Form, ...]:
        """u_r ⊗ v_r per product, over ``"A*B"`` names."""
        return tuple(bilinear(u, v) for u, v in self.factors)

    @cached_property
    def product_index(self) -> dict[str, int]:
        return {p.name: r for r, p in enumerate(self.algorithm.products)}

    @cached_property
    def uses(self) -> dict[str, dict[str, Fraction]]:
        """Per product, the C blocks it adds into with their coefficients (a column of W, sparse)."""
        columns: dict[str, dict[str, Fraction]] = {p.name: {} for p in self.algorithm.products}
        for block, form in self.outputs.items():
            for product, coef in form.terms:
                if product in columns:
                    columns[product][block] = coef
        return columns

    def output_value(self, block: str) -> Form:
        """What the algorithm computes for one C block, over ``"A*B"`` names."""
        total: dict[str, Fraction] = {}
        for product, coef in self.outputs.get(block, Form()).terms:
            for term, term_coef in self.product_terms[self.product_index[product]].terms:
                total[term] = total.get(term, Fraction(0)) + coef * term_coef
        return Form.of(total)

    @cached_property
    def weights(self) -> tuple[Form, ...]:
        """w_r per product: its weight in every C block (W's columns)."""
        return tuple(Form.of(self.uses[p.name]) for p in self.algorithm.products)

    def tables(self) -> tuple[list[list[Fraction]], list[list[Fraction]], list[list[Fraction]]]:
        """U (A blocks × products), V (B blocks × products), W (C blocks × products)."""
        shape, products = self.algorithm.shape, self.algorithm.products
        U = [[u.coefficient(a) for u, _ in self.factors] for a in shape.blocks("A")]
        V = [[v.coefficient(b) for _, v in self.factors] for b in shape.blocks("B")]
        W = [[self.outputs[c].coefficient(p.name) for p in products] for c in shape.blocks("C")]
        return U, V, W


def _as_form(integral: Integral, fractions: dict[tuple[int, int], Fraction]) -> Form:
    """The Form of an expansion; ``fractions`` holds each coefficient made so far (a scheme has few
    distinct ones, and making a Fraction is most of the cost)."""
    numerators, denominator = integral
    terms = []
    for key, c in sorted(numerators.items()):
        value = fractions.get((c, denominator))
        if value is None:
            value = fractions[(c, denominator)] = Fraction(c, denominator)
        terms.append((key, value))
    return Form(tuple(terms))
