"""The work `bilinear plan` does on ⟨3,3,6;40⟩² (1,600 products, 331,776 coefficients), counted
rather than timed: `plan smirnov336-40-960 --steps 2` took 5.3 s, most of it in 331,776 Fraction
products composing the steps, 212,992 coefficients formatted one by one for the text, and the proof
summed term by term; counts hold on any machine, where a time bound on a shared CI machine would
either flake or catch nothing."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from conftest import ROOT, scheme_file

import bilinear
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
