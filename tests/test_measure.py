"""The measuring harness's own accuracy: the reference product, the norms and what `run` compares."""

import shutil
from fractions import Fraction

import numpy as np
import pytest
from conftest import ROOT

import bilinear
from bilinear import measure
from bilinear.runtime.run import run_once

U64 = 2.0**-53


def _exact(A, B):
    """A@B in exact rationals (small matrices only)."""
    a = [[Fraction(float(x)) for x in row] for row in A]
    b = [[Fraction(float(x)) for x in row] for row in B]
    return [[sum(a[i][t] * b[t][j] for t in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def _wide_range(rng, shape):
    """Normal entries spread over 2^±40, so a dot product cancels far below its terms."""
    return rng.standard_normal(shape) * np.exp2(rng.integers(-40, 41, size=shape))


def test_the_float64_reference_is_the_exact_product_rounded_about_once():
    rng = np.random.default_rng(3)
    A, B = _wide_range(rng, (6, 61)), _wide_range(rng, (61, 5))
    exact = _exact(A, B)
    reference = measure.float64_reference(A, B, None, 1.0, 0.0)
    for i in range(6):
        for j in range(5):
            assert abs(Fraction(float(reference[i, j])) - exact[i][j]) <= 4 * U64 * abs(exact[i][j]), (i, j)


def test_the_float64_reference_is_exact_where_plain_float64_loses_everything():
    A = np.array([[1e16, 1.0, -1e16, 3.0]])
    B = np.array([[1.0], [1.0], [1.0], [1.0]])
    assert (A @ B)[0, 0] != 4.0  # the plain product's rounding
    assert measure.float64_reference(A, B, None, 1.0, 0.0)[0, 0] == 4.0


def test_the_float64_reference_takes_alpha_beta_tiles_zeros_and_float32(monkeypatch):
    rng = np.random.default_rng(5)
    A, B, C = rng.standard_normal((37, 29)), rng.standard_normal((29, 23)), rng.standard_normal((37, 23))
    whole = measure.float64_reference(A, B, C, -2.0, 0.5)
    assert np.allclose(whole, -2.0 * (A @ B) + 0.5 * C, rtol=0, atol=1e-13)
    monkeypatch.setattr(measure, "BLOCK_ELEMENTS", 60)  # tiles of 2 rows and 2 columns
    assert np.array_equal(measure.float64_reference(A, B, C, -2.0, 0.5), whole)
    A[3], B[:, 4] = 0.0, 0.0
    assert not measure.float64_reference(A, B, None, 1.0, 0.0)[3].any()
    single = [x.astype(np.float32) for x in (A, B, C)]
    assert measure.float64_reference(*single, 1.0, 1.0).dtype == np.float64


@pytest.mark.parametrize("factor", [1e-200, 1e-160, 1e160, 1e200])
def test_norms_and_errors_do_not_underflow_or_overflow(factor):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 30))
    assert measure._norm(factor * X) == pytest.approx(factor * np.linalg.norm(X), rel=1e-14)
    Y = X + 1e-3 * rng.standard_normal(X.shape)
    assert measure._norm(factor * X, factor * Y) == pytest.approx(factor * np.linalg.norm(X - Y), rel=1e-12)


def test_norms_of_non_finite_and_empty_matrices():
    assert np.isnan(measure._norm(np.array([[1.0, np.nan]])))
    assert measure._norm(np.array([[1.0, np.inf]])) == np.inf
    assert measure._norm(np.zeros((3, 0))) == 0.0 and measure._norm(np.zeros((2, 2))) == 0.0


@pytest.mark.parametrize("alpha", [1e-200, 1.0, 1e200])
def test_run_judges_a_wrong_product_wrong_whatever_alpha_scales(alpha):
    """Two moduli of the ozaki leaf are far too few: the error must not vanish (or blow up) with α.
    (One modulus keeps no correct bit of C at any level here, and is refused.)"""
    product = bilinear.compile("strassen", levels=1, leaf="ozaki", moduli=2, backend="numpy")
    result = run_once(product, 32, 32, 32, alpha=alpha, repeat=1)
    assert 1e-3 < result.error < 1 and not result.within_bound


def test_run_measures_the_float64_library_against_a_more_accurate_reference():
    """The float64 reference was the library's own product, so its error printed as 0."""
    product = bilinear.compile("strassen", levels=1, backend="numpy")
    result = run_once(product, 64, 64, 64, repeat=1)
    assert 1e-18 < result.reference_error < 1e-15


def test_run_measures_the_library_on_the_original_inputs_of_an_in_place_schedule():
    """msmes restores A and B only up to rounding: the library's error is taken on the originals."""
    product = bilinear.compile("msmes", levels=1, dtype="float32", backend="numpy")
    result = run_once(product, 54, 54, 54, repeat=1)
    A, B, _ = measure.random_inputs(np, 54, 54, 54, "float32")
    expected = measure.relative_error(A @ B, measure.float64_reference(A, B, None, 1.0, 0.0), A, B)
    assert result.reference_error == pytest.approx(expected, rel=1e-12)


def test_run_says_when_a_product_only_reads_a_and_b(capsys):
    """strassen's default schedule never writes A or B: "A restored to 0 ulp" claimed a restoration."""
    from bilinear.cli import main

    assert main(["run", "strassen", "-n", "16", "--backend", "numpy", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "A and B        only read (no level that ran writes them)" in out and "restored" not in out
    assert main(["run", "msmes", "-n", "16", "--backend", "numpy", "--repeat", "1"]) == 0
    assert "A restored to" in capsys.readouterr().out


def test_a_nan_after_an_inf_in_an_earlier_block_makes_the_norm_nan(monkeypatch):
    monkeypatch.setattr(measure, "BLOCK_ELEMENTS", 4)  # blocks of two rows
    X = np.ones((4, 2))
    X[0, 0], X[3, 1] = np.inf, np.nan
    assert np.isnan(measure._norm(X))
    X[3, 1] = 1.0
    assert measure._norm(X) == np.inf


def test_run_at_a_size_where_no_level_runs_claims_no_restoration(capsys):
    from bilinear.cli import main

    assert main(["run", "msmes", "-n", "1", "--backend", "numpy", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "levels run      0 of the 1 requested" in out and "A and B        only read" in out and "restored" not in out


@pytest.mark.filterwarnings("ignore:invalid value encountered in matmul:RuntimeWarning")  # NumPy's own, of A@B with NaN
def test_non_finite_inputs_are_multiplied_plainly_in_either_operand():
    """Non-finite entries give A@B's own NaN and Inf pattern, in either operand.  (The guard once let a
    NaN in B alone through to the slices, which happened to give the same pattern; this test passes
    on that code too: it pins the behaviour, not the bug.)"""
    A, B = np.ones((3, 4)), np.ones((4, 2))
    B[1, 1] = np.nan
    result = measure.exact_product(A, B)
    assert np.array_equal(np.isnan(result), np.isnan(A @ B))
    B[1, 1], A[0, 0] = 1.0, np.inf
    assert np.array_equal(measure.exact_product(A, B), A @ B)


def test_a_hybrids_bound_grows_by_each_levels_own_factor(capsys):
    """msmes,grey333 was judged by its worst level's ratio to the power of the levels, grey333's 2.519²
    = 6.345, where the levels grow the error by msmes's 1.854 times grey333's 2.519 = 4.669: the
    growth factor of a Kronecker product of schemes is the product of theirs."""
    from bilinear.cli import main
    from bilinear.hybrid import hybrid
    from bilinear.lower.decompose import compose, one_step

    program, per_level = hybrid("msmes,grey333", bilinear.load)
    product = bilinear.compile(program, levels=2, per_level=per_level, backend="numpy")
    result = run_once(product, 36, 36, 36, repeat=1)
    assert result.levels_run == 2
    assert result.growth == pytest.approx((12 + 2 * 2**0.5) / 8 * 68.01347479514432 / 27, rel=1e-12)
    assert result.growth == pytest.approx(4.669134, abs=1e-6)
    # the two levels as one algorithm, grey333 in each block of msmes's: the same growth over its classical
    steps = compose(one_step(program.algorithm("strassen")), one_step(program.algorithm("grey333")))
    growth = sum(_two_norm(p.u) * _two_norm(p.v) * _two_norm(p.w) for p in steps.products) / (6 * 6 * 6)
    assert result.growth == pytest.approx(growth, rel=1e-12)
    assert result.bound == pytest.approx(8 * U64 * 6 * result.growth, rel=1e-12)
    assert main(["run", "msmes", "--levels-schemes", "msmes,grey333", "-n", "36", "--backend", "numpy",
                 "--repeat", "1"]) == 0
    assert "bound 2.488e-14)" in capsys.readouterr().out


def _two_norm(coefficients) -> float:
    return sum(float(c) ** 2 for _, c in coefficients) ** 0.5


# msmes with a detour that cancels exactly but, in floating point, loses B22 to B21's 2^40 multiple
MSMES_DETOUR = (ROOT / "algorithms" / "msmes.bl").read_text().replace(
    "  stage products2:", "  stage detour1:    B22 += 1099511627776*B21\n  stage products2:"
).replace("  stage restore1:", "  stage detour2:    B22 -= 1099511627776*B21\n  stage restore1:")


def test_run_exits_1_when_a_schedule_restores_its_inputs_past_the_bound(capsys, tmp_path):
    """The restore is exact, so verify proves it; in floating point B came back 3e-4 off (normwise),
    and run printed it and exited 0: only C's error was judged."""
    from bilinear.cli import main

    assert "detour1" in MSMES_DETOUR and "detour2" in MSMES_DETOUR
    path = tmp_path / "detour.bl"
    path.write_text(MSMES_DETOUR)
    shutil.copy(ROOT / "algorithms" / "strassen.bl", tmp_path / "strassen.bl")
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()
    assert main(["run", str(path), "-n", "64", "--backend", "numpy", "--repeat", "1"]) == 1
    line = next(line for line in capsys.readouterr().out.splitlines() if "restored to" in line)
    assert line.endswith("   B EXCEEDS THE BOUND") and "A EXCEEDS" not in line


def test_a_restoration_within_the_bound_passes():
    product = bilinear.compile("msmes", levels=2, dtype="float32", backend="numpy")
    result = run_once(product, 96, 96, 96, repeat=1)
    assert result.restored_within_bound and result.within_bound
    assert "EXCEEDS" not in result.describe()


def test_a_hybrid_whose_in_place_level_did_not_run_claims_no_restoration(capsys):
    """strassen,msmes at n = 3 runs strassen's level alone: "A restored to 0 ulp" claimed a restoration
    of inputs nothing wrote (only whether some level ran was asked)."""
    from bilinear.cli import main

    assert main(["run", "strassen", "-n", "3", "--levels-schemes", "strassen,msmes", "--backend", "numpy",
                 "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "levels run      1 of the 2 requested" in out and "A and B        only read" in out and "restored" not in out


def test_a_hybrid_run_names_the_schemes_that_ran(capsys):
    """strassen,grey333,strassen at n = 4: grey333 cannot split strassen's 2×2 blocks, the breadth-first
    strassen below it ran all the same, and "levels run 2 of the 3 requested" read as the first two."""
    from bilinear.cli import main

    assert main(["run", "strassen", "-n", "4", "--levels-schemes", "strassen,grey333,strassen", "--breadth", "1",
                 "--backend", "numpy", "--repeat", "1"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  levels run"))
    assert line.endswith("; ran strassen, then strassen breadth-first"), line
    assert main(["run", "strassen", "-n", "8", "--levels", "2", "--backend", "numpy", "--repeat", "1"]) == 0
    assert "; ran" not in capsys.readouterr().out  # one scheme at every level: nothing to name


@pytest.mark.parametrize(("schemes", "said"), [("winograd,msmes", "; ran winograd, then msmes"),
                                               ("strassen,msmes", "; ran strassen, then msmes"),
                                               # rsmm sets C; under msmes, which adds, its fallback ran (a hunt)
                                               ("msmes,rsmm", "; ran msmes, then winograd")])
def test_a_hybrid_run_names_the_schedule_a_level_ran(capsys, schemes, said):
    """A schedule's level was named by its algorithm ("ran winograd, then strassen" where msmes ran), and
    strassen,msmes, two levels of one algorithm, named nothing (a hunt)."""
    from bilinear.cli import main

    assert main(["run", "strassen", "-n", "16", "--levels-schemes", schemes, "--backend", "numpy", "--repeat", "1"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  levels run"))
    assert line.endswith(said), line


def test_an_error_relative_to_a_non_finite_scale_is_what_float_division_gives():
    """The exact scale (a Fraction, session 75) made C = C_ref's error inf where A holds an Inf (0.0 before), and
    raised ValueError on a NaN (a review)."""
    from bilinear.measure import error_scale, relative_error, zero_error

    C = np.ones((2, 2))
    A = C.copy()
    A[0, 0] = np.inf
    assert relative_error(C, C, A, C) == 0.0 and zero_error(C, error_scale(A, C)) == 0.0
    A[0, 0] = np.nan
    assert np.isnan(relative_error(C, C, A, C)) and np.isnan(zero_error(C, error_scale(A, C)))
