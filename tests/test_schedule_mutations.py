"""The scheduling passes (schedule/inplace.py, schedule/basis.py) pinned where the rest of the suite
let a changed line pass: a source-mutation audit of both modules.

The suite checks these passes mostly through what they make: each derived schedule verifies, restores
A and B, moves fewer blocks than MSMES, matches a golden file for Strassen, and msmes2's phases come
in the counts found.  A schedule that still verifies but was derived another way went unseen.  Of the
in-place search: whether exactly n! tries (and 20 products, not 21) cover every order, a product whose
factor expands to zero through a sum, how many orders the tries and steps price, that an equal cost
neither replaces the written order among the tries nor stops a step, which neighbours seed 0 draws,
every order priced in turn, the refusal of no tries, and a block holding a multiple of a factor read
at its scale.  Of restoring: which of equally short ways
back comes first, and which changed block is subtracted from where none comes back directly.  Of the
changes of basis: the row operations of a scaling and a zero pivot, the inverse and rank of empty and
1×1 matrices, the identity shortcut of the product, the phases a split keeps (an echelon row scaled
to its pivot, parallel directions as scales, the bound counting directions not products, the written
split kept where no shuffle does better), the completion chosen (the last pivot of equal value, the
denominators of Q⁻¹, the searched one below 512 candidates, the echelon one past it and its
largest-entry variant past the condition limit), the condition number's scaling, a change of basis
that only scales, a parallel product's scale in its one target, and msmes's first two product stages
as single_target writes them.

Each test builds a few statements, a small algorithm or a matrix inline (or loads Strassen or msmes)
and checks exact values.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction

import pytest

import bilinear
from bilinear.frontend.loader import program_from_text
from bilinear.ir import Form, Multiply, Schedule, Stage
from bilinear.schedule.basis import (_basis, _condition, _echelon_completion, _matmul, _Phase, _transform_stage, inverse,
                                     rank, row_operations, single_target, split_phases)
from bilinear.schedule.inplace import _Blocks, _restore, derive_inplace, every_order, inplace_schedule, product_count


def _naive(m: int, k: int, n: int):
    """The naive ⟨m,k,n⟩ algorithm, one product per term, as an Algorithm."""
    lines, count = [f"algorithm naive{m}{k}{n} <{m},{k},{n};{m * k * n}>:"], 0
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            products = []
            for l in range(1, k + 1):
                count += 1
                lines.append(f"  M{count} = A{i}{l} * B{l}{j}")
                products.append(f"M{count}")
            lines.append(f"  C{i}{j} = " + " + ".join(products))
    return program_from_text("\n".join(lines) + "\n").main


# ---- inplace.py: how many orders there are -------------------------------------------------------------


def test_every_order_holds_at_exactly_count_factorial_tries():
    """Strassen's 7! = 5040 orders are all tried with 5040 tries, not with 5039 (`<=` made `<`)."""
    strassen = bilinear.load("strassen").main
    assert (every_order(strassen, 5040), every_order(strassen, 5039)) == (True, False)


def test_every_order_counts_twenty_products_and_not_twenty_one():
    """20 products with 20! tries are every order (`count <= 20` made `< 20` said not); 21 never are."""
    assert product_count(_naive(2, 5, 2)) == 20 and every_order(_naive(2, 5, 2), math.factorial(20))
    assert product_count(_naive(1, 7, 3)) == 21 and not every_order(_naive(1, 7, 3), math.factorial(21))


# ---- inplace.py: the search ----------------------------------------------------------------------------


def _priced(algorithm, **search) -> tuple[int, object]:
    """How many schedules :func:`inplace_schedule` prices at a cost of 0 for all, and the one it returns."""
    priced = []
    found = inplace_schedule(algorithm, lambda schedule: priced.append(schedule) or 0, **search)
    return len(priced), found


def test_tries_are_the_written_order_and_tries_minus_one_shuffles():
    """Three tries price three orders (`tries - 1` shuffles made `tries` priced four)."""
    assert _priced(bilinear.load("strassen").main, tries=3, steps=0)[0] == 3


def test_an_equal_cost_does_not_replace_the_written_order_among_the_tries():
    """The first of equal costs wins (`<` made `<=` returned the last shuffled order)."""
    strassen = bilinear.load("strassen").main
    assert _priced(strassen, tries=5, steps=0) == (5, derive_inplace(strassen))


def test_each_step_prices_one_neighbour():
    """One try and one step price the written order and one neighbour (`steps - 1` priced one)."""
    assert _priced(bilinear.load("strassen").main, tries=1, steps=1)[0] == 2


def test_the_steps_cross_a_plateau_by_moves_and_swaps_drawn_from_the_seed():
    """Four steps at one cost: seed 0 draws a move of position 6 to 3, swaps of 3 and 0 and of 4 and 3,
    then a move of 6 to 2, each taken (a step to an equal cost is kept).  Keeping only cheaper steps,
    drawing only swaps or only moves (`< 0.5` made 0 or 1), or moving the other way returned another."""
    strassen = bilinear.load("strassen").main
    assert _priced(strassen, tries=1, steps=4)[1] == derive_inplace(strassen, [6, 1, 5, 2, 3, 0, 4])


THREE = "algorithm three <1,3,1;3>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  M3 = A13 * B31\n  C11 = M1 + M2 + M3\n"


def test_where_tries_cover_every_order_each_is_priced_once_in_turn_and_no_step_follows():
    """Three products and six tries: the six orders in permutation order, then nothing (every_order
    dropped drew shuffles and steps instead, which priced the orders in another sequence)."""
    three = program_from_text(THREE).main
    priced = []
    inplace_schedule(three, lambda schedule: priced.append(schedule) or 0, tries=6, steps=256)
    assert priced == [derive_inplace(three, list(order)) for order in itertools.permutations(range(3))]


def test_no_tries_and_negative_steps_are_refused_with_both_values():
    """`tries < 1` made `< 0` took no tries; the message names the bounds and the values given."""
    strassen = bilinear.load("strassen").main
    for tries, steps in ((0, 5), (1, -1)):
        with pytest.raises(ValueError) as raised:
            inplace_schedule(strassen, lambda schedule: 0, tries=tries, steps=steps)
        assert str(raised.value) == f"tries must be at least 1 and steps at least 0, not {tries} and {steps}"


def _with_zero_sum(letter: str):
    """A ⟨1,2,1⟩ algorithm built in Python whose third product reads a sum S of ``letter`` blocks set
    to zero (a file refuses it; Python does not): that product's factor expands to nothing."""
    sum_form = "A11 + A12" if letter == "A" else "B11 + B21"
    factors = "S * B11" if letter == "A" else "A11 * S"
    algorithm = program_from_text(f"algorithm z <1,2,1;3>:\n  S = {sum_form}\n  M1 = A11 * B11\n  M2 = A12 * B21\n"
                                  f"  M3 = {factors}\n  C11 = M1 + M2 + M3\n").main
    return dataclasses.replace(algorithm, sums=(dataclasses.replace(algorithm.sums[0], form=Form()),))


@pytest.mark.parametrize("letter", ["A", "B"])
def test_a_product_whose_factor_expands_to_zero_is_not_computed(letter):
    """Dropping `u.terms` or `v.terms` from the products kept made it a third product, with no block to
    form it in."""
    algorithm = _with_zero_sum(letter)
    assert product_count(algorithm) == 2
    assert [str(s) for stage in derive_inplace(algorithm).stages for s in stage.statements] == [
        "A11 * B11 -> +C11", "A12 * B21 -> +C11"]


def test_a_block_holding_a_multiple_of_a_factor_is_read_as_it_is():
    """2·A11 is A11 at scale 1/2: read from A11 untouched, the scale in the target (the reciprocal scale
    failed its own check, and A11 was set to itself first)."""
    twice = program_from_text("algorithm twice <1,1,1;1>:\n  M1 = (2*A11) * B11\n  C11 = 1/2*M1\n").main
    assert [str(s) for stage in derive_inplace(twice).stages for s in stage.statements] == ["A11 * B11 -> +C11"]


def test_restoring_takes_the_lowest_block_of_equally_short_ways_back_first():
    """A11 and A12 each hold A13 added: each comes back in one two-term statement, A11's first (the
    highest index first put A12's first)."""
    contents = _Blocks(("A11", "A12", "A13"))
    for target in (0, 1):
        contents.replace(target, {target: Fraction(1), 2: Fraction(1)})
    assert [str(statement) for statement in _restore(contents)] == ["A11 -= A13", "A12 -= A13"]
    assert contents.changed() == []


def test_where_no_block_comes_back_directly_the_lowest_changed_one_is_subtracted_from():
    """A0..A3 after A3 += A1, A2 += A1, A1 -= A3, A1 -= A2, A2 += A1: no changed block's original needs
    its own content, so the first (A1) is subtracted from the lowest changed block its original needs
    (A2; the highest, A3, gave four other statements)."""
    contents = _Blocks(("A0", "A1", "A2", "A3"))
    for target, other, sign in ((3, 1, 1), (2, 1, 1), (1, 3, -1), (1, 2, -1), (2, 1, 1)):
        contents.replace(target, {target: Fraction(1), other: Fraction(sign)})
    assert [str(statement) for statement in _restore(contents)] == ["A2 -= A1", "A1 += A2 + A3", "A2 -= A1", "A3 -= A1"]
    assert contents.changed() == []


# ---- basis.py: the changes of basis single_target writes ---------------------------------------------


def _stages(schedule, prefix: str) -> list[tuple[str, bool, bool, list[str]]]:
    """Each stage of ``schedule`` whose name starts with ``prefix``: name, ordered, whether it keeps a
    span, and its statements as written."""
    return [(stage.name, stage.ordered, stage.span is not None, [str(s) for s in stage.statements])
            for stage in schedule.stages if stage.name.startswith(prefix)]


def test_msmes_first_product_stage_becomes_two_phases_between_three_changes_of_basis():
    """products1's four target directions, of rank 3, in two phases: the exact row operations (the
    completion chosen, Gauss-Jordan's order and zero-pivot repair, applied inverses in reverse), the
    stage names (`.basisN`, `.N`, `.restore`), ordered changes and products that keep the stage's span."""
    targeted = single_target(bilinear.load("msmes").main)
    assert _stages(targeted, "products1") == [
        ("products1.basis1", True, False, ["C21 += C22", "C11 += C22", "C22 = -C22", "C22 += C21", "C11 -= C21",
                                           "C21 -= C22", "C21 -= C12", "C22 += C11", "C21 -= C11", "C11 = -C11",
                                           "C11 -= C21"]),
        ("products1.1", False, True, ["A21 * B11 -> +C11", "A11 * B12 -> +C12", "A22 * B21 -> +C22"]),
        ("products1.basis2", True, False, ["C21 += C22", "C11 += C22", "C22 += C21", "C11 += C21", "C21 -= C22",
                                           "C22 += 2*C12", "C21 -= C12", "C11 += C12", "C22 -= C11", "C21 += C11",
                                           "C11 -= C21"]),
        ("products1.2", False, True, ["A12 * B22 -> +C12"]),
        ("products1.restore", True, False, ["C11 -= C12"])]
    assert _stages(targeted, "products2") == [
        ("products2.basis1", True, False, ["C22 -= C11"]),
        ("products2.1", False, True, ["A11 * B11 -> +C11", "A21 * B12 -> +C22"]),
        ("products2.basis2", True, False, ["C22 += C11"]),
        ("products2.2", False, True, ["A12 * B21 -> +C11"])]


def test_a_product_parallel_to_its_phases_direction_adds_at_its_scale():
    """−2·(C11 + C12) shares the direction C11 + C12, held in C12: it adds −2·M there (the scale dropped
    added M, and only a scheme with such a pair, none shipped, showed it)."""
    products = (Multiply(Form.symbol("A11"), Form.symbol("B11"), Form.of({"C11": 1, "C12": 1})),
                Multiply(Form.symbol("A12"), Form.symbol("B21"), Form.of({"C11": -2, "C12": -2})))
    schedule = Schedule("s", "x", frozenset({"accumulate"}), (), (Stage("p", products),))
    assert _stages(single_target(schedule), "p") == [
        ("p.basis1", True, False, ["C11 -= C12"]), ("p.1", False, False, ["A11 * B11 -> +C12", "A12 * B21 -> -2*C12"]),
        ("p.restore", True, False, ["C11 += C12"])]


def test_inverse_and_rank_of_the_smallest_matrices():
    """No rows: the empty inverse (not None, singular) and rank 0, also for an empty row; one entry:
    its reciprocal, or None for 0; a singular 2×2 has no inverse and rank 1."""
    one, two, zero = Fraction(1), Fraction(2), Fraction(0)
    assert (inverse([]), rank([]), rank([[]])) == ([], 0, 0)
    assert (inverse([[two]]), inverse([[zero]])) == ([[Fraction(1, 2)]], None)
    assert (inverse([[one, two], [two, 2 * two]]), rank([[one, two], [two, 2 * two]])) == (None, 1)


def test_matmul_takes_a_shortcut_for_the_identity_only():
    """[[1, 1], [1, 1]] has ones on its diagonal but is no identity (a test that every row has no other
    entry made `any` returned the right factor unchanged)."""
    ones, diagonal = [[Fraction(1)] * 2] * 2, [[Fraction(2), Fraction(0)], [Fraction(0), Fraction(3)]]
    assert _matmul(ones, diagonal) == [[2, 3], [2, 3]] and _matmul(diagonal, ones) == [[2, 2], [3, 3]]


def _operations(*rows: list[int]) -> list[str]:
    """The updates row_operations writes to apply the integer matrix ``rows`` to buffers C0, C1, ..."""
    matrix = [[Fraction(x) for x in row] for row in rows]
    return [str(update) for update in row_operations(tuple(f"C{i}" for i in range(len(rows))), matrix)]


def test_row_operations_scale_repair_zero_pivots_and_apply_the_inverses_in_reverse():
    """A scaling is undone by its reciprocal (`1 / own` and `1 / work[col][col]` mutated wrote 1/2·C0);
    a swap repairs its zero pivot by adding the next row with it, then undoes it all in reverse."""
    assert _operations([2, 0], [0, 1]) == ["C0 = 2*C0"]
    assert _operations([1, 1], [0, 1]) == ["C0 += C1"]
    assert _operations([0, 1], [1, 0]) == ["C0 += C1", "C1 = -C1", "C1 += C0", "C0 -= C1"]
    assert _operations([0, 1, 0], [0, 0, 1], [1, 0, 0]) == [
        "C1 -= C2", "C0 += C2", "C2 = -C2", "C2 -= C1", "C0 += C1", "C1 = -C1", "C1 -= C2", "C2 += C0", "C0 -= C2"]


def test_a_change_of_basis_that_only_scales_a_block_is_a_stage():
    """−C0 alone changes row 0 by its value, not its columns: still a stage (`matrix[i][i] != 1` dropped
    found nothing changed), and the identity is none."""
    negate = [[Fraction(-1), Fraction(0)], [Fraction(0), Fraction(1)]]
    stage = _transform_stage("p.basis1", negate, ["C0", "C1"])
    assert (stage.name, stage.ordered, [str(s) for s in stage.statements]) == ("p.basis1", True, ["C0 = -C0"])
    assert _transform_stage("p.basis1", [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]], ["C0", "C1"]) is None


def _product(index: int, **targets: int) -> Multiply:
    """A1<index> * B11 adding into ``targets`` (block: coefficient)."""
    return Multiply(Form.symbol(f"A1{index}"), Form.symbol("B11"), Form.of(targets))


def test_split_phases_keeps_independent_directions_together_and_parallel_ones_as_scales():
    """2·C11 and C12 share a phase; C11 + C12 depends on them (an echelon row not scaled to 1 at its pivot
    found it independent) so starts a second; −2·(C11 + C12) and C11 join theirs at scales −2 and 1/2.
    The second phase's one direction is held in C12, the last block with its value (not C11)."""
    statements = (_product(1, C11=2), _product(2, C12=1), _product(3, C11=1, C12=1), _product(4, C11=-2, C12=-2),
                  _product(5, C11=1))
    phases = split_phases(statements)
    members = [[(statements.index(s), i, scale) for s, i, scale in phase.members] for phase in phases]
    assert list(zip([phase.directions for phase in phases], members)) == [
        ([{"C11": 2}, {"C12": 1}], [(0, 0, 1), (1, 1, 1), (4, 0, Fraction(1, 2))]),
        ([{"C11": 1, "C12": 1}], [(2, 0, 1), (3, 0, -2)])]
    assert _basis(phases[1])[3] == [1]


def test_a_search_that_cannot_reach_its_bound_keeps_the_written_split():
    """Five directions in the plane of C1 and C2 need three phases, above the bound ⌈7 / 4⌉ = 2: no
    shuffled order does better than the written one, which is kept (`<=` took the last shuffled split
    of three phases)."""
    targets = ({"C1": 1}, {"C2": 1}, {"C1": 1, "C2": 1}, {"C1": 1, "C2": -1}, {"C1": 1, "C2": 2}, {"C3": 1}, {"C4": 1})
    phases = split_phases(tuple(_product(1, **target) for target in targets))
    written = ((0, 1, 5, 6), (2, 3), (4,))
    assert [phase.directions for phase in phases] == [[targets[i] for i in phase] for phase in written]


def test_the_bound_counts_each_direction_once_however_many_products_share_it():
    """C1 + C3 comes three times (twice doubled): five directions of rank 3, bound 2, which shuffling
    reaches from the written 3.  Counting products parallel to the first instead of the others'
    directions (`is None`) made the bound 3 and kept the written split."""
    targets = ({"C1": 1, "C3": 1}, {"C1": 1}, {"C1": 1, "C2": 2, "C3": 1}, {"C2": -1, "C3": -1}, {"C1": 2, "C3": 2},
               {"C1": 1, "C2": 1, "C3": 2}, {"C1": 2, "C2": -1, "C3": 1}, {"C1": 2, "C3": 2})
    assert len(split_phases(tuple(_product(1, **target) for target in targets))) == 2


def _phase(*directions: dict[str, int]) -> _Phase:
    """A phase holding ``directions`` (independent), one product each."""
    phase = _Phase()
    assert all(phase.place(Multiply(Form.symbol("A11"), Form.symbol("B11"), Form.of(d))) for d in directions)
    return phase


def test_the_echelon_completion_takes_first_rows_after_elimination_or_the_largest():
    """The unit vectors left over once each column's pivot is taken: its first nonzero row after the
    columns before are eliminated (not its last; eliminating each later column, not the column itself,
    by other/column at the pivot), or with ``largest`` its largest entry (3 at row 1, not row 0)."""
    half = Fraction(1, 2)
    columns = {"eliminated": [[1, 1, 0], [1, 1, 1]], "scaled": [[2, 1, 0], [1, half, 1]],
               "largest": [[1, 3, 0], [0, 1, 1]]}
    exact = {name: [[Fraction(x) for x in column] for column in value] for name, value in columns.items()}
    assert [_echelon_completion(exact[name], 3) for name in columns] == [(1,), (1,), (2,)]
    assert _echelon_completion(exact["largest"], 3, largest=True) == (0,)


def test_a_phase_past_the_searched_completions_takes_the_better_conditioned_echelon_completion():
    """Six directions P2i + 100·P2i+1 over twelve blocks (924 completions, past 512): the first-row
    completion (pivots at the even blocks) has condition ~10⁴, past the limit, so the largest-entry one
    is tried too and taken (pivots at the odd blocks)."""
    phase = _phase(*({f"P{2 * i:02}": 1, f"P{2 * i + 1:02}": 100} for i in range(6)))
    assert _basis(phase)[3] == [1, 3, 5, 7, 9, 11]


def test_a_small_phase_searches_its_completions_rather_than_taking_the_echelon_one():
    """2·C1 + C3 and −(C1 + C2 + C3): the searched completion holds them in C2 and C3; the echelon one
    (what `comb(...) > 0` took) in C1 and C2."""
    assert _basis(_phase({"C1": 2, "C3": 1}, {"C1": -1, "C2": -1, "C3": -1}))[3] == [1, 2]


def test_a_completion_within_the_condition_limit_is_chosen_by_its_inverses_denominators():
    """C1 + 2·C2 held in C2 needs 1/2 in Q⁻¹, in C1 only whole numbers: both are within the condition
    limit, so the denominators choose C1 (ignoring them took the first candidate, C2)."""
    assert _basis(_phase({"C1": 1, "C2": 2}))[3] == [0]


def test_the_condition_number_scales_each_direction_to_unit_length():
    """C1 + C2 beside the unit vector e2: 1 + √2 once scaled to unit length (2.618 unscaled); a direction
    whose largest entry is 0 (−C1) is scaled by its largest magnitude, not divided by zero."""
    assert _condition([[Fraction(1), Fraction(1)]], (1,), 2) == pytest.approx(1 + math.sqrt(2), rel=1e-12)
    assert _condition([[Fraction(-1), Fraction(0)]], (1,), 2) == pytest.approx(1.0, rel=1e-12)
