"""Global decompositions and breadth-first plans (lower/decompose.py, lower/breadth.py) pinned where the rest
of the suite let a changed line pass: a source-mutation audit of both modules.

The suite checks decompositions through whole distributed plans of square shipped schemes and breadth-first
levels through runs, a golden kernel and a few sizes, so much went unseen when changed: the refusals of a
product without C blocks and of a block on the grid's far edge (and their messages), the error growth of
no products, of one step and of a power (its ratios kept per step and multiplied), which name a composed
decomposition takes, the sorted order of every term list, and the Kronecker product of grids that are
not square.  Of breadth-first plans: the grid, leaf sizes and workspace of a grid that is not a cube, the
product cap at exactly its value, the kernel names and grids, the merge's terms per C block, the range
check of depth-first coefficients times the merge's (whose refusal no test reached), and the term cap at
exactly its value.  The audit found no bug in either module.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from conftest import ROOT

import bilinear
from bilinear.frontend import program_from_text
from bilinear.ir import Span
from bilinear.lower import breadth
from bilinear.lower.breadth import (BreadthFirst, _problem_forms, check_buildable, check_under, lower_breadth_first, power,
                                    render_breadth_first)
from bilinear.lower.decompose import (Decomposition, GlobalProduct, breadth_first, classical, compose, growth_ratio,
                                      one_step, tiles_2d)
from bilinear.lower.leaves import ProblemForm, ProblemNode, ProductStep
from bilinear.lower.levels import CoefficientOutOfRange
from bilinear.lower.options import TooLarge

ONE = Fraction(1)
BIG = "1" + "0" * 200  # 10^200: in float64's range, its square not
U, V, W = (((0, 0), ONE),), (((0, 0), ONE),), (((0, 0), ONE),)  # the one block of a 1x1x1 grid


def _algorithm(name: str):
    """A shipped scheme's algorithm."""
    return bilinear.load(name).algorithm(name)


def _algorithm_text(name: str) -> str:
    """A shipped scheme's source text."""
    return (ROOT / "algorithms" / f"{name}.bl").read_text()


def _classical_terms_missed(d: Decomposition) -> int:
    """How many terms of the tensor ``d`` computes differ from the classical product's (0: it multiplies)."""
    tensor: dict[tuple, Fraction] = {}
    for p in d.products:
        for a, x in p.u:
            for b, y in p.v:
                for c, z in p.w:
                    tensor[a, b, c] = tensor.get((a, b, c), Fraction(0)) + x * y * z
    for i in range(d.rows):
        for j in range(d.inner):
            for c in range(d.cols):
                tensor[(i, j), (j, c), (i, c)] = tensor.get(((i, j), (j, c), (i, c)), Fraction(0)) - 1
    return sum(1 for value in tensor.values() if value)


def _refusal(call, *args) -> str:
    """The message of the ValueError ``call(*args)`` raises."""
    return str(pytest.raises(ValueError, call, *args).value)


# ---- decompose.py ------------------------------------------------------------------------------------


def test_a_global_product_needs_every_side_nonzero():
    """An empty w (a product no C block takes) was let through with `and self.w` dropped; the message names all three."""
    for u, v, w in ((U, V, ()), ((), V, W), (U, (), W)):
        assert _refusal(GlobalProduct, u, v, w) == "a global product needs nonzero u, v and w"
    assert GlobalProduct(U, V, W).w == W


def test_a_grid_needs_a_block_each_way():
    """`< 0` for `< 1`, or a dimension left out of the min, let an empty grid through."""
    for rows, inner, cols in ((0, 1, 1), (1, 0, 1), (1, 1, 0)):
        assert _refusal(Decomposition, "g", rows, inner, cols, ()) == (
            "a decomposition's grid needs at least one block each way")
    assert Decomposition("g", 1, 1, 1, ()).rank == 0


@pytest.mark.parametrize("u, v, w, message", [
    ((((2, 0), ONE),), None, None, "A block (2, 0) is outside the 2x3 grid"),
    ((((0, 3), ONE),), None, None, "A block (0, 3) is outside the 2x3 grid"),
    ((((0, -1), ONE),), None, None, "A block (0, -1) is outside the 2x3 grid"),
    (None, (((3, 0), ONE),), None, "B block (3, 0) is outside the 3x4 grid"),
    (None, (((0, 4), ONE),), None, "B block (0, 4) is outside the 3x4 grid"),
    (None, None, (((2, 0), ONE),), "C block (2, 0) is outside the 2x4 grid"),
    (None, None, (((0, 4), ONE),), "C block (0, 4) is outside the 2x4 grid"),
])
def test_a_block_just_past_the_grid_is_refused_by_name(u, v, w, message):
    """Each bound as `<=` let the block one past the edge of a 2x3x4 grid through; the grid is named rows first."""
    product = GlobalProduct(u or (((1, 2), ONE),), v or (((2, 3), ONE),), w or (((1, 3), ONE),))
    assert _refusal(Decomposition, "g", 2, 3, 4, (product,)) == message
    assert Decomposition("g", 2, 3, 4, (GlobalProduct((((1, 2), ONE),), (((2, 3), ONE),), (((1, 3), ONE),)),)).rank == 1


def test_the_error_growth_of_no_products_is_zero_and_of_strassen_six_and_thirty_six():
    """max(e)/inner with max's default 0 (1 unseen); a step's ratio over the classical algorithm kept per step, and
    multiplied (a sum, a start of 0 or the ratios dropped in one_step or compose went unseen)."""
    strassen = _algorithm("strassen")
    assert Decomposition("g", 1, 1, 1, ()).max_norm_growth == 0
    one, two = one_step(strassen), breadth_first(strassen, 2)
    assert (one.max_norm_growth, two.max_norm_growth) == (6, 36)
    assert one.growth_ratios == (1.8535533905932737,) and two.growth_ratios == (1.8535533905932737,) * 2
    assert two.growth_ratio == 1.8535533905932737**2
    assert classical(2, 2, 2).growth_ratio == 1.0 and classical(2, 2, 2).max_norm_growth == 1
    mixed = compose(one_step(_algorithm("winograd")), one_step(_algorithm("grey234")))
    assert mixed.growth_ratios == (one_step(_algorithm("winograd")).growth_ratios[0], 2.739420400945125)


def test_one_steps_growth_ratio_is_over_the_classical_m_k_n():
    """growth_factor / (m·k·n): ⟨2,3,4⟩'s 65.746 over 24, not over m·k, and a quotient, not a product."""
    assert growth_ratio(_algorithm("grey234")) == 2.739420400945125 == 65.746089622683 / 24


def test_breadth_first_names_the_power_and_compose_takes_a_name():
    """`name or` dropped named strassen^2 strassen*strassen; zero steps were taken as one with `< 0` for `< 1`."""
    strassen = _algorithm("strassen")
    assert (breadth_first(strassen, 2).name, breadth_first(strassen, 3).name) == ("strassen^2", "strassen^3")
    assert compose(one_step(strassen), one_step(strassen)).name == "strassen*strassen"
    assert compose(one_step(strassen), one_step(strassen), "given").name == "given"
    assert _refusal(breadth_first, strassen, 0) == "breadth-first steps must be at least 1, not 0"
    assert breadth_first(strassen, 3).rank == 343


def test_the_classical_grid_multiplies_and_is_named_rows_inner_cols():
    """Every inner block is summed over (`range(1)` for `range(inner)` went unseen: 2D tiles have inner 1)."""
    d = classical(2, 3, 1)
    assert (d.name, d.rank, d.rows, d.inner, d.cols, _classical_terms_missed(d)) == ("classical<2,3,1>", 6, 2, 3, 1, 0)
    assert d.products[1] == GlobalProduct((((0, 1), ONE),), (((1, 0), ONE),), (((0, 0), ONE),))


@pytest.mark.parametrize("ranks, grid", [(1, (1, 1, 1)), (6, (2, 1, 3)), (7, (1, 1, 7)), (12, (3, 1, 4)), (16, (4, 1, 4))])
def test_2d_tiles_take_the_most_square_grid_rows_first(ranks, grid):
    """The largest divisor up to √ranks is the rows (16: 4, which `int(√16)` without + 1 missed)."""
    d = tiles_2d(ranks)
    assert (d.rows, d.inner, d.cols, d.rank, _classical_terms_missed(d)) == (*grid, ranks, 0)


@pytest.mark.parametrize("outer, inner, grid", [("grey234", "winograd", (4, 6, 8)), ("winograd", "grey234", (4, 6, 8)),
                                                ("grey234", "grey234", (4, 9, 16))])
def test_composing_grids_that_are_not_square_multiplies(outer, inner, grid):
    """Every grid the distributed tests compose is square; rows, inner and cols swapped for one another where the
    blocks are placed, or in the grid's size, went unseen."""
    d = compose(one_step(_algorithm(outer)), one_step(_algorithm(inner)))
    assert ((d.rows, d.inner, d.cols), d.rank, _classical_terms_missed(d)) == (grid, len(d.products), 0)
    assert d.rank == one_step(_algorithm(outer)).rank * one_step(_algorithm(inner)).rank


def test_every_term_list_is_sorted_by_block():
    """`Coefficients` are sorted: the Kronecker product's where two outer blocks of one row meet an inner part of
    two rows (strassen²'s M5⊗M1) were kept as met; one_step's of a product written A22 + A11 (which Expansion
    already hands over in block order, so _coefficients' sort is never the one that orders them)."""
    text = _algorithm_text("strassen").replace("(A11 + A22) * (B11 + B22)", "(A22 + A11) * (B22 + B11)")
    step = one_step(program_from_text(text, "reversed.bl").algorithm("strassen"))
    assert step.products[0].u == step.products[0].v == (((0, 0), ONE), ((1, 1), ONE))
    assert breadth_first(_algorithm("strassen"), 2).products[28].u == (
        ((0, 0), ONE), ((0, 2), ONE), ((1, 1), ONE), ((1, 3), ONE))


# ---- breadth.py --------------------------------------------------------------------------------------


def _computed(plan: BreadthFirst) -> list[list[Fraction]]:
    """C as the three kernels compute it, each block a number: A[i][j] = 10·i + j + 1, B[j][c] = 7·j − c + 2."""
    a_rows, a_cols = plan.split_a.grid_rows, plan.split_a.grid_cols
    b_cols = plan.split_b.grid_cols
    a = [10 * (q // a_cols) + q % a_cols + 1 for q in range(a_rows * a_cols)]
    b = [7 * (q // b_cols) - q % b_cols + 2 for q in range(plan.split_b.grid_rows * b_cols)]
    s = [sum(c * a[i] for i, c in terms) for terms in plan.split_a.outputs]
    t = [sum(c * b[i] for i, c in terms) for terms in plan.split_b.outputs]
    merged = [sum(c * s[r] * t[r] for r, c in terms) for terms in plan.merge.outputs]
    return [merged[q * plan.merge.grid_cols:(q + 1) * plan.merge.grid_cols] for q in range(plan.merge.grid_rows)]


def _classical(rows: int, inner: int, cols: int) -> list[list[int]]:
    """What _computed should be: the product of its A and B."""
    return [[sum((10 * i + j + 1) * (7 * j - c + 2) for j in range(inner)) for c in range(cols)] for i in range(rows)]


def test_a_grid_that_is_not_a_cube_sizes_its_leaves_and_workspace_by_rows_inner_cols():
    """grey234: the plans the suite sizes are of square schemes, so m, k and n swapped anywhere went unseen."""
    plan = lower_breadth_first((_algorithm("grey234"),), "float32", "p")
    assert (plan.grid, plan.schemes, plan.rank) == ((2, 3, 4), (("grey234", (2, 3, 4)),), 20)
    assert plan.main_dims(37, 29, 41) == (36, 27, 40) and plan.leaf_dims(37, 29, 41) == (18, 9, 10)
    assert plan.workspace_elements(37, 29, 41) == 20 * (18 * 9 + 9 * 10 + 18 * 10) == 8640
    assert plan.terms == 144


def test_the_kernels_are_named_by_prefix_dtype_and_levels_with_their_grids():
    """Split A over rows × inner, split B over inner × cols, merge over rows × cols, in that order."""
    plan = lower_breadth_first((_algorithm("grey234"),), "float32", "p")
    assert [(k.name, k.dtype, k.grid_rows, k.grid_cols) for k in plan.kernels()] == [
        ("p_float32_bf1_split_a", "float32", 2, 3), ("p_float32_bf1_split_b", "float32", 3, 4),
        ("p_float32_bf1_merge", "float32", 2, 4)]
    assert (plan.merge.products, len(plan.merge.outputs), plan.split_a.inputs, plan.split_b.inputs) == (
        20, 8, tuple(range(6)), tuple(range(12)))
    assert plan.merge.outputs[0] == ((0, -ONE), (2, -ONE), (18, -ONE))  # C11 = −M1 − M3 − M19
    assert lower_breadth_first((_algorithm("strassen"),) * 2, "float64", "s").merge.name == "s_float64_bf2_merge"


@pytest.mark.parametrize("names", [("grey234",), ("winograd", "grey234"), ("grey234", "winograd")])
def test_the_kernels_multiply_a_grid_that_is_not_a_cube(names):
    """The split and merge terms, run on numbers, give A·B: flat indices, grids and signs all count."""
    plan = lower_breadth_first(tuple(_algorithm(name) for name in names), "float64", "p")
    assert _computed(plan) == _classical(*plan.grid)


def test_a_power_needs_an_algorithm_and_names_itself_as_breadth_first_does():
    """One algorithm repeated is its power (named strassen^2); a mix is composed outermost first."""
    strassen = _algorithm("strassen")
    assert _refusal(power, ()) == "breadth-first levels need at least one algorithm"
    assert (power((strassen,) * 2).name, power((strassen,) * 2).rank) == ("strassen^2", 49)
    mixed = power((_algorithm("winograd"), strassen, strassen))
    assert (mixed.name, mixed.rank, mixed.rows) == ("winograd*strassen*strassen", 343, 8)


def test_the_product_cap_lets_exactly_its_count_through(monkeypatch):
    """`>=` for `>` refused 49 products under a cap of 49; the refusal names the first level's scheme."""
    monkeypatch.setattr(breadth, "MAX_BREADTH_PRODUCTS", 49)
    assert lower_breadth_first((_algorithm("strassen"),) * 2, "float64", "s").rank == 49
    monkeypatch.setattr(breadth, "MAX_BREADTH_PRODUCTS", 139)
    with pytest.raises(TooLarge) as refused:
        lower_breadth_first((_algorithm("winograd"), _algorithm("grey234")), "float64", "w")
    assert str(refused.value) == ("2 breadth-first levels of winograd run 140 products in one batch, more than 139 "
                                  "(lowering them would take minutes and gigabytes); use fewer breadth-first levels")


@pytest.mark.parametrize("product, output", [(f"({BIG}*A11) * B11", "M1"), (f"A11 * ({BIG}*B11)", "M1"),
                                             ("A11 * B11", f"{BIG}*M1")])
def test_each_kernels_coefficients_are_checked_against_the_range(product, output):
    """10^200 squared by two levels, in split A, split B or the merge alone: each kernel is checked, at the scheme."""
    big = program_from_text(f"algorithm big <1,1,1;1>:\n  M1 = {product}\n  C11 = {output}\n", "big.bl").algorithm("big")
    with pytest.raises(CoefficientOutOfRange) as refused:
        lower_breadth_first((big, big), "float64", "b")
    (diagnostic,) = refused.value.diagnostics
    assert (diagnostic.message, diagnostic.span.line, diagnostic.span.column) == (
        "2 breadth-first level(s) of big multiply by a coefficient of about 1e400, beyond the float64 range "
        "(2.23e-308 to 1.8e+308 in magnitude); it cannot be run in float64", 1, 1)


def _column(n: int):
    """⟨n,1,1;n⟩, C[i,1] = A[i,1]·B11: its split of A reads n blocks."""
    lines = [f"  M{i} = A[{i},1] * B11" for i in range(1, n + 1)] + [f"  C[{i},1] = M{i}" for i in range(1, n + 1)]
    return program_from_text("\n".join([f"algorithm col <{n},1,1;{n}>:", *lines, ""]), f"col{n}.bl").algorithm("col")


@pytest.mark.parametrize("algorithms, vector_paths", [((_column(16),), 3), ((_column(17),), 2),
                                                      (("strassen",) * 2, 3), (("strassen",) * 3, 0)])
def test_a_kernel_has_a_vector_path_up_to_sixteen_inputs_and_256_merge_terms(algorithms, vector_paths):
    """A split of 16 inputs has one, of 17 none; strassen²'s merge (16 blocks of 16 terms) has one, strassen³'s
    (64 of 64) none: the limits as `<`, VECTOR_INPUTS as 15 or 17, or the merge's count without its blocks."""
    plan = lower_breadth_first(tuple(_algorithm(a) if isinstance(a, str) else a for a in algorithms), "float64", "v")
    assert render_breadth_first(plan).count("if (vec) {") == vector_paths


def _kernel(source: str, name: str) -> str:
    """The text of kernel ``name`` in ``source``: from its name to the next kernel's."""
    return source.split(f" void {name}(")[1].split("__global__")[0]


def test_the_source_places_blocks_by_their_grids_columns_in_the_dtype_and_linkage_given():
    """grey234 in float32 as static kernels: A block 5 of the 2x3 grid is row 1, column 2, B block 11 of the 3x4
    grid row 2, column 3, and C block q of the 2x4 grid row q // 4, column q % 4 (the rows counted for the columns went
    unseen: the golden kernel's grids are square); a scale is written in float32 and without its sign."""
    source = render_breadth_first(lower_breadth_first((_algorithm("grey234"),), "float32", "g"), "static")
    assert source.startswith("static __global__ void g_float32_bf1_split_a(\n    const float* __restrict__ src,")
    assert "const float x5 = src[(1LL * rows + r) * ld + 2LL * cols + c];" in _kernel(source, "g_float32_bf1_split_a")
    assert "const float x11 = src[(2LL * rows + r) * ld + 3LL * cols + c];" in _kernel(source, "g_float32_bf1_split_b")
    targets = re.findall(r"target = dst \+ \((\d)LL \* rows \+ r\) \* ld \+ (\d)LL", _kernel(source, "g_float32_bf1_merge"))
    assert [(int(row), int(col)) for row, col in targets[-8:]] == [divmod(q, 4) for q in range(8)]  # the scalar path
    half = program_from_text("algorithm half <1,1,1;1>:\n  M1 = (2*A11) * B11\n  C11 = -M1/2\n", "half.bl")
    source = render_breadth_first(lower_breadth_first((half.algorithm("half"),), "float32", "h"))
    assert "alpha * ( - 0.5f * __ldg(prod + 0LL * block + t));" in source and " + 2.0f * x0;" in source


def test_kernels_past_the_term_cap_are_refused_saying_the_remedy_and_at_it_are_built(monkeypatch):
    """`>=` for `>` refused strassen² at a cap of its 432 terms; the count, the cap and the remedy are said."""
    plan = lower_breadth_first((_algorithm("strassen"),) * 2, "float64", "s")
    monkeypatch.setattr(breadth, "MAX_BREADTH_TERMS", 432)
    assert "s_float64_bf2_merge" in render_breadth_first(plan)
    monkeypatch.setattr(breadth, "MAX_BREADTH_TERMS", 431)
    said = ("strassen^2's breadth-first split and merge kernels have 432 terms, more than 431: nvcc or NVRTC would take "
            "many minutes to build them (they are unrolled); ")
    assert str(pytest.raises(TooLarge, render_breadth_first, plan).value) == said + "use fewer breadth-first levels"
    assert str(pytest.raises(TooLarge, check_buildable, plan, "take another").value) == said + "take another"


def _form(a: int | Fraction, target: int | Fraction) -> ProblemForm:
    """A leaf problem ``target·C += (a·A)·B``."""
    return ProblemForm((Fraction(a),), (ONE,), (Fraction(target),))


def test_every_form_of_the_problem_tree_is_found_once():
    """Each top's own form, its steps' forms past an element-wise step (None), and its children's, a shared child
    visited once (only check_under's refusal shows what it found, and no test had one: dropping any
    part of the walk went unseen)."""
    child = ProblemNode(1, _form(1, 3))
    top = ProblemNode(0, _form(1, 1), steps=(None, ProductStep((_form(1, 2), _form(1, 4)), children=(child, child))))
    other = ProblemNode(0, _form(1, 5), steps=(ProductStep((_form(1, 6),), children=(child,)),))
    assert _problem_forms({False: top, True: other}) == {_form(1, t) for t in range(1, 7)}


def _merging(dtype: str, c11: str, c12: str) -> BreadthFirst:
    """One breadth-first level of ⟨1,1,2;2⟩ whose merge computes C11 = c11 (of M1) and C12 = c12 (of M2)."""
    text = f"algorithm two <1,1,2;2>:\n  M1 = A11 * B11\n  M2 = A11 * B12\n  C11 = {c11}\n  C12 = {c12}\n"
    return lower_breadth_first((program_from_text(text, "two.bl").algorithm("two"),), dtype, "t")


def _ten(power: int) -> str:
    """10^power written out."""
    return "1" + "0" * power


def _scaled(dtype: str, exponent: int) -> BreadthFirst:
    """One breadth-first level whose merge multiplies by −10^exponent and 10^−exponent."""
    return _merging(dtype, f"-{_ten(exponent)}*M1", f"M2/{_ten(exponent)}")


RANGES = {"float64": "2.23e-308 to 1.8e+308", "float32": "1.18e-38 to 3.4e+38"}
UNDER = "depth-first levels' coefficients times those of the breadth-first level(s) below them multiply by"


@pytest.mark.parametrize("dtype, exponent, forms, said", [
    ("float64", 300, [_form(1, 10**10)], "1e310, beyond"),
    ("float64", 300, [_form(1, Fraction(1, 10**10))], "1e-310, below"),
    ("float64", 300, [_form(1, Fraction(1, 10**10)), _form(1, 10**10)], "1e310, beyond"),
    ("float64", 300, [_form(1, -10**10), _form(1, 1)], "1e310, beyond"),
    ("float64", 300, [_form(10**10, 1)], "1e310, beyond"),
    ("float32", 30, [_form(1, 10**10)], "1e40, beyond"),
])
def test_depth_first_coefficients_times_the_merges_are_checked_against_the_range(dtype, exponent, forms, said):
    """The largest magnitudes times each other, and the smallest, in the plan's dtype (a one-view operand's
    coefficient folded into the targets), located at the span given; no test reached this refusal."""
    plan, span = _scaled(dtype, exponent), Span("deep.bl", 3, 1, 3, 9)
    tops = {False: ProblemNode(0, forms[0], steps=(ProductStep(tuple(forms)),))}
    with pytest.raises(CoefficientOutOfRange) as refused:
        check_under(plan, tops, span)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.message == (f"{UNDER} a coefficient of about {said} the {dtype} range ({RANGES[dtype]} in "
                                  f"magnitude); it cannot be run in {dtype}")
    assert diagnostic.span == span


def test_coefficients_in_range_together_and_no_problems_pass_check_under():
    """10^10 times 10^290 and 10^−10 times 10^−290 are in range; a tree of no forms checks nothing (`or` for
    `and` took max() of no scales)."""
    plan = _scaled("float64", 290)
    forms = (_form(1, 10**10), _form(1, Fraction(1, 10**10)))
    assert check_under(plan, {False: ProblemNode(0, forms[0], steps=(ProductStep(forms),))}, None) is None
    assert check_under(plan, {}, None) is None


def test_a_target_of_one_counts_among_the_depth_first_coefficients():
    """Targets 1 and 10^−10 over merges 10^−299 and 10^−300: the largest product, 1·10^−299, is in range and the
    smallest, 10^−310, is not; with the 1 left out the largest was 10^−309, and said instead."""
    plan = _merging("float64", f"M1/{_ten(299)}", f"M2/{_ten(300)}")
    forms = (_form(1, 1), _form(1, Fraction(1, 10**10)))
    with pytest.raises(CoefficientOutOfRange) as refused:
        check_under(plan, {False: ProblemNode(0, forms[0], steps=(ProductStep(forms),))}, None)
    assert str(refused.value).startswith(f"{UNDER} a coefficient of about 1e-310, below the float64 range")
