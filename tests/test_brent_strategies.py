"""The one exact Brent check (verify.tensor) and its two strategies.

- term by term and one A block at a time (alone, or several in one call) give
  the same residual, so the same diagnostics, on every single-coefficient
  mutation of strassen and winograd;
- the term count picks the strategy: a Kronecker power of shipped schemes past
  TERMS_LIMIT verifies one A block at a time in bounded memory, and a
  single-coefficient mutation of it is still reported in exactly its wrong
  blocks, with the fix that undoes it;
- every number type (float64, int64, Python integers) is exact in both.
"""

from __future__ import annotations

import dataclasses
import tracemalloc
from fractions import Fraction

import pytest
from conftest import ROOT
from helpers.mutations import algorithm_mutations, judge_algorithm

import bilinear
from bilinear.compose import kronecker
from bilinear.ir import Form, format_coefficient
from bilinear.verify import tensor
from bilinear.verify.algorithm import verify_algorithm, wrong_blocks
from bilinear.verify.expand import Expansion


def _shipped(stem: str):
    return bilinear.load(ROOT / "algorithms" / f"{stem}.bl").algorithm(stem)


def _terms(algorithm) -> int:
    expansion = Expansion(algorithm)
    return tensor.term_count(*zip(*expansion.factors), expansion.weights)


def _wrong(algorithm, strategy: str) -> tuple[str, ...]:
    """The wrong C blocks, row-major, by the given strategy."""
    expansion = Expansion(algorithm)
    left, right = zip(*expansion.factors)
    entries = tensor.residual_entries(algorithm.shape, left, right, expansion.weights, strategy)
    wrong = {c for _, _, c in entries}
    return tuple(block for block in algorithm.shape.blocks("C") if block in wrong)


def _rendered(verdict) -> tuple:
    kind, errors = verdict
    return kind, tuple((error.message, error.notes) for error in errors)


@pytest.mark.parametrize("stem", ["strassen", "winograd"])
def test_both_strategies_report_every_mutation_alike(stem, monkeypatch):
    mutants = [m.mutant for m in algorithm_mutations(_shipped(stem)) if m.mutant is not None]
    by_terms = [_rendered(judge_algorithm(mutant)) for mutant in mutants]
    monkeypatch.setattr(tensor, "TERMS_LIMIT", -1)  # every check goes by blocks: all of them in one call ...
    by_blocks = [_rendered(judge_algorithm(mutant)) for mutant in mutants]
    monkeypatch.setattr(tensor, "CALL_WORK", 0)  # ... and one call per A block
    by_single_blocks = [_rendered(judge_algorithm(mutant)) for mutant in mutants]
    assert by_blocks == by_terms and by_single_blocks == by_terms
    assert sum(kind == "verify" for kind, _ in by_blocks) > 100  # the Brent check really ran on many


@pytest.fixture(scope="module")
def power():
    """⟨16,16,16;2401⟩ = winograd ⊗ winograd ⊗ strassen ⊗ strassen: 3.2 million terms."""
    winograd, strassen = _shipped("winograd"), _shipped("strassen")
    return kronecker(kronecker(winograd, winograd), kronecker(strassen, strassen), name="power")


def _traced_peak(run) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_term_count_sends_a_large_scheme_by_blocks_in_bounded_memory(power):
    terms = _terms(power)
    assert terms == 56**2 * 32**2 and tensor.choose_strategy(terms) == "blocks"
    assert verify_algorithm(power) == ()
    expansion = Expansion(power)
    left, right = zip(*expansion.factors)
    peaks = {
        strategy: _traced_peak(lambda: tensor.residual_entries(power.shape, left, right, expansion.weights, strategy))
        for strategy in tensor.STRATEGIES
    }
    # By blocks: V and W dense (2401 × 256 each), a run of 256 × 256 slices and their products (~26 MB);
    # term by term: ~75 bytes a term (~230 MB here), growing with the terms.
    assert peaks["blocks"] < min(peaks["terms"] / 4, 64 * 2**20), peaks


def _with_output_coefficient(algorithm, index: int, product: str, value: Fraction):
    output = algorithm.outputs[index]
    changed = dict(output.form.terms) | {product: value}
    outputs = list(algorithm.outputs)
    outputs[index] = dataclasses.replace(output, form=Form.of(changed))
    return dataclasses.replace(algorithm, outputs=tuple(outputs))


def test_a_mutation_of_the_large_scheme_is_reported_in_its_block_with_the_fix(power):
    index = 37
    output = power.outputs[index]
    product, current = output.form.terms[len(output.form.terms) // 2]
    mutant = _with_output_coefficient(power, index, product, -current)
    assert _wrong(mutant, "blocks") == (output.block,)
    errors = verify_algorithm(mutant)
    assert [error.message.split(" is wrong:")[0] for error in errors] == [output.block]
    fix = f"changing the coefficient of {product} in {output.block} from {format_coefficient(-current)} to {format_coefficient(current)}"
    assert any(note.startswith(fix) for note in errors[0].notes), errors[0].notes


def test_a_factor_mutation_of_the_large_scheme_is_wrong_exactly_where_its_product_goes(power):
    product = power.products[1200]
    name, coef = product.left.terms[0]
    changed = dataclasses.replace(product, left=product.left + Form.of({name: 1}))
    mutant = dataclasses.replace(power, products=tuple(changed if p is product else p for p in power.products))
    feeds = tuple(o.block for o in power.outputs if product.name in o.form.names())
    assert _wrong(mutant, "blocks") == feeds == wrong_blocks(mutant)


def _rescaled(algorithm, power: int):
    """The first product's A factor times 2^power and its weights divided by it: still exact."""
    first = algorithm.products[0]
    products = (dataclasses.replace(first, left=first.left.scale(2**power)), *algorithm.products[1:])
    outputs = tuple(
        dataclasses.replace(o, form=Form.of({n: c / 2**power if n == first.name else c for n, c in o.form.terms}))
        for o in algorithm.outputs
    )
    return dataclasses.replace(algorithm, products=products, outputs=outputs)


@pytest.mark.parametrize("strategy", tensor.STRATEGIES)
@pytest.mark.parametrize("power", [0, 55, 80], ids=["float64", "int64", "python-integers"])
def test_every_number_type_is_exact_in_both_strategies(power, strategy):
    scheme = _rescaled(_shipped("strassen"), power)
    assert _wrong(scheme, strategy) == ()
    for index in (0, 3):
        output = scheme.outputs[index]
        name, coef = output.form.terms[0]
        mutant = _with_output_coefficient(scheme, index, name, coef + coef / 3)  # ×3 keeps its number type
        assert _wrong(mutant, strategy) == (output.block,)


def test_an_unknown_strategy_is_refused():
    strassen = _shipped("strassen")
    expansion = Expansion(strassen)
    with pytest.raises(ValueError, match="strategy must be one of terms, blocks"):
        tensor.residual_entries(strassen.shape, *zip(*expansion.factors), expansion.weights, "dense")
