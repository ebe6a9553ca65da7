"""Issue 12: on-disk caches are validated and rewritten atomically; CPU ceilings take seconds."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import bilinear
from bilinear.runtime import ceilings as bench  # where the ceilings are measured and cached
from bilinear.runtime import tuning


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BILINEAR_CACHE", str(tmp_path))
    return tmp_path / "ceilings.json"


def test_cpu_ceilings_measure_only_small_sizes(cache, monkeypatch):
    sizes, copies = [], []
    monkeypatch.setattr(bench, "_gemm_rate", lambda xp, dtype, n: sizes.append(n) or 1e9)
    real_ones = np.ones
    monkeypatch.setattr(np, "ones", lambda count, dtype=None: copies.append(count) or real_ones(count, dtype=dtype))
    bench.measure_ceilings(np, "float64")
    assert sizes and max(sizes) <= 512
    assert copies and max(copies) * 8 <= 64 << 20


def test_levels_auto_on_numpy_takes_seconds(cache):
    start = time.perf_counter()
    product = bilinear.compile("algorithms/strassen.bl", levels="auto", backend="numpy")
    A, B = np.random.default_rng(0).standard_normal((2, 8, 8))
    assert np.allclose(product(A, B), A @ B)
    assert time.perf_counter() - start < 60
    assert json.loads(cache.read_text(encoding="utf-8"))  # cached for the next run


@pytest.mark.parametrize(
    "content",
    ["", "{", "[1, 2]", '{"cpu|float64|leaf-gemm-sustained": 3}',
     '{"cpu|float64|leaf-gemm-sustained": {"bandwidth": "fast", "gemm_rate": [[64, 1e9]]}}',
     '{"cpu|float64|leaf-gemm-sustained": {"bandwidth": 1e10, "gemm_rate": [[64, -1]]}}',
     '{"cpu|float64|leaf-gemm-sustained": {"bandwidth": 1e10, "gemm_rate": []}}',
     '{"cpu|float64|leaf-gemm-sustained": {"bandwidth": 1e10}}'],
    ids=["empty", "truncated", "a list", "a number", "a string rate", "a negative rate", "no rates", "missing rates"],
)
def test_a_damaged_ceilings_cache_is_measured_again(cache, monkeypatch, content):
    cache.write_text(content, encoding="utf-8")
    monkeypatch.setattr(bench, "_gemm_rate", lambda xp, dtype, n: 2e9)
    ceilings = bench.measure_ceilings(np, "float64")
    assert ceilings.gemm_rate and all(rate == 2e9 for _, rate in ceilings.gemm_rate)
    entry = json.loads(cache.read_text(encoding="utf-8"))["cpu|float64|leaf-gemm-sustained"]
    assert entry["gemm_rate"][0][1] == 2e9
    assert [p.name for p in cache.parent.iterdir()] == ["ceilings.json"]  # no temporary left behind


@pytest.mark.parametrize(
    "content",
    ["", "{", "[]", '{"gpu|float64|tsm2r": 1}', '{"gpu|float64|tsm2r": {"config": 5}}',
     '{"gpu|float64|tsm2r": {"config": {"nonsense": 1}}}', '{"gpu|float64|tsm2r": {}}'],
)
def test_a_damaged_tuning_cache_means_tuning_again(tmp_path, content):
    path = tmp_path / "tuning.json"
    path.write_text(content, encoding="utf-8")
    assert tuning.lookup("gpu", "float64", "tsm2r", path) is None
