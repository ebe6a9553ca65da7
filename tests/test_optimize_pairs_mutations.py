"""Pair elimination (bilinear/optimize_pairs.py) pinned where the rest of the suite let a changed line pass:
a source-mutation audit (session 87, annotations left out) against the optimizer's tests (test_derive,
test_optimize_search, _dead, _products, _butterfly and the optimizer's mutation files).  122 mutants: 113
killed by them (22 by hanging), 1 by the test here (``eliminate``'s default slack, which no caller with an
rng leaves to the default), 8 equivalent: ``more_pairs_than``'s final False and ``top``'s [] as None (every
caller only tests their truth); ``_pairs_with``'s ``skip`` dropped (the chosen pair's count is taken down
twice per target, to below zero, but no target holds that pair again: its terms are gone and a sum is a
new name); ``name < other`` as ``<=`` (``other`` is never ``name`` there); ``self.best = max(self.best,
new)`` dropped (no count passes the best: a new pair holds the new sum, so it is in at most as many targets
as the chosen pair was); ``max(self.buckets, default=0)`` as default 1, and ``top``'s loop stopping at 2
as at 3 or above 2 (a best below 2, or an empty bucket 2, gives no pair either way).  No bug found.
"""

from __future__ import annotations

from helpers.programs import NESTED, Draws

from bilinear.optimize_pairs import eliminate


def test_a_random_choice_without_a_slack_is_among_the_most_frequent_pairs_only():
    """The last choice takes a + b alone at the default slack, b + c at a slack of 1."""
    first_sums = [eliminate(NESTED, "S", Draws(0.75, -1), *slack)[0][0] for slack in ((), (1,))]
    assert first_sums == [("S1", {"a": 1, "b": 1}), ("S1", {"b": 1, "c": 1})]
