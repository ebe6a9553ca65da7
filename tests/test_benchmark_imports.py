"""The benchmark scripts run only on the GPU, so nothing else imports them: every name they take from
``bilinear`` must still be there (benchmarks/ozaki.py took TILE from int8_gemm after it moved, and
host_overhead.py took _gpu_backend from bilinear.api, which no longer held it)."""

from __future__ import annotations

import ast
import os
import importlib
import importlib.util

import pytest

from conftest import ROOT
from helpers.mpi import needs_mpi, run_ranks

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



@needs_mpi
def test_the_cublasmp_baseline_reports_the_version_python_imports(tmp_path):
    """The baseline's run carries cuda-core < 0.4 ahead of the machine's own on the path (nvmath 0.7
    needs it) and reported the machine's 1.2.0: the last distribution of a name found, where import
    takes the first.  Without nvmath (as here) the script stops with the versions it found."""
    paths = []
    for version in ("0.3.2", "1.2.0"):
        info = tmp_path / version / f"cuda_core-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: cuda-core\nVersion: {version}\n")
        paths.append(str(tmp_path / version))
    done = run_ranks(1, str(ROOT / "benchmarks" / "cublasmp_baseline.py"), "-n", "64",
                     env={"PYTHONPATH": os.pathsep.join(paths)})
    assert done.returncode == 3, done.stdout + done.stderr
    assert "'cuda-core': '0.3.2'" in done.stdout
