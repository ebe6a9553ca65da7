"""Targets from targets: rewrite a form as one addition of two vectors already computed.

Pair elimination only ever combines terms that a form holds.  Once a side's
program exists, though, a target t may be x·a + y·b for two vectors a and b
the program computes anyway — named sums, inputs, or *other targets* — in
another basis than its own terms: U is 48×16 of rank 16, so most of its
rows are combinations of a few others.  :func:`shortcut` looks, for each
target, for such a pair (or a single vector t is a multiple of), and takes
it when that costs fewer operations (additions + scalings) than the target's
own form plus the named sums that only it uses, which then go.  This is the
distance-one step of Boyar and Peralta's heuristic (SEA 2010), applied after
the fact, over Q.  With ``deeper``, a target that costs three or more may
also become x·a + y·b + z·c (two additions): for each a and x, the pair for
t − x·a is looked up the same way, so this costs a pass over pairs of
vectors, and the caller runs it on few programs.

A pair is found by a hash, not a search over pairs: with two random linear
functionals h₁, h₂ modulo a prime, h₁(v)/h₂(v) is the same for every
multiple of v, so for each candidate a and ratio x (a quotient t[k]/a[k], so
that x·a cancels a term of t) one look-up says which b, if any, is parallel
to t − x·a.  Every hit is checked exactly before it is used.

Assumes: named sums over inputs and earlier sums, forms over inputs and
sums.  Ensures: the same vectors for every form, written over sums listed
in an order where each is defined before use; sums no form needs are gone.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from fractions import Fraction
from typing import Callable

from .optimize_butterfly import Butterfly, transformed
from .optimize_pairs import Terms, additions, scalings

PRIME = (1 << 61) - 1


def operations_first(forms: list[Terms]) -> tuple[int, int]:
    """Additions + scalings, then additions: what :func:`bilinear.optimize.optimize` minimises."""
    adds = additions(forms)
    return adds + scalings(forms), adds


def _residue(value: Fraction) -> int:
    if value.denominator == 1:  # most coefficients: no inverse to take
        return value.numerator % PRIME
    return value.numerator * pow(value.denominator, -1, PRIME) % PRIME


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
            self.inverses[name] = {leaf: pow(r, -1, PRIME) for leaf, r in residues.items()}
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


def users_of(definitions: dict[str, Terms], forms: list[Terms]) -> dict[str, set]:
    """Who reads each vector: the names of the sums, and the indices of the forms."""
    users: dict[str, set] = {}
    for name, terms in definitions.items():
        for term in terms:
            users.setdefault(term, set()).add(name)
    for index, form in enumerate(forms):
        for term in form:
            users.setdefault(term, set()).add(index)
    return users


def closure(names, definitions: dict[str, Terms]) -> set[str]:
    """The named sums that ``names`` use, directly or not (themselves included)."""
    seen: set[str] = set()
    stack = [n for n in names if n in definitions]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(t for t in definitions[name] if t in definitions)
    return seen


def _dependents(target: str, users: dict[str, set]) -> set[str]:
    """The sums whose value uses ``target``: they cannot be its terms."""
    seen, stack = {target}, [target]
    while stack:
        for user in users.get(stack.pop(), ()):
            if isinstance(user, str) and user not in seen:
                seen.add(user)
                stack.append(user)
    return seen


def _options(target: str, vectors: Vectors, index: dict[int, list[str]], names: list[str], forbidden: set[str]):
    """Every ``{a: x}`` or ``{a: x, b: y}`` equal to the target's vector, a and b outside ``forbidden``
    (``names``: every leaf and sum there was; ``vectors.alive``: those still defined)."""
    return _options_for(vectors.of(target), vectors, index, names, forbidden)


def _options_for(wanted: Terms, vectors: Vectors, index: dict[int, list[str]], names: list[str], forbidden: set[str]):
    """:func:`_options` for any vector over the leaves."""
    measured = vectors.measure(wanted)
    for first in names:
        if first not in forbidden and first in vectors.alive:
            yield from through(measured, first, vectors, index, forbidden)


def _options_of_three(target: str, vectors: Vectors, index: dict[int, list[str]], names: list[str], forbidden: set[str]):
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
        ratio = wanted[leaf] / vector[leaf]
        if wanted == {k: ratio * c for k, c in vector.items()}:
            yield {first: ratio}
        return
    for second in index.get(found, ()):
        if second == first or second in forbidden or second not in vectors.alive:
            continue
        wanted = measured.exact
        ratio = wanted[leaf] / vector[leaf]
        other = vectors.of(second)
        some = next(iter(other))
        scale = (wanted.get(some, 0) - ratio * vector.get(some, 0)) / other[some]
        rest = {k: wanted.get(k, 0) - ratio * vector.get(k, 0) - scale * other.get(k, 0) for k in {*wanted, *vector, *other}}
        if scale and not any(rest.values()):
            yield {first: ratio, second: scale}


def _indexed(definitions: dict[str, Terms], forms: list[Terms], rng: random.Random):
    """(the vectors of the program, every leaf and sum name, those names by the key of their hashes):
    what :func:`through` looks pairs up in."""
    vectors = Vectors(definitions, rng)
    leaves = sorted({term for terms in [*definitions.values(), *forms] for term in terms if term not in definitions})
    vectors.alive |= set(leaves)
    names: list[str] = []
    index: dict[int, list[str]] = {}
    for name in [*leaves, *definitions]:
        _register(name, vectors, names, index)
    return vectors, names, index


def _register(name: str, vectors: Vectors, names: list[str], index: dict[int, list[str]]) -> None:
    names.append(name)
    vectors.of(name)
    index.setdefault(key(*vectors.hashed[name]), []).append(name)


def shortcut(
    sums: list[tuple[str, Terms]], forms: list[Terms], rng: random.Random, prefix: str = "_T", deeper: bool = False,
) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """(sums, forms) with targets rewritten over other computed vectors wherever that costs fewer
    operations (:func:`operations_first`) than their form and the sums only they use; ``deeper``:
    over three vectors too (two additions, for a target that costs three or more: a search over pairs, so the caller
    keeps it for the one program it returns)."""
    definitions, forms, targets = named_targets(sums, forms, prefix)
    vectors, names, index = _indexed(definitions, forms, rng)
    improved = True
    while improved:
        improved = False
        for target in rng.sample(targets, len(targets)):
            users = users_of(definitions, forms)
            owned = _exclusive_to({target}, definitions, users)
            best_cost = operations_first([definitions[target], *(definitions[n] for n in owned)])
            if best_cost <= operations_first([{"a": Fraction(1), "b": Fraction(1)}]):
                continue  # one addition, no scaling: nothing to gain
            forbidden = _dependents(target, users)
            best = None
            options = _options(target, vectors, index, names, forbidden)
            if deeper and best_cost[0] > 2:
                options = chain(options, _options_of_three(target, vectors, index, names, forbidden))
            for option in options:
                after = operations_first([option, *(definitions[n] for n in closure(option, definitions) & owned)])
                if after < best_cost:
                    best, best_cost = option, after
            if best is not None:
                definitions[target] = best
                for name in owned - closure(best, definitions):
                    del definitions[name]
                    vectors.alive.discard(name)
                improved = True
    return inlined(definitions, forms, set(targets))


def named_targets(
    sums: list[tuple[str, Terms]], forms: list[Terms], prefix: str
) -> tuple[dict[str, Terms], list[Terms], list[str]]:
    """(definitions, forms, target names): every form of two terms or more named prefix<index + 1>,
    its form now that name alone, so that other vectors can use it as a term."""
    definitions = {name: dict(terms) for name, terms in sums}
    forms = [dict(form) for form in forms]
    targets = []
    for index, form in enumerate(forms):
        if len(form) > 1:
            name = f"{prefix}{index + 1}"
            definitions[name], forms[index] = form, {name: Fraction(1)}
            targets.append(name)
    return definitions, forms, targets


def inlined(definitions: dict[str, Terms], forms: list[Terms], targets: set[str]):
    """Copies read through (:func:`copies_read_through`), then targets' own names folded back
    where no other vector uses them; sums in definition order."""
    copies_read_through(definitions, forms)
    users = users_of(definitions, forms)
    for index, form in enumerate(forms):
        (name,) = form if len(form) == 1 else (None,)
        if name in targets and users[name] == {index}:
            forms[index] = definitions.pop(name)
    ordered: list[tuple[str, Terms]] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in definitions and name not in seen:
            seen.add(name)
            for term in definitions[name]:
                visit(term)
            ordered.append((name, definitions[name]))

    for form in forms:
        for term in form:
            visit(term)
    return ordered, forms


def paired(sums: list[tuple[str, Terms]], forms: list[Terms], rng: random.Random, prefix: str = "_T") -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """(sums, forms) with pairs of targets f, g computed as H + D and H − D, wherever their half-sum
    H and half-difference D are each one addition (or a multiple) of vectors already computed and
    that costs fewer operations than f, g and the sums only they use.  Two dense targets sharing
    half their terms (±1 rows of 16 terms, 8 alike) come from two 8-term vectors in four
    additions: PLinOpt's ``o11 := y14 - y13; o18 := y14 + y13``, which neither a target alone
    nor the butterfly pass (it optimizes H and D from the inputs) finds."""
    definitions, forms, targets = named_targets(sums, forms, prefix)
    vectors, names, index = _indexed(definitions, forms, rng)
    fresh = prefix + "p"
    while any(name.startswith(fresh) for name in names):
        fresh += "_"
    made = 0
    order = rng.sample(targets, len(targets))
    for position, f in enumerate(order):
        for g in order[position + 1:]:
            users = users_of(definitions, forms)
            owned = _exclusive_to({f, g}, definitions, users)
            before = operations_first([definitions[f], definitions[g], *(definitions[n] for n in owned)])
            half_sum, half_difference = transformed([vectors.of(f), vectors.of(g)], [Butterfly(0, 1, Fraction(1), 0)])
            if before[0] <= 4 or len(half_sum) < 2 or len(half_difference) < 2:
                continue  # four additions is what the pair costs through H and D at best
            forbidden = _dependents(f, users) | _dependents(g, users)
            halves = [_cheapest(_options_for(wanted, vectors, index, names, forbidden), definitions, owned)
                      for wanted in (half_sum, half_difference)]
            if None in halves:
                continue
            (h, h_kept), (d, d_kept) = halves
            one = Fraction(1)
            h_name, d_name = f"{fresh}{made + 1}h", f"{fresh}{made + 1}d"
            recovered = [{h_name: one, d_name: one}, {h_name: one, d_name: -one}]
            if operations_first([h, d, *recovered, *(definitions[n] for n in h_kept | d_kept)]) >= before:
                continue
            made += 1
            definitions[h_name], definitions[d_name] = h, d
            definitions[f], definitions[g] = recovered
            for name in (h_name, d_name):
                vectors.alive.add(name)
                _register(name, vectors, names, index)
            for name in owned - closure([f, g], definitions):
                del definitions[name]
                vectors.alive.discard(name)
    return inlined(definitions, forms, set(targets))


def _exclusive_to(group: set[str], definitions: dict[str, Terms], users: dict[str, set]) -> set[str]:
    """The sums only the group's members need."""
    owned = set(group)
    below = closure(group, definitions)
    changed = True
    while changed:
        changed = False
        for name in below - owned:
            if users.get(name, set()) <= owned:
                owned.add(name)
                changed = True
    return owned - group


def _cheapest(options, definitions: dict[str, Terms], owned: set[str]):
    """(the option of at most two terms that costs least with the owned sums it keeps, those sums), or None."""
    priced = [(operations_first([option, *(definitions[n] for n in closure(option, definitions) & owned)]), index, option)
              for index, option in enumerate(options) if len(option) <= 2]
    if not priced:
        return None
    _, _, option = min(priced, key=lambda item: item[:2])
    return option, closure(option, definitions) & owned


def copies_read_through(definitions: dict[str, Terms], forms: list[Terms]) -> None:
    """Every sum that is ±1 times one other vector dropped, its users reading that vector instead
    (in place).  A window or a shortcut leaves such a copy where a target turns out to equal a
    vector already computed; it costs no operation, but lowered it would be a buffer and a pass.
    Reading through never costs more: a user that held both merges two terms into one (one
    addition fewer, at most one magnitude more)."""
    while copies := {name: terms for name, terms in definitions.items() if _is_copy(terms)}:
        for name in copies:
            del definitions[name]
        for container in [*definitions.values(), *forms]:
            read = _read_through(container, copies)
            container.clear()
            container.update(read)


def _is_copy(terms: Terms) -> bool:
    return len(terms) == 1 and abs(next(iter(terms.values()))) == 1


def _read_through(container: Terms, copies: dict[str, Terms]) -> Terms:
    total: Terms = {}
    for name, coef in container.items():
        while name in copies:  # a chain: X5 = X4, X4 = X1
            ((name, sign),) = copies[name].items()
            coef *= sign
        total[name] = total.get(name, 0) + coef
    return {name: coef for name, coef in total.items() if coef}
