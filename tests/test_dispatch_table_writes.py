"""benchmarks/dispatch_grid.py --table on the CPU: what the table holds after each row and after a
run cut off (a stand-in for the GPU's measurement; the script imports CuPy, a stub here)."""

from __future__ import annotations

import json

import pytest

from conftest import gpu_benchmark


@pytest.fixture
def grid(monkeypatch):
    return gpu_benchmark(monkeypatch, "dispatch_grid")


def _row(dtype, m, k, n, speedup):
    return {"dtype": dtype, "m": m, "k": k, "n": n, "scheme": "winograd", "levels": 0, "breadth": 0,
            "launch": "serial", "leaf": "ozaki", "speedup": speedup, "workspace_bytes": 1, "relative_error": 0.0,
            "candidates": {}, "confirmed": {}}


def _table(tmp_path, rows):
    path = tmp_path / "dispatch.json"
    path.write_text(json.dumps({"rows": [], "recursive": {"min_dim": None, "min_speedup": 1.1, "emulated_min_speedup": 1.2,
                                                          "rows": rows, "generated_by": "earlier"}}))
    return path


def _shapes(path):
    return [(r["dtype"], r["m"], r["speedup"]) for r in json.loads(path.read_text())["recursive"]["rows"]]


def test_a_run_cut_off_keeps_every_row_it_did_not_reach(grid, tmp_path, monkeypatch):
    """It had dropped the rows it was about to measure before measuring any: cut off after FP64 24576,
    the table had no 32768 row."""
    path = _table(tmp_path, [_row("float64", 24576, 24576, 24576, 1.4), _row("float64", 32768, 32768, 32768, 1.45),
                             _row("float32", 4096, 4096, 4096, 2.0)])

    def measured(dtype, m, k, n, products, repeat):
        if m == 32768:
            raise KeyboardInterrupt  # the call's time limit
        return [_row(dtype, m, k, n, 1.5)]

    monkeypatch.setattr(grid, "_measured_rows", measured)
    with pytest.raises(KeyboardInterrupt):
        grid.measure_table(path, 5, 1.1, ["float64"], {(24576, 24576, 24576), (32768, 32768, 32768)})
    assert sorted(_shapes(path)) == [("float32", 4096, 2.0), ("float64", 24576, 1.5), ("float64", 32768, 1.45)]
    recursive = json.loads(path.read_text())["recursive"]
    assert recursive["emulated_min_speedup"] == 1.2  # the table's own bar stays
    assert recursive["generated_by"] == ("earlier; then python benchmarks/dispatch_grid.py --table " + str(path)
                                         + " --dtype float64 --min-speedup 1.1 --repeat 5 --only 24576x24576x24576")


def test_a_whole_run_replaces_every_row_of_its_dtypes(grid, tmp_path, monkeypatch):
    path = _table(tmp_path, [_row("float64", 5000, 5000, 5000, 1.3), _row("float32", 4096, 4096, 4096, 2.0)])
    monkeypatch.setattr(grid, "GRID", [("float64", 8192, 8192, 8192), ("float32", 8192, 8192, 8192)])
    monkeypatch.setattr(grid, "TABLE_ONLY", [("float64", 24576, 24576, 24576)])
    monkeypatch.setattr(grid, "_measured_rows", lambda dtype, m, k, n, products, repeat: [_row(dtype, m, k, n, 1.6)])
    grid.measure_table(path, 5, 1.1, ["float64"])
    assert _shapes(path) == [("float64", 8192, 1.6), ("float64", 24576, 1.6), ("float32", 4096, 2.0)]
    assert json.loads(path.read_text())["recursive"]["generated_by"].endswith("--min-speedup 1.1 --repeat 5")


def test_only_measures_a_shape_off_the_grid_at_every_dtype_asked_for(grid, tmp_path, monkeypatch, capsys):
    """--only named grid shapes alone: 20480x20480x20480 was passed over without a word."""
    path = _table(tmp_path, [])
    monkeypatch.setattr(grid, "_measured_rows", lambda dtype, m, k, n, products, repeat: [_row(dtype, m, k, n, 1.4)])
    grid.measure_table(path, 5, 1.1, ["float64", "float32"], [(20480, 20480, 20480), (8192, 8192, 8192), (100000, 16, 16),
                                                                      (512, 512, 512)])
    said = capsys.readouterr().out.splitlines()
    for dtype in ("float64", "float32"):
        assert f"{dtype} 100000x16x16: no row (tall-and-skinny: benchmarks/tsm2.py measures it)" in said
    assert "float64 512x512x512: no row (fast schemes start at 1024)" in said
    assert _shapes(path) == [("float64", 8192, 1.4), ("float32", 8192, 1.4), ("float64", 20480, 1.4),
                             ("float32", 20480, 1.4)]


def test_a_run_selects_the_grid_or_the_shapes_named_in_grid_order_then_as_given(grid, monkeypatch):
    monkeypatch.setattr(grid, "GRID", [("float64", 8192, 8192, 8192), ("float32", 8192, 8192, 8192)])
    monkeypatch.setattr(grid, "TABLE_ONLY", [("float64", 24576, 24576, 24576)])
    assert grid.selected(grid.GRID, ["float64"], None) == [("float64", 8192, 8192, 8192)]
    named = grid.selected(grid.GRID + grid.TABLE_ONLY, ["float64", "float32"],
                          [(28672, 28672, 28672), (24576, 24576, 24576), (8192, 8192, 8192)])
    assert named == [("float64", 8192, 8192, 8192), ("float32", 8192, 8192, 8192), ("float64", 24576, 24576, 24576),
                     ("float32", 24576, 24576, 24576), ("float64", 28672, 28672, 28672),
                     ("float32", 28672, 28672, 28672)]


OZAKI, STREAMS, BATCHED, RSMM = (("winograd", 0, 0, "serial", "ozaki"), ("winograd", 2, 2, "streams", "cublas"),
                                 ("winograd", 2, 2, "batched", "cublas"), ("rsmm", 3, 2, "streams", "cublas"))


def test_the_second_round_times_the_fastest_native_candidate_where_the_first_three_are_not(grid):
    first = {OZAKI: 1.15, BATCHED: 1.09, STREAMS: 1.1, RSMM: 1.05, ("winograd", 1, 1, "serial", "ozaki"): 0.0}
    assert grid.finalists(first) == [OZAKI, STREAMS, BATCHED]
    emulated = {OZAKI: 1.4, ("winograd", 1, 1, "serial", "ozaki"): 1.3, ("rsmm", 1, 1, "serial", "ozaki"): 1.2,
                STREAMS: 1.1, BATCHED: 1.0, RSMM: 0.0}
    assert grid.finalists(emulated) == [OZAKI, ("winograd", 1, 1, "serial", "ozaki"), ("rsmm", 1, 1, "serial", "ozaki"),
                                        STREAMS]
    assert grid.finalists({OZAKI: 1.4, STREAMS: 0.0}) == [OZAKI]  # a wrong product is no finalist


@pytest.mark.parametrize("second, rows", [({OZAKI: 1.149, STREAMS: 1.106, BATCHED: 1.099}, [OZAKI, STREAMS]),
                                          ({OZAKI: 1.0, STREAMS: 1.106, BATCHED: 1.2}, [BATCHED]),
                                          ({OZAKI: 1.3}, [OZAKI])])
def test_a_shape_keeps_its_fastest_and_where_that_is_emulated_its_fastest_native(grid, second, rows):
    assert grid.kept(second) == rows


def test_a_shape_measured_again_replaces_each_of_its_rows(grid, tmp_path, monkeypatch):
    native = {**_row("float64", 16384, 4096, 16384, 1.0), "levels": 2, "breadth": 2, "launch": "streams", "leaf": "cublas"}
    path = _table(tmp_path, [_row("float64", 16384, 4096, 16384, 1.149), {**native, "speedup": 1.106},
                             _row("float64", 8192, 8192, 8192, 1.37)])
    monkeypatch.setattr(grid, "_measured_rows", lambda dtype, m, k, n, products, repeat: [_row(dtype, m, k, n, 1.3)])
    grid.measure_table(path, 5, 1.1, ["float64"], [(16384, 4096, 16384)])
    assert _shapes(path) == [("float64", 8192, 1.37), ("float64", 16384, 1.3)]  # the native row of before is gone
    monkeypatch.setattr(grid, "_measured_rows", lambda dtype, m, k, n, products, repeat: [
        _row(dtype, m, k, n, 1.15), {**native, "speedup": 1.11}])
    grid.measure_table(path, 5, 1.1, ["float64"], [(16384, 4096, 16384)])
    assert _shapes(path) == [("float64", 8192, 1.37), ("float64", 16384, 1.15), ("float64", 16384, 1.11)]
