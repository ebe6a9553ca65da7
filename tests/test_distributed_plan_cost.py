"""The work `bilinear plan` does on ⟨3,3,6;40⟩² (1,600 products, 331,776 coefficients), counted
rather than timed: `plan smirnov336-40-960 --steps 2` took 5.3 s, most of it in 331,776 Fraction
products composing the steps, 212,992 coefficients formatted one by one for the text, and the proof
summed term by term; counts hold on any machine, where a time bound on a shared CI machine would
either flake or catch nothing."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from conftest import ROOT, scheme_file

import bilinear
import bilinear.distributed.describe as describe
from bilinear.distributed import check
from bilinear.distributed.plan import make_plan
from bilinear.distributed.steps import decomposition_for
from bilinear.lower.decompose import GlobalProduct, compose, one_step


def _smirnov():
    return bilinear.load(scheme_file("fast-matmul/smirnov336-40-960"))


def _counting(monkeypatch, owner, name: str) -> Counter:
    calls: Counter = Counter()
    original = getattr(owner, name)

    def counted(*args):
        calls[name] += 1
        return original(*args)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.fixture(scope="module")
def smirnov_plan():
    return make_plan(decomposition_for(_smirnov(), 2, "bfs", 2), (1000, 1000, 1000), 2)


def test_composing_two_steps_multiplies_each_inner_part_once_per_distinct_coefficient(monkeypatch):
    calls = _counting(monkeypatch, Fraction, "__mul__")
    decomposition = decomposition_for(_smirnov(), 2, "bfs", 2)
    terms = sum(len(part) for p in decomposition.products for part in (p.u, p.v, p.w))
    assert terms == 331_776 and calls["__mul__"] * 50 < terms  # 3,496 products; one per term had been 331,776


def _kron(outer, inner, rows: int, cols: int):
    """The Kronecker product of two parts as the definition has it, term by term."""
    return tuple(sorted(((oi * rows + ii, oj * cols + ij), co * ci) for (oi, oj), co in outer for (ii, ij), ci in inner))


@pytest.mark.parametrize("order", ["smirnov outside", "winograd outside"])
def test_a_composed_decomposition_is_the_kronecker_product_term_by_term(order):
    steps = [one_step(_smirnov().main), one_step(bilinear.load(ROOT / "algorithms/winograd.bl").algorithms[-1])]
    outer, inner = steps if order == "smirnov outside" else steps[::-1]
    composed = compose(outer, inner)
    expected = tuple(
        GlobalProduct(_kron(p.u, q.u, inner.rows, inner.inner), _kron(p.v, q.v, inner.inner, inner.cols),
                      _kron(p.w, q.w, inner.rows, inner.cols))
        for p in outer.products for q in inner.products
    )
    assert composed.products == expected and composed.name == f"{outer.name}*{inner.name}"


def test_the_text_writes_each_distinct_term_once(monkeypatch, smirnov_plan):
    calls = _counting(monkeypatch, describe, "format_coefficient")
    lines = describe.describe_plan(smirnov_plan, 8, (False, False))
    assert len(lines) == 1 + 2 + 1600 + 3 + 1  # the title, a line per rank, per product, per fringe product, the data
    distinct = {(side, index, c.numerator, c.denominator) for p in smirnov_plan.decomposition.products
                for side, part in zip("ABC", (p.u, p.v, p.w)) for index, c in part if abs(c) != 1}
    assert calls["format_coefficient"] <= len(distinct) < 2_000  # had been 212,992, one per term


def test_the_proof_of_the_1600_products_takes_matrix_products(monkeypatch, smirnov_plan):
    """Every partial sum of its proof is an integer below 2⁵³, so a slice is a float64 matrix product
    (exact): summed term by term, the proof had taken 2.7 s."""
    monkeypatch.setattr(check, "_indexed", lambda *args: pytest.fail("summed term by term"))
    proof = check.verify_plan(smirnov_plan)
    assert (proof.ok, proof.band_classes, proof.terms) == (True, 1, 3330)


def test_the_proof_of_sparse_products_goes_term_by_term(monkeypatch):
    """Winograd⁴'s 2,401 products hold a few blocks each: as matrix products its slices take
    2.8·10⁹ multiply-adds for 10⁷ terms (the proof had gone from 0.6 s to 4.3 s)."""
    monkeypatch.setattr(check, "_multiplied", lambda *args: pytest.fail("summed as matrix products"))
    plan = make_plan(decomposition_for(bilinear.load(ROOT / "algorithms/winograd.bl"), 8, "bfs", 4), (4096,) * 3, 8)
    assert check.verify_plan(plan).ok


def test_matrix_products_and_term_by_term_sums_find_the_same_differences():
    """Winograd² over 3 ranks with one wrong weight: each slice as a float64 matrix product and
    summed term by term, in int64 and in Python integers, comes out the same."""
    plan = make_plan(decomposition_for(bilinear.load(ROOT / "algorithms/winograd.bl"), 3, "bfs", 2), (101, 67, 53), 3)
    last = plan.decomposition.products[-1]
    (block, weight), *rest = last.w
    wrong = plan.decomposition.products[:-1] + (GlobalProduct(last.u, last.v, ((block, -weight), *rest)),)
    plan = replace(plan, decomposition=replace(plan.decomposition, products=wrong))
    tensor = check._Tensor(plan)
    (held, _), = check._band_classes(plan).items()
    expected, _ = check._expected(tensor, Counter(f.kind for f in plan.fringe))
    mode = check._slicing_mode(tensor, held)

    def slices(found) -> list:
        return sorted(tuple(int(x) for x in slab.ravel()) for slab in found)

    multiplied = slices(check._multiplied(tensor, held, expected, mode))
    assert multiplied == slices(check._indexed(tensor, held, expected, mode, np.int64))
    assert multiplied == slices(check._indexed(tensor, held, expected, mode, object))
    assert sum(x != 0 for slab in multiplied for x in slab) == len(last.u) * len(last.v)  # the wrong C block's terms
