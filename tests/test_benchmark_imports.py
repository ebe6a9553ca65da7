"""The benchmark scripts run only on the GPU, so nothing else imports them: every name they take from
``bilinear`` must still be there (benchmarks/ozaki.py took TILE from int8_gemm after it moved, and
host_overhead.py took _gpu_backend from bilinear.api, which no longer held it)."""

from __future__ import annotations

import ast
import importlib
import importlib.util

import pytest

from conftest import ROOT

SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "bilinear":
            yield node.module, [alias.name for alias in node.names]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_every_name_a_benchmark_takes_from_bilinear_is_there(script):
    missing = []
    for module, names in _imports(script):
        held = importlib.import_module(module)
        for name in names:
            if not hasattr(held, name) and importlib.util.find_spec(f"{module}.{name}") is None:
                missing.append(f"{module}.{name}")
    assert missing == []
