"""Do msmes2's 4096³ leaves lose time to wave tails, and would concurrent leaves win it back? (a probe)

msmes2 at FP64 16384 runs 49 DGEMMs of 4096³ on views of leading dimension 16384; with its passes
left out they took 129.9 ms (session 51), 2.65 ms each, where cuBLAS's 16384³ takes 164.7 ms, 2.57 ms
per 4096³ of work.  This times, interleaved after a sustained warm-up, the one 16384³ GEMM and 49
leaves of 4096³ issued as: one after another on views (``views serial``), in groups of 2, 4 or 7 on
concurrent streams (``views streams G``, the backend's fork and join, as a product phase issues
them), one after another on contiguous 4096² arrays (``contiguous``), and as strided-batched calls
of 7 or 49 contiguous leaves each (``batched 7``, ``batched 49``: one library call fills the SMs
with several leaves' tiles, which no in-place schedule's dependent leaves could do).  Each line prints the
median and its time per 4096³ of work beside the big GEMM's.

    python3 benchmarks/leaf_tails.py -n 16384 --repeat 9
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from breadth import time_rotated  # noqa: E402

from bilinear.measure import median  # noqa: E402
from bilinear.runtime.cupy_backend import CupyBackend  # noqa: E402

LEAVES = 49  # msmes2's products: 7 · 7


def _blocks(matrix, parts: int) -> list:
    size = matrix.shape[0] // parts
    return [matrix[i * size:(i + 1) * size, j * size:(j + 1) * size] for i in range(parts) for j in range(parts)]


def _leaf_calls(backend, a_blocks, b_blocks, c_blocks) -> list:
    """49 GEMMs C_t += A_i·B_j; the 16 C blocks in turn, so any 16 consecutive ones write apart."""
    def call(index: int):
        a, b, c = a_blocks[index % len(a_blocks)], b_blocks[(3 * index) % len(b_blocks)], c_blocks[index % len(c_blocks)]
        return lambda: backend.gemm(a, b, c, 1.0, 1.0)
    return [call(index) for index in range(LEAVES)]


def _grouped(backend, calls: list, group: int):
    if group == 1:
        return lambda: [call() for call in calls]
    return lambda: [backend.concurrently(calls[start:start + group]) for start in range(0, len(calls), group)]


def _batched(backend, rng, size: int, batch: int):
    """49 leaves as strided-batched calls of ``batch`` contiguous ``size``² leaves each (C = A·B)."""
    a, b, c = (rng.standard_normal((batch, size, size)) for _ in range(3))
    return lambda: [backend.gemm_batched(a, b, c) for _ in range(LEAVES // batch)]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=16384)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    n, parts = args.n, 4
    rng = cupy.random.default_rng(0)
    A, B, C = (rng.standard_normal((n, n)) for _ in range(3))
    backend = CupyBackend()
    views = _leaf_calls(backend, _blocks(A, parts), _blocks(B, parts), _blocks(C, parts))
    size = n // parts
    alone = [cupy.ascontiguousarray(block) for block in (A[:size, :size], B[:size, :size])]
    out = [rng.standard_normal((size, size)) for _ in range(parts * parts)]
    contiguous = _leaf_calls(backend, [alone[0]], [alone[1]], out)
    calls = {f"cuBLAS {n}³": lambda: backend.gemm(A, B, C, 1.0, 1.0),
             "views serial": _grouped(backend, views, 1),
             **{f"views streams {group}": _grouped(backend, views, group) for group in (2, 4, 7)},
             "contiguous": _grouped(backend, contiguous, 1),
             **{f"batched {batch}": _batched(backend, rng, size, batch) for batch in (7, 49)}}
    times = {label: median(samples) for label, samples in time_rotated(calls, args.repeat).items()}
    whole = times[f"cuBLAS {n}³"] / parts ** 3
    for label, ms in times.items():
        per = ms / (parts ** 3 if label.startswith("cuBLAS") else LEAVES)
        print(f"{label:18} {ms:9.2f} ms  {per:6.3f} ms per {size}³  ({per / whole:.3f} of the big GEMM's)")
    if args.json:
        args.json.write_text(json.dumps(times, indent=1))


if __name__ == "__main__":
    main()
