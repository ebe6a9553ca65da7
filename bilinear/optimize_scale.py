"""Fewer scalings at the same additions: rescale named sums so that their uses read ±1.

A named sum S used as ``c·S`` in several forms costs a multiplication by c
in each (when no other term of the form has magnitude |c|).  Naming ``S' = c·S``
instead moves that one multiplication into S's definition, where it is
often free: ``(a - b)/2`` costs one scaling however many forms then use
``S'`` with coefficient ±1.  :func:`rescale` tries, for each named sum, the
magnitudes it is used with (and the inverses of its definition's), keeps a
factor whenever the side's scaling count (:func:`bilinear.optimize_pairs.scalings`)
drops, and repeats until no factor helps.  Additions are unchanged: only
coefficients move.

Assumes: named sums defined over inputs and earlier sums; forms over inputs
and sums.  Ensures: every form and sum expands to the same linear form as
before, with ``S'`` standing for the rescaled sum (same name).
"""

from __future__ import annotations

from fractions import Fraction

Terms = dict[str, Fraction]


def rescale(sums: list[tuple[str, Terms]], forms: list[Terms], scalings) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """(sums, forms) with each sum scaled where that saves scalings; ``scalings`` counts a list of forms."""
    definitions = {name: dict(terms) for name, terms in sums}
    forms = [dict(form) for form in forms]
    containers = [*definitions.values(), *forms]
    users: dict[str, list[Terms]] = {name: [] for name in definitions}
    for container in containers:
        for term in container:
            if term in users:
                users[term].append(container)
    improved = True
    while improved:
        improved = False
        for name, definition in definitions.items():
            using = users[name]
            if not using:
                continue
            factors = {abs(c[name]) for c in using} | {1 / abs(v) for v in definition.values()}
            factors.discard(Fraction(1))
            before = scalings([definition, *using])
            best, best_factor = before, None
            for factor in sorted(factors):
                after = scalings([{k: v * factor for k, v in definition.items()}, *({**c, name: c[name] / factor} for c in using)])
                if after < best:
                    best, best_factor = after, factor
            if best_factor is not None:
                for key in definition:
                    definition[key] *= best_factor
                for container in using:
                    container[name] /= best_factor
                improved = True
    return [(name, definitions[name]) for name, _ in sums], forms


def scaled_copies(sums: list[tuple[str, Terms]], forms: list[Terms], prefix: str) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """(sums, forms) with a named copy c·x of a vector x wherever x is, with magnitude c ≠ 1, the only
    term of that magnitude in two statements or more: each of them then saves its scaling, and the copy
    costs one (PLinOpt's programs do the same: ``r := i5/4`` once, ``± r`` where it is needed).
    The copy of x is defined right after x (first, for an input); repeats while one saves."""
    definitions = {name: dict(terms) for name, terms in sums}
    forms = [dict(form) for form in forms]
    containers = [*definitions.values(), *forms]
    copies: dict[str, list[tuple[str, Terms]]] = {}  # vector -> its copies, in the order made
    made = 0
    while True:
        lone: dict[tuple[str, Fraction], int] = {}
        for container in containers:
            for name, magnitude in _lone_terms(container):
                lone[(name, magnitude)] = lone.get((name, magnitude), 0) + 1
        best = max(sorted(lone), key=lambda key: lone[key], default=None)
        if best is None or lone[best] < 2:
            break
        name, magnitude = best
        made += 1
        copy = f"{prefix}{made}"
        copies.setdefault(name, []).append((copy, {name: magnitude}))
        for container in containers:
            if (name, magnitude) in _lone_terms(container):
                container[copy] = container.pop(name) / magnitude
    ordered = [copy for name in copies if name not in definitions for copy in copies[name]]
    for name, _ in sums:
        ordered += [(name, definitions[name]), *copies.get(name, ())]
    return ordered, forms


def _lone_terms(container: Terms) -> list[tuple[str, Fraction]]:
    """(name, magnitude) of the terms whose magnitude, other than 1, no other term has."""
    magnitudes: dict[Fraction, list[str]] = {}
    for name, coef in container.items():
        magnitudes.setdefault(abs(coef), []).append(name)
    return [(names[0], magnitude) for magnitude, names in magnitudes.items() if len(names) == 1 and magnitude != 1]
