"""Schedules whose products go through temporaries, run two and three levels deep.

A child problem's C is a view of its parent's C times the parent statement's coefficient (``+1/2*C22``,
rsmm's ``C21 -= ...``); element-wise statements act on the raw view.  A product into a C-shaped
temporary that a later statement adds into C must carry that coefficient too: it was dropped, and a
schedule that verified gave relative errors of 0.1 from two levels on.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import bilinear
from conftest import ROOT
from bilinear.cli import main
from bilinear.verify.stability import stability

from helpers.emulated import run_driver, statuses
from helpers.schedules import STRASSEN_SUMS_STAGE, STRASSEN_THROUGH_TEMPORARIES


def _schedule(tmp_path, name: str, scaled: bool, last: str | None = None, more_temps: str = "") -> str:
    """The schedule above; ``last`` replaces its M7 stages (s7, p7, e7), ``more_temps`` declares more."""
    text = STRASSEN_THROUGH_TEMPORARIES.format(
        name=name,
        m6_left="2*A21 - 2*A11" if scaled else "A21 - A11",
        m6_target="+1/2*C22" if scaled else "+C22",
        more_temps=more_temps,
    )
    if last is not None:
        text = text[:text.index("  stage s7:")] + last
    path = tmp_path / f"{name}.bl"
    path.write_text(text)
    return str(path)


def _max_error(product, n: int, beta: float = 0.0) -> float:
    rng = np.random.default_rng(0)
    A, B, C = rng.standard_normal((n, n)), rng.standard_normal((n, n)), rng.standard_normal((n, n))
    expected = 1.5 * (A @ B) + beta * C
    product(A, B, out=C, alpha=1.5, beta=beta)
    return float(np.abs(C - expected).max() / np.abs(expected).max())


@pytest.mark.parametrize("levels", [1, 2, 3])
def test_a_scaled_product_and_a_product_through_a_c_temporary(tmp_path, levels):
    assert bilinear.verify(_schedule(tmp_path, "scaled", scaled=True)).ok
    product = bilinear.compile(_schedule(tmp_path, "scaled", scaled=True), levels=levels, backend="numpy")
    assert _max_error(product, 24, beta=0.5) < 1e-13


# A temporary's raw scale follows what it holds where it is read or written, not its shape: a
# C-shaped one holding an A sum (as a factor) is scaled as A's blocks are; an A-shaped one a product
# goes into (as a target) as C's are.  Scaling by shape broke the first (errors of 1.1 from two levels).
ODD_HOLDERS = {
    "c_temporary_holds_an_a_sum": "  stage s7: T = A12 - A22; Y = B21 + B22\n  stage p7: T * Y -> +C11\n",
    "a_temporary_holds_a_product": "  stage s7: X = A12 - A22; Y = B21 + B22\n  stage p7: Z = X * Y\n  stage e7: C11 += Z\n",
}


@pytest.mark.parametrize("name", ODD_HOLDERS)
@pytest.mark.parametrize("levels", [2, 3])
def test_a_temporary_holding_another_operand_kind_under_a_scaled_parent(tmp_path, name, levels):
    path = _schedule(tmp_path, name, scaled=True, last=ODD_HOLDERS[name],
                     more_temps="\n  temp Z: A" if "Z" in ODD_HOLDERS[name] else "")
    assert bilinear.verify(path).ok
    # fused leaves keep each product's several targets, so an element-wise statement on C is refused there
    for leaf in ("cublas",) if "C11 +=" in ODD_HOLDERS[name] else ("cublas", "fused"):
        product = bilinear.compile(path, levels=levels, leaf=leaf, backend="numpy")
        assert _max_error(product, 24, beta=0.5) < 1e-13, leaf


def test_a_c_temporary_under_a_shipped_schedule_that_subtracts(tmp_path):
    """rsmm's ``C21 -= ...`` gives the child problem a coefficient of −1."""
    both = tmp_path / "both.bl"
    both.write_text('use "rsmm.bl"\n' + open(_schedule(tmp_path, "plain", scaled=False)).read())
    product = bilinear.compile(str(both), levels=2, per_level=("rsmm", "plain"), backend="numpy")
    assert _max_error(product, 32) < 1e-13


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_the_compiled_library_scales_the_c_temporary_too(tmp_path):
    """The C library's host layer takes its coefficients from the same lowering: built against the
    CPU emulator (tests/host_emulator), its driver checks two levels at odd sizes."""
    out = tmp_path / "lib"
    assert main(["compile", _schedule(tmp_path, "scaled", scaled=True), "-o", str(out), "--levels", "2"]) == 0
    growth = stability(bilinear.load("strassen").algorithms[0]).growth_factor / 8
    run = run_driver(out, "scaled", ["2", repr(growth), "0.5", "37,50,21", "129,65,97"])
    assert run.returncode == 0 and "0 failure(s)" in run.stdout, run.stdout + run.stderr


def test_fused_leaves_refuse_element_wise_statements_on_a_sum_of_views_when_lowering(tmp_path):
    """A parent product with two targets makes the child's C a sum of two views, which an element-wise
    statement cannot update: it was found at the first call (compile had already returned)."""
    path = _schedule(tmp_path, "plain", scaled=False)
    with pytest.raises(ValueError) as refused:
        bilinear.compile(path, levels=2, leaf="fused", backend="numpy")
    assert str(refused.value) == (
        "an element-wise statement of plain (level 2) touches C11, which here is a sum of 2 views (the level above adds "
        "this product into 2 targets, which fused leaves keep apart); use library leaves (--leaf cublas, "
        "leaf='cublas'), where each target is one view, or a schedule whose element-wise statements leave C alone")


FACTOR_SUMS = 'use "msmes.bl"\nschedule sums for strassen\n' + STRASSEN_SUMS_STAGE


def test_an_in_place_level_under_a_level_multiplying_sums_is_told_what_to_change(tmp_path):
    """The advice was "use this schedule with a single target (library leaves) or without in-place
    statements": the sum is the level above's factor, not a target, and library leaves refuse that level."""
    for name in ("strassen.bl", "msmes.bl"):
        shutil.copy(ROOT / "algorithms" / name, tmp_path / name)
    (tmp_path / "hybrid.bl").write_text(FACTOR_SUMS)
    with pytest.raises(ValueError) as refused:
        bilinear.compile(tmp_path / "hybrid.bl", levels=2, leaf="fused", backend="numpy", per_level=("sums", "msmes"))
    assert str(refused.value) == (
        "an element-wise statement of msmes (level 2) touches A11, which here is a sum of 2 views (the level above "
        "multiplies a sum of its blocks); put msmes where its A and B are single blocks (at the top level, or under "
        "a schedule whose products multiply single blocks), or use a schedule that does not write A there")


def test_the_plans_of_a_level_share_its_temporaries(tmp_path):
    """rsmm overwrites C, and its products that add into C run Winograd, its accumulating fallback:
    at the second level both run, in turn, never at once, so they share that level's temporaries.
    Before, each held its own: 384 MiB at 8192, where Winograd at two levels holds 320.  The C
    library sizes its workspace from the same slots, and its driver checks both plans' products."""
    n, mib = 8192, 2**20
    rsmm = bilinear.compile("rsmm", backend="numpy", levels=2)
    assert rsmm.workspace_bytes(n, n, n) == bilinear.compile("winograd", backend="numpy", levels=2).workspace_bytes(n, n, n)
    assert rsmm.workspace_bytes(n, n, n) == 320 * mib  # X and Y at 4096² and at 2048², float64
    assert _max_error(rsmm, 96) < 1e-13
    out = tmp_path / "lib"
    assert main(["compile", str(ROOT / "algorithms" / "rsmm.bl"), "-o", str(out), "--levels", "2", "--dtype", "float64"]) == 0
    assert statuses(out, "rsmm", [f"rsmm_dgemm_workspace_bytes({n}, {n}, {n})"]) == [320 * mib]
    growth = stability(bilinear.load("rsmm").algorithms[0]).growth_factor / 8
    run = run_driver(out, "rsmm", ["2", repr(growth), "0", "64,64,64", "130,66,98"])
    assert run.returncode == 0 and "0 failure(s)" in run.stdout, run.stdout + run.stderr
