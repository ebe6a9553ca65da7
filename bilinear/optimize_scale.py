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
