"""The exact proof of a distributed plan, the ranks' agreement on a call and the plan of a chain,
pinned where the rest of the suite let a changed line pass: a source-mutation audit of
distributed/check.py, agree.py and (in part) chain.py.

Each test states one rule on a case small enough to follow by hand: the proof's on classical<1,1,2>
(two products; 1 core row × 2 inner × 3 column pieces with the fringe's, so 6 classical terms) or on
1x1x1 decompositions whose coefficients put the sums near 2⁵³ and 2⁶³; the agreement's on the facts
two or four ranks would exchange, judged in this process; the chain's on plans of four matrices.
Nothing here needs MPI or a GPU.
"""

from __future__ import annotations

import dataclasses
import types
from fractions import Fraction

import numpy as np
import pytest
from conftest import ROOT

import bilinear.distributed as dist
from bilinear.distributed import check as proof
from bilinear.distributed.agree import facts, judge, same_blocks
from bilinear.distributed.chain import ChainModel, plan_chain
from bilinear.distributed.check import PlanCheck, verify_plan
from bilinear.distributed.comm import AgreedError
from bilinear.distributed.layout import block_shape
from bilinear.distributed.plan import FringeTask, Task, make_plan
from bilinear.lower.decompose import Decomposition, GlobalProduct, classical


def _pair():
    """classical<1,1,2> on 2 ranks at 4x4x4: M1 on rank 0, M2 on rank 1, band 0 of 1; fringe on rank 0."""
    return make_plan(classical(1, 1, 2), (4, 4, 4), 2)


def _with_tasks(plan, *tasks):
    return dataclasses.replace(plan, tasks=plan.tasks + tasks)


# --- check.py: the plan's structure ----------------------------------------------------------------


def _three():
    """classical<1,1,2> on 3 ranks in 4 bands: 3 ranks, 2 products, 4 bands, each count its own."""
    return make_plan(classical(1, 1, 2), (4, 4, 4), 3, bands=4)


@pytest.mark.parametrize("task, said", [
    (Task(3, 0, (0, 1)), "task Task(rank=3, product=0, bands=(0, 1)) names rank 3 of 3"),
    (Task(0, 2, (0, 1)), "task Task(rank=0, product=2, bands=(0, 1)) names product 2 of 2"),
    (Task(0, 0, (4, 4)), "task Task(rank=0, product=0, bands=(4, 4)) names bands outside 0..4"),
], ids=["rank", "product", "empty bands"])
def test_a_task_just_past_the_plan_is_a_structural_error(task, said):
    """Rank 3 of 3 ranks, product M3 of two, and the empty band range 4..4 of 4 bands are each one
    past what the plan holds: said as such, with nothing simulated (no band class, no term)."""
    check = verify_plan(_with_tasks(_three(), task))
    assert check == PlanCheck(False, (said,), 0, 0)


def test_a_fringe_task_on_a_rank_past_the_plan_is_a_structural_error():
    """The rows fringe moved to rank 3 of 3 is one past the ranks, not a plan computing it once."""
    plan = _three()
    moved = tuple(FringeTask(3, f.kind) if f.kind == "rows" else f for f in plan.fringe)
    check = verify_plan(dataclasses.replace(plan, fringe=moved))
    assert check.problems == ("fringe task FringeTask(rank=3, kind='rows') names rank 3 of 3",) and not check.ok


# --- check.py: bands and what a band's problem says ----------------------------------------------------


def test_a_band_no_rank_computes_says_no_product_and_every_missing_one():
    """With no task at all, band 0 holds nothing: its core terms A(0,0)·B(0,c) → C(0,c), c = 0, 1,
    are the 2 that differ (the fringe products still cover the other 4 of the 6)."""
    check = verify_plan(dataclasses.replace(_pair(), tasks=()))
    assert check.problems == ("band 0 of the core rows: the ranks compute no product; missing M1, M2: "
                              "2 of the tensor's terms differ from the classical product's",)
    assert (check.band_classes, check.terms) == (1, 6)


def test_bands_holding_one_multiset_in_another_order_are_one_class():
    """Band 0 gets M1 then M2, band 1 M2 then M1 (by task order): the same computation, simulated once."""
    plan = make_plan(classical(1, 1, 2), (4, 4, 4), 2, bands=2)
    shuffled = dataclasses.replace(plan, tasks=(Task(0, 0, (0, 1)), Task(0, 1, (0, 2)), Task(1, 0, (1, 2))))
    assert verify_plan(shuffled) == PlanCheck(True, (), 1, 6)


def test_each_band_class_counts_the_classical_terms_it_was_compared_with():
    """M2 once more on band 3 of 4: bands 0-2 and band 3 are two computations, each compared with
    the 6 classical terms (12 in all); band 3's doubled term A(0,0)·B(0,1) → C(0,1) is the one wrong."""
    check = verify_plan(_with_tasks(_three(), Task(2, 1, (3, 4))))
    assert check == PlanCheck(False, ("band 3 of the core rows: the ranks compute M1, M2×2: 1 of the tensor's terms "
                                      "differ from the classical product's",), 2, 12)


# --- check.py: exact sums ----------------------------------------------------------------------------------


def _one(u, v=1, w=1) -> GlobalProduct:
    """u·A11 times v·B11, added with weight w into C11."""
    return GlobalProduct((((0, 0), Fraction(u)),), (((0, 0), Fraction(v)),), (((0, 0), Fraction(w)),))


def test_terms_past_float64_are_summed_as_integers():
    """A11·B11 plus 2⁵⁵·A11·B11 less 2⁵⁵·A11·B11 is the classical product: every partial sum is below
    2⁶³ but not 2⁵³, so int64; in float64, 1 + 2⁵⁵ would round to 2⁵⁵ and the proof refuse it."""
    pair = Decomposition("pair", 1, 1, 1, (_one(1), _one(2**55), _one(-(2**55))))
    assert verify_plan(make_plan(pair, (4, 4, 4), 1)) == PlanCheck(True, (), 1, 4)


def test_a_coefficient_of_two_to_the_63_is_summed_as_a_python_integer():
    """2⁶³·A11·B11 alone: the bound 2⁶³ + 1 (the one classical term) is past int64, which cannot hold
    the coefficient itself (NumPy raises OverflowError): the one term that differs is said."""
    huge = Decomposition("huge", 1, 1, 1, (_one(2**63),))
    assert verify_plan(make_plan(huge, (4, 4, 4), 1)).problems == (
        "band 0 of the core rows: the ranks compute M1: 1 of the tensor's terms differ from the classical product's",)


def test_a_product_held_several_times_counts_each_copy_in_the_bound():
    """A11·B11 once, 2⁵¹·A11·B11 and −2⁵¹·A11·B11 four times each: the bound is 2⁵⁴ + 2, past
    float64's exact integers (counting each product once, 2⁵² + 2, it is not, and 1 + 4·2⁵¹ would
    round to 2⁵³, the classical term lost)."""
    plan = make_plan(Decomposition("copies", 1, 1, 1, (_one(1), _one(2**51), _one(-(2**51)))), (4, 4, 4), 1)
    held = (Task(0, 0, (0, 1)),) + (Task(0, 1, (0, 1)),) * 4 + (Task(0, 2, (0, 1)),) * 4
    assert verify_plan(dataclasses.replace(plan, tasks=held)) == PlanCheck(True, (), 1, 4)


def test_a_product_held_twice_at_half_weight_is_the_classical_product_term_by_term():
    """A11·B11 into C11/2, held twice, with 2⁶⁰·A11·B11 and its negation: past 2⁵³ the slices are
    summed term by term, where each copy must count too (once, C11 would get half the classical term)."""
    plan = make_plan(Decomposition("halves", 1, 1, 1, (_one(1, 1, Fraction(1, 2)), _one(2**60), _one(-(2**60)))),
                     (4, 4, 4), 1)
    held = (Task(0, 0, (0, 1)),) * 2 + (Task(0, 1, (0, 1)), Task(0, 2, (0, 1)))
    assert verify_plan(dataclasses.replace(plan, tasks=held)) == PlanCheck(True, (), 1, 4)


def test_a_difference_of_one_in_a_term_near_two_to_the_54_is_found():
    """d·A11·B11 into C11/d (d = 2¹⁸ + 1) is the classical product, d³ over the common denominator
    d, and (A11/d)·(B11/d) into C11/d adds 1 more: the bound counts the classical term's d³ too
    (2d³ + 1, past 2⁵³), so the 1 is not rounded away in float64."""
    d = 2**18 + 1
    plan = make_plan(Decomposition("tiny", 1, 1, 1, (_one(d, 1, Fraction(1, d)), _one(*[Fraction(1, d)] * 3))),
                     (4, 4, 4), 1)
    assert verify_plan(plan).problems == (
        "band 0 of the core rows: the ranks compute M1, M2: 1 of the tensor's terms differ from the classical "
        "product's",)


def test_the_slice_summed_at_once_is_within_the_limit_where_a_mode_gives_one(monkeypatch):
    """(A11 + A12)·B11 → C11 and A12·(B21 − B11) → C11 over 1×3 A, 3×2 B, 1×2 C pieces (the
    fringe's inner and column included): slices of A, B, C modes hold 12, 6 and 18 entries, and the
    C mode has the fewest terms to visit (2, against 3 and 3).  Within a limit of 6, the B mode's
    slices of 6 entries are taken, not the C mode's 18."""
    def terms(*pairs):
        return tuple((block, Fraction(c)) for block, c in pairs)

    products = (GlobalProduct(terms(((0, 0), 1), ((0, 1), 1)), terms(((0, 0), 1)), terms(((0, 0), 1))),
                GlobalProduct(terms(((0, 1), 1)), terms(((1, 0), 1), ((0, 0), -1)), terms(((0, 0), 1))))
    plan = make_plan(Decomposition("sums", 1, 2, 1, products), (4, 4, 4), 1)
    held, differences = [], proof._differences

    def spied(*args):
        for slab in differences(*args):
            held.append(slab.size)
            yield slab

    monkeypatch.setattr(proof, "SLAB_LIMIT", 6)
    monkeypatch.setattr(proof, "_differences", spied)
    assert verify_plan(plan).ok and set(held) == {6}


# --- agree.py: what the ranks' facts are judged by -------------------------------------------------------

A = np.ones((4, 4))
B = np.arange(16.0).reshape(4, 4)
LISTED = "A (4, 4), B (4, 4), float64, out {out}, alpha {alpha}, beta {beta}"


def _judged(everyone, inputs="replicated", output="replicated"):
    """judge's answer, or the problem it raised, its listing of the ranks cut off."""
    try:
        return judge(everyone, inputs, output, "float64")
    except AgreedError as error:
        return str(error).split(": rank 0: A")[0]


def test_the_refusal_lists_every_rank_with_its_alpha_and_beta_as_numbers():
    """Each rank's line shows alpha and beta as the numbers sent (their exact hex text read back):
    alpha 0.5, not the 0.3125 its decimal text read as hex would give; an alpha refused shows so."""
    with pytest.raises(AgreedError) as refused:
        judge([facts(A, B, None, 0.5, 0.0, {}), facts(A, B, None, 0.5, 2.0, {})], "replicated", "replicated", "float64")
    assert str(refused.value) == "the ranks were called with different alphas or betas: " + "; ".join(
        f"rank {r}: " + LISTED.format(out=None, alpha=0.5, beta=beta) for r, beta in enumerate((0.0, 2.0)))
    with pytest.raises(AgreedError) as refused:
        judge([facts(A, B, None, float("nan"), 0.0, {})] * 2, "replicated", "replicated", "float64")
    assert str(refused.value).endswith("; rank 1: " + LISTED.format(out=None, alpha="refused", beta=0.0))


OTHER = B.copy()
OTHER[0, 0] = -1.0  # B but for one entry


@pytest.mark.parametrize("rank_1, said", [
    (facts(A, B, B, 1.0, 0.0, {}), "out must not overlap A or B"),  # out is the B it reads
    (facts(A, OTHER, None, 1.0, 0.0, {}, blocks=True),  # each rank had multiplied its own B
     "the ranks were given different A or B (replicated inputs are the same matrices on every rank)"),
    (facts(A, np.ones((4, 5)), None, 1.0, 0.0, {}), "the ranks were called with different arguments"),
    (facts(A, None, None, 1.0, 0.0, {}), "a rank that must hold A and B was given None"),
    (facts(A, B, np.zeros((4, 4), np.float32), 1.0, 0.0, {}), "rank 1: out is float32 (4, 4), not float64 (4, 4)"),
], ids=["out is B", "another B", "B 4x5", "B None", "out float32"])
def test_a_mistake_about_b_or_out_on_rank_1_alone_is_said(rank_1, said):
    """Rank 0's call is right (A, B, no out); rank 1's differs in B or out only."""
    assert _judged([facts(A, B, None, 1.0, 0.0, {}, blocks=True), rank_1]) == said


def test_an_out_that_is_not_a_matrix_is_refused_as_such():
    """A list for out is said as one, before any check of out's shape against the layout."""
    assert _judged([facts(A, B, [[0.0]], 1.0, 0.0, {})] * 2) == (
        "A, B and out must be 2-D arrays on every rank that passes them")


def test_a_three_dimensional_array_or_one_without_strides_is_not_a_matrix():
    """A 4x4x1 array, and an object with a shape and dtype but no strides (as a torch tensor), are
    refused by every rank alike, not taken as matrices (NumPy's layout checks had raised on one rank)."""
    class Tensor:
        shape, dtype = (4, 4), np.dtype("float64")

    for odd in (np.ones((4, 4, 1)), Tensor()):
        assert _judged([facts(odd, B, None, 1.0, 0.0, {})] * 2) == (
            "A, B and out must be 2-D arrays on every rank that passes them")
    with pytest.raises(AgreedError) as refused:
        judge([facts(Tensor(), B, None, 1.0, 0.0, {})], "replicated", "replicated", "float64")
    assert str(refused.value).endswith(": rank 0: A not a matrix: Tensor, B (4, 4), None, out None, alpha 1.0, beta 0.0")


def test_an_out_without_numpys_writeable_flag_is_taken_as_writable():
    """CuPy's flags hold no ``writeable``: a device out (a stand-in here, apart from A and B) is not read-only."""
    class DeviceOut:
        shape, dtype, strides, size, itemsize = (4, 4), np.dtype("float64"), (32, 8), 16, 8
        data = types.SimpleNamespace(ptr=8)

    assert _judged([facts(A, B, DeviceOut(), 1.0, 0.0, {})] * 2) == (4, 4, 4, "float64")


def test_matrices_of_text_are_refused_by_their_dtype_not_raised_on_while_sampled():
    """complex('a') is a ValueError: the one-value test of an object matrix of text says no, and the
    dtype is what every rank refuses."""
    text = np.array([["a", "b"], ["c", "d"]], dtype=object)
    assert _judged([facts(text, text, None, 1.0, 0.0, {}, blocks=True)] * 2) == (
        "A and B are object but this product was compiled for float64")


def test_a_product_compiled_for_another_dtype_names_the_dtype_given():
    """float32 A and B for a float64 product; a product that names no dtype takes them."""
    single = A.astype(np.float32)
    assert _judged([facts(single, single, None, 1.0, 0.0, {})] * 2) == (
        "A and B are float32 but this product was compiled for float64")
    assert judge([facts(single, single, None, 1.0, 0.0, {})] * 2, "replicated", "replicated", None) == (
        4, 4, 4, "float32")


def test_an_option_that_differs_on_several_ranks_is_named_once():
    """Ranks 1 and 2 each differ from rank 0 in their weights: said once."""
    everyone = [facts(A, B, None, 1.0, 0.0, {"weights": w}) for w in (1, 2, 3)]
    assert _judged(everyone) == "the ranks hold products compiled differently: their weights differ"


def test_of_a_and_b_both_column_major_a_is_named():
    """The refusal names the first of the arrays that are not row-major."""
    scattered = np.asfortranarray(B)
    assert _judged([facts(scattered, scattered, None, 1.0, 0.0, {})] * 2) == (
        "rank 0: A is not a row-major matrix (C-contiguous, or row slices of one): pass np.ascontiguousarray(A) "
        "(cupy.ascontiguousarray on the GPU)")


def test_of_a_and_b_both_masked_a_is_named():
    """The refusal names the first of the masked arrays, with its own fix."""
    masked = np.ma.masked_array(B, mask=B > 7)
    assert _judged([facts(masked, masked, None, 1.0, 0.0, {})] * 2) == (
        "rank 0: A is a masked array, and bilinear multiplies plain matrices: pass A.filled(0) (masked entries "
        "as 0) or np.asarray(A) (its data as stored)")


def test_block2d_outs_are_each_ranks_own_block():
    """5x5 over a 2x2 grid of 4 ranks: the blocks are 2x2, 2x3, 3x2 and 3x3, each rank's out its own."""
    outs = [np.zeros(block_shape(rank, 4, 5, 5)) for rank in range(4)]
    whole = np.ones((5, 5))
    assert _judged([facts(whole, whole, out, 1.0, 1.0, {}) for out in outs], "replicated", "block2d") == (
        5, 5, 5, "float64")


def test_blocks_of_other_shapes_with_one_sample_are_not_alike():
    """A 33x33 and a 34x34 matrix are sampled at the same 17x17 entries (every second row and
    column): the same sample, but not the same blocks."""
    larger = np.arange(34 * 34.0).reshape(34, 34)
    smaller = larger[:33, :33].copy()
    assert not same_blocks([facts(m, m, None, 1.0, 0.0, {}, blocks=True) for m in (smaller, larger)])


def test_two_ranks_passing_the_same_varied_blocks_are_told_one_rank_never():
    """Alike blocks are said from two ranks on; a single rank has no other to be alike."""
    mine = facts(B, B, None, 1.0, 0.0, {}, blocks=True)
    assert same_blocks([mine, mine]) and not same_blocks([mine])


# --- chain.py: the plan of a chain, and what it multiplies with -------------------------------------------


def test_a_wave_with_a_product_for_every_rank_runs_side_by_side_whatever_the_model():
    """Two products on two ranks, at a speed-up of 1000 over every rank: side by side still (no rank idles)."""
    plan = plan_chain([(64, 64)] * 4, 2, ChainModel(speedup=1000.0))
    assert plan.describe().splitlines()[1] == (
        "  wave 1 (side by side): P1 = A1·A2 64x64x64 on rank 0, P2 = A3·A4 64x64x64 on rank 1")


def test_a_wave_gives_the_longest_product_first_and_lists_its_steps_in_node_order():
    """P2 (10·1000·1000) is the longer: it goes to rank 0 first, and P1 to rank 1; the wave lists P1 first."""
    dims = [10, 10, 10, 1000, 1000]
    assert plan_chain(list(zip(dims, dims[1:])), 2).describe().splitlines()[1] == (
        "  wave 1 (side by side): P1 = A1·A2 10x10x10 on rank 1, P2 = A3·A4 10x1000x1000 on rank 0")


def test_a_chain_may_hold_an_empty_dimension():
    """A 3x0 times a 0x5 matrix is a 3x5 zero matrix, planned as any product."""
    assert plan_chain([(3, 0), (0, 5)], 1).describe() == (
        "chain of 2 matrices: (A1 A2); predicted 0.0 ms\n  wave 1 (side by side): P1 = A1·A2 3x0x5 on rank 0")


def test_bracketings_whose_costs_differ_only_by_rounding_take_the_shallowest():
    """5x5·5x2·2x7·7x2: ((A1 A2) (A3 A4)) and (A1 (A2 (A3 A4))) both take 98 multiply-adds, their
    float sums apart in the last bits: equal, so the two waves win over three."""
    dims = [5, 5, 2, 7, 2]
    assert plan_chain(list(zip(dims, dims[1:])), 2).order == "((A1 A2) (A3 A4))"


def test_a_side_by_side_wave_takes_its_broadcast_too():
    """4096³ products: a side by side wave takes a product's flops at 50 TFLOP/s and the broadcast of
    its 4096² result at 100 GB/s; the last product, over every rank, its flops at a speed-up of 1.8."""
    flops = 2 * 4096**3 / 50e12
    assert plan_chain([(4096, 4096)] * 4, 2).predicted_seconds == pytest.approx(
        flops + 8 * 4096**2 / 100e9 + flops / 1.8, rel=1e-12)


@pytest.mark.parametrize("shapes, said", [
    ([(3, 3)], "a chain needs at least two matrices"),
    ([(2, 5), (4, 3)], "the chain's shapes do not fit: [(2, 5), (4, 3)]"),
], ids=["one matrix", "5 columns, 4 rows"])
def test_a_chain_that_is_no_chain_is_refused(shapes, said):
    with pytest.raises(ValueError) as refused:
        plan_chain(shapes, 1)
    assert str(refused.value) == said


def test_a_wave_whose_products_fail_on_a_rank_says_the_first_failure():
    """On one rank both products of the first wave are its own: each fails, and the first is said."""
    product = dist.compile(ROOT / "algorithms/winograd.bl", backend="numpy", levels=0)
    calls = []

    def fails(*args, **kwargs):
        calls.append(len(calls) + 1)
        raise RuntimeError(f"call {len(calls)}")

    product.local.product = fails
    with pytest.raises(AgreedError, match=r"^a product of the chain failed on rank 0: RuntimeError: call 1$"):
        dist.chain([np.ones((2, 2))] * 4, product)
    assert calls == [1, 2]


def test_a_chain_is_refused_by_each_matrix_its_product_cannot_take():
    """Every matrix float32 for a float64 product (matrix 0 is named, not taken as the dtype); an
    int64 one (it sorts after "float64"); a column-major array of CuPy's module (a NumPy stand-in)."""
    product = dist.compile(ROOT / "algorithms/winograd.bl", backend="numpy", levels=0)
    device = type("ndarray", (np.ndarray,), {"__module__": "cupy._core.core"})
    for matrices, said in [
        ([np.ones((4, 3), np.float32), np.ones((3, 2), np.float32)], "matrix 0 of the chain is float32, but the "),
        ([np.ones((4, 3)), np.ones((3, 2), np.int64)], "matrix 1 of the chain is int64, but the product was "),
        ([np.ones((4, 3)), np.asfortranarray(np.ones((3, 2))).view(device)],
         "matrix 1 of the chain is not row-major (C-contiguous, or row slices of one): pass cupy.ascontiguousarray"),
    ]:
        with pytest.raises(ValueError) as refused:
            dist.chain(matrices, product)
        assert str(refused.value).startswith(said)
    column = np.arange(3.0)[:, None]  # a column stride of 0, as the one-device product takes it
    assert np.array_equal(dist.chain([np.ones((4, 3)), column], product)[0], np.full((4, 1), 3.0))


def test_a_chain_under_an_in_place_local_schedule_leaves_its_matrices_as_they_were():
    """msmes writes into its inputs (and restores them only approximately): a rank's own product of
    a wave is the classical one, so the chain's matrices come back bit for bit."""
    product = dist.compile(ROOT / "algorithms/strassen.bl", backend="numpy", local="msmes", levels=1)
    matrices = [np.random.default_rng(seed).standard_normal((8, 8)) for seed in range(3)]
    kept = [matrix.copy() for matrix in matrices]
    result, _ = dist.chain(matrices, product)
    assert all(np.array_equal(matrix, copy) for matrix, copy in zip(matrices, kept))
    assert np.allclose(result, kept[0] @ kept[1] @ kept[2], rtol=1e-12, atol=1e-12)
