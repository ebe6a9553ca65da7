"""Leaf products to one fused-kernel launch: slots, exact coefficients, α (CPU, no kernel run)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from bilinear.lower.product import reference_update
from bilinear.runtime.backend import LeafProduct, Term
from bilinear.runtime.fused import FusedLaunches, build_launch, exact


def _emulate(launch):
    """What the kernel would do to the launch's C views."""
    deltas = reference_update(launch.spec, launch.views, launch.alpha, np)
    for c, delta in zip(launch.views[2], deltas):
        c[...] += delta


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


class _RecordingStage:
    """Stands in for ProductStage: counts the structs it prepares and the launches it makes."""

    made: list = []

    def __init__(self, spec):
        self.spec = spec
        self.prepared, self.launched = 0, []
        _RecordingStage.made.append(self)

    def parameters(self, views, M, N, K, alpha=1.0):
        self.prepared += 1
        return [("struct", alpha, tuple(id(v) for side in views[0] for v in side))]

    def launch(self, parameters, M, N):
        self.launched.append((parameters, M, N))


def _gemm(A, B, C, alpha=1.0, overwrite=False):
    return [LeafProduct((Term(1.0, A),), (Term(1.0, B),), (Term(alpha, C),), overwrite)]


def test_launches_are_prepared_once_per_set_of_views():
    _RecordingStage.made.clear()
    launches = FusedLaunches(_RecordingStage)
    A, B, C = np.ones((4, 3)), np.ones((3, 5)), np.ones((4, 5))
    for _ in range(3):
        launches.run(_gemm(A, B, C), "float64")
    (stage,) = _RecordingStage.made
    assert stage.prepared == 1 and len(stage.launched) == 3 and stage.launched[0][1:] == (4, 5)
    launches.run(_gemm(A, B, C, alpha=2.0), "float64")  # same kernel, new α: new struct
    launches.run(_gemm(A, B, C[:, :5].copy()), "float64")  # other C pointer: new struct
    assert len(_RecordingStage.made) == 1 and stage.prepared == 3
    launches.run(_gemm(A, B, C, overwrite=True), "float64")  # overwriting: C zeroed, then the same launch
    assert not C.any() and stage.prepared == 3 and len(stage.launched) == 6


def test_prepared_launches_are_bounded_and_hold_no_arrays():
    _RecordingStage.made.clear()
    launches = FusedLaunches(_RecordingStage, capacity=2)
    A, B = np.ones((2, 2)), np.ones((2, 2))
    outputs = [np.zeros((2, 2)) for _ in range(3)]
    for C in outputs + outputs[:1]:  # the first C was evicted by the third
        launches.run(_gemm(A, B, C), "float64")
    assert _RecordingStage.made[0].prepared == 4
    assert len(launches._prepared) == 2
    assert not any(isinstance(x, np.ndarray) for x in _leaves(list(launches._prepared)))


def _leaves(value):
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def test_zero_alpha_prepares_nothing():
    _RecordingStage.made.clear()
    launches = FusedLaunches(_RecordingStage)
    A = np.ones((2, 2))
    launches.run(_gemm(A, A, A.copy(), alpha=0.0), "float64")
    assert _RecordingStage.made == []
