"""``bilinear.matmul`` on the GPU against a float64 reference, over drawn shapes, layouts, scalars and kernels.

Each drawn case calls matmul three times on the same arrays with new values in them, so the checked
call, the prepared call and (for a fast scheme that keeps its workspace) the captured and replayed
graph each meet data they have not seen; every result must be within the error bound of what ran,
and A and B must come back bit for bit.  Run on the GPU machine with ``python -m pytest -m gpu``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.dispatch import Choice, Recursive
from bilinear.measure import error_bound, error_scale, float64_reference, relative_error
from bilinear.runtime import graph_cache, prepared_calls

pytestmark = pytest.mark.gpu

GROWTH = 2.5  # above Winograd's 2.23 and RSMM's ρ per level (measure.error_bound)
SMALL = [1, 2, 3, 7, 16, 31, 64, 127, 128, 129, 255, 256, 257, 500, 513]
# (levels, breadth, launch, leaf) of winograd or rsmm, as dispatch.json's rows name them
FAST = [("winograd", 1, 1, "batched", "cublas"), ("winograd", 2, 2, "streams", "cublas"),
        ("winograd", 2, 1, "batched", "cublas"), ("rsmm", 1, 0, "serial", "cublas"),
        ("rsmm", 2, 1, "streams", "cublas"), ("winograd", 0, 0, "serial", "ozaki"),
        ("winograd", 1, 0, "serial", "ozaki")]


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@st.composite
def cases(draw):
    """(shape, dtype, layouts of A, B and out, alpha, beta, what runs: "table", "inplace" or a FAST row)."""
    skinny = draw(st.sampled_from(["square", "tall", "wide-k"]))
    if skinny == "tall":  # TSM2L's shapes: k and n small
        shape = (draw(st.sampled_from([4097, 20000, 100003])), draw(st.integers(1, 16)), draw(st.integers(1, 16)))
    elif skinny == "wide-k":  # TSM2R's: n small, k large
        shape = (draw(st.sampled_from([1024, 4096, 5000])), draw(st.sampled_from([1024, 4096, 8191])),
                 draw(st.integers(1, 16)))
    else:
        shape = tuple(draw(st.sampled_from(SMALL)) for _ in range(3))
    runs = draw(st.sampled_from(["table", "inplace", *range(len(FAST))]))
    layouts = tuple(draw(st.sampled_from(["contiguous", "pitched", "offset"])) for _ in range(3))
    alpha = draw(st.sampled_from([1.0, -0.5, 3.0]))
    beta = draw(st.sampled_from([0.0, 1.0, -2.0]))
    return shape, draw(st.sampled_from(["float32", "float64"])), layouts, alpha, beta, runs


def _laid_out(cp, values, layout: str):
    """A matrix holding ``values``: contiguous, a column slice of a wider one (a pitch), or one
    element in from a larger one's corner (a pitch and an address not aligned to 16 bytes)."""
    rows, cols = values.shape
    if layout == "contiguous":
        return values.copy()
    wider = cp.full((rows + 1, cols + 3), cp.nan, dtype=values.dtype)  # NaN: a read past the view shows
    view = wider[:rows, :cols] if layout == "pitched" else wider[1:, 1 : cols + 1]
    view[...] = values
    return view


def _forced(runs, shape, dtype):
    """The dispatch decision a case forces, with its levels; None where the table decides."""
    if not isinstance(runs, int):
        return None, 1 if runs == "inplace" else 0
    scheme, levels, breadth, launch, leaf = FAST[runs]
    config = Recursive(dtype, *shape, scheme, levels, breadth, 1.5, 0, launch, leaf)
    return Choice("recursive", reason="drawn", config=config), levels


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases())
def test_matmul_is_within_its_bound_and_leaves_a_and_b_alone_on_every_path(cp, case):
    (M, K, N), dtype, layouts, alpha, beta, runs = case
    choice, levels = _forced(runs, (M, K, N), dtype)
    prepared_calls.forget()
    graph_cache.forget()
    rng = cp.random.RandomState(M * 7 + K * 5 + N)
    A, B, out = (_laid_out(cp, rng.standard_normal(dims, dtype=dtype), layout)
                 for dims, layout in zip(((M, K), (K, N), (M, N)), layouts))
    with pytest.MonkeyPatch.context() as patch:
        if choice is not None:
            patch.setattr("bilinear.dispatch.dispatch", lambda *args, **kwargs: choice)
        if runs == "inplace":
            patch.setattr("bilinear.dispatch.in_place_choice", lambda *args, **kwargs: ("msmes", 1))
        for call in range(3):
            A[...] = rng.standard_normal((M, K), dtype=dtype)
            B[...] = rng.standard_normal((K, N), dtype=dtype)
            A0, B0 = A.copy(), B.copy()
            exact = float64_reference(A, B, out, alpha, beta)
            scale = error_scale(A, B, alpha, beta, out)  # what the call sums: β·out too
            result = bilinear.matmul(A, B, out=out, alpha=alpha, beta=beta, inplace=runs == "inplace")
            assert result is out
            error = relative_error(out, exact, A0, B0, scale)
            assert error <= error_bound(dtype, K, GROWTH, levels), (call, error)
            if runs != "inplace":  # in place restores them only up to rounding (test_matmul_gpu.py)
                assert bool((A == A0).all()) and bool((B == B0).all()), call
            for name, view in (("A", A), ("B", B), ("out", out)):  # nothing written around a view
                if view.base is not None:
                    assert int(cp.isnan(view.base).sum()) == view.base.size - view.size, (call, name)
    prepared_calls.forget()
    graph_cache.forget()
