"""TSM2R / TSM2L without a GPU: the parameter model, the layouts, the dispatcher, the templates.

Golden sources live in tests/golden/; regenerate them with
``BILINEAR_UPDATE_GOLDEN=1 pytest tests/test_tsm2.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bilinear import dispatch as dispatch_module
from bilinear.dispatch import Row, Table, dispatch, family_of, load_table, parse_table
from bilinear.lower import tsm2
from bilinear.lower.tsm2 import Alignment, Params

from conftest import check_golden

SMALL = (2, 4, 8, 16, 32)
DTYPES = ("float32", "float64")

# Fixed parameters (not the model's choice), so that the golden files change only with the template.
GOLDEN_SPECS = {
    "tsm2r_f32_n2": (
        Params("tsm2r", row_warps=1, k_groups=2, rows_per_thread=4, stages=4),
        "float32",
        16384,
        2,
        Alignment(),
    ),
    "tsm2r_f64_n32_groups": (
        Params("tsm2r", row_warps=2, k_groups=4, rows_per_thread=1, stages=3),
        "float64",
        16384,
        32,
        Alignment(),
    ),
    "tsm2r_f32_n7_unaligned": (
        Params("tsm2r", row_warps=1, k_groups=4, rows_per_thread=2, stages=3),
        "float32",
        1001,
        7,
        Alignment(4, 4, 4),
    ),
    "tsm2l_f32_k2n2": (Params("tsm2l", threads=256, rows_per_thread=4, stages=3), "float32", 2, 2, Alignment()),
    "tsm2l_f64_k16n16": (Params("tsm2l", threads=128, rows_per_thread=1, stages=2), "float64", 16, 16, Alignment()),
    "tsm2l_f32_k3n5": (Params("tsm2l", threads=128, rows_per_thread=2, stages=3), "float32", 3, 5, Alignment(4, 4, 4)),
}


def golden_spec(name: str):
    params, dtype, k, n, align = GOLDEN_SPECS[name]
    return tsm2.spec_for(params, dtype, k, n, align)


# ---------------------------------------------------------------------------------------------
# Parameters and specs
# ---------------------------------------------------------------------------------------------


def test_params_reject_nonsense():
    with pytest.raises(ValueError, match="kind"):
        Params("tsm2x")
    with pytest.raises(ValueError, match="stages"):
        Params("tsm2r", stages=1)
    with pytest.raises(ValueError, match="positive"):
        Params("tsm2l", rows_per_thread=0)
    for k_tile_bytes in (-16, 0, 24):  # -16 gave a normwise error of 0.08 with no error raised; 0 a ZeroDivisionError
        with pytest.raises(ValueError, match="k_tile_bytes must be a positive multiple of 16"):
            Params("tsm2r", k_tile_bytes=k_tile_bytes)
    with pytest.raises(ValueError, match="n_tile must be positive"):
        Params("tsm2r", n_tile=-2)
    with pytest.raises(ValueError, match="^threads must be a multiple of 32 from 32 to 1024, not 2048$"):
        Params("tsm2l", threads=2048)
    for name, value in (("rows_per_thread", 1.5), ("stages", "3"), ("n_tile", 2.0), ("row_warps", True)):
        with pytest.raises(ValueError, match=f"^{name} must be a whole number, not "):
            Params("tsm2r", **{name: value})
    with pytest.raises(ValueError, match=r"^row_warps × k_groups must be at most 32 \(32 threads each, 1024 a block\), "
                                         r"not 16 × 4$"):
        Params("tsm2r", row_warps=16, k_groups=4)
    with pytest.raises(ValueError, match="^persistent must be true or false, not 1$"):
        Params("tsm2l", persistent=1)
    import numpy as np

    assert Params("tsm2r", n_tile=np.int64(4)).n_tile == 4 and type(Params("tsm2l", threads=np.int32(64)).threads) is int


def test_tsm2r_threads_are_derived():
    params = Params("tsm2r", row_warps=2, k_groups=4)
    assert params.threads == 256 and not params.persistent
    assert Params.from_dict(params.short()) == params


def test_k_groups_must_divide_the_chunks():
    with pytest.raises(ValueError, match="k_groups"):
        tsm2.r_spec(Params("tsm2r", k_groups=16), "float32", 4)  # 128 B = 8 chunks of 16 B


def test_tsm2l_refuses_large_inner_dimensions():
    with pytest.raises(ValueError, match="TSM2L"):
        tsm2.l_spec(Params("tsm2l"), "float32", 200, 4)


@pytest.mark.parametrize(
    "bytes_, expected",
    [((256, 64, 4), 16), ((260, 64, 4), 4), ((256, 3, 4), 4), ((256, 2, 4), 8), ((264, 3, 8), 8), ((0, 1001, 4), 4)],
)
def test_access_width_follows_pointer_and_pitch(bytes_, expected):
    assert tsm2.access_bytes(*bytes_) == expected


@pytest.mark.parametrize("params,dtype,k,n,align", GOLDEN_SPECS.values(), ids=GOLDEN_SPECS.keys())
def test_spec_invariants(params, dtype, k, n, align):
    spec = tsm2.spec_for(params, dtype, k, n, align)
    es = spec.elem_bytes
    assert spec.a.chunk * es <= align.a and spec.a.chunk * es in (4, 8, 16)
    if spec.kind == "tsm2r":
        assert spec.a_copies * spec.threads == spec.rows * spec.a.chunks  # every chunk copied exactly once
        assert spec.chunks_per_group * spec.k_groups == spec.a.chunks
        assert spec.b_chunk * spec.b_chunks_per_row == spec.n_tile and spec.n_tile % spec.b_vec == 0
        assert spec.n % spec.c_vec == 0 and spec.n_tile % spec.c_vec == 0
        assert spec.smem_bytes >= spec.red_elems * es
    else:
        assert spec.a.chunk * spec.a.chunks == k and spec.c.chunk * spec.c.chunks == n
        assert spec.a_copies * spec.threads == spec.rows * spec.a.chunks
        assert spec.c_copies * spec.threads == spec.rows * spec.c.chunks
    assert spec.smem_bytes <= tsm2.H100.smem_per_block


# ---------------------------------------------------------------------------------------------
# Shared-memory layouts are free of bank conflicts
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_bytes", [4, 8, 16])
@pytest.mark.parametrize("chunks", [1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64])
def test_layouts_are_conflict_free(chunk_bytes, chunks):
    es = 4 if chunk_bytes == 4 else 8 if chunk_bytes == 8 else 4
    layout = tsm2.tile_layout(256, chunks, chunk_bytes, es)
    for chunk in range(chunks):
        for first_row in (0, 32, 96):
            assert tsm2.wavefronts(layout, chunk, first_row) == 1, (chunks, chunk_bytes, chunk)
    # the swizzle is a permutation of each row's chunks
    for row in range(64):
        units = {layout.unit(row, c) for c in range(chunks)}
        assert len(units) == chunks and all(row * layout.row_units <= u < (row + 1) * layout.row_units for u in units)


def test_without_the_swizzle_rows_would_conflict():
    plain = tsm2.TileLayout(256, 8, 4, 16, 8, 0, 0)
    assert tsm2.wavefronts(plain, 0) == 8


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------


def test_the_grid_is_memory_bound_on_the_h100():
    """Paper, Algorithm 5: n ≤ t2_threshold keeps t2 = n."""
    for es in (4, 8):
        assert tsm2.t2_threshold(tsm2.H100, es) > 32


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SMALL)
@pytest.mark.parametrize(
    "kind,m,k", [("tsm2r", 16384, 16384), ("tsm2r", 32768, 32768), ("tsm2l", 10**6, None), ("tsm2l", 10**7, None)]
)
def test_model_choices_fit_and_stay_under_the_roofline(kind, m, k, n, dtype):
    k = k or n
    params = tsm2.model_params(kind, m, k, n, dtype)
    spec = tsm2.spec_for(params, dtype, k, n)
    assert tsm2.occupancy(tsm2.H100, spec.threads, spec.regs_estimate, spec.smem_bytes) >= 1
    prediction = tsm2.predict(spec, m, k, n)
    assert 0 < prediction.gbs(tsm2.bytes_moved(m, k, n, dtype)) <= tsm2.H100.copy_bw / 1e9
    if kind == "tsm2r":
        assert spec.n_tile == n  # t2 = n: memory bound
        assert prediction.blocks >= tsm2.H100.sms * 0.9  # the grid fills the GPU
    else:
        assert prediction.tcf >= spec.rows_per_thread


def test_model_prefers_full_tiles_over_starved_ones():
    starved = tsm2.r_spec(Params("tsm2r", row_warps=4, k_groups=1, rows_per_thread=8), "float32", 2)
    chosen = tsm2.spec_for(tsm2.model_params("tsm2r", 16384, 16384, 2, "float32"), "float32", 16384, 2)
    assert tsm2.predict(chosen, 16384, 16384, 2).seconds < tsm2.predict(starved, 16384, 16384, 2).seconds


def test_fit_params_shrinks_k_groups_for_narrow_chunks():
    params = Params("tsm2r", row_warps=1, k_groups=8, n_tile=4)
    fitted = tsm2.fit_params(params, "tsm2r", "float64", 1000, 4, Alignment(8, 8, 8))
    assert fitted.k_groups == 8  # 128 B of 8-byte chunks: 16 chunks
    fitted = tsm2.fit_params(
        Params("tsm2r", k_groups=16, k_tile_bytes=256), "tsm2r", "float32", 99, 4, Alignment(16, 16, 16)
    )
    assert fitted.k_groups == 16


# ---------------------------------------------------------------------------------------------
# The dispatcher
# ---------------------------------------------------------------------------------------------


def _row(family, dtype, m, k, n, winner, speedup=2.0):
    params = Params("tsm2r", row_warps=1, k_groups=4, rows_per_thread=2) if family == "tsm2r" else Params("tsm2l")
    return Row(family, dtype, m, k, n, winner, params if winner == family else None, speedup)


TABLE = Table(
    (
        _row("tsm2r", "float32", 8192, 8192, 2, "tsm2r"),
        _row("tsm2r", "float32", 16384, 16384, 2, "tsm2r"),
        _row("tsm2r", "float32", 16384, 16384, 8, "tsm2r"),
        _row("tsm2r", "float32", 16384, 16384, 32, "cublas", 0.9),
        _row("tsm2r", "float64", 16384, 16384, 2, "cublas", 1.0),
        _row("tsm2l", "float32", 10**6, 2, 2, "tsm2l", 6.0),
        _row("tsm2l", "float32", 10**6, 16, 16, "tsm2l"),
        _row("tsm2l", "float32", 10**4, 16, 16, "cublas", 0.8),
    )
)


def test_family_classification():
    assert family_of(10**6, 4, 4, TABLE) == "tsm2l"
    assert family_of(16384, 16384, 4, TABLE) == "tsm2r"
    assert family_of(4096, 4096, 4096, TABLE) is None
    assert family_of(100, 16384, 64, TABLE) is None
    # at the edges (each a source mutation that moved one): m exactly 64·max(k, n) is tall enough; k at TSM2-L's
    # largest is no TSM2-R shape; TSM2-R needs both m and k at 16·n
    assert family_of(256, 4, 4, TABLE) == "tsm2l"
    assert family_of(1024, 32, 2, TABLE) is None
    assert family_of(16384, 100, 8, TABLE) is None
    assert family_of(16384, 128, 8, TABLE) == "tsm2r"


def test_dispatch_follows_the_measurements():
    assert dispatch(16384, 16384, 2, "float32", table=TABLE).kernel == "tsm2r"
    assert dispatch(20000, 20000, 2, "float32", table=TABLE).kernel == "tsm2r"  # nearest measured shape
    assert dispatch(16384, 16384, 5, "float32", table=TABLE).kernel == "tsm2r"  # n rounds up to 8
    assert dispatch(16384, 16384, 9, "float32", table=TABLE).kernel == "cublas"  # rounds up to 32: cuBLAS won
    assert dispatch(16384, 16384, 2, "float64", table=TABLE).kernel == "cublas"
    choice = dispatch(10**7, 2, 2, "float32", table=TABLE)
    assert choice.kernel == "tsm2l" and choice.params == Params("tsm2l")
    assert dispatch(10**6, 3, 5, "float32", table=TABLE).kernel == "tsm2l"  # max(k, n) = 5 → 16
    assert dispatch(10**4, 16, 16, "float32", table=TABLE).kernel == "cublas"


def test_dispatch_never_extrapolates_down_or_to_other_layouts():
    assert dispatch(1024, 1024, 2, "float32", table=TABLE).kernel == "cublas"  # below the measured range
    assert dispatch(16384, 16384, 2, "float32", row_major=False, table=TABLE).kernel == "cublas"
    assert dispatch(16384, 16384, 2, "float16", table=TABLE).kernel == "cublas"
    assert dispatch(0, 16384, 2, "float32", table=TABLE).kernel == "cublas"
    assert dispatch(10**6, 2, 2, "float32", table=Table(())).kernel == "cublas"


def test_recursive_only_where_a_row_was_measured():
    assert dispatch(8192, 8192, 8192, "float64", table=TABLE).kernel == "cublas"


def test_table_round_trip():
    data = {
        "limits": {"tsm2r_max_n": 32, "tsm2l_max_k": 32},
        "recursive": {"min_dim": None},
        "rows": [
            {
                "family": "tsm2r",
                "dtype": "float32",
                "m": 16384,
                "k": 16384,
                "n": 2,
                "winner": "tsm2r",
                "speedup": 3.1,
                "params": Params("tsm2r", k_groups=2).short(),
            }
        ],
    }
    table = parse_table(data)
    assert table.rows[0].params == Params("tsm2r", k_groups=2)


def test_the_committed_table_is_inside_the_package_and_parses():
    assert dispatch_module.TABLE.parent.name == "data"
    assert dispatch_module.TABLE.parent.parent == Path(dispatch_module.__file__).parent
    if not dispatch_module.TABLE.exists():
        pytest.skip("no measured table committed yet")
    table = load_table()
    assert table.rows
    for row in table.rows:
        assert row.winner in ("cublas", row.family)
        if row.winner != "cublas":
            tsm2.spec_for(row.params, row.dtype, row.k, row.n)  # the recorded parameters still build


# ---------------------------------------------------------------------------------------------
# The templates: golden sources and nvcc
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GOLDEN_SPECS)
def test_golden_source(name):
    source = tsm2.render_spec(golden_spec(name))
    check_golden(f"{name}.cu", source)


def test_templates_leave_no_jinja_behind():
    for name in GOLDEN_SPECS:
        source = tsm2.render_spec(golden_spec(name))
        assert "{{" not in source and "{%" not in source
        assert re.search(r'extern "C" __global__ void __launch_bounds__\(THREADS\)\ntsm2[rl]_kernel', source)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", GOLDEN_SPECS)
def test_nvcc_compiles_for_hopper_without_spills(name, tmp_path):
    source = tmp_path / f"{name}.cu"
    source.write_text(tsm2.render_spec(golden_spec(name)))
    result = subprocess.run(
        ["nvcc", "-arch=sm_90", "-std=c++17", "-c", "--resource-usage", str(source), "-o", str(tmp_path / "k.o")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = result.stdout + result.stderr
    assert "0 bytes spill stores" in report and "0 bytes stack frame" in report, report


# ---------------------------------------------------------------------------------------------
# The generated kernels, run on the CPU (tests/host_emulator): one std::thread per CUDA thread
# ---------------------------------------------------------------------------------------------

HOST = Path(__file__).resolve().parent / "host_emulator"
UNIT = {"float32": 2.0**-24, "float64": 2.0**-53}

# (kind, params or None for the model's choice, dtype, m, k, n, pitch padding, offset, alpha, beta)
EMULATED = [
    ("tsm2r", None, "float32", 300, 1000, 5, 0, 0, 1.0, 0.0),
    (
        "tsm2r",
        Params("tsm2r", row_warps=1, k_groups=8, rows_per_thread=2, stages=4),
        "float64",
        77,
        1001,
        7,
        3,
        1,
        2.0,
        -0.5,
    ),
    (
        "tsm2r",
        Params("tsm2r", row_warps=2, k_groups=2, rows_per_thread=2, stages=3, k_tile_bytes=256),
        "float32",
        200,
        700,
        32,
        0,
        0,
        1.0,
        1.0,
    ),
    (
        "tsm2r",
        Params("tsm2r", row_warps=1, k_groups=4, rows_per_thread=1, stages=2, n_tile=3),
        "float32",
        40,
        129,
        7,
        4,
        0,
        1.0,
        0.0,
    ),
    ("tsm2r", None, "float64", 33, 64, 16, 0, 0, 1.0, 0.0),
    ("tsm2l", None, "float32", 5000, 2, 2, 0, 0, 1.0, 0.0),
    ("tsm2l", Params("tsm2l", threads=64, rows_per_thread=4, stages=2), "float64", 3001, 8, 8, 0, 0, 1.0, 0.5),
    ("tsm2l", Params("tsm2l", threads=128, rows_per_thread=1, stages=3), "float32", 2000, 32, 32, 0, 0, 1.0, 0.0),
    (
        "tsm2l",
        Params("tsm2l", threads=96, rows_per_thread=2, stages=4, persistent=False),
        "float32",
        1111,
        3,
        5,
        1,
        1,
        -1.5,
        0.0,
    ),
    ("tsm2l", Params("tsm2l", threads=128, rows_per_thread=2, stages=3), "float64", 1500, 17, 31, 2, 0, 1.0, 0.0),
]


def _emulate(tmp_path, kind, params, dtype, m, k, n, pad, offset, alpha, beta):
    es = 4 if dtype == "float32" else 8
    lda, ldb, ldc = k + pad, n + pad, n + pad
    align = Alignment(*(tsm2.access_bytes(offset * es, ld, es) for ld in (lda, ldb, ldc)))
    params = params or tsm2.model_params(kind, m, k, n, dtype, align=align)
    params = tsm2.fit_params(params, kind, dtype, k, n, align)
    spec = tsm2.spec_for(params, dtype, k, n, align)
    if kind == "tsm2r":
        grid = (-(-m // spec.rows), -(-n // spec.n_tile))
    else:  # a small persistent grid, so that every block loops over several tiles
        tiles = -(-m // spec.rows)
        grid = (min(tiles, 3) if spec.persistent else tiles, 1)
    kernel = tmp_path / "kernel.cu"
    kernel.write_text(tsm2.render_spec(spec))
    binary = tmp_path / "emulated"
    build = subprocess.run(
        [
            "g++",
            "-std=c++20",
            "-O1",
            "-pthread",
            "-w",
            f"-I{HOST}",
            f'-DKERNEL_FILE="{kernel}"',
            "-DKIND_R" if kind == "tsm2r" else "-DKIND_L",
            str(HOST / "tsm2_harness.cpp"),
            "-o",
            str(binary),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run(
        [str(binary), *map(str, (m, k, n, lda, ldb, ldc, offset, *grid, spec.threads, alpha, beta))],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    fields = run.stdout.split()
    return float(fields[1]), int(fields[3]), int(fields[5]), spec


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("case", EMULATED, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}x{c[4]}x{c[5]}")
def test_generated_kernel_runs_correctly_on_the_host(case, tmp_path):
    dtype, k = case[2], case[4]
    error, unwritten, outside, spec = _emulate(tmp_path, *case)
    assert unwritten == 0, "elements of C left unwritten"
    assert outside == 0, "writes outside C"
    assert error <= 4 * UNIT[dtype] * (k**0.5 + 2), (error, spec)


def test_empty_matrices_have_a_usable_leading_dimension():
    """CuPy gives a 5×0 array the strides (0, 4); the GPU run of test_empty_dimensions failed on it."""
    from types import SimpleNamespace

    from bilinear.runtime.views import leading_dimension

    empty = SimpleNamespace(shape=(5, 0), itemsize=4, strides=(0, 4))
    assert leading_dimension(empty, "A") == 1
    assert leading_dimension(SimpleNamespace(shape=(0, 3), itemsize=8, strides=(0, 8)), "B") == 3
    with pytest.raises(ValueError, match="unusable row stride"):
        leading_dimension(SimpleNamespace(shape=(5, 3), itemsize=4, strides=(0, 4)), "A")


@pytest.mark.parametrize("dtype, m, k, n", [("float32", 64, 2**24, 2), ("float32", 1024, 2**20, 2), ("float32", 256, 2**22, 4),
                                            ("float64", 2048, 2**22, 2)])
def test_a_short_wide_a_is_not_matched_to_square_measurements(dtype, m, k, n):
    """TSM2R was measured at m = k; a small m made up for by a huge k (log m + log k close to a measured
    row's) ran it on 1 to 8 blocks of the 132 SMs, 16-132x below the memory limit by its own model."""
    assert dispatch(m, k, n, dtype).kernel == "cublas"


@pytest.mark.parametrize("dtype, m, k, n, kernel", [("float32", 32768, 16384, 16, "tsm2r"), ("float32", 16384, 16384, 2, "tsm2r"),
                                                    ("float32", 65536, 65536, 2, "tsm2r"), ("float64", 1000000, 8, 8, "tsm2l")])
def test_shapes_near_measured_ones_keep_their_kernel(dtype, m, k, n, kernel):
    assert dispatch(m, k, n, dtype).kernel == kernel


@pytest.mark.parametrize("dtype, n", [("float64", 33), ("float64", 40), ("float64", 64), ("float32", 64), ("float32", 65)])
def test_the_model_finds_a_tsm2r_configuration_for_every_width(dtype, n):
    """float64 had none from 33 to 64 columns (n_tile = n needed 2·n words a thread, past 64)."""

    params = tsm2.model_params("tsm2r", 16384, 16384, n, dtype)
    assert params.n_tile <= (32 if dtype == "float64" else 64)


def test_tsm2r_refuses_more_column_tiles_than_a_grid_holds():
    """TSM2R puts its column tiles in the grid's y dimension, at most 65535: at 4096×64×2097152 the model's
    tiles of 32 columns made 65536, and the launch failed in CUDA (a hunt)."""
    from bilinear.runtime.tsm2 import tsm2r_grid

    assert tsm2r_grid(4096, 2097120, 32, 32) == (128, 65535, 1)
    with pytest.raises(ValueError, match=r"^TSM2R covers at most 65535 tiles of 32 columns \(n ≤ 2097120\); "
                                         r"got n=2097152: it is for skinny products, use a GEMM$"):
        tsm2r_grid(4096, 2097152, 32, 32)


def test_a_host_matrix_beside_gpu_ones_is_told_how_to_move_whatever_it_was(monkeypatch):
    """A torch CPU tensor beside a CUDA one was called "a NumPy (host) array" and told cupy.asarray (a hunt):
    matmul reads a host tensor as NumPy before the GPU path sees it."""
    import types

    import numpy as np

    from bilinear.runtime import tsm2 as runtime_tsm2

    monkeypatch.setattr(runtime_tsm2, "_cupy", lambda: types.SimpleNamespace(ndarray=type(None)))
    with pytest.raises(ValueError) as refused:
        runtime_tsm2._device_matrix(np.ones((4, 3)), "A")
    assert str(refused.value) == ("A is in host memory and the product runs on the GPU: move A there first "
                                  "(cupy.asarray; a torch tensor's .cuda())")


def test_dispatch_at_the_edges_of_what_was_measured():
    """Each a source mutation of dispatch that went unseen: half the smallest measured size still dispatches;
    of two rows as near in log scale, the larger measured one speaks; a TSM2-L row is found by its larger small
    dimension (k = 16 beside n = 4)."""
    only = Table((_row("tsm2r", "float32", 8192, 8192, 2, "tsm2r"),))
    assert dispatch(4096, 4096, 2, "float32", table=only).kernel == "tsm2r"
    assert dispatch(4095, 4096, 2, "float32", table=only).kernel == "cublas"
    tie = Table((_row("tsm2l", "float32", 10**6, 2, 2, "cublas", 0.9), _row("tsm2l", "float32", 4 * 10**6, 2, 2, "tsm2l")))
    assert dispatch(2 * 10**6, 2, 2, "float32", table=tie).kernel == "tsm2l"
    wide_k = Table((_row("tsm2l", "float32", 10**6, 16, 4, "tsm2l"),))
    assert dispatch(10**6, 16, 4, "float32", table=wide_k).kernel == "tsm2l"
