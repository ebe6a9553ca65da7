"""The benchmark harness and the performance model on the CPU (no timing assertions)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import bilinear
from bilinear.bench import bench_one, read_json
from bilinear.measure import random_inputs
from bilinear.model import choose_levels
from bilinear.cli import main
from conftest import ALGORITHMS
from helpers.schedules import SUM_PRODUCT
from bilinear.lower.plan import Options, lower
from bilinear.model import Ceilings, count_launches, predict, predict_steps

CEILINGS = Ceilings(
    device="test", dtype="float64", bandwidth=3e12,
    gemm_rate=((512, 6e12), (1024, 25e12), (2048, 50e12), (4096, 56e12), (8192, 56e12), (16384, 53e12)),
    launch_seconds=2e-5,
)


def _lowered(path, levels, leaf="cublas"):
    return lower(bilinear.load(path), Options(levels=levels, leaf=leaf))


def test_bench_one_reports_every_column():
    product = bilinear.compile("algorithms/msmes.bl", levels=1, backend="numpy")
    result = bench_one(product, "algorithms/msmes.bl", 64, 64, 64, CEILINGS, repeat=2)
    assert result.ratio == pytest.approx(result.library_ms / result.ours_ms)
    assert result.ours_tflops == pytest.approx(2 * 64**3 / (result.ours_ms / 1e3) / 1e12)
    assert result.error < 1e-14 and result.extra_bytes is None
    assert [s.level_step for s in result.stages][0] == "msmes_from_zero_float64_s0"  # C = A·B: the from-zero plan
    assert result.predicted_ms > 0


def test_model_counts_the_bytes_of_each_elementwise_launch():
    lowered = _lowered("algorithms/msmes.bl", 1)
    steps = predict_steps(lowered, CEILINGS, 16384, 16384, 16384)
    block = 8192 * 8192 * 8
    # C = A·B runs the from-zero plan: pre without C's first change of basis (A 4 read 2 written, B
    # likewise; the accumulating plan's also read 4 C blocks and wrote 3), then C's second change
    # of basis without reading C21, which still holds zero (C11, C12, C22 read; C11, C21, C22 written)
    first, second = [s for s in steps if not s.flops][:2]
    assert first.bytes == 12 * block and second.bytes == 6 * block
    assert first.seconds == pytest.approx(12 * block / 3e12)
    products = [s for s in steps if s.flops]
    assert sum(s.flops for s in products) == pytest.approx(7 * 2 * 8192**3)


def test_model_prefers_the_library_for_small_products_and_recursion_for_large():
    lowered_for = lambda levels, leaf: _lowered("algorithms/strassen.bl", levels, leaf)  # noqa: E731
    assert choose_levels(lowered_for, CEILINGS, 512, 512, 512)[0] == 0
    levels, leaf, seconds = choose_levels(lowered_for, CEILINGS, 16384, 16384, 16384)
    assert levels >= 1 and seconds < 2 * 16384**3 / 53e12


def test_launch_bound_prediction():
    lowered = _lowered("algorithms/msmes.bl", 3)
    assert count_launches(lowered, 4096, 4096, 4096) == 7**3 + 5 * (1 + 7 + 49)
    assert predict(lowered, CEILINGS, 64, 64, 64) == pytest.approx(count_launches(lowered, 64, 64, 64) * 2e-5)


@pytest.mark.parametrize("launch, leaf_calls", [("serial", 49), ("streams", 49), ("batched", 1)])
def test_breadth_first_leaves_are_counted_as_the_host_issues_them(launch, leaf_calls):
    """Two breadth-first levels: two splits and a merge around the leaves, a library call each or one
    strided-batched call.  Counted as 49 calls when batched, the model put Winograd's batched leaves
    at 1.34 ms of host launches at n = 2048 where they ran in 0.45 ms (H100, run3/)."""
    lowered = lower(bilinear.load("algorithms/winograd.bl"), Options(levels=2, breadth=2, launch=launch))
    assert count_launches(lowered, 2048, 2048, 2048) == 3 + leaf_calls
    # NumPy has no batched call: its backend makes one a leaf (a review)
    assert count_launches(lowered, 2048, 2048, 2048, one_launch_fused=False) == 3 + 49


def test_a_graph_replay_is_priced_without_the_host_launches():
    """A CUDA graph issues its launches once, at capture: a replay costs the device's work alone, where
    the direct call of the same product is bound by its 52 launches."""
    from dataclasses import replace

    slow_host = replace(CEILINGS, launch_seconds=1e-4)
    lowered = lower(bilinear.load("algorithms/winograd.bl"), Options(levels=2, breadth=2))
    device = sum(step.seconds for step in predict_steps(lowered, slow_host, 2048, 2048, 2048))
    assert predict(lowered, slow_host, 2048, 2048, 2048, graph=True) == pytest.approx(device)
    assert 52 * slow_host.launch_seconds > device
    assert predict(lowered, slow_host, 2048, 2048, 2048) == pytest.approx(52 * slow_host.launch_seconds)


def test_fused_leaves_on_the_cpu_are_priced_one_product_after_another():
    """The NumPy backend multiplies a fused stage's products one after another; priced as one launch
    of the stage's volume, fused strassen at L2 came out 3.5 times faster than it ran, and
    levels="auto" chose it over NumPy's own product, 3.5 times faster than it (a hunt)."""
    from dataclasses import replace

    cpu = replace(CEILINGS, concurrent=False)
    fused = _lowered("algorithms/strassen.bl", 2, leaf="fused")
    leaves = 49 * 2 * 64**3 / CEILINGS.rate(64, 64, 64)  # its 49 products of 64³, one after another
    assert predict(fused, cpu, 256, 256, 256) == pytest.approx(max(leaves, 49 * cpu.launch_seconds))
    assert predict(fused, CEILINGS, 256, 256, 256) < predict(fused, cpu, 256, 256, 256) / 5  # a stage in one launch
    assert count_launches(fused, 256, 256, 256, one_launch_fused=False) == 49
    assert count_launches(fused, 256, 256, 256) == count_launches(fused, 256, 256, 256, one_launch_fused=True) < 49


# The CPU this repository's model tests price: the ceilings this machine's NumPy measured (2 cores).
CPU = Ceilings(device="cpu x86_64 2 cores", dtype="float64", bandwidth=1.13e10,
               gemm_rate=((64, 2.5e10), (128, 4.1e10), (256, 5.5e10), (512, 5.8e10)), launch_seconds=8.3e-6,
               concurrent=False, sums_in_passes=True)


@pytest.mark.parametrize("path", ALGORITHMS, ids=[p.stem for p in ALGORITHMS])
@pytest.mark.parametrize("levels", [1, 2])
def test_the_model_counts_the_terms_numpy_sums_for_fused_leaves(path, levels, monkeypatch):
    """The NumPy backend forms each fused leaf product's operand sums and target updates term by term;
    the model counts those terms over every leaf product of the whole tree."""
    from bilinear.model import _leaf_terms
    from bilinear.runtime.numpy_backend import NumpyBackend

    lowered = _lowered(str(path), levels, leaf="fused")
    shape = lowered.levels[0].algorithm.shape
    M, K, N = 32 * shape.m**levels, 32 * shape.k**levels, 32 * shape.n**levels  # no peeling
    counted = {"left": 0, "right": 0, "targets": 0}
    evaluated = NumpyBackend.fused

    def counting(self, launch, views, dims, alpha):
        for product in launch.spec.products:
            counted["left"] += len(product.left)
            counted["right"] += len(product.right)
            counted["targets"] += len(product.targets)
        evaluated(self, launch, views, dims, alpha)

    monkeypatch.setattr(NumpyBackend, "fused", counting)
    A, B, _ = random_inputs(np, M, K, N, "float64", seed=2)
    bilinear.compile(str(path), levels=levels, leaf="fused", backend="numpy")(A, B)
    terms = _leaf_terms(lowered, M, K, N)
    assert counted == {"left": terms.left, "right": terms.right, "targets": terms.targets}


def test_fused_leaves_on_the_cpu_pay_for_their_sums():
    """levels="auto" on the CPU chose fused leaves from 512 (L1) and 1024 (L2) up, priced as if their
    sums cost nothing; NumPy forms them in passes, and they ran 3-5 times slower than NumPy's own
    product.  Priced, the library alone wins at these sizes."""
    fused = _lowered("algorithms/strassen.bl", 2, leaf="fused")
    steps = predict_steps(fused, CPU, 256, 256, 256)
    sums = [step for step in steps if step.name == "operand sums"]
    assert len(sums) == 1 and sums[0].seconds == pytest.approx(sums[0].bytes / CPU.bandwidth)
    from bilinear.model import _leaf_terms

    terms = _leaf_terms(fused, 256, 256, 256)
    assert sums[0].bytes == 5 * 8 * (terms.left + terms.right + terms.targets) * 64 * 64
    assert not any(step.name == "operand sums" for step in predict_steps(fused, CEILINGS, 256, 256, 256))

    def lowered_for(levels, leaf):
        return _lowered("algorithms/strassen.bl", levels, leaf=leaf)

    for n in (256, 512, 1024):
        assert choose_levels(lowered_for, CPU, n, n, n, leaves=("cublas", "fused"))[:2] == (0, "cublas")


def test_element_wise_stages_on_the_cpu_are_priced_as_numpys_passes():
    """NumPy evaluates an assignment a term at a time (a temporary each), then stores it: priced as one
    read and one write of each slot, Strassen at one level came out faster than NumPy's product at
    2048, and levels="auto" chose it; it ran in 468 ms against NumPy's 257 on this 2-core CPU."""
    from bilinear.model import elementwise_bytes

    lowered = _lowered("algorithms/msmes.bl", 1)
    steps = predict_steps(lowered, CPU, 2048, 2048, 2048)
    first = next(step for step in steps if not step.flops)
    kernel = lowered.levels[0].from_zero.steps[0]
    block = {"A": 1024**2, "B": 1024**2, "C": 1024**2}
    passes = sum(5 * len(a.terms) + 2 for group in kernel.groups for a in group.assignments)
    assert first.bytes == elementwise_bytes(kernel, block, "float64", in_passes=True) == passes * 1024**2 * 8
    assert first.bytes > elementwise_bytes(kernel, block, "float64")

    def lowered_for(levels, leaf):
        return _lowered("algorithms/strassen.bl", levels, leaf=leaf)

    assert choose_levels(lowered_for, CPU, 2048, 2048, 2048)[:2] == (0, "cublas")
    from dataclasses import replace

    assert choose_levels(lowered_for, replace(CPU, sums_in_passes=False), 2048, 2048, 2048)[0] > 0  # as it chose


def test_bench_command_writes_json_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out, picture = tmp_path / "bench.json", tmp_path / "bench.png"
    code = main(["bench", "algorithms/strassen.bl", "--backend", "numpy", "-n", "32", "64", "--levels", "1", "2",
                 "--repeat", "2", "--json", str(out), "--plot", str(picture)])
    assert code == 0
    results = json.loads(out.read_text())["results"]
    assert {(r["N"], r["levels"]) for r in results} == {(32, 1), (32, 2), (64, 1), (64, 2)}
    assert all(np.isfinite(r["ratio"]) for r in results)
    assert picture.stat().st_size > 1000
    again = read_json(out)  # the file reads back into results, e.g. to plot them again
    assert [(r.N, r.levels, r.ratio) for r in again] == [(r["N"], r["levels"], r["ratio"]) for r in results]


def test_bench_command_without_plot_or_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # an import of it raises ImportError
    code = main(["bench", "algorithms/rsmm.bl", "--backend", "numpy", "-n", "16", "--repeat", "1",
                 "--json", str(tmp_path / "b.json")])
    assert code == 0
    results = json.loads((tmp_path / "b.json").read_text())["results"]
    assert [(r["N"], r["levels"]) for r in results] == [(16, 1), (16, 2)]  # the default levels
    assert all(r["ratio"] > 0 for r in results) and list(tmp_path.iterdir()) == [tmp_path / "b.json"]


def test_plot_without_matplotlib_names_the_extra(monkeypatch, capsys, tmp_path):
    """It said "pip install matplotlib" only, while the package has a plot extra for it."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # an import of it raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.backend_bases", None)
    code = main(["bench", "strassen", "--backend", "numpy", "-n", "8", "--levels", "1", "--plot", str(tmp_path / "p.png")])
    assert code == 1
    assert capsys.readouterr().err == "bilinear bench: --plot needs matplotlib: pip install 'bilinear[plot]' (or matplotlib)\n"


def test_ceilings_time_the_leaves_own_gemm_and_are_cached(tmp_path, monkeypatch):
    import bilinear.runtime.ceilings as bench
    from bilinear.runtime.numpy_backend import NumpyBackend

    calls = []
    monkeypatch.setenv("BILINEAR_CACHE", str(tmp_path))
    monkeypatch.setattr(bench, "COPY_ELEMENTS", 1 << 16)
    monkeypatch.setattr(NumpyBackend, "gemm", lambda self, a, b, c, alpha, beta: calls.append(a.shape))
    ceilings = bench.measure_ceilings(np, "float64", sizes=(512, 1024))
    assert [n for n, _ in ceilings.gemm_rate] == [512, 1024]
    # one warm-up and five timed batches; on the CPU one call of 512³ is long enough to time
    # (the GPU makes 64 calls of 512³ and 8 of 1024³: one is too short for its events)
    assert calls.count((512, 512)) == 6 and calls.count((1024, 1024)) == 6
    stored = json.loads((tmp_path / "ceilings.json").read_text())
    assert list(stored) == [f"{bench._cpu_name()}|float64|leaf-gemm-sustained"]
    assert bench.measure_ceilings(np, "float64", sizes=(512, 1024)) == ceilings  # from the cache: no new calls
    assert calls.count((1024, 1024)) == 6


def test_extra_bytes_runs_the_call_once_and_is_none_on_the_cpu():
    from bilinear.measure import extra_bytes

    calls = []
    assert extra_bytes(lambda: calls.append(1), np) is None and calls == [1]


def test_bench_one_holds_five_matrices_besides_what_the_product_itself_takes(monkeypatch):
    """At n = 32768 in float64 a matrix is 8 GiB: copies of A and B and float64 casts of float64
    arrays put the old harness (nine matrices) over an 80 GB device.  A, B, C, the exact product and
    the library's output are five; beyond them only one temporary (the error's difference) or the
    product's own transient memory (NumPy's temporaries on the CPU, none on the GPU) may be held."""
    import tracemalloc

    from bilinear import measure

    n = 256
    matrix = n * n * 8
    monkeypatch.setattr(measure, "BLOCK_ELEMENTS", 16 * n, raising=False)  # blocks as small beside n as at n = 32768
    product = bilinear.compile("algorithms/msmes.bl", levels=1, backend="numpy")
    bench_one(product, "algorithms/msmes.bl", n, n, n, None, repeat=1)  # warm: caches, kernels
    A, B, C = random_inputs(np, n, n, n, "float64")
    tracemalloc.start()
    product(A, B, out=C)
    own = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    bench_one(product, "algorithms/msmes.bl", n, n, n, None, repeat=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 5 * matrix + max(matrix, own) + 0.1 * matrix, f"peak {peak / matrix:.2f} matrices, product {own / matrix:.2f}"


def test_run_once_holds_seven_matrices_besides_what_the_product_itself_takes(monkeypatch):
    """`bilinear run` at n = 32768 in float64: A, B, C, the originals of A and B (for the
    restoration check), the exact product and our output; cuBLAS's output and the timing reuse
    them, the second exact product is not formed, and the error and restoration checks work by
    row blocks.  It held ten matrices at its peak (80 GB at that size)."""
    import tracemalloc

    from bilinear.runtime.run import run_once

    from bilinear import measure

    n = 256
    matrix = n * n * 8
    monkeypatch.setattr(measure, "BLOCK_ELEMENTS", 16 * n, raising=False)  # row blocks as small beside n as at n = 32768
    product = bilinear.compile("algorithms/msmes.bl", levels=1, backend="numpy")
    run_once(product, n, n, n, repeat=1)
    A, B, C = random_inputs(np, n, n, n, "float64")
    tracemalloc.start()
    product(A, B, out=C)
    own = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    result = run_once(product, n, n, n, repeat=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.within_bound and result.restored_a.normwise < 1e-15
    assert peak < 7 * matrix + max(0.5 * matrix, own) + 0.1 * matrix, f"peak {peak / matrix:.2f} matrices, product {own / matrix:.2f}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_run_of_one_long_row_holds_no_more_than_it_is_checked_for(monkeypatch, dtype):
    """1×20,000,000 @ 20,000,000×1: the memory check counted 0.32 GB in float32, and the run took 1.4
    (the float64 reference's copies of A and B, and the checks' temporaries of whole rows, however long:
    a longer K passed the check and was killed for memory); in float64 2.1 GB against 0.64 (a hunt)."""
    import tracemalloc

    from bilinear import measure
    from bilinear.runtime.run import memory_needed, run_once

    K = 1 << 16
    monkeypatch.setattr(measure, "BLOCK_ELEMENTS", 1 << 10)  # as small beside K as 2^24 is beside 10^9
    product = bilinear.compile("algorithms/strassen.bl", levels=1, dtype=dtype, backend="numpy")
    run_once(product, 1, K, 1, repeat=1)  # its caches and NumPy's, before the count
    tracemalloc.start()
    run_once(product, 1, K, 1, repeat=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    needed = memory_needed(1, K, 1, dtype)  # the arrays': 64 KiB more for Python's own objects
    assert peak <= needed + (1 << 16) and needed <= 2.5 * peak, (peak, needed)


def test_relative_error_and_restoration_by_row_blocks_match_the_whole_arrays(monkeypatch):
    from bilinear import measure

    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((37, 11)), rng.standard_normal((11, 23))
    exact = A @ B
    C = exact + 1e-9 * rng.standard_normal(exact.shape)
    after = A * (1 + 1e-16 * rng.standard_normal(A.shape))
    whole = measure.relative_error(C, exact, A, B), measure.restoration(after, A)
    monkeypatch.setattr(measure, "BLOCK_ELEMENTS", 50)  # blocks of 4 and 2 rows
    blocks = measure.relative_error(C, exact, A, B), measure.restoration(after, A)
    assert blocks[0] == pytest.approx(whole[0], rel=1e-12) and blocks[1] == whole[1]


def test_the_plot_gives_more_than_ten_schemes_each_a_colour(tmp_path):
    """The colours were tab10's ten, zipped with the names: an eleventh scheme's KeyError came after
    every timing (a review of bench)."""
    pytest.importorskip("matplotlib")
    from dataclasses import replace

    from bilinear.bench import BenchResult, plot

    row = BenchResult("s0", "s0.bl", 1, "cublas", "float64", 64, 64, 64, 1.0, 1.0, 1.0, 0.5, 0.5, 0, 1e-16, 1e-16, 1.0)
    picture = tmp_path / "many.png"
    plot([replace(row, name=f"s{i}", N=n) for i in range(12) for n in (64, 128)], picture)
    assert picture.stat().st_size > 1000


def test_the_plot_leaves_the_callers_matplotlib_as_it_was(tmp_path):
    """plot() drew through pyplot: each call left a figure open (matplotlib warned past 20 in CI's run), and it
    switched the process's backend to Agg (a notebook's inline plots with it)."""
    pytest.importorskip("matplotlib")
    import subprocess

    code = ("import matplotlib; matplotlib.use('svg'); import matplotlib.pyplot as plt; import pathlib, sys; "
            "from bilinear.bench import BenchResult, plot; "
            "row = BenchResult('s', 's.bl', 1, 'cublas', 'float64', 64, 64, 64, 1.0, 1.0, 1.0, 0.5, 0.5, 0, 1e-16, "
            "1e-16, 1.0); [plot([row], pathlib.Path(sys.argv[1]) / f'{i}.png') for i in range(3)]; "
            "print(len(plt.get_fignums()), matplotlib.get_backend())")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "svg"], done.stdout + done.stderr
    assert (tmp_path / "2.png").stat().st_size > 1000


def test_the_plot_draws_a_line_per_requested_level_count():
    """--levels 1 3 at n = 2 and 4: the L3 request ran 1 level at n = 2 and 2 at n = 4, and the plot put
    its points on the L1 line and an L2 marker of their own, grouped by the levels that ran (a hunt)."""
    from bilinear.bench import BenchResult, plot_series

    def row(n, ran, asked):
        return BenchResult("s", "s.bl", ran, "cublas", "float64", n, n, n, 1.0, 1.0, 1.0, 0.5, 0.5, 0, 1e-16, 1e-16,
                           1.0, levels_requested=asked)

    rows = [row(2, 1, 1), row(4, 1, 1), row(2, 1, 3), row(4, 2, 3), row(4, 0, "auto")]
    series = plot_series(rows)
    assert {key: [r.N for r in found] for key, found in series.items()} == {
        ("s", 1, "cublas"): [2, 4], ("s", 3, "cublas"): [2, 4], ("s", "auto", "cublas"): [4]}


@pytest.mark.parametrize("leaves", [["fused"], ["cublas", "fused"]])
def test_automatic_levels_are_checked_with_the_leaves_asked_for(tmp_path, leaves):
    """A schedule of products of sums (fused leaves only) was checked with cublas leaves under --levels auto: refused,
    with the advice to use --leaf fused, which was given (a hunt)."""
    scheme = tmp_path / "sums.bl"
    scheme.write_text(SUM_PRODUCT)
    out = tmp_path / "b.json"
    code = main(["bench", str(scheme), "--backend", "numpy", "-n", "8", "--levels", "auto", "--leaf", *leaves,
                 "--repeat", "1", "--json", str(out)])
    assert code == 0
    [result] = json.loads(out.read_text())["results"]
    assert result["levels_requested"] == "auto" and result["error"] < 1e-14  # (at n = 8 the CPU's own product: L0)


@pytest.mark.parametrize("leaves", [["ozaki", "cublas"], ["cublas", "ozaki"]])
def test_automatic_levels_do_not_rank_the_ozaki_leaf_against_others(capsys, leaves):
    """The model prices ozaki leaves at the GEMM's rate (it has none of their own): with equal predictions the
    first --leaf listed won, so --leaf ozaki cublas and --leaf cublas ozaki timed different products (a hunt)."""
    with pytest.raises(SystemExit) as exited:  # a usage error: argparse's exit
        main(["bench", "strassen", "--backend", "numpy", "-n", "16", "--levels", "auto", "--leaf", *leaves])
    assert exited.value.code == 2
    assert capsys.readouterr().err.rstrip().endswith(
        "--levels auto ranks the --leaf kinds by the model, which has no rate of the ozaki leaf's own (it would price "
        "it at the GEMM's): give --leaf ozaki alone with --levels auto, or time it at fixed levels")



def test_automatic_levels_of_the_ozaki_leaf_listed_twice_run(tmp_path):
    """--leaf ozaki ozaki was refused "give --leaf ozaki alone" (a review): a kind listed twice is one kind."""
    out = tmp_path / "b.json"
    code = main(["bench", "strassen", "--backend", "numpy", "-n", "8", "--levels", "auto", "--leaf", "ozaki", "ozaki",
                 "--repeat", "1", "--json", str(out)])
    assert code == 0 and len(json.loads(out.read_text())["results"]) == 1


def test_the_rate_below_the_smallest_measured_size_falls_with_size():
    """Latency-bound small products: half the smallest measured size runs at half its rate (a source mutation that
    took the smallest rate as it is went unseen)."""
    ceilings = Ceilings(device="test", dtype="float64", bandwidth=3e12, gemm_rate=((512, 6e12), (1024, 25e12)),
                        launch_seconds=2e-5)
    assert ceilings.rate(256, 256, 256) == pytest.approx(3e12)
    assert ceilings.rate(512, 512, 512) == pytest.approx(6e12)


def test_a_fused_product_stage_is_one_launch_only_above_the_last_level():
    """msmes at two levels with fused leaves at 256³ issues 38 launches: a product stage is one fused launch only
    where the level below it does not recurse (a source mutation that made every fused stage one launch gave 5)."""
    lowered = lower(bilinear.load("algorithms/msmes.bl"), Options(levels=2, leaf="fused"))
    assert count_launches(lowered, 256, 256, 256) == 38


def test_an_odd_dimension_peels_its_last_column_as_flops():
    """strassen at 2048×2048×2049: one level over 2048³, and the peeled column's 2·2048·2048 flops priced apart."""
    steps = predict_steps(_lowered("algorithms/strassen.bl", 1), CEILINGS, 2048, 2048, 2049)
    assert steps[-1].name == "peeling" and steps[-1].flops == 2 * 2048 * 2048
    assert sum(step.flops for step in steps[:-1]) == 7 * 2 * 1024**3


def test_a_stage_of_streamed_leaves_is_priced_as_one_product_of_its_volume():
    """strassen L1 with --launch streams at 4096³: a product stage of c statements runs c·2·2048³ flops at
    the rate of a (2048·c)×2048×2048 product; serially, each at the 2048³ rate (a source mutation that
    priced streams serially, or at the one product's rate, went unseen)."""
    lowered = lower(bilinear.load("algorithms/strassen.bl"), Options(levels=1, launch="streams"))
    serial = lower(bilinear.load("algorithms/strassen.bl"), Options(levels=1))
    leaf = 2 * 2048**3
    streamed = [s for s in predict_steps(lowered, CEILINGS, 4096, 4096, 4096) if s.flops]
    assert streamed and all(s.seconds == pytest.approx(s.flops / CEILINGS.rate(2048 * round(s.flops / leaf), 2048, 2048))
                            for s in streamed)
    assert any(round(s.flops / leaf) > 1 for s in streamed)  # a stage of more than one product, where the two differ
    one_by_one = [s for s in predict_steps(serial, CEILINGS, 4096, 4096, 4096) if s.flops]
    assert all(s.seconds == pytest.approx(s.flops / CEILINGS.rate(2048, 2048, 2048)) for s in one_by_one)


@pytest.mark.parametrize("launch", ["serial", "streams"])
def test_breadth_first_steps_move_each_operand_once_and_every_product_twice(launch):
    """winograd, two breadth-first levels at 4096×2048×8192 (49 leaves of 1024×512×2048): split A reads A and
    writes 49 sums, the merge reads 49 products and writes C; the leaves run at their own rate one by one,
    at the (49·1024)×512×2048 rate issued together."""
    from bilinear.model import predict_breadth

    lowered = lower(bilinear.load("algorithms/winograd.bl"), Options(levels=2, breadth=2, launch=launch))
    steps = {s.name: s for s in predict_breadth(lowered.breadth, CEILINGS, 4096, 2048, 8192, launch)}
    assert list(steps) == ["split A", "split B", "leaves", "merge"]
    assert steps["split A"].bytes == (4096 * 2048 + 49 * 1024 * 512) * 8
    assert steps["split B"].bytes == (2048 * 8192 + 49 * 512 * 2048) * 8
    assert steps["merge"].bytes == (49 * 1024 * 2048 + 4096 * 8192) * 8
    assert steps["merge"].seconds == pytest.approx(steps["merge"].bytes / 3e12)
    rate = CEILINGS.rate(1024, 512, 2048) if launch == "serial" else CEILINGS.rate(49 * 1024, 512, 2048)
    assert steps["leaves"].seconds == pytest.approx(49 * 2 * 1024 * 512 * 2048 / rate)
