"""Which computed vectors a target is a combination of: looked up by hash (:mod:`bilinear.optimize_reuse`).

A pair is found by a hash, not a search over pairs: with two random linear
functionals h₁, h₂ modulo a prime, h₁(v)/h₂(v) is the same for every
multiple of v, so for each candidate a and ratio x (a quotient t[k]/a[k], so
that x·a cancels a term of t) one look-up says which b, if any, is parallel
to t − x·a.  Every hit is checked exactly before it is used.  The deeper
search (three vectors) looks up the pairs of every t − x·a, each batch of
look-ups keyed with one modular inverse (Montgomery's trick).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction
from typing import Callable

from .optimize_pairs import Terms

PRIME = (1 << 61) - 1


def _residue(value: Fraction) -> int:
    if value.denominator == 1:  # most coefficients: no inverse to take
        return value.numerator % PRIME
    denominator = value.denominator
    while denominator % PRIME == 0:
        # no inverse modulo the prime: its factors are left out, so this residue does not follow the exact
        # value through sums (a look-up may miss, or hit where the exact check then refuses)
        denominator //= PRIME
    return value.numerator * pow(denominator, -1, PRIME) % PRIME


@dataclass
class Measured:
    """A vector as :func:`through` looks it up: its coefficients modulo PRIME (the keys are its
    support), its two hashes, and its exact terms, made on the first hit (most vectors looked up
    have none, and the deeper search's t − x·a are many)."""

    residues: dict[str, int]
    hashes: tuple[int, int]
    make_exact: Callable[[], Terms]

    @cached_property
    def exact(self) -> Terms:
        return self.make_exact()


class Vectors:
    """Every name's expansion over the inputs, its coefficients modulo PRIME (and their inverses),
    and its two hashes."""

    def __init__(self, definitions: dict[str, Terms], rng: random.Random) -> None:
        self.definitions = definitions
        self.full: dict[str, Terms] = {}
        self.residues: dict[str, dict[str, int]] = {}
        self.inverses: dict[str, dict[str, int]] = {}
        self.hashed: dict[str, tuple[int, int]] = {}
        self.weights: dict[str, tuple[int, int]] = {}
        self.rng = rng
        self.alive: set[str] = set(definitions)

    def of(self, name: str) -> Terms:
        if name not in self.full:
            if name in self.definitions:
                total: Terms = {}
                for term, coef in self.definitions[name].items():
                    for leaf, inner in self.of(term).items():
                        value = total.get(leaf, 0) + coef * inner
                        if value:
                            total[leaf] = value
                        else:
                            total.pop(leaf, None)
                self.full[name] = total
            else:
                self.full[name] = {name: Fraction(1)}
            residues = {leaf: _residue(coef) for leaf, coef in self.full[name].items()}
            self.residues[name] = residues
            # a coefficient the prime divides (residue 0) has no inverse, and cancels no term of a ratio
            self.inverses[name] = {leaf: pow(r, -1, PRIME) for leaf, r in residues.items() if r}
            self.hashed[name] = self.hashes(residues)
        return self.full[name]

    def measure(self, vector: Terms) -> Measured:
        """The vector as :func:`through` looks it up."""
        residues = {leaf: _residue(coef) for leaf, coef in vector.items()}
        return Measured(residues, self.hashes(residues), lambda: vector)

    def minus(self, wanted: str, ratio: Fraction, first: str) -> Measured | None:
        """``wanted``'s vector − ratio·``first``'s, measured modulo PRIME (the hashes are linear: no
        pass over the terms), or None where fewer than two terms are left."""
        r = _residue(ratio)
        rest = dict(self.residues[wanted])
        for leaf, value in self.residues[first].items():
            left = (rest.get(leaf, 0) - r * value) % PRIME
            if left:
                rest[leaf] = left
            else:
                rest.pop(leaf, None)
        if len(rest) < 2:
            return None
        (t1, t2), (a1, a2) = self.hashed[wanted], self.hashed[first]
        minuend, subtrahend = self.full[wanted], self.full[first]

        def exact() -> Terms:  # over every leaf of both: a coefficient the prime divides has residue 0
            terms = {leaf: minuend.get(leaf, 0) - ratio * subtrahend.get(leaf, 0) for leaf in {*minuend, *subtrahend}}
            return {leaf: coef for leaf, coef in terms.items() if coef}

        return Measured(rest, ((t1 - r * a1) % PRIME, (t2 - r * a2) % PRIME), exact)

    def hashes(self, residues: dict[str, int]) -> tuple[int, int]:
        h1 = h2 = 0
        for leaf, residue in residues.items():
            if leaf not in self.weights:
                self.weights[leaf] = (self.rng.randrange(1, PRIME), self.rng.randrange(1, PRIME))
            w1, w2 = self.weights[leaf]
            h1, h2 = (h1 + w1 * residue) % PRIME, (h2 + w2 * residue) % PRIME
        return h1, h2


def key(h1: int, h2: int) -> int | None:
    return h1 * pow(h2, -1, PRIME) % PRIME if h2 else None


def keys(hashes: list[tuple[int, int]]) -> list[int | None]:
    """:func:`key` of each pair, with one modular inverse for all of them (Montgomery's trick:
    the inverses were most of the deeper search's time)."""
    before: list[int] = []  # the product of the nonzero h2 ahead of each pair
    product = 1
    for _, h2 in hashes:
        before.append(product)
        if h2:
            product = product * h2 % PRIME
    inverse = pow(product, -1, PRIME)  # of every nonzero h2 together
    found: list[int | None] = [None] * len(hashes)
    for position in reversed(range(len(hashes))):
        h1, h2 = hashes[position]
        if h2:
            found[position] = h1 * (inverse * before[position] % PRIME) % PRIME
            inverse = inverse * h2 % PRIME
    return found


def options(target: str, vectors: Vectors, index: dict[int, list[str]], names: list[str], forbidden: set[str]):
    """Every ``{a: x}`` or ``{a: x, b: y}`` equal to the target's vector, a and b outside ``forbidden``
    (``names``: every leaf and sum there was; ``vectors.alive``: those still defined)."""
    return options_for(vectors.of(target), vectors, index, names, forbidden)


def options_for(wanted: Terms, vectors: Vectors, index: dict[int, list[str]], names: list[str], forbidden: set[str]):
    """:func:`_options` for any vector over the leaves."""
    measured = vectors.measure(wanted)
    for first in names:
        if first not in forbidden and first in vectors.alive:
            yield from through(measured, first, vectors, index, forbidden)


def options_of_three(target: str, vectors: Vectors, index: dict[int, list[str]], names: list[str], forbidden: set[str]):
    """Every ``{a: x, b: y, c: z}`` equal to the target's vector: for each t − x·a, the pairs
    :func:`through` finds, every second vector's look-ups keyed with one modular inverse."""
    wanted = vectors.of(target)
    alive = [n for n in names if n not in forbidden and n in vectors.alive]
    for first in alive:
        vector = vectors.of(first)
        for ratio in {wanted[k] / c for k, c in vector.items() if k in wanted}:
            rest = vectors.minus(target, ratio, first)
            if rest is None:
                continue
            seconds = [s for s in alive if s != first and not rest.residues.keys().isdisjoint(vectors.of(s))]
            shifted = [(second, leaf, hashes) for second in seconds for leaf, hashes in _shifted(rest, second, vectors)]
            excluded = forbidden | {first}
            for (second, leaf, hashes), found in zip(shifted, keys([hashes for _, _, hashes in shifted])):
                if any(hashes) and found in index:  # t − x·a a multiple of the second alone is no option of three
                    for option in _found(rest, second, leaf, hashes, found, vectors, index, excluded):
                        yield {first: ratio, **option}


def _shifted(measured: Measured, first: str, vectors: Vectors) -> list[tuple[str, tuple[int, int]]]:
    """For each ratio x = wanted[k]/first[k] modulo PRIME (x·first cancels the term k; one k per
    value): k and the hashes of wanted − x·first."""
    residues, (t1, t2) = measured.residues, measured.hashes
    a1, a2 = vectors.hashed[first]
    ratios = {residues[k] * inverse % PRIME: k for k, inverse in vectors.inverses[first].items() if k in residues}
    return [(leaf, ((t1 - r * a1) % PRIME, (t2 - r * a2) % PRIME)) for r, leaf in ratios.items()]


def through(measured: Measured, first: str, vectors: Vectors, index: dict[int, list[str]], forbidden=frozenset()):
    """Every ``{first: x}`` or ``{first: x, b: y}`` equal to the measured vector, b in ``index`` and alive.

    Ratios and hashes are taken modulo PRIME, and Fractions only for a hit, since this loop is the
    pass's whole cost.
    """
    shifted = _shifted(measured, first, vectors)
    for (leaf, hashes), found in zip(shifted, keys([hashes for _, hashes in shifted])):
        yield from _found(measured, first, leaf, hashes, found, vectors, index, forbidden)


def _found(measured: Measured, first: str, leaf: str, hashes: tuple[int, int], found: int | None, vectors: Vectors,
           index: dict[int, list[str]], forbidden):
    """The options the look-up of wanted − x·first (x cancelling ``leaf``) gives, checked exactly:
    ``{first: x}`` where that is zero, else ``{first: x, b: y}`` for each b under its key."""
    vector = vectors.of(first)
    if not any(hashes):
        wanted = measured.exact
        ratio = wanted.get(leaf, 0) / vector[leaf]  # (no term there: see _residue's denominators)
        if wanted == {k: ratio * c for k, c in vector.items()}:  # (a zero ratio leaves zeros: unequal)
            yield {first: ratio}
        return
    for second in index.get(found, ()):
        if second == first or second in forbidden or second not in vectors.alive:
            continue
        wanted = measured.exact
        ratio = wanted.get(leaf, 0) / vector[leaf]
        other = vectors.of(second)
        some = next(iter(other))
        scale = (wanted.get(some, 0) - ratio * vector.get(some, 0)) / other[some]
        rest = {k: wanted.get(k, 0) - ratio * vector.get(k, 0) - scale * other.get(k, 0) for k in {*wanted, *vector, *other}}
        if ratio and scale and not any(rest.values()):  # residues can keep a term the exact lost
            yield {first: ratio, second: scale}


def indexed(definitions: dict[str, Terms], forms: list[Terms], rng: random.Random):
    """(the vectors of the program, every leaf and sum name, those names by the key of their hashes):
    what :func:`through` looks pairs up in."""
    vectors = Vectors(definitions, rng)
    leaves = sorted({term for terms in [*definitions.values(), *forms] for term in terms if term not in definitions})
    vectors.alive |= set(leaves)
    names: list[str] = []
    index: dict[int, list[str]] = {}
    for name in [*leaves, *definitions]:
        register(name, vectors, names, index)
    return vectors, names, index


def register(name: str, vectors: Vectors, names: list[str], index: dict[int, list[str]]) -> None:
    names.append(name)
    vectors.of(name)
    index.setdefault(key(*vectors.hashed[name]), []).append(name)
