"""Prepared calls (bilinear.runtime.prepared_calls): a signature the checked path validated is
issued again with only what the signature does not fix checked.  NumPy arrays stand in for CuPy's
here; tests/test_matmul_gpu.py runs bilinear.matmul's prepared calls on the GPU."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bilinear.runtime import prepared_calls
from bilinear.runtime.numpy_backend import NumpyBackend


@pytest.fixture(autouse=True)
def numpy_signatures(monkeypatch):
    monkeypatch.setattr(prepared_calls, "array_types", {np.ndarray: lambda x: (-1, x.ctypes.data)})
    prepared_calls.forget()
    yield
    prepared_calls.forget()


def _operands(m=6, k=4, n=3, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype), np.zeros((m, n), dtype)


def _remember(A, B, out, calls: list):
    gemm = NumpyBackend().gemm

    def run(A, B, C, alpha, beta):
        calls.append((alpha, beta))
        gemm(A, B, C, alpha, beta)

    prepared_calls.remember(A, B, out, run, lambda: np.empty((A.shape[0], B.shape[1]), A.dtype))


def test_a_remembered_signature_is_issued_with_new_arrays_and_scalars():
    calls: list = []
    A, B, C = _operands()
    _remember(A, B, C, calls)
    A2, B2, C2 = _operands(seed=1)
    C2[...] = 1.0
    assert prepared_calls.issue(A2, B2, C2, 2, 0.5) is C2
    assert calls == [(2, 0.5)]
    np.testing.assert_allclose(C2, 2 * A2 @ B2 + 0.5, rtol=1e-14)


@pytest.mark.parametrize("change", ["dtype", "shape", "strides", "alignment", "out given"])
def test_any_other_signature_is_not_prepared(change):
    calls: list = []
    A, B, C = _operands()
    _remember(A, B, C, calls)
    if change == "dtype":
        A, B, C = _operands(dtype="float32")
    elif change == "shape":
        A, B, C = _operands(m=7)
    elif change == "strides":
        A = np.zeros((6, 8))[:, :4]
    elif change == "alignment":
        A = np.zeros(6 * 4 + 1)[1:].reshape(6, 4)
    else:
        C = None
    assert prepared_calls.issue(A, B, C, 1.0, 0.0) is None
    assert calls == []


def test_calls_the_signature_cannot_vouch_for_take_the_checked_path():
    calls: list = []
    A, B, C = _operands(m=4, k=4, n=4)
    _remember(A, B, C, calls)
    assert prepared_calls.issue(A, B, A, 1.0, 0.0) is None  # out is A: the checked path refuses it
    assert prepared_calls.issue(A, B, C, np.float64(1.0), 0.0) is None  # not a plain Python scalar
    assert prepared_calls.issue(A, B, C, 1.0, 1j) is None
    _remember(A, B, None, calls)
    assert prepared_calls.issue(A, B, None, 1.0, 0.5) is None  # beta without out
    assert calls == []
    C = prepared_calls.issue(A, B, None, 1.0, 0)
    np.testing.assert_allclose(C, A @ B, rtol=1e-14)
    assert calls == [(1.0, 0)]


def test_empty_products_are_not_prepared_and_the_cache_is_bounded(monkeypatch):
    calls: list = []
    _remember(*_operands(k=0), calls)
    assert prepared_calls.issue(*_operands(k=0), 1.0, 0.0) is None
    monkeypatch.setattr(prepared_calls, "LIMIT", 2)
    for m in (1, 2, 3):
        _remember(*_operands(m=m), calls)
    assert prepared_calls.issue(*_operands(m=1), 1.0, 0.0) is None  # the oldest went
    assert prepared_calls.issue(*_operands(m=3), 1.0, 0.0) is not None


def test_other_array_types_are_never_prepared():
    calls: list = []
    A, B, C = _operands()
    _remember(A.tolist(), B, C, calls)
    assert prepared_calls.signature(A.tolist(), B, C) is None
    assert prepared_calls.issue(A.tolist(), B, C, 1.0, 0.0) is None


def test_scalars_the_checked_path_refuses_take_it():
    """A prepared call took any Python float: alpha = nan or inf (or 1e39 in float32, inf there)
    gave a NaN product where the checked path raises."""
    calls: list = []
    for dtype, huge in (("float64", float("inf")), ("float32", 1e39)):
        A, B, C = _operands(dtype=dtype)
        _remember(A, B, C, calls)
        for alpha, beta in ((float("nan"), 0.0), (huge, 0.0), (1.0, huge), (1.0, float("nan"))):
            assert prepared_calls.issue(A, B, C, alpha, beta) is None
    assert calls == []
    # as the checked path: 3.4028235e38 rounds to float32's largest, and is taken as that
    with np.errstate(over="ignore"):
        assert prepared_calls.issue(A, B, C, 3.4028235e38, 0.0) is C
    assert calls == [(float(np.finfo(np.float32).max), 0.0)]


def test_a_prepared_call_takes_alpha_and_beta_as_the_dtype_holds_them():
    """The checked path takes beta = 1e-46 as float32's 0 (so C is not read); the prepared one
    passed 1e-46 on, and NumPy's float64 arithmetic then read C's NaN."""
    calls: list = []
    A, B, C = _operands(dtype="float32")
    _remember(A, B, C, calls)
    C[...] = np.nan
    assert prepared_calls.issue(A, B, C, 1, 1e-46) is C
    assert calls == [(1.0, 0.0)] and not np.isnan(C).any()


def test_an_alpha_that_is_zero_in_the_dtype_goes_back_to_the_checked_path():
    """alpha = 1e-46 is float32's 0, which the checked path takes as "A and B are not read"; the prepared
    call launched with alpha 0, and a NaN in A came through as 0·NaN."""
    calls: list = []
    A, B, C = _operands(dtype="float32")
    _remember(A, B, C, calls)
    A[0, 0] = np.nan
    assert prepared_calls.issue(A, B, C, 1e-46, 0.0) is None and calls == []


@pytest.mark.parametrize("alpha, beta", [(10**400, 0), (1, 10**400)], ids=["alpha", "beta"])
def test_integers_past_float64_go_back_to_the_checked_path(alpha, beta):
    """They passed the range check (float64's bound is inf) and raised OverflowError in the conversion,
    where the checked path raises its ValueError."""
    calls: list = []
    A, B, C = _operands()
    _remember(A, B, C, calls)
    assert prepared_calls.issue(A, B, C, alpha, beta) is None and calls == []


def test_the_signature_holds_every_operands_device():
    """Only A's device was in it: B or out on another GPU reused the launch bound for the first."""
    def located(x):
        return (getattr(x, "device_number", 0), x.ctypes.data)

    class OnDevice(np.ndarray):
        device_number = 0

    prepared_calls.array_types[OnDevice] = located
    A, B, C = (x.view(OnDevice) for x in _operands())
    B_elsewhere = B.copy().view(OnDevice)
    B_elsewhere.device_number = 1
    C_elsewhere = C.copy().view(OnDevice)
    C_elsewhere.device_number = 1
    key = prepared_calls.signature(A, B, C)
    assert prepared_calls.signature(A, B_elsewhere, C) != key and prepared_calls.signature(A, B, C_elsewhere) != key


def test_a_call_prepared_on_one_gpu_is_not_issued_from_another(monkeypatch):
    """The signature held the operands' devices, not the current one: the same arrays under
    `with cupy.cuda.Device(1):` ran the call bound for GPU 0 with GPU 1's cuBLAS handle."""
    current = [0]
    monkeypatch.setattr(prepared_calls, "current_device", lambda: current[0])
    calls: list = []
    A, B, C = _operands()
    _remember(A, B, C, calls)
    current[0] = 1
    assert prepared_calls.issue(A, B, C, 1.0, 0.0) is None and calls == []
    current[0] = 0
    assert prepared_calls.issue(A, B, C, 1.0, 0.0) is C and calls == [(1.0, 0.0)]


def test_a_bound_cublas_call_keeps_each_calls_scalars_apart(monkeypatch):
    """bound_gemm wrote alpha and beta into one host array per closure, which prepared calls share
    across threads: a call paused between writing them and cuBLAS reading them (host pointer mode)
    ran with the other thread's.  A fake CuPy and cuBLAS force that interleaving."""
    import ctypes
    import threading
    import types

    from bilinear.runtime import cupy_backend
    from bilinear.runtime.cupy_backend import CupyBackend

    seen = []

    class FakeCublas:
        CUBLAS_POINTER_MODE_HOST = CUBLAS_OP_N = 0

        def setStream(self, handle, stream):
            pass

        def setPointerMode(self, handle, mode):
            pass

        def sgemm(self, handle, ta, tb, n, m, k, alpha_at, b, ldb, a, lda, beta_at, c, ldc):
            read = ctypes.c_float.from_address
            seen.append((threading.current_thread().name, read(alpha_at).value, read(beta_at).value))

    paused, resumed = threading.Event(), threading.Event()

    def current_stream():
        if threading.current_thread().name == "first" and not paused.is_set():
            paused.set()  # after the scalars are written, before cuBLAS reads them
            resumed.wait(timeout=30)
        return types.SimpleNamespace(ptr=7, is_capturing=lambda: False)

    backend = object.__new__(CupyBackend)
    backend.xp = types.SimpleNamespace(cuda=types.SimpleNamespace(
        get_current_stream=current_stream, device=types.SimpleNamespace(get_cublas_handle=lambda: 1)))
    monkeypatch.setattr(cupy_backend, "current_device", lambda: 0)
    backend._devices, backend.capturing = {}, False
    backend.__dict__["_cublas"] = FakeCublas()
    run = backend.bound_gemm(4, 4, 4, 4, 4, 4, np.float32)
    view = types.SimpleNamespace(data=types.SimpleNamespace(ptr=0))

    def second():
        paused.wait(timeout=30)
        try:
            run(view, view, view, -5.0, 1.0)
        finally:  # the first goes on whatever happened here: a failure is the assertion's, not a hang
            resumed.set()

    threads = [threading.Thread(name="first", target=run, args=(view, view, view, 2.0, 0.0)),
               threading.Thread(name="second", target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(seen) == [("first", 2.0, 0.0), ("second", -5.0, 1.0)]


@settings(max_examples=200, deadline=None)
@given(double=st.booleans(), alpha=st.floats(allow_nan=False, width=64), beta=st.floats(allow_nan=False, width=64))
def test_host_scalars_hold_alpha_and_beta_as_numpy_rounds_them(double, alpha, beta):
    """cuBLAS reads alpha and beta from the buffer _host_scalars fills: the values NumPy's array of
    the dtype held, as bound_gemm passed before (float32's 1e-46 is 0, its 1e39 inf)."""
    import ctypes

    from bilinear.runtime.cupy_backend import _host_scalars

    dtype, scalar = (np.float64, ctypes.c_double) if double else (np.float32, ctypes.c_float)
    with np.errstate(over="ignore"):
        expected = np.array((alpha, beta), dtype=dtype)
    alpha_at, beta_at = _host_scalars(double, alpha, beta)
    assert [scalar.from_address(alpha_at).value, scalar.from_address(beta_at).value] == expected.tolist()
