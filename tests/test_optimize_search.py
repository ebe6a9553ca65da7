"""The local search over a side's program (bilinear.optimize_search), and scaled copies.

A window around a named sum is optimized again and kept only when it costs
fewer operations, and the iterated search folds a few sums back and searches
again: every rewritten program must still compute every form exactly, define
each sum before its use, and never cost more.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bilinear.optimize import Side, _copied, _polished, _polished_sides, _searched, _window_program, eliminate
from bilinear.optimize import _cost as _side_cost
from bilinear.optimize_pairs import additions, more_pairs_than, scalings
from bilinear.optimize_reuse import copies_read_through, operations_first
from bilinear.optimize_scale import scaled_copies
from bilinear.optimize_search import folded, search
from helpers.programs import defined_before_use, expand, fractions_of


def _cost(sums, forms):
    return operations_first([*(t for _, t in sums), *forms])


def test_search_redoes_a_window_that_greedy_choices_left_poor():
    """a+b+c and a+b+d written over S1 = a+c and S2 = b+d cost four additions, and no single target
    can shortcut through the other; the window around S1 takes in S2 (only the window uses it) and
    its new program shares a+b: three."""
    targets = [fractions_of({"a": 1, "b": 1, "c": 1}), fractions_of({"a": 1, "b": 1, "d": 1})]
    sums = [("S1", fractions_of({"a": 1, "c": 1})), ("S2", fractions_of({"b": 1, "d": 1}))]
    forms = [fractions_of({"S1": 1, "b": 1}), fractions_of({"S2": 1, "a": 1})]
    assert _cost(sums, forms) == (4, 4)
    sums, forms = search(sums, forms, _window_program, random.Random(0))
    assert _cost(sums, forms) == (3, 3)
    assert [expand(f, dict(sums)) for f in forms] == targets
    assert defined_before_use(sums, "abcd")


def test_search_keeps_a_program_no_window_improves():
    """(a+b)/2 and (a+b)/2 + c: one sum, scaled once, and one more addition is already the least."""
    sums = [("S", fractions_of({"a": Fraction(1, 2), "b": Fraction(1, 2)}))]
    forms = [fractions_of({"S": 1}), fractions_of({"S": 1, "c": 1})]
    new_sums, new_forms = search(sums, forms, _window_program, random.Random(0))
    assert _cost(new_sums, new_forms) == _cost(sums, forms) == (3, 2)


forms = st.lists(
    st.dictionaries(st.sampled_from("abcdef"), st.sampled_from([1, -1, 2, -2, Fraction(1, 2)]), min_size=1, max_size=5),
    min_size=1, max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(forms, st.integers(0, 5))
def test_search_preserves_every_form_and_never_costs_more(targets, seed):
    targets = [fractions_of(t) for t in targets]
    sums, rewritten = eliminate(targets, "S", random.Random(seed), 1)
    searched_sums, searched = search(sums, rewritten, _window_program, random.Random(seed))
    assert [expand(t, dict(searched_sums)) for t in searched] == targets
    assert defined_before_use(searched_sums, "abcdef")
    assert _cost(searched_sums, searched) <= _cost(sums, rewritten)


def test_copies_are_read_through_to_the_vector_they_copy():
    """X2 = X1 and X3 = -X2 copy X1: their users read X1 (through the chain, with its sign); a user
    that held X1 too merges the two terms, one addition fewer; a scaled copy (x/2) stays."""
    F = Fraction
    definitions = {"X1": {"a": F(1), "b": F(1)}, "X2": {"X1": F(1)}, "X3": {"X2": F(-1)}, "H": {"a": F(1, 2)},
                   "S": {"X3": F(1), "X1": F(2), "c": F(1)}}
    forms = [{"X3": F(1)}, {"X2": F(1), "H": F(1)}, {"S": F(1)}]
    copies_read_through(definitions, forms)
    assert definitions == {"X1": {"a": 1, "b": 1}, "H": {"a": F(1, 2)}, "S": {"X1": 1, "c": 1}}
    assert forms == [{"X1": -1}, {"X1": 1, "H": 1}, {"S": 1}]


def test_scaled_copy_shares_one_scaling_among_the_statements_that_scale_alike():
    """a + b/2 and c - b/2 and d + b/2 + e/2: b/2 is the only term of its magnitude in the first two
    (a scaling each) but not in the third; one copy h = b/2 serves the first two: 3 scalings -> 2."""
    half = Fraction(1, 2)
    forms = [fractions_of({"a": 1, "b": half}), fractions_of({"c": 1, "b": -half}), fractions_of({"d": 1, "b": half, "e": half})]
    sums, rewritten = scaled_copies([], forms, "H")
    assert sums == [("H1", {"b": half})]
    assert scalings([*(t for _, t in sums), *rewritten]) == 2 < scalings(forms) == 3
    assert [expand(f, dict(sums)) for f in rewritten] == forms


@settings(max_examples=40, deadline=None)
@given(forms, st.integers(0, 5))
def test_scaled_copies_preserve_every_form_and_never_cost_more(targets, seed):
    targets = [fractions_of(t) for t in targets]
    sums, rewritten = eliminate(targets, "S", random.Random(seed), 1)
    copied_sums, copied = scaled_copies(sums, rewritten, "H")
    assert [expand(t, dict(copied_sums)) for t in copied] == targets
    assert defined_before_use(copied_sums, "abcdef")
    assert _cost(copied_sums, copied) <= _cost(sums, rewritten)


def _two_poor_parts():
    """a+b+c, a+b−c over a+c and a−c, and the same over d, e, f: 4 additions each where 3 do (share a+b)."""
    sums, forms = [], []
    for x, y, z in ("abc", "def"):
        sums += [(f"S{x}", fractions_of({x: 1, z: 1})), (f"D{x}", fractions_of({x: 1, z: -1}))]
        forms += [fractions_of({f"S{x}": 1, y: 1}), fractions_of({f"D{x}": 1, y: 1})]
    return sums, forms


@pytest.mark.parametrize("focus, cost", [(None, (6, 6)), ({"b"}, (7, 7)), (set(), (8, 8))])
def test_focused_search_visits_only_statements_near_what_changed(focus, cost):
    """The full search redoes both parts; focused on b, only the part whose targets read b (the window
    around a+b+c takes in the other target and the sums only they use); the part over d, e, f is not
    near b and keeps its 4 additions; focused on nothing, nothing is redone."""
    sums, forms = _two_poor_parts()
    targets = [expand(form, dict(sums)) for form in forms]
    assert _cost(sums, forms) == (8, 8)
    sums, forms = search(sums, forms, _window_program, random.Random(0), focus=focus)
    assert _cost(sums, forms) == cost
    assert [expand(f, dict(sums)) for f in forms] == targets


def test_chains_keep_the_cheapest_and_do_not_depend_on_the_processes(monkeypatch):
    """Three chains end where the cheapest of three single chains (seeds 0, 1, 2: 11, 12 and 11
    operations) ends, the first of equals, whether the chains ran in three processes or in this one."""
    side = Side(*eliminate(FOLDABLE, "S"))
    singles = [_polished(side, 2, seed) for seed in range(3)]
    assert [_side_cost(_copied(end)) for end in singles] == [(11, 11), (12, 10), (11, 11)]
    cheapest = singles[0]
    pooled = _polished_sides([[side]], 2, 3)
    monkeypatch.setattr("bilinear.processes.os.cpu_count", lambda: 1)
    inline = _polished_sides([[side]], 2, 3)
    assert pooled == inline == [cheapest]


def test_each_start_is_polished_from_its_own_seeds(monkeypatch):
    """Two starting programs, two chains each: start 0's chains are seeded 0 and 1, start 1's 2 and
    3, and the cheapest of the four ends (the first of equals) is kept."""
    starts = [Side(*eliminate(FOLDABLE, "S")), Side(*eliminate(FOLDABLE, "S", random.Random(5), 1))]
    ends = [_polished(side, 2, seed) for side, seed in ((starts[0], 0), (starts[0], 1), (starts[1], 2), (starts[1], 3))]
    assert _polished_sides([starts], 2, 2) == [min(ends, key=lambda end: _side_cost(_copied(end)))]
    assert _polished_sides([starts], 0, 2) == [min(starts, key=lambda side: _side_cost(_copied(side)))]
    chains = []
    monkeypatch.setattr("bilinear.processes.os.cpu_count", lambda: 1)  # the chains in this process, recorded
    monkeypatch.setattr("bilinear.optimize._chain", lambda job: chains.append(([job[0] is s for s in starts].index(True), job[2])) or job[0])
    _polished_sides([starts], 2, 2)
    assert chains == [(0, 0), (0, 1), (1, 2), (1, 3)]


FOLDABLE = [fractions_of(t) for t in (
    {"a": 1, "b": -1, "c": -1, "d": 1, "e": 1, "f": -1}, {"a": 1, "b": -1, "e": 1, "f": 1},
    {"a": 1, "b": -1, "c": 1, "d": 1, "e": 1, "f": 1}, {"a": -1, "b": -1, "c": 1, "d": -1, "e": 1, "f": -1},
    {"c": 1, "d": 1}, {"a": 1, "b": 1, "c": -1, "d": 1, "e": -1, "f": -1},
)]


def test_perturbed_search_leaves_a_point_the_local_search_cannot():
    """Six ±1 targets over six inputs (found by a random sweep): the searched program costs 13
    operations and no window alone does better; folding a few sums back and searching again, six
    tries, reaches 11 additions and no scalings."""
    targets = FOLDABLE
    searched = _searched(Side(*eliminate(targets, "S")))
    assert _side_cost(searched) == (13, 11)
    polished = _polished(searched, 6)
    assert _side_cost(polished) == (11, 11)
    assert [expand(f, dict(polished.sums)) for f in polished.forms] == targets
    assert defined_before_use(polished.sums, "abcdef")


@settings(max_examples=40, deadline=None)
@given(forms, st.integers(0, 5), st.data())
def test_folding_sums_back_keeps_every_form(targets, seed, data):
    targets = [fractions_of(t) for t in targets]
    sums, rewritten = eliminate(targets, "S", random.Random(seed), 1)
    victims = data.draw(st.sets(st.sampled_from([name for name, _ in sums]))) if sums else set()
    folded_sums, folded_forms = folded(sums, rewritten, victims)
    assert [name for name, _ in folded_sums] == [name for name, _ in sums if name not in victims]
    assert not victims & {term for terms in [*(t for _, t in folded_sums), *folded_forms] for term in terms}
    assert [expand(t, dict(folded_sums)) for t in folded_forms] == targets


@settings(max_examples=25, deadline=None)
@given(forms, st.integers(0, 5))
def test_perturbed_search_preserves_every_form_and_never_costs_more(targets, seed):
    targets = [fractions_of(t) for t in targets]
    side = Side(*eliminate(targets, "S", random.Random(seed), 1))
    polished = _polished(side, 3)
    assert [expand(t, dict(polished.sums)) for t in polished.forms] == targets
    assert defined_before_use(polished.sums, "abcdef")
    assert _side_cost(polished) <= _side_cost(side)


def test_more_pairs_than_agrees_with_the_count_at_its_limit():
    """The check that decides whether a side gets seeded orders stops early on large sides; at the limit it
    agrees with counting every pair (a + b + c holds three; 2a − 2b one more, its ratio b/a being −1, not 1)."""
    from bilinear.optimize_pairs import pairs

    one = Fraction(1)
    targets = [{"a": one, "b": one, "c": one}, {"a": 2 * one, "b": -2 * one}]
    assert len(pairs(targets)) == 4
    assert not more_pairs_than(targets, 4) and more_pairs_than(targets, 3)
    assert not more_pairs_than([], 0)


# A source-mutation audit of optimize_pairs.py (session 78): each test fails under a change the suite had let
# through.

def _form(**coefficients) -> dict[str, Fraction]:
    return {name: Fraction(value) for name, value in coefficients.items()}


def test_the_commonest_pair_is_named_and_substituted_then_pairs_that_occur_once_are_left():
    sums, rewritten = eliminate([_form(a=1, b=1, c=1), _form(a=1, b=1), _form(a=2, b=2, d=1)], "S")
    assert sums == [("S1", {"a": 1, "b": 1})]
    assert rewritten == [{"c": 1, "S1": 1}, {"S1": 1}, {"d": 1, "S1": 2}]


def test_a_pair_is_taken_with_its_ratio():
    sums, rewritten = eliminate([_form(a=1, b=-2), _form(a=3, b=-6)], "S")
    assert sums == [("S1", {"a": 1, "b": -2})] and rewritten == [{"S1": 1}, {"S1": 3}]


def test_a_pair_that_a_named_sum_makes_frequent_is_taken_next():
    sums, rewritten = eliminate([_form(a=1, b=1, c=1), _form(a=1, b=1, c=1), _form(a=1, b=1)], "S")
    assert sums == [("S1", {"a": 1, "b": 1}), ("S2", {"S1": 1, "c": 1})]
    assert rewritten == [{"S2": 1}, {"S2": 1}, {"S1": 1}]


def test_a_seeded_elimination_never_takes_a_pair_that_occurs_once():
    for seed in range(20):
        for slack in (0, 1, 5):
            sums, _ = eliminate([_form(a=1, b=1, c=1), _form(a=1, b=1)], "S", random.Random(seed), slack)
            assert sums == [("S1", {"a": 1, "b": 1})], (seed, slack)
        assert eliminate([_form(a=1, b=1)], "S", random.Random(seed), 0) == ([], [{"a": 1, "b": 1}])


def test_more_pairs_than_is_strict():
    assert not more_pairs_than([_form(a=1, b=1, c=1)], 3)
    assert more_pairs_than([_form(a=1, b=1, c=1)], 2)


def test_costs_of_forms():
    assert additions([{}, _form(a=1, b=1)]) == 1
    assert scalings([{"x": Fraction(1), "y": Fraction(1, 2)}]) == 1
    assert scalings([_form(x=2, y=-2)]) == 1
