"""Fused product launches are lowered ahead of time: slots by buffer name, exact coefficients,
one spec set per depth; the runtime only binds views (CPU, no kernel run)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import bilinear
from bilinear.lower.leaves import ProblemForm, product_launch, sub_problem, own_keys, TOP
from bilinear.lower.product import reference_update
from bilinear.runtime.backend import Backend
from bilinear.runtime.compiled import CompiledProduct
from bilinear.runtime.fused import FusedLaunches
from bilinear.runtime.numpy_backend import NumpyBackend


def test_msmes_fused_launches_are_lowered_with_exact_coefficients():
    lowered = bilinear.api.lower_program("algorithms/msmes.bl", levels=2, leaf="fused")
    launches = lowered.product_launches()
    assert launches and {launch.depth for launch in launches} == {0, 1, 2}
    for launch in launches:
        for product in launch.spec.products:
            for term in product.left + product.right + product.targets:
                assert isinstance(term.coef, Fraction)
    # The last level's products1 stage: four products over A21, A11, A22, A12 and B11, B12, B21, B22.
    stage = next(l for l in launches if l.depth == 2 and len(l.spec.products) == 4)
    assert (stage.spec.n_a, stage.spec.n_b) == (4, 4)


def test_sub_problem_names_slots_by_buffer_and_keeps_fractions():
    """A statement under a parent whose targets are +C21 -C22/3: the child's targets expand to the
    parent's views of its C block, with exact products of coefficients."""
    program = bilinear.load("algorithms/msmes.bl")
    lowered = bilinear.api.lower_program(program, levels=1, leaf="fused")
    plan = lowered.levels[0]
    parent = ProblemForm((Fraction(1),), (Fraction(1),), (Fraction(1), Fraction(-1, 3)))
    statement = next(s for step in plan.steps if hasattr(step, "statements") for s in step.statements
                     if len(s.targets.terms) == 2)
    form, keys = sub_problem(statement, parent, own_keys(parent), plan)
    assert len(form.targets) == 4 and Fraction(-1, 3) in {abs(t) * -1 for t in form.targets} | set(form.targets)
    assert all(isinstance(key, tuple) and key[1].startswith("C") for key in keys[2])
    launch = product_launch([(form, keys), (form, keys)], "float64", 1)
    assert launch.spec.n_c == 4 and launch.slots[0] == launch.slots[1]  # same buffers, same slots


def test_the_spec_set_is_the_same_whatever_the_pointers():
    first = bilinear.api.lower_program("algorithms/strassen.bl", levels=2, leaf="fused")
    second = bilinear.api.lower_program("algorithms/strassen.bl", levels=2, leaf="fused")
    assert [s.name for s in first.product_specs()] == [s.name for s in second.product_specs()]
    assert bilinear.api.lower_program("algorithms/strassen.bl", levels=2).product_specs() == ()


class _Emulating(NumpyBackend):
    """Runs each fused launch by the kernel's contract (``reference_update``) and records it."""

    def __init__(self):
        self.launched = []

    def fused(self, launch, views, dims, alpha):
        self.launched.append(launch.spec.name)
        for c, delta in zip(views[2], reference_update(launch.spec, views, alpha, np)):
            c += delta


@pytest.mark.parametrize(
    "path, levels", [("msmes", 2), ("strassen", 3), ("rsmm", 2), ("grey333", 2), ("winograd", 2)]
)
def test_a_run_launches_exactly_the_lowered_launches_for_its_size(path, levels):
    lowered = bilinear.api.lower_program(f"algorithms/{path}.bl", levels=levels, leaf="fused")
    names = {s.name for s in lowered.product_specs()}
    rng = np.random.default_rng(0)
    for M, K, N in [(37, 21, 50), (36, 36, 36), (9, 8, 7)]:
        backend = _Emulating()
        product = CompiledProduct(lowered, backend)
        A, B = rng.standard_normal((M, K)), rng.standard_normal((K, N))
        C = product(A.copy(), B.copy(), alpha=0.5)
        assert np.allclose(C, 0.5 * A @ B)
        assert set(backend.launched) <= names
        assert set(backend.launched) == {launch.spec.name for launch in lowered.launches_for(M, K, N, beta=0.0)}


def test_no_fraction_guessing_or_recording_backend_is_left():
    import bilinear.runtime.fused as fused
    import bilinear.runtime.prepare as prepare

    assert not hasattr(fused, "exact") and not hasattr(prepare, "RecordingBackend")
    assert "fused" in Backend.__abstractmethods__


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


_GEMM = product_launch([(TOP, own_keys(TOP))], "float64", 0)


def _run(launches, A, B, C, alpha=1.0):
    launches.run(_GEMM, ([A], [B], [C]), (A.shape[0], B.shape[1], A.shape[1]), alpha)


def test_launches_are_prepared_once_per_set_of_views():
    _RecordingStage.made.clear()
    launches = FusedLaunches(_RecordingStage)
    A, B, C = np.ones((4, 3)), np.ones((3, 5)), np.ones((4, 5))
    for _ in range(3):
        _run(launches, A, B, C)
    (stage,) = _RecordingStage.made
    assert stage.prepared == 1 and len(stage.launched) == 3 and stage.launched[0][1:] == (4, 5)
    _run(launches, A, B, C, alpha=2.0)  # same kernel, new α: new struct
    _run(launches, A, B, C[:, :5].copy())  # other C pointer: new struct
    assert len(_RecordingStage.made) == 1 and stage.prepared == 3


def test_prepared_launches_are_bounded_and_hold_no_arrays():
    _RecordingStage.made.clear()
    launches = FusedLaunches(_RecordingStage, capacity=2)
    A, B = np.ones((2, 2)), np.ones((2, 2))
    outputs = [np.zeros((2, 2)) for _ in range(3)]
    for C in outputs + outputs[:1]:  # the first C was evicted by the third
        _run(launches, A, B, C)
    assert _RecordingStage.made[0].prepared == 4
    assert len(launches._prepared) == 2
    assert not any(isinstance(x, np.ndarray) for x in _leaves(list(launches._prepared)))


def _leaves(value):
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value
