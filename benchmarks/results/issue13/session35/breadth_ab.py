"""A/B: winograd L2 with 2 breadth-first levels (serial, no graph), interleaved with cuBLAS, median of 21.

    PYTHONPATH=OLD_TREE python3 breadth_ab.py old1; PYTHONPATH=$PWD python3 breadth_ab.py new1
"""

import sys
from pathlib import Path

import cupy as cp
import numpy as np

# breadth.py's timer; bilinear itself comes from PYTHONPATH (the old or the new tree), so the
# repository root is not put first
sys.path.append(str(Path(__file__).resolve().parents[3]))
from breadth import _event_ms as elapsed_ms  # noqa: E402

import bilinear  # noqa: E402


def main(label: str) -> None:
    for n in (4096, 4100, 8192):
        product = bilinear.compile("winograd", levels=2, breadth=2, backend="cupy")
        rng = cp.random.default_rng(1)
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        out = cp.empty((n, n))
        for _ in range(3):
            product(A, B, out=out)
            cp.matmul(A, B)
        ours, theirs = [], []
        for _ in range(21):
            ours.append(elapsed_ms(lambda: product(A, B, out=out)))
            theirs.append(elapsed_ms(lambda: cp.matmul(A, B)))
        o, t = np.median(ours), np.median(theirs)
        print(f"{label} n={n}: ours {o:.3f} ms, cuBLAS {t:.3f} ms, ratio {t / o:.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
