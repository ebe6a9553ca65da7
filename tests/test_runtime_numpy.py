"""The launch plan on the NumPy backend: every shipped scheme, levels 1-3, both leaves, odd sizes."""

from __future__ import annotations

import numpy as np
import pytest

import bilinear
from bilinear.measure import error_bound, random_inputs, relative_error
from bilinear.ir import Multiply
from bilinear.lower.plan import LAUNCH_PRODUCTS
from bilinear.runtime.compiled import CompiledProduct
from bilinear.runtime.numpy_backend import NumpyBackend

from conftest import ALGORITHMS

SIZES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (37, 21, 50), (64, 64, 64)]


@pytest.fixture(scope="module")
def compiled():
    cache = {}

    def get(path, **options):
        key = (path, tuple(sorted(options.items())))
        if key not in cache:
            cache[key] = bilinear.compile(path, backend="numpy", **options)
        return cache[key]

    return get


def _restored(after, before, levels):
    """In-place inputs come back up to rounding: each level adds and subtracts blocks of
    magnitude up to about 2·max|x|, so a few ulps of that per level."""
    tolerance = 8 * levels * np.finfo(before.dtype).eps * max(np.abs(before).max(initial=0.0), 1.0)
    return np.abs(after.astype(np.float64) - before).max(initial=0.0) <= tolerance


def _check(product, M, K, N, alpha=1.0, beta=0.0, seed=1):
    A, B, C = random_inputs(np, M, K, N, product.dtype, seed)
    A0, B0, C0 = A.copy(), B.copy(), C.copy()
    product(A, B, out=C, alpha=alpha, beta=beta)
    exact = alpha * (A0.astype(np.float64) @ B0.astype(np.float64)) + beta * C0
    levels = product.lowered.options.levels
    assert _restored(A, A0, levels) and _restored(B, B0, levels)
    return relative_error(C, exact, A0, B0)


@pytest.mark.parametrize("path", ALGORITHMS, ids=[p.stem for p in ALGORITHMS])
@pytest.mark.parametrize("leaf", ["cublas", "fused"])
@pytest.mark.parametrize("levels", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_of_cases(compiled, path, leaf, levels, dtype):
    product = compiled(path, levels=levels, leaf=leaf, dtype=dtype)
    beta = 0.0 if product.lowered.levels[0].schedule.overwrites_c else 0.5
    rank = product.lowered.levels[0].algorithm.rank
    # ⟨3,3,3;23⟩ at three levels is 12167 leaf products per size on the CPU: the odd sizes suffice.
    sizes = SIZES if rank**levels <= 1000 else SIZES[:3]
    for M, K, N in sizes:
        error = _check(product, M, K, N, alpha=1.5, beta=beta)
        assert error <= error_bound(dtype, K, 3.0, levels), (M, K, N, error)


def test_recursion_really_happens():
    calls = []

    class Counting(NumpyBackend):
        def gemm(self, *args):
            calls.append(args[0].shape)
            super().gemm(*args)

    lowered = bilinear.api.lower_program("algorithms/msmes.bl", levels=3)
    CompiledProduct(lowered, Counting())(*random_inputs(np, 64, 64, 64, "float64")[:2])
    assert len(calls) == 7**3 and set(calls) == {(8, 8)}


def test_deep_fused_trees_form_sums_in_temporaries_above_one_launch():
    """grey333 carried down three levels was 12,167 products in 28 kernels holding 1,901
    pipelines; above the last 23 products its levels now form sums in temporaries with single
    targets, so every branch launches the same few kernels."""
    lowered = bilinear.api.lower_program("algorithms/grey333.bl", levels=3, leaf="fused")
    assert [plan.schedule.name for plan in lowered.levels] == ["grey333_cublas", "grey333_cublas", "grey333_fused"]
    upper_products = [s for plan in lowered.levels[:2] for _, s in plan.schedule.statements() if isinstance(s, Multiply)]
    assert len(upper_products) == 2 * 23 and all(len(s.targets.terms) == 1 for s in upper_products)
    specs = [launch.spec for launch in lowered.launches_for(243, 243, 243)]
    assert len(specs) <= 4
    assert max(len(spec.products) for spec in lowered.product_specs()) <= LAUNCH_PRODUCTS


@pytest.mark.parametrize(
    "path, levels, carried",
    [("strassen", 3, 3), ("winograd", 2, 1), ("grey333", 1, 1), ("msmes", 2, 0)],
)
def test_fused_levels_carry_sums_while_one_launch_stays_small(path, levels, carried):
    """strassen carries its sums down three levels (343 products, 10 sum shapes); winograd's
    two levels would need 14 shapes (76 s in nvcc), so its outer level uses temporaries;
    msmes has its own schedule at every level."""
    lowered = bilinear.api.lower_program(f"algorithms/{path}.bl", levels=levels, leaf="fused")
    names = [plan.schedule.name for plan in lowered.levels]
    assert sum(name.endswith("_fused") for name in names) == carried
    assert all(name.endswith("_fused") for name in names[levels - carried :])


def test_peeling_fixes_up_odd_rows_and_columns():
    product = bilinear.compile("algorithms/strassen.bl", levels=2, backend="numpy")
    A, B, _ = random_inputs(np, 13, 11, 9, "float64")
    assert np.allclose(product(A, B), A @ B, rtol=1e-13, atol=1e-13)


def test_in_place_schedule_allocates_nothing():
    product = bilinear.compile("algorithms/msmes.bl", levels=3, backend="numpy")
    assert product.workspace_bytes(4096, 4096, 4096) == 0
    assert product.workspace_bytes(1023, 517, 2049) == 0


def test_rsmm_workspace_is_two_blocks_per_level():
    product = bilinear.compile("algorithms/rsmm.bl", levels=1, backend="numpy")
    assert product.workspace_bytes(1024, 1024, 1024) == 2 * 512 * 512 * 8


def test_overwriting_schedule_rejects_beta():
    product = bilinear.compile("algorithms/rsmm.bl", levels=1, backend="numpy")
    A, B, C = random_inputs(np, 8, 8, 8, "float64")
    with pytest.raises(ValueError, match="beta must be 0"):
        product(A, B, out=C, beta=1.0)


def test_views_with_a_leading_dimension():
    product = bilinear.compile("algorithms/msmes.bl", levels=2, backend="numpy")
    big_a, big_b, big_c = random_inputs(np, 40, 40, 40, "float64")
    A, B, C = big_a[3:35, 5:30], big_b[5:30, 1:33], big_c[2:34, 4:36]
    expected = 2.0 * (A @ B) + 3.0 * C
    product(A, B, out=C, alpha=2.0, beta=3.0)
    assert np.allclose(C, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (lambda: (np.ones((4, 5)), np.ones((4, 5))), "inner dimensions differ"),
        (lambda: (np.ones((4, 4), dtype=np.float32), np.ones((4, 4))), "compiled for float64"),
        (lambda: (np.ones(4), np.ones((4, 4))), "must be a matrix"),
        (lambda: (np.ones((4, 4)).T[:, ::2], np.ones((2, 4))), "row-major"),
        (lambda: ([[1.0]], np.ones((1, 1))), "must be a numpy array"),
    ],
)
def test_bad_arrays_are_rejected_with_the_reason(arguments, message):
    product = bilinear.compile("algorithms/strassen.bl", backend="numpy")
    with pytest.raises(ValueError, match=message):
        product(*arguments())


def test_out_must_not_overlap_the_inputs():
    product = bilinear.compile("algorithms/strassen.bl", backend="numpy")
    A = np.ones((4, 4))
    with pytest.raises(ValueError, match="overlap"):
        product(A, np.ones((4, 4)), out=A)


def test_dlpack_inputs_are_accepted():
    from helpers.arrays import DLPackOnly as Wrapped

    product = bilinear.compile("algorithms/strassen.bl", backend="numpy")
    A, B, _ = random_inputs(np, 6, 6, 6, "float64")
    assert np.allclose(product(Wrapped(A), Wrapped(B)), A @ B)


def test_a_call_on_another_device_takes_workspace_of_its_own():
    """A product kept its workspace between calls of one shape, whatever device the next ran on: a
    call on a second GPU would have handed the first GPU's memory to its kernels.  Here a backend
    whose current device changes stands in for CuPy's."""
    class TwoDevices(NumpyBackend):
        current = 0

        def device(self):
            return self.current

    backend = TwoDevices()
    product = CompiledProduct(bilinear.api.lower_program("algorithms/strassen.bl", levels=1), backend)
    A, B = random_inputs(np, 64, 64, 64, "float64")[:2]
    product(A, B)
    first = list(product.executor.workspace.values())  # held: ids of freed views come back
    product(A, B)
    assert first and all(a is b for a, b in zip(product.executor.workspace.values(), first))  # one device
    backend.current = 1
    out = product(A, B)
    assert not any(a is b for a in product.executor.workspace.values() for b in first)
    assert relative_error(out, A @ B, A, B) <= error_bound("float64", 64, 3.0, 1)


def test_ctrl_c_in_an_in_place_call_waits_for_the_restore(monkeypatch, ctrl_c_as_at_a_terminal):
    """Ctrl-C halfway through msmes on NumPy left the caller's A and B transformed by O(1) (a hunt)."""
    import signal

    product = bilinear.compile("msmes", levels=2, backend="numpy")
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    A0, B0 = A.copy(), B.copy()
    real_gemm, calls = product.executor.gemm, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3:
            signal.raise_signal(signal.SIGINT)  # as a terminal's Ctrl-C would
        return real_gemm(*args)

    monkeypatch.setattr(product.executor, "gemm", interrupted)
    with pytest.raises(KeyboardInterrupt):
        product(A, B)
    assert len(calls) == 49  # every leaf ran, then the interrupt; A and B as after a call (restored to rounding)
    assert np.allclose(A, A0, rtol=0, atol=1e-13) and np.allclose(B, B0, rtol=0, atol=1e-13)


def test_an_error_in_an_in_place_call_says_the_inputs_were_being_overwritten(monkeypatch):
    product = bilinear.compile("msmes", levels=1, backend="numpy")
    rng = np.random.default_rng(6)
    A, B = rng.standard_normal((8, 8)), rng.standard_normal((8, 8))
    real_gemm, calls = product.executor.gemm, []

    def fails(*args):
        calls.append(1)
        if len(calls) == 3:
            raise MemoryError
        return real_gemm(*args)

    monkeypatch.setattr(product.executor, "gemm", fails)
    with pytest.raises(MemoryError) as caught:
        product(A, B)
    assert caught.value.__notes__ == [
        "msmes overwrites A and B in place and restores them in its last stages: this call stopped before those ran, "
        "so A and B may no longer hold their values"]
