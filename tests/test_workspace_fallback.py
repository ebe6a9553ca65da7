"""Under a workspace limit a product runs with fewer breadth-first levels where the workspace does
not fit (``CompiledProduct.executors``): the checks of a call hold for the plan that runs.

Before, they looked at the plan with every breadth-first level only.  rsmm's depth-first fallback
overwrote C under beta = 1 (relative error 0.52, no error); msmes's wrote A and B while
``writes_inputs`` said it did not, so ``p(A, A)`` and a read-only A were not refused; a schedule's
shape condition was not checked ("could not broadcast" on NumPy, kernels over mismatched views on
the GPU).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

import bilinear
from bilinear.measure import random_inputs

LIMITED = {"levels": 2, "breadth": 2, "workspace_limit": 3000}


def test_the_limit_chooses_a_fallback_at_this_size():
    product = bilinear.compile("rsmm", backend="numpy", **LIMITED)
    assert product.breadth_levels(16, 4, 8) < 2
    assert bilinear.compile("rsmm", backend="numpy", levels=2, breadth=2).breadth_levels(16, 4, 8) == 2


def test_an_overwriting_fallback_refuses_beta():
    A, B, C = random_inputs(np, 16, 4, 8, "float64", seed=1)
    product = bilinear.compile("rsmm", backend="numpy", **LIMITED)
    with pytest.raises(ValueError) as refused:
        product(A, B, out=C.copy(), beta=1.0)
    # why at this size and not at others (found by an audit: overwrites_c says False)
    assert str(refused.value) == (
        "rsmm computes C = A*B and overwrites C, so beta must be 0 (got 1.0); use an accumulating schedule such as "
        "msmes for beta != 0 (at 16x4x8 the workspace limit of 3000 bytes runs 1 of rsmm's 2 levels breadth-first, "
        "and the top level, depth-first, overwrites C; with every level breadth-first, as at sizes whose workspace fits, "
        "beta is taken)")
    unlimited = bilinear.compile("rsmm", backend="numpy", levels=2, breadth=2)
    out = C.copy()
    unlimited(A, B, out=out, beta=1.0)  # all levels breadth-first: they accumulate
    assert np.allclose(out, A @ B + C, rtol=1e-13, atol=1e-13)


def test_beta_refused_at_every_size_has_no_note_of_the_limit():
    """With --breadth 1 rsmm's top level is depth-first at every size, so beta is never taken; the
    refusal said "with every level breadth-first, as at sizes whose workspace fits, beta is taken" (a hunt)."""
    A, B, C = random_inputs(np, 37, 37, 37, "float64", seed=1)
    product = bilinear.compile("rsmm", backend="numpy", levels=2, breadth=1, workspace_limit=7000)
    with pytest.raises(ValueError) as refused:
        product(A, B, out=C.copy(), beta=2.0)
    assert str(refused.value) == ("rsmm computes C = A*B and overwrites C, so beta must be 0 (got 2.0); use an "
                                  "accumulating schedule such as msmes for beta != 0")


def test_a_limit_never_reached_keeps_beta_where_every_level_runs_breadth_first():
    """The fix above first refused beta for any call once some fallback overwrote C: a limit of a
    petabyte made rsmm's breadth-first product refuse beta = 1 (review)."""
    A, B, C = random_inputs(np, 64, 64, 64, "float64", seed=4)
    product = bilinear.compile("rsmm", backend="numpy", levels=2, breadth=2, workspace_limit=10**15)
    out = C.copy()
    product(A, B, out=out, beta=1.0)
    assert product.breadth_levels(64, 64, 64) == 2 and np.allclose(out, A @ B + C, rtol=1e-13, atol=1e-13)


def test_an_in_place_fallback_writes_the_inputs_and_is_checked_as_in_place():
    product = bilinear.compile("msmes", backend="numpy", **LIMITED)
    assert product.writes_inputs and product.restores_inputs
    A = random_inputs(np, 64, 64, 64, "float64", seed=2)[0]
    with pytest.raises(ValueError, match="^msmes is in place .* must not be the same array or overlap"):
        product(A, A)
    read_only = A.copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match=r"^A is read-only; msmes is in place"):
        product(read_only, A.copy())


def test_a_fallback_checks_its_shape_conditions(tmp_path):
    text = (ROOT / "algorithms" / "rsmm.bl").read_text(encoding="utf-8")
    path = tmp_path / "rsmm_ya.bl"
    path.write_text(text.replace("temp Y: B", "temp Y: A").replace("schedule rsmm ", "schedule rsmm_ya "), encoding="utf-8")
    product = bilinear.compile(path, backend="numpy", levels=2, breadth=2, workspace_limit=2000)
    with pytest.raises(ValueError, match=r"^schedule rsmm_ya requires K/k = N/n"):
        product(np.ones((5, 5)), np.ones((5, 12)))


def test_run_says_a_fallback_in_place_level_wrote_and_restored_the_inputs():
    """`bilinear run msmes --breadth 2 --workspace-limit 3000` said "A and B only read"."""
    from bilinear.runtime.run import run_once

    product = bilinear.compile("msmes", backend="numpy", **LIMITED)
    result = run_once(product, 64, 64, 64, repeat=1)
    assert result.breadth_run < 2 and result.inputs_written and result.inputs_restored


def test_bench_predicts_the_plan_that_runs():
    """bench's prediction was the plan with every breadth-first level, where the limit ran fewer."""
    from bilinear.bench import bench_one
    from bilinear.model import Ceilings, predict

    ceilings = Ceilings(device="test", dtype="float64", bandwidth=3e12, launch_seconds=2e-5,
                        gemm_rate=((512, 6e12), (1024, 25e12), (2048, 50e12), (4096, 56e12)))
    product = bilinear.compile("rsmm", backend="numpy", **LIMITED)
    result = bench_one(product, "rsmm", 16, 4, 8, ceilings, repeat=1, breakdown=False)
    runs = product.executor_for(16, 4, 8).lowered
    assert runs is not product.lowered
    assert result.predicted_ms == predict(runs, ceilings, 16, 4, 8) * 1e3 != predict(product.lowered, ceilings, 16, 4, 8) * 1e3


@pytest.mark.parametrize("options", [{"levels": 2, "breadth": 2, "workspace_limit": 400_000}, {"levels": 2}],
                         ids=["limited", "depth-first"])
def test_a_product_never_holds_two_sizes_workspace_at_once(monkeypatch, options):
    """Each plan under a limit kept its own buffers, and a call allocated its new workspace while the
    last call's was still held: strassen under a 400,000-byte limit, at n = 128, 192, 96, 200, peaked at
    593,216 live bytes during a call and held 437,568 after (found by an audit)."""
    import weakref

    from bilinear.runtime.numpy_backend import NumpyBackend

    live, peak = [0], [0]
    allocate = NumpyBackend.empty

    def counted(self, rows, cols, dtype):
        array = allocate(self, rows, cols, dtype)
        live[0] += array.nbytes
        peak[0] = max(peak[0], live[0])
        weakref.finalize(array, lambda nbytes=array.nbytes: live.__setitem__(0, live[0] - nbytes))
        return array

    monkeypatch.setattr(NumpyBackend, "empty", counted)
    product = bilinear.compile("strassen", backend="numpy", **options)
    rng = np.random.default_rng(0)
    for n in (128, 192, 96, 200, 128):
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        before, peak[0] = live[0], live[0]
        product(A, B)
        needed = product.workspace_bytes(n, n, n)
        assert peak[0] <= max(before, needed), n  # the old workspace goes before the new is allocated
        assert product.held_workspace_bytes() <= options.get("workspace_limit", needed), n


def test_a_hybrids_workspace_is_what_one_call_holds():
    """grey234 over strassen breadth-first at 100x100x102: workspace_bytes said 165,400 bytes, the
    largest leaf GEMM's three buffers, while a call held 187,352 (each buffer grows to its own
    largest over the strips and the leaves), so a limit of 165,400 let it hold more (found by a review)."""
    from bilinear.api import load
    from bilinear.hybrid import hybrid

    program, per_level = hybrid("grey234,strassen", load)
    product = bilinear.compile(program, backend="numpy", levels=2, breadth=1, per_level=per_level)
    A, B, _ = random_inputs(np, 100, 100, 102, "float64", seed=3)
    assert np.allclose(product(A, B), A @ B)
    assert product.workspace_bytes(100, 100, 102) == product.held_workspace_bytes() == 187_352


def test_a_limit_bounds_what_is_held_across_rectangular_shapes():
    """Each of 256x32x32 and 32x32x256 needs 426,496 bytes; the breadth-first buffers grew to the
    larger of each part, 602,112 bytes under a limit of 426,496 (found by a review).  A call of the
    last call's shape keeps its buffers."""
    product = bilinear.compile("strassen", backend="numpy", levels=2, breadth=2, workspace_limit=426_496)
    for M, K, N in [(256, 32, 32), (32, 32, 256), (32, 32, 256)]:
        A, B, _ = random_inputs(np, M, K, N, "float64", seed=4)
        kept = product.executor.breadth._parts[0]
        assert np.allclose(product(A, B), A @ B)
        assert product.held_workspace_bytes() <= 426_496
    assert product.executor.breadth._parts[0] is kept  # the repeated shape allocated nothing


@pytest.mark.parametrize(("schemes", "instead"), [("msmes,grey333", "use in-place schedules for grey333 too"),
                                                  ("strassen,strassen", "use an in-place schedule such as msmes")])
def test_a_limit_nothing_fits_names_the_levels_that_hold_workspace(capsys, schemes, instead):
    """msmes,grey333 was told to use an in-place schedule such as msmes, which its first level is (a hunt)."""
    from bilinear.cli import main

    assert main(["run", "strassen", "-n", "36", "--backend", "numpy", "--levels-schemes", schemes,
                 "--workspace-limit", "100"]) == 1
    assert capsys.readouterr().err.rstrip().endswith(f"more than the limit of 100; raise the limit or {instead}")


def test_a_schedule_the_fallback_runs_below_the_top_is_refused_with_the_limit_named(tmp_path):
    """An in-place schedule that does not restore runs at the top with --breadth 1, but the limit's
    depth-first fallback puts it at level 2 too; the refusal said only "at level 2", which the user had
    not asked for."""
    text = (ROOT / "algorithms" / "msmes.bl").read_text(encoding="utf-8")
    body = text[text.index("schedule msmes"):text.index("  stage restore1")]
    path = tmp_path / "norestore.bl"
    path.write_text('use "strassen.bl"\n\n' + body.replace("schedule msmes", "schedule norestore").replace(
        "inplace, restore", "inplace"), encoding="utf-8")
    bilinear.compile(path, backend="numpy", levels=2, breadth=1)  # without a limit it lowers
    with pytest.raises(bilinear.BilinearError) as caught:
        bilinear.compile(path, backend="numpy", levels=2, breadth=1, workspace_limit=3000)
    assert caught.value.diagnostics[0].notes[-1] == (
        "--workspace-limit 3000: where the workspace of --breadth 1 does not fit, the product runs with fewer "
        "breadth-first levels, and the plan with --breadth 0 is the one refused; drop the limit to keep --breadth 1 "
        "at every size")
    with pytest.raises(bilinear.BilinearError) as caught:
        bilinear.compile(path, backend="numpy", levels=3, breadth=2, workspace_limit=3000)
    assert [note.split(":")[0] for note in caught.value.diagnostics[0].notes].count("--workspace-limit 3000") == 1
    assert "keep --breadth 2 at every size" in caught.value.diagnostics[0].notes[-1]
    assert "at level 2 it would destroy" in caught.value.diagnostics[0].message
