"""Fewer scalings by rescaling products: (α·u_r)·(β·v_r) with weights w_r/(αβ) gives the same C.

A catalogue scheme may write a product as ``(a/2 + b/2)·(2c - 2d)`` with weight 1, or as
``(2a)·(c)`` with weights 1/2, where ``(a + b)·(c - d)`` or ``a·c`` with weights ±1 needs no
multiplication by a constant at all.  The named-sum passes (:mod:`bilinear.optimize_scale`) cannot
see this: each side keeps its targets, so a factor moved between the sides of one product stays.
:func:`product_factors` chooses, product by product, the α and β that make its left factor, right
factor and the outputs using it cost the fewest scalings (:func:`bilinear.optimize_pairs.scalings`),
taking only steps that bring no new magnitude into any of those forms (on PLinOpt's rational
DPS scheme, trading 33124/38165 on one side for its inverse on the other lowered the expanded count
and raised the optimized one).  Additions are unchanged: only coefficients move.

Assumes: the expanded sides (:func:`bilinear.optimize_sides.sides`).  Ensures: every product's
α·β times its weights in the new outputs is its weights before, so the scheme computes the same C.
"""

from __future__ import annotations

from fractions import Fraction

from .ir import Algorithm, Form
from .optimize_pairs import Terms, scalings
from .optimize_sides import Side
from .verify.expand import expansion_of

Factor = tuple[Fraction, Fraction]  # (α, β): the left factor's and the right factor's
ONE = (Fraction(1), Fraction(1))


def product_factors(left: list[Terms], right: list[Terms], outputs: list[Terms], names: list[str]) -> list[Factor]:
    """(α, β) per product, (1, 1) where no rescaling saves a scaling.

    One pass suffices: a step scales a factor only by the inverse of one of its magnitudes, so the
    factor then holds a 1 and any other scaling of it would bring a new magnitude; and steps only
    shrink the outputs' magnitudes, so a step that a second pass could take, combined with the
    first pass's, would have been taken there as a cheaper one."""
    outputs = [dict(form) for form in outputs]  # the next products are priced against them after each step
    factors = []
    for index, name in enumerate(names):
        alpha, beta = _best_step((left, right, outputs), index, name)
        for form in outputs:
            if name in form:
                form[name] /= alpha * beta
        factors.append((alpha, beta))
    return factors


def rescaled(left: list[Terms], right: list[Terms], outputs: list[Terms], names: list[str],
             factors: list[Factor]) -> tuple[list[Terms], list[Terms], list[Terms]]:
    """The sides with each product's factors scaled by its (α, β) and its weights by 1/(αβ)."""
    weight = {name: 1 / (alpha * beta) for name, (alpha, beta) in zip(names, factors)}
    return ([_times(form, alpha) for form, (alpha, _) in zip(left, factors)],
            [_times(form, beta) for form, (_, beta) in zip(right, factors)],
            [{term: coef * weight.get(term, 1) for term, coef in form.items()} for form in outputs])


def rescaled_sides(written: tuple[Side | None, ...], names: list[str], factors: list[Factor]) -> tuple[Side | None, ...]:
    """A program's three sides (None where it gives none) computing the rescaled targets: the left
    and right factors scaled as forms, the products' terms in the outputs and in the named sums over
    products divided by αβ (a program of the scheme stays a candidate for its rescaled sides)."""
    left, right, outputs = written
    weight = {name: 1 / (alpha * beta) for name, (alpha, beta) in zip(names, factors)}

    def over_products(terms: Terms) -> Terms:
        return {term: coef * weight.get(term, 1) for term, coef in terms.items()}

    return (
        left and Side(left.sums, [_times(form, alpha) for form, (alpha, _) in zip(left.forms, factors)]),
        right and Side(right.sums, [_times(form, beta) for form, (_, beta) in zip(right.forms, factors)]),
        outputs and Side([(name, over_products(terms)) for name, terms in outputs.sums],
                         [over_products(form) for form in outputs.forms]),
    )


def _best_step(forms: tuple[list[Terms], list[Terms], list[Terms]], index: int, name: str) -> Factor:
    """The (α, β) that lowers the scalings of product ``index``'s forms most, ONE if none does.
    Candidates make a magnitude of the left or the right factor 1, or leave it: no other α keeps u's
    magnitudes among its own (α·|u| ⊆ |u| sending none to 1 means α·|u| = |u|, so α = 1), and
    likewise β.  A step that makes a weight 1 is among them or brings a new magnitude."""
    left, right, outputs = forms
    u, v = left[index], right[index]
    users = [form for form in outputs if name in form]

    def stepped(step: Factor) -> list[Terms]:
        alpha, beta = step
        return [_times(u, alpha), _times(v, beta), *({**form, name: form[name] / (alpha * beta)} for form in users)]

    def cost(step: Factor) -> int:
        return scalings(stepped(step))

    def removes_only(step: Factor) -> bool:
        return all(_magnitudes(after) <= _magnitudes(before) for after, before in zip(stepped(step), stepped(ONE)))

    alphas = {Fraction(1)} | {1 / abs(coef) for coef in u.values()}
    betas = {Fraction(1)} | {1 / abs(coef) for coef in v.values()}
    steps = sorted((alpha, beta) for alpha in alphas for beta in betas)  # sorted: the same choice on every run
    best = min(filter(removes_only, steps), key=cost, default=ONE)
    return best if cost(best) < cost(ONE) else ONE


def _magnitudes(form: Terms) -> set[Fraction]:
    return {abs(coef) for coef in form.values()} - {1}


def _times(form: Terms, factor: Fraction) -> Terms:
    return form if factor == 1 else {term: coef * factor for term, coef in form.items()}


def moved(source: Algorithm, result: Algorithm) -> dict[str, Factor]:
    """Product name -> (α, β) for each product ``result`` (an optimized ``source``) carries rescaled."""
    found = {}
    after = dict(zip((product.name for product in result.products), expansion_of(result).factors))
    for product, (u, v) in zip(source.products, expansion_of(source).factors):
        if product.name not in after:  # no output used it: dropped (optimize_dead)
            continue
        u_after, v_after = after[product.name]
        factor = (_ratio(u_after, u), _ratio(v_after, v))
        if factor != ONE:
            found[product.name] = factor
    return found


def said(factors: dict[str, Factor]) -> str:
    """``M1 (left factor ×1/2, right factor ×2)``, … for the optimize command's note."""
    def one(alpha: Fraction, beta: Fraction) -> str:
        parts = zip(("left factor", "right factor", "weights"), (alpha, beta, 1 / (alpha * beta)))
        return ", ".join(f"{part} ×{factor}" for part, factor in parts if factor != 1)

    return ", ".join(f"{name} ({one(*factor)})" for name, factor in factors.items())


def _ratio(after: Form, before: Form) -> Fraction:
    term, coef = next(iter(before.as_dict().items()))
    return after.as_dict()[term] / coef
