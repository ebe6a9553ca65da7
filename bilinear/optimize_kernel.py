"""The kernel split: compute a basis of the targets, and the other targets from it.

A side's targets (48 left factors over 16 A blocks, say) span a space of
small rank r.  PLinOpt's kernel method (``optimizer -K``, Dumas, Pernet and
Sedoglavic) picks r independent targets, computes them from the inputs, and
computes the others from those r: a dependent target is a combination of
basis targets (a vector of the kernel of the target matrix says which), often
of two or three where it has a dozen input terms.  :func:`kernel_split` does
that, and takes each dependent target the shorter of its two ways: from the
inputs, with the basis, or from the basis targets (fewer terms; a seeded
nudge of one term either way now and then, since pair elimination may
share the longer form).  Both groups then go through pair elimination.

The basis is found by elimination over Q along a seeded order of the targets
(in half the tries the sparsest first, as PLinOpt does without random ties),
so different seeds try different bases.

Assumes: forms as dicts over input names (nonzero Fractions).  Ensures:
named sums (each defined before use) and forms that expand to the targets.
"""

from __future__ import annotations

import random
from fractions import Fraction

from .optimize_pairs import Terms, eliminate

Row = dict[str, Fraction]


def reduce_past(rows: list[tuple[str, Row, Row]], vector: Row) -> tuple[Row, Row]:
    """(what is left of ``vector`` past the echelon rows (pivot, row with 1 at its pivot, that row's
    combination of basis vectors), the combination taken off): left empty exactly where ``vector``
    depends on the rows."""
    rest, taken = dict(vector), {}
    for pivot, row, combination in rows:
        coef = rest.get(pivot)
        if coef:
            for key, value in row.items():
                new = rest.get(key, 0) - coef * value
                if new:
                    rest[key] = new
                else:
                    rest.pop(key, None)
            for key, value in combination.items():
                taken[key] = taken.get(key, 0) + coef * value
    return rest, {k: v for k, v in taken.items() if v}


def basis_and_combinations(targets: list[Terms], order: list[int]) -> tuple[list[int], dict[int, dict[int, Fraction]]]:
    """Independent targets taken in ``order``, and each other target as a combination of them."""
    rows: list[tuple[str, Row, Row]] = []  # pivot, echelon row (pivot 1), that row over basis targets
    basis: list[int] = []
    dependent: dict[int, dict[int, Fraction]] = {}
    for index in order:
        rest, taken = reduce_past(rows, targets[index])
        if not rest:
            dependent[index] = taken
            continue
        pivot = min(rest)
        scale = 1 / rest[pivot]
        combination = {k: -v * scale for k, v in taken.items()}
        combination[index] = scale
        rows.append((pivot, {k: v * scale for k, v in rest.items()}, combination))
        basis.append(index)
    return basis, dependent


def kernel_split(targets: list[Terms], prefix: str, rng: random.Random) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """(named sums, forms): basis targets (and cheap dependents) from the inputs, the rest from the basis."""
    order = rng.sample(range(len(targets)), len(targets))
    if rng.random() < 0.5:
        order.sort(key=lambda i: len(targets[i]))
    basis, combinations = basis_and_combinations(targets, order)
    through = {i for i, c in combinations.items() if _through_is_cheaper(targets[i], c, rng)}
    direct = [i for i in range(len(targets)) if i not in through]
    sums, direct_forms = eliminate([targets[i] for i in direct], f"{prefix}a", rng, rng.choice((0, 1)))
    forms: dict[int, Terms] = dict(zip(direct, direct_forms))
    named: dict[int, tuple[str, Fraction]] = {}  # basis target -> (name, coefficient) of its vector
    for index in sorted({k for i in through for k in combinations[i]}):
        form = forms[index]
        if len(form) == 1:
            ((name, coef),) = form.items()
        else:
            name, coef = f"{prefix}k{index + 1}", Fraction(1)
            sums.append((name, form))
            forms[index] = {name: coef}
        named[index] = (name, coef)
    over_basis = []
    for index in sorted(through):
        form: Terms = {}
        for basis_index, coef in combinations[index].items():
            name, scale = named[basis_index]
            form[name] = form.get(name, 0) + coef * scale
        over_basis.append(form)
    later, rewritten = eliminate(over_basis, f"{prefix}b", rng, rng.choice((0, 1)))
    forms.update(zip(sorted(through), rewritten))
    return sums + later, [forms[i] for i in range(len(targets))]


def _through_is_cheaper(target: Terms, combination: dict[int, Fraction], rng: random.Random) -> bool:
    direct, through = len(target), len(combination)
    return through + rng.choice((0, 0, 1, -1)) < direct
