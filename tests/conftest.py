"""Shared fixtures: the repository's folders, the shipped algorithms, the catalogues."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALGORITHMS = sorted((ROOT / "algorithms").glob("*.bl"))
FIXTURES = ROOT / "tests" / "fixtures"
# Catalogue scheme files live beside the repository, never inside it.
SCHEMES = Path(os.environ.get("BILINEAR_SCHEMES", ROOT.parent / "shared" / "schemes"))
GOLDEN = ROOT / "tests" / "golden"
UPDATE_GOLDEN = os.environ.get("BILINEAR_UPDATE_GOLDEN") == "1"


def check_golden(name: str, source: str) -> None:
    """``source`` must equal ``tests/golden/<name>``; a missing file fails.  Only
    ``BILINEAR_UPDATE_GOLDEN=1`` writes golden files (then review the diff)."""
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.write_text(source)
    if not path.exists():
        pytest.fail(f"{path} is missing: run with BILINEAR_UPDATE_GOLDEN=1 to create it, then review it")
    assert source == path.read_text(), f"{name} changed; rerun with BILINEAR_UPDATE_GOLDEN=1 if intended"


def scheme_file(relative: str) -> Path:
    """A catalogue file under ../shared/schemes; skips the test when it is absent."""
    path = SCHEMES / relative
    if not path.exists():
        pytest.skip(f"catalogue file {relative} not present (looked in {SCHEMES})")
    return path


def gpu_benchmark(monkeypatch, name: str):
    """benchmarks/<name>.py imported on the CPU, CuPy a stub module where it is not installed, and its
    ``_compiled`` (what it would build for the GPU) nothing: for the tests of what a run writes."""
    import importlib
    import sys
    import types

    monkeypatch.setitem(sys.modules, "cupy", sys.modules.get("cupy", types.ModuleType("cupy")))
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    module = importlib.import_module(name)
    monkeypatch.setattr(module, "_compiled", lambda dtype: {})
    monkeypatch.setattr(module, "_gpu_name", lambda: GPU_UNDER_TEST, raising=False)
    return module


GPU_UNDER_TEST = "GPU under test"  # the name gpu_benchmark's modules see as the GPU they measure on


@pytest.fixture(params=ALGORITHMS, ids=[p.stem for p in ALGORITHMS])
def shipped(request) -> Path:
    """Each shipped .bl file in turn."""
    return request.param


def pytest_collection_modifyitems(config, items):
    """GPU tests run only where CuPy sees a GPU (the lent H100: `python -m pytest -m gpu`)."""
    from bilinear.runtime.cupy_backend import cupy_available

    if cupy_available():
        return
    skip = pytest.mark.skip(reason="needs CuPy and a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def cublas_paths() -> tuple[Path, Path] | None:
    """(include dir, lib dir) of cuBLAS: the ``nvidia-cublas`` wheel (a test extra), else $CUDA_HOME."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    roots = [Path(p) / "cu13" for p in (spec.submodule_search_locations or [])] if spec else []
    cuda = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    roots += [cuda]
    for root in roots:
        include = root / "include"
        for lib in (root / "lib", root / "lib64"):
            if (include / "cublas_v2.h").exists() and any(lib.glob("libcublas.so*")):
                return include, lib
    return None


def cublas_link_flags(lib: Path) -> list[str]:
    """Link cuBLAS by its versioned name (the wheel ships no unversioned libcublas.so)."""
    plain = lib / "libcublas.so"
    name = "-lcublas" if plain.exists() else f"-l:{sorted(lib.glob('libcublas.so.*'))[0].name}"
    return [f"-L{lib}", name, "-Xlinker", f"-rpath={lib}"]


@pytest.fixture
def ctrl_c_as_at_a_terminal():
    """SIGINT raising KeyboardInterrupt, as in a process started in the foreground: one started in the background
    by a shell (`pytest &`, a CI script's `cmd &`) inherits it ignored, and the tests of what Ctrl-C does saw
    nothing (session 80: "DID NOT RAISE", exit 0 for 130)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
