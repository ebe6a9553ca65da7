"""Does cuBLAS run MSMES's leaf slower with beta = 0 than with beta = 1?

The from-zero plan sets MSMES's first products with beta = 0 where the old path added them into
a zeroed C with beta = 1.  This times that leaf both ways (C21 = A21·B11 on 8192² views of 16384²
matrices, FP64), alternating after a sustained warm-up, CUDA events, medians; and the whole
product both ways (the from-zero plan, and C zeroed then the schedule with beta = 1).

    python3 benchmarks/beta_probe.py --rounds 15
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from breadth import _event_ms  # noqa: E402
from head_to_head import _sustain  # noqa: E402

from bilinear.measure import median  # noqa: E402
from bilinear.runtime.cupy_backend import CupyBackend  # noqa: E402
import bilinear  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=16384)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    n, h = args.n, args.n // 2
    rng = cupy.random.default_rng(0)
    A, B, C = (rng.standard_normal((n, n)) for _ in range(3))
    backend = CupyBackend()
    a, b, c = A[h:, :h], B[:h, :h], C[h:, :h]
    leaf = {"beta 0": lambda: backend.gemm(a, b, c, 1.0, 0.0), "beta 1": lambda: backend.gemm(a, b, c, 1.0, 1.0)}
    product = bilinear.compile(Path(__file__).resolve().parent.parent / "algorithms" / "msmes.bl", levels=1)

    def zero_then_add():
        C.fill(0)
        product(A, B, out=C, beta=1.0)

    whole = {"from zero": lambda: product(A, B, out=C), "zero, then add": zero_then_add,
             "cuBLAS": lambda: cupy.matmul(A, B, out=C)}
    for title, calls in (("leaf 8192^3 on views", leaf), ("msmes L1 16384", whole)):
        _sustain(list(calls.values()))
        names, samples = list(calls), {name: [] for name in calls}
        for round_ in range(args.rounds):
            for name in names[round_ % len(names):] + names[: round_ % len(names)]:
                samples[name].append(_event_ms(calls[name]))
        print(title + ": " + ", ".join(f"{name} {median(v):.3f} ms (min {min(v):.3f})" for name, v in samples.items()),
              flush=True)


if __name__ == "__main__":
    main()
