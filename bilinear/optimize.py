"""Fewer additions: common-subexpression elimination over U, V and W.

Every product's left factor is a linear form over A blocks, its right factor
one over B blocks, and every C block one over products.  Forming them one by
one costs (terms − 1) additions each; a named sum used by several saves the
difference.  Each side is tried several ways, and the cheapest program
(additions + multiplications by constants, then additions) is kept:

- greedy pair elimination (:mod:`bilinear.optimize_pairs`), deterministic
  and with seeded tie-breaking;
- on small sides (⟨4,4,4;48⟩'s 48 × 16, not AlphaTensor's 896 × 121), the
  kernel split (:mod:`bilinear.optimize_kernel`): a basis of the targets
  from the inputs, the other targets from the basis;
- on small sides, every candidate then goes through the shortcut pass
  (:mod:`bilinear.optimize_reuse`): a target that is one addition of two
  vectors already computed (other targets included) is written so, and the
  sums only it used go;
- named sums are rescaled where that saves scalings
  (:mod:`bilinear.optimize_scale`);
- on small sides, the cheapest program then goes through a local search
  (:mod:`bilinear.optimize_search`, after PLinOpt's ``mirabelle.sh``): the
  window around each named sum is optimized again, a few seeded tries
  directly and through its transpose, and kept when it costs less (or the
  same); then a vector that several statements scale alike gets a scaled
  copy (:func:`bilinear.optimize_scale.scaled_copies`);
- on small sides, the targets are also tried through butterflies
  (:mod:`bilinear.optimize_butterfly`): pairs f, g replaced by their
  half-sum and half-difference (or twice those, the halving then paid once
  in f) where those hold far fewer terms, the new targets optimized as
  above (the outputs also through the transpose), f and g recovered in two
  additions; that program goes through the local search too when it starts
  cheaper, and the cheaper result is kept (on the rational ⟨4,4,4;48⟩: A
  110 operations rather than 112, C 140 rather than 145).

- then pairs of targets whose half-sum and half-difference are each one
  addition of vectors already computed become H ± D
  (:func:`bilinear.optimize_reuse.paired`), searched again (B: 74+5 → 76+0);
- with ``polish`` tries, small sides then go through an iterated local
  search (:func:`bilinear.optimize_search.perturbed`): one to four named
  sums folded back into their users, the local search run again around
  what changed, the program kept when it costs no more (scaled copies
  counted); ``chains`` such searches from different seeds, the cheapest
  kept; with ``starts``, from several starting programs, start k from its
  own seeds (on the rational ⟨4,4,4;48⟩, starts end at A 104-110, B 74-80).

The three sides share nothing, and neither do the chains: they run in
parallel processes (:func:`bilinear.processes.mapped`), with the same result
however many run.

The outputs are also tried by the transposition principle (over the
products' weights, then backwards).  Every random choice is seeded, so the
result is reproducible.

First, a product carrying a constant on one factor and its inverse on the
other (or on its weights) loses both (:mod:`bilinear.optimize_products`).

A product no output uses goes, with the sums only it used (:mod:`bilinear.optimize_dead`).

Assumes: a checked algorithm.  Ensures: an algorithm with the same products
(as expanded coefficients, up to those constants; less those no output uses) and outputs, whose factors
and outputs are written over named sums; the caller verifies it (the CLI does,
before writing it).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from .ir import Algorithm, Form, Output, Product, Sum
from .ir.names import derived_name
from .optimize_butterfly import Butterfly, pairing, recovered, scaled, transformed
from .optimize_dead import live
from .optimize_kernel import kernel_split
from .optimize_arguments import check_arguments
from .optimize_pairs import Terms, additions, eliminate, more_pairs_than, scalings
from .optimize_products import product_factors, rescaled, rescaled_sides
from .optimize_reuse import paired, shortcut
from .optimize_scale import rescale, scaled_copies
from .optimize_search import perturbed, search
from .optimize_sides import (SEEDED_PAIRS, Side, free_prefix, overfull, renumbered, seeded_terms, sides, small,
                             small_sides, written)
from .processes import mapped
from .verify.expand import expansion_of

__all__ = ["Side", "additions", "eliminate", "optimize", "scalings", "seeded_terms", "sides", "small_sides"]


def _candidates(forms: list[Terms], prefix: str, seeds: int, first: int = 0) -> list[Side]:
    """Programs for the forms, each rescaled: pair elimination (deterministic and seeded with
    first, first + 1, …), and for small sides the kernel split (:mod:`bilinear.optimize_kernel`),
    all through the shortcut pass (:mod:`bilinear.optimize_reuse`)."""
    candidates = [Side(*eliminate(forms, prefix))]
    if more_pairs_than(forms, SEEDED_PAIRS):
        seeds = 0
    seeded = range(first, first + seeds)
    candidates += [Side(*eliminate(forms, prefix, random.Random(seed), slack)) for seed in seeded for slack in (0, 1)]
    if small(forms) and overfull(forms):
        candidates += [Side(*kernel_split(forms, prefix, random.Random(seed))) for seed in seeded]
    if small(forms):
        candidates = [
            Side(*shortcut(side.sums, side.forms, random.Random(seed))) for seed, side in enumerate(candidates)
        ]
    return [_rescaled(side) for side in candidates]


# The cheapest few candidates per side also get the shortcut over three vectors (a search over pairs).
DEEPENED = 3


def _best_side(forms: list[Terms], prefix: str, seeds: int, first: int = 0) -> Side:
    candidates = sorted(_candidates(forms, prefix, seeds, first), key=_cost)
    if small(forms) and overfull(forms):
        candidates += [_deepened(side) for side in candidates[:DEEPENED]]
    return min(candidates, key=_cost)


def _deepened(side: Side) -> Side:
    """The side through the shortcut pass again, now also over three computed vectors."""
    return _rescaled(Side(*shortcut(side.sums, side.forms, random.Random(0), deeper=True)))


def _copied(side: Side) -> Side:
    """The side with scaled copies of vectors that several statements scale alike
    (:func:`bilinear.optimize_scale.scaled_copies`)."""
    taken = {name for name, terms in side.sums for name in (name, *terms)} | {name for form in side.forms for name in form}
    return Side(*scaled_copies(side.sums, side.forms, free_prefix("_c", taken)))


def _rescaled(side: Side) -> Side:
    """The side with its named sums rescaled where that saves scalings (:mod:`bilinear.optimize_scale`)."""
    return Side(*rescale(side.sums, side.forms, scalings))


def _transposed(
    weights: list[Terms], products: list[str], blocks: tuple[str, ...], prefix: str, seeds: int, first: int = 0
) -> Side:
    """The outputs by the transposition principle (Tellegen): eliminate over the products'
    weights w_r (forms over C blocks), then run that program backwards.

    Backwards, a target w_r = Σ c·x sends c·M_r to x, and a sum S = a + λ·b sends
    its collected value Z_S to a and λ·Z_S to b; each C block ends as what it
    collected.  Every sum becomes a named sum Z_S over products and other Z's.
    """
    inners = _candidates(weights, "_t", seeds, first)
    if not small(weights):  # transposing every candidate costs as much again; take the cheapest's transpose
        return _backwards(min(inners, key=_cost), products, blocks, prefix)
    ranked = sorted(((_backwards(inner, products, blocks, prefix), inner) for inner in inners), key=lambda pair: _cost(pair[0]))
    deepened = [_backwards(_deepened(inner), products, blocks, prefix) for _, inner in ranked[:DEEPENED]]
    return min([ranked[0][0], *deepened], key=_cost)


def _backwards(inner: Side, products: list[str], blocks: tuple[str, ...], prefix: str) -> Side:
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


# Each window of the local search gets this many seeded tries, directly and through its transpose.
WINDOW_SEEDS = 2
# Passes of the local search over a side's sums (it stops early when one changes nothing), and how
# often it takes a window that costs the same: on the rational ⟨4,4,4;48⟩'s C side, 2 strict rounds
# reach 149 operations, 8 rounds that always take ties 144-147 by seed (about 10 s more in all).
SEARCH_ROUNDS = 8
SEARCH_PLATEAU = 1.0


def _searched(side: Side) -> Side:
    """The side through the local search (:mod:`bilinear.optimize_search`), each window optimized
    again by :func:`_window_program`."""
    return _rescaled(Side(*search(side.sums, side.forms, _window_program, random.Random(0), SEARCH_ROUNDS, SEARCH_PLATEAU)))


def _polished(side: Side, tries: int, seed: int = 0) -> Side:
    """The side through the iterated local search (:func:`bilinear.optimize_search.perturbed`): a
    few sums folded back, the local search again around what changed, kept when no dearer; ``tries``
    times, its draws seeded by ``seed``."""

    def improve(program, rng: random.Random, changed: set[str]):
        searched = _rescaled(Side(*search(*program, _window_program, rng, SEARCH_ROUNDS, SEARCH_PLATEAU, focus=changed)))
        return searched.sums, searched.forms

    # Rated with its scaled copies, as the caller writes it: then polishing never makes it dearer.
    sums, forms = perturbed(side.sums, side.forms, improve, lambda program: _copied_cost(Side(*program)), random.Random(seed), tries)
    return Side(sums, forms)


def _chain(job: tuple[Side, int, int]) -> Side:
    return _polished(*job)


def _polished_sides(starts: list[list[Side]], tries: int, chains: int) -> list[Side]:
    """Per side, each of its starting programs (start k's chains seeded k·chains, k·chains + 1, …)
    through ``chains`` independent iterated local searches, the cheapest kept, the first of equals:
    where a search ends depends much on its draws, and the result does not depend on how many
    processes ran the chains."""
    if not tries:
        return [min(programs, key=_copied_cost) for programs in starts]
    jobs = [(side, tries, k * chains + c) for programs in starts for k, side in enumerate(programs) for c in range(chains)]
    ends, first = mapped(_chain, jobs), 0
    kept = []
    for programs in starts:
        kept.append(min(ends[first:first + len(programs) * chains], key=_copied_cost))
        first += len(programs) * chains
    return kept


def _window_program(forms: list[Terms], rng: random.Random) -> tuple[list[tuple[str, Terms]], list[Terms]]:
    """The cheapest program for a window's forms: a few seeded candidates, directly and through
    the transpose (as PLinOpt's mirabelle.sh tries both)."""
    first = rng.randrange(1 << 30)
    direct = min(_candidates(forms, "_w", WINDOW_SEEDS, first), key=_cost)
    best = min((direct, _transposed(*_columns(forms), "_v", WINDOW_SEEDS, first)), key=_cost)
    return best.sums, best.forms


def _columns(forms: list[Terms]) -> tuple[list[Terms], list[str], tuple[str, ...]]:
    """The forms' transpose, for :func:`_transposed`: one form per input over placeholder outputs
    (@o0, @o1, … in the forms' order), the inputs, the outputs."""
    inputs = sorted({name for form in forms for name in form})
    outputs = tuple(f"@o{index}" for index in range(len(forms)))
    return [{out: form[name] for out, form in zip(outputs, forms) if name in form} for name in inputs], inputs, outputs


# Butterflies (:mod:`bilinear.optimize_butterfly`): pairings tried per side (seeded tie-breaks among
# pairs that save alike), each first rated by one greedy elimination; the best, on the outputs
# (optimized both ways), then get this fraction of the seeds (their targets are sparser, and their
# program still goes through the search); on A and B they get all the seeds (on the rational
# ⟨4,4,4;48⟩'s A side, a quarter of them starts at 114 operations and searches to 114, all of them
# at 113 and searches to 110).
BUTTERFLY_PAIRINGS = 8
BUTTERFLY_SEED_SHARE = 4


def _butterflied(forms: list[Terms], prefix: str, seeds: int, both_ways: bool) -> Side | None:
    """The forms computed through butterflies of pairs of them, over the cheapest pairing found
    (None when no pair saves enough); with ``both_ways``, the transformed targets are optimized
    directly and through the transpose (as the outputs are)."""
    groups = (None, frozenset(scaled(forms)))
    pairings = {
        tuple(sorted(pairing(forms, random.Random(seed) if seed else None, among=among)))
        for seed in range(BUTTERFLY_PAIRINGS) for among in groups
    }
    # Also without the pairs that save most, tier by tier (deterministic tie-breaks only).
    tiers = {(among, b.saving) for among in groups for b in pairing(forms, among=among)}
    pairings |= {tuple(sorted(pairing(forms, among=among, most=most))) for among, most in tiers}
    pairings.discard(())
    if not pairings:
        return None

    def rough(targets: list[Terms]) -> Side:
        direct = _rescaled(Side(*eliminate(targets, prefix)))
        if not both_ways:
            return direct
        columns, inputs, outputs = _columns(targets)
        return min(direct, _backwards(_rescaled(Side(*eliminate(columns, "_t"))), inputs, outputs, prefix), key=_cost)

    def full(targets: list[Terms]) -> Side:
        share = max(1, seeds // BUTTERFLY_SEED_SHARE) if both_ways else seeds
        direct = _best_side(targets, prefix, share)
        return min(direct, _transposed(*_columns(targets), prefix, share), key=_cost) if both_ways else direct

    options = [(pairs, halved) for pairs in sorted(pairings) for halved in (True, False)]
    chosen, halved = min(options, key=lambda option: _cost(_through(forms, *option, prefix, rough)))
    return _through(forms, chosen, halved, prefix, full)


def _through(forms: list[Terms], chosen: tuple[Butterfly, ...], halved: bool, prefix: str, optimizer) -> Side:
    """The forms through the chosen butterflies: the transformed targets (halved or not) optimized by
    ``optimizer``, then the pairs recovered (:func:`bilinear.optimize_butterfly.recovered`)."""
    inner = optimizer(transformed(forms, list(chosen), halved))
    return _rescaled(Side(*recovered(inner.sums, inner.forms, list(chosen), f"{prefix}h", halved)))


def _finished(side: Side, forms: list[Terms], prefix: str, seeds: int, both_ways: bool) -> Side:
    """The side through the local search; also the forms through butterflies
    (:func:`_butterflied`), searched too when they start cheaper (searching one that starts no
    better, as on the rational ⟨4,4,4;48⟩'s B side, costs seconds and has not paid), the
    cheaper kept, and then pairs of targets through their half-sums (:func:`_paired`)."""
    searched = _searched(side)
    butterflied = _butterflied(forms, prefix, seeds, both_ways)
    if butterflied is not None and _cost(butterflied) < _cost(side):
        searched = min(searched, _searched(butterflied), key=_cost)
    return _paired(searched)


def _paired(side: Side) -> Side:
    """The side with pairs of targets recovered from their half-sum and half-difference where each
    is one addition of vectors already computed (:func:`bilinear.optimize_reuse.paired`), then
    searched again; unchanged where that saves nothing (on the rational ⟨4,4,4;48⟩'s B side, two
    pairs of 16-term rows: 74+5 → 76+0 operations)."""
    result = _rescaled(Side(*paired(side.sums, side.forms, random.Random(0))))
    if _cost(result) >= _cost(side):
        return side
    return min(result, _searched(result), key=_cost)


def _side_program(job: tuple[list[Terms], str, int, tuple | None, int]) -> Side:
    """One side's program before polishing: the cheapest candidate of start ``start``'s seeds
    (start·seeds, …, start·seeds + seeds − 1; with ``backwards``, the outputs' weights, products and
    blocks, also by the transposition principle), finished on small sides."""
    forms, prefix, seeds, backwards, start = job
    side = _best_side(forms, prefix, seeds, start * seeds)
    if backwards is not None:
        side = min((side, _transposed(*backwards, prefix, seeds, start * seeds)), key=_cost)
    return _finished(side, forms, prefix, seeds, backwards is not None) if small(forms) else side


def _cost(side: Side) -> tuple[int, int]:
    return side.additions + side.scalings, side.additions


def _copied_cost(side: Side) -> tuple[int, int]:
    """What the side costs as it is written: with its scaled copies (:func:`_copied`)."""
    return _cost(_copied(side))


def optimize(
    algorithm: Algorithm, seeds: int = 16, name: str | None = None, polish: int = 0, chains: int = 1,
    also: Sequence[Algorithm] = (), starts: int | Mapping[str, int] = 1,
) -> tuple[Algorithm, dict]:
    """The algorithm rewritten with shared sums, and the counts before and after per side; ``polish``:
    tries of the iterated local search per small side (:func:`_polished`), a few seconds each on
    ⟨4,4,4;48⟩, in ``chains`` independent chains (the cheapest kept).  ``starts`` (one count, or one
    per side "A", "B", "C"): small sides are optimized from that many starting programs, start k from
    seeds k·seeds, …, each finished and polished alone (where the search ends depends most on where it
    starts), the cheapest kept; starts, then chains, run in parallel processes.  ``also``: other
    programs of the scheme; their sides computing the same forms (``borrowed``) are candidates too."""
    borrowed_sides = check_arguments(algorithm, seeds, polish, chains, also, starts, name)
    as_given, algorithm = algorithm, live(algorithm)  # a product no output uses goes (optimize_dead)
    names, expanded = [p.name for p in algorithm.products], sides(algorithm)
    factors = product_factors(*expanded, names)  # a constant on one side of a product and its inverse on another go
    left, right, outputs = rescaled(*expanded, names, factors)
    prefixes = [free_prefix(letter, set(names)) for letter in "XYZ"]
    plain_weights = [w.as_dict() for w in expansion_of(algorithm).weights]
    weights = [{block: c / (a * b) for block, c in w.items()} for w, (a, b) in zip(plain_weights, factors)]
    backwards = (weights, names, algorithm.shape.blocks("C"))
    small_ones = [index for index, forms in enumerate((left, right, outputs)) if small(forms)]
    counts = [(starts.get(side, 1) if isinstance(starts, Mapping) else starts) if index in small_ones else 1
              for index, side in enumerate("ABC")]
    jobs = [(forms, prefix, seeds, back, k) for forms, prefix, back, count in
            zip((left, right, outputs), prefixes, (None, None, backwards), counts) for k in range(count)]
    # A side that rescaling changed is also optimized as it was, then rescaled: the searches are
    # heuristic, and the old targets' program can be the cheaper one (Kauers' <2,5,7;55>: A side).
    changed = [index for index, (old, new) in enumerate(zip(expanded, (left, right, outputs))) if old != new]
    unscaled = (plain_weights, *backwards[1:])
    jobs += [(expanded[index], prefixes[index], seeds, unscaled if index == 2 else None, 0) for index in changed]
    found = mapped(_side_program, jobs)
    as_was = dict(zip(changed, found[len(found) - len(changed):]))
    found = [found[sum(counts[:index]):sum(counts[:index + 1])] for index in range(3)]  # each side's starts
    # The scheme's own program too, where it costs less than start 0 (then polished from there); large
    # sides are written without scaled copies, so they are rated without them.
    programs = (written(algorithm), *borrowed_sides, tuple(as_was.get(index) for index in range(3)))
    given = zip(*(rescaled_sides(program, names, factors) for program in programs))
    for index, candidates in enumerate(given):
        rated = _copied_cost if index in small_ones else _cost
        found[index][0] = min((found[index][0], *(side for side in candidates if side is not None)), key=rated)
    programs = [starting[0] for starting in found]
    for index, side in zip(small_ones, _polished_sides([found[index] for index in small_ones], polish, chains)):
        programs[index] = _copied(side)
    a_side, b_side, c_side = (renumbered(side, prefix) for side, prefix in zip(programs, prefixes))
    products = tuple(
        Product(p.name, Form.of(u), Form.of(v)) for p, u, v in zip(algorithm.products, a_side.forms, b_side.forms)
    )
    outputs_written = tuple(
        Output(block, Form.of(w)) for block, w in zip(algorithm.shape.blocks("C"), c_side.forms) if w
    )
    sums = tuple(Sum(n, Form.of(t)) for side in (a_side, b_side, c_side) for n, t in side.sums)
    name = name or optimized_name(algorithm)
    result = Algorithm(name, algorithm.shape, sums, products, outputs_written, declared_rank=algorithm.rank)
    before = [Side([], forms) for forms in sides(as_given)]  # as given: with the products no output uses
    counts = {
        side: {"before": (b.additions, b.scalings), "after": (a.additions, a.scalings)}
        for side, b, a in zip("ABC", before, (a_side, b_side, c_side))
    }
    return result, counts


def optimized_name(algorithm: Algorithm) -> str:
    """The default name of ``algorithm`` optimized: NAME_cse, and again NAME_cse (not _cse_cse).

    Raises:
        ValueError: where that is past a .bl name's length (:func:`~bilinear.ir.names.derived_name`).
    """
    return algorithm.name if algorithm.name.endswith("_cse") else derived_name(f"{algorithm.name}_cse")
