"""How well the in-place MSMES schedule restores A and B, levels 1-3 (the numbers in the README).

    python benchmarks/restoration.py [--backend numpy|cupy] [-n 1024] [--seeds 3] [--data normal|uniform]
                                     [--levels 1 2 3] [--calls 1]

Prints the worst normwise restoration error max|A_after − A| / max|A| (and for B) and the worst
element-wise error in ulps (large only for elements near zero) over the seeds, after --calls calls
on the same A and B (each call adds its own rounding).  --data uniform draws A and B from [0, 1)
instead of the standard normal distribution.
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
    parser.add_argument("--data", choices=("normal", "uniform"), default="normal")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--calls", type=int, default=1, help="calls on the same A and B before measuring")
    args = parser.parse_args()
    xp = make_backend(args.backend).xp
    for dtype in ("float64", "float32"):
        for levels in args.levels:
            product = bilinear.compile("algorithms/msmes.bl", levels=levels, dtype=dtype, backend=args.backend)
            normwise, ulps = 0.0, 0.0
            for seed in range(args.seeds):
                A, B, C = random_inputs(xp, args.n, args.n, args.n, dtype, seed=seed)
                if args.data == "uniform":  # the same generator's draws, moved into [0, 1)
                    rng = xp.random.default_rng(seed)
                    A, B = (rng.random((args.n, args.n)).astype(dtype) for _ in range(2))
                A0, B0 = A.copy(), B.copy()
                for _ in range(args.calls):
                    product(A, B, out=C)
                for after, before in ((A, A0), (B, B0)):
                    measured = restoration(after, before)
                    normwise, ulps = max(normwise, measured.normwise), max(ulps, measured.max_ulps)
            print(f"msmes {dtype} L{levels} n={args.n} {args.data}, {args.calls} call(s): normwise {normwise:.2e}, "
                  f"max {ulps:.0f} ulp")


if __name__ == "__main__":
    main()
