"""matmul's choice of a fast scheme: the measured recursive rows of the dispatch table."""

from __future__ import annotations

import pytest

from bilinear.dispatch import Recursive, Table, dispatch, load_table, parse_table
from bilinear.dispatch_writes import merge_tsm2_rows
from bilinear.runtime import cublas_capture

ROW = Recursive("float64", 16384, 16384, 16384, "winograd", 2, 2, 1.19, 19 << 30, "streams")
SLOW = Recursive("float64", 4096, 4096, 4096, "winograd", 1, 1, 0.95, 1 << 30, "streams")
TABLE = Table((), recursive=(ROW, SLOW))


def test_a_shape_near_a_faster_measurement_runs_its_configuration():
    choice = dispatch(15000, 16384, 17000, "float64", table=TABLE)
    assert choice.kernel == "recursive" and choice.config == ROW
    assert "winograd L2 (2 breadth-first, streams leaves) 1.19× cuBLAS" in choice.reason


def test_a_slower_measurement_keeps_cublas_and_says_why():
    choice = dispatch(4096, 4096, 4096, "float64", table=TABLE)
    assert choice.kernel == "cublas" and choice.reason == ("measured 4096×4096×4096 float64: winograd L1 (1 breadth-first, "
                                                           "streams leaves) 0.95× cuBLAS, below the 1.1× a fast scheme "
                                                           "must clear")


@pytest.mark.parametrize("shape, dtype", [((8192, 8192, 8192), "float64"), ((16384, 16384, 16384), "float32")])
def test_nothing_measured_nearby_keeps_cublas(shape, dtype):
    assert dispatch(*shape, dtype, table=TABLE).kernel == "cublas"


def test_the_table_round_trips_its_recursive_rows():
    data = {"rows": [], "recursive": {"min_speedup": 1.1, "rows": [
        {"dtype": "float64", "m": 8192, "k": 8192, "n": 8192, "scheme": "rsmm", "levels": 1, "breadth": 0,
         "speedup": 1.08, "workspace_bytes": 0, "launch": "serial", "candidates": {"ignored": 1.0}}]}}
    table = parse_table(data)
    assert table.min_speedup == 1.1
    assert table.recursive == (Recursive("float64", 8192, 8192, 8192, "rsmm", 1, 0, 1.08, 0, "serial"),)
    assert dispatch(8192, 8192, 8192, "float64", table=table).kernel == "cublas"  # 1.08 < 1.1


def test_an_ozaki_row_runs_the_ozaki_leaf_and_says_so():
    data = {"rows": [], "recursive": {"rows": [
        {"dtype": "float64", "m": 8192, "k": 8192, "n": 8192, "scheme": "winograd", "levels": 0, "breadth": 0,
         "speedup": 1.2, "workspace_bytes": 5 << 30, "launch": "serial", "leaf": "ozaki"},
        {"dtype": "float64", "m": 16384, "k": 16384, "n": 16384, "scheme": "winograd", "levels": 1, "breadth": 0,
         "speedup": 1.3, "workspace_bytes": 5 << 30, "launch": "serial", "leaf": "ozaki"}]}}
    table = parse_table(data)
    choice = dispatch(8192, 8192, 8192, "float64", table=table)
    assert choice.kernel == "recursive" and choice.config.leaf == "ozaki"
    assert choice.reason == ("measured 8192×8192×8192 float64: the ozaki leaf alone (FP64 on the int8 tensor cores) "
                             "1.20× cuBLAS")
    deeper = dispatch(16384, 16384, 16384, "float64", table=table)
    assert "winograd L1 (0 breadth-first, serial ozaki leaves) 1.30× cuBLAS" in deeper.reason
    assert ROW.leaf == "cublas"  # rows written before leaves were recorded
    single = Recursive("float32", 4096, 4096, 4096, "winograd", 0, 0, 2.2, 0, "serial", "ozaki")
    assert single.described == "the ozaki leaf alone (FP32 on the int8 tensor cores)"


def test_an_emulated_leaf_must_clear_the_higher_bar_and_a_dgemm_leaf_the_lower():
    """The ozaki leaf's 1.193 at FP64 6144 (measured against a slow H100's DGEMM) ran at 0.955 of cuBLAS on
    a faster one: DGEMM's speed differs between GPUs, the int8 leaf's does not.  A row of DGEMM leaves is
    DGEMM against DGEMM on any GPU and keeps the lower bar."""
    def row(leaf: str, levels: int, m: int) -> dict:
        return {"dtype": "float64", "m": m, "k": m, "n": m, "scheme": "winograd", "levels": levels, "breadth": levels,
                "speedup": 1.15, "workspace_bytes": 0, "launch": "serial", "leaf": leaf}

    table = parse_table({"rows": [], "recursive": {"min_speedup": 1.1, "emulated_min_speedup": 1.2,
                                                   "rows": [row("ozaki", 0, 6144), row("cublas", 1, 16384)]}})
    assert (table.min_speedup, table.emulated_min_speedup) == (1.1, 1.2)
    emulated = dispatch(6144, 6144, 6144, "float64", table=table)
    assert emulated.kernel == "cublas" and emulated.reason.endswith(
        "1.15× cuBLAS, below the 1.2× a fast scheme must clear (an emulated leaf's: the native GEMM's speed differs "
        "between GPUs)")
    assert dispatch(16384, 16384, 16384, "float64", table=table).kernel == "recursive"
    assert parse_table({"rows": [], "recursive": {"rows": []}}).emulated_min_speedup == 1.2  # an older table
    committed = dispatch(6144, 6144, 6144, "float64")  # the committed table: 1.193 measured, cuBLAS chosen
    assert committed.kernel == "cublas" and "below the 1.2×" in committed.reason


def _ozaki(dtype: str, m: int, k: int, n: int, speedup: float) -> Recursive:
    return Recursive(dtype, m, k, n, "winograd", 0, 0, speedup, 0, "serial", "ozaki")


def test_a_shape_between_two_rows_of_one_configuration_runs_it_at_the_lower_speedup():
    """FP64 20480³ lies beyond the reach of the rows at 16384³ (1.35) and 24576³ (1.48), which both ran the
    ozaki leaf alone: it kept cuBLAS.  A configuration's overhead on the way (conversions, element-wise
    passes: O(mk + kn + mn) against O(mkn)) shrinks as every dimension grows, so between a row and one at
    least as large in every dimension it is taken at the smaller of the two speedups."""
    low, high = _ozaki("float64", 16384, 16384, 16384, 1.35), _ozaki("float64", 24576, 24576, 24576, 1.48)
    table = Table((), recursive=(low, high))
    choice = dispatch(20480, 20480, 20480, "float64", table=table)
    assert choice.kernel == "recursive" and choice.config == low
    assert choice.reason == ("between 16384×16384×16384 (1.35×) and 24576×24576×24576 (1.48×) float64, both "
                             "measured: the ozaki leaf alone (FP64 on the int8 tensor cores) 1.35× cuBLAS")
    assert dispatch(20000, 24000, 17000, "float64", table=table).kernel == "recursive"  # not a cube: inside too


@pytest.mark.parametrize("dtype, m, k, n", [("float64", 20480, 20480, 12000), ("float64", 28000, 20480, 20480),
                                            ("float32", 20480, 20480, 20480)])
def test_a_shape_outside_the_box_of_two_rows_keeps_cublas(dtype, m, k, n):
    table = Table((), recursive=(_ozaki("float64", 16384, 16384, 16384, 1.35), _ozaki("float64", 24576, 24576, 24576, 1.48),
                                 _ozaki("float32", 16384, 16384, 16384, 3.0)))  # float32: nothing measured above
    choice = dispatch(m, k, n, dtype, table=table)
    assert choice.kernel == "cublas" and choice.reason == f"no fast-scheme measurement near {m}×{k}×{n} {dtype}"


def test_two_rows_bound_a_shape_only_where_both_ran_one_configuration_and_both_cleared_the_bar():
    low = _ozaki("float64", 16384, 16384, 16384, 1.35)
    other = Recursive("float64", 24576, 24576, 24576, "rsmm", 3, 2, 1.39, 0, "streams")
    assert dispatch(20480, 20480, 20480, "float64", table=Table((), recursive=(low, other))).kernel == "cublas"
    slow = _ozaki("float64", 16384, 16384, 16384, 1.15)  # below the 1.2 an emulated leaf must clear
    high = _ozaki("float64", 24576, 24576, 24576, 1.48)
    choice = dispatch(20480, 20480, 20480, "float64", table=Table((), recursive=(slow, high)))
    assert choice.kernel == "cublas" and choice.reason.endswith("1.15× cuBLAS, below the 1.2× a fast scheme must "
                                                                "clear (an emulated leaf's: the native GEMM's speed "
                                                                "differs between GPUs)")
    fast_low, slow_high = _ozaki("float64", 16384, 16384, 16384, 1.48), _ozaki("float64", 24576, 24576, 24576, 1.15)
    choice = dispatch(20480, 20480, 20480, "float64", table=Table((), recursive=(fast_low, slow_high)))
    assert choice.kernel == "cublas" and "both measured: the ozaki leaf alone (FP64 on the int8 tensor cores) 1.15× " \
                                         "cuBLAS, below the 1.2×" in choice.reason  # the lower of the two, wherever it is


def test_rows_more_than_twice_apart_in_a_dimension_bound_nothing():
    """4096×16384×4096 and 32768³ both ran the ozaki leaf, but a box 8× wide says little of its inside."""
    table = Table((), recursive=(_ozaki("float64", 4096, 16384, 4096, 1.38), _ozaki("float64", 32768, 32768, 32768, 1.49)))
    assert dispatch(6144, 32768, 8192, "float64", table=table).kernel == "cublas"
    table = Table((), recursive=(_ozaki("float32", 16384, 16384, 16384, 3.0), _ozaki("float32", 32768, 32768, 32768, 2.7)))
    assert dispatch(24576, 20000, 32768, "float32", table=table).kernel == "recursive"  # exactly 2× apart


def test_a_row_within_reach_decides_before_any_pair_around_the_shape():
    near = Recursive("float64", 22000, 19000, 20480, "rsmm", 3, 2, 1.3, 0, "streams")  # on neither side of 20480³
    table = Table((), recursive=(_ozaki("float64", 16384, 16384, 16384, 1.35), near,
                                 _ozaki("float64", 24576, 24576, 24576, 1.48)))
    assert dispatch(20480, 20480, 20480, "float64", table=table).config == near


def test_the_committed_table_fills_the_gaps_between_its_largest_rows():
    for n, dtype in ((20480, "float64"), (28672, "float64"), (24576, "float32")):
        choice = dispatch(n, n, n, dtype)
        assert choice.kernel == "recursive" and choice.config.leaf == "ozaki", (n, dtype, choice.reason)


def test_the_committed_table_only_runs_configurations_that_exist():
    from bilinear.lower.options import Options
    from bilinear.paths import algorithms_dir

    for row in load_table().recursive:
        assert (algorithms_dir() / f"{row.scheme}.bl").exists()
        Options(dtype=row.dtype, levels=row.levels, breadth=row.breadth, launch=row.launch, leaf=row.leaf)  # valid


def _mapped_libraries(monkeypatch, tmp_path, paths: list[str]) -> None:
    """/proc/self/maps as it reads with these libraries mapped, and no CuPy module to ask."""
    maps = tmp_path / "maps"
    maps.write_text("".join(f"00400000-00452000 r-xp 00000000 08:02 173521 {path}\n" for path in ["/usr/bin/python3", *paths]))
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: real_open(maps if path == "/proc/self/maps" else path, *a, **k))
    monkeypatch.setattr(cublas_capture, "_through_cupy", lambda: None)
    cublas_capture.library.cache_clear()


def test_capture_without_cublas_loaded_says_so(monkeypatch, tmp_path):
    _mapped_libraries(monkeypatch, tmp_path, [])
    with pytest.raises(RuntimeError, match=r"cuBLAS is not loaded in this process \(multiply once through CuPy first\)"):
        cublas_capture.library()
    cublas_capture.library.cache_clear()


def test_capture_with_two_cublas_libraries_and_no_word_from_cupy_refuses_to_guess(monkeypatch, tmp_path):
    """It had taken the first path in sorted order: another library than the one CuPy's handle is of."""
    _mapped_libraries(monkeypatch, tmp_path, ["/opt/torch/lib/libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.13",
                                              "/usr/local/cuda/lib64/libcublasLt.so.13"])
    with pytest.raises(RuntimeError) as refused:
        cublas_capture.library()
    assert str(refused.value) == (
        "several cuBLAS libraries are loaded in this process (/opt/torch/lib/libcublas.so.12, "
        "/usr/local/cuda/lib64/libcublas.so.13) and CuPy's cuBLAS module does not tell which one it calls: "
        "a graph cannot be captured")
    cublas_capture.library.cache_clear()


def test_measured_tsm2_rows_merge_into_the_table_and_keep_the_recursive_ones():
    """benchmarks/tsm2.py --only measures some shapes: the table keeps every other row and the
    fast-scheme rows dispatch_grid.py measured (it once wrote a placeholder over them)."""
    def row(m, k, winner, speedup):
        return {"family": "tsm2l", "dtype": "float64", "m": m, "k": k, "n": k, "winner": winner, "speedup": speedup}

    committed = load_table()
    assert committed.recursive  # the committed table has measured fast-scheme rows
    old = {"device": "GPU A", "rows": [row(10**6, 16, "tsm2l", 1.2), row(10**7, 16, "tsm2l", 1.3)],
           "recursive": {"min_dim": None, "rows": [{"dtype": "float64", "m": 8192, "k": 8192, "n": 8192,
                                                    "scheme": "winograd", "levels": 2, "breadth": 2, "speedup": 1.1}]}}
    merged = merge_tsm2_rows(old, {"device": "GPU A", "date": "new"}, [row(10**5, 16, "tsm2l", 1.5), row(10**6, 16, "cublas", 0.9)])
    assert merged["date"] == "new" and merged["recursive"] == old["recursive"]
    assert [(r["m"], r["winner"]) for r in merged["rows"]] == [(10**5, "tsm2l"), (10**6, "cublas"), (10**7, "tsm2l")]
    table = parse_table(merged)
    assert dispatch(100000, 16, 16, "float64", table=table).kernel == "tsm2l"
    assert dispatch(8192, 8192, 8192, "float64", table=table).kernel == "recursive"


@pytest.mark.parametrize("old, message", [
    ({"rows": [{"dtype": "float32", "m": 1, "k": 2, "n": 2}]}, "rows[0].family must be one of tsm2r, tsm2l, not None"),
    ([], "the table must be a JSON object"),
    ({"rows": None}, "rows must be a list"),
])
def test_a_malformed_table_is_refused_before_rows_merge_into_it(old, message):
    """benchmarks/tsm2.py merged into a malformed table after its whole GPU sweep, with KeyError, AttributeError or
    TypeError, and wrote nothing (a hunt); it now merges no rows into it first, to refuse it before measuring."""
    from bilinear.dispatch_checks import TableError

    with pytest.raises(TableError) as refused:
        merge_tsm2_rows(old, {"device": "GPU A"}, [])
    assert str(refused.value) == message


def test_a_shape_no_tsm2_kernel_ran_at_merges_without_a_speedup_and_keeps_cublas():
    """benchmarks/tsm2.py wrote "speedup": 0.0 where no candidate ran, which the merged table's check refused after the
    whole sweep (a review): the row has no speedup, and the choice says why."""
    row = {"family": "tsm2l", "dtype": "float64", "m": 65536, "k": 16, "n": 16, "winner": "cublas", "params": None}
    table = parse_table(merge_tsm2_rows({}, {"device": "GPU A", "limits": {"tsm2l_max_k": 32}}, [row]))
    choice = dispatch(65536, 16, 16, "float64", table=table)
    assert (choice.kernel, choice.reason) == ("cublas", "measured 65536×16×16 float64: no tsm2l kernel ran")


def test_merged_rows_are_checked_as_the_table_they_make():
    from bilinear.dispatch_checks import TableError

    bad = {"family": "tsm2l", "dtype": "float64", "m": 10**5, "k": 16, "n": 16, "winner": "tsm2l", "speedup": float("nan")}
    with pytest.raises(TableError, match=r"^rows\[0\]\.speedup must be a finite number above 0, not nan$"):
        merge_tsm2_rows({}, {"device": "GPU A"}, [bad])


def test_in_place_runs_msmes_only_where_msmes_itself_measured_faster():
    """matmul(inplace=True) ran MSMES L1 wherever a fast scheme (now mostly the ozaki leaf) had won,
    and MSMES L1 measured 0.944 of cuBLAS at FP64 8192."""
    from bilinear.dispatch import in_place_choice

    rows = [{"dtype": "float64", "m": n, "k": n, "n": n, "levels": levels, "speedup": speedup}
            for n, levels, speedup in ((8192, 1, 0.944), (16384, 2, 1.15))]
    table = parse_table({"rows": [], "recursive": {"min_dim": None, "min_speedup": 1.1}, "inplace": {"rows": rows}})
    assert in_place_choice(8192, 8192, 8192, "float64", table) is None
    assert in_place_choice(16384, 16384, 16384, "float64", table) == ("msmes", 2)  # a row of no scheme: msmes's
    assert in_place_choice(17000, 16384, 16000, "float64", table) == ("msmes", 2)  # near the measured shape
    assert in_place_choice(16384, 16384, 16384, "float32", table) is None  # nothing measured in float32
    assert in_place_choice(32768, 32768, 32768, "float64", table) is None  # too far from anything measured
    assert in_place_choice(16384, 16384, 16384, "float64", parse_table({"rows": []})) is None
    merged = merge_tsm2_rows({"inplace": {"rows": rows}}, {"device": "new"}, [])
    assert parse_table(merged).inplace == table.inplace  # a TSM2 measurement keeps the in-place rows


def test_an_in_place_row_measured_exactly_the_minimum_speedup_is_chosen():
    """"At least min_speedup": a row at 1.1 runs, one just below does not."""
    from bilinear.dispatch import in_place_choice

    def table(speedup):
        row = {"dtype": "float64", "m": 16384, "k": 16384, "n": 16384, "levels": 1, "speedup": speedup}
        return parse_table({"rows": [], "recursive": {"min_dim": None, "min_speedup": 1.1}, "inplace": {"rows": [row]}})

    assert in_place_choice(16384, 16384, 16384, "float64", table(1.1)) == ("msmes", 1)
    assert in_place_choice(16384, 16384, 16384, "float64", table(1.0999)) is None


def test_an_in_place_row_may_name_msmes2():
    from bilinear.dispatch import in_place_choice

    rows = [{"dtype": "float64", "m": 16384, "k": 16384, "n": 16384, "scheme": "msmes2", "levels": 1, "speedup": 1.12}]
    table = parse_table({"rows": [], "recursive": {"min_dim": None, "min_speedup": 1.1}, "inplace": {"rows": rows}})
    assert in_place_choice(16384, 16384, 16384, "float64", table) == ("msmes2", 1)


@pytest.mark.parametrize("n, dtype, choice", [(16384, "float64", ("msmes2", 1)), (24576, "float64", ("msmes2", 1)),
                                              (32768, "float64", ("msmes2", 1)), (32768, "float32", ("msmes2", 2))])
def test_the_committed_table_runs_an_in_place_schedule_from_16384(n, dtype, choice):
    """The in-place rows stopped at 16384, so matmul(inplace=True) gave up MSMES where it measured 1.17-1.26;
    since session 46 msmes2 (msmes's two levels as one schedule) measured faster than msmes at these."""
    from bilinear.dispatch import in_place_choice

    assert in_place_choice(n, n, n, dtype) == choice


def test_a_numpy_dtype_is_dispatched_as_its_name():
    """np.float64 went to cuBLAS "as TSM2 kernels take row-major float32/float64 only", where "float64" chose the
    recursive product (a hunt); compile takes NumPy dtypes too."""
    import numpy as np

    for dtype in ("float64", "float32"):
        assert dispatch(16384, 16384, 16384, np.dtype(dtype).type) == dispatch(16384, 16384, 16384, dtype)
        assert dispatch(16384, 16384, 16384, np.dtype(dtype)) == dispatch(16384, 16384, 16384, dtype)
    assert dispatch(64, 64, 64, np.int32).reason == "bilinear's kernels take float32 or float64, not int32"


def test_every_dtype_spelling_compile_takes_is_dispatched_and_placed_in_place_as_its_name():
    """'f8' went to cuBLAS at 8192³ "as TSM2 kernels take row-major float32/float64 only", and in_place_choice
    took np.float64 as no in-place measurement (a hunt)."""
    import numpy as np

    from bilinear.dispatch import in_place_choice

    for spelling in ("f8", "double", np.float64, np.dtype("float64")):
        assert dispatch(8192, 8192, 8192, spelling) == dispatch(8192, 8192, 8192, "float64")
        assert in_place_choice(16384, 16384, 16384, spelling) == in_place_choice(16384, 16384, 16384, "float64")
    assert in_place_choice(16384, 16384, 16384, "float64") is not None


def test_operands_that_are_not_row_major_keep_cublas_for_that_reason():
    """At 8192³ the reason named TSM2 kernels, which that shape never runs (a hunt)."""
    choice = dispatch(8192, 8192, 8192, "float64", row_major=False)
    assert (choice.kernel, choice.reason) == ("cublas", "bilinear's kernels take row-major A, B and C")


def test_a_table_is_given_as_a_table_or_a_file(tmp_path):
    """A path raised AttributeError: 'str' object has no attribute 'not_held_on' (a hunt)."""
    from bilinear.dispatch import TABLE, in_place_choice

    for given in (TABLE, str(TABLE)):
        assert dispatch(8192, 8192, 8192, "float64", table=given) == dispatch(8192, 8192, 8192, "float64",
                                                                                table=load_table(TABLE))
        assert in_place_choice(16384, 16384, 16384, "float64", given) == ("msmes2", 1)
    with pytest.raises(TypeError, match=r"^table must be a Table \(load_table, parse_table\) or a file, not dict$"):
        dispatch(8192, 8192, 8192, "float64", table={})


def _measured(m: int, k: int, n: int, leaf: str = "ozaki"):
    from types import SimpleNamespace

    return SimpleNamespace(m=m, k=k, n=n, scheme="winograd", levels=1, breadth=0, launch="serial", leaf=leaf)


def test_the_nearest_row_speaks_within_its_reach_in_each_dimension():
    """Σ |log2 ratio| over m, k and n at most 0.5 (source mutations that widened the reach or read k for n went
    unseen)."""
    from bilinear.dispatch_nearest import nearest_row

    cube = _measured(16384, 16384, 16384)
    assert nearest_row([cube], 16384, 16384, 22000) is cube  # 0.43 away
    assert nearest_row([cube], 16384, 16384, 24000) is None  # 0.55 away
    long_n = _measured(8192, 8192, 32768)
    assert nearest_row([long_n], 8192, 8192, 8192) is None  # n is 4× off, though m and k match


def test_two_rows_either_side_bound_a_shape_only_in_every_dimension_and_one_configuration():
    from bilinear.dispatch_nearest import bounding_rows

    low, high = _measured(16384, 16384, 16384), _measured(24576, 24576, 24576)
    assert bounding_rows([low, high], 20480, 16384, 20480) == [(low, high)]  # k equal to the lower row's counts
    flat = _measured(24576, 24576, 16384)
    assert bounding_rows([low, flat], 20480, 20480, 20000) == []  # no row reaches n = 20000 from above
    other = _measured(24576, 24576, 24576, leaf="cublas")
    assert bounding_rows([low, other], 20480, 20480, 20480) == []  # another configuration above
    native_low = _measured(16384, 16384, 16384, leaf="cublas")
    assert bounding_rows([low, native_low, other, high], 20480, 20480, 20480) == [(low, high), (native_low, other)]
    farther = _measured(12288, 12288, 12288, leaf="cublas")  # one configuration, but not at the nearest shape below
    assert bounding_rows([low, farther, other], 20480, 20480, 20480) == []


def _native(m: int, k: int, n: int, speedup: float) -> Recursive:
    return Recursive("float64", m, k, n, "winograd", 2, 2, speedup, 0, "streams")


def test_a_shape_runs_its_native_row_where_its_faster_emulated_row_is_below_the_higher_bar():
    """FP64 16384×4096×16384 measured the ozaki leaf at 1.149 (below 1.2) and Winograd L2 with DGEMM leaves at
    1.106 (above 1.1): a row held one configuration, the emulated one, so matmul kept cuBLAS."""
    table = Table((), recursive=(_ozaki("float64", 16384, 4096, 16384, 1.149), _native(16384, 4096, 16384, 1.106)))
    choice = dispatch(16384, 4096, 16384, "float64", table=table)
    assert choice.kernel == "recursive" and choice.config == table.recursive[1]
    assert choice.reason == ("measured 16384×4096×16384 float64: winograd L2 (2 breadth-first, streams leaves) 1.11× "
                             "cuBLAS; the ozaki leaf alone (FP64 on the int8 tensor cores) measured 1.15×, below the "
                             "1.2× a fast scheme must clear (an emulated leaf's: the native GEMM's speed differs "
                             "between GPUs)")


@pytest.mark.parametrize("emulated, native, chosen", [(1.3, 1.106, "ozaki"), (1.2, 1.25, "cublas"),
                                                      (1.15, 1.05, None), (1.2, 1.1, "ozaki"), (1.15, 1.18, "cublas")])
def test_of_a_shape_s_rows_the_fastest_that_clears_its_bar_runs(emulated, native, chosen):
    table = Table((), recursive=(_native(8192, 8192, 8192, native), _ozaki("float64", 8192, 8192, 8192, emulated)))
    choice = dispatch(8192, 8192, 8192, "float64", table=table)
    assert (choice.config.leaf if choice.config else None) == chosen
    if chosen is None:  # the fastest is named with its bar
        assert choice.reason == ("measured 8192×8192×8192 float64: the ozaki leaf alone (FP64 on the int8 tensor "
                                 "cores) 1.15× cuBLAS, below the 1.2× a fast scheme must clear (an emulated leaf's: "
                                 "the native GEMM's speed differs between GPUs)")
    else:
        assert "measured 1." not in choice.reason  # nothing faster passed over


def test_between_two_shapes_each_configuration_measured_at_both_is_an_option():
    low = (_ozaki("float64", 16384, 16384, 16384, 1.19), _native(16384, 16384, 16384, 1.18))
    high = (_ozaki("float64", 24576, 24576, 24576, 1.4), _native(24576, 24576, 24576, 1.3))
    choice = dispatch(20480, 20480, 20480, "float64", table=Table((), recursive=(*low, *high)))
    assert choice.config == low[1] and choice.reason.startswith(
        "between 16384×16384×16384 (1.18×) and 24576×24576×24576 (1.30×) float64, both measured: winograd L2 "
        "(2 breadth-first, streams leaves) 1.18× cuBLAS; the ozaki leaf alone")


def test_the_committed_table_runs_winograd_where_its_ozaki_row_is_below_the_bar():
    choice = dispatch(16384, 4096, 16384, "float64")
    assert choice.kernel == "recursive" and choice.config.leaf == "cublas", choice.reason
