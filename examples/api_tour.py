"""A tour of the Python API on a real product.

Runs on the GPU with CuPy when one is present, otherwise on the CPU with the
NumPy backend (the same launch plan, kernel by kernel):

    python examples/api_tour.py [--n 1000] [--backend numpy|cupy]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import bilinear

ALGORITHMS = Path(__file__).resolve().parents[1] / "algorithms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="the matrices' size (at least 1)")
    parser.add_argument("--backend", choices=("cupy", "numpy"), default=None)
    args = parser.parse_args()
    if args.n < 1:
        parser.error(f"--n must be at least 1, not {args.n}")

    # 1. Load and prove: MSMES is an in-place schedule of Strassen's algorithm.
    program = bilinear.load(ALGORITHMS / "msmes.bl")
    report = bilinear.verify(program)
    print(f"verified: {report.ok} (schedule {program.main.name} of algorithm {program.main.algorithm})")

    # 2. Compile for two levels of recursion with library GEMM leaves.
    try:
        msmes = bilinear.compile(program, dtype="float64", levels=2, backend=args.backend)
    except ValueError as error:  # --backend cupy on a machine without a GPU
        parser.exit(1, f"api_tour.py: {error}\n")
    print(msmes, "- workspace bytes at this size:", msmes.workspace_bytes(args.n, args.n, args.n))

    # 3. Multiply: C = 2·A@B + C, with A and B restored afterwards (up to rounding).
    xp = msmes.backend.xp
    rng = np.random.default_rng(0)
    A = xp.asarray(rng.standard_normal((args.n, args.n)))
    B = xp.asarray(rng.standard_normal((args.n, args.n)))
    C = xp.asarray(rng.standard_normal((args.n, args.n)))
    expected = 2.0 * (A @ B) + C
    A_before = A.copy()
    msmes(A, B, out=C, alpha=2.0, beta=1.0)
    print("max |C - expected| =", float(xp.abs(C - expected).max()))
    print("max |A - A_before| =", float(xp.abs(A - A_before).max()), "(restored up to rounding)")

    # 4. Any shape: odd sizes are peeled, not padded; a rectangular scheme runs as well.
    grey234 = bilinear.compile(ALGORITHMS / "grey234.bl", levels=1, backend=args.backend)
    A, B = xp.asarray(rng.standard_normal((101, 77))), xp.asarray(rng.standard_normal((77, 203)))
    print("<2,3,4;20> on 101x77x203: max error", float(xp.abs(grey234(A, B) - A @ B).max()))

    # 5. Bad input is a ValueError that says what to change.
    try:
        msmes(A.astype(np.float32), B)
    except ValueError as error:
        print("ValueError:", error)


if __name__ == "__main__":
    main()
