"""Leaf products to one fused-kernel launch: slots, exact coefficients, α (CPU, no kernel run)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from bilinear.runtime.backend import LeafProduct, Term
from bilinear.runtime.fused import build_launch, exact


def _emulate(launch):
    """What the kernel computes for a spec: targets[t] += α·coef_t·(Σ left)(Σ right)."""
    a_views, b_views, c_views = launch.views
    for product in launch.spec.products:
        left = sum(float(t.coef) * a_views[t.slot] for t in product.left)
        right = sum(float(t.coef) * b_views[t.slot] for t in product.right)
        value = left @ right
        for t in product.targets:
            c_views[t.slot][...] += launch.alpha * float(t.coef) * value


def test_shared_views_share_slots_and_results_match():
    rng = np.random.default_rng(0)
    A, B, C = (rng.standard_normal((8, 8)) for _ in range(3))
    a11, a22, b11, b22 = A[:4, :4], A[4:, 4:], B[:4, :4], B[4:, 4:]
    c11, c22 = C[:4, :4], C[4:, 4:]
    products = [
        LeafProduct((Term(1.0, a11), Term(1.0, a22)), (Term(1.0, b11), Term(1.0, b22)), (Term(1.5, c11), Term(1.5, c22))),
        LeafProduct((Term(-0.5, a22),), (Term(1.0, b11),), (Term(-3.0, c22),)),
    ]
    expected = C.copy()
    expected[:4, :4] += 1.5 * (a11 + a22) @ (b11 + b22)
    expected[4:, 4:] += 1.5 * (a11 + a22) @ (b11 + b22) - 3.0 * (-0.5 * a22) @ b11
    launch = build_launch(products, "float64")
    assert (launch.spec.n_a, launch.spec.n_b, launch.spec.n_c) == (2, 2, 2)
    assert launch.alpha == 1.5
    assert [float(t.coef) for t in launch.spec.products[1].targets] == [-2.0]
    _emulate(launch)
    assert np.allclose(C, expected)


def test_structure_is_independent_of_pointers_and_alpha():
    rng = np.random.default_rng(1)
    def products(alpha):
        A, B, C = (rng.standard_normal((4, 4)) for _ in range(3))
        return [LeafProduct((Term(1.0, A),), (Term(1.0, B),), (Term(alpha, C[:2]), Term(-alpha, C[2:])))]
    first, second = build_launch(products(2.0), "float64"), build_launch(products(7.0), "float64")
    assert first.spec == second.spec and first.alpha == 2.0 and second.alpha == 7.0


def test_zero_alpha_launches_nothing():
    A = np.ones((2, 2))
    assert build_launch([LeafProduct((Term(1.0, A),), (Term(1.0, A),), (Term(0.0, A.copy()),))], "float64") is None


def test_exact_recovers_small_rationals():
    assert exact(1 / 3) == Fraction(1, 3) and exact(-0.75) == Fraction(-3, 4) and exact(2.0) == 2
