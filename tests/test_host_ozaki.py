"""The ozaki leaf in the compiled C++ library (bilinear/lower/ozaki_host.py, templates/host_ozaki.cu.j2).

The library computes the row-major C^T = B^T A^T, so its ozaki leaf scales the columns of B with the
odd bit the runtime gives A's rows: on the CPU emulator it must equal the Python runtime's product of
B^T and A^T bit for bit, whatever the levels, breadth-first splits, scaling and dtype (on random data:
with norm scaling NumPy sums a row's squares in its own order, and a crafted row's norm bound can
round to another power of two than the GPU pass's).  The tables of
moduli and bits are the runtime's own functions, stepped; the workspace is what the manifest says.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.cli import main
from bilinear.lower.options import Options
from bilinear.lower.ozaki_host import ozaki_code, steps
from bilinear.lower.ozaki_passes import tile_spans
from bilinear.runtime import ozaki

from conftest import ROOT
from helpers.emulated import product, statuses

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def _compile(tmp_path: Path, scheme: str, *options: str) -> Path:
    out = tmp_path / "-".join([scheme, *[o.strip("-") for o in options]])
    assert main(["compile", str(ROOT / "algorithms" / f"{scheme}.bl"), "--leaf", "ozaki", "-o", str(out), *options]) == 0
    return out


def _runtime(scheme: str, dtype: str, A, B, C, alpha: float, beta: float, **options):
    """The Python runtime's product of B^T and A^T into C^T on NumPy: what the library computes."""
    compiled = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", leaf="ozaki", backend="numpy", dtype=dtype, **options)
    out = np.ascontiguousarray(C.T)
    compiled(np.ascontiguousarray(B.T), np.ascontiguousarray(A.T), out=out, alpha=alpha, beta=beta)
    return out.T


def _chosen(code, k: int):
    """The count and bits the library's tables give a chunk of k (None where no count takes it)."""
    held = next((c for c in code.counts if k <= c.k_last), None)
    if held is None:
        return None
    return held.count, next(step.value for step in held.bits if k <= step.k_last)


# ---- the tables ------------------------------------------------------------------------------------
CODES = [Options(leaf="ozaki", dtype=dtype, scaling=scaling, moduli=moduli)
         for dtype in ("float64", "float32") for scaling in ("max", "norm") for moduli in (None, 2, 15)]


@pytest.mark.parametrize("options", CODES, ids=lambda o: f"{o.dtype}-{o.scaling}-{o.moduli}")
def test_the_tables_hold_the_runtimes_choice_at_every_step_edge(options):
    code = ozaki_code(options, "lib")
    bits = ozaki.default_bits(options.dtype)
    edges = {k for c in code.counts for step in c.bits for k in (step.k_last, step.k_last + 1)} | {1, ozaki.K_CHUNK}
    for k in sorted(edges):
        if k > ozaki.K_CHUNK:
            continue
        count = options.moduli or ozaki.moduli_for(bits, k)
        try:
            expected = (count, ozaki.scale_bits(count, k, options.scaling))
        except ValueError:  # a fixed count too few for this k: the library refuses it (5000)
            expected = None
        assert _chosen(code, k) == expected, k
    assert code.k_limited == (options.moduli == 2)


@settings(max_examples=300, deadline=None)
@given(k=st.integers(1, ozaki.K_CHUNK), dtype=st.sampled_from(["float64", "float32"]), scaling=st.sampled_from(["max", "norm"]))
def test_the_tables_hold_the_runtimes_choice_at_any_k(k, dtype, scaling):
    code = ozaki_code(Options(leaf="ozaki", dtype=dtype, scaling=scaling), "lib")
    count = ozaki.moduli_for(ozaki.default_bits(dtype), k)
    assert _chosen(code, k) == (count, ozaki.scale_bits(count, k, scaling))


def test_the_k_limits_are_the_longest_k_whose_error_bound_the_levels_grow_stays_below_c():
    """By the depth-first levels a call runs and whether its breadth-first one does (each Strassen level grows
    the leaves' error bound 6 times), the longest k by brute force; none where no limit falls below a chunk."""
    from bilinear.lower.ozaki_host import k_limits
    from bilinear.lower.ozaki_scheme import error_bound

    def longest(growth):
        return max(k for k in range(1, 4080) if growth == 1 or error_bound(2, k) * growth < 1)

    two = bilinear.compile("strassen", levels=2, breadth=1, leaf="ozaki", moduli=2, backend="numpy").lowered
    assert k_limits(two) == ((longest(1), longest(6)), (longest(6), longest(36))) == ((4079, 127), (127, 3))
    assert k_limits(bilinear.compile("naive2x2", levels=2, leaf="ozaki", moduli=2, backend="numpy").lowered) == \
        ((4079, 4079),) * 3  # the classical levels grow nothing: --moduli 2's own table
    for moduli in (None, 8):  # chosen from k, or enough at every k and level
        assert k_limits(bilinear.compile("strassen", levels=2, leaf="ozaki", moduli=moduli, backend="numpy").lowered) is None


def test_steps_of_a_step_function_and_where_it_stops():
    assert [(s.k_last, s.value) for s in steps(lambda k: (k // 10,), 35)] == [(9, (0,)), (19, (1,)), (29, (2,)), (35, (3,))]

    def raising(k):
        if k > 12:
            raise ValueError("too few")
        return (k > 5,)

    assert [(s.k_last, s.value) for s in steps(raising, 100)] == [(5, (False,)), (12, (True,))]
    assert steps(lambda k: (_ for _ in ()).throw(ValueError("never")), 10) == ()


# ---- the product on the emulator -------------------------------------------------------------------
@needs_gxx
@pytest.mark.parametrize("scheme, options, runtime", [
    ("winograd", ("--levels", "0"), {"levels": 0}),
    ("winograd", ("--levels", "1"), {"levels": 1}),
    ("strassen", ("--levels", "2", "--breadth", "1"), {"levels": 2, "breadth": 1}),
    ("winograd", ("--levels", "1", "--scaling", "norm"), {"levels": 1, "scaling": "norm"}),
    ("grey333", ("--levels", "1", "--moduli", "6"), {"levels": 1, "moduli": 6}),
], ids=["direct", "winograd-L1", "strassen-bfs", "norm", "grey333-fixed-moduli"])
def test_the_library_computes_the_runtimes_ozaki_product_bit_for_bit(tmp_path, scheme, options, runtime):
    """Odd sizes, both dtypes, beta 0 (C holds NaN: not read) and 0.5 (--launch batched, which ozaki
    leaves would not batch, is refused: test_reliability_api)."""
    out = _compile(tmp_path, scheme, *options)
    rng = np.random.default_rng(7)
    for dtype, shapes in (("float64", [(37, 50, 21), (64, 65, 33)]), ("float32", [(37, 50, 21)])):
        for m, k, n in shapes:
            A, B = (rng.standard_normal(shape).astype(dtype) for shape in ((m, k), (k, n)))
            for alpha, beta in ((1.0, 0.0), (1.5, 0.5)):
                C = np.full((m, n), np.nan, dtype) if beta == 0 else rng.standard_normal((m, n)).astype(dtype)
                status, got = product(out, scheme, A, B, C, alpha, beta)
                want = _runtime(scheme, dtype, A, B, C, alpha, beta, **runtime)
                assert status == 0 and np.array_equal(got, want), (dtype, m, k, n, beta)


@needs_gxx
def test_a_long_inner_dimension_runs_in_chunks_and_stays_exact(tmp_path):
    """k = 131,071 + 41 is two chunks (the second adds into C): on integers the scheme is exact, and the
    result is the product itself."""
    out = _compile(tmp_path, "winograd", "--levels", "0")
    rng = np.random.default_rng(3)
    k = ozaki.K_CHUNK + 41
    A = rng.integers(-1000, 1000, (3, k)).astype(np.float64)
    B = rng.integers(-1000, 1000, (k, 2)).astype(np.float64)
    status, got = product(out, "winograd", A, B, np.zeros((3, 2)))
    assert status == 0 and np.array_equal(got, A @ B)


@needs_gxx
def test_the_int8_gemms_run_one_per_modulus_in_tiles(tmp_path):
    """C^T's 8200 columns are two tiles (4352 + 3848: int8_gemm.tile_spans), so k = 5 (14 moduli) makes 28
    int8 GEMMs, and the product of ones is exactly k."""
    out = _compile(tmp_path, "winograd", "--levels", "0")
    prelude = ("  double *A2, *B2, *C2;\n  cudaMalloc(&A2, 8200 * 5 * 8), cudaMalloc(&B2, 5 * 3 * 8), cudaMalloc(&C2, 8200 * 3 * 8);\n"
               "  std::fill(A2, A2 + 8200 * 5, 1.0), std::fill(B2, B2 + 15, 1.0);\n")
    got = statuses(out, "winograd", ["winograd_dgemm(handle, 8200, 3, 5, 1.0, A2, 8200, B2, 5, 0.0, C2, 8200, nullptr)",
                                     "emulator_int8_gemms", "std::count(C2, C2 + 8200 * 3, 5.0)"], prelude)
    assert got == [0, 2 * ozaki.moduli_for(53, 5), 8200 * 3]
    assert tile_spans(8200, 8192, 256) == [(0, 4352), (4352, 3848)]


@needs_gxx
def test_too_few_fixed_moduli_are_refused_before_anything_runs(tmp_path):
    """--moduli 2 keeps no correct bit past its table's last k (where the runtime raises): status 5000 and C as
    it was; shorter leaves run; the header says so."""
    out = _compile(tmp_path, "winograd", "--levels", "0", "--moduli", "2")
    last = ozaki_code(Options(leaf="ozaki", moduli=2), "winograd").k_last
    with pytest.raises(ValueError, match="too few"):
        ozaki.scale_bits(2, last + 1)
    rng = np.random.default_rng(5)
    C = rng.standard_normal((5, 3))
    status, got = product(out, "winograd", rng.standard_normal((5, last + 1)), rng.standard_normal((last + 1, 3)), C, 1.0, 0.5)
    assert status == 5000 and np.array_equal(got, C)
    status, _ = product(out, "winograd", rng.standard_normal((5, last)), rng.standard_normal((last, 3)), C, 1.0, 0.5)
    assert status == 0
    assert f"Returns 5000 (nothing run) where a leaf's inner dimension reaches past {last}" in (out / "winograd.h").read_text()


@needs_gxx
@pytest.mark.parametrize("options, runtime", [
    (("--levels", "2", "--moduli", "2"), {"levels": 2, "moduli": 2}),
    (("--levels", "2", "--breadth", "1", "--moduli", "2"), {"levels": 2, "breadth": 1, "moduli": 2}),
], ids=["depth-first", "breadth-first"])
def test_fixed_moduli_are_refused_where_the_levels_that_run_grow_their_error_past_c(tmp_path, options, runtime):
    """strassen --levels 2 --moduli 2 returned status 0 and C off by 3.9 times max|C| at 64x10000x64 (the
    leaves' k = 2500 keeps (2, 1) bits, 3/4 of the scale, and each Strassen level can grow that 6 times), where
    the runtime refuses the call: the library checked the leaves' k only against --moduli 2's table (4079).
    Now the leaves' k may reach 4079 where no level runs, 127 where one does and 3 where two do, and the
    library returns 5000 (C as it was) exactly where the runtime raises, else the runtime's C bit for bit."""
    out = _compile(tmp_path, "strassen", *options)
    rng = np.random.default_rng(11)
    got_statuses = {}
    for m, k, n in [(64, 10000, 64), (16, 12, 16), (16, 13, 16), (16, 16, 16), (3, 127, 2), (3, 128, 2), (1, 4079, 3),
                    (1, 4080, 3)]:
        A, B, C = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
        status, got = product(out, "strassen", A, B, C, 1.0, 0.5)
        try:
            want, refused = _runtime("strassen", "float64", A, B, C, 1.0, 0.5, **runtime), 0
        except ValueError as error:
            assert "too few" in str(error)
            want, refused = C, 5000
        assert status == refused and np.array_equal(got, want), (m, k, n, status)
        got_statuses[m, k, n] = status
    assert [got_statuses[dims] for dims in [(64, 10000, 64), (16, 12, 16), (16, 16, 16), (3, 128, 2), (1, 4080, 3)]] == \
        [5000, 0, 5000, 5000, 5000]
    assert ("Returns 5000 (nothing run) where a leaf's inner dimension reaches past 4079 where no level runs, 127 where 1 "
            "runs and 3 where 2 run: that many moduli keep no correct bit of C there") in (out / "strassen.h").read_text()


@needs_gxx
def test_the_workspace_is_what_the_manifest_counts_and_the_runtime_lays_out(tmp_path):
    """_workspace_bytes at the k where the count of moduli changes (8|9: 14|15 moduli, 1762|1763: 15|16)
    is the runtime's layout for that count, and under levels the manifest's figure."""
    direct = _compile(tmp_path, "winograd", "--levels", "0")
    shapes = [(37, 8, 21), (37, 9, 21), (40, 1762, 3), (40, 1763, 3)]
    got = statuses(direct, "winograd", [f"winograd_dgemm_workspace_bytes({m}, {n}, {k})" for m, k, n in shapes])
    # the library's row-major problem is n×k×m: A^T's rows are the runtime's m
    assert got == [ozaki.workspace_bytes(n, k, m, ozaki.moduli_for(53, k)) for m, k, n in shapes]
    levels = _compile(tmp_path, "strassen", "--levels", "2", "--breadth", "1")
    manifest = json.loads((levels / "manifest.json").read_text())
    sizes = [int(n) for n in manifest["workspace_bytes"]]
    assert statuses(levels, "strassen", [f"strassen_dgemm_workspace_bytes({n}, {n}, {n})" for n in sizes]) == \
        [manifest["workspace_bytes"][str(n)] for n in sizes]


@needs_gxx
def test_the_ozaki_library_stays_inside_its_buffers_under_a_sanitizer(tmp_path):
    """The emulator allocates exactly what is asked: a workspace counted short, or a pass reading past A,
    B or C, stops the run under AddressSanitizer."""
    out = _compile(tmp_path, "strassen", "--levels", "2", "--breadth", "1", "--scaling", "norm")
    rng = np.random.default_rng(11)
    flags = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all")
    for m, k, n in [(37, 50, 21), (33, 17, 70)]:
        A, B, C = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
        status, got = product(out, "strassen", A, B, C, 1.5, 0.5, flags=flags)
        assert status == 0 and np.array_equal(got, _runtime("strassen", "float64", A, B, C, 1.5, 0.5, levels=2, breadth=1,
                                                            scaling="norm"))


@needs_gxx
def test_under_a_tight_limit_the_library_runs_tiles_of_c(tmp_path):
    """--workspace-limit 30000: at 37×50×21 winograd L1's leaves need 100,864 bytes with all of C at once,
    more than the limit; they run in tiles of C that fit (22,784 bytes) and give the runtime's product bit
    for bit (it had returned 4000).  Where even one element of C at a time does not fit (k = 3000): 4000,
    C as it was.  Under AddressSanitizer the emulator's exact allocations catch a tile past the workspace."""
    from bilinear.lower.manifest import library_call_bytes
    from bilinear.lower.plan import lower

    out = _compile(tmp_path, "winograd", "--levels", "1", "--workspace-limit", "30000")
    lowered = lower(bilinear.api.load("winograd"), Options(leaf="ozaki", levels=1))
    assert library_call_bytes(lowered, 21, 50, 37) == 100_864 and library_call_bytes(lowered, 21, 50, 37, 30_000) == 22_784
    assert statuses(out, "winograd", ["winograd_dgemm_workspace_bytes(37, 21, 50)"]) == [22_784]
    rng = np.random.default_rng(17)
    flags = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all")
    for dtype, sanitized in (("float64", ()), ("float32", ()), ("float64", flags)):
        A, B, C = (rng.standard_normal(shape).astype(dtype) for shape in ((37, 50), (50, 21), (37, 21)))
        status, got = product(out, "winograd", A, B, C, 1.5, 0.5, flags=sanitized)
        assert status == 0 and np.array_equal(got, _runtime("winograd", dtype, A, B, C, 1.5, 0.5, levels=1)), dtype
    A, B, C = rng.standard_normal((8, 3000)), rng.standard_normal((3000, 4)), rng.standard_normal((8, 4))
    assert library_call_bytes(lowered, 4, 3000, 8, 30_000) is None
    status, got = product(out, "winograd", A, B, C, 1.0, 0.5)
    assert status == 4000 and np.array_equal(got, C)


@needs_gxx
def test_under_a_limit_a_direct_leaf_runs_in_bands_of_rows(tmp_path):
    """The direct leaf at 37×50×21 (the library's 21×50×37) needs 181,248 bytes with all of C at once; one
    row of it with B's residues whole, 94,976: under 120,000 it runs three bands of 7 rows (112,128 bytes),
    the runtime's product bit for bit."""
    from bilinear.lower.manifest import library_call_bytes
    from bilinear.lower.plan import lower

    out = _compile(tmp_path, "winograd", "--levels", "0", "--workspace-limit", "120000")
    lowered = lower(bilinear.api.load("winograd"), Options(leaf="ozaki", levels=0))
    assert ozaki.tile_for_budget(21, 50, 37, ozaki.moduli_for(53, 50), 120_000) == (7, 37)
    assert library_call_bytes(lowered, 21, 50, 37) == 181_248 and library_call_bytes(lowered, 21, 50, 37, 120_000) == 112_128
    assert statuses(out, "winograd", ["winograd_dgemm_workspace_bytes(37, 21, 50)"]) == [112_128]
    rng = np.random.default_rng(19)
    A, B, C = rng.standard_normal((37, 50)), rng.standard_normal((50, 21)), rng.standard_normal((37, 21))
    status, got = product(out, "winograd", A, B, C, 1.5, 0.5)
    assert status == 0 and np.array_equal(got, _runtime("winograd", "float64", A, B, C, 1.5, 0.5, levels=0))


def test_the_manifest_and_header_say_the_library_runs_the_ozaki_leaf(tmp_path):
    out = _compile(tmp_path, "winograd", "--levels", "1")
    manifest = json.loads((out / "manifest.json").read_text())
    host = manifest["host"]
    assert "leaves" not in host and set(host["ozaki"]) == {"float64", "float32"}
    assert {count: entry["up_to_k"] for count, entry in host["ozaki"]["float64"]["moduli"].items()} == \
        {"14": 8, "15": 1762, "16": ozaki.K_CHUNK}
    assert host["ozaki"]["float64"]["chosen"] == "the fewest that keep 53 bits"
    source = (out / "winograd.cu").read_text()
    for entry in host["ozaki"].values():
        for held in entry["moduli"].values():
            assert all(f'extern "C" __global__ void {kernel}(' in source or f") {kernel}(" in source for kernel in held["kernels"])
    assert "oz_residues_a_s1" not in source  # no Strassen level on the residues in the library
    header = (out / "winograd.h").read_text()
    assert "Leaf products run on the int8 tensor cores by the Ozaki scheme II (14, 15, 16 moduli:" in header
    assert "Returns 5000" not in header and "max scaling" in header
    # it said "0 bytes, nothing allocated, for schedules without temporaries" (msmes: 184,832 at 64³)
    assert "never 0 bytes where k > 0" in header and "0 bytes, nothing allocated" not in header
    assert host["ozaki"]["float64"]["int8_gemms"].startswith("cublasGemmStridedBatchedEx with a batch of one")
    # --launch batched: the ozaki leaves would run one after another, so it is refused (the manifest had said batched)
    with pytest.raises(SystemExit) as refused:
        _compile(tmp_path, "winograd", "--levels", "2", "--breadth", "1", "--launch", "batched")
    assert refused.value.code == 2


# ---- on the GPU --------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("scheme, options, runtime", [
    ("winograd", ("--levels", "0"), {"levels": 0}),
    ("strassen", ("--levels", "2", "--breadth", "1", "--scaling", "norm"), {"levels": 2, "breadth": 1, "scaling": "norm"}),
    ("winograd", ("--levels", "1", "--workspace-limit", "30000000"), {"levels": 1, "workspace_limit": 30_000_000}),
], ids=["direct", "strassen-bfs-norm", "winograd-tiles-of-c"])
def test_on_the_gpu_the_library_and_the_runtime_give_the_same_bits(tmp_path, dtype, scheme, options, runtime):
    """The same passes with the same arguments, and int8 GEMMs exact either way: the nvcc-built library's
    product equals the CuPy runtime's (of B^T and A^T) bit for bit, at odd sizes, one of them past the
    int8 GEMMs' 8192-row tiles.  Under a 30 MB limit that one runs in tiles of C on both sides (all of C
    at once needs 89 MB in FP64, 47 MB in FP32)."""
    import ctypes
    import subprocess

    import cupy

    from conftest import cublas_link_flags, cublas_paths

    out = _compile(tmp_path, scheme, *options)
    include, lib = cublas_paths()
    library = out / f"lib{scheme}.so"
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-Xcompiler", "-fPIC", "-shared", str(out / f"{scheme}.cu"),
                    "-o", str(library), f"-I{include}", *cublas_link_flags(lib)], check=True)
    real = ctypes.c_double if dtype == "float64" else ctypes.c_float
    gemm = getattr(ctypes.CDLL(str(library)), f"{scheme}_{'d' if dtype == 'float64' else 's'}gemm")
    gemm.argtypes = [ctypes.c_void_p, *[ctypes.c_int] * 3, real, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                     ctypes.c_int, real, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    gemm.restype = ctypes.c_int
    workspace_bytes = getattr(ctypes.CDLL(str(library)), f"{scheme}_{'d' if dtype == 'float64' else 's'}gemm_workspace_bytes")
    workspace_bytes.argtypes, workspace_bytes.restype = [ctypes.c_int] * 3, ctypes.c_size_t
    compiled = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", leaf="ozaki", dtype=dtype, **runtime)
    rng = cupy.random.default_rng(17)
    for m, k, n in [(129, 300, 97), (8200, 515, 33)]:
        A, B = rng.standard_normal((m, k), dtype=dtype), rng.standard_normal((k, n), dtype=dtype)
        C = rng.standard_normal((m, n), dtype=dtype)
        # column-major copies for the library, held while it runs (a dropped one's memory goes back to the pool)
        a, b, ours = cupy.asfortranarray(A), cupy.asfortranarray(B), cupy.asfortranarray(C)
        status = gemm(cupy.cuda.device.get_cublas_handle(), m, n, k, 1.5, a.data.ptr, m, b.data.ptr, k, 0.5, ours.data.ptr, m,
                      cupy.cuda.get_current_stream().ptr)
        want = cupy.ascontiguousarray(C.T)
        compiled(cupy.ascontiguousarray(B.T), cupy.ascontiguousarray(A.T), out=want, alpha=1.5, beta=0.5)
        assert status == 0 and bool(cupy.array_equal(ours, want.T)), (m, k, n)
        if "workspace_limit" in runtime:
            assert compiled.workspace_bytes(n, k, m) <= runtime["workspace_limit"]
            assert workspace_bytes(m, n, k) <= runtime["workspace_limit"]


def test_a_breadth_first_plan_counts_its_ozaki_leaves_workspace():
    """The runtime counted no leaf workspace for a breadth-first plan, so under --workspace-limit it ran
    one whose Ozaki leaves took more than the limit on the GPU (the library counts them, and fell back)."""
    from bilinear.lower.plan import call_workspace_bytes, gemm_shapes

    product = bilinear.compile(ROOT / "algorithms" / "strassen.bl", levels=2, breadth=1, leaf="ozaki", backend="numpy")
    executor = product.executor
    executor.leaf.workspace_bytes = lambda m, k, n: m * k * n  # as the leaf on a GPU reports its own
    shapes = [dims for dims in gemm_shapes(executor.lowered, 64, 65, 66) if min(dims) > 0]
    assert (16, 16, 16) in shapes and (64, 65, 66) not in shapes  # the split leaves, not the leaf they split
    assert executor.workspace_bytes(64, 65, 66) == call_workspace_bytes(executor.lowered, 64, 65, 66) + max(
        m * k * n for m, k, n in shapes)


def test_a_limit_no_call_can_meet_is_refused_at_compile_time(tmp_path, capsys):
    """msmes --leaf ozaki --workspace-limit 0 compiled a library whose every call returned 4000 (even
    1×1×1 needs the leaf's 15,872 bytes); nothing is written now.  cuBLAS leaves still take 0."""
    out = tmp_path / "limited"
    with pytest.raises(SystemExit) as stopped:
        main(["compile", str(ROOT / "algorithms" / "msmes.bl"), "--leaf", "ozaki", "--workspace-limit", "0", "-o", str(out)])
    assert stopped.value.code == 2 and not out.exists()
    assert ("--workspace-limit 0 is below the 15872 bytes even a 1x1x1 call needs (the ozaki leaf's workspace): every "
            "call would return 4000; raise it") in capsys.readouterr().err
    assert main(["compile", str(ROOT / "algorithms" / "msmes.bl"), "--workspace-limit", "0", "-o", str(tmp_path / "c")]) == 0


def test_fixed_moduli_no_leaf_keeps_a_correct_bit_of_c_for_under_the_levels_are_refused_at_compile_time(tmp_path, capsys):
    """strassen --leaf ozaki --moduli 1 (one level) wrote a library that kept no guaranteed correct bit of C at
    any call running its level (one modulus keeps at most (3, 3) bits, a quarter of the scale at k = 1, and
    Strassen's level can grow that bound 6 times); nothing is written now, and the error says what would do."""
    out = tmp_path / "one"
    with pytest.raises(SystemExit) as stopped:
        main(["compile", str(ROOT / "algorithms" / "strassen.bl"), "--leaf", "ozaki", "--moduli", "1", "-o", str(out)])
    assert stopped.value.code == 2 and not out.exists()
    assert ("error: 1 modulus is too few for 1 level over leaves of any inner dimension: its error bound, 0.25 of the "
            "scale even at k = 1, can grow 6 times through the levels, past the largest C can be, so every call that "
            "runs them would return 5000; give 2 or more (--moduli 2, moduli=2), fewer levels (a lower --levels, "
            "levels=), or none to have them chosen from k (leave --moduli out, moduli=None)\n"
            ) in capsys.readouterr().err
    assert main(["compile", str(ROOT / "algorithms" / "strassen.bl"), "--leaf", "ozaki", "--moduli", "1", "--levels", "0",
                 "-o", str(tmp_path / "none")]) == 0
    assert main(["compile", str(ROOT / "algorithms" / "naive2x2.bl"), "--leaf", "ozaki", "--moduli", "1", "-o",
                 str(tmp_path / "classical")]) == 0  # the classical level grows nothing
