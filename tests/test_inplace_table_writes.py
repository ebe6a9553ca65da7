"""benchmarks/inplace_table.py --table on the CPU: which in-place rows a run measures, what it keeps and
what the table holds after a run cut off (a stand-in for the GPU's measurement; CuPy is a stub here)."""

from __future__ import annotations

import json
import types

import pytest

from conftest import gpu_benchmark


@pytest.fixture
def inplace(monkeypatch):
    module = gpu_benchmark(monkeypatch, "inplace_table")
    monkeypatch.setattr(module.cupy, "get_default_memory_pool", lambda: types.SimpleNamespace(free_all_blocks=lambda: None),
                        raising=False)
    return module


def _row(dtype, n, speedup):
    return {"dtype": dtype, "m": n, "k": n, "n": n, "scheme": "msmes", "levels": 2, "speedup": speedup,
            "candidates": {"msmes L2": speedup}}


def _table(tmp_path, rows):
    path = tmp_path / "dispatch.json"
    path.write_text(json.dumps({"rows": [], "recursive": {"rows": []},
                                "inplace": {"rows": rows, "generated_by": "earlier"}}))
    return path


def _rows(path):
    return sorted((r["dtype"], r["m"], r["speedup"]) for r in json.loads(path.read_text())["inplace"]["rows"])


def test_only_measures_the_shapes_it_names_and_keeps_every_other_row(inplace, tmp_path, monkeypatch):
    """The in-place rows stopped at 16384: measuring FP64 24576 meant measuring all 26 shapes again."""
    path = _table(tmp_path, [_row("float64", 16384, 1.1), _row("float32", 8192, 1.03)])
    measured = []

    def measure(dtype, m, k, n, products, repeat):
        measured.append((dtype, m))
        return _row(dtype, m, 1.17)

    monkeypatch.setattr(inplace, "_measured_row", measure)
    inplace.measure_table(path, 5, ["float64"], [(24576, 24576, 24576), (32768, 32768, 32768)])
    assert measured == [("float64", 24576), ("float64", 32768)]
    assert _rows(path) == [("float32", 8192, 1.03), ("float64", 16384, 1.1), ("float64", 24576, 1.17),
                           ("float64", 32768, 1.17)]
    assert json.loads(path.read_text())["inplace"]["generated_by"] == (
        f"earlier; then python benchmarks/inplace_table.py --table {path} --dtype float64 --repeat 5 --only "
        "24576x24576x24576 32768x32768x32768")


def test_a_whole_run_cut_off_keeps_what_it_did_not_reach_and_a_finished_one_drops_what_it_no_longer_measures(
        inplace, tmp_path, monkeypatch):
    path = _table(tmp_path, [_row("float64", 5000, 1.3), _row("float64", 16384, 1.1), _row("float32", 8192, 1.03)])
    monkeypatch.setattr(inplace, "GRID", [("float64", 8192, 8192, 8192), ("float64", 16384, 16384, 16384)])
    monkeypatch.setattr(inplace, "TABLE_ONLY", [])

    def cut_off(dtype, m, k, n, products, repeat):
        if m == 16384:
            raise KeyboardInterrupt  # the device call's time limit
        return _row(dtype, m, 0.97)

    monkeypatch.setattr(inplace, "_measured_row", cut_off)
    with pytest.raises(KeyboardInterrupt):
        inplace.measure_table(path, 5, ["float64"])
    assert _rows(path) == [("float32", 8192, 1.03), ("float64", 5000, 1.3), ("float64", 8192, 0.97),
                           ("float64", 16384, 1.1)]
    command = f"python benchmarks/inplace_table.py --table {path} --dtype float64 --repeat 5"
    assert _generated_by(path) == f"earlier; then {command} --only 8192x8192x8192"  # what it did measure
    monkeypatch.setattr(inplace, "_measured_row", lambda dtype, m, k, n, products, repeat: _row(dtype, m, 1.0))
    inplace.measure_table(path, 5, ["float64"])
    assert _rows(path) == [("float32", 8192, 1.03), ("float64", 8192, 1.0), ("float64", 16384, 1.0)]
    assert _generated_by(path) == f"earlier; then {command} --only 8192x8192x8192; then {command}"  # float32's stay
    monkeypatch.setattr(inplace, "GRID", [("float64", 8192, 8192, 8192), ("float32", 8192, 8192, 8192)])
    inplace.measure_table(path, 5, ["float64", "float32"])
    assert _generated_by(path) == f"python benchmarks/inplace_table.py --table {path} --dtype float64 float32 --repeat 5"


def _generated_by(path):
    return json.loads(path.read_text())["inplace"]["generated_by"]


def test_a_whole_run_measures_every_shape_the_committed_table_has_an_in_place_row_for(inplace):
    """FP32 24576³ was measured by --only, and a whole run, which measured only the grid and TABLE_ONLY, would
    have dropped its row."""
    from bilinear.dispatch import load_table

    measured = set(inplace._shapes(load_table(), ["float64", "float32"], None))
    committed = {(row.dtype, row.m, row.k, row.n) for row in load_table().inplace}
    assert committed <= measured
