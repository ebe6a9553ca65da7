"""The examples run (on the NumPy backend here)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_api_tour_runs_on_the_cpu():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "api_tour.py"), "--n", "96", "--backend", "numpy"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "verified: True" in result.stdout
    assert "workspace bytes at this size: 0" in result.stdout
    assert "ValueError: A is float32 but this product was compiled for float64" in result.stdout
    errors = [float(line.split()[-1]) for line in result.stdout.splitlines() if line.startswith("max |C")]
    assert errors and errors[0] < 1e-10


def test_api_tour_refuses_a_size_below_one():
    """--n 0 and --n -3 ended in NumPy tracebacks."""
    for n in ("0", "-3"):
        result = subprocess.run([sys.executable, str(ROOT / "examples" / "api_tour.py"), "--n", n, "--backend", "numpy"],
                                capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 2 and f"--n must be at least 1, not {n}" in result.stderr
        assert "Traceback" not in result.stderr


def test_api_tour_on_a_machine_without_cupy_says_so_without_a_traceback():
    """--backend cupy without a GPU ended in a traceback (the ValueError's own words at its foot; an audit)."""
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        import pytest

        pytest.skip("CuPy is installed here")
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "api_tour.py"), "--n", "8", "--backend", "cupy"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.endswith("api_tour.py: the cupy backend needs CuPy and a CUDA GPU; on the CPU use the numpy "
                                  "backend (--backend numpy, backend='numpy')\n")
