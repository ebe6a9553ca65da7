"""cuBLASLt's algorithms restored from their bytes, and matmul's tuned calls (issue 13).

Run on the GPU machine with ``python -m pytest -m gpu``; skipped elsewhere.
"""

from __future__ import annotations

import pytest

import bilinear
from bilinear import matmul_api
from bilinear.dispatch import Choice, Tuned
from bilinear.measure import error_bound, float64_reference, random_inputs, relative_error
from bilinear.runtime import prepared_calls

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.fixture(scope="module")
def lt(cp):
    from bilinear.runtime import cublaslt

    cp.matmul(cp.ones((2, 2)), cp.ones((2, 2)))  # CuPy loads libcublas, beside which libcublasLt is found
    return cublaslt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(256, 256, 256), (1000, 300, 70), (4096, 4096, 64)])
def test_every_offered_algorithm_restored_from_its_bytes_is_right(cp, lt, dtype, shape):
    M, K, N = shape
    layout, device = lt.Layout.contiguous(dtype, M, K, N), cp.cuda.Device().id
    offered = lt.algorithms(layout, device)
    assert offered and all(len(bytes.fromhex(algorithm.data)) == lt.ALGORITHM_BYTES for algorithm in offered)
    A, B, C = random_inputs(cp, M, K, N, dtype, seed=1)
    exact = float64_reference(A, B, C, 1.5, 0.5)
    for algorithm in offered:
        run = lt.bound(layout, algorithm.data, device)
        assert run is not None
        out = C.copy()
        run(A, B, out, 1.5, 0.5)
        assert relative_error(out, exact, A, B) <= error_bound(dtype, K, 2.0, 0)


def test_matmul_runs_a_tuned_algorithm_and_cublas_own_where_it_does_not_apply(cp, lt, monkeypatch):
    M, K, N, dtype = 512, 384, 256, "float64"
    layout, device = lt.Layout.contiguous(dtype, M, K, N), cp.cuda.Device().id
    algorithm = lt.algorithms(layout, device)[0]
    ran = []
    bound = lt.bound

    def counted(*args):
        run = bound(*args)
        return None if run is None else (lambda *operands: (ran.append(1), run(*operands)))

    monkeypatch.setattr(lt, "bound", counted)
    matmul_api._TUNED.clear()
    prepared_calls.forget()

    def product(A, B, C, version=None) -> bool:
        """matmul with the tuned row at this shape; whether cuBLASLt ran, after checking the result."""
        tuned = Tuned(dtype, M, K, N, algorithm.data, version or lt.version(), 1.01, algorithm.workspace_bytes)
        monkeypatch.setattr("bilinear.dispatch.dispatch", lambda *a, **k: Choice("cublaslt", reason="test", tuned=tuned))
        before, exact = len(ran), float64_reference(A, B, C, -0.5, 2.0)
        assert bilinear.matmul(A, B, out=C, alpha=-0.5, beta=2.0) is C
        assert relative_error(C, exact, A, B) <= error_bound(dtype, K, 2.0, 0)
        return len(ran) > before

    A, B, C = random_inputs(cp, M, K, N, dtype, seed=2)
    assert product(A, B, C)
    assert product(A, B, C)  # the prepared call of this signature
    assert prepared_calls.signature(A, B, C) in prepared_calls._prepared
    # 16-byte aligned (the same signature) but not 256: cuBLAS's own, since the algorithm was offered for 256
    shifted = cp.empty(M * K + 2, dtype=dtype)
    shifted[2:] = A.ravel()
    assert not product(shifted[2:].reshape(M, K), B, C)
    wide = cp.zeros((M, K + 8), dtype=dtype)
    wide[:, :K] = A
    assert not product(wide[:, :K], B, C)  # not contiguous: measured on contiguous operands only
    matmul_api._TUNED.clear()
    prepared_calls.forget()
    assert not product(A, B, C, version=1)  # another cuBLASLt's bytes
    matmul_api._TUNED.clear()
    prepared_calls.forget()


def test_the_grid_tunes_a_shape_where_the_table_keeps_cublas(cp, lt, tmp_path, monkeypatch):
    """``dispatch_grid.py --tune --only 2048x2048x2048``: one row, the other sections untouched."""
    import json

    from bilinear.dispatch import TABLE, dispatch, parse_table
    from bilinear.paths import algorithms_dir

    monkeypatch.syspath_prepend(str(algorithms_dir().parent / "benchmarks"))
    import dispatch_grid

    table = tmp_path / "dispatch.json"
    table.write_text(TABLE.read_text())
    dispatch_grid.tune_table(table, 3, ["float64"], {(2048, 2048, 2048)})
    data, committed = json.loads(table.read_text()), json.loads(TABLE.read_text())
    rows = [row for row in data["cublaslt"]["rows"] if (row["dtype"], row["m"], row["k"], row["n"]) == ("float64", 2048, 2048, 2048)]
    assert len(rows) == 1 and rows[0]["library_version"] == lt.version() and rows[0]["confirmed"]
    assert data["cublaslt"]["generated_by"].endswith("--tune --table " + str(table) + " --dtype float64 --only 2048x2048x2048")
    assert data["recursive"] == committed["recursive"] and data["rows"] == committed["rows"]
    choice = dispatch(2048, 2048, 2048, "float64", table=parse_table(data))
    assert choice.kernel == ("cublaslt" if rows[0]["speedup"] >= 1.0 else "cublas")


def test_a_tuned_product_can_be_the_first_thing_a_process_multiplies(cp):
    """The committed table tunes FP64 2048³: a fresh process's first matmul there once failed, since
    libcublasLt is found beside the libcublas CuPy had not loaded yet."""
    import subprocess
    import sys

    from bilinear.dispatch import dispatch

    assert dispatch(2048, 2048, 2048, "float64").kernel == "cublaslt"
    program = ("import cupy, bilinear; r = cupy.random.default_rng(1); A = r.standard_normal((2048, 2048)); "
               "B = r.standard_normal((2048, 2048)); C = bilinear.matmul(A, B); "
               "print(float(cupy.abs(C - A @ B).max() / cupy.abs(A @ B).max()))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 1e-13
