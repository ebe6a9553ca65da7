"""Greedy pair elimination, and what a list of linear forms costs.

:func:`eliminate` is the greedy pair elimination of fast-matmul's
``codegen`` (Benson and Ballard, PPoPP 2015) in PLinOpt's form (Dumas,
Pernet and Sedoglavic): repeatedly take the pair of terms ``a + λ·b`` that
the most forms contain (with the same ratio λ), name it, and substitute it;
a form that holds c·a + cλ·b then holds c·S.  :func:`additions` and
:func:`scalings` count what forms cost as PLinOpt's programs write them.

Assumes: forms as dicts from names to nonzero Fractions.  Ensures: every
rewritten form expands, through the named sums, to the form it replaced.
"""

from __future__ import annotations

import random
from fractions import Fraction

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


def pairs(targets: list[Terms]) -> dict[tuple[str, str, Fraction], int]:
    counts: dict[tuple[str, str, Fraction], int] = {}
    for target in targets:
        for key in _target_pairs(target):
            counts[key] = counts.get(key, 0) + 1
    return counts


def more_pairs_than(targets: list[Terms], limit: int) -> bool:
    """Whether the targets hold more than ``limit`` distinct pairs, found without counting them all (a large
    side's 285,000 took 3 s to count)."""
    seen: set[tuple[str, str, Fraction]] = set()
    for target in targets:
        for key in _target_pairs(target):
            seen.add(key)
            if len(seen) > limit:
                return True
    return False


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
    queue = _Buckets(pairs(targets))
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
    """Multiplications by constants when each form adds up its terms of each magnitude and multiplies
    that sum once, and terms of magnitude 1 need none: one per magnitude other than 1.  As PLinOpt's
    programs write them: ``(x + y)/2 - 3*z`` costs two, ``(o36 + o38)*2 - o34`` one, and
    ``z20/2 + (i35 - z38)/4 - z12`` two.  (Counting every term outside the commonest magnitude, as
    this did before, charged those last two 2 and 3.)"""
    return sum(len({abs(coef) for coef in form.values()} - {1}) for form in forms)
