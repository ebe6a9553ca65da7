"""The compiled library's host layer built at -O3, -O1 and -O0 (nvcc's -O is the host code's): its
host time per call and its product's time against cuBLAS, so that a faster build (README, "Using a
compiled scheme from C or C++") is chosen on a measurement.

Each configuration is compiled once and built three times (with -split-compile=0, which changes no
kernel); every build's product is checked against cuBLAS's.  Per size: host µs per call of
``<name>_dgemm_with_workspace`` (five calls back to back after the GPU went idle, median of 15, as
the crossover table's), and the calls' times against cuBLAS (CUDA events, interleaved, median of
--repeat).

    python3 benchmarks/library_host_opt.py --sizes 1024 2048 4096
"""

from __future__ import annotations

import argparse
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cupy
from breadth import _host_us, time_interleaved
from library_breadth import build, library_call

from bilinear.measure import median, relative_error

CONFIGS = [("msmes L2", "msmes", {"levels": 2}), ("winograd L2 bfs2 batched", "winograd",
                                                     {"levels": 2, "breadth": 2, "launch": "batched"})]
OPTIMIZATIONS = ("-O3", "-O1", "-O0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    wanted = [(label, scheme, options, opt) for label, scheme, options in CONFIGS for opt in OPTIMIZATIONS]
    with ThreadPoolExecutor() as pool:  # one nvcc a library: side by side
        built = pool.map(lambda w: build(f"{w[0]} {w[3]}", w[1], w[2], "float64", folder, (w[3], "-split-compile=0")),
                         wanted)
        libraries = {(label, opt): library for (label, _, _, opt), library in zip(wanted, built)}
    for n in args.sizes:
        rng = cupy.random.default_rng(n)
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        reference = cupy.matmul(A, B)
        calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=reference)}
        print(f"n={n}")
        for (label, opt), (loaded, function) in libraries.items():
            workspace = cupy.empty(max(getattr(loaded, f"{function}_workspace_bytes")(n, n, n), 1), dtype=cupy.uint8)
            out = cupy.zeros((n, n))
            call = library_call(loaded, function, A.copy(), B.copy(), out, workspace)  # msmes writes A and B
            call()
            error = relative_error(out, reference, A, B)
            calls[f"{label} {opt}"] = call
            print(f"  {label} {opt}: host {_host_us(call, repeat=15):.1f} us per call, error {error:.1e}")
        times = time_interleaved(calls, args.repeat)
        cublas = median(times["cuBLAS"])
        for label, ms in times.items():
            print(f"  {label:34s} {median(ms):8.3f} ms  ratio {cublas / median(ms):.3f}", flush=True)


if __name__ == "__main__":
    main()
