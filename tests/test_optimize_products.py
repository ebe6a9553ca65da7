"""`optimize` rescales products: a constant on one factor and its inverse on the other (or on the
weights) stay out of the program.  Every result must still verify."""

from __future__ import annotations

from fractions import Fraction

from conftest import ROOT, scheme_file
from hypothesis import given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.cli import main
from bilinear.optimize import optimize
from bilinear.optimize_pairs import scalings
from bilinear.optimize_products import moved, product_factors, rescaled, rescaled_sides
from bilinear.optimize_sides import sides, written
from bilinear.verify import report_algorithm
from bilinear.verify.expand import Expansion
from helpers.programs import expand

STRASSEN = ROOT / "algorithms" / "strassen.bl"
# Strassen with M1 = (A11 + A22)(B11 + B22) written as (2·A11 + 2·A22)(B11/2 + B22/2), and M2's
# weights halved against a doubled left factor.
SCALED = {
    "M1 = (A11 + A22) * (B11 + B22)": "M1 = (2*A11 + 2*A22) * (1/2*B11 + 1/2*B22)",
    "M2 = (A21 + A22) * B11": "M2 = (2*A21 + 2*A22) * B11",
    "C21 = M2 + M4": "C21 = 1/2*M2 + M4",
    "C22 = M1 - M2 + M3 + M6": "C22 = M1 - 1/2*M2 + M3 + M6",
}


def _scaled_strassen_file(tmp_path):
    text = STRASSEN.read_text()
    for plain, scaled in SCALED.items():
        assert plain in text
        text = text.replace(plain, scaled)
    path = tmp_path / "scaled.bl"
    path.write_text(text)
    return path


def _scaled_strassen(tmp_path):
    return bilinear.load(_scaled_strassen_file(tmp_path)).algorithm("strassen")


def _total_scalings(counts, when):
    return sum(counts[side][when][1] for side in "ABC")


def test_a_constant_and_its_inverse_on_one_product_leave_the_program(tmp_path):
    algorithm = _scaled_strassen(tmp_path)
    assert report_algorithm(algorithm).ok
    result, counts = optimize(algorithm, seeds=1)
    assert report_algorithm(result).ok
    assert _total_scalings(counts, "before") == 5 and _total_scalings(counts, "after") == 0
    left, right = Expansion(result).factors[0]
    assert left.as_dict() == {"A11": 1, "A22": 1} and right.as_dict() == {"B11": 1, "B22": 1}


SOME = st.sampled_from([Fraction(1), Fraction(-2), Fraction(1, 3)])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(SOME, SOME), min_size=7, max_size=7))
def test_a_written_program_rescaled_computes_the_rescaled_targets(factors):
    """Winograd's program (named sums over A, B and the products) through ``rescaled_sides`` is a
    program for the rescaled sides: a candidate optimize may keep for them."""
    algorithm = bilinear.load(ROOT / "algorithms" / "winograd.bl").algorithm("winograd")
    names = [p.name for p in algorithm.products]
    targets = rescaled(*sides(algorithm), names, factors)
    for side, forms in zip(rescaled_sides(written(algorithm), names, factors), targets):
        definitions = dict(side.sums)
        assert [expand(form, definitions) for form in side.forms] == forms


STEPS = st.sampled_from([Fraction(1), Fraction(-1), Fraction(2), Fraction(1, 2), Fraction(-3), Fraction(1, 3)])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(STEPS, STEPS), min_size=7, max_size=7))
def test_factors_undo_any_rescaling_of_strassen_and_keep_what_it_computes(steps):
    algorithm = bilinear.load(STRASSEN).algorithm("strassen")
    names = [p.name for p in algorithm.products]
    scrambled = rescaled(*sides(algorithm), names, steps)
    factors = product_factors(*scrambled, names)
    left, right, outputs = rescaled(*scrambled, names, factors)
    assert scalings(left) + scalings(right) + scalings(outputs) == 0
    before, after = _tensor(*scrambled, names), _tensor(left, right, outputs, names)
    assert before == after


def _tensor(left, right, outputs, names):
    """Σ_r u_r ⊗ v_r ⊗ w_r as a dict: what the scheme computes."""
    total: dict[tuple[str, str, int], Fraction] = {}
    for u, v, name in zip(left, right, names):
        for block, form in enumerate(outputs):
            for a, x in u.items():
                for b, y in v.items():
                    key = (a, b, block)
                    total[key] = total.get(key, 0) + x * y * form.get(name, 0)
    return {key: value for key, value in total.items() if value}


def test_factors_leave_a_scheme_with_nothing_to_rescale_alone():
    algorithm = bilinear.load(ROOT / "algorithms" / "grey333.bl").algorithms[0]
    names = [p.name for p in algorithm.products]
    assert set(product_factors(*sides(algorithm), names)) == {(1, 1)}


def test_catalogue_scheme_with_a_constant_moved_between_sides_has_it_taken_out():
    """Kauers' <2,5,7;55> writes M37 as (5·(-A12 + A13 + ...))·(...) with weights ±1/5, and M38, M39
    alike with 3; no other catalogue scheme has such a product (optimizing this one takes minutes,
    so the test stops at the factors)."""
    algorithm = bilinear.load(scheme_file("kauers/k108391c6c35ad0c4.exp")).algorithms[0]
    names = [p.name for p in algorithm.products]
    factors = product_factors(*sides(algorithm), names)
    moved = {name: factor for name, factor in zip(names, factors) if factor != (1, 1)}
    assert moved == {"M37": (Fraction(1, 5), 1), "M38": (Fraction(1, 3), 1), "M39": (Fraction(1, 3), 1)}
    before, after = sides(algorithm), rescaled(*sides(algorithm), names, factors)
    assert [scalings(forms) for forms in before] == [40, 135, 44]
    assert [scalings(forms) for forms in after] == [37, 135, 37]


def test_the_rescaled_products_after_a_dropped_one_are_still_named(tmp_path):
    """M0, which no output uses, comes first and optimize drops it: M1 and M2 are still found moved."""
    path = _scaled_strassen_file(tmp_path)
    path.write_text(path.read_text().replace("<2,2,2;7>", "<2,2,2;8>").replace("  M1 = ", "  M0 = A12 * B21\n  M1 = "))
    algorithm = bilinear.load(path).algorithm("strassen")
    result, _ = optimize(algorithm, seeds=1)
    assert "M0" not in {product.name for product in result.products}
    assert moved(algorithm, result) == {"M1": (Fraction(1, 2), Fraction(2)), "M2": (Fraction(1, 2), Fraction(1))}


def test_optimize_command_names_the_products_it_rescaled(capsys, tmp_path):
    source = _scaled_strassen_file(tmp_path)
    code = main(["optimize", str(source), "--seeds", "1", "-o", str(tmp_path / "out.bl")])
    err = capsys.readouterr().err
    assert code == 0
    assert ("note: products rescaled where that saves scalings (the same C): M1 (left factor ×1/2, right factor ×2), "
            "M2 (left factor ×1/2, weights ×2)") in err, err
    assert bilinear.verify(tmp_path / "out.bl").ok


MAGNITUDES = [Fraction(1), Fraction(2), Fraction(1, 2), Fraction(3), Fraction(1, 3), Fraction(4), Fraction(1, 4), Fraction(6)]
COEFFICIENTS = st.builds(lambda m, sign: m * sign, st.sampled_from(MAGNITUDES), st.sampled_from([1, -1]))


def _kept(before: dict, after: dict) -> bool:
    return {abs(c) for c in after.values()} - {1} <= {abs(c) for c in before.values()} - {1}


@settings(max_examples=200, deadline=None)
@given(st.lists(COEFFICIENTS, min_size=1, max_size=3), st.lists(COEFFICIENTS, min_size=1, max_size=3),
       st.lists(COEFFICIENTS, min_size=1, max_size=2))
def test_one_products_factors_reach_the_fewest_scalings_of_any_rescaling_bringing_no_new_magnitude(u, v, weights):
    """Against every (α, β) over products and quotients of the magnitudes here (those that make a weight
    1 among them), not only the candidates product_factors tries."""
    left, right = {f"a{i}": c for i, c in enumerate(u)}, {f"b{i}": c for i, c in enumerate(v)}
    outputs = [{"M": w, "N": Fraction(1)} for w in weights]
    grid = {x * y for x in MAGNITUDES for y in MAGNITUDES} | {x / y for x in MAGNITUDES for y in MAGNITUDES}

    def forms(alpha, beta):
        """The product's factors and the outputs, rescaled by (α, β), in one list."""
        return [form for side in rescaled([left], [right], outputs, ["M"], [(alpha, beta)]) for form in side]

    unscaled = forms(Fraction(1), Fraction(1))
    reachable = [scalings(forms(alpha, beta)) for alpha in grid for beta in grid
                 if all(_kept(before, after) for before, after in zip(unscaled, forms(alpha, beta)))]
    (factor,) = product_factors([left], [right], outputs, ["M"])
    assert scalings(forms(*factor)) <= min(reachable)


def _scheme(draw_terms, rank: int):
    """Sides over a0.., b0.. and outputs over M0.. from drawn coefficients."""
    left = [{f"a{i}": c for i, c in enumerate(terms)} for terms in draw_terms[:rank]]
    right = [{f"b{i}": c for i, c in enumerate(terms)} for terms in draw_terms[rank:2 * rank]]
    outputs = [{f"M{i}": c for i, c in enumerate(terms)} for terms in draw_terms[2 * rank:]]
    return left, right, outputs, [f"M{i}" for i in range(rank)]


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 4).flatmap(lambda rank: st.tuples(st.just(rank), st.lists(
    st.lists(COEFFICIENTS, min_size=1, max_size=rank), min_size=2 * rank + 1, max_size=2 * rank + 3))))
def test_a_second_round_of_factors_finds_nothing_to_rescale(drawn):
    """Products sharing outputs, each step changing what the next one is priced against: the factors
    chosen leave no product a step that lowers the scalings."""
    rank, terms = drawn
    left, right, outputs, names = _scheme(terms, rank)
    factors = product_factors(left, right, outputs, names)
    again = product_factors(*rescaled(left, right, outputs, names, factors), names)
    assert again == [(Fraction(1), Fraction(1))] * rank
