"""A scheme's three sides for the optimizer: what each computes (left factors over A blocks, right
factors over B blocks, outputs over products), expanded, and how the scheme writes it (its own named
sums), so that a program given in the file is a candidate too: optimizing an optimized scheme never
returns a dearer one; and which sides are small enough for the searches past greedy elimination."""

from __future__ import annotations

import re

from dataclasses import dataclass

from .ir import Algorithm, Form
from .optimize_dead import live
from .optimize_pairs import Terms, additions, more_pairs_than, scalings
from .verify.counts import side_of, used_names
from .verify.expand import expansion_of

# Above this many distinct pairs, only the deterministic run is made (each seeded run sorts its pool).
SEEDED_PAIRS = 20_000


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


def sides(algorithm: Algorithm) -> tuple[list[Terms], list[Terms], list[Terms]]:
    """The expanded forms: left factors, right factors, outputs (over products)."""
    expansion = expansion_of(algorithm)
    left = [u.as_dict() for u, _ in expansion.factors]
    right = [v.as_dict() for _, v in expansion.factors]
    outputs = [expansion.outputs.get(block, Form()).as_dict() for block in algorithm.shape.blocks("C")]
    return left, right, outputs


def free_prefix(letter: str, taken: set[str]) -> str:
    """``letter`` followed by as many ``_`` as make a prefix for a side's new sums that no product
    name could be taken for: the sums are the prefix, perhaps a letter, then digits (``X3``, ``Xa2``,
    ``Xk1``).  A product named ``X__1`` had left none of three tries free (a StopIteration); one of
    255 characters that merely began with ``X_…_`` had grown the prefix past a name's length."""
    prefix = letter
    while any(re.fullmatch(re.escape(prefix) + r"[a-z]?\d+", name) for name in taken):
        prefix += "_"
    return prefix


def written(algorithm: Algorithm) -> tuple[Side, Side, Side]:
    """The sides as the scheme writes them: each named sum goes with the operand its value is over
    (over products: the outputs' side), the forms as written."""
    expansion = expansion_of(algorithm)
    operand = {entry.name: side_of(expansion, entry.form, entry.name) for entry in algorithm.sums}
    by_side = {side: [(entry.name, entry.form.as_dict()) for entry in algorithm.sums if operand[entry.name] == side] for side in "ABC"}
    outputs = {output.block: output.form.as_dict() for output in algorithm.outputs}
    return (
        Side(by_side["A"], [product.left.as_dict() for product in algorithm.products]),
        Side(by_side["B"], [product.right.as_dict() for product in algorithm.products]),
        Side(by_side["C"], [outputs.get(block, {}) for block in algorithm.shape.blocks("C")]),
    )


def in_use(algorithm: Algorithm) -> tuple[Side, Side, Side]:
    """:func:`written`'s sides less what no output uses (a named sum, a product's factors), which is never
    computed: the scheme's cost as written, as ``verify`` counts it."""
    used = used_names(algorithm)
    left, right, outputs = written(algorithm)

    def kept(side: Side, factors: bool) -> Side:
        forms = [form if product.name in used else {} for form, product in zip(side.forms, algorithm.products)] \
            if factors else side.forms
        return Side([(name, terms) for name, terms in side.sums if name in used], forms)

    return kept(left, True), kept(right, True), kept(outputs, False)


def renumbered(side: Side, prefix: str) -> Side:
    """The sums named prefix1, prefix2, … in definition order (the passes name theirs as they go)."""
    names = {name: f"{prefix}{index}" for index, (name, _) in enumerate(side.sums, start=1)}

    def renamed(terms: Terms) -> Terms:
        return {names.get(name, name): coef for name, coef in terms.items()}

    return Side([(names[name], renamed(terms)) for name, terms in side.sums], [renamed(form) for form in side.forms])


def borrowed(algorithm: Algorithm, other: Algorithm) -> tuple[Side | None, Side | None, Side | None]:
    """Another program's sides where they compute what ``algorithm``'s do (its products taken in
    order and renamed as ``algorithm`` names them), None where a side computes something else: a
    scheme's programs from several sources (an optimized file, PLinOpt's ``.slp``) can then each
    give the side they do best."""
    algorithm, other = live(algorithm), live(other)  # with or without the products no output uses, alike
    if other.shape != algorithm.shape or other.rank != algorithm.rank:
        return None, None, None
    renamed = {theirs.name: mine.name for theirs, mine in zip(other.products, algorithm.products)}

    def products_renamed(terms: Terms) -> Terms:
        return {renamed.get(name, name): coef for name, coef in terms.items()}

    mine, theirs = sides(algorithm), sides(other)
    theirs = (theirs[0], theirs[1], [products_renamed(form) for form in theirs[2]])
    # its sums renumbered first, under a prefix no product of either takes: a sum named as a product (X1 of
    # one, X1 of the other) had been confused with it, and every side refused
    taken = set(renamed) | set(renamed.values())
    left, right, outputs = (renumbered(side, free_prefix(letter, taken)) for side, letter in zip(written(other), "XYZ"))
    outputs = Side([(name, products_renamed(terms)) for name, terms in outputs.sums], [products_renamed(f) for f in outputs.forms])
    return tuple(side if same == given else None for side, same, given in zip((left, right, outputs), mine, theirs))


# Up to this many coefficients (targets × inputs), the kernel split and the shortcut pass run too:
# ⟨4,4,4;48⟩ has 48 × 16; AlphaTensor's ⟨11,11,11;896⟩ (896 × 121) stays on pair elimination alone.
REUSE_CELLS = 4_096


def small(forms: list[Terms]) -> bool:
    return len(forms) * len({name for form in forms for name in form}) <= REUSE_CELLS


def small_sides(algorithm: Algorithm) -> list[str]:
    """The sides ("A", "B", "C") small enough (REUSE_CELLS) for the searches past greedy elimination."""
    return [side for side, forms in zip("ABC", sides(algorithm)) if small(forms)]


def overfull(forms: list[Terms]) -> bool:
    """More targets than inputs, so some are combinations of others: what the kernel split and the
    deeper shortcut look for (a scheme's outputs over its products rarely are)."""
    return len(forms) > len({name for form in forms for name in form})


def seeded_terms(algorithm: Algorithm) -> int:
    """The most terms of a side that gets seeded orders (at most SEEDED_PAIRS pairs): what their time grows
    with, faster than linearly (on two cores with 16 seeds: ⟨10,10,10;682⟩'s largest, 4,386, 26 s in all;
    ⟨11,11,11;896⟩'s 13,206, 228 s)."""
    return max((sum(map(len, forms)) for forms in sides(algorithm) if not more_pairs_than(forms, SEEDED_PAIRS)), default=0)
