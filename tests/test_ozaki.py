"""The ozaki leaf: FP64 products by the Ozaki scheme II (runtime/ozaki.py, runtime/ozaki_cuda.py).

CPU tests run the NumPy path against exact rational references; the GPU path runs on the CPU
too, through the emulator in tests/helpers/ozaki_emulation.py, and must agree bit for bit; the
GPU tests are in test_ozaki_gpu.py.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.lower.options import LEAF_KINDS, LEAVES, Options
from bilinear.runtime import ozaki

from conftest import ROOT

U = 2.0**-53


# --- references -----------------------------------------------------------------------------------
def exact_product(A: np.ndarray, B: np.ndarray) -> list[list[Fraction]]:
    """A@B in exact rationals (every double is a rational)."""
    a = [[Fraction(x) for x in row] for row in A.tolist()]
    b = [[Fraction(x) for x in col] for col in B.T.tolist()]
    return [[sum((x * y for x, y in zip(row, col)), Fraction(0)) for col in b] for row in a]


def scheme_bound(A: np.ndarray, B: np.ndarray, plan: ozaki.OzakiPlan) -> np.ndarray:
    """The scheme's error bound per element: rounding A'/B' moves each element by at most
    2^-bA·max|A_i:| (2^-bB·max|B_:j|), or 2^-bA·‖A_i:‖ with norm scaling; the products of the
    two errors; two roundings of C."""
    absA, absB = np.abs(A), np.abs(B)
    da = _unit(ozaki.statistic(np, A, 1, plan.scaling), plan.bits_a)[:, None]
    db = _unit(ozaki.statistic(np, B, 0, plan.scaling), plan.bits_b)[None, :]
    k = A.shape[1]
    return (da * absB.sum(axis=0)[None, :] + absA.sum(axis=1)[:, None] * db + k * da * db) * (1 + 1e-12)


def _unit(statistic: np.ndarray, bits: int) -> np.ndarray:
    """statistic·2^-bits, reading a norm bound past the doubles (-bound·2^-1024) back."""
    return np.ldexp(np.abs(statistic), np.where(statistic < 0, 1024, 0) - bits)


def check_against_exact(A, B, C0, alpha, beta, result, plan, chunks=1):
    """Within the scheme's bound; with k in chunks, each chunk's sum added into C rounds once more,
    relative to the running value (alpha·A@B's partial sum and beta·C0)."""
    exact = exact_product(A, B)
    bound = scheme_bound(A, B, plan) + 2 * (chunks - 1) * U * (np.abs(A) @ np.abs(B))
    for i, row in enumerate(exact):
        for j, value in enumerate(row):
            reference = Fraction(alpha) * value + (Fraction(beta) * Fraction(C0[i, j]) if beta else 0)
            error = abs(Fraction(result[i, j]) - reference)
            # three roundings (alpha·AB, beta·C, their sum) relative to the terms, not their sum
            terms = abs(Fraction(alpha) * value) + (abs(Fraction(beta) * Fraction(C0[i, j])) if beta else 0)
            running = Fraction((chunks - 1) * U) * (abs(Fraction(beta) * Fraction(C0[i, j])) if beta else 0)
            allowed = Fraction(abs(alpha) * bound[i, j]) + Fraction(3 * U) * terms + running + Fraction(2.0**-1074)
            assert error <= allowed, f"C[{i},{j}]: error {float(error):.3e} > bound {float(allowed):.3e}"


# --- moduli and the accuracy target -------------------------------------------------------------------
def test_moduli_are_pairwise_coprime_and_fit_int8():
    assert ozaki.MODULI[0] == 256 and len(ozaki.MODULI) == ozaki.MAX_MODULI
    assert all(p <= 256 for p in ozaki.MODULI)
    assert all(math.gcd(p, q) == 1 for i, p in enumerate(ozaki.MODULI) for q in ozaki.MODULI[:i])
    for p in ozaki.MODULI:
        r = ozaki.residues(np, np.arange(-1000, 1000, dtype=np.int64), (p,))[0]
        assert r.min() >= -128 and r.max() <= 127
        assert np.all((np.arange(-1000, 1000) - r.astype(np.int64)) % p == 0)


@pytest.mark.parametrize("k", [1, 7, 1000, 16384, ozaki.K_CHUNK])
@pytest.mark.parametrize("count", [4, 10, 14, 15, 16, 20])
def test_scale_bits_formula(count, k):
    """bA + bB is the largest t with k·2^t ≤ usable(M) ≈ M/2 (unless capped at 62 each)."""
    M = ozaki.modulus_product(count)
    bound = ozaki.usable(M)
    assert Fraction(bound, M) <= Fraction(1, 2) - Fraction(1, 2**40) and M // 2 - bound <= (M >> 40) + 1
    try:
        bits_a, bits_b = ozaki.scale_bits(count, k)
    except ValueError:
        assert 4 * k > bound
        return
    assert bits_a - bits_b in (0, 1) or (bits_a, bits_b) == (62, 62)
    assert k * 2 ** (bits_a + bits_b) <= bound
    if bits_b < ozaki.MAX_BITS:
        assert k * 2 ** (bits_a + bits_b + 1) > bound


@pytest.mark.parametrize("count", [6, 14, 15, 16, 20])
def test_norm_scale_bits(count):
    """Norm scaling: (2^bA + √k/2)(2^bB + √k/2) ≤ usable(M), the largest such, each ≤ 61; about
    log2(k) bits more than max."""
    k = 16384
    bound = ozaki.usable(ozaki.modulus_product(count))
    bits_a, bits_b = ozaki.scale_bits(count, k, "norm")
    assert (2**bits_a + 64) * (2**bits_b + 64) <= bound
    total = bits_a + bits_b + 1
    assert bits_b == 61 or (2 ** (total - total // 2) + 64) * (2 ** (total // 2) + 64) > bound
    assert sum(ozaki.scale_bits(count, k, "norm")) >= min(122, sum(ozaki.scale_bits(count, k)) + 13)
    assert ozaki.scale_bits(14, k, "norm") == (55, 54)  # two bits more than the old rule, 2^(bA+bB) ≤ M/8
    with pytest.raises(ValueError, match="scaling"):
        ozaki.scale_bits(count, 5, "sum")


@pytest.mark.parametrize("bits", [20, 40, 50, 53, 60])
@pytest.mark.parametrize("k", [5, 4096, 16384])
def test_moduli_for_is_the_fewest(bits, k):
    count = ozaki.moduli_for(bits, k)
    assert min(ozaki.scale_bits(count, k)) >= bits
    assert math.log2(ozaki.modulus_product(count)) > 2 * bits + math.log2(k) + 1
    if count > 1:
        assert min(ozaki.scale_bits(count - 1, k)) < bits
    assert ozaki.moduli_for(53, 16384) == 16


def test_moduli_for_refuses_impossible_targets():
    with pytest.raises(ValueError, match="between 1 and 62"):
        ozaki.moduli_for(63, 10)
    with pytest.raises(ValueError, match="more than 20 moduli"):
        ozaki.moduli_for(62, 2**40)


@pytest.mark.parametrize("count", range(1, ozaki.MAX_MODULI + 1))
def test_crt_limbs_are_exact_on_one_grid(count):
    crt = ozaki.crt_constants(count)
    M = ozaki.modulus_product(count)
    weight = sum(p // 2 for p in crt.moduli) + count // 2 + 1
    assert weight * 2**crt.limb_bits <= 2**53  # every partial sum of a limb is an exact integer

    def join(limbs):
        return sum(int(x) << (crt.shift + (ozaki.LIMBS - 1 - t) * crt.limb_bits) for t, x in enumerate(limbs))

    assert join(crt.m_limbs) == M >> crt.shift << crt.shift
    for p, y, limbs in zip(crt.moduli, crt.inverses, crt.q_limbs):
        assert join(limbs) == (M // p) >> crt.shift << crt.shift
        assert (M // p) * y % p == 1
    assert M.bit_length() - crt.shift <= ozaki.LIMBS * crt.limb_bits


@pytest.mark.parametrize("count", [3, 9, 16, 20])
def test_crt_reconstructs_extreme_integer_products(count):
    """All entries at ±2^bA, ±2^bB: the largest |A'B'| the bound allows, reconstructed to two roundings."""
    k = 9
    plan = ozaki.make_plan(k, count)
    rng = np.random.default_rng(count)
    ia = rng.choice([-1, 1], (5, k)).astype(np.int64) << plan.bits_a
    ib = rng.choice([-1, 1], (k, 4)).astype(np.int64) << plan.bits_b
    ia[0] = 1 << plan.bits_a  # one row and column of equal signs: |A'B'| = k·2^(bA+bB)
    ib[:, 0] = 1 << plan.bits_b
    products = ozaki.modular_products(np, ozaki.residues(np, ia, plan.moduli), ozaki.residues(np, ib.T, plan.moduli))
    value = ozaki.crt_finish(np, ozaki.crt_accumulate(np, products, plan.crt), plan.crt, np.zeros((1, 1), int))
    exact = [[sum(int(x) * int(y) for x, y in zip(row, col)) for col in ib.T.tolist()] for row in ia.tolist()]
    assert exact[0][0] == k << (plan.bits_a + plan.bits_b)
    for i, row in enumerate(exact):
        for j, x in enumerate(row):
            assert abs(Fraction(value[i, j]) - x) <= Fraction(2 * U) * abs(x)


# --- the product on the CPU ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 13, 5), (37, 53, 29), (16, 64, 16)])
def test_gemm_is_within_the_bound_and_like_dgemm(shape):
    m, k, n = shape
    rng = np.random.default_rng(m * k * n)
    A, B = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    C = np.empty((m, n))
    ozaki.gemm(np, A, B, C)  # the default: 53 bits
    plan = ozaki.make_plan(k)
    check_against_exact(A, B, C, 1.0, 0.0, C, plan)
    # like a DGEMM: within k·u·|A||B| elementwise
    exact = np.array([[float(x) for x in row] for row in exact_product(A, B)])
    assert np.all(np.abs(C - exact) <= k * U * (np.abs(A) @ np.abs(B)) + 2 * U * np.abs(exact))


def test_alpha_beta_and_nan_in_c():
    rng = np.random.default_rng(5)
    A, B, C0 = rng.standard_normal((9, 11)), rng.standard_normal((11, 6)), rng.standard_normal((9, 6))
    for alpha, beta in ((1.0, 0.0), (-2.5, 1.0), (0.3, -0.7), (0.0, 2.0)):
        C = C0.copy()
        ozaki.gemm(np, A, B, C, alpha, beta, count=16)
        check_against_exact(A, B, C0, alpha, beta, C, ozaki.make_plan(11, 16))
    C = np.full((9, 6), np.nan)
    ozaki.gemm(np, A, B, C, 1.0, 0.0)  # beta = 0: C is not read
    assert np.all(np.isfinite(C))


def test_rows_with_inf_or_nan_give_nan_rows():
    A, B = np.ones((3, 4)), np.ones((4, 2))
    A[1, 2] = np.inf
    B[0, 1] = np.nan
    C = np.zeros((3, 2))
    ozaki.gemm(np, A, B, C)
    assert np.isnan(C[1]).all() and np.isnan(C[:, 1]).all()
    assert np.all(C[[0, 2], 0] == 4.0)


@pytest.mark.parametrize("transposed", [False, True])
def test_norm_scaling_takes_rows_whose_norm_passes_the_float64_range(transposed):
    """Entries near 1.8e308 (the 2-norm past the doubles) made the row's products NaN under norm
    scaling: the bound is now written as -bound·2^-1024, and the products are those of the
    matrix scaled by 2^-8 (within the bound), times 2^8.  Transposed, the row is a column of B."""
    rng = np.random.default_rng(8)
    A, B = rng.standard_normal((4, 24)), np.ldexp(rng.standard_normal((24, 3)), -40)
    A[1] = np.copysign(1.5e308, A[1])
    if transposed:
        A, B = B.T.copy(), A.T.copy()
    statistic = ozaki.statistic(np, B if transposed else A, 0 if transposed else 1, "norm")
    assert statistic[1] < 0 and np.all(statistic[[0, 2]] > 0)
    for scaling in ozaki.SCALINGS:
        C, scaled = np.zeros((A.shape[0], B.shape[1])), np.zeros((A.shape[0], B.shape[1]))
        ozaki.gemm(np, A, B, C, count=16, scaling=scaling)
        small = (A, np.ldexp(B, -8)) if transposed else (np.ldexp(A, -8), B)
        ozaki.gemm(np, *small, scaled, count=16, scaling=scaling)
        check_against_exact(*small, scaled, 1.0, 0.0, scaled, ozaki.make_plan(24, 16, scaling=scaling))
        assert np.all(np.isfinite(C)) and np.array_equal(C, np.ldexp(scaled, 8)), scaling


def _matrix(draw, rows, cols, elements):
    values = np.array(draw(st.lists(elements, min_size=rows * cols, max_size=rows * cols)), dtype=np.float64)
    return values.reshape(rows, cols)


@st.composite
def problems(draw):
    m, k, n = (draw(st.integers(1, 9)) for _ in range(3))
    normal = st.floats(-4, 4, allow_nan=False, width=64)
    A, B = _matrix(draw, m, k, normal), _matrix(draw, k, n, normal)
    # rows and columns of very different magnitudes, zero rows, negatives
    A = np.ldexp(A, np.array(draw(st.lists(st.integers(-300, 300), min_size=m, max_size=m)))[:, None])
    B = np.ldexp(B, np.array(draw(st.lists(st.integers(-300, 300), min_size=n, max_size=n)))[None, :])
    if draw(st.booleans()):
        A[draw(st.integers(0, m - 1))] = 0.0
    count = draw(st.sampled_from([None, 6, 11, 16, 20]))
    chunk = draw(st.integers(1, k))  # k larger than the chunk exercises the k-splitting
    alpha, beta = draw(st.sampled_from([(1.0, 0.0), (-1.5, 1.0), (2.0, 0.25)]))
    return A, B, count, chunk, alpha, beta, draw(st.sampled_from(ozaki.SCALINGS))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_gemm_property(problem):
    A, B, count, chunk, alpha, beta, scaling = problem
    rng = np.random.default_rng(0)
    C0 = rng.standard_normal((A.shape[0], B.shape[1]))
    C = C0.copy()
    ozaki.gemm(np, A, B, C, alpha, beta, count=count, k_chunk=chunk, scaling=scaling)
    # chunks add up: each within its own bound (a chunk's own row maxima and norms are no larger)
    plans = [ozaki.make_plan(min(chunk, A.shape[1] - s), count, scaling=scaling) for s in range(0, A.shape[1], chunk)]
    weakest = min(plans, key=lambda p: p.bits_a + p.bits_b)
    check_against_exact(A, B, C0, alpha, beta, C, weakest, chunks=len(plans))


def test_chunk_sums_round_against_beta_c_too():
    """Found by test_gemm_property: with k in chunks, every chunk's sum added into C rounds
    relative to the running value, beta·C0 included (here 8 chunks of k = 1 add 2.5e-8 to -0.032:
    1.6 ulp off, beyond the 3 roundings a single pass makes)."""
    a = [float.fromhex(x) for x in ("0x1.5fc6413a94c18p-283", "0x0p+0", "0x0p+0", "0x0p+0", "0x1.d8dce8432a018p-284",
                                    "0x1.6b963fb37c9fcp-283", "0x0p+0", "0x1.88a778003cc30p-285")]
    b = [float.fromhex(x) for x in ("0x1.56p+254", "0x0p+0", "0x0p+0", "0x0p+0", "-0x1p+255", "0x1p+256", "0x0p+0",
                                    "0x1.87p+255")]
    A, B, C0 = np.array([a]), np.array(b)[:, None], np.array([[float.fromhex("-0x1.073d2e6df9e08p-3")]])
    C = C0.copy()
    ozaki.gemm(np, A, B, C, 2.0, 0.25, k_chunk=1)
    check_against_exact(A, B, C0, 2.0, 0.25, C, ozaki.make_plan(1), chunks=8)


def test_workspace_model():
    n = 16384
    layout = ozaki.workspace_layout(n, n, n, 16)
    assert layout["products"] - layout["ra"] == 16 * 2 * n * n  # int8 residues of A and Bᵀ: 8 GiB
    assert layout["total"] - layout["products"] == 16 * 4 * n * n  # int32 products: 16 GiB
    assert ozaki.workspace_bytes(n, n, n, 16) < 25 * 2**30


# --- the leaf kind ------------------------------------------------------------------------------------
def test_a_strassen_level_on_the_residues_where_asked_or_large_and_memory_allows(monkeypatch):
    """Off by default (the plain leaf measured faster at 16384 once k ran whole); with a size
    threshold, on from there, never past the budget or, without one, the device's free memory
    (it takes 7/4 of the residues)."""
    from types import SimpleNamespace

    from bilinear.runtime import ozaki_cuda
    from bilinear.runtime.ozaki_cuda import OzakiLeaf

    n, gib = 16384, 2**30
    leaf = OzakiLeaf.__new__(OzakiLeaf)
    leaf.count, leaf.bits, leaf.budget, leaf.scaling, leaf.residue_levels = 14, 53, None, "norm", None
    leaf.cuda = SimpleNamespace(free_bytes=lambda: 40 * gib)
    assert ozaki_cuda.RESIDUE_STRASSEN_FROM is None and leaf._setup(n, n, n) == ((n, n), 0)
    monkeypatch.setattr(ozaki_cuda, "RESIDUE_STRASSEN_FROM", n)
    needed = ozaki.workspace_bytes(n, n, n, 14, scaling="norm", residue_levels=1)
    assert 30 * gib < needed < 40 * gib  # 36.8 GiB against the plain scheme's 21
    assert leaf._setup(n, n, n) == ((n, n), 1)
    assert leaf._setup(n, n // 2, n) == ((n, n), 0)  # any smaller dimension: the plain scheme
    leaf.cuda = SimpleNamespace(free_bytes=lambda: 30 * gib)
    assert leaf._setup(n, n, n) == ((n, n), 0)
    leaf.budget = needed
    assert leaf._setup(n, n, n) == ((n, n), 1)
    leaf.residue_levels = 0
    assert leaf._setup(n, n, n) == ((n, n), 0)
    leaf.residue_levels, leaf.budget = 1, None
    assert leaf._setup(64, 64, 64) == ((64, 64), 1)  # asked for: at any size that fits


def test_leaf_kind_table_drives_the_choices():
    assert "ozaki" in LEAVES and LEAF_KINDS["ozaki"].dtypes == ("float32", "float64") and not LEAF_KINDS["ozaki"].sums
    out = subprocess.run([sys.executable, "-m", "bilinear.cli", "run", "--help"], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert "ozaki" in out


def test_scaling_is_an_option_of_compile_and_the_command_line():
    """The measured configuration (14 moduli, norm scaling) is reachable without the internals."""
    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((40, 36)), rng.standard_normal((36, 44))
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", levels=0, leaf="ozaki", moduli=14, scaling="norm",
                               backend="numpy")
    assert product.lowered.options.scaling == "norm"
    expected = np.zeros((40, 44))
    ozaki.gemm(np, A, B, expected, count=14, scaling="norm")
    assert np.array_equal(product(A, B), expected)
    with pytest.raises(ValueError, match="scaling must be one of max, norm, not 'l2'"):
        Options(leaf="ozaki", scaling="l2")
    run = subprocess.run([sys.executable, "-m", "bilinear.cli", "run", "algorithms/strassen.bl", "-n", "33", "--leaf",
                          "ozaki", "--moduli", "14", "--scaling", "norm", "--backend", "numpy"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    bad = subprocess.run([sys.executable, "-m", "bilinear.cli", "run", "algorithms/strassen.bl", "-n", "8", "--leaf",
                          "ozaki", "--scaling", "l2", "--backend", "numpy"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "invalid choice: 'l2'" in bad.stderr and "Traceback" not in bad.stderr


def test_float32_products_keep_a_floats_24_bits():
    """float32 A, B and C go through the float64 steps (their elements convert exactly), with
    enough moduli for 24 bits (8 at k = 4096: bA, bB ≥ 24), and C is rounded once: on random data
    the error against the exact product is about SGEMM's (NumPy's float32 product here)."""
    assert ozaki.default_bits(np.float32) == 24 and ozaki.default_bits(np.float64) == 53
    assert ozaki.moduli_for(24, 4096) == 8 and min(ozaki.make_plan(4096, None, 24).bits_a, 24) == 24
    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", dtype="float32", levels=1, leaf="ozaki", backend="numpy")
    rng = np.random.default_rng(8)
    A, B = rng.standard_normal((64, 300), dtype=np.float32), rng.standard_normal((300, 48), dtype=np.float32)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    C = product(A, B)
    assert C.dtype == np.float32
    error = np.abs(C - exact).max() / np.abs(exact).max()
    sgemm = np.abs(A @ B - exact).max() / np.abs(exact).max()
    assert error < 4 * sgemm and error < 1e-6, (error, sgemm)
    with pytest.raises(ValueError, match="moduli"):
        Options(leaf="ozaki", moduli=21)
    run = subprocess.run([sys.executable, "-m", "bilinear.cli", "run", "algorithms/strassen.bl", "-n", "8",
                          "--dtype", "float32", "--leaf", "ozaki", "--backend", "numpy"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr


def test_float32_alpha_and_beta_round_once():
    """C = alpha·A@B + beta·C in float64, then one rounding to float32 (as the GPU passes do)."""
    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((5, 7), dtype=np.float32), rng.standard_normal((7, 3), dtype=np.float32)
    C = rng.standard_normal((5, 3), dtype=np.float32)
    wide = C.astype(np.float64)
    ozaki.gemm(np, A.astype(np.float64), B.astype(np.float64), wide, 0.75, -1.5, count=8)
    ozaki.gemm(np, A, B, C, 0.75, -1.5, count=8)
    assert C.dtype == np.float32 and np.array_equal(C, wide.astype(np.float32))


@pytest.mark.parametrize("scheme", ["strassen", "winograd", "msmes"])
@pytest.mark.parametrize("levels", [0, 1, 2])
def test_strassen_levels_with_ozaki_leaves(scheme, levels):
    product = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", levels=levels, leaf="ozaki", backend="numpy")
    rng = np.random.default_rng(levels)
    A, B, C = rng.standard_normal((37, 29)), rng.standard_normal((29, 23)), rng.standard_normal((37, 23))
    beta = 1.0 if scheme == "msmes" else 0.0
    out = product(A, B, out=C.copy(), alpha=0.5, beta=beta)
    exact = np.array([[float(x) for x in row] for row in exact_product(A, B)])
    reference = 0.5 * exact + beta * C
    assert np.max(np.abs(out - reference)) <= 8 * 29 * U * (4 ** levels) * np.max(np.abs(A) @ np.abs(B))


def test_cli_runs_ozaki_leaves():
    run = subprocess.run([sys.executable, "-m", "bilinear.cli", "run", "algorithms/strassen.bl", "-n", "33",
                          "--levels", "2", "--leaf", "ozaki", "--backend", "numpy"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr


@given(st.integers(1, 10**6), st.sampled_from([256, 4096, 8192]), st.sampled_from([16, 128, 256]))
def test_tile_spans_cover_the_extent_in_near_equal_aligned_pieces(extent, tile, align):
    from bilinear.runtime.int8_gemm import tile_spans

    spans = tile_spans(extent, tile, align)
    ends = [start + size for start, size in spans]
    assert spans[0][0] == 0 and [start for start, _ in spans[1:]] == ends[:-1] and ends[-1] == extent
    assert len(spans) <= -(-extent // tile)
    step = min(align, tile)
    assert all(start % step == 0 and size % step == 0 for start, size in spans[:-1])
    assert max(size for _, size in spans) < tile + step  # about the tile: never a thin remainder beside full tiles
    assert spans[-1][1] > spans[0][1] - len(spans) * step


def test_tile_spans_split_10000_rows_evenly():
    from bilinear.runtime.int8_gemm import tile_spans

    assert tile_spans(10000, 8192, 256) == [(0, 5120), (5120, 4880)]
    assert tile_spans(16384, 8192, 256) == [(0, 8192), (8192, 8192)]
    assert tile_spans(9088, 8192, 128) == [(0, 4608), (4608, 4480)]
    assert tile_spans(4, 8192, 256) == [(0, 4)]


# --- the GPU path, emulated on the CPU ------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("scaling", ozaki.SCALINGS)
@pytest.mark.parametrize(("shape", "count", "chunk"), [
    ((37, 53, 29), 16, ozaki.K_CHUNK), ((8, 16, 4), 5, ozaki.K_CHUNK), ((13, 70, 9), 12, 33),
    ((1, 1, 1), 20, ozaki.K_CHUNK), ((5, 3, 6), 14, 2), ((9, 200, 7), 15, ozaki.K_CHUNK),
])
def test_cuda_path_emulated_matches_numpy_bitwise(monkeypatch, shape, count, chunk, scaling):
    from helpers.ozaki_emulation import emulated_runner

    runner = emulated_runner(monkeypatch)
    runner.batched = count % 2 == 0  # one strided-batched call over the moduli, or one per modulus
    runner.tile = 16 if count in (12, 15, 16) else 0  # int8 GEMMs in tiles (k tiles accumulate), or whole
    runner.k_tile = 0 if count == 15 else None  # k whole under tiles of rows and columns, or tiled too
    m, k, n = shape
    rng = np.random.default_rng(m + k + n)
    A, B, C0 = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    A[m // 2] *= 1e-200
    B[:, n // 2] *= 1e150
    if m > 2:
        A[1, 0] = np.inf
    # views with leading dimensions larger than their rows, as Strassen blocks are
    A = np.pad(A, ((0, 0), (0, 3)))[:, :k]
    ours, reference = C0.copy(), C0.copy()
    runner.gemm(A, B, ours, 0.7, 0.5, count=count, k_chunk=chunk, scaling=scaling)
    ozaki.gemm(np, A, B, reference, 0.7, 0.5, count=count, k_chunk=chunk, scaling=scaling)
    assert np.array_equal(ours, reference, equal_nan=True)
    assert runner.workspace_bytes == ozaki.workspace_bytes(m, min(k, chunk), n, count, scaling=scaling)


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 3000), k=st.integers(1, 5000), n=st.integers(1, 3000), count=st.integers(14, 16),
       share=st.floats(0, 1.2), scaling=st.sampled_from(ozaki.SCALINGS))
def test_tiles_of_c_fit_the_budget_as_few_as_can(m, k, n, count, share, scaling):
    """tile_for_budget: all of C where it fits; else bands of rows where one row of C fits (B whole), the
    fewest; else tiles; a ValueError where not even one element fits."""
    def need(rows, cols):
        return ozaki.workspace_bytes(rows, k, cols, count, scaling=scaling)

    least, most = need(1, 1), need(m, n)
    budget = int(least + share * (most - least)) if share <= 1 else least - 1
    if budget < least:
        with pytest.raises(ValueError, match="even one element of C at a time"):
            ozaki.tile_for_budget(m, k, n, count, budget, scaling)
        return
    rows, cols = ozaki.tile_for_budget(m, k, n, count, budget, scaling)
    assert 1 <= rows <= m and 1 <= cols <= n and need(rows, cols) <= budget
    if budget >= most:
        assert (rows, cols) == (m, n)
    elif need(1, n) <= budget:
        bands = -(-m // rows)
        assert cols == n and need(-(-m // (bands - 1)), n) > budget  # one band fewer would not fit
    else:
        assert cols < n


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_tiles_of_c_give_the_whole_products_bits(monkeypatch):
    """Bands of rows and two-dimensional tiles of C (views into A, B and C) against the product at once,
    on the GPU passes, emulated: each tile scales A's rows and B's columns over the whole of k."""
    from bilinear.runtime.numpy_backend import NumpyBackend
    from bilinear.runtime.ozaki_cuda import OzakiLeaf
    from helpers.ozaki_emulation import emulated_runner

    rng = np.random.default_rng(29)
    m, k, n = 37, 300, 29
    A, B, C = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    count = ozaki.moduli_for(53, k)
    for budget, tile in ((ozaki.workspace_bytes(12, k, n, count), (10, n)), (100_000, None)):
        leaf = OzakiLeaf(NumpyBackend(), budget=budget)
        leaf.cuda = emulated_runner(monkeypatch)
        got, want = C.copy(), C.copy()
        leaf(A, B, got, 0.7, 0.5)
        assert leaf.cuda.workspace_bytes <= budget < ozaki.workspace_bytes(m, k, n, count)  # it ran in tiles
        leaf.cuda.gemm(A, B, want, 0.7, 0.5)
        chosen = ozaki.tile_for_budget(m, k, n, count, budget)
        assert np.array_equal(got, want) and (chosen == tile if tile else chosen[1] < n), chosen


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_under_a_tight_limit_the_runtime_runs_tiles_of_c(monkeypatch):
    """strassen L2 with one level breadth-first under workspace_limit=60,000: at 37×50×21 no plan fits with
    its Ozaki leaves' C at once, and the product raised; the depth-first plan now runs them in tiles of C
    that fit (the GPU passes, emulated) and gives the untiled product bit for bit.  Below one element of C
    at a time it still raises, naming that."""
    from helpers.ozaki_emulation import emulated_runner

    def compiled(limit, breadth=1):
        product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", levels=2, breadth=breadth, leaf="ozaki",
                                   backend="numpy", workspace_limit=limit)
        for executor in product.executors:
            executor.leaf.cuda = emulated_runner(monkeypatch)
            executor.leaf.cuda.batched = False
        return product

    rng = np.random.default_rng(23)
    A, B = rng.standard_normal((37, 50)), rng.standard_normal((50, 21))
    limited, free = compiled(60_000), compiled(None, breadth=0)  # the plan it falls back to, unlimited
    assert [e.workspace_bytes(37, 50, 21) for e in limited.executors] == [103_800, 93_216]
    runs = limited.executor_for(37, 50, 21)
    assert runs is limited.executors[-1] and runs.leaf.budget == 60_000 - 6_944
    assert np.array_equal(limited(A, B), free(A, B))
    assert limited.workspace_bytes(37, 50, 21) <= 60_000 and limited.held_workspace_bytes() <= 60_000
    assert limited.executor_for(4, 4, 4).leaf.budget is None  # a call that fits runs all of C at once again
    with pytest.raises(ValueError, match=r"needs 93216 bytes of workspace even depth-first, more than the limit of "
                                         r"9000 \(its Ozaki leaves one element of C at a time too\)"):
        compiled(9000)(A, B)
    # bilinear.matmul's way in: no limit of its own, the room it finds free given per call
    free.release_workspace()  # what its untiled call above held
    with free.leaf_budget(None):
        assert free.workspace_bytes(37, 50, 21) == 93_216
        assert free.tile_budget(37, 50, 21, 9000) is None
        assert free.tile_budget(37, 50, 21, 60_000) == 60_000 - 6_944 == free.executor.leaf.budget
    assert free.executor.leaf.budget == 60_000 - 6_944  # the budget stays for the calls after
    assert np.array_equal(free(A, B), limited(A, B)) and free.held_workspace_bytes() <= 60_000


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("scaling", ozaki.SCALINGS)
@pytest.mark.parametrize(("shape", "count", "chunk"), [
    ((37, 53, 29), 16, ozaki.K_CHUNK), ((8, 16, 4), 5, ozaki.K_CHUNK), ((13, 70, 9), 12, 33), ((1, 1, 1), 20, ozaki.K_CHUNK),
    ((5, 3, 6), 14, 2), ((9, 200, 7), 15, ozaki.K_CHUNK), ((16, 64, 24), 13, ozaki.K_CHUNK),
])
def test_strassen_on_residues_emulated_is_the_plain_scheme_bitwise(monkeypatch, shape, count, chunk, scaling):
    """One Strassen level on the int8 residues is exact modulo every p: the same bits as without."""
    from helpers.ozaki_emulation import emulated_runner

    runner = emulated_runner(monkeypatch)
    runner.tile = 16  # the half-size GEMMs in tiles too
    runner.batched = not count % 2  # one call per modulus, or one batched call
    m, k, n = shape
    rng = np.random.default_rng(m * k + n)
    A, B, C0 = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    A[m // 2] *= 1e-150
    B[:, n // 2] *= 1e100
    if n > 2:
        B[0, 1] = np.nan
    ours, reference = C0.copy(), C0.copy()
    runner.gemm(A, B, ours, -1.25, 0.5, count=count, k_chunk=chunk, scaling=scaling, residue_levels=1)
    ozaki.gemm(np, A, B, reference, -1.25, 0.5, count=count, k_chunk=chunk, scaling=scaling)
    assert np.array_equal(ours, reference, equal_nan=True)
    assert runner.workspace_bytes == ozaki.workspace_bytes(m, min(k, chunk), n, count, scaling=scaling, residue_levels=1)


def test_a_limit_refusal_on_numpy_does_not_blame_the_ozaki_leaves_for_bytes_they_do_not_take():
    """On NumPy the Ozaki leaves take no workspace, so the bytes refused are the levels' own; the
    refusal had said "(its Ozaki leaves one element of C at a time too)" all the same (a hunt)."""
    product = bilinear.compile("strassen", levels=2, leaf="ozaki", backend="numpy", workspace_limit=100)
    A, B = np.ones((37, 50)), np.ones((50, 21))
    with pytest.raises(ValueError) as refused:
        product(A, B)
    assert str(refused.value) == ("a 37x50 @ 50x21 product with strassen needs 6944 bytes of workspace even "
                                  "depth-first, more than the limit of 100; raise the limit or use an in-place "
                                  "schedule such as msmes")


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("residue_levels", [0, 1])
@pytest.mark.parametrize(("shape", "offset"), [((37, 53, 29), 0), ((16, 64, 24), 1), ((9, 200, 7), 0)])
def test_cuda_path_emulated_in_float32_matches_numpy_bitwise(monkeypatch, residue_levels, shape, offset):
    """The float32 passes (float loads, four to a 16-byte load where the row is aligned; C rounded
    once) give NumPy's float32 path bit for bit, with and without the residue level."""
    from helpers.ozaki_emulation import emulated_runner

    runner = emulated_runner(monkeypatch)
    m, k, n = shape
    rng = np.random.default_rng(m + k + n)
    A = rng.standard_normal((m, k + offset), dtype=np.float32)[:, offset:]  # offset: rows not 16-byte aligned
    B, C0 = rng.standard_normal((k, n), dtype=np.float32), rng.standard_normal((m, n), dtype=np.float32)
    A[m // 2] *= np.float32(1e-30)
    ours, reference = C0.copy(), C0.copy()
    runner.gemm(A, B, ours, 0.7, 0.5, residue_levels=residue_levels)
    ozaki.gemm(np, A, B, reference, 0.7, 0.5)
    assert ours.dtype == np.float32 and np.array_equal(ours, reference)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("residue_levels", [0, 1])
def test_cuda_path_emulated_at_the_ends_of_the_exponent_range(monkeypatch, residue_levels):
    """Rows and columns of subnormals, of values near 1e-300 (2^e beyond the doubles: two scale
    factors) and near 1e308 with tiny elements (scaled to subnormals, rounded to ±0), bit for bit."""
    from helpers.ozaki_emulation import emulated_runner

    runner = emulated_runner(monkeypatch)
    rng = np.random.default_rng(21)
    m, k, n = 11, 37, 9
    A, B, C0 = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    A[0] *= 1e-310  # subnormal
    A[1] *= 1e-300
    A[2] *= 1e300
    A[2, ::3] = 1e-300
    A[3, 5] = 5e-324
    B[:, 0] *= 1e-305
    B[:, 1] *= 1e305
    B[::4, 1] = -1e-290
    A[4] = np.copysign(1.5e308, A[4])  # 2-norms past the doubles (norm scaling wrote NaN here)
    B[:, 2] = np.copysign(1.5e308, B[:, 2])
    for scaling in ozaki.SCALINGS:
        ours, reference = C0.copy(), C0.copy()
        runner.gemm(A, B, ours, 1.0, 0.5, count=16, scaling=scaling, residue_levels=residue_levels)
        with np.errstate(over="ignore", invalid="ignore"):  # products past the doubles: Inf, on both paths
            ozaki.gemm(np, A, B, reference, 1.0, 0.5, count=16, scaling=scaling)
        assert np.array_equal(ours, reference, equal_nan=True)
        assert np.isfinite(ours[4, 0]) and np.isfinite(ours[0, 2]), scaling


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_residue_kernels_emulated_at_62_bits():
    """oz_residues_a / oz_residues_bt on integers up to 2^62 (e = 0), ties of rint (x.5), a tiny row
    and a huge one: the residues ozaki.residues gives, zero padding, every modulus."""
    from helpers.ozaki_emulation import EmulatedKernel

    from bilinear.lower.ozaki_passes import KernelSource

    count, bits, rows, cols = 20, 62, 5, 40
    rows_pad, kp = 8, 48
    rng = np.random.default_rng(62)
    A = rng.standard_normal((rows, cols))
    A[0] = np.ldexp(rng.uniform(-1, 1, cols), 62)  # integers (multiples of 2^9 and up)
    A[0, 0] = 2.0**62 - 2.0**10  # the row's largest: e = 0
    A[1] = rng.integers(-2**20, 2**20, cols) + 0.5  # ties to even
    A[1, 0] = 2.0**61
    A[2] *= 1e-305
    A[3] *= 1e300
    A[3, 1::2] = 3e-300
    A[4, :] = 0.0
    source = KernelSource.of(count).render()
    for name, x, axis in (("oz_residues_a", A, 1), ("oz_residues_bt", A.T.copy(), 0)):
        stat = ozaki.statistic(np, x, axis, "max")
        e, bad = ozaki.exponents(np, stat, bits)
        expected = ozaki.residues(np, ozaki.scaled_integers(np, x, e, bad, axis), ozaki.MODULI[:count])
        if axis == 0:
            expected = expected.transpose(0, 2, 1)
        out = np.full((count, rows_pad, kp), 0x5A, dtype=np.int8)
        lengths = (rows, cols) if axis == 1 else (cols, rows)
        EmulatedKernel(source, name)((1,), (32,), (
            x, np.int64(x.shape[1]), np.int32(lengths[0]), np.int32(lengths[1]), np.int32(rows_pad), np.int32(kp),
            np.ascontiguousarray(stat).view(np.uint64), np.int32(bits), out))
        assert np.array_equal(out[:, :rows, :cols], expected), name
        assert not out[:, rows:].any() and not out[:, :, cols:].any()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_pass_marks_for_the_breakdown(monkeypatch):
    """With a timing list the runner marks every pass (benchmarks/ozaki.py --breakdown)."""
    from helpers.ozaki_emulation import emulated_runner

    runner = emulated_runner(monkeypatch)
    rng = np.random.default_rng(1)
    A, B, C = rng.standard_normal((6, 9)), rng.standard_normal((9, 5)), np.empty((6, 5))
    runner.timing = []
    runner.gemm(A, B, C, count=14, k_chunk=5)  # two chunks of k: each starts again
    passes = ["start", "stats A", "stats B", "residues A", "residues B", "int8 GEMMs", "reconstruct"]
    assert [name for name, _ in runner.timing] == passes * 2
    runner.timing = []
    runner.gemm(A, B, C, count=14, residue_levels=1)
    assert [name for name, _ in runner.timing] == passes


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("residue_levels", [0, 1])
def test_int8_gemms_go_through_cublas_capture_while_a_graph_is_captured(monkeypatch, residue_levels):
    """CuPy's cuBLAS wrappers raise on a capturing stream, so then the int8 GEMMs take
    cublas_capture's ctypes call, with the same arguments: the same bits."""
    from helpers.ozaki_emulation import EmulatedCublas, emulated_runner

    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((16, 24)), rng.standard_normal((24, 8))
    results = []
    for capturing in (False, True):
        runner = emulated_runner(monkeypatch, capturing=capturing)
        EmulatedCublas.calls.clear()
        C = np.empty((16, 8))
        runner.gemm(A, B, C, count=6, residue_levels=residue_levels)
        assert EmulatedCublas.calls
        results.append(C)
    assert np.array_equal(*results)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_int8_calls_per_modulus_by_default_and_batched_on_request(monkeypatch):
    """By default one call per modulus (per tile), the fastest measured; ``batched`` one call for all."""
    from helpers.ozaki_emulation import EmulatedCublas, emulated_runner

    runner = emulated_runner(monkeypatch)
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((6, 9)), rng.standard_normal((9, 5))
    reference = np.empty((6, 5))
    ozaki.gemm(np, A, B, reference, count=5)
    for batched, batches in ((None, [1] * 5), (True, [5])):
        runner.batched = batched
        EmulatedCublas.calls.clear()
        C = np.empty((6, 5))
        runner.gemm(A, B, C, count=5)
        assert [call[-1] for call in EmulatedCublas.calls] == batches
        assert np.array_equal(C, reference)


def test_compile_writes_artifacts_for_ozaki_leaves(tmp_path):
    """The C++ host layer runs the ozaki leaves itself (tests/test_host_ozaki.py): no note says otherwise."""
    run = subprocess.run([sys.executable, "-m", "bilinear.cli", "compile", "algorithms/strassen.bl", "-o",
                          str(tmp_path / "out"), "--leaf", "ozaki"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "note:" not in run.stderr
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    assert '"leaf": "ozaki"' in manifest and "Python runtime" not in manifest and '"ozaki": {' in manifest


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize(("count", "io"), [(16, "double"), (8, "float"), (20, "double")])
def test_nvcc_compiles_the_ozaki_passes(tmp_path, count, io):
    """The template's passes as NVRTC gets them (float64 and float32 products), compiled for sm_90:
    CI has nvcc but no GPU, so a template that breaks fails here, not on the device."""
    from bilinear.lower.ozaki_passes import KernelSource

    source = tmp_path / "ozaki.cu"
    source.write_text(KernelSource.of(count, io).render())
    result = subprocess.run([shutil.which("nvcc"), "-arch=sm_90", "-std=c++17", "-Xptxas", "-O0", "-c", str(source),
                             "-o", str(tmp_path / "ozaki.o")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("scheme", ["strassen", "winograd", "msmes"])
def test_too_few_moduli_are_refused_before_anything_is_written(scheme):
    """The leaf raised at its first GEMM: msmes left A and B holding operand sums, and every scheme
    had written part of C (beta = 1 lost what it held).  As the C library's status 5000: nothing runs."""
    rng = np.random.default_rng(0)
    A, B, C = rng.standard_normal((8, 64)), rng.standard_normal((64, 8)), np.full((8, 8), 7.0)
    A0, B0 = A.copy(), B.copy()
    product = bilinear.compile(scheme, levels=1, leaf="ozaki", moduli=1, backend="numpy")
    message = (r"^1 modulus is too few for an inner dimension of 32 \(it keeps no correct bit past 15\): give 2 or more "
               r"\(--moduli 2, moduli=2\), or none to have them chosen from k \(leave --moduli out, moduli=None\)$")
    with pytest.raises(ValueError, match=message):
        product(A, B, out=C, beta=1.0)
    assert np.array_equal(A, A0) and np.array_equal(B, B0) and (C == 7).all()
    # leaves of k = 15 keep (2, 1) bits, and one level can grow their error bound past the largest C can be
    with pytest.raises(ValueError, match=r"^1 modulus is too few for 1 level over leaves of inner dimension 15: "):
        product(A[:, :30], B[:30], out=C, beta=1.0)
    assert (C == 7).all()


@pytest.mark.parametrize("k", [16, 31])
def test_moduli_that_keep_one_bit_of_each_side_are_refused(k):
    """One modulus at k = 16..31 kept 1 bit of A's and B's elements: the error bound 2^-1 + 2^-1 of the
    scale max|A_i:|·Σ|B_:j| is C's own size (C = 0 meets it), and the results had no correct digit."""
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((31, k)), rng.standard_normal((k, 31))
    product = bilinear.compile("strassen", levels=0, leaf="ozaki", moduli=1, backend="numpy")
    message = (rf"^1 modulus is too few for an inner dimension of {k} \(it keeps no correct bit past 15\): give 2 or "
               r"more \(--moduli 2, moduli=2\), or none to have them chosen from k \(leave --moduli out, "
               r"moduli=None\)$")
    with pytest.raises(ValueError, match=message):
        product(A, B)
    with pytest.raises(ValueError, match=rf"^1 modulus is too few for an inner dimension of {k}$"):
        ozaki.scale_bits(1, k)
    assert ozaki.scale_bits(1, 15) == (2, 1)  # 3/4 of the scale: the fewest bits whose bound says something


def test_auto_levels_with_one_modulus_refuse_levels_that_grow_the_error_past_c():
    """levels="auto" chose two levels at 32x32x32 (one modulus keeps (2, 1) bits at the leaves' k = 8, an
    error bound of 3/4 of the scale) and returned an error 2.6 times max|C|: each Strassen level can grow
    the leaves' error bound 6 times.  No level keeps a correct bit, so the call is refused as level 0's."""
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((32, 32)), rng.standard_normal((32, 32))
    auto = bilinear.compile("strassen", levels="auto", leaf="ozaki", moduli=1, backend="numpy")
    assert auto.choose(32, 32, 32)[:2] == (0, "ozaki")  # the last resort: its call says why
    message = (r"^1 modulus is too few for an inner dimension of 32 \(it keeps no correct bit past 15\): give 2 or more "
               r"\(--moduli 2, moduli=2\), or none to have them chosen from k \(leave --moduli out, moduli=None\)$")
    with pytest.raises(ValueError, match=message):
        auto(A, B)


def test_levels_that_grow_the_leaves_error_past_c_are_refused():
    """Two Strassen levels on leaves of k = 8 with one modulus gave an error 2.6 times max|C| without a word."""
    rng = np.random.default_rng(1)
    A, B, C = rng.standard_normal((32, 32)), rng.standard_normal((32, 32)), np.full((32, 32), 7.0)
    product = bilinear.compile("strassen", levels=2, leaf="ozaki", moduli=1, backend="numpy")
    message = (r"^1 modulus is too few for 2 levels over leaves of inner dimension 8: its error bound, 0\.75 of the "
               r"scale, can grow 36 times through the levels, past the largest C can be; give 3 or more \(--moduli 3, "
               r"moduli=3\), fewer levels \(a lower --levels, levels=\), or none to have them chosen from k \(leave "
               r"--moduli out, moduli=None\)$")
    with pytest.raises(ValueError, match=message):
        product(A, B, out=C, beta=1.0)
    assert (C == 7).all()
    three = bilinear.compile("strassen", levels=2, leaf="ozaki", moduli=3, backend="numpy")(A, B)
    largest = 32 * np.abs(A).max() * np.abs(B).max()  # the largest C can be
    assert np.abs(three - A @ B).max() <= (2.0**-10 + 2.0**-9) * 36 * largest < largest  # (10, 9) bits at k = 8


def test_too_few_moduli_with_norm_scaling_name_how_many_would_do():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((4, 300)), rng.standard_normal((300, 3))
    product = bilinear.compile("strassen", levels=0, leaf="ozaki", moduli=1, scaling="norm", backend="numpy")
    message = (r"^1 modulus is too few for an inner dimension of 300 with norm scaling \(it keeps no correct bit past 16\): "
               r"give 2 or more \(--moduli 2, moduli=2\), use max scaling \(--scaling max, scaling=\"max\"\), or none "
               r"to have them chosen from k \(leave --moduli out, moduli=None\)$")
    with pytest.raises(ValueError, match=message):
        product(A, B)


def test_the_moduli_check_skips_the_empty_strips_a_breadth_first_grid_leaves():
    """gemm_shapes lists (0, k, n)-style strips past the grid, on which no GEMM runs: their full k
    refused 8x40 @ 40x8 (leaves of 4x20x4) with one modulus (a review of the check); 8x30 @ 30x8 since
    one modulus keeps no correct bit past k = 15.  The classical scheme's level does not grow the
    leaves' error (Strassen's can, 6 times, past C's size: refused)."""
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((8, 30)), rng.standard_normal((30, 8))
    product = bilinear.compile("naive2x2", levels=1, breadth=1, leaf="ozaki", moduli=1, backend="numpy")
    assert np.isfinite(product(A, B)).all()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_another_threads_query_does_not_change_a_running_calls_tile_budget(monkeypatch):
    """executor_for resets and sets the Ozaki leaf's budget; it ran outside the product's lock, so a
    query (or a call's first look) from another thread changed the tiles of a call already running."""
    import threading

    from helpers.ozaki_emulation import emulated_runner

    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", levels=2, breadth=1, leaf="ozaki",
                               backend="numpy", workspace_limit=60_000)
    for executor in product.executors:  # the GPU leaf's workspace (emulated), which the limit tiles
        executor.leaf.cuda = emulated_runner(monkeypatch)
    tiled = product.executors[-1]
    seen = []

    def run(A, B, C, alpha=1.0, beta=0.0):
        budget = tiled.leaf.budget
        other = threading.Thread(target=product.executor_for, args=(60, 60, 60))  # tiled too, in another budget
        other.start()
        other.join(0.5)
        seen.append((budget, tiled.leaf.budget))
        threads.append(other)

    threads: list = []
    monkeypatch.setattr(tiled, "run", run)
    product(np.ones((37, 50)), np.ones((50, 21)))
    for thread in threads:
        thread.join()
    assert seen == [(60_000 - 6_944, 60_000 - 6_944)]


@pytest.mark.parametrize("name", ["naive2x2", "strassen", "winograd", "grey234"])
def test_breadth_first_steps_grow_the_leaves_error_as_depth_first_levels(name):
    """The refusal takes a depth-first level's growth, e_max/k, from verify.stability, and breadth-first
    steps' from their decomposition: they agree, two steps grow as two levels (the classical one's: 1)."""
    from bilinear.lower.decompose import breadth_first
    from bilinear.lower.ozaki_host import level_growth
    from bilinear.verify.stability import stability

    algorithm = bilinear.compile(name, levels=1, backend="numpy").lowered.levels[0].algorithm
    growth = stability(algorithm).e_max / algorithm.shape.k
    assert breadth_first(algorithm, 2).max_norm_growth == growth**2 >= 1
    product = bilinear.compile(name, levels=2, breadth=1, leaf="ozaki", moduli=4, backend="numpy")
    assert level_growth(product.lowered, 64, 72, 64) == (2, growth**2)
    assert level_growth(product.lowered, 1, 72, 64) == (0, 1)  # no level runs on one row
