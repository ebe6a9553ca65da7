"""Probe (issue 13): a fast row of the dispatch table as ``bilinear.matmul`` runs it, beside the
same product called directly and replayed from its own capture, against ``cupy.matmul``.

The table's FP64 6144³ row (the ozaki leaf) measured 1.19× as a graph when the table was made;
``dispatch_grid.py --check`` measured matmul there at 1.086, 1.089 and 1.148 in session 28.  This times
the four calls interleaved (as ``dispatch_grid.py``: 20 ms batches, 1 s sustained warm-up,
alternating rounds), twice:

    python3 benchmarks/matmul_row_probe.py [N ...]    (default 6144 8192, float64)
"""

from __future__ import annotations

import sys

import cupy as cp
from dispatch_grid import _inputs, _interleaved

import bilinear
from bilinear.dispatch import dispatch
from bilinear.matmul_api import _fast_product


def probe(n: int) -> None:
    A, B, C = _inputs("float64", n, n, n)
    mine, direct = cp.zeros_like(C), cp.zeros_like(C)
    choice = dispatch(n, n, n, "float64")
    if choice.config is None:
        print(f"{n}: matmul keeps cuBLAS here ({choice.reason})")
        return
    product = _fast_product(choice.config)
    for _ in range(3):
        bilinear.matmul(A, B, out=mine)  # the third call on these arrays replays a graph
    graph = product.capture(A, B, direct)
    calls = {"cupy.matmul": lambda: cp.matmul(A, B, out=C), "matmul": lambda: bilinear.matmul(A, B, out=mine),
             "its own capture": graph, "direct call": lambda: product(A, B, out=direct)}
    for rounds in (7, 11):
        ms = _interleaved(calls, rounds)
        print(f"{n} ({choice.config.described}), {rounds} rounds:",
              {name: f"{v:.3f} ms, cupy.matmul / this {ms['cupy.matmul'] / v:.3f}" for name, v in ms.items()}, flush=True)
    graph = None
    product.release_workspace()
    cp.get_default_memory_pool().free_all_blocks()


def main() -> None:
    for n in [int(text) for text in sys.argv[1:]] or [6144, 8192]:
        probe(n)


if __name__ == "__main__":
    main()
