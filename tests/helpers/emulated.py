"""Build a compiled library's host layer with g++ against the CPU stand-ins for the CUDA runtime and
cuBLAS (tests/host_emulator), with a small C++ ``main`` that prints what the calls return."""

from __future__ import annotations

import subprocess
from pathlib import Path

EMULATOR = Path(__file__).resolve().parent.parent / "host_emulator"


def statuses(out: Path, name: str, calls: list[str], prelude: str = "") -> list[int]:
    """The status each C++ call expression in ``calls`` returns (``handle``, and device buffers
    ``A``, ``B`` and ``C`` of 64×64 doubles, are in scope, then what ``prelude`` declares), for the
    library ``name`` in ``out``."""
    main = out / "statuses.cpp"
    main.write_text(
        "#include <algorithm>\n#include <cmath>\n#include <cstdio>\nint main() {\n  cublasHandle_t handle;\n  cublasCreate(&handle);\n  double *A, *B, *C;\n"
        "  cudaMalloc(&A, 64 * 64 * sizeof(double)), cudaMalloc(&B, 64 * 64 * sizeof(double)), "
        "cudaMalloc(&C, 64 * 64 * sizeof(double));\n" + prelude
        + "".join(f'  std::printf("%d\\n", int({call}));\n' for call in calls) + "}\n"
    )
    binary = out / "statuses"
    build = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-pthread", "-w", f"-I{EMULATOR}", f"-I{out}", "-x", "c++", str(out / f"{name}.cu"),
         "-x", "c++", str(main), "-include", str(out / f"{name}.h"), "-o", str(binary)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return [int(word) for word in subprocess.run([str(binary)], capture_output=True, text=True, timeout=120).stdout.split()]


DRIVER = EMULATOR.parent / "host_driver" / "driver.cpp"


def run_driver(out: Path, name: str, arguments: list[str], flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """The library ``name`` in ``out`` built with tests/host_driver/driver.cpp (which checks each
    m,n,k size against a reference: error bound, padding, restoration), and g++ ``flags`` (a
    sanitizer), and run with ``arguments``."""
    binary = out / "emulated"
    build = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-pthread", "-w", *flags, f"-I{EMULATOR}", f"-I{out}", "-x", "c++", str(out / f"{name}.cu"),
         "-x", "c++", str(DRIVER), f"-DNAME={name}", "-include", str(out / f"{name}.h"), "-o", str(binary)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return subprocess.run([str(binary), *arguments], capture_output=True, text=True, timeout=300)
