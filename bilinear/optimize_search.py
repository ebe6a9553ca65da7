"""Local search: optimize a window of a side's program again, around one named sum.

PLinOpt's published programs were polished after the fact by its local-search
scripts (``mirabelle.sh``, run over every temporary and pair of temporaries
by ``prune.sh``; Dumas, Pernet and Sedoglavic): take a temporary, cut out the
statements that use it or share one of its operands, read the small linear
map that window computes from the values flowing into it, optimize that map
again from scratch with random tries (directly and through its transpose),
and keep the new window when it costs fewer operations.  A greedy pass
commits to its early choices everywhere at once; a window redone alone can
undo them where they were poor.

:func:`search` does this over a side's program, with every form of two terms
or more named (as in the shortcut pass) so that windows hold targets too.
The window also takes in the sums that only it uses (they would otherwise
stay computed for it alone).  Its outputs are its statements that something
outside it uses (the sum chosen goes when nothing outside does); a window
whose inputs depend on one of its own statements is skipped, since its new
program could then loop.  The sums are visited in a seeded order, round
after round, until a round changes nothing; a window that costs the same may
be taken too (a move along a plateau), so that later windows see another
shape.  Optimizing a window is the caller's (:func:`bilinear.optimize.optimize`
passes its own candidates, seeded from ``rng``): this module only cuts,
compares and splices.

Assumes: named sums over inputs and earlier sums, forms over inputs and sums;
``optimizer`` returns named sums and forms that expand to the forms it is
given.  Ensures: the same vectors for every form, sums in an order where each
is defined before use, and never more operations (additions + scalings, then
additions) than before.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from itertools import count

from .optimize_pairs import Terms
from .optimize_reuse import closure, inlined, named_targets, operations_first, users_of

Program = tuple[list[tuple[str, Terms]], list[Terms]]
Optimizer = Callable[[list[Terms], random.Random], Program]

# Windows past this many statements are skipped: optimizing one costs about its size squared,
# and a sum whose operand half the side uses says little about that sum.
MAX_WINDOW = 24


def search(sums: list[tuple[str, Terms]], forms: list[Terms], optimizer: Optimizer, rng: random.Random,
           rounds: int = 2, plateau: float = 0.0, prefix: str = "_L", focus: set[str] | None = None) -> Program:
    """(sums, forms) with windows around each named sum optimized again wherever that costs fewer
    operations (:func:`operations_first`); at most ``rounds`` passes over the sums.  A new window that
    costs the same is taken with probability ``plateau``: moving along a plateau lets later windows
    find what the first program's shape hid.  With ``focus`` (names of values that changed), a pass
    visits only the statements that are or read one of them, and the next pass those near what it
    rewrote: after a small change the rest of the program was already searched."""
    definitions, forms, targets = named_targets(sums, forms, "_O")
    taken = {name for terms in [*definitions.values(), *forms] for name in terms} | set(definitions)
    while any(name.startswith(prefix) for name in taken):
        prefix += "_"
    fresh = count(1)
    for _ in range(rounds):
        improved = False
        visited = sorted(definitions) if focus is None else _near(focus, definitions)
        rewritten: set[str] = set()
        for chosen in rng.sample(visited, len(visited)):
            if chosen not in definitions:
                continue  # gone with an earlier window
            users = users_of(definitions, forms)
            window = _window(chosen, definitions, users)
            if len(window) > MAX_WINDOW:
                continue
            redone = _redone(window, definitions, users, set(targets), optimizer, rng, plateau, prefix, fresh)
            if redone is None:
                continue
            for name in window:
                del definitions[name]
            definitions.update(redone)
            rewritten |= set(redone)
            improved = True
        if not improved:
            break
        focus = rewritten if focus is not None else None
    return inlined(definitions, forms, set(targets))


def _near(focus: set[str], definitions: dict[str, Terms]) -> list[str]:
    """The statements that are, or read, one of the focus names (sorted: the visiting order is drawn)."""
    return sorted(name for name, terms in definitions.items() if name in focus or not focus.isdisjoint(terms))


def _window(chosen: str, definitions: dict[str, Terms], users: dict[str, set]) -> set[str]:
    """The chosen sum, the statements that use it, and those that use one of its operands; then the
    sums that only the window uses (they would stay computed for it alone)."""
    around = {chosen, *users.get(chosen, ())}
    for term in definitions[chosen]:
        around |= users.get(term, set())
    window = {name for name in around if isinstance(name, str)}
    while len(window) <= MAX_WINDOW:
        owned = {term for name in window for term in definitions[name] if term in definitions and users[term] <= window}
        if owned <= window:
            break
        window |= owned
    return window


def _redone(window: set[str], definitions: dict[str, Terms], users: dict[str, set], targets: set[str],
            optimizer: Optimizer, rng: random.Random, plateau: float, prefix: str, fresh: count) -> dict[str, Terms] | None:
    """The window's new statements (its outputs under their names, new sums as prefix<n>: names the
    program has not used), or None when they would cost more (or as much, unless the plateau draw
    takes them) or could loop."""
    outputs = sorted(name for name in window if name in targets or not users.get(name, set()) <= window)
    inputs = sorted({term for name in window for term in definitions[name]} - window)
    if closure(inputs, definitions) & window:
        return None  # an input computed from the window: the new window could use it and loop
    expanded: dict[str, Terms] = {}
    wanted = [_expanded(name, window, definitions, expanded) for name in outputs]
    if not all(wanted):
        return None
    # Placeholders for the inputs, so that no name the optimizer makes can clash with one.
    placeholders = {name: f"@{index}" for index, name in enumerate(inputs)}
    sums, forms = optimizer([{placeholders[k]: v for k, v in form.items()} for form in wanted], rng)
    before = operations_first([definitions[name] for name in window])
    after = operations_first([*(terms for _, terms in sums), *forms])
    if after > before or (after == before and rng.random() >= plateau):
        return None
    # One renaming for both, so that no optimizer's name is read as an input's.
    names = {placeholder: name for name, placeholder in placeholders.items()}
    names.update((name, f"{prefix}{next(fresh)}") for name, _ in sums)

    def renamed(terms: Terms) -> Terms:
        return {names[k]: v for k, v in terms.items()}

    return {**{names[name]: renamed(terms) for name, terms in sums}, **{out: renamed(form) for out, form in zip(outputs, forms)}}


def _expanded(name: str, window: set[str], definitions: dict[str, Terms], memo: dict[str, Terms]) -> Terms:
    """The name's value over the window's inputs (a name outside the window is an input)."""
    if name not in window:
        return {name: Fraction(1)}
    if name not in memo:
        memo[name] = _combination(definitions[name], window, definitions, memo)
    return memo[name]


def _combination(terms: Terms, window: set[str], definitions: dict[str, Terms], memo: dict[str, Terms]) -> Terms:
    """Σ coef·(the term's value over the window's inputs), without cancelled terms."""
    total: Terms = {}
    for term, coef in terms.items():
        for leaf, inner in _expanded(term, window, definitions, memo).items():
            total[leaf] = total.get(leaf, 0) + coef * inner
    return {k: v for k, v in total.items() if v}


# Sums folded back per try of :func:`perturbed`: one to this many (probes folding up to 6 or 10 on
# ⟨4,4,4;48⟩'s outputs, from a program this one had polished, gained 1 operation more in 88 tries).
PERTURBED = 4


def perturbed(sums: list[tuple[str, Terms]], forms: list[Terms], improve: Callable[[Program, random.Random, set[str]], Program],
              cost: Callable[[Program], tuple], rng: random.Random, tries: int, most: int = PERTURBED) -> Program:
    """Iterated local search: ``tries`` times, fold one to ``most`` random named sums of the best
    program back into their users (:func:`folded`), ``improve`` that, and keep it when it costs no
    more than the best.  The local search stops where every window alone is as cheap as it gets;
    undoing a few sums at once moves the program off that point, and ``improve`` (the search again)
    often lands lower: on the rational ⟨4,4,4;48⟩, 100 tries take A from 110 operations to 107 and C
    from 140 to 136.  ``improve`` gets the names the folded sums' users now read, so that it can
    search around them alone."""
    best = (sums, forms)
    for _ in range(tries):
        names = [name for name, _ in best[0]]
        if not names:
            break
        victims = set(rng.sample(names, min(len(names), rng.randint(1, most))))
        candidate = improve(folded(*best, victims), random.Random(rng.randrange(1 << 30)), _read_instead(best[0], victims))
        if cost(candidate) <= cost(best):
            best = candidate
    return best


def _read_instead(sums: list[tuple[str, Terms]], victims: set[str]) -> set[str]:
    """What the victims' users read once they are folded: the victims' values over the sums that stay."""
    definitions = dict(sums)
    memo: dict[str, Terms] = {}
    return {name for victim in victims for name in _expanded(victim, victims, definitions, memo)}


def folded(sums: list[tuple[str, Terms]], forms: list[Terms], victims: set[str]) -> Program:
    """(sums, forms) without the named sums in ``victims``: every use reads the victim's definition
    (itself folded: the victims are a window, :func:`_expanded`), terms that cancel dropped."""
    definitions = dict(sums)
    memo: dict[str, Terms] = {}

    def through(terms: Terms) -> Terms:
        return _combination(terms, victims, definitions, memo)

    return [(name, through(terms)) for name, terms in sums if name not in victims], [through(form) for form in forms]
