"""How well the in-place MSMES schedule restores A and B, levels 1-3 (the numbers in the README).

    python benchmarks/restoration.py [--backend numpy|cupy] [-n 1024] [--seeds 3]

Prints the worst normwise restoration error max|A_after − A| / max|A| (and for B) and the worst
element-wise error in ulps (large only for elements near zero) over the seeds.
"""

from __future__ import annotations

import argparse

import bilinear
from bilinear.measure import random_inputs, restoration
from bilinear.runtime.compiled import make_backend


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("numpy", "cupy"), default=None)
    parser.add_argument("-n", type=int, default=1024)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    xp = make_backend(args.backend).xp
    for dtype in ("float64", "float32"):
        for levels in (1, 2, 3):
            product = bilinear.compile("algorithms/msmes.bl", levels=levels, dtype=dtype, backend=args.backend)
            normwise, ulps = 0.0, 0.0
            for seed in range(args.seeds):
                A, B, C = random_inputs(xp, args.n, args.n, args.n, dtype, seed=seed)
                A0, B0 = A.copy(), B.copy()
                product(A, B, out=C)
                for after, before in ((A, A0), (B, B0)):
                    measured = restoration(after, before)
                    normwise, ulps = max(normwise, measured.normwise), max(ulps, measured.max_ulps)
            print(f"msmes {dtype} L{levels} n={args.n}: normwise {normwise:.2e}, max {ulps:.0f} ulp")


if __name__ == "__main__":
    main()
