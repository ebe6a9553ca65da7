"""How long building breadth-first split and merge kernels takes, by their terms (a probe for the cap
``MAX_BREADTH_TERMS``, lifted here): NVRTC through the CuPy backend (compile, then a first call), and
nvcc -O3 on the library's .cu where nvcc is on the path.

    python3 benchmarks/nvrtc_breadth_probe.py OUT_DIR
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import cupy

import bilinear
import bilinear.lower.breadth as breadth
from bilinear.cli import main

CONFIGS = [("winograd", 2), ("strassen", 3), ("grey333", 2), ("strassen", 4), ("winograd", 4)]


def nvrtc_seconds(name: str, levels: int) -> tuple[int, float]:
    start = time.perf_counter()
    product = bilinear.compile(name, levels=levels, breadth=levels, backend="cupy")
    side = (3 if "grey" in name else 2) ** levels * 3
    A = cupy.ones((side, side))
    product(A, A.copy())
    cupy.cuda.Device().synchronize()
    return product.lowered.breadth.terms, time.perf_counter() - start


def nvcc_seconds(name: str, levels: int, out: Path) -> float | None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    folder = out / f"{name}_{levels}"
    main(["compile", name, "--levels", str(levels), "--breadth", str(levels), "-o", str(folder), "--force"])
    include = Path(cupy.__file__).parent.parent / "nvidia" / "cu13" / "include"
    start = time.perf_counter()
    subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90", "-Xcompiler", "-fPIC", f"-I{include}", "-c",
                    str(folder / f"{name}.cu"), "-o", str(folder / "lib.o")], check=True, capture_output=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    out = Path(sys.argv[1])
    breadth.MAX_BREADTH_TERMS = 10**9  # measured past the cap
    for name, levels in CONFIGS:
        terms, nvrtc = nvrtc_seconds(name, levels)
        print(f"{name} {levels} levels, all breadth-first: {terms} terms; NVRTC (compile and first call) {nvrtc:.1f} s",
              flush=True)
    for name, levels in CONFIGS[:4]:
        seconds = nvcc_seconds(name, levels, out)
        print(f"{name} {levels} levels: nvcc -O3 {'not on the path' if seconds is None else f'{seconds:.1f} s'}",
              flush=True)
