"""Breadth-first levels (bilinear.lower.breadth, bilinear.runtime.breadth): the Kronecker plan,
its generated kernels, runs on the NumPy backend, the workspace limit, and the GPU."""

from __future__ import annotations

import re
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from conftest import ALGORITHMS, ROOT, check_golden

import bilinear
from bilinear.api import lower_program
from bilinear.cli import main
from bilinear.lower.breadth import lower_breadth_first
from bilinear.lower.options import Options
from bilinear.frontend.loader import load_program

NVCC = shutil.which("nvcc")
SIZES = [(1, 1, 1), (2, 2, 2), (37, 29, 41), (64, 64, 64), (101, 67, 53)]


def _integers(rng, rows, cols):
    return rng.integers(-4, 5, size=(rows, cols)).astype(np.float64)


@pytest.mark.parametrize("levels, breadth", [(1, 1), (2, 1), (2, 2)])
def test_every_shipped_algorithm_multiplies_breadth_first(shipped, levels, breadth):
    """Small-integer matrices: every coefficient of the shipped schemes is a dyadic rational
    of small height, so the product is exact; A and B are never written."""
    product = bilinear.compile(shipped, levels=levels, breadth=breadth, backend="numpy")
    rng = np.random.default_rng(levels * 10 + breadth)
    for M, K, N in SIZES:
        A, B, C = _integers(rng, M, K), _integers(rng, K, N), _integers(rng, M, N)
        A0, B0 = A.copy(), B.copy()
        beta = 0.0 if product.lowered.levels and product.lowered.levels[0].schedule.overwrites_c else 2.0
        out = product(A, B, out=C.copy(), alpha=3.0, beta=beta)
        np.testing.assert_array_equal(out, 3.0 * (A0 @ B0) + beta * C, err_msg=f"{shipped.stem} {(M, K, N)}")
        if not product.writes_inputs:
            np.testing.assert_array_equal(A, A0)
            np.testing.assert_array_equal(B, B0)


def test_the_plan_is_the_kronecker_power():
    program = load_program(ROOT / "algorithms/strassen.bl")
    plan = lower_breadth_first((program.main,) * 2, "float64", "strassen")
    assert plan.grid == (4, 4, 4) and plan.rank == 49
    assert len(plan.split_a.outputs) == len(plan.split_b.outputs) == 49
    # M1 = (A11 + A22)(B11 + B22) squared: the first product reads four A blocks of the 4x4 grid.
    assert plan.split_a.outputs[0] == ((0, Fraction(1)), (5, Fraction(1)), (10, Fraction(1)), (15, Fraction(1)))
    assert plan.workspace_elements(64, 64, 64) == 49 * 3 * 16 * 16
    assert plan.main_dims(37, 29, 41) == (36, 28, 40)


def test_breadth_first_source_matches_golden():
    source = lower_program(ROOT / "algorithms/winograd.bl", levels=1, breadth=1).cuda_source()
    check_golden("winograd-float64-breadth1.cu", source)


@pytest.mark.skipif(NVCC is None, reason="needs nvcc")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nvcc_compiles_the_breadth_first_kernels(tmp_path, dtype):
    source = tmp_path / "breadth.cu"
    source.write_text(lower_program(ROOT / "algorithms/winograd.bl", levels=2, breadth=2, dtype=dtype).cuda_source())
    result = subprocess.run(
        [NVCC, "-arch=sm_90", "-std=c++17", "-Xptxas", "-O0", "-c", str(source), "-o", str(tmp_path / "b.o")],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


def test_the_workspace_limit_moves_levels_depth_first():
    product = bilinear.compile(ROOT / "algorithms/msmes.bl", levels=2, breadth=1, workspace_limit=0, backend="numpy")
    assert product.workspace_bytes(64, 64, 64) == 0 and product.breadth_levels(64, 64, 64) == 0
    roomy = bilinear.compile(ROOT / "algorithms/msmes.bl", levels=2, breadth=1, workspace_limit=1 << 30, backend="numpy")
    assert roomy.breadth_levels(64, 64, 64) == 1
    assert roomy.workspace_bytes(64, 64, 64) == 7 * 3 * 16 * 16 * 8
    rng = np.random.default_rng(3)
    A, B = _integers(rng, 66, 65), _integers(rng, 65, 67)
    np.testing.assert_array_equal(product(A, B), A @ B)


def test_a_limit_nothing_fits_is_one_message():
    product = bilinear.compile(ROOT / "algorithms/rsmm.bl", levels=1, breadth=1, workspace_limit=0, backend="numpy")
    with pytest.raises(ValueError, match=r"needs 16384 bytes of workspace even depth-first, more than the limit of 0"):
        product(np.ones((64, 64)), np.ones((64, 64)))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"levels": 1, "breadth": 2}, "breadth must be between 0 and the 1 level(s) asked for, not 2"),
        ({"levels": 1, "breadth": 1, "leaf": "fused"}, "use cublas leaves (--leaf cublas, leaf='cublas'; or another single-view leaf such as ozaki) with breadth-first levels"),
        ({"levels": 1, "workspace_limit": -1}, "workspace_limit must be a number of bytes from 0 to 2^63 - 1, not -1"),
    ],
)
def test_bad_breadth_options_say_why(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Options(**options)


def test_cli_takes_breadth_and_a_limit(capsys):
    assert main(["run", "algorithms/winograd.bl", "-n", "70", "--levels", "2", "--breadth", "2",
                 "--workspace-limit", "1M", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    assert "breadth-first" in out


def test_cli_refuses_a_bad_limit(capsys):
    with pytest.raises(SystemExit):
        main(["run", "algorithms/winograd.bl", "--workspace-limit", "lots"])
    assert "expected bytes such as 0, 512M or 24G, not 'lots'" in capsys.readouterr().err


@pytest.mark.gpu
@pytest.mark.parametrize("path", ALGORITHMS, ids=[p.stem for p in ALGORITHMS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_breadth_first_on_the_gpu(path, dtype):
    import cupy

    from bilinear.lower.decompose import growth_ratio
    from bilinear.measure import error_bound, relative_error

    breadth = 2 if "grey" not in path.stem else 1  # grey333²: 529 products, a long NVRTC compile
    product = bilinear.compile(path, levels=2, breadth=breadth, dtype=dtype, backend="cupy")
    growth = growth_ratio(load_program(path).algorithm(product.lowered.breadth.decomposition.name.split("^")[0]))
    rng = cupy.random.default_rng(7)
    for M, K, N in [(1, 1, 1), (517, 1000, 333), (1024, 1024, 1024), (1031, 777, 1029)]:
        A = rng.standard_normal((M, K), dtype=dtype)
        B = rng.standard_normal((K, N), dtype=dtype)
        A0, B0 = A.copy(), B.copy()
        out = product(A, B)
        reference = A0.astype(cupy.float64) @ B0.astype(cupy.float64)
        error = relative_error(out, reference, A0, B0)
        assert error <= error_bound(dtype, K, growth, 2), (path.stem, M, K, N, error)
        if not product.writes_inputs:
            assert bool((A == A0).all()) and bool((B == B0).all())


def test_graphs_need_the_gpu():
    product = bilinear.compile(ROOT / "algorithms/winograd.bl", levels=1, backend="numpy")
    A = np.ones((4, 4))
    with pytest.raises(ValueError, match="graphs capture CUDA launches; compile with backend='cupy' to capture"):
        product.capture(A, A.copy(), np.zeros((4, 4)))


@pytest.mark.gpu
@pytest.mark.parametrize("path, levels, breadth", [("msmes", 2, 0), ("rsmm", 2, 1), ("winograd", 2, 2)])
def test_a_captured_product_replays_it(path, levels, breadth):
    import cupy

    product = bilinear.compile(ROOT / f"algorithms/{path}.bl", levels=levels, breadth=breadth, backend="cupy")
    rng = cupy.random.default_rng(1)
    A, B = rng.standard_normal((1031, 1029)), rng.standard_normal((1029, 1027))
    out = cupy.zeros((1031, 1027))
    captured = product.capture(A, B, out)
    assert float(cupy.abs(out).max()) == 0.0  # capturing runs nothing on the caller's arrays
    captured()
    captured.synchronize()
    assert float(cupy.abs(out - A @ B).max()) < 1e-10
    A += 1.0  # new values, same arrays: the replay reads them
    captured()
    captured.synchronize()
    assert float(cupy.abs(out - A @ B).max()) < 1e-10


@pytest.mark.parametrize("launch", ["streams", "batched"])
def test_launch_modes_compute_the_same_product(launch):
    rng = np.random.default_rng(5)
    A, B = _integers(rng, 67, 70), _integers(rng, 70, 69)
    for path, levels, breadth in (("msmes", 2, 0), ("rsmm", 2, 1), ("winograd", 2, 2)):
        if launch == "batched" and not breadth:  # no breadth-first leaves to batch: refused, not ignored
            with pytest.raises(ValueError, match=r"^batched launches \(--launch batched, launch='batched'\) make breadth-first leaves one batched GEMM"):
                bilinear.compile(ROOT / f"algorithms/{path}.bl", levels=levels, launch=launch, backend="numpy")
            continue
        product = bilinear.compile(ROOT / f"algorithms/{path}.bl", levels=levels, breadth=breadth, launch=launch,
                                   backend="numpy")
        np.testing.assert_array_equal(product(A.copy(), B.copy()), A @ B)


def test_the_model_prices_concurrent_leaves_as_one_product():
    from bilinear.model import Ceilings, predict

    ceilings = Ceilings("test", "float64", 3e12, ((512, 10e12), (1024, 40e12), (4096, 60e12)))
    serial = lower_program(ROOT / "algorithms/winograd.bl", levels=2, breadth=2)
    streams = lower_program(ROOT / "algorithms/winograd.bl", levels=2, breadth=2, launch="streams")
    assert predict(streams, ceilings, 4096, 4096, 4096) < predict(serial, ceilings, 4096, 4096, 4096)


def test_an_unknown_launch_mode_says_which_exist():
    with pytest.raises(ValueError, match="launch must be one of serial, streams, batched, not 'parallel'"):
        Options(launch="parallel")


@pytest.mark.gpu
@pytest.mark.parametrize("launch", ["streams", "batched"])
def test_launch_modes_on_the_gpu(launch):
    import cupy

    rng = cupy.random.default_rng(2)
    A, B = rng.standard_normal((2051, 1029)), rng.standard_normal((1029, 2047))
    reference = A @ B
    for path, levels, breadth in (("msmes", 1, 0), ("strassen", 2, 0), ("winograd", 2, 2)):
        if launch == "batched" and not breadth:  # refused: nothing to batch
            continue
        product = bilinear.compile(ROOT / f"algorithms/{path}.bl", levels=levels, breadth=breadth, launch=launch)
        out = product(A, B)
        assert float(cupy.abs(out - reference).max()) < 1e-10, path
        captured_out = cupy.zeros_like(out)
        captured = product.capture(A, B, captured_out)
        captured()
        captured.synchronize()
        assert float(cupy.abs(captured_out - reference).max()) < 1e-10, path


def test_compile_writes_the_breadth_first_kernels_and_says_where_they_run(tmp_path):
    import json

    assert main(["compile", "algorithms/winograd.bl", "-o", str(tmp_path), "--levels", "2", "--breadth", "1"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    breadth = manifest["host"]["breadth_first"]
    assert breadth["levels"] == 1 and len(breadth["kernels"]) == 3
    source = (tmp_path / "winograd.cu").read_text()
    for kernel in breadth["kernels"]:
        assert f"__global__ void {kernel}(" in source


def test_the_manifest_names_each_breadth_first_levels_scheme(tmp_path):
    """A hybrid's manifest listed its depth-first levels only: the breadth-first levels' schemes were in
    the kernels' code and no field."""
    import json

    schemes = ",".join(str(ROOT / "algorithms" / name) for name in ("strassen.bl", "winograd.bl", "naive2x2.bl"))
    assert main(["compile", "algorithms/strassen.bl", "--levels-schemes", schemes, "--breadth", "2",
                 "-o", str(tmp_path)]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [level["algorithm"] for level in manifest["levels"]] == ["strassen"]
    assert manifest["host"]["breadth_first"]["algorithms"] == [
        {"algorithm": "winograd", "shape": [2, 2, 2]}, {"algorithm": "naive2x2", "shape": [2, 2, 2]}]


def test_release_workspace_drops_what_the_last_call_kept():
    product = bilinear.compile(ROOT / "algorithms/rsmm.bl", levels=2, breadth=1, backend="numpy")
    rng = np.random.default_rng(4)
    A, B = _integers(rng, 64, 64), _integers(rng, 64, 64)
    product(A, B)
    assert product.executor.workspace and product.executor.breadth.workspace
    # what matmul counts as its own when it asks whether a call's workspace fits
    kept = [*product.executor.workspace.values(), *(v for vs in product.executor.breadth.workspace.values() for v in vs)]
    assert product.held_workspace_bytes() == sum(view.nbytes for view in kept) > 0
    product.release_workspace()
    assert not product.executor.workspace and not product.executor.breadth.workspace
    assert product.held_workspace_bytes() == 0
    np.testing.assert_array_equal(product(A, B), A @ B)


@pytest.mark.parametrize(("levels", "breadth"), [(0, 0), (1, 0), (2, 1)])
def test_a_leaf_lets_its_buffer_go_when_the_product_runs_at_a_new_shape(monkeypatch, levels, breadth):
    """The ozaki leaf keeps one buffer, grown to its largest leaf; its product at a new shape has it
    let go first, so a product that once ran at 16384 does not keep 21 GiB for calls at 4096 (the
    schedule's own workspace is made anew per shape already).  Never within a call: its leaves of
    several sizes share the buffer, and a graph capture must allocate nothing."""
    from bilinear.runtime import executor as executor_module

    released = []

    class Leaf:  # the backend's GEMM, with the buffer protocol of OzakiLeaf
        def __init__(self, options, backend):
            self.gemm = backend.gemm

        def __call__(self, *args):
            self.gemm(*args)

        def release(self):
            released.append(True)

    monkeypatch.setattr(executor_module, "leaf_gemm", Leaf)
    product = bilinear.compile(ROOT / "algorithms/winograd.bl", levels=levels, breadth=breadth, backend="numpy")
    rng = np.random.default_rng(6)
    shapes = [(64, 64, 64), (64, 64, 64), (32, 48, 40), (32, 48, 40), (64, 64, 64)]
    counts = []
    for m, k, n in shapes:
        A, B = _integers(rng, m, k), _integers(rng, k, n)
        np.testing.assert_array_equal(product(A, B), A @ B)
        counts.append(len(released))
    assert counts == [1, 1, 2, 2, 3]


@pytest.mark.gpu
def test_run_and_bench_report_the_workspace_a_product_holds():
    """Workspace is kept from call to call; the reported extra bytes are still what a call needs."""
    from bilinear.bench import bench_one
    from bilinear.runtime.run import run_once

    product = bilinear.compile(ROOT / "algorithms/rsmm.bl", levels=1, breadth=1)
    expected = product.workspace_bytes(1024, 1024, 1024)
    assert expected > 0
    for _ in range(2):  # a second run finds the workspace of the first and must not report 0
        assert run_once(product, 1024, 1024, 1024, repeat=1).extra_bytes == expected
        assert bench_one(product, "rsmm", 1024, 1024, 1024, None, repeat=1, breakdown=False).extra_bytes == expected


def test_shapes_that_alternate_allocate_the_workspace_once():
    """A new shape released the runner's buffer: calls alternating 64x64 and 65x64 allocated on every
    call (20 in 20), and a CUDA graph of either shape went stale at the other's call."""
    product = bilinear.compile(ROOT / "algorithms/strassen.bl", levels=2, breadth=2, backend="numpy")
    allocations = []
    real_empty = product.backend.empty
    product.backend.empty = lambda *args: allocations.append(args) or real_empty(*args)
    rng = np.random.default_rng(6)
    B = rng.standard_normal((64, 64))
    for call in range(20):
        A = rng.standard_normal((64 + call % 2, 64))
        np.testing.assert_allclose(product(A, B), A @ B, rtol=1e-12, atol=1e-12)
    assert len([args for args in allocations if args[1] == 1]) == 3  # the runner's three parts (rows x 1), once


def test_each_part_of_the_workspace_is_an_allocation_of_its_own():
    """Carved from one buffer, the parts started where the one before ended (49·5·5 doubles in); some
    processes then ran the leaves at half speed on the GPU. Each part is its own allocation, aligned
    as the allocator aligns it, as before this session."""
    product = bilinear.compile(ROOT / "algorithms/strassen.bl", levels=2, breadth=2, backend="numpy")
    A = np.random.default_rng(7).standard_normal((20, 20))
    product(A, A.copy())
    runner = product.executor.breadth
    (views,) = runner.workspace.values()
    assert [view.ctypes.data == part.ctypes.data for view, part in zip(views, runner._parts)] == [True] * 3
    assert not any(np.shares_memory(one, other) for i, one in enumerate(runner._parts) for other in runner._parts[i + 1:])
    assert runner.held_bytes == product.workspace_bytes(20, 20, 20)


BUILD_REFUSAL = ("winograd^4's breadth-first split and merge kernels have 115248 terms, more than 70000: nvcc or "
                 "NVRTC would take many minutes to build them (they are unrolled); use fewer breadth-first levels")


def test_breadth_first_kernels_too_large_to_build_are_refused_by_compile(tmp_path, capsys):
    """grey333 --levels 3 --breadth 3 wrote a 15 MB .cu that nvcc was still building after 25 minutes (an
    audit); NVRTC took more than 5 minutes for winograd at four levels: generated terms cap what is built."""

    out = tmp_path / "lib"
    assert main(["compile", "winograd", "--levels", "4", "--breadth", "4", "-o", str(out)]) == 1
    assert capsys.readouterr().err == f"bilinear compile: {BUILD_REFUSAL}\n" and not out.exists()
    product = bilinear.compile("winograd", levels=4, breadth=4, backend="numpy")  # nothing to build there
    assert product.lowered.breadth.terms == 115248
    assert bilinear.compile("strassen", levels=4, breadth=4, backend="numpy").lowered.breadth.terms == 62208  # built


def test_breadth_first_levels_past_the_product_cap_are_refused_at_once():
    """grey333 with four breadth-first levels (23^4 = 279,841 products in one batch) lowered for minutes
    and 5.6 GB before it was killed; breadth=6 of winograd likewise (a review of the API)."""
    import time

    from bilinear.lower.options import TooLarge

    start = time.perf_counter()
    with pytest.raises(TooLarge) as refused:
        bilinear.compile("grey333", levels=4, breadth=4, backend="numpy")
    assert time.perf_counter() - start < 5
    assert str(refused.value) == ("4 breadth-first levels of grey333 run 279841 products in one batch, more than "
                                  "20000 (lowering them would take minutes and gigabytes); use fewer breadth-first levels")
    assert bilinear.compile("strassen", levels=5, breadth=5, backend="numpy").lowered.breadth.rank == 16807


def test_breadth_first_workspace_grows_only_past_what_it_holds(monkeypatch):
    """Strassen at two breadth-first levels: a call whose leaves fit the buffers takes views of them, and one that
    outgrows them drops every old view with the buffers (source mutations that regrew buffers of exactly the size
    needed, or kept the old views, went unseen)."""
    from bilinear.runtime.breadth import BreadthFirstRunner
    from bilinear.runtime.compiled import make_backend

    backend = make_backend("numpy")
    runner = BreadthFirstRunner(lower_program("strassen", levels=2, breadth=2).breadth, backend)
    made = []
    empty = backend.empty
    monkeypatch.setattr(backend, "empty", lambda *args: made.append(args) or empty(*args))
    runner.reserve(64, 64, 64)
    assert len(made) == 3 and set(runner.workspace) == {(16, 16, 16)}
    runner.reserve(64, 64, 32)  # A's leaves as large, B's and C's smaller: views of the same buffers
    assert len(made) == 3 and set(runner.workspace) == {(16, 16, 16), (16, 16, 8)}
    runner.reserve(64, 64, 128)
    assert len(made) == 6 and set(runner.workspace) == {(16, 16, 32)}


def test_breadth_first_levels_of_two_algorithms_run_their_kronecker_product():
    """Winograd over grey234 breadth-first is ⟨2·2, 2·3, 2·4; 7·20⟩, not Winograd squared (a source mutation that
    took the first algorithm's power went unseen)."""
    from bilinear.lower.breadth import power

    winograd, grey234 = (bilinear.load(name).algorithm(name) for name in ("winograd", "grey234"))
    both = power((winograd, grey234))
    assert (both.name, both.rank, both.rows, both.inner, both.cols) == ("winograd*grey234", 140, 4, 6, 8)
