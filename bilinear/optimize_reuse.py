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

The pairs are looked up by hash (:mod:`bilinear.optimize_lookup`), each hit
checked exactly.

Assumes: named sums over inputs and earlier sums, forms over inputs and
sums.  Ensures: the same vectors for every form, written over sums listed
in an order where each is defined before use; sums no form needs are gone.
"""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import chain

from .optimize_butterfly import Butterfly, transformed
from .optimize_lookup import indexed, options, options_for, options_of_three, register
from .optimize_pairs import Terms, additions, scalings

def operations_first(forms: list[Terms]) -> tuple[int, int]:
    """Additions + scalings, then additions: what :func:`bilinear.optimize.optimize` minimises."""
    adds = additions(forms)
    return adds + scalings(forms), adds


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


def shortcut(
    sums: list[tuple[str, Terms]], forms: list[Terms], rng: random.Random, prefix: str = "_T", deeper: bool = False,
) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """(sums, forms) with targets rewritten over other computed vectors wherever that costs fewer
    operations (:func:`operations_first`) than their form and the sums only they use; ``deeper``:
    over three vectors too (two additions, for a target that costs three or more: a search over pairs, so the caller
    keeps it for the one program it returns)."""
    definitions, forms, targets = named_targets(sums, forms, prefix)
    vectors, names, index = indexed(definitions, forms, rng)
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
            found = options(target, vectors, index, names, forbidden)
            if deeper and best_cost[0] > 2:
                found = chain(found, options_of_three(target, vectors, index, names, forbidden))
            for option in found:
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
    vectors, names, index = indexed(definitions, forms, rng)
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
            halves = [_cheapest(options_for(wanted, vectors, index, names, forbidden), definitions, owned)
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
                register(name, vectors, names, index)
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
