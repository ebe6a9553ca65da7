"""Targets from targets (optimize_reuse.py) and the hash look-ups behind them (optimize_lookup.py) pinned
where the rest of the suite let a changed line pass: a source-mutation audit of both modules.

The suite checks the shortcut and paired passes through a few hand-made programs and through properties
(every form preserved, never dearer), so much went unseen when changed: which vectors a target may not
use (a sum's direct users only, or form indices among them), a lone target folded back into its form,
the caller's sums and forms left as they were, a second pass over the targets, the one-addition threshold
and the deeper search's (on operations, not additions), the sums a rewritten target still reads kept,
the names of targets and of half-sums, which pairs the paired pass tries and how it prices them, the
halves of one pair as terms of the next and a sum it drops as none, and a copy read through onto its
negation.  Of the look-ups: residues and keys modulo the prime, a vector's expansion, inverses and hashes,
a difference measured as its exact vector is, the index, and the exact options found.  Each test checks
an exact program (the seed fixed), value or set.  The audit found one bug, fixed: a coefficient the prime
divides (2^61 - 1, or a multiple, in a numerator or a denominator) has no inverse modulo it, and `bilinear
optimize` ended in "base is not invertible for the given modulus"; no bug changed a program's value.
"""

from __future__ import annotations

import copy
import random
from fractions import Fraction as F

from helpers.programs import defined_before_use, expand

from bilinear.optimize_lookup import PRIME, Vectors, _residue, indexed, key, keys, options, options_of_three
from bilinear.optimize_reuse import (_dependents, closure, copies_read_through, operations_first, paired, shortcut,
                                     users_of)


def _terms(*forms: dict) -> list[dict]:
    """The forms with Fraction coefficients."""
    return [{k: F(v) for k, v in form.items()} for form in forms]


def _cost(program) -> tuple[int, int]:
    """(operations, additions) of a (sums, forms) program."""
    sums, forms = program
    return operations_first([*(terms for _, terms in sums), *forms])


# ---- who uses what -------------------------------------------------------------------------------------


def test_users_closure_and_dependents_are_exact_sets():
    """S <- R <- Q (a chain of sums), Q and S + P read by forms 0 and 1: S's dependents are the sums
    above it only (pushing S again, not each user, found R alone; a form index is no sum)."""
    definitions = {"S": {"a": 1, "b": 1}, "R": {"S": 1, "c": 1}, "Q": {"R": 1, "d": 1}, "P": {"a": 1, "e": 1}}
    forms = [{"Q": 1}, {"S": 1, "P": 1}]
    users = users_of(definitions, forms)
    assert users == {"a": {"S", "P"}, "b": {"S"}, "S": {"R", 1}, "c": {"R"}, "R": {"Q"}, "d": {"Q"}, "e": {"P"},
                     "Q": {0}, "P": {1}}
    assert closure(["Q", "x"], definitions) == {"Q", "R", "S"}
    assert _dependents("S", users) == {"S", "R", "Q"}
    assert _dependents("P", users) == {"P"}


# ---- shortcut ------------------------------------------------------------------------------------------


def test_a_target_nothing_helps_is_its_own_form_again():
    """Named _T1 while the pass runs, a+b+c is folded back where its form alone reads it (the users of
    a form counted from 1, or no name taken for a target, left the copy `_T1` as a sum)."""
    forms = _terms({"a": 1, "b": 1, "c": 1})
    assert shortcut([], forms, random.Random(0)) == ([], forms)
    assert paired([], forms, random.Random(0)) == ([], forms)


def test_the_callers_sums_and_forms_are_left_as_they_were():
    """S2 copies S1, read through in the result; the pass works on copies (it rewrote the caller's S3
    and form in place when it took their dicts as they were)."""
    sums = [("S1", {"a": F(1), "b": F(1)}), ("S2", {"S1": F(1)}), ("S3", {"S2": F(1), "c": F(1)})]
    forms = _terms({"S3": 1, "d": 1}, {"S2": 1, "e": 1}, {"S2": 1, "c": 1})
    before = copy.deepcopy((sums, forms))
    for run in (shortcut, paired):
        result = run(sums, forms, random.Random(0))
        assert (sums, forms) == before
        assert [expand(f, dict(result[0])) for f in result[1]] == [expand(f, dict(sums)) for f in forms]


def test_a_target_cheaper_only_once_another_is_rewritten_is_taken_on_a_second_pass():
    """At seed 4 (deeper), _T2 = 2·S1 − b is rewritten first as _T1 + a − c; only then is S1 the fourth
    target's alone, and that target becomes _T2 + 3b/2: (5, 4).  One pass gave (7, 4); the names are
    the forms' positions from 1."""
    sums = [("S1", {"a": F(1), "c": F(-1, 2)})]
    forms = _terms({"a": 1, "b": -1}, {"b": -1, "S1": 2}, {"b": -1}, {"b": F(1, 2), "S1": 2})
    result = shortcut(sums, forms, random.Random(4), deeper=True)
    assert result == ([("_T1", {"a": 1, "b": -1}), ("_T2", {"c": -1, "_T1": 1, "a": 1})],
                      [{"_T1": 1}, {"_T2": 1}, {"b": -1}, {"_T2": 1, "b": F(3, 2)}])
    assert _cost(result) == (5, 4)


def test_the_targets_are_visited_in_the_order_the_seed_draws():
    """Six targets over S1 = a+b, S2 = b+d: seeds 0, 1 and 4 visit them in orders that end in three
    programs, (18, 11), (18, 10) and (19, 10) (visited as listed, every seed gave the same one)."""
    half = F(1, 2)
    sums = [("S1", {"a": F(1), "b": F(1)}), ("S2", {"b": F(1), "d": F(1)})]
    forms = _terms({"c": 1, "d": half, "b": -1, "a": half}, {"b": 1, "a": 2, "c": half}, {"c": 2, "S2": half},
                   {"d": half, "S1": 2}, {"a": 2, "c": 1, "S2": half}, {"d": half, "S1": 1})
    programs = {seed: shortcut(sums, forms, random.Random(seed)) for seed in (0, 1, 4)}
    assert {seed: _cost(program) for seed, program in programs.items()} == {0: (18, 11), 1: (18, 10), 4: (19, 10)}
    assert {seed: [name for name, _ in program[0]] for seed, program in programs.items()} == {
        0: ["_T1", "S2", "S1", "_T6"], 1: ["S2", "_T5", "S1", "_T6"], 4: ["S2", "_T5", "S1", "_T4"]}


def test_a_target_of_one_addition_and_one_scaling_is_looked_at():
    """2a + c costs an addition and a scaling, more than the skipped one addition: it is −_T4 − c, one
    addition (a threshold of an addition and a scaling skipped it: (7, 3))."""
    forms = _terms({"c": -2}, {"c": 1, "a": 2}, {"b": 2, "a": -2}, {"a": -2, "c": -2})
    result = shortcut([], forms, random.Random(3))
    assert result == ([("_T4", {"a": -2, "c": -2})], [{"c": -2}, {"_T4": -1, "c": -1}, {"b": 2, "a": -2}, {"_T4": 1}])
    assert _cost(result) == (6, 3)


def test_the_deeper_search_runs_for_a_target_of_three_operations():
    """Three terms over three vectors is worth two additions for b + 2d − a (three operations: the search
    kept for four skipped it, (8, 6)) and for b/2 + 2c − a (two additions and a scaling: counted in
    additions it was skipped, (7, 4))."""
    forms = _terms({"d": 1, "a": -1}, {"b": 1, "d": 2, "a": -1}, {"c": -1, "d": 2, "a": 1, "b": 2})
    result = shortcut([], forms, random.Random(4), deeper=True)
    assert result == ([("_T1", {"d": 1, "a": -1})],
                      [{"_T1": 1}, {"b": 1, "_T1": 1, "d": 1}, {"c": -1, "d": 2, "a": 1, "b": 2}])
    assert _cost(result) == (7, 6)
    forms = _terms({"c": -1, "a": 1, "b": -1}, {"b": 2}, {"b": F(1, 2), "c": 2, "a": -1})
    result = shortcut([], forms, random.Random(1), deeper=True)
    assert result == ([("_T1", {"c": -1, "a": 1, "b": -1})], [{"_T1": 1}, {"b": 2}, {"_T1": -1, "b": F(-1, 2), "c": 1}])
    assert _cost(result) == (6, 4)


def test_a_rewritten_target_keeps_the_sums_it_still_reads():
    """The fifth target becomes b + S1/2 + 2·S2 (deeper, seed 3): S2 was its own but it still reads it
    (dropping every sum it owned left _T5 reading an undefined S2)."""
    sums = [(n, {k: F(v) for k, v in t.items()}) for n, t in (
        ("S1", {"a": 1, "d": 1}), ("S2", {"c": 1, "e": 1}), ("S3", {"b": 1, "c": 1}), ("S4", {"S3": 1, "f": -2}),
        ("S5", {"S2": 1, "b": F(1, 2)}))]
    forms = _terms({"e": F(1, 2), "S1": 2, "S4": -1}, {"a": F(1, 2), "d": -1, "c": F(1, 2)}, {"a": 2, "S4": F(1, 2)},
                   {"f": 1, "a": F(1, 2), "S5": 2}, {"S1": F(1, 2), "S5": 2},
                   {"c": -1, "d": F(1, 2), "b": 1, "e": 1, "a": 2})
    new_sums, new_forms = result = shortcut(sums, forms, random.Random(3), deeper=True)
    assert defined_before_use(new_sums, "abcdef")
    assert [expand(f, dict(new_sums)) for f in new_forms] == [expand(f, dict(sums)) for f in forms]
    assert [name for name, _ in new_sums] == ["S1", "S3", "S4", "S2", "_T5"]
    assert _cost(result) == (28, 17)


# ---- paired ----------------------------------------------------------------------------------------------


def _two_targets_over_four(first: str = "X"):
    """F = X+Y+Z+W and G = X+Y−Z−W over four sums of two inputs (test_derive's pair), X named ``first``."""
    sums = [(name, {k: F(1) for k in pair}) for name, pair in zip([first, "Y", "Z", "W"], ["ab", "cd", "ef", "gh"])]
    forms = _terms(*({name: 1} for name in [first, "Y", "Z", "W"]), {first: 1, "Y": 1, "Z": 1, "W": 1},
                   {first: 1, "Y": 1, "Z": -1, "W": -1})
    return sums, forms


def test_half_sums_are_named_after_the_prefix_and_never_over_a_name_the_program_has():
    """H and D are _Tp1h and _Tp1d; with a sum already named _Tp1h, _Tp_1h and _Tp_1d (a name equal to
    the prefix alone looked for overwrote that sum; no "p" gave _T_1h, since targets are _T5, _T6)."""
    sums, forms = _two_targets_over_four()
    assert paired(sums, forms, random.Random(0)) == (
        [*sums, ("_Tp1h", {"X": 1, "Y": 1}), ("_Tp1d", {"Z": 1, "W": 1})],
        [*forms[:4], {"_Tp1h": 1, "_Tp1d": 1}, {"_Tp1h": 1, "_Tp1d": -1}])
    sums, forms = _two_targets_over_four("_Tp1h")
    assert paired(sums, forms, random.Random(0)) == (
        [*sums, ("_Tp_1h", {"_Tp1h": 1, "Y": 1}), ("_Tp_1d", {"Z": 1, "W": 1})],
        [*forms[:4], {"_Tp_1h": 1, "_Tp_1d": 1}, {"_Tp_1h": 1, "_Tp_1d": -1}])


def test_a_pair_that_costs_five_with_the_sum_only_it_reads_goes_through_its_halves():
    """F = S+Z+W and G = S−Z−W with S = X+Y read by them alone: five operations, four through H and D,
    and S goes: (9, 9) -> (8, 8).  A threshold of five, or S counted as F's only, skipped the pair."""
    sums, forms = _two_targets_over_four()
    sums.append(("S", {"X": F(1), "Y": F(1)}))
    forms[4:] = _terms({"S": 1, "Z": 1, "W": 1}, {"S": 1, "Z": -1, "W": -1})
    result = paired(sums, forms, random.Random(0))
    assert result == ([*sums[:4], ("_Tp1h", {"X": 1, "Y": 1}), ("_Tp1d", {"Z": 1, "W": 1})],
                      [*forms[:4], {"_Tp1h": 1, "_Tp1d": 1}, {"_Tp1h": 1, "_Tp1d": -1}])
    assert _cost((sums, forms)) == (9, 9) and _cost(result) == (8, 8)


def test_two_pairs_get_halves_of_their_own_numbers():
    """Two F, G pairs over disjoint inputs: the halves of the one made first are _Tp1h/_Tp1d, the next
    _Tp2h/_Tp2d, (20, 20) -> (16, 16) (a count left at 0 wrote the second pair's halves over the first's)."""
    sums, forms = _two_targets_over_four()
    more = [(name, {k: F(1) for k in pair}) for name, pair in zip("PQRU", ["ij", "kl", "mn", "op"])]
    sums += more
    forms[4:4] = _terms(*({name: 1} for name in "PQRU"))
    forms += _terms({"P": 1, "Q": 1, "R": 1, "U": 1}, {"P": 1, "Q": 1, "R": -1, "U": -1})
    new_sums, new_forms = result = paired(sums, forms, random.Random(0))
    assert new_sums == [*sums, ("_Tp2h", {"X": 1, "Y": 1}), ("_Tp2d", {"Z": 1, "W": 1}),
                        ("_Tp1h", {"P": 1, "Q": 1}), ("_Tp1d", {"R": 1, "U": 1})]
    assert new_forms[8:] == [{"_Tp2h": 1, "_Tp2d": 1}, {"_Tp2h": 1, "_Tp2d": -1},
                             {"_Tp1h": 1, "_Tp1d": 1}, {"_Tp1h": 1, "_Tp1d": -1}]
    assert _cost((sums, forms)) == (20, 20) and _cost(result) == (16, 16)


def test_a_pair_whose_half_difference_no_two_vectors_make_is_left_alone():
    """X+Y ± (e+f+g): H = X+Y is one addition, D = e+f+g is no pair of computed vectors: the program
    comes back as it was (looking at H alone took the missing D apart, a TypeError)."""
    sums = [("X", {"a": F(1), "b": F(1)}), ("Y", {"c": F(1), "d": F(1)})]
    forms = _terms({"X": 1}, {"Y": 1}, {"X": 1, "Y": 1, "e": 1, "f": 1, "g": 1}, {"X": 1, "Y": 1, "e": -1, "f": -1, "g": -1})
    assert paired(sums, forms, random.Random(0)) == (sums, forms)


def test_a_later_pair_builds_its_half_on_an_earlier_pairs_half():
    """X+Y+P ± (R+U) beside F, G (seed 0): its H is P + _Tp1h, the first pair's H, so both pairs go,
    (21, 21) -> (15, 15) (a half left unregistered or not alive was no term: the second pair stayed)."""
    sums, forms = _two_targets_over_four()
    sums += [(name, {k: F(1) for k in pair}) for name, pair in zip("PRU", ["ij", "mn", "op"])]
    forms[4:4] = _terms(*({name: 1} for name in "PRU"))
    forms += _terms({"X": 1, "Y": 1, "P": 1, "R": 1, "U": 1}, {"X": 1, "Y": 1, "P": 1, "R": -1, "U": -1})
    new_sums, new_forms = result = paired(sums, forms, random.Random(0))
    assert new_sums == [*sums, ("_Tp1h", {"X": 1, "Y": 1}), ("_Tp1d", {"Z": -1, "W": -1}),
                        ("_Tp2h", {"P": 1, "_Tp1h": 1}), ("_Tp2d", {"R": 1, "U": 1})]
    assert new_forms[7:] == [{"_Tp1h": 1, "_Tp1d": -1}, {"_Tp1h": 1, "_Tp1d": 1},
                             {"_Tp2h": 1, "_Tp2d": 1}, {"_Tp2h": 1, "_Tp2d": -1}]
    assert _cost((sums, forms)) == (21, 21) and _cost(result) == (15, 15)


def test_neither_half_is_built_over_a_vector_that_uses_the_second_target():
    """At seed 3 the pair a − c + b/2, 2a + b/2 has a half only over the second target itself: none is
    taken and the program comes back as it was (its dependents allowed, H = _T3 − S1/2 and _T3 = H − D)."""
    sums = [("S1", {"a": F(1), "c": F(1)})]
    forms = _terms({"b": F(1, 2), "a": 1, "c": -1}, {"S1": 1}, {"b": F(1, 2), "a": 2}, {"b": 2, "S1": F(1, 2)})
    assert paired(sums, forms, random.Random(3)) == (sums, forms)


def test_halves_that_cost_what_the_pair_costs_are_not_taken():
    """S2 ± S3 over S2 = a+b, S3 = S1 + e: through H = S1 + e and D = −a − b it costs the same five operations,
    so the program stays (in definition order; at equal cost the halves were taken)."""
    sums = [("S1", {"c": F(1), "d": F(-1)}), ("S2", {"a": F(1), "b": F(1)}), ("S3", {"S1": F(1), "e": F(1)})]
    forms = _terms({"S2": 1, "S3": 1}, {"S2": -1, "S3": 1})
    assert paired(sums, forms, random.Random(4)) == ([sums[1], sums[0], sums[2]], forms)


def test_a_copy_read_through_onto_its_negation_leaves_no_zero_term():
    """X2 = −X1 read through in X1 + X2 + c cancels X1 outright: {c: 1}, not {X1: 0, c: 1}; S = X1 + X2 + d
    becomes the copy {d: 1}, read through on the next round."""
    definitions = {"X1": {"a": F(1), "b": F(1)}, "X2": {"X1": F(-1)}, "S": {"X1": F(1), "X2": F(1), "d": F(1)}}
    forms = _terms({"X1": 1, "X2": 1, "c": 1}, {"S": 1})
    copies_read_through(definitions, forms)
    assert definitions == {"X1": {"a": 1, "b": 1}}
    assert forms == [{"c": 1}, {"d": 1}]


# ---- optimize_lookup: residues, keys, vectors ----------------------------------------------------------


def _program():
    """X = a+b, Y = c+d, t = X + 2Y, u = 2X, w = t + e + 3f, each a form: (vectors, names, index)."""
    one = F(1)
    definitions = {"X": {"a": one, "b": one}, "Y": {"c": one, "d": one}, "t": {"X": one, "Y": F(2)},
                   "u": {"X": F(2)}, "w": {"t": one, "e": one, "f": F(3)}}
    return indexed(definitions, [{"t": one}, {"u": one}, {"w": one}], random.Random(0))


def _as_items(found) -> list:
    """The options found, each as its sorted items, in sorted order (a multiset: the order is the hash's)."""
    return sorted(tuple(sorted(option.items())) for option in found)


def test_residues_and_keys_are_exact_modulo_the_prime():
    """3/2 is 3 times 2's inverse, −1 is PRIME − 1 (not −1), PRIME is 2**61 − 1; key is h1/h2 and None at h2 = 0 (also for
    h1 = 0: key 0), and keys gives each pair's key with one inverse, zeros skipped, in place."""
    half = pow(2, -1, PRIME)
    assert (_residue(F(3, 2)), _residue(F(-1)), _residue(F(7))) == (3 * half % PRIME, PRIME - 1, 7)
    assert _residue(F(-1, 3)) == 768614336404564650  # modulo 2**61 − 1, the prime itself pinned
    assert (key(6, 3), key(1, 0), key(0, 5), key(10, 4)) == (2, None, 0, 5 * half % PRIME)
    assert keys([(6, 3), (5, 0), (10, 4), (0, 0), (0, 7)]) == [2, None, 5 * half % PRIME, None, 0]
    assert keys([]) == []


def test_a_vector_is_its_expansion_over_the_inputs_with_residues_inverses_and_linear_hashes():
    """T = S − 2b + c/2 over S = a + 2b: b cancels and goes; an input is itself once; hashes are the same
    functionals at every call (fresh weights each time changed them) and two independent ones."""
    vectors = Vectors({"S": {"a": F(1), "b": F(2)}, "T": {"S": F(1), "b": F(-2), "c": F(1, 2)}}, random.Random(0))
    assert vectors.of("T") == {"a": 1, "c": F(1, 2)} and vectors.of("a") == {"a": 1}
    assert vectors.of("S") == {"a": 1, "b": 2}
    assert vectors.residues["T"] == {"a": 1, "c": pow(2, -1, PRIME)} and vectors.inverses["T"] == {"a": 1, "c": 2}
    (w1, w2), (v1, v2) = vectors.weights["a"], vectors.weights["c"]
    assert vectors.hashed["T"] == ((w1 + v1 * pow(2, -1, PRIME)) % PRIME, (w2 + v2 * pow(2, -1, PRIME)) % PRIME)
    assert vectors.hashes({"a": 1}) == vectors.hashed["a"] == (w1, w2) and w1 != w2
    assert vectors.hashes({}) == (0, 0) and vectors.alive == {"S", "T"}


def test_a_difference_is_measured_as_its_exact_vector_is_or_none_under_two_terms():
    """w − t = e + 3f and t − X = 2c + 2d: residues and hashes those of the exact difference, measured
    afresh; u − 2a = 2b (one term) and u − 2X (none) are None."""
    vectors, _, _ = _program()
    for wanted, ratio, first, exact in (("w", 1, "t", {"e": 1, "f": 3}), ("t", 1, "X", {"c": 2, "d": 2}),
                                        ("t", 2, "Y", {"a": 1, "b": 1})):
        measured = vectors.minus(wanted, F(ratio), first)
        assert measured.exact == exact
        fresh = vectors.measure(exact)
        assert (measured.residues, measured.hashes) == (fresh.residues, fresh.hashes)
    assert vectors.minus("u", F(2), "a") is None and vectors.minus("u", F(2), "X") is None


def test_a_difference_is_exact_over_every_leaf_of_both_even_one_the_prime_divides():
    """t − a = P·x1 + x2 + x3 − x4: x1's residue is 0 and x4 is a's alone, both in the exact vector, the
    cancelled x0 not (a review found the exact check built over the nonzero residues)."""
    one = F(1)
    definitions = {"a": {"x0": one, "x1": one, "x4": one}, "t": {"x0": one, "x1": F(1 + PRIME), "x2": one, "x3": one}}
    vectors, _, _ = indexed(definitions, [{"t": one}, {"a": one}], random.Random(0))
    measured = vectors.minus("t", one, "a")
    assert measured.residues == {"x2": 1, "x3": 1, "x4": PRIME - 1}
    assert measured.exact == {"x1": PRIME, "x2": 1, "x3": 1, "x4": -1}


def test_the_program_is_indexed_under_every_leaf_and_sum_by_the_key_of_its_hashes():
    """Leaves sorted, then the sums as defined; every one alive and filed under key(h1, h2)."""
    vectors, names, index = _program()
    assert names == ["a", "b", "c", "d", "e", "f", "X", "Y", "t", "u", "w"]
    assert vectors.alive == set(names)
    assert sorted(n for bucket in index.values() for n in bucket) == sorted(names)
    assert all(name in index[key(*vectors.hashed[name])] for name in names)


def test_options_are_every_one_or_two_computed_vectors_the_target_is_and_none_forbidden_or_dead():
    """t = X + 2Y = u/2 + 2Y (each found from both ends); u = 2a + 2b = 2X = 2t − 4Y; with X forbidden
    only u/2 + 2Y is left, and with u dead too nothing; w is t + e + 3f over three vectors (six ways), and
    with t forbidden or dead over none."""
    vectors, names, index = _program()
    assert _as_items(options("t", vectors, index, names, {"t"})) == [
        (("X", 1), ("Y", 2)), (("X", 1), ("Y", 2)), (("Y", 2), ("u", F(1, 2))), (("Y", 2), ("u", F(1, 2)))]
    assert _as_items(options("u", vectors, index, names, {"u"})) == [
        (("X", 2),), (("Y", -4), ("t", 2)), (("a", 2), ("b", 2)), (("a", 2), ("b", 2))]
    assert _as_items(options("t", vectors, index, names, {"t", "X"})) == [
        (("Y", 2), ("u", F(1, 2))), (("Y", 2), ("u", F(1, 2)))]
    vectors.alive.discard("u")
    assert _as_items(options("t", vectors, index, names, {"t", "X"})) == []
    assert _as_items(options_of_three("w", vectors, index, names, {"w"})) == [(("e", 1), ("f", 3), ("t", 1))] * 6
    assert _as_items(options_of_three("w", vectors, index, names, {"w", "t"})) == []
    vectors.alive.discard("t")
    assert _as_items(options_of_three("w", vectors, index, names, {"w"})) == []


def test_a_vector_the_hashes_call_a_multiple_is_checked_exactly():
    """t − a = P·x1 hashes to zero, yet t is no multiple of a: only x0 + (1 + P)·x1 itself (from both
    ends) is an option, no {a: x} (taken on the hashes' word, it was)."""
    one = F(1)
    definitions = {"a": {"x0": one, "x1": one}, "t": {"x0": one, "x1": F(1 + PRIME)}}
    vectors, names, index = indexed(definitions, [{"t": one}, {"a": one}], random.Random(0))
    assert _as_items(options("t", vectors, index, names, {"t"})) == [(("x0", 1), ("x1", 1 + PRIME))] * 2


def test_halves_are_priced_with_the_sums_each_of_them_keeps():
    """At seed 5, D = 3a/2 + S2 keeps S2 (the pair's own sum): with it, the halves cost 12 operations
    against the pair's 11 and the program stays (counting H's kept sums alone took them: (12, 7))."""
    sums = [("S1", {"c": F(1), "f": F(-1)}), ("S2", {"b": F(1), "e": F(2)}), ("S3", {"S1": F(1), "d": F(-1, 2)})]
    forms = _terms({"f": 1}, {"a": -2, "S2": -1, "S3": 2}, {"a": 1, "S2": 1, "S3": 2})
    result = paired(sums, forms, random.Random(5))
    assert result == ([sums[1], sums[0], sums[2]], forms) and _cost(result) == (11, 7)


def test_a_sum_a_pair_drops_is_no_term_for_a_later_pair():
    """S = X+Y, read by F = S+Z+W and G = S−Z−W alone, goes when they pair (seed 0); the later pair's H
    is then P + _Tp1h, not P + S (S left defined cost one more; left alive, it was read undefined)."""
    sums, forms = _two_targets_over_four()
    sums += [(name, {k: F(1) for k in pair}) for name, pair in zip("PRU", ["ij", "mn", "op"])]
    sums.append(("S", {"X": F(1), "Y": F(1)}))
    forms[4:] = _terms(*({name: 1} for name in "PRU"), {"S": 1, "Z": 1, "W": 1}, {"S": 1, "Z": -1, "W": -1},
                       {"X": 1, "Y": 1, "P": 1, "R": 1, "U": 1}, {"X": 1, "Y": 1, "P": 1, "R": -1, "U": -1})
    new_sums, new_forms = result = paired(sums, forms, random.Random(0))
    assert new_sums == [*sums[:7], ("_Tp1h", {"X": 1, "Y": 1}), ("_Tp1d", {"Z": -1, "W": -1}),
                        ("_Tp2h", {"P": 1, "_Tp1h": 1}), ("_Tp2d", {"R": 1, "U": 1})]
    assert new_forms[7:] == [{"_Tp1h": 1, "_Tp1d": -1}, {"_Tp1h": 1, "_Tp1d": 1},
                             {"_Tp2h": 1, "_Tp2d": 1}, {"_Tp2h": 1, "_Tp2d": -1}]
    assert _cost((sums, forms)) == (20, 20) and _cost(result) == (15, 15)


# ---- coefficients the prime divides --------------------------------------------------------------------


def test_a_coefficient_the_prime_divides_is_looked_up_and_the_saving_still_found():
    """A numerator or a denominator of 2^61 - 1 (the look-ups' prime) has no inverse modulo it: `bilinear
    optimize` on Strassen with M1 scaled by it ended in "base is not invertible for the given modulus".
    Such a coefficient takes no part in choosing a ratio, and the doubled form is still found."""
    for big in (F(PRIME), F(1, PRIME), F(3 * PRIME, 2)):
        forms = _terms({"a": 1, "b": big, "c": 1}, {"a": 2, "b": 2 * big, "c": 2})
        assert shortcut([], forms, random.Random(0)) == ([("_T1", forms[0])], [{"_T1": 1}, {"_T1": 2}])
        assert _cost(([("_T1", forms[0])], [{"_T1": 1}, {"_T1": 2}])) == (4, 2) < _cost(([], forms)) == (7, 4)


def test_a_difference_whose_residues_leave_the_exact_terms_is_refused_not_a_key_error():
    """F = p·(k + b), p the prime: T − F/p's residues keep k and b (p's residue is 0, 1/p's is taken as 1),
    its exact terms do not, and the deeper search's exact check of a hit there raised KeyError 'k'."""
    definitions = {"F": {"k": F(PRIME), "b": F(PRIME)}, "T": _terms({"k": 1, "b": 1, "c": 1})[0],
                   "S": _terms({"b": 1, "c": 1})[0]}
    vectors, names, index = indexed(definitions, [], random.Random(0))
    found = list(options_of_three("T", vectors, index, names, {"T"}))
    assert len(found) == 6 and all(option == {"k": 1, "b": 1, "c": 1} for option in found)


def test_a_pair_whose_exact_ratio_is_zero_is_no_option():
    """T = k/p, S = (p/2)·k − d: T − (2/p²)·S is exactly (2/p²)·d, but its residues keep k (1/p's residue is
    taken as 1, p/2's is 0).  The look-up cancelling that k with the leaf k finds d, and the exact ratio of
    k is 0: an option {S, k: 0, d} is refused, not offered with a zero coefficient."""
    definitions = {"T": {"k": F(1, PRIME)}, "S": {"d": F(-1), "k": F(PRIME, 2)}}
    vectors, names, index = indexed(definitions, [], random.Random(0))
    assert list(options_of_three("T", vectors, index, names, {"T"})) == []
