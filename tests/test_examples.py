"""The examples run (on the NumPy backend here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
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
        pytest.skip("CuPy is installed here")
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "api_tour.py"), "--n", "8", "--backend", "cupy"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.endswith("api_tour.py: the cupy backend needs CuPy and a CUDA GPU; on the CPU use the numpy "
                                  "backend (--backend numpy, backend='numpy')\n")


def test_the_c_api_example_builds_and_checks_msmes_on_the_cpu_emulator(tmp_path):
    """The README's C/C++ section linked a main.cpp it never gave (a hunt): examples/c_api/main.cpp,
    built against a compiled msmes on the CPU stand-ins for the CUDA runtime and cuBLAS, at odd sizes."""
    import shutil

    from bilinear.cli import main
    from helpers.emulated import EMULATOR

    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    out = tmp_path / "msmes"
    assert main(["compile", str(ROOT / "algorithms" / "msmes.bl"), "-o", str(out)]) == 0
    binary = tmp_path / "main"
    build = subprocess.run(["g++", "-std=c++20", "-O1", "-pthread", "-w", f"-I{EMULATOR}", f"-I{out}", "-x", "c++",
                            str(out / "msmes.cu"), str(ROOT / "examples" / "c_api" / "main.cpp"), "-include",
                            str(out / "msmes.h"), "-o", str(binary)],  # as helpers.emulated.run_driver builds
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(binary), "65", "47", "90"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith("msmes_dgemm 65 x 47 x 90: status 0, error against cublasDgemm "), (
        run.stdout + run.stderr)
    assert run.stdout.endswith(": ok\n")
    # "64" alone ran 1000 x 1000 x 1000, "8x 8 8 extra" 8 x 8 x 8, and 99999999999 wrapped to 1215752191 (a hunt)
    for arguments in (["0", "4", "4"], ["64"], ["8x", "8", "8"], ["8", "8", "8", "extra"], ["99999999999", "2", "2"],
                      ["-3", "4", "4"], ["", "4", "4"]):
        refused = subprocess.run([str(binary), *arguments], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and refused.stderr.startswith("usage:"), (arguments, refused)
    too_large = subprocess.run([str(binary), "2000000000", "2000000000", "2000000000"], capture_output=True, text=True, timeout=60)
    assert too_large.returncode == 1 and "cannot hold" in too_large.stderr, too_large


def test_the_c_api_example_compiles_against_cudas_own_headers(tmp_path):
    """The emulator's headers are stand-ins: the example must also compile against CUDA's and cuBLAS's."""
    import os
    import shutil

    from bilinear.cli import main
    from conftest import cublas_paths

    cuda_include = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
    if shutil.which("g++") is None or cublas_paths() is None or not (cuda_include / "cuda_runtime.h").exists():
        pytest.skip("needs g++ and the CUDA and cuBLAS headers")
    out = tmp_path / "msmes"
    assert main(["compile", str(ROOT / "algorithms" / "msmes.bl"), "--leaf", "fused", "-o", str(out)]) == 0
    build = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", f"-I{out}", f"-I{cuda_include}", f"-I{cublas_paths()[0]}",
                            str(ROOT / "examples" / "c_api" / "main.cpp")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]


_REPOSITORY_PATH = re.compile(r"`((?:algorithms|benchmarks|bilinear|examples|templates|tests)/[^`\s*…{]*)`")


@pytest.mark.parametrize("document", ["README.md", "benchmarks/MEASUREMENTS.md", "benchmarks/NOTES.md"])
def test_every_repository_path_a_document_names_is_there(document):
    """The measurements moved from the README into benchmarks/MEASUREMENTS.md (session 80) name hundreds of files of
    benchmarks/results/; a path that a move or a rename left behind would send a reader nowhere."""
    text = (ROOT / document).read_text(encoding="utf-8")
    named = {match.group(1).rstrip(".,;:") for match in _REPOSITORY_PATH.finditer(text)}
    assert len(named) > 10
    assert sorted(path for path in named if not (ROOT / path).exists()) == []
