"""The optimizer's side rewrites pinned where the rest of the suite let a changed line pass: a
source-mutation audit of bilinear/optimize_sides.py, bilinear/optimize_products.py and
bilinear/optimize_kernel.py (optimize_butterfly.py was not reached in the time given).  The audit ran
out of time: the counts are partial, against tests/test_derive.py -k "kernel or borrow" and
test_optimize_products/_reuse_mutations/_passes_mutations.  optimize_kernel.py: 112 mutants, 81 killed by
the suite; of the first 16 survivors 9 are killed here, 2 equivalent (deleting the ``Row`` alias, only
used in annotations under ``from __future__ import annotations``; ``random() < 0.5`` as ``<=``), the rest
(and 15 later survivors) not yet judged.  optimize_sides.py, audited again in session 86 with another tool
(annotations left out): 74 mutants, 63 killed by the suite (2 by hanging) and the tests here, 5 more by the
tests of ``borrowed`` and ``in_use`` here (a dead product dropped before the ranks are compared, three
Nones, the lent output side over the borrower's product names with a sum prefix free of every product
name, a dead product's factors left out); 5 equivalent (the shape and rank refusal weakened three ways: the
sides compared after it refuse the same programs; ``frozen`` dropped; ``seeded_terms``' default 0 as 1,
both far below the size at which optimize warns), and SEEDED_PAIRS 20,000 as 20,001 not pinned (a tuning
limit, no test builds a side of 20,000 pairs).  optimize_products.py: 128 of 161 mutants run, 89 killed, 7
timeouts, 32 survivors not yet rerun against this file.  No bug was found in what was judged.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction as F

import pytest
from helpers.programs import expand

import bilinear
from bilinear.frontend.loader import program_from_text
from bilinear.optimize_kernel import _through_is_cheaper, basis_and_combinations, kernel_split, reduce_past
from bilinear.optimize_products import product_factors, rescaled, said
from bilinear.optimize_sides import (REUSE_CELLS, Side, borrowed, free_prefix, in_use, overfull, renumbered, seeded_terms,
                                     sides, small, small_sides)
from bilinear.paths import algorithms_dir


def _winograd():
    return bilinear.load(algorithms_dir() / "winograd.bl").algorithm("winograd")


def _strassen():
    return bilinear.load(algorithms_dir() / "strassen.bl").algorithm("strassen")


class _Nudge:
    """A random.Random stand-in whose choice is always ``value``: the kernel split's nudge, fixed."""

    def __init__(self, value: int):
        self.value = value

    def choice(self, _options):
        return self.value


# ---- optimize_sides.py -------------------------------------------------------------------------------


def test_a_free_prefix_grows_only_past_names_of_the_sums_own_shape():
    """X1 and Xa2 are names a sum under X could take; Xab2 (two letters) and a bare X are not."""
    assert [free_prefix("X", taken) for taken in ({"X1"}, {"Xa2"}, {"Xab2"}, {"X"}, {"Y1"})] == ["X_", "X_", "X", "X", "X"]
    assert free_prefix("X", {"X1", "X_k3"}) == "X__"


def test_renumbering_names_the_sums_in_order_and_renames_their_uses():
    side = Side([("P", {"a": 1}), ("Q", {"P": 1, "b": F(2)})], [{"Q": 1, "P": 1, "c": 1}])
    assert renumbered(side, "Z") == Side([("Z1", {"a": 1}), ("Z2", {"Z1": 1, "b": F(2)})], [{"Z2": 1, "Z1": 1, "c": 1}])


def test_a_side_counts_the_additions_and_scalings_of_its_sums_and_its_forms():
    """P = a + 2b: one addition, one scaling; 3P + c: one of each; the form a: none."""
    side = Side([("P", {"a": 1, "b": F(2)})], [{"P": 3, "c": 1}, {"a": 1}])
    assert (side.additions, side.scalings) == (2, 2)


def test_small_is_taken_at_reuse_cells_and_refused_one_past():
    """64 forms over 64 inputs is 4,096 cells, the limit; a 65th input is past it."""
    assert REUSE_CELLS == 4096
    square = [{f"x{i}": 1 for i in range(64)}] * 64
    assert small(square) and not small([*square[:-1], {"x64": 1}])
    assert small_sides(_strassen()) == ["A", "B", "C"]


def test_overfull_means_more_targets_than_inputs():
    assert overfull([{"a": 1}, {"b": 1}, {"a": 1, "b": 1}])
    assert not overfull([{"a": 1}, {"a": 1, "b": 1}])


def test_seeded_terms_are_the_largest_sides_terms():
    """Strassen's sides each have 12 terms (7 factors over 4 blocks, 4 outputs over 7 products)."""
    assert seeded_terms(_strassen()) == 12


def _winograd_with_a_dead_product():
    """Winograd's program with P8 = A11·B11 added, which no output uses (rank 8 as written, 7 live)."""
    text = (algorithms_dir() / "winograd.bl").read_text()
    text = text.replace("<2,2,2;7>", "<2,2,2;8>").replace("  P7 = S3 * T3\n", "  P7 = S3 * T3\n  P8 = A11 * B11\n")
    return program_from_text(text, "dead.bl").algorithm("winograd")


def test_a_program_with_a_product_no_output_uses_lends_its_sides():
    """Winograd and Winograd with a dead P8 compute the same sides once P8 is dropped, both ways round;
    compared as written, their ranks (7 and 8) differ and neither lent anything."""
    winograd, dead = _winograd(), _winograd_with_a_dead_product()
    assert all(side is not None for side in borrowed(winograd, dead))
    assert all(side is not None for side in borrowed(dead, winograd))


def test_a_program_of_another_shape_or_rank_lends_three_nones():
    """Three Nones (the callers unpack them), not one None: grey234 is another shape, naive2x2 another rank."""
    winograd = _winograd()
    naive = bilinear.load(algorithms_dir() / "naive2x2.bl").algorithm("naive2x2")
    grey = bilinear.load(algorithms_dir() / "grey234.bl").algorithm("grey234")
    assert borrowed(winograd, naive) == borrowed(winograd, grey) == (None, None, None)


def _winograd_renamed(letter: str):
    """Winograd with its products named ``letter``1..7 instead of P1..P7."""
    text = re.sub(r"\bP(\d)\b", rf"{letter}\1", (algorithms_dir() / "winograd.bl").read_text())
    return program_from_text(text, f"{letter}.bl").algorithm("winograd")


@pytest.mark.parametrize("lender", ["P", "Z"])
def test_a_lent_output_side_computes_the_borrowers_outputs_over_its_products(lender):
    """Winograd with products M1..M7 borrows the output side (U2 = P1 + P6, ...) of Winograd with products
    P1..P7, or Z1..Z7: expanded, the lent side is the borrower's outputs over M1..M7.  Left over P1..P7, it
    named products the borrower does not have; with its sums renumbered Z1.. (a prefix free of the names
    both programs share, not of all their product names), a use of sum Z1 was renamed to product M1."""
    borrower = _winograd_renamed("M")
    _, _, outputs = borrowed(borrower, _winograd_renamed(lender))
    definitions = dict(outputs.sums)
    assert [expand(form, definitions) for form in outputs.forms] == sides(borrower)[2]


def test_in_use_drops_the_factors_of_a_product_no_output_uses():
    """The dead P8's factors A11 and B11 are never computed, so in_use leaves its forms empty on both
    factor sides (and counts no addition for them); the output side keeps every C block's form."""
    left, right, outputs = in_use(_winograd_with_a_dead_product())
    assert (left.forms[7], right.forms[7]) == ({}, {})
    assert left.forms[:7] == [product.left.as_dict() for product in _winograd().products]
    assert len(outputs.forms) == 4 and all(outputs.forms)


# ---- optimize_products.py ----------------------------------------------------------------------------


def test_a_factor_moved_between_the_sides_of_one_product_is_moved_back():
    """(2a)·(c/2) with weight 1: α = 1/2, β = 2 leave a·c."""
    assert product_factors([{"a": F(2)}], [{"c": F(1, 2)}], [{"M": F(1)}], ["M"]) == [(F(1, 2), F(2))]


def test_a_factor_moved_onto_the_weights_is_moved_back_from_every_output():
    """(2a)·c with weight 1/2 in both outputs using it: α = 1/2 leaves a·c with weight 1."""
    outputs = [{"M": F(1, 2)}, {"M": F(1, 2), "N": F(1)}]
    assert product_factors([{"a": F(2)}], [{"c": F(1)}], outputs, ["M"]) == [(F(1, 2), F(1))]


def test_a_rescaling_that_brings_a_new_magnitude_is_not_taken():
    """(2a + b)·c: halving would trade 2 for 1/2 on b and on the weight: no step is taken."""
    assert product_factors([{"a": F(2), "b": F(1)}], [{"c": F(1)}], [{"M": F(1)}], ["M"]) == [(F(1), F(1))]


def test_rescaled_divides_the_products_weight_by_alpha_beta_and_leaves_other_terms():
    assert rescaled([{"a": F(1)}], [{"c": F(1)}], [{"M": F(1), "N": F(3)}], ["M"], [(F(2), F(3))]) == (
        [{"a": F(2)}], [{"c": F(3)}], [{"M": F(1, 6), "N": F(3)}])


def test_the_note_says_each_rescaled_factor_and_not_the_unchanged_ones():
    factors = {"M1": (F(2), F(1, 2)), "M2": (F(2), F(1))}
    assert said(factors) == "M1 (left factor ×2, right factor ×1/2), M2 (left factor ×2, weights ×1/2)"


# ---- optimize_kernel.py ------------------------------------------------------------------------------


def test_reducing_past_a_row_takes_its_multiple_off_and_records_it():
    rows = [("a", {"a": F(1), "b": F(1)}, {0: F(1)})]
    assert reduce_past(rows, {"a": F(2), "c": F(1)}) == ({"c": F(1), "b": F(-2)}, {0: F(2)})
    assert reduce_past(rows, {"a": F(2), "b": F(2)}) == ({}, {0: F(2)})


def test_a_dependent_target_is_written_over_the_basis_with_its_exact_coefficients():
    """a + b + 3c is (2a + 2b)/2 + 3c; taken the other way round, 2a + 2b is 2(a + b + 3c) - 6c."""
    targets = [{"a": F(2), "b": F(2)}, {"c": F(1)}, {"a": F(1), "b": F(1), "c": F(3)}]
    assert basis_and_combinations(targets, [0, 1, 2]) == ([0, 1], {2: {0: F(1, 2), 1: F(3)}})
    assert basis_and_combinations(targets, [2, 1, 0]) == ([2, 1], {0: {2: F(2), 1: F(-6)}})


def test_the_kernel_split_names_basis_sums_by_target_and_writes_the_dependent_over_them():
    """Seed 0: a+b+c and d+e+f become Kk1 and Kk2 (k, then the target's number), the third Kk2 + Kk1."""
    targets = [{"a": F(1), "b": F(1), "c": F(1)}, {"d": F(1), "e": F(1), "f": F(1)},
               {"a": F(1), "b": F(1), "c": F(1), "d": F(1), "e": F(1), "f": F(1)}]
    sums, forms = kernel_split(targets, "K", random.Random(0))
    assert sums == [("Kk1", targets[0]), ("Kk2", targets[1])]
    assert forms == [{"Kk1": 1}, {"Kk2": 1}, {"Kk2": 1, "Kk1": 1}]


def test_a_dependent_target_goes_through_the_basis_only_when_shorter_after_the_nudge():
    """Three terms direct, two through the basis: through unless the nudge adds one."""
    target, combination = {"a": 1, "b": 1, "c": 1}, {0: 1, 1: 1}
    assert [_through_is_cheaper(target, combination, _Nudge(n)) for n in (0, 1, -1)] == [True, False, True]
