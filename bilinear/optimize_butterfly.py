"""A change of basis of the targets: butterflies, half-sums and half-differences of pairs.

Two targets f and g that share most of their terms, with the same or the
opposite coefficient up to one ratio λ, are both dense, while their half-sum
s = (f + λ·g)/2 and half-difference d = (f − λ·g)/2 each hold about half the
terms: the terms where f = −λ·g cancel in s, those where f = λ·g in d.
Computing s and d, then f = s + d and λ·g = s − d (two additions, and a
scaling by 1/λ when |λ| ≠ 1) can cost far fewer operations than f and g;
PLinOpt's program for the C side of its rational ⟨4,4,4;48⟩ ends in such
butterflies, the /2 folded into the half-sums.  Pair elimination never finds
them: it only ever adds terms that a target holds, and s and d are not sums
of f's terms.

:func:`pairing` chooses the pairs greedily, by the terms they save
(no pair shares a target); :func:`transformed` gives the new targets (s in
f's place, d in g's); the caller optimizes those by any method, and
:func:`recovered` appends the butterflies to that program.  Applied again to
the new targets, this finds butterflies of butterflies (a Hadamard transform
of four targets).  Whether the result is cheaper than the targets optimized
as they are is the caller's to judge.

Assumes: forms as dicts from names to nonzero Fractions.  Ensures: the
recovered program's forms expand, through its named sums, to the targets
given to :func:`transformed`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from .optimize_pairs import Terms

HALF = Fraction(1, 2)


@dataclass(frozen=True, order=True)
class Butterfly:
    """Targets ``first`` (f) and ``second`` (g), by index, to be computed as s + d and (s − d)/ratio
    from s = (f + ratio·g)/2 and d = (f − ratio·g)/2; ``saving``: the terms s and d hold fewer than
    f and g."""

    first: int
    second: int
    ratio: Fraction
    saving: int


def butterflies(forms: list[Terms]) -> list[Butterfly]:
    """Every pair of targets, with each ratio that cancels a term (as a magnitude: λ and −λ give the
    same s and d up to their order and sign), and what it saves in terms."""
    found = []
    for i, f in enumerate(forms):
        for j in range(i + 1, len(forms)):
            g = forms[j]
            common = f.keys() & g.keys()
            unshared = len(f) + len(g) - 2 * len(common)  # in both s and d
            for ratio in sorted({abs(f[k] / g[k]) for k in common}):
                cancelled = sum(1 for k in common if abs(f[k]) == ratio * abs(g[k]))  # in s or in d
                found.append(Butterfly(i, j, ratio, cancelled - unshared))
    return found


# A pair must save this many terms: recovering f and g costs two additions, and on the rational
# ⟨4,4,4;48⟩'s C side the pairs that save 3 (one addition net) make the searched program worse.
LEAST_SAVING = 4


def pairing(
    forms: list[Terms], rng: random.Random | None = None, least: int = LEAST_SAVING, among: frozenset[int] | set[int] | None = None,
    most: int | None = None,
) -> list[Butterfly]:
    """Pairs with no target in common, greedily by saving: only those that save at least ``least``
    terms.  Ties (often many: a scheme's symmetries make whole families of pairs save alike) go by
    index, or with ``rng`` in a random order; which of them are taken matters (on the rational
    ⟨4,4,4;48⟩'s C side, blocks two rows apart pair far better than neighbouring rows).  With
    ``among``, only pairs of those targets; with ``most``, only pairs that save at most that many
    (the pairs that save most may be of targets better computed from others, as on an overfull side
    where the densest rows are combinations of sparser ones)."""
    found = [
        b for b in butterflies(forms)
        if (among is None or {b.first, b.second} <= among) and (most is None or b.saving <= most)
    ]
    order = {b: (rng.random() if rng else 0.0) for b in found}
    chosen: list[Butterfly] = []
    used: set[int] = set()
    for butterfly in sorted(found, key=lambda b: (-b.saving, order[b], b.first, b.second, b.ratio)):
        if butterfly.saving >= least and butterfly.first not in used and butterfly.second not in used:
            chosen.append(butterfly)
            used |= {butterfly.first, butterfly.second}
    return chosen


def scaled(forms: list[Terms]) -> set[int]:
    """The targets with a coefficient of magnitude other than 1: where a butterfly may also fold a
    scaling (PLinOpt's A side of the rational ⟨4,4,4;48⟩ pays 4 halvings for 12 such rows)."""
    return {index for index, form in enumerate(forms) if any(abs(coef) != 1 for coef in form.values())}


def transformed(forms: list[Terms], chosen: list[Butterfly], halved: bool = True) -> list[Terms]:
    """The targets with each chosen pair's f replaced by its half-sum s and g by its half-difference
    d; unless ``halved``, by 2s = f + λ·g and 2d = f − λ·g."""
    scale = HALF if halved else Fraction(1)
    targets = [dict(form) for form in forms]
    for b in chosen:
        f, g = forms[b.first], forms[b.second]
        scaled_f = {k: scale * v for k, v in f.items()}
        targets[b.first], targets[b.second] = _sum(scaled_f, g, scale * b.ratio), _sum(scaled_f, g, -scale * b.ratio)
    return targets


def recovered(
    sums: list[tuple[str, Terms]], forms: list[Terms], chosen: list[Butterfly], prefix: str, halved: bool = True
) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """A program for the transformed targets (sums, forms; ``halved`` as they were transformed),
    extended to the original targets: each pair's two new targets named prefix<n> (unless one term
    already says what it is), then f = s + d and g = (s − d)/ratio; unless ``halved``, f = (2s + 2d)/2,
    named too, and g = (f − 2d)/ratio.  That is PLinOpt's ``o36 := (x52 + x48)/2; o38 := o36 - x52``:
    the halving paid once, in f, where computing s and d would pay it twice."""
    sums = list(sums)
    forms = [dict(form) for form in forms]
    made = 0

    def named(form: Terms) -> Terms:
        nonlocal made
        if len(form) <= 1:
            return form  # a multiple of one vector, or nothing (f = ±ratio·g)
        made += 1
        sums.append((f"{prefix}{made}", form))
        return {f"{prefix}{made}": Fraction(1)}

    for b in chosen:
        new_sum, new_difference = named(forms[b.first]), named(forms[b.second])
        if halved:
            forms[b.first] = _sum(new_sum, new_difference, Fraction(1))
            forms[b.second] = _sum({k: v / b.ratio for k, v in new_sum.items()}, new_difference, -1 / b.ratio)
        else:
            first = named(_sum({k: HALF * v for k, v in new_sum.items()}, new_difference, HALF))
            forms[b.first] = first
            forms[b.second] = _sum({k: v / b.ratio for k, v in first.items()}, new_difference, -1 / b.ratio)
    return sums, forms


def _sum(x: Terms, y: Terms, scale: Fraction) -> Terms:
    """x + scale·y, without cancelled terms."""
    total = dict(x)
    for k, v in y.items():
        total[k] = total.get(k, 0) + scale * v
    return {k: v for k, v in total.items() if v}
