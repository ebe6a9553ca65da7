"""benchmarks/distributed_plot.py: the strong-scaling table, with cuBLASMp's time beside ours where
benchmarks/cublasmp_baseline.py measured the same n on the same number of GPUs."""

from __future__ import annotations

import json

from conftest import ROOT

OURS = [
    {"dims": [32768, 32768, 32768], "ranks": 4, "seconds": 0.3286, "one_gpu_seconds": 1.4095, "speedup": 1.4095 / 0.3286,
     "memory_bytes": 28 * 2**30},
    {"dims": [32768, 32768, 32768], "ranks": 1, "seconds": 1.1245, "one_gpu_seconds": 1.3969, "speedup": 1.3969 / 1.1245,
     "memory_bytes": 28 * 2**30},
]
CUBLASMP = [
    {"n": 2048, "ranks": 4, "kind": "check"},
    {"n": 32768, "ranks": 4, "kind": "bench", "cublasmp_ms": 348.83, "one_gpu_ms": 1391.26, "speedup": 3.988},
]


def _plot(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import distributed_plot

    return distributed_plot


def test_the_table_sets_cublasmp_beside_ours_where_it_ran_the_same_n_on_the_same_gpus(monkeypatch, tmp_path):
    plot = _plot(monkeypatch)
    (tmp_path / "ours.json").write_text(json.dumps(OURS))
    (tmp_path / "theirs.json").write_text(json.dumps(CUBLASMP))
    table = plot.table(plot.rows([tmp_path / "ours.json"]), plot.baselines([tmp_path / "theirs.json"]))
    assert table.splitlines()[2:] == [
        "| 32768 | 1 | 1124.5 | 1396.9 | 1.24 | 124% | 28.0 | |",
        "| 32768 | 4 | 328.6 | 1409.5 | 4.29 | 107% | 28.0 | 348.8 | 1.06 |",
    ]


def test_without_cublasmp_files_its_columns_stay_empty(monkeypatch, tmp_path):
    plot = _plot(monkeypatch)
    (tmp_path / "ours.json").write_text(json.dumps(OURS[:1]))
    assert plot.table(plot.rows([tmp_path / "ours.json"])).splitlines()[2] == "| 32768 | 4 | 328.6 | 1409.5 | 4.29 | 107% | 28.0 | |"
