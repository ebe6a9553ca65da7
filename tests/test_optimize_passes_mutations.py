"""The passes around `optimize` (bilinear/optimize_arguments.py, optimize_dead.py, optimize_scale.py) pinned
where the rest of the suite let a changed line pass: a source-mutation audit of the three modules.

The suite reaches them through whole `optimize` runs, on schemes that give rescale little to do: its tests of
`optimize` passed with rescale doing nothing at all, and with a factor applied the wrong way in a sum or in
its uses (the forms then no longer computed).  So rescale is pinned here step by step (which sums, the factors
tried and in which order, the count compared, the second pass), and scaled_copies' choice, order and names of
copies.  Of the dead products (optimize declares the rank itself and works on the expanded sides, so little of
live's own result reaches its output): expanding the outputs where only sums name a dead one, which sums go,
the declared rank, and the algorithm itself where none is dead.  Of the arguments: the messages for a
non-Algorithm, a bool, a text count, several unknown sides, one Algorithm or bytes as `also`; an Algorithm
built in Python; a read-only mapping as `starts`; the upper limits; a program that computes one side; every
program of `also` answered.  Mutants that loop for ever fail here on a bound on the passes' own calls.

optimize_arguments.py: 34 mutants, 18 killed by the suite, 1 equivalent (a str iterated, not kept whole:
its items are strs, refused with the same message), 15 killed here.  optimize_dead.py: 19, 9, 3 equivalent (an
output can name a dead product only where a sum names it too, for its weights to cancel; the sums trimmed
for C are never reached from outputs written over products, so neither the sums `used_names` reads nor the
list filtered by it changes what is kept), 7 here.  optimize_scale.py: 32, 15 (three by the suite hanging
past its time limit), 2 equivalent (discarding factor 1, which leaves the count as it is and is never
kept; names[-1] of a one-name list), 15 here.  No bug was found.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from types import MappingProxyType

import pytest
from conftest import ROOT

import bilinear
from bilinear.frontend.loader import program_from_text
from bilinear.optimize_arguments import check_arguments
from bilinear.optimize_dead import dropped, live
from bilinear.optimize_pairs import scalings
from bilinear.optimize_scale import rescale, scaled_copies

F = Fraction
STRASSEN_BL = (ROOT / "algorithms" / "strassen.bl").read_text()
PRODUCTS = STRASSEN_BL[STRASSEN_BL.index("  M1 ="):STRASSEN_BL.index("\n\n  C11")]  # M1..M7, one a line
OUTPUTS = {"C11": {"M1": 1, "M4": 1, "M5": -1, "M7": 1}, "C12": {"M3": 1, "M5": 1}, "C21": {"M2": 1, "M4": 1},
           "C22": {"M1": 1, "M2": -1, "M3": 1, "M6": 1}}  # strassen's, as written


def _strassen():
    return bilinear.load(ROOT / "algorithms" / "strassen.bl").main


def _algorithm(rank: int, lines: str, outputs: str) -> bilinear.ir.Algorithm:
    """<2,2,2;rank> of strassen's products M1..M7, then ``lines`` (sums, products), then ``outputs``."""
    return program_from_text(f"algorithm s <2,2,2;{rank}>:\n{PRODUCTS}\n{lines}\n{outputs}\n").main


def _shape(algorithm) -> tuple:
    """(declared rank, product names, {sum: terms}, {block: terms}) with the coefficients as ints where whole."""
    def terms(form):
        return {name: int(c) if c.denominator == 1 else c for name, c in form.terms}
    return (algorithm.declared_rank, [p.name for p in algorithm.products], {s.name: terms(s.form) for s in algorithm.sums},
            {o.block: terms(o.form) for o in algorithm.outputs})


# ---- optimize_arguments.py ---------------------------------------------------------------------------


def _checked(algorithm=None, seeds=1, polish=0, chains=1, also=(), starts=1, name=None):
    return check_arguments(_strassen() if algorithm is None else algorithm, seeds, polish, chains, also, starts, name)


def _refusal(error, **arguments) -> str:
    return str(pytest.raises(error, _checked, **arguments).value)


def test_what_is_not_an_algorithm_is_named_by_its_type():
    assert _refusal(TypeError, algorithm=5) == ("optimize takes one Algorithm (bilinear.load(path).main, or "
                                                ".algorithm(name)), not int")


def test_an_algorithm_built_in_python_has_its_types_checked():
    """check_built_types was never reached by the suite's calls: a rank of 0 passed with the line gone."""
    assert _refusal(ValueError, algorithm=dataclasses.replace(_strassen(), declared_rank=0)) == (
        "algorithm strassen's declared rank must be a whole number or None, not 0")


def test_starts_may_be_any_mapping_and_names_each_unknown_side_once_sorted():
    """A read-only mapping is a mapping (not a count); the unknown sides are said sorted, by their text, comma-separated;
    C is a side."""
    assert _checked(starts=MappingProxyType({"B": 2, "C": 3})) == ()
    unknown = {"Q": 1, 1: 2, "C": 1, "D": 1, "a": 1, "Z": 1, "E": 1, "AB": 1, "b": 1}  # 8: a set's order is sorted 1 in 8!
    assert _refusal(ValueError, starts=unknown) == "starts names the sides A, B and C, not 1, AB, D, E, Q, Z, a, b"


def test_also_takes_a_sequence_not_one_algorithm_nor_bytes():
    """One Algorithm is told to be passed in a list (without the check: "'Algorithm' object is not iterable");
    b"strassen" is one wrong value, not eight whole numbers (iterated, it was refused as an int)."""
    assert _refusal(TypeError, also=_strassen()) == "also takes a sequence of Algorithms, not one Algorithm: pass [it]"
    assert _refusal(TypeError, also=b"strassen") == "also takes Algorithms (other programs of the scheme, loaded), not bytes"



def test_counts_are_taken_at_their_limits_and_refused_one_past():
    assert _checked(seeds=10**6, polish=10**6, chains=4096, starts={"A": 10**6}) == ()
    assert _checked(seeds=0, polish=0, chains=1, starts=1) == ()
    assert _refusal(ValueError, chains=4097) == "chains must be between 1 and 4096, not 4097"
    assert _refusal(ValueError, starts=10**6 + 1) == "starts must be between 1 and 1000000, not 1000001"


def test_a_count_that_is_no_whole_number_is_named_with_its_type_and_repr():
    """True is a bool, not the count 1; a text count is quoted, as repr writes it."""
    assert _refusal(TypeError, seeds=True) == "seeds must be a whole number, not bool True"
    assert _refusal(TypeError, polish="3") == "polish must be a whole number, not str '3'"


def test_a_program_that_computes_one_side_gives_that_side_its_own_program():
    """M1 = 2(A11 + A22) · (B11 + B22)/2 computes other left and right factors, the same outputs, which it
    writes over a sum P: (None, None, its C side), P renumbered; neither refused for the sides it lacks
    nor answered with strassen's own C side (the arguments of ``borrowed`` swapped).  With strassen itself
    after it, each program gives its sides (only the first had been kept)."""
    text = STRASSEN_BL.replace("M1 = (A11 + A22) * (B11 + B22)", "M1 = (2*A11 + 2*A22) * (B11/2 + B22/2)")
    other = program_from_text(text.replace("C21 = M2 + M4", "P = M2 + M4\n  C21 = P")).main
    ((left, right, outputs),) = _checked(also=[other])
    assert left is right is None
    assert (outputs.sums, outputs.forms[2]) == ([("Z1", {"M2": 1, "M4": 1})], {"Z1": 1})
    both = _checked(also=(program for program in (other, _strassen())))  # a generator, read once: one answer each
    assert [[side is None for side in sides] for sides in both] == [[True, True, False], [False, False, False]]

# ---- optimize_dead.py --------------------------------------------------------------------------------

TWO_DEAD = """  T = A11 + A22
  U = A11 + A21
  M8 = U * (B11 - B12)
  M9 = A12 * B21"""  # M8 (over U, a sum only it uses) and M9: no output uses either; T nothing uses


def test_an_algorithm_whose_products_are_all_used_is_returned_itself():
    strassen = _strassen()
    assert live(strassen) is strassen and dropped(strassen, strassen) == []


def test_dead_products_go_with_the_sums_only_they_used_and_the_rest_is_kept_as_written():
    """M8 and M9 go, U (M8's) and T (nobody's) with them; the outputs, which name neither, are kept as
    written (not expanded), the declared rank is the products left, and `dropped` names the two in order."""
    algorithm = _algorithm(9, TWO_DEAD, "  C11 = M1 + M4 - M5 + M7\n  C12 = M3 + M5\n  C21 = M2 + M4\n"
                                        "  C22 = M1 - M2 + M3 + M6")
    result = live(algorithm)
    assert _shape(result) == (7, [f"M{r}" for r in range(1, 8)], {}, OUTPUTS)
    assert dropped(algorithm, result) == ["M8", "M9"] and dropped(result, algorithm) == []


def test_where_only_sums_name_a_dead_product_the_outputs_are_expanded_and_the_sums_over_products_go():
    """M8's weights cancel in R = S - M8 with S = M5 + M8: the outputs name no dead product, yet the sums
    do, so the outputs are written over the products (C21 = P too), S, R and P go, and T, a sum over A
    that M1 reads, stays."""
    lines = "  M8 = A11 * B11\n  S = M5 + M8\n  R = S - M8\n  P = M2 + M4"
    outputs = "  C11 = M1 + M4 - R + M7\n  C12 = M3 + M5\n  C21 = P\n  C22 = M1 - M2 + M3 + M6"
    text = f"algorithm s <2,2,2;8>:\n  T = A11 + A22\n{PRODUCTS.replace('(A11 + A22) *', 'T *')}\n{lines}\n{outputs}\n"
    algorithm = program_from_text(text).main
    assert [s.name for s in algorithm.sums] == ["T", "S", "R", "P"]
    assert _shape(live(algorithm)) == (7, [f"M{r}" for r in range(1, 8)], {"T": {"A11": 1, "A22": 1}}, OUTPUTS)


# ---- optimize_scale.py: rescale ----------------------------------------------------------------------


def _fractions(value):
    """``value`` with every number a Fraction (names kept), at any depth of lists, tuples and dicts."""
    if isinstance(value, dict):
        return {k: _fractions(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_fractions(v) for v in value)
    return value if isinstance(value, str) else F(value)


def _rescaled(sums, forms):
    """rescale with the scaling count, refused past 30 counts (a pass that never ends: a mutant looped)."""
    counted = []

    def counting(forms):
        counted.append(None)
        assert len(counted) <= 30, "rescale never ends"
        return scalings(forms)
    return rescale(_fractions(sums), _fractions(forms), counting)


def test_a_sum_used_halved_is_named_halved_whatever_the_signs():
    """S = a - b read as S/2 and -S/2: S' = (a - b)/2 read as ±S'; 2 scalings -> 1.  (A factor taken
    with its sign had been -1/2, the smaller, and negated S.)"""
    sums, forms = _rescaled([("S", {"a": 1, "b": -1})], [{"S": F(1, 2), "c": 1}, {"S": F(-1, 2), "d": 1}])
    assert sums == [("S", {"a": F(1, 2), "b": F(-1, 2)})] and forms == [{"S": 1, "c": 1}, {"S": -1, "d": 1}]


def test_a_scaling_already_in_the_definition_counts():
    """S = 2a - 2b read as S/4: S' = (a - b)/2 read as S', 2 scalings -> 1; without the definition's own
    scaling in the count, 1 -> 1, kept as it was.  Of 1/4 and 1/2 (each leaves one) the smaller is taken."""
    sums, forms = _rescaled([("S", {"a": 2, "b": -2})], [{"S": F(1, 4), "c": 1}])
    assert sums == [("S", {"a": F(1, 2), "b": F(-1, 2)})] and forms == [{"S": 1, "c": 1}]


def test_the_inverse_of_a_definitions_magnitude_is_tried_too():
    """S = (a + b)/2 read as 3S: ×2 (from the definition's 1/2) makes S = a + b and 3S becomes 3S/2: 2 -> 1,
    and 2 is tried before 3 (which also leaves one)."""
    sums, forms = _rescaled([("S", {"a": F(1, 2), "b": F(1, 2)})], [{"S": 3, "c": 1}])
    assert sums == [("S", {"a": 1, "b": 1})] and forms == [{"S": F(3, 2), "c": 1}]


def test_the_factor_that_saves_most_is_kept_not_the_last_that_saves():
    """S = (a + b)/2 read as 2S, 2S and 4S: ×2 leaves one scaling (4S -> 2S), ×4 three; 4 -> 1."""
    sums, forms = _rescaled([("S", {"a": F(1, 2), "b": F(1, 2)})], [{"S": 2, "c": 1}, {"S": 2, "d": 1}, {"S": 4, "e": 1}])
    assert sums == [("S", {"a": 1, "b": 1})] and forms == [{"S": 1, "c": 1}, {"S": 1, "d": 1}, {"S": 2, "e": 1}]


def test_rescaling_a_later_sum_lets_an_earlier_one_be_rescaled_on_a_second_pass():
    """S = a/2 + b, T = S + c/2, read as 2T: T ×2 makes T = 2S + c, then S ×2 makes T = S + c: 3 -> 1."""
    sums, forms = _rescaled([("S", {"a": F(1, 2), "b": 1}), ("T", {"S": 1, "c": F(1, 2)})], [{"T": 2, "d": 1}])
    assert sums == [("S", {"a": 1, "b": 2}), ("T", {"S": 1, "c": 1})] and forms == [{"T": 1, "d": 1}]


def test_a_sum_nothing_reads_is_left_as_defined():
    """S = (a + b)/2 read nowhere: ×2 saves its scaling, but changes what S is for no reader."""
    assert _rescaled([("S", {"a": F(1, 2), "b": F(1, 2)})], [{"c": 1}]) == ([("S", {"a": F(1, 2), "b": F(1, 2)})], [{"c": 1}])


# ---- optimize_scale.py: scaled_copies ----------------------------------------------------------------


class _Prefix(str):
    """The copies' prefix, refusing a 21st name: a pass that never ends (a mutant copied copies) fails."""

    def __format__(self, spec: str) -> str:
        self.named = getattr(self, "named", 0) + 1
        assert self.named <= 20, "scaled_copies never ends"
        return str.__format__(self, spec)


def _copied(sums, forms):
    return scaled_copies(_fractions(sums), _fractions(forms), _Prefix("H"))


def test_a_lone_term_in_one_statement_gets_no_copy():
    forms = [{"a": 1, "b": F(1, 2)}, {"c": 1, "b": F(1, 2), "d": F(1, 2)}]
    assert _copied([], forms) == ([], forms)


def test_terms_of_magnitude_one_or_sharing_a_magnitude_whatever_their_signs_are_not_lone():
    """a is the only ±1 term of both statements, and x/2, -y/2 share their magnitude: no copy at all."""
    forms = [{"a": 1, "c": F(1, 2), "d": F(1, 2)}, {"a": -1, "e": F(1, 2), "f": F(1, 2)}, {"x": F(1, 2), "y": F(-1, 2)},
             {"x": F(1, 2), "y": F(-1, 2), "g": 1}]
    assert _copied([], forms) == ([], forms)


def test_copies_are_made_commonest_first_ties_in_sorted_order_and_numbered_from_one():
    """(b, 1/3) and (x, 1/2) are lone in two statements each, f/5 in one: b's copy comes first (sorted),
    then x's; f/5 gets none, and the commonest is taken before it (not the rarest, which made none)."""
    forms = [{"x": F(1, 2), "y": 1}, {"x": F(1, 2), "z": 1}, {"b": F(1, 3), "y": 1}, {"b": F(-1, 3), "z": 1},
             {"f": F(1, 5), "g": 1}]
    assert _copied([], forms) == ([("H1", {"b": F(1, 3)}), ("H2", {"x": F(1, 2)})],
                                  [{"H2": 1, "y": 1}, {"H2": 1, "z": 1}, {"H1": 1, "y": 1}, {"H1": -1, "z": 1},
                                   {"f": F(1, 5), "g": 1}])


def test_a_copy_of_a_named_sum_is_defined_right_after_it():
    sums = [("S", {"a": 1, "b": 1}), ("T", {"a": 1, "c": -1})]
    assert _copied(sums, [{"S": F(1, 2), "c": 1}, {"S": F(-1, 2), "d": 1}, {"T": 1}]) == (
        [("S", {"a": 1, "b": 1}), ("H1", {"S": F(1, 2)}), ("T", {"a": 1, "c": -1})],
        [{"H1": 1, "c": 1}, {"H1": -1, "d": 1}, {"T": 1}])
