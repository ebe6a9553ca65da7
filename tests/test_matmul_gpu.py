"""``bilinear.matmul`` on the GPU leaves its inputs bitwise unchanged (issue 12).

Run on the GPU machine with ``python -m pytest -m gpu``; skipped elsewhere.
"""

from __future__ import annotations

import pytest

import bilinear
from bilinear.dispatch import Choice
from bilinear.measure import error_bound, error_scale, float64_reference, random_inputs, relative_error
from bilinear.paths import algorithms_dir
from bilinear.runtime import prepared_calls

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.fixture(autouse=True)
def fresh_prepared_calls():
    """Tests that change the dispatch decision must not meet a call prepared by another test."""
    prepared_calls.forget()
    yield
    prepared_calls.forget()


SHAPES = [(16384, 4096, 2), (100003, 4, 4), (1000, 1000, 1000), (2048, 2048, 2048), (777, 65, 129)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("force_recursive", [False, True])
def test_matmul_leaves_inputs_bitwise_unchanged(cp, shape, dtype, force_recursive, monkeypatch):
    if force_recursive:  # as if the table said the recursive (in-place) scheme wins for this shape
        monkeypatch.setattr("bilinear.dispatch.dispatch", lambda *args, **kwargs: Choice("recursive", reason="test"))
    M, K, N = shape
    A, B, C = random_inputs(cp, M, K, N, dtype, seed=N)
    A0, B0 = A.copy(), B.copy()
    exact = float64_reference(A, B, C, 1.5, 0.5)
    bilinear.matmul(A, B, out=C, alpha=1.5, beta=0.5)
    cp.cuda.Device().synchronize()
    assert bool((A.view(cp.uint8) == A0.view(cp.uint8)).all()) and bool((B.view(cp.uint8) == B0.view(cp.uint8)).all())
    assert relative_error(C, exact, A0, B0) <= error_bound(dtype, K, 2.0, 1)


def test_matmul_inplace_restores_and_multiplies_aliases_without_msmes(cp, monkeypatch):
    monkeypatch.setattr("bilinear.dispatch.in_place_choice", lambda *args, **kwargs: ("msmes", 1))
    A, B, C = random_inputs(cp, 2048, 2048, 2048, "float64", seed=3)
    A0, B0 = A.copy(), B.copy()
    bilinear.matmul(A, B, out=C, inplace=True)
    assert float(cp.abs(A - A0).max()) <= 1e-12 * float(cp.abs(A0).max())
    assert float(cp.abs(B - B0).max()) <= 1e-12 * float(cp.abs(B0).max())
    A0 = A.copy()
    square = bilinear.matmul(A, A, inplace=True)  # A is B: the product without MSMES, A not written
    assert bool((A == A0).all())
    assert float(cp.abs(square - A0 @ A0).max()) <= 1e-12 * float(cp.abs(A0 @ A0).max())


@pytest.mark.parametrize(("shape", "dtype", "kernel"), [
    ((500003, 4, 4), "float32", "tsm2l"), ((16384, 8192, 4), "float32", "tsm2r"), ((777, 65, 129), "float64", "cublas"),
])
def test_repeated_calls_are_prepared_and_right(cp, shape, dtype, kernel):
    """The second call of a signature is a prepared call: new data, new scalars, the same errors."""
    from bilinear.dispatch import dispatch

    M, K, N = shape
    assert dispatch(M, K, N, dtype).kernel == kernel
    for seed, (alpha, beta) in enumerate([(1.0, 0.0), (-0.5, 2.0), (1.5, 0.0)]):
        A, B, C = random_inputs(cp, M, K, N, dtype, seed=seed)
        exact = float64_reference(A, B, C, alpha, beta)
        prepared = prepared_calls.signature(A, B, C) in prepared_calls._prepared
        assert prepared == (seed > 0)
        assert bilinear.matmul(A, B, out=C, alpha=alpha, beta=beta) is C
        assert relative_error(C, exact, A, B) <= error_bound(dtype, K, 2.0, 0)
    fresh = bilinear.matmul(A, B)  # out=None is a signature of its own
    again = bilinear.matmul(A, B)
    assert again is not fresh and bool((again == fresh).all())
    with pytest.raises(ValueError, match="beta"):
        bilinear.matmul(A, B, beta=1.0)
    # out beside A in one buffer: a signature prepared with a buffer of its own; the prepared call's
    # byte ranges meet, so the checked path takes it: column slices of one matrix are apart (A is
    # left alone), and an out reaching into A's last column is refused
    shared, apart = cp.zeros((M, K + N), dtype), cp.zeros((M, K + N), dtype)
    A = shared[:, :K]
    A[...] = random_inputs(cp, M, K, N, dtype, seed=5)[0]
    A0 = A.copy()
    for _ in range(2):
        bilinear.matmul(A, B, out=apart[:, K:])
    assert prepared_calls.signature(A, B, shared[:, K:]) in prepared_calls._prepared
    bilinear.matmul(A, B, out=shared[:, K:])
    assert bool((A == A0).all()) and bool((shared[:, K:] == apart[:, K:]).all())
    with pytest.raises(ValueError, match="overlap"):
        bilinear.matmul(A, B, out=shared[:, K - 1 : K - 1 + N])


@pytest.mark.parametrize(("shape", "kernel"), [((500003, 4, 4), "tsm2l"), ((16384, 8192, 4), "tsm2r"),
                                              ((777, 65, 129), "cublas"), ((8192, 8192, 8192), None)])
def test_alpha_zero_reads_neither_a_nor_b(cp, shape, kernel):
    """out = beta·out, as BLAS: a TSM2 kernel made 0·NaN = NaN.  The signature is prepared first
    (alpha = 1), so the alpha = 0 calls meet a prepared call, which leaves them to the checked path."""
    from bilinear.dispatch import dispatch

    M, K, N = shape
    assert kernel is None or dispatch(M, K, N, "float32").kernel == kernel
    A, B, C = random_inputs(cp, M, K, N, "float32", seed=4)
    out = C.copy()
    for _ in range(2):
        bilinear.matmul(A, B, out=out)
        bilinear.matmul(A, B)
    assert kernel is None or prepared_calls.signature(A, B, out) in prepared_calls._prepared
    A[0, 0] = B[0, 0] = cp.nan
    for _ in range(2):
        out = C.copy()
        assert bilinear.matmul(A, B, out=out, alpha=0.0, beta=0.5) is out
        assert bool((out == 0.5 * C).all())
        assert not bool(cp.isnan(bilinear.matmul(A, B, alpha=0.0)).any())


@pytest.mark.parametrize(("levels", "breadth", "launch", "leaf"), [
    (2, 2, "batched", "cublas"), (2, 2, "streams", "cublas"), (0, 0, "serial", "ozaki"), (1, 0, "serial", "ozaki"),
])
def test_repeated_fast_scheme_calls_replay_a_graph_and_stay_right(cp, levels, breadth, launch, leaf, monkeypatch):
    """A fast scheme's third call on the same arrays replays a CUDA graph: new values in those
    arrays are read, new scalars are new graphs, out=None works, and the results stay right
    (ozaki leaves too: their int8 GEMMs are captured through cublas_capture)."""
    from bilinear.dispatch import Recursive
    from bilinear.runtime import graph_cache

    M, K, N = 1031, 1029, 1027
    config = Recursive("float64", M, K, N, "winograd", levels, breadth, 1.1, 0, launch, leaf)
    monkeypatch.setattr("bilinear.dispatch.dispatch", lambda *args, **kwargs: Choice("recursive", reason="test", config=config))
    graph_cache.forget()
    A, B, C = random_inputs(cp, M, K, N, "float64", seed=11)
    for call, (alpha, beta) in enumerate([(1.0, 0.0)] * 4 + [(-0.5, 2.0)] * 4):
        A += 0.25  # new values in the same arrays
        exact = float64_reference(A, B, C, alpha, beta)
        assert bilinear.matmul(A, B, out=C, alpha=alpha, beta=beta) is C
        assert relative_error(C, exact, A, B) <= error_bound("float64", K, 2.0, levels), call
        # the second call of a key captures it, later ones replay: keys (1, 0) from call 1, (-0.5, 2) from call 5
        assert len(graph_cache._graphs) == (0 if call < 1 else 1 if call < 5 else 2), call
    results = [bilinear.matmul(A, B) for _ in range(4)]
    exact = float64_reference(A, B, C, 1.0, 0.0)
    assert all(relative_error(r, exact, A, B) <= error_bound("float64", K, 2.0, levels) for r in results)
    graph_cache.forget()


def test_a_fast_scheme_that_overwrites_c_gives_a_call_with_beta_to_cublas(cp, monkeypatch):
    """rsmm computes C = A*B over C: where a table chose it, matmul(beta≠0) raised rsmm's own "beta must
    be 0", on the first call and on a call prepared by one with beta = 0 (a GPU property test found it)."""
    from bilinear.dispatch import Recursive
    from bilinear.runtime import graph_cache

    M, K, N = 515, 257, 129
    config = Recursive("float64", M, K, N, "rsmm", 1, 0, 1.5, 0, "serial")
    monkeypatch.setattr("bilinear.dispatch.dispatch", lambda *args, **kwargs: Choice("recursive", reason="test", config=config))
    graph_cache.forget()
    A, B, C = random_inputs(cp, M, K, N, "float64", seed=13)
    for beta in (0.5, 0.0, 0.0, 0.0, -2.0, 0.0, 3.0):  # checked, then prepared (and replayed) calls
        exact = float64_reference(A, B, C, 1.5, beta)
        scale = error_scale(A, B, 1.5, beta, C)
        assert bilinear.matmul(A, B, out=C, alpha=1.5, beta=beta) is C
        assert relative_error(C, exact, A, B, scale) <= error_bound("float64", K, 2.0, 1), beta
    graph_cache.forget()


def test_a_graph_of_ozaki_leaves_holds_their_workspace_and_goes_stale_when_it_is_replaced(cp):
    """The ozaki leaf keeps one workspace buffer between calls; a graph writes the one it was
    captured with, so it holds it, and a call at a larger shape (a new buffer) makes it stale."""
    product = bilinear.compile(algorithms_dir() / "winograd.bl", levels=0, leaf="ozaki", backend="cupy")
    A, B, C = random_inputs(cp, 512, 512, 512, "float64", seed=1)
    direct = cp.empty_like(C)
    product(A, B, out=direct)
    graph = product.capture(A, B, C)
    graph()
    graph.synchronize()
    assert bool((C == direct).all())  # the same passes and int8 GEMMs, replayed
    held = graph.leaf_buffers
    assert len(held) == 1 and graph.holds_current_workspace()
    product(*random_inputs(cp, 1024, 1024, 1024, "float64", seed=2)[:2])  # grows the leaf's buffer
    assert not graph.holds_current_workspace()
    C[...] = 0
    graph()  # still safe: it holds the buffer it writes
    graph.synchronize()
    assert bool((C == direct).all())


def test_matmul_keeps_the_workspace_of_the_scheme_it_runs_only(cp, monkeypatch):
    """Each fast scheme matmul ran kept its workspace (and its graphs theirs): on the H100 the grid
    check held 75 GB after twenty shapes and its next allocation failed.  Now running one scheme
    lets the others' workspace and graphs go."""
    from bilinear import matmul_api as api
    from bilinear.dispatch import Recursive
    from bilinear.runtime import graph_cache

    M = K = N = 1024
    configs = [Recursive("float64", M, K, N, "winograd", 2, 2, 1.1, 0, "batched"),
               Recursive("float64", M, K, N, "winograd", 0, 0, 1.1, 0, "serial", "ozaki")]
    A, B, C = random_inputs(cp, M, K, N, "float64", seed=7)
    exact = float64_reference(A, B, C, 1.0, 0.0)
    graph_cache.forget()
    products = []
    for config in configs:
        monkeypatch.setattr("bilinear.dispatch.dispatch", lambda *a, config=config, **k: Choice("recursive", reason="test", config=config))
        prepared_calls.forget()
        for _ in range(3):  # direct, direct and captured, replayed
            bilinear.matmul(A, B, out=C)
            assert relative_error(C, exact, A, B) <= error_bound("float64", K, 2.0, config.levels)
        products.append(api._fast_product(config))
        assert products[-1].held_workspace_bytes() > 0
        assert [key[0] for key in graph_cache._graphs] == [id(products[-1])]
    assert products[0].held_workspace_bytes() == 0
    graph_cache.forget()


def _ozaki_chosen(cp, monkeypatch, seed: int):
    """matmul choosing the ozaki leaf alone at 1000×700×900 FP64: the product, the operands, its C
    with all of C at once, and the workspace that takes; the product holds none after (its buffer
    would be reused: what is free counts it)."""
    from bilinear import matmul_api as api
    from bilinear.dispatch import Recursive

    M, K, N = 1000, 700, 900
    config = Recursive("float64", M, K, N, "winograd", 0, 0, 1.1, 0, "serial", "ozaki")
    monkeypatch.setattr("bilinear.dispatch.dispatch", lambda *a, **k: Choice("recursive", reason="test", config=config))
    A, B, C = random_inputs(cp, M, K, N, "float64", seed=seed)
    product = api._fast_product(config)
    whole = cp.empty_like(C)
    product(A, B, out=whole)
    needed = product.workspace_bytes(M, K, N)
    product.release_workspace()
    return product, A, B, C, whole, needed


def test_an_ozaki_leaf_that_does_not_fit_the_free_memory_runs_in_tiles_of_c(cp, monkeypatch):
    """matmul gave way to cuBLAS where the ozaki leaf's workspace for all of C was not free; now it runs
    in tiles of C that fit what is, with the same bits as all of C at once, and gives that workspace
    back after each call (kept, it left the caller no memory: tests/test_matmul_memory.py)."""
    from bilinear import matmul_api as api
    from bilinear.runtime import graph_cache

    product, A, B, C, whole, needed = _ozaki_chosen(cp, monkeypatch, seed=11)
    monkeypatch.setattr(api, "_free_bytes", lambda product: needed // 3)
    graph_cache.forget()
    held = []  # what each call held when it gave its workspace back
    release = product.release_workspace
    monkeypatch.setattr(product, "release_workspace", lambda: (held.append(product.held_workspace_bytes()), release()))
    for _ in range(3):  # direct each time: no graph holds the workspace
        bilinear.matmul(A, B, out=C)
        assert bool((C == whole).all())
    assert len(held) == 3 and all(0 < bytes_ <= needed // 3 for bytes_ in held), held
    assert product.held_workspace_bytes() == 0 and product.executor.leaf.budget is not None
    assert not any(key[0] == id(product) for key in graph_cache._graphs)
    monkeypatch.setattr(api, "_free_bytes", lambda product: 0)  # not even one element of C: cuBLAS,
    for forget in (False, True):  # in the remembered call (it fits anew) and in the checked one
        if forget:
            prepared_calls.forget()
        C[...] = cp.nan
        bilinear.matmul(A, B, out=C)
        assert relative_error(C, float64_reference(A, B, C, 1.0, 0.0), A, B) <= error_bound("float64", A.shape[1], 2.0, 0)
    graph_cache.forget()


def test_a_workspace_that_would_leave_less_free_beside_it_goes_back_after_each_call(cp, monkeypatch):
    """After matmul at FP64 24576 on the H100 (the ozaki leaf with all of C at once) it kept 58 GB,
    nearly all that had been free, and the caller's next 4.5 GiB allocation failed.  Now a workspace
    that would leave less than itself free runs all of C at once, directly, and goes back to CuPy's
    pool after each call, where the caller's next allocation finds it."""
    from bilinear import matmul_api as api
    from bilinear.runtime import graph_cache

    product, A, B, C, whole, needed = _ozaki_chosen(cp, monkeypatch, seed=12)
    monkeypatch.setattr(api, "_free_bytes", lambda product: needed + needed // 2)
    graph_cache.forget()
    pool = cp.get_default_memory_pool()
    for _ in range(3):  # the checked call, then two remembered ones
        bilinear.matmul(A, B, out=C)
        assert bool((C == whole).all()) and product.executor.leaf.budget is None  # all of C at once
        assert product.held_workspace_bytes() == 0 and pool.free_bytes() >= needed  # back in the pool
    assert not any(key[0] == id(product) for key in graph_cache._graphs)
    graph_cache.forget()


def test_matmul_checks_the_scalars_range_for_inputs_that_come_through_dlpack(cp):
    """A torch tensor's dtype is not NumPy's, so the range of alpha and beta went unchecked and
    alpha = 1e39 reached cuBLAS's float32 GEMM as inf (a review of the range check)."""
    from helpers.arrays import DLPackOnly

    class Tensor(DLPackOnly):  # with another library's dtype
        dtype = "float32 of another library"

    A = cp.ones((64, 64), dtype=cp.float32)
    with pytest.raises(ValueError, match=r"^alpha = 1e\+39 is past float32's range"):
        bilinear.matmul(Tensor(A), Tensor(A.copy()), alpha=1e39)
    assert float(bilinear.matmul(Tensor(A), Tensor(A.copy()), alpha=2.0)[0, 0]) == 128.0


@pytest.mark.parametrize("shape", [(64, 48, 32), (100000, 16, 16), (4096, 4096, 2)])
def test_a_beta_that_is_zero_in_float32_does_not_read_c_on_either_path(cp, shape):
    """beta = 1e-46 is float32's 0: C's NaN must not come through, on the checked first call or the
    prepared later ones (cuBLAS, TSM2)."""
    m, k, n = shape
    A, B = cp.ones((m, k), dtype=cp.float32), cp.ones((k, n), dtype=cp.float32)
    for _ in range(3):  # the first call checked, the later ones prepared
        C = cp.full((m, n), cp.nan, dtype=cp.float32)
        result = bilinear.matmul(A, B, out=C, beta=1e-46)
        assert bool(cp.all(result == k))


def test_a_refused_out_on_the_gpu_is_not_told_to_pass_a_copy(cp):
    A = cp.ones((64, 64))
    with pytest.raises(ValueError, match="the product is written into out") as refused:
        bilinear.matmul(A, A, out=cp.asfortranarray(cp.zeros((64, 64))))
    assert "ascontiguousarray" not in str(refused.value)


@pytest.mark.parametrize("held", [False, True])
def test_matmul_keeps_cublas_on_a_gpu_its_table_does_not_hold_for(cp, held, tmp_path, monkeypatch):
    """The H100's table had chosen its fast schemes on any GPU."""
    import json

    from bilinear import dispatch, matmul_api
    from bilinear.runtime.cuda import device_info

    data = json.loads(dispatch.TABLE.read_text())
    data["device"] = device_info().name if held else "a GPU of another kind"
    data.pop("checked_on", None)
    (tmp_path / "table.json").write_text(json.dumps(data))
    monkeypatch.setenv(dispatch.TABLE_ENV, str(tmp_path / "table.json"))
    dispatch.forget_decisions()  # the variable is read once per process
    ran = []
    monkeypatch.setattr(matmul_api, "_run_fast", lambda *args: ran.append(args[0]))
    try:
        A, B, C = random_inputs(cp, 4096, 4096, 4096, "float32", seed=5)  # the ozaki leaf's shape in the table
        bilinear.matmul(A, B, out=C)
        assert bool(ran) == held
        if not held:
            assert float(cp.abs(C - A @ B).max()) <= 1e-3 * float(cp.abs(C).max())
    finally:
        monkeypatch.undo()
        dispatch.forget_decisions()
