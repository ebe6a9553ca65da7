"""What ``levels="auto"`` chooses on the CPU (the NumPy backend), beside the measured times of NumPy's
own product and of one and two levels with cuBLAS-style (library) and fused leaves, interleaved in
one process: median of --repeat, random normal data.

    python3 benchmarks/cpu_auto.py [--scheme strassen] [-n 256 512 1024 2048] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import bilinear
from bilinear.measure import median, random_inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scheme", default="strassen")
    parser.add_argument("-n", type=int, nargs="+", default=[256, 512, 1024, 2048])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    auto = bilinear.compile(args.scheme, levels="auto", leaf="auto", backend="numpy")
    print(f"ceilings: {auto.ceilings}")
    for n in args.n:
        A, B, C = random_inputs(np, n, n, n, "float64")
        calls = {"numpy": lambda: np.matmul(A, B, out=C)}
        for levels in (1, 2):
            for leaf in ("cublas", "fused"):
                product = bilinear.compile(args.scheme, levels=levels, leaf=leaf, backend="numpy")
                calls[f"L{levels} {leaf}"] = (lambda p: lambda: p(A, B, out=C))(product)
        for call in calls.values():
            call()
        samples: dict[str, list[float]] = {label: [] for label in calls}
        for _ in range(args.repeat):
            for label, call in calls.items():
                begin = time.perf_counter()
                call()
                samples[label].append(time.perf_counter() - begin)
        levels, leaf, _ = auto.choose(n, n, n)
        times = ", ".join(f"{label} {1e3 * median(s):.2f}" for label, s in samples.items())
        print(f"n={n}: auto chooses {levels} level(s), {leaf} leaves; measured ms: {times}", flush=True)


if __name__ == "__main__":
    main()
