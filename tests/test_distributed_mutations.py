"""The distributed planner's rules pinned where the rest of the suite let a changed line pass: a
source-mutation audit of distributed/plan.py, layout.py and steps.py (session 80).

Each test states one rule of the planner on a case small enough to follow by hand; the figures are
derived in the docstrings, not copied from a run.  Nothing here needs MPI or a GPU.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from bilinear.distributed.comm import DistributedError
from bilinear.distributed.layout import global_shape
from bilinear.distributed.plan import Task, assign, make_plan, positive_float
from bilinear.distributed.steps import (
    check_in_range,
    decomposition_for,
    default_steps,
    steps_within,
)
from bilinear.frontend import program_from_text
from bilinear.lower.decompose import Decomposition, GlobalProduct, classical
from bilinear.lower.levels import CoefficientOutOfRange

ONE = "algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n"  # one product a step: only MAX_STEPS bounds its steps


def _ranks_products(tasks: tuple[Task, ...], rank: int) -> tuple[int, ...]:
    return tuple(t.product for t in tasks if t.rank == rank)


# --- plan.py: the Plan's own checks ---------------------------------------------------------------


@pytest.mark.parametrize("field, value", [("inputs", "Root"), ("output", "block")])
def test_a_plan_refuses_a_layout_it_does_not_know(field, value):
    """make_plan builds a Plan directly: an unknown layout must be refused there, not only by compile."""
    with pytest.raises(ValueError, match=f"^{field} must be one of "):
        make_plan(classical(1, 1, 2), (4, 4, 4), 2, **{field: value})


def test_task_dims_leave_out_local_products_with_nothing_to_multiply():
    """classical<2,1,2> on one rank: at 4x3x1 the core is 4x3x0 (N = 1 is cut to a multiple of 2), so
    each block is 2x3x0: the products have rows and inner size but no columns, and are left out.  At
    4x3x4 the block is 2x3x2 and one band covers its 2 rows."""
    assert make_plan(classical(2, 1, 2), (4, 3, 1), 1).task_dims() == set()
    assert make_plan(classical(2, 1, 2), (4, 3, 4), 1).task_dims() == {(2, 3, 2)}


# --- plan.py: weights ----------------------------------------------------------------------------------


def test_a_bool_is_not_a_weight():
    """bool is a numbers.Real (True == 1): weights=[True, True] would plan as [1, 1]."""
    assert not positive_float(True)
    with pytest.raises(ValueError, match=re.escape("need 2 positive weights, not [True, True]")):
        assign(7, 2, 2, [True, True])


@pytest.mark.parametrize("weights", [[1.0], [1.0, 1.0, 1.0]])
def test_weights_for_another_rank_count_are_refused(weights):
    """One weight per rank: one weight for 2 ranks had been an IndexError, three had given a third
    rank (rank 2 of 2) some of the bands."""
    with pytest.raises(ValueError, match=re.escape(f"need 2 positive weights, not {weights}")):
        assign(7, 2, 2, weights)


def test_weights_given_once_or_unhashable_are_read_once_and_refused_by_name():
    """make_plan read weights twice (for its default bands, then to assign): a generator's were used up
    by the first read and the second named an empty list; a list of lists was a TypeError (unhashable)."""
    seven = classical(1, 7, 1)
    plan = make_plan(seven, (8, 8, 8), 2, weights=(w for w in (1.0, 3.0)))
    assert plan.bands == 16 and {task.rank for task in plan.tasks} == {0, 1}
    with pytest.raises(ValueError, match=re.escape("need 2 positive weights, not [[1.0], [2.0]]")):
        make_plan(seven, (8, 8, 8), 2, weights=[[1.0], [2.0]])


def test_weights_many_orders_of_magnitude_apart_are_proportions_too():
    """Weights 1e-300 and 1e300: rank 0's share, 1e-600 of the whole, is 0 bands of the 7 x 4, so rank 1
    takes all 7 products whole.  Scaled by the smallest weight instead of the largest, rank 1's
    share would be 1e600: past the floats (inf, then NaN quotas)."""
    assert assign(7, 2, 4, [1e-300, 1e300]) == tuple(Task(1, product, (0, 4)) for product in range(7))


def test_the_units_left_over_go_to_the_largest_remainders():
    """4 bands of one product by weights 2:3:5 are exactly 0.8, 1.2 and 2.0 bands; floors 0, 1, 2 leave
    one band, which goes to rank 0 (remainder 0.8, the largest): shares 1, 1, 2.  Handed out band by
    band in rank order: rank 0 band 0, rank 1 band 1, rank 2 bands 2 and 3."""
    assert assign(1, 3, 4, [2.0, 3.0, 5.0]) == (Task(0, 0, (0, 1)), Task(1, 0, (1, 2)), Task(2, 0, (2, 4)))


def test_equal_remainders_give_the_unit_left_over_to_the_lowest_rank():
    """4 whole products (1 band each) over 3 equal ranks: 4/3 each, floors 1, 1, 1, and the one left
    over goes to rank 0 (remainders equal, lowest rank first): rank 0 multiplies two products."""
    tasks = assign(4, 3, 1)
    assert [len(_ranks_products(tasks, rank)) for rank in range(3)] == [2, 1, 1]


def test_whole_products_go_to_the_lowest_rank_among_those_with_the_most_quota_left():
    """4 products over 2 equal ranks, quotas 2 and 2: product 0 to rank 0 (tie: the lower rank), then
    rank 1 has more left and takes product 1, then rank 0 product 2 and rank 1 product 3."""
    tasks = assign(4, 2, 1)
    assert _ranks_products(tasks, 0) == (0, 2) and _ranks_products(tasks, 1) == (1, 3)


def test_a_rank_whose_quota_is_one_products_bands_takes_that_product_whole():
    """2 products of 2 bands by weights 1:2:1: quotas 1, 2, 1 bands.  Rank 1's quota is exactly 2
    bands, so it takes product 0 whole; the others' quotas are under a product, so product 1 is cut
    into its two bands (rank 0 band 0, rank 2 band 1).  Rank 1 is not given two half products."""
    tasks = assign(2, 3, 2, [1.0, 2.0, 1.0])
    assert [t for t in tasks if t.rank == 1] == [Task(1, 0, (0, 2))]


def test_tasks_are_listed_by_rank_then_product_whatever_order_they_were_given_in():
    """In the case above product 0 is given first (whole, to rank 1) and product 1's bands after (to
    ranks 0 and 2); the plan lists them by rank, as the plan text shows each rank's work."""
    assert assign(2, 3, 2, [1.0, 2.0, 1.0]) == (Task(0, 1, (0, 1)), Task(1, 0, (0, 2)), Task(2, 1, (1, 2)))


def test_equal_weights_plan_the_bands_equal_ranks_get():
    """weights=[3, 3] are equal ranks: 7 products over 2 ranks take 2 // gcd(7 mod 2, 2) = 2 bands, as
    with no weights, not the 8 per rank of uneven weights."""
    seven = classical(1, 7, 1)
    assert make_plan(seven, (8, 8, 8), 2, weights=[3.0, 3.0]).bands == make_plan(seven, (8, 8, 8), 2).bands == 2


def test_uneven_weights_plan_eight_bands_per_rank():
    """make_plan's default with uneven weights: 8 bands per rank (16 on 2 ranks, 24 on 3)."""
    seven = classical(1, 7, 1)
    assert make_plan(seven, (8, 8, 8), 2, weights=[1.0, 3.0]).bands == 16
    assert make_plan(seven, (8, 8, 8), 3, weights=[1.0, 1.0, 2.0]).bands == 24


# --- layout.py ---------------------------------------------------------------------------------------


def test_blocks_of_the_2d_layout_make_their_global_shape():
    """A 5x7 matrix on 4 ranks (a 2x2 grid): rows split 0:2 and 2:5, columns 0:3 and 3:7, so ranks 0..3
    hold 2x3, 2x4, 3x3 and 3x4 blocks."""
    assert global_shape([(2, 3), (2, 4), (3, 3), (3, 4)], 4) == (5, 7)


def test_blocks_that_sum_to_a_shape_but_are_not_its_layout_are_refused():
    """Ranks 0 and 2 swapped: their rows still sum to 5 and the columns to 7, but a 5x7 matrix gives
    rank 0 the 2-row block and rank 2 the 3-row one."""
    blocks = [(3, 3), (2, 4), (2, 3), (3, 4)]
    with pytest.raises(DistributedError, match=re.escape(
            f"the ranks' blocks {blocks} are not the 2x2 2D block layout of a 5x7 matrix, which has blocks "
            "[(2, 3), (2, 4), (3, 3), (3, 4)]")):
        global_shape(blocks, 4)


# --- steps.py ----------------------------------------------------------------------------------------


def test_default_steps_reach_exactly_the_most_global_products():
    """The bound is inclusive: 2^12 = 4096 products for 4096 ranks of a two-product scheme (steps
    1..12, each doubling), and 64^2 = 4096 for 65 ranks of a 64-product one."""
    assert default_steps(2, 4096) == 12
    assert default_steps(64, 65) == 2


def test_a_plan_takes_at_most_twelve_steps_of_any_scheme():
    """2^12 = 4096 is the most two-product steps within 4096 products, so 12 steps is the cap; a
    one-product scheme never passes 4096 products and is stopped by the cap alone: 12 steps are
    planned, 13 refused."""
    one = program_from_text(ONE, "one.bl")
    assert steps_within(2) == steps_within(1) == 12
    assert decomposition_for(one, 2, "bfs", 12).rank == 1
    with pytest.raises(ValueError, match=re.escape(
            "at most 12 breadth-first steps of one are planned, not 13: a plan is built with at most 12 steps")):
        decomposition_for(one, 2, "bfs", 13)


def test_steps_true_is_refused_not_taken_as_one():
    """True is a numbers.Integral equal to 1; a bool is no step count (NumPy's bool_ is refused too)."""
    one = program_from_text(ONE, "one.bl")
    with pytest.raises(ValueError, match=r"^steps must be a whole number of at least 1 .* not True$"):
        decomposition_for(one, 2, "bfs", True)


def test_a_reduction_weight_past_float32_is_refused():
    """A product that adds into C with weight 2^130 (about 1.4e39, past float32's 3.4e38; its u and v
    are 1): the reduction multiplies by it, so float32 cannot run it, and float64 can."""
    one = (((0, 0), Fraction(1)),)
    big = Decomposition("big", 1, 1, 1, (GlobalProduct(one, one, (((0, 0), Fraction(2**130)),)),))
    check_in_range(big, "float64")
    with pytest.raises(CoefficientOutOfRange, match="big's global products multiply by a coefficient of about 1e39, "
                                                    "beyond the float32 range"):
        check_in_range(big, "float32")
