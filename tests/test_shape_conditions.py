"""A schedule whose temporary holds another operand's blocks verifies with conditions on the block
shape ("requires K/k = N/n"); every runtime checks them before anything runs.

rsmm with ``temp Y: A`` holds B blocks in an A-shaped temporary: right where blocks are square,
out of its bounds elsewhere.  Before, a NumPy call failed with "could not broadcast", and the C++
library ran its kernels over the mismatched views (cuBLAS said status 2007).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import ROOT
from helpers.emulated import statuses

import bilinear
from bilinear.cli import main
from bilinear.measure import random_inputs

CONDITIONS = ["M/m = K/k (temporary Y, shaped like A, holds a B-side value)",
              "K/k = N/n (temporary Y, shaped like A, holds a B-side value)"]


@pytest.fixture
def y_like_a(tmp_path):
    """rsmm with Y declared like A (it holds T1..T4, B sums) in ``tmp_path``."""
    text = (ROOT / "algorithms" / "rsmm.bl").read_text(encoding="utf-8")
    text = text.replace("temp Y: B", "temp Y: A").replace("schedule rsmm ", "schedule rsmm_ya ")
    path = tmp_path / "rsmm_ya.bl"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_report_states_the_conditions(y_like_a, capsys):
    (entry,) = [e for e in bilinear.verify(y_like_a).entries if hasattr(e, "shape_conditions")]
    assert [str(condition) for condition in entry.shape_conditions] == sorted(CONDITIONS)
    assert main(["verify", str(y_like_a), "--format", "json"]) == 0
    (schedule,) = [d for d in json.loads(capsys.readouterr().out)["entries"] if d["kind"] == "schedule"]
    assert schedule["shape_conditions"] == sorted(CONDITIONS)


def test_the_manifest_states_the_conditions(y_like_a, tmp_path):
    """The header listed them and the library returned 3000 + level, but the manifest said nothing."""
    assert main(["compile", str(y_like_a), "-o", str(tmp_path / "out"), "--levels", "2"]) == 0
    stated = json.loads((tmp_path / "out" / "manifest.json").read_text())["host"]["shape_conditions"]
    numbered = [condition.replace("/m", "/2").replace("/k", "/2").replace("/n", "/2") for condition in CONDITIONS]
    assert {(c["level"], c["requires"]) for c in stated} == {(level, text) for level in (1, 2) for text in numbered}


def test_the_manifest_says_which_dimensions_its_conditions_name(y_like_a, tmp_path):
    """Its M, K, N are the row-major product's, the function's n, k, m at level 1: read as m, k, n
    they predicted the opposite of what a call returned."""
    assert main(["compile", str(y_like_a), "-o", str(tmp_path / "out")]) == 0
    host = json.loads((tmp_path / "out" / "manifest.json").read_text())["host"]
    assert "at level 1 M = n, K = k, N = m" in host["shape_conditions_dims"]
    header = next((tmp_path / "out").glob("*.h")).read_text()
    assert " ".join(host["shape_conditions_dims"].split()) in " ".join(header.replace(" * ", " ").split())


def test_the_markdown_report_states_the_conditions_too(y_like_a, capsys):
    """md showed a plain "verified" row: the conditions were in the text and JSON reports only."""
    assert main(["verify", str(y_like_a), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert all(f"- rsmm\\_ya requires {condition}" in out for condition in CONDITIONS)  # the name escaped


def test_a_call_whose_blocks_break_a_condition_is_refused_before_it_runs(y_like_a):
    product = bilinear.compile(y_like_a, backend="numpy", levels=2)
    A, B, C = random_inputs(np, 64, 32, 64, "float64", seed=3)
    before = C.copy()
    message = ("schedule rsmm_ya requires K/k = N/n (temporary Y, shaped like A, holds a B-side value): at level 1 of "
               "this 64x32 @ 32x64 product its blocks are 32x16 @ 16x32; choose sizes whose blocks meet it, "
               "or fewer levels")
    with pytest.raises(ValueError, match=f"^{message}$".replace("(", r"\(").replace(")", r"\)")):
        product(A, B, out=C)
    assert np.array_equal(C, before)  # nothing ran


@pytest.mark.parametrize("dims", [(64, 64, 64), (37, 37, 37), (65, 64, 64), (1, 1, 1), (1, 5, 7)])
def test_sizes_that_meet_the_conditions_multiply(y_like_a, dims):
    """Peeled sizes count by their whole blocks (65 rows: 32-row blocks and one peeled row); a size
    too small to split runs no level, so no condition applies."""
    A, B, _ = random_inputs(np, *dims, "float64", seed=4)
    assert np.allclose(bilinear.compile(y_like_a, backend="numpy", levels=2)(A, B), A @ B, rtol=1e-12, atol=1e-12)


def test_run_says_so_and_exits_1(y_like_a, capsys):
    assert main(["run", str(y_like_a), "-n", "64", "-k", "32", "--backend", "numpy"]) == 1
    err = capsys.readouterr().err
    assert "bilinear run: schedule rsmm_ya requires K/k = N/n" in err and "Traceback" not in err


def test_automatic_levels_stop_above_a_level_whose_blocks_break_a_condition(y_like_a):
    """With a flat GEMM rate and free element-wise passes the model wants every level it can get:
    64x64x64 gets levels; 64x32x64, whose first level breaks the conditions, gets none."""
    from bilinear.model import Ceilings

    product = bilinear.compile(y_like_a, backend="numpy", levels="auto")
    product._ceilings = Ceilings("test", "float64", 1e30, ((1, 1e9), (1 << 20, 1e9)))
    assert product.choose(64, 64, 64)[0] >= 1
    assert product.choose(64, 32, 64)[0] == 0
    A, B, _ = random_inputs(np, 64, 32, 64, "float64", seed=5)
    assert np.allclose(product(A, B), A @ B, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_cpp_library_returns_a_status_for_blocks_that_break_a_condition(y_like_a, tmp_path):
    out = tmp_path / "lib"
    assert main(["compile", str(y_like_a), "-o", str(out), "--levels", "2"]) == 0
    header = (out / "rsmm_ya.h").read_text()
    assert "3000 + L when the blocks at level L break a shape condition the schedule requires" in header
    # column-major m, n, k: the row-major problem is n x k @ k x m
    # the conditions in the header's own terms: the scheme's block counts as numbers, not letters the
    # function's m, n, k would be read as
    assert "*   level 1: K/2 = N/2 (temporary Y, shaped like A, holds " in header
    calls = ["rsmm_ya_dgemm(handle, 64, 64, 32, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr)",
             "rsmm_ya_dgemm(handle, 64, 64, 64, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr)",
             "rsmm_ya_dgemm(handle, 7, 1, 5, 1.0, A, 64, B, 64, 0.0, C, 64, nullptr)",
             # alpha = 0 forms no blocks: C = beta*C, as the header says and Python does (it returned 3001)
             "rsmm_ya_dgemm(handle, 64, 64, 32, 0.0, A, 64, B, 64, 0.0, C, 64, nullptr)",
             # a null C is argument 11 even when k = 0 and A is null too (it said -6)
             "rsmm_ya_dgemm(handle, 4, 4, 0, 1.0, nullptr, 64, B, 64, 0.0, nullptr, 64, nullptr)"]
    assert statuses(out, "rsmm_ya", calls) == [3001, 0, 0, 0, -11]


def test_auto_levels_refuse_moduli_that_keep_no_correct_bit_at_any_level():
    """With moduli=2, "auto" chose the ozaki leaf alone at k = 10000, which its own call then refused
    (2 moduli keep no correct bit past k = 4079); then two levels, which halve k twice but can grow the
    leaves' error bound 36 times: an error 4.4 times max|C|, returned without a word.  No level keeps a
    correct bit, so the call is refused as the leaf alone's, naming 3 moduli, with which it runs."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((64, 10000)), rng.standard_normal((10000, 64))
    auto = bilinear.compile("strassen", backend="numpy", levels="auto", leaf="ozaki", moduli=2)
    assert auto.choose(64, 10000, 64)[:2] == (0, "ozaki")
    message = r"^2 moduli are too few for an inner dimension of 10000 \(2 keep no correct bit past 4079\): give 3 or more"
    with pytest.raises(ValueError, match=message):
        auto(A, B)
    three = bilinear.compile("strassen", backend="numpy", levels="auto", leaf="ozaki", moduli=3)
    assert three.choose(64, 10000, 64)[0] <= 1  # two levels can grow 3 moduli's error bound past C
    assert np.abs(three(A, B) - A @ B).max() < 0.5 * np.abs(A @ B).max()


ZERO_READ = """algorithm n1 <1,1,1;1>:
  M1 = A11 * B11
  C11 = M1

schedule s for n1
  temp Z: B
  stage z: Z = B11 - B11
  stage p: A11 * B11 -> +C11
  stage a: C11 += Z
"""


def test_a_zero_buffer_read_into_another_shape_states_its_conditions(tmp_path):
    """Z, shaped like B, holds zero when C11 adds it, so no write gave a condition; the report said
    nothing, a NumPy call failed with "could not broadcast", and the library's kernel read Z over C's
    shape (a hunt)."""
    path = tmp_path / "zero_read.bl"
    path.write_text(ZERO_READ, encoding="utf-8")
    (entry,) = [e for e in bilinear.verify(path).entries if hasattr(e, "shape_conditions")]
    assert [str(condition) for condition in entry.shape_conditions] == [
        "K/k = M/m (temporary Z, shaped like B, is read into a buffer shaped like C)"]
    product = bilinear.compile(path, backend="numpy", levels=1)
    A, B, C = random_inputs(np, 128, 32, 64, "float64", seed=4)
    with pytest.raises(ValueError, match=r"^schedule s requires K/k = M/m \(temporary Z, shaped like B, is read "):
        product(A, B, out=C)
    A, B, C = random_inputs(np, 32, 32, 64, "float64", seed=4)
    assert np.allclose(product(A, B, out=C), A @ B)


def test_a_used_file_s_schedule_named_per_level_keeps_its_conditions(y_like_a, tmp_path):
    """Named through per_level from a used file, rsmm_ya was never verified, so it had no conditions: the call failed
    inside NumPy, "could not broadcast input array" (on a GPU, out of bounds; a hunt)."""
    (tmp_path / "winograd.bl").write_text((ROOT / "algorithms" / "winograd.bl").read_text(encoding="utf-8"))
    main_file = tmp_path / "main.bl"
    main_file.write_text('use "rsmm_ya.bl"\n' + (ROOT / "algorithms" / "naive2x2.bl").read_text(encoding="utf-8"))
    product = bilinear.compile(main_file, backend="numpy", levels=2, per_level=("rsmm_ya", "rsmm_ya"))
    A, B, C = random_inputs(np, 64, 32, 64, "float64", seed=3)
    with pytest.raises(ValueError, match=r"^schedule rsmm_ya requires K/k = N/n"):
        product(A, B, out=C)
