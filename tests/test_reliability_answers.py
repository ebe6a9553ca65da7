"""Issue 12, wrong answers: every way found to get a wrong C accepted is refused or fixed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import ROOT
from helpers.schedules import STRASSEN_SUMS_STAGE, STRASSEN_THROUGH_TEMPORARIES

import bilinear
from bilinear.diagnostics import BilinearError
from bilinear.lower.plan import Options, lower
from bilinear.measure import error_bound
from bilinear.runtime.run import run_once

ALGORITHMS = ROOT / "algorithms"

# MSMES without its restore stages: in place, and A and B end changed.
MSMES_NO_RESTORE = (ALGORITHMS / "msmes.bl").read_text(encoding="utf-8").split("  stage restore1:")[0].replace(
    "inplace, restore", "inplace"
).replace("schedule msmes", "schedule destroys")


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- operands that alias or overlap ------------------------------------------------------------


@pytest.mark.parametrize("case", ["same", "overlapping views"])
def test_in_place_schedule_refuses_aliased_or_overlapping_a_and_b(case):
    product = bilinear.compile(ALGORITHMS / "msmes.bl", backend="numpy")
    rng = np.random.default_rng(0)
    if case == "same":
        A = B = rng.standard_normal((8, 8))
    else:
        X = rng.standard_normal((8, 12))
        A, B = X[:, :8], X[:, 4:]
    before = (A.copy(), B.copy())
    with pytest.raises(ValueError, match="overlap"):
        product(A, B)
    assert np.array_equal(A, before[0]) and np.array_equal(B, before[1])


def test_a_read_only_product_still_accepts_the_same_matrix_twice():
    product = bilinear.compile(ALGORITHMS / "strassen.bl", backend="numpy")
    A = np.random.default_rng(1).standard_normal((8, 8))
    assert np.allclose(product(A, A), A @ A)


# --- recursion through a schedule that destroys its inputs --------------------------------------


def test_non_restoring_in_place_schedule_verifies_at_one_level(tmp_path):
    path = _write(tmp_path, "destroys.bl", MSMES_NO_RESTORE)
    assert bilinear.verify(path).ok
    product = bilinear.compile(path, levels=1, backend="numpy")
    A, B = np.random.default_rng(2).standard_normal((2, 8, 8))
    expected = A @ B
    assert np.allclose(product(A, B), expected)


def test_run_of_a_non_restoring_schedule_times_the_library_on_the_original_operands(tmp_path):
    """The library's product was computed from A and B as the schedule left them (its error read
    1.8e-01), and the report gave "A restored to 7.7e18 ulp" with a note about rounding."""
    product = bilinear.compile(_write(tmp_path, "destroys.bl", MSMES_NO_RESTORE), levels=1, backend="numpy")
    result = run_once(product, 64, 64, 64, repeat=1)
    assert result.within_bound and result.reference_error < 1e-15
    lines = result.describe().splitlines()
    assert lines[-1] == "  A and B        left as the schedule leaves them (it declares no restore)"
    assert not any("restored" in line or "rounding" in line for line in lines)


def test_a_non_restoring_schedule_that_did_not_run_only_read_a_and_b(tmp_path):
    """At n = 1 no level runs: the report said A and B were "left as the schedule leaves them"."""
    product = bilinear.compile(_write(tmp_path, "destroys.bl", MSMES_NO_RESTORE), levels=1, backend="numpy")
    lines = run_once(product, 1, 1, 1, repeat=1).describe().splitlines()
    assert lines[-1] == "  A and B        only read (no level that ran writes them)"


def test_a_ratio_below_a_tenth_keeps_its_figures():
    """A run 7000 times slower than the library printed "ratio 0.000" beside two times that are not zero."""
    product = bilinear.compile(ALGORITHMS / "strassen.bl", backend="numpy")
    result = run_once(product, 8, 8, 8, repeat=1)
    slow = dataclasses.replace(result, seconds=0.342627, reference_seconds=0.000048)
    assert "ratio 0.00014)" in slow.describe()
    assert "ratio 1.000)" in dataclasses.replace(result, seconds=1.0, reference_seconds=1.0).describe()


def test_the_header_of_a_non_restoring_schedule_says_a_and_b_are_left_changed(tmp_path):
    """It said they were restored "up to rounding"; the library left them changed by order 1."""
    from bilinear.cli import main

    path = _write(tmp_path, "destroys.bl", MSMES_NO_RESTORE)
    assert main(["compile", str(path), "-o", str(tmp_path / "out")]) == 0
    header = " ".join((tmp_path / "out" / f"{bilinear.load(path).main.name}.h").read_text().replace("\n * ", " ").split())
    assert "overwrites them and does NOT restore them (it declares no `restore`)" in header
    assert "restores them" not in header


@pytest.mark.parametrize("levels", [2, 3])
def test_non_restoring_in_place_schedule_is_refused_below_the_top_level(tmp_path, levels):
    path = _write(tmp_path, "destroys.bl", MSMES_NO_RESTORE)
    with pytest.raises(BilinearError, match="does not restore"):
        bilinear.compile(path, levels=levels, backend="numpy")


# --- run judges by the levels that ran ---------------------------------------------------------


def test_run_bound_uses_the_levels_actually_executed():
    product = bilinear.compile(ALGORITHMS / "strassen.bl", levels=20, backend="numpy")
    result = run_once(product, 4, 4, 4, repeat=1)
    assert result.levels_run == 2
    assert result.growth == pytest.approx(((12 + 2 * 2**0.5) / 8) ** 2)  # two levels' growth
    assert result.bound == pytest.approx(error_bound("float64", 4, (12 + 2 * 2**0.5) / 8, 2))


@pytest.mark.parametrize("levels", [60, 100000])
def test_absurd_level_counts_are_refused_early(levels):
    with pytest.raises(ValueError, match="levels"):
        Options(levels=levels)


# --- overwrite schedules must not read C's original content -------------------------------------

POISON = """\
use "winograd.bl"

schedule poisoned for winograd: overwrite
  temp X: A
  temp Y: B
  temp Z: C
  stage s0:  Z = C11
  stage s1:  X = A21 + A22;  Y = B12 - B11
  stage p1:  C22 = X * Y
  stage s2:  X = X - A11;  Y = B22 - Y
  stage p2:  C21 = X * Y;  C11 = A11 * B11
  stage s3:  C21 += C11;  X = A12 - X
  stage s4:  C12 = C21 + C22
  stage z1:  C12 += Z
  stage z2:  C12 -= Z
  stage p3:  C12 += X * B22
  stage s5:  X = A11 - A21;  Y = B22 - B12
  stage p4:  C21 += X * Y
  stage s6:  C22 += C21;  Y += B11 - B21
  stage p5:  C21 -= A22 * Y;  C11 += A12 * B21
"""


def test_overwrite_schedule_reading_c_is_rejected(tmp_path):
    report = bilinear.verify(_write(tmp_path, "poisoned.bl", POISON))
    assert not report.ok
    messages = [d.message for entry in report.entries for d in entry.errors]
    assert any("C11" in m and "overwrite" in m for m in messages), messages


def test_overwrite_schedule_accumulating_into_untouched_c_is_rejected(tmp_path):
    text = POISON.replace("  stage s0:  Z = C11\n", "").replace("  stage z1:  C12 += Z\n  stage z2:  C12 -= Z\n", "")
    text = text.replace("temp Z: C\n", "").replace("C11 = A11 * B11", "C11 += A11 * B11")
    report = bilinear.verify(_write(tmp_path, "accumulates.bl", text))
    messages = [d.message for entry in report.entries for d in entry.errors]
    assert any("overwrite" in m for m in messages), messages


def test_shipped_overwrite_schedule_still_verifies():
    assert bilinear.verify(ALGORITHMS / "rsmm.bl").ok


# --- generated kernel names -----------------------------------------------------------------------

COLLIDING = (ALGORITHMS / "msmes.bl").read_text(encoding="utf-8").replace("schedule msmes", "schedule strassen_cublas")
COLLIDING_OVERWRITE = (ALGORITHMS / "rsmm.bl").read_text(encoding="utf-8").replace("schedule rsmm", "schedule winograd_cublas")


@pytest.mark.parametrize(
    "text, per_level",
    [(COLLIDING, ("strassen_cublas", "strassen")), (COLLIDING_OVERWRITE, None)],
    ids=["per-level default", "overwrite fallback"],
)
def test_kernel_names_are_unique(text, per_level, tmp_path):
    path = _write(tmp_path, "named.bl", text)
    program = bilinear.load(path)
    lowered = lower(program, Options(levels=2, fuse=False), per_level)
    by_name = {kernel.name: kernel for kernel in lowered.kernels()}
    used = [step for level in lowered.levels for plan in (level, level.accumulate_fallback, level.from_zero) if plan
            for step in plan.steps
            if hasattr(step, "name") and not hasattr(step, "statements")]
    assert used and all(by_name.get(kernel.name) == kernel for kernel in used)
    assert len(by_name) == len(set(used))
    product = bilinear.compile(program, levels=2, backend="numpy", fuse=False, per_level=per_level)
    A, B = np.random.default_rng(3).standard_normal((2, 16, 16))
    assert np.allclose(product(A, B), A @ B)


# --- a schedule whose product statement adds with the wrong sign -------------------------------------


def test_a_wrong_sign_in_a_product_statement_is_pointed_at_that_statement(tmp_path):
    """The error pointed at the last statement that wrote C22 (a correct one), with no fix."""
    right = STRASSEN_THROUGH_TEMPORARIES.format(name="mine", more_temps="", m6_left="A21 - A11", m6_target="+C22")
    assert bilinear.verify(_write(tmp_path, "right.bl", right)).ok
    path = _write(tmp_path, "wrong.bl", right.replace("X * B11 -> +C21 -C22", "X * B11 -> +C21 +C22"))
    (error,) = [e for entry in bilinear.verify(path).entries for e in entry.errors]
    assert error.message.startswith("C22 ends holding") and error.span.line == 9
    assert error.notes[0] == "`X * B11 -> +C21 +C22` adds M2 to C22 times 1; strassen's C22 has it times -1"


@pytest.mark.parametrize("right, wrong, note", [
    ("A12 * B22 -> -C11 +C12", "A12 * B22 -> -C11",
     "`A12 * B22 -> -C11` adds M5 to C11 only; strassen's C12 has it times 1: add +C12"),
    ("A21 * B11 -> +C21 -C22", "A21 * B11 -> +C21",
     "`A21 * B11 -> +C21` adds M2 to C21 only; strassen's C22 has it times -1: add -C22"),
], ids=["M5", "M2"])
def test_a_product_statement_that_leaves_out_a_target_is_pointed_at(tmp_path, right, wrong, note):
    """The error pointed at the last statement that wrote the block, a correct one (msmes's M3), with no
    fix: only statements naming the block had been looked at, and the wrong one no longer names it."""
    text = (ALGORITHMS / "msmes.bl").read_text()
    path = _write(tmp_path, "missing.bl", text.replace(right, wrong))
    (error,) = [e for entry in bilinear.verify(path).entries for e in entry.errors]
    line = next(number for number, each in enumerate(text.splitlines(), 1) if right in each)
    assert error.span.line == line and error.notes[0] == note


M1_SPLIT = "A11 * B11 -> +C11 +C22       # M1 = (A11 + A22)(B11 + B22)"


@pytest.mark.parametrize("halves, note", [
    (("A11 * B11 -> +C11", "A11 * B11 -> -C22"),
     "`A11 * B11 -> -C22` adds M1 to C22 times -1; strassen's C22 has it times 1"),
    (("A11 * B11 -> +C11 +C22", "A11 * B11 -> +C22"),
     "`A11 * B11 -> +C22` adds M1 to C22 times 1, and `A11 * B11 -> +C11 +C22` (line 25) adds it times 1; "
     "strassen's C22 has it times 1"),
], ids=["wrong sign in the second", "added twice"])
def test_a_product_split_over_two_statements_is_weighed_as_one(tmp_path, halves, note):
    """With M1 computed by two statements, each was weighed alone: the first, `-> +C11`, was blamed for
    leaving C22 out ("add +C22", which leaves C22 wrong) where the second adds it with the wrong sign,
    and two statements adding it once each were both right, so the error stood at the last writer (M6)."""
    text = (ALGORITHMS / "msmes.bl").read_text().replace(M1_SPLIT, "\n                    ".join(halves))
    errors = [e for entry in bilinear.verify(_write(tmp_path, "split.bl", text)).entries for e in entry.errors]
    assert errors[0].message == f"`{halves[1]}` computes M1 again" and errors[1].message.startswith("C22 ends holding")
    line = next(number for number, each in enumerate(text.splitlines(), 1) if each.strip() == halves[1])
    assert (errors[1].span.line, errors[1].span.column, errors[1].notes[0]) == (line, 21, note)


# --- a product statement that writes one of its own factors -------------------------------------------

ONE = "algorithm s <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n\n"


@pytest.mark.parametrize("statement, temp", [("X = X * B11", "A"), ("X = A11 * X", "B")], ids=["left", "right"])
def test_a_product_that_overwrites_its_own_factor_is_refused(tmp_path, statement, temp):
    """`X = X * B11` verified: the fused leaf zeroes its target before it reads the factors
    (relative error 1.2e-01), and the library called cuBLAS with C the same buffer as A."""
    text = ONE + f"schedule al for s:\n  temp X: {temp}\n  stage s1: X = {temp}11\n  stage p: {statement}\n  stage s2: C11 += X\n"
    errors = [e for entry in bilinear.verify(_write(tmp_path, "alias.bl", text)).entries for e in entry.errors]
    assert [(e.span.line, e.message, e.notes) for e in errors] == [(
        8, f"`{statement}` writes X, one of its own factors: a product kernel reads its factors while it writes its targets",
        ("write the product into another buffer (a temp of C's shape)",),
    )]


# --- a failed allocation inside a call leaves A, B and C as they were ------------------------------


def _out_of_memory(*_):
    raise MemoryError("simulated: out of device memory")


@pytest.mark.parametrize("scheme, options, shape", [
    ("msmes", {"levels": 2, "breadth": 1}, (16, 16, 16)),  # in place above breadth-first levels
    ("msmes", {"levels": 3, "breadth": 1}, (36, 20, 28)),  # ... with peeled strips at every level
    ("winograd", {"levels": 1}, (9, 8, 8)),  # C scaled by beta before the workspace was allocated
    ("winograd", {"levels": 2, "breadth": 2}, (9, 8, 8)),  # a peeled row written before the runner's buffers
], ids=["msmes over breadth-first", "msmes odd", "depth-first beta", "breadth-first peeled row"])
def test_a_failed_allocation_changes_nothing(scheme, options, shape):
    """The leaves' workspace was allocated on first use: after MSMES's first stages had overwritten
    A and B (changed by order 1), or after C had been scaled by beta."""
    product = bilinear.compile(scheme, backend="numpy", **options)
    product.backend.empty = _out_of_memory
    M, K, N = shape
    rng = np.random.default_rng(6)
    A, B, C = rng.standard_normal((M, K)), rng.standard_normal((K, N)), rng.standard_normal((M, N))
    before = (A.copy(), B.copy(), C.copy())
    with pytest.raises(MemoryError):
        product(A, B, out=C, beta=3.0)
    for array, kept in zip((A, B, C), before):
        np.testing.assert_array_equal(array, kept)


@pytest.mark.gpu
def test_a_failed_ozaki_workspace_allocation_leaves_a_and_b_as_they_were(monkeypatch):
    import cupy

    from bilinear.runtime.ozaki_cuda import CudaOzaki

    product = bilinear.compile("msmes", levels=1, leaf="ozaki", backend="cupy")
    monkeypatch.setattr(CudaOzaki, "_buffer", _out_of_memory)
    rng = np.random.default_rng(8)
    A, B = (cupy.asarray(rng.standard_normal((256, 256))) for _ in range(2))
    before = (A.copy(), B.copy())
    with pytest.raises(MemoryError):
        product(A, B)
    assert all(bool((x == y).all()) for x, y in zip((A, B), before))


def test_an_unused_temporary_is_a_warning_and_takes_no_workspace(tmp_path):
    """It verified without a word, counted 512 MiB of workspace at n = 8192, and compile's library
    allocated it for nothing."""
    text = ONE + "schedule x for s:\n  temp Z: A\n  stage p: A11 * B11 -> C11\n"
    report = bilinear.verify(_write(tmp_path, "unused.bl", text))
    entry = next(entry for entry in report.entries if hasattr(entry, "workspace"))  # the schedule's
    assert report.ok
    assert [(w.span.line, w.message) for w in entry.warnings] == [(6, "temporary Z is never used; nothing allocates it")]
    assert entry.workspace == {}
    product = bilinear.compile(_write(tmp_path, "unused.bl", text), backend="numpy")
    assert product.workspace_bytes(64, 64, 64) == 0


STRASSEN_WITH_AN_UNUSED_TWIN = """algorithm twin <2,2,2;8>:
  M0 = (A11 + A22) * (B11 + B22)
  M1 = (A11 + A22) * (B11 + B22)
  M2 = (A21 + A22) * B11
  M3 = A11 * (B12 - B22)
  M4 = A22 * (B21 - B11)
  M5 = (A11 + A12) * B22
  M6 = (A21 - A11) * (B11 + B12)
  M7 = (A12 - A22) * (B21 + B22)
  C11 = M1 + M4 - M5 + M7
  C12 = M3 + M5
  C21 = M2 + M4
  C22 = M1 - M2 + M3 + M6
"""


@pytest.mark.parametrize("options", [{}, {"leaf": "fused"}, {"breadth": 1}, {"levels": 2}])
def test_an_unused_product_before_its_used_twin_is_not_taken_for_it(tmp_path, options):
    """A schedule's product statement was matched to the first of two equal products, the unused
    M0: the lowering's own re-check said "the pass 'single target' broke twin_cublas: ... never
    computes M1" (an internal error, a traceback)."""
    product = bilinear.compile(_write(tmp_path, "twin.bl", STRASSEN_WITH_AN_UNUSED_TWIN), backend="numpy", **options)
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((16, 16)), rng.standard_normal((16, 16))
    assert np.allclose(product(A, B), A @ B)


def test_a_schedule_computing_a_used_product_that_has_an_unused_twin_verifies(tmp_path):
    schedule = 'use "twin.bl"\nschedule s0 for twin: accumulate\n' + STRASSEN_SUMS_STAGE
    _write(tmp_path, "twin.bl", STRASSEN_WITH_AN_UNUSED_TWIN)
    report = bilinear.verify(_write(tmp_path, "s0.bl", schedule))
    assert report.ok, [e.message for entry in report.entries for e in entry.errors]


def test_the_report_counts_the_products_an_output_uses(tmp_path):
    """Strassen with an unused eighth product was reported as 8 products, 1.0x fewer
    multiplications and 1099.5 GFLOP at n = 8192, while the library computes 7."""
    text = (ROOT / "algorithms/strassen.bl").read_text().replace("<2,2,2;7>", "<2,2,2;8>").replace(
        "  C11 =", "  M8 = A11 * B11\n\n  C11 =", 1)
    report = bilinear.verify(_write(tmp_path, "s8.bl", text))
    (entry,) = report.entries
    assert entry.ok and (entry.counts.products, entry.counts.unused_products) == (8, 1)
    assert entry.counts.speedup_per_level == pytest.approx(8 / 7)
    from bilinear.report import to_text
    text = to_text(report, n=8192)
    assert "  products: 8, of which 1 never used (classical 8; 1.1429x fewer multiplications per level)" in text
    assert "one level at n=8192: 962.1 GFLOP in products" in text
    from bilinear.report import to_markdown  # its table had said 8 beside the GFLOP of 7 (a hunt)
    assert "| strassen | <2,2,2;8> | verified | 8, of which 1 never used | 18 / 18 |" in to_markdown(report, n=8192)


def test_additions_without_sharing_leave_out_a_product_that_cancels(tmp_path):
    """M8 reaches C22 through S = M8 + M1 and leaves it again (S - M8): "never used", its GFLOP left
    out, yet its three additions were in the 21 "without sharing", where each product is formed from
    its expansion and M8's is never formed (Strassen's own 18)."""
    text = (ROOT / "algorithms/strassen.bl").read_text().replace("<2,2,2;7>", "<2,2,2;8>").replace(
        "  C11 =", "  M8 = (A11 + A12 + A21) * (B11 - B12)\n  S = M8 + M1\n\n  C11 =", 1)
    text = text.replace("  C22 = M1", "  C22 = S - M8", 1)
    (entry,) = bilinear.verify(_write(tmp_path, "s8.bl", text)).entries
    assert entry.ok and entry.counts.unused_products == 1
    assert entry.counts.additions_unshared == 18


@pytest.mark.parametrize("text, said", [
    ("algorithm c <1,1,1;2>:\n  M1 = (3*A11) * B11\n  M2 = (2*A11) * B11\n  C11 = M1 - M2\n",
     "products: 2 (classical 1; 2x more multiplications per level)"),
    ("algorithm c <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", "products: 1 (classical 1; as many multiplications per level)"),
    # the ratio from the counts, not the inverse of the rounded one (1.4999x)
    ("algorithm r <1,2,1;3>:\n  M1 = A11 * B11\n  M2 = A12 * (2*B21)\n  M3 = A12 * B21\n  C11 = M1 + M2 - M3\n",
     "products: 3 (classical 2; 1.5x more multiplications per level)"),
])
def test_a_scheme_with_as_many_or_more_products_is_not_said_to_have_fewer(tmp_path, text, said):
    """A <1,1,1;2> scheme read "products: 2 (classical 1; 0.5x fewer multiplications per level)"."""
    report = bilinear.verify(_write(tmp_path, "c.bl", text))
    from bilinear.report import to_text
    assert said in to_text(report), to_text(report)


def test_a_schedule_for_an_algorithm_that_fails_says_why_it_fails(tmp_path):
    """Its entry read "schedule s for n [no properties]: FAILED" with no error at all ("errors": [] in the
    JSON): its algorithm's Brent equations fail, which its own entry says."""
    text = ("algorithm n <1,1,1;2>:\n  M1 = A11*B11\n  M2 = A11*B11\n  C11 = M1 + M2\n"
            "schedule s for n:\n  stage a: A11 * B11 -> +1/2*C11\n           A11 * B11 -> +1/2*C11\n")
    report = bilinear.verify(_write(tmp_path, "wa.bl", text))
    algorithm, schedule = report.entries
    assert not algorithm.ok and not schedule.ok
    assert [d.message for d in schedule.errors] == [
        "schedule s is for n, which does not verify (its entry above says why); a schedule of it computes what it does"]


def test_a_schedule_for_an_algorithm_with_errors_is_not_told_it_is_undefined(tmp_path):
    """"schedule s is for strassen2, which is not defined; did you mean strassen?" where strassen2 is
    defined (with an error) two lines up: following the note would schedule another algorithm."""
    algorithm = (ROOT / "algorithms" / "strassen.bl").read_text().split("algorithm strassen", 1)[1]
    text = ("algorithm strassen2" + algorithm).replace("C22 = M1 - M2 + M3 + M6", "C22 = M1 - M2 + M3 + M6 + M8")
    text = f'use "{ROOT}/algorithms/strassen.bl"\n' + text + "\nschedule s for strassen2: inplace\n  stage a: A11 * B12 -> +C12 +C22\n"
    with pytest.raises(BilinearError) as refused:
        bilinear.load(_write(tmp_path, "bad2.bl", text))
    messages = [d.message for d in refused.value.diagnostics]
    assert "M8 is not defined" in messages
    assert "schedule s is for strassen2, which has errors of its own; the schedule is checked once they are fixed" in messages
    assert not any("not defined" in m and "strassen2" in m for m in messages)
    assert not any("did you mean" in note for d in refused.value.diagnostics for note in d.notes)
