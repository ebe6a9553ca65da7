"""Fewer additions: common-subexpression elimination over U, V and W.

Every product's left factor is a linear form over A blocks, its right factor
one over B blocks, and every C block one over products.  Forming them one by
one costs (terms − 1) additions each; a named sum used by several saves the
difference.  :func:`eliminate` is the greedy pair elimination of
fast-matmul's ``codegen`` (Benson and Ballard, PPoPP 2015) in PLinOpt's
form (Dumas, Pernet and Sedoglavic): repeatedly take the pair of terms
``a + λ·b`` that the most forms contain (with the same ratio λ), name it,
and substitute it; a form that holds c·a + cλ·b then holds c·S.  Ties (and,
in half the tries, pairs one occurrence short of the best) are chosen by a
seeded random order, and :func:`optimize` keeps the cheapest of several
seeds, so the result is reproducible.

Assumes: a checked algorithm.  Ensures: an algorithm with the same products
(as expanded coefficients) and outputs, whose factors and outputs are
written over named sums; the caller verifies it (the CLI does, before
writing it).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from .ir import Algorithm, Form, Output, Product, Sum
from .optimize_scale import rescale
from .verify.expand import expansion_of

Terms = dict[str, Fraction]


def _target_pairs(target: Terms):
    names = sorted(target)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            yield a, b, target[b] / target[a]


def _pairs_with(target: Terms, name: str, skip: str | None = None) -> list[tuple[str, str, Fraction]]:
    """The keys of the target's pairs that hold ``name`` (but not ``skip``)."""
    keys = []
    for other in target:
        if other != name and other != skip:
            first, second = (name, other) if name < other else (other, name)
            keys.append((first, second, target[second] / target[first]))
    return keys


def _pairs(targets: list[Terms]) -> dict[tuple[str, str, Fraction], int]:
    counts: dict[tuple[str, str, Fraction], int] = {}
    for target in targets:
        for key in _target_pairs(target):
            counts[key] = counts.get(key, 0) + 1
    return counts


def eliminate(
    targets: list[Terms], prefix: str, rng: random.Random | None = None, slack: int = 0
) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """Greedy pair elimination: (named sums in definition order, the targets rewritten over them).

    Without ``rng`` the first-counted most frequent pair is taken (constant
    time, for schemes of any size); with it, a random pair among those at most ``slack`` short of the most frequent
    (never one that occurs only once).  Pairs sit in buckets by count and only
    the changed targets' pairs move, so an iteration costs about the size of
    the top buckets, not a recount of every pair.
    """
    targets = [dict(t) for t in targets]
    sums: list[tuple[str, Terms]] = []
    queue = _Buckets(_pairs(targets))
    while True:
        if rng is None:
            chosen = queue.first()
        else:
            pool = queue.top(slack)
            chosen = rng.choice(sorted(pool)) if pool else None
        if chosen is None:
            return sums, targets
        a, b, ratio = chosen
        name = f"{prefix}{len(sums) + 1}"
        sums.append((name, {a: Fraction(1), b: ratio}))
        for target in targets:
            if a in target and b in target and target[b] == ratio * target[a]:
                queue.change([*_pairs_with(target, a), *_pairs_with(target, b, skip=a)], -1)
                coefficient = target.pop(a)
                del target[b]
                target[name] = coefficient
                queue.change(_pairs_with(target, name), +1)  # pairs among the other terms are unchanged


class _Buckets:
    """Pair counts, and the pairs of each count (dicts as ordered sets: deterministic, unlike a set)."""

    def __init__(self, counts: dict) -> None:
        self.counts = counts
        self.buckets: dict[int, dict] = {}
        for key, count in counts.items():
            self.buckets.setdefault(count, {})[key] = None
        self.best = max(self.buckets, default=0)

    def change(self, keys, delta: int) -> None:
        for key in keys:
            old = self.counts.get(key, 0)
            new = old + delta
            if old:
                del self.buckets[old][key]
            if new:
                self.counts[key] = new
                self.buckets.setdefault(new, {})[key] = None
                self.best = max(self.best, new)
            else:
                del self.counts[key]

    def first(self):
        """The first-counted of the most frequent pairs (None when no pair occurs twice)."""
        while self.best >= 2 and not self.buckets.get(self.best):
            self.best -= 1
        return next(iter(self.buckets[self.best])) if self.best >= 2 else None

    def top(self, slack: int) -> list:
        """Pairs at most ``slack`` short of the most frequent count (at least 2)."""
        while self.best >= 2 and not self.buckets.get(self.best):
            self.best -= 1
        if self.best < 2:
            return []
        return [key for count in range(self.best, max(2, self.best - slack) - 1, -1) for key in self.buckets.get(count, ())]


def additions(forms) -> int:
    return sum(max(len(form) - 1, 0) for form in forms)


def scalings(forms) -> int:
    """Multiplications by constants when each form factors out its commonest magnitude:
    ``(x + y)/2 - 3*z`` costs two (the /2 and the 3*), as PLinOpt's programs write it."""
    total = 0
    for form in forms:
        magnitudes = Counter(abs(coef) for coef in form.values())
        if not magnitudes:
            continue
        common, count = max(magnitudes.items(), key=lambda item: (item[1], item[0] == 1))
        total += (len(form) - count) + (common != 1)
    return total


@dataclass(frozen=True)
class Side:
    """One side's sums and rewritten forms, and what they cost."""

    sums: list[tuple[str, Terms]]
    forms: list[Terms]

    @property
    def additions(self) -> int:
        return additions(self.forms) + additions(t for _, t in self.sums)

    @property
    def scalings(self) -> int:
        return scalings(self.forms) + scalings(t for _, t in self.sums)


# Above this many distinct pairs, only the deterministic run is made (each seeded run sorts its pool).
SEEDED_PAIRS = 20_000


def _best_side(forms: list[Terms], prefix: str, seeds: int) -> Side:
    candidates = [Side(*eliminate(forms, prefix))]
    if len(_pairs(forms)) > SEEDED_PAIRS:
        seeds = 0
    candidates += [
        Side(*eliminate(forms, prefix, random.Random(seed), slack)) for seed in range(seeds) for slack in (0, 1)
    ]
    return min((_rescaled(side) for side in candidates), key=_cost)


def _rescaled(side: Side) -> Side:
    """The side with its named sums rescaled where that saves scalings (:mod:`bilinear.optimize_scale`)."""
    return Side(*rescale(side.sums, side.forms, scalings))


def _transposed(weights: list[Terms], products: list[str], blocks: tuple[str, ...], prefix: str, seeds: int) -> Side:
    """The outputs by the transposition principle (Tellegen): eliminate over the products'
    weights w_r (forms over C blocks), then run that program backwards.

    Backwards, a target w_r = Σ c·x sends c·M_r to x, and a sum S = a + λ·b sends
    its collected value Z_S to a and λ·Z_S to b; each C block ends as what it
    collected.  Every sum becomes a named sum Z_S over products and other Z's.
    """
    inner = _best_side(weights, "_t", seeds)
    collected: dict[str, Terms] = {}
    for product, target in zip(products, inner.forms):
        for name, coef in target.items():
            collected.setdefault(name, {})[product] = coef
    renamed = {name: f"{prefix}{index}" for index, (name, _) in enumerate(inner.sums, start=1)}
    sums = []
    for name, terms in reversed(inner.sums):
        value = collected.get(name, {})
        sums.append((renamed[name], value))
        for term, coef in terms.items():
            into = collected.setdefault(term, {})
            into[renamed[name]] = into.get(renamed[name], 0) + coef
    return _rescaled(Side(sums, [collected.get(block, {}) for block in blocks]))


def _cost(side: Side) -> tuple[int, int]:
    return side.additions + side.scalings, side.additions


def sides(algorithm: Algorithm) -> tuple[list[Terms], list[Terms], list[Terms]]:
    """The expanded forms: left factors, right factors, outputs (over products)."""
    expansion = expansion_of(algorithm)
    left = [u.as_dict() for u, _ in expansion.factors]
    right = [v.as_dict() for _, v in expansion.factors]
    outputs = [expansion.outputs.get(block, Form()).as_dict() for block in algorithm.shape.blocks("C")]
    return left, right, outputs


def optimize(algorithm: Algorithm, seeds: int = 32, name: str | None = None) -> tuple[Algorithm, dict]:
    """The algorithm rewritten with shared sums, and the counts before and after per side."""
    left, right, outputs = sides(algorithm)
    taken = {p.name for p in algorithm.products}
    prefixes = [next(p for p in (letter, f"{letter}_", f"{letter}__") if not any(t.startswith(p) for t in taken)) for letter in "XYZ"]
    a_side, b_side, c_side = (_best_side(forms, prefix, seeds) for forms, prefix in zip((left, right, outputs), prefixes))
    weights = [w.as_dict() for w in expansion_of(algorithm).weights]
    products_names = [p.name for p in algorithm.products]
    backwards = _transposed(weights, products_names, algorithm.shape.blocks("C"), prefixes[2], seeds)
    c_side = min((c_side, backwards), key=_cost)
    products = tuple(
        Product(p.name, Form.of(u), Form.of(v)) for p, u, v in zip(algorithm.products, a_side.forms, b_side.forms)
    )
    written = tuple(
        Output(block, Form.of(w)) for block, w in zip(algorithm.shape.blocks("C"), c_side.forms) if w
    )
    sums = tuple(Sum(n, Form.of(t)) for side in (a_side, b_side, c_side) for n, t in side.sums)
    result = Algorithm(name or f"{algorithm.name}_cse", algorithm.shape, sums, products, written, declared_rank=algorithm.rank)
    before = [Side([], left), Side([], right), Side([], outputs)]
    counts = {
        side: {"before": (b.additions, b.scalings), "after": (a.additions, a.scalings)}
        for side, b, a in zip("ABC", before, (a_side, b_side, c_side))
    }
    return result, counts
