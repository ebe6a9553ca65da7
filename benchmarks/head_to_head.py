"""One configuration against cuBLAS at a time, in alternating pairs: the check on a best-of table.

`breadth.py` times every configuration of a size in one round-robin, so each cuBLAS sample
follows some other configuration, and which one it follows moves an FP64 GEMM's clock at the
700 W cap.  Here each configuration meets cuBLAS alone: a sustained warm-up of both, then
--repeat rounds of (cuBLAS, ours) and (ours, cuBLAS) alternately (ABBA, so neither side always
runs on the other's heat), CUDA events, medians; ratio = cuBLAS time / ours.  `matmul` is
`bilinear.matmul` as a user calls it (its dispatch table's choice).  Each product is checked
against cuBLAS's before it is timed.

    python3 benchmarks/head_to_head.py --dtype float64 -n 16384 --configs "winograd L2 bfs2 batched" matmul --graphs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from breadth import CONFIGS, ROOT, _event_ms  # noqa: E402  (the same labels and configurations)

import bilinear  # noqa: E402
from bilinear.measure import error_bound, median, relative_error  # noqa: E402

SUSTAIN_SECONDS = 1.0  # FP64 GEMMs reach the power cap's clocks within 0.5 s (NOTES.md)


def _sustain(calls) -> None:
    end = time.perf_counter() + SUSTAIN_SECONDS
    while time.perf_counter() < end:
        for call in calls:
            call()
        cupy.cuda.get_current_stream().synchronize()


def _pair(ours, theirs, repeat: int) -> tuple[float, float]:
    _sustain([theirs, ours])
    mine, library = [], []
    for round_ in range(repeat):
        order = ((theirs, library), (ours, mine)) if round_ % 2 == 0 else ((ours, mine), (theirs, library))
        for call, samples in order:
            samples.append(_event_ms(call))
    return median(library), median(mine)


def _product(label: str, dtype: str):
    if label == "matmul":
        return lambda A, B, out: bilinear.matmul(A, B, out=out), None
    _, scheme, levels, breadth, launch = next(c for c in CONFIGS if c[0] == label)
    product = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", levels=levels, breadth=breadth, dtype=dtype,
                               launch=launch)
    return (lambda A, B, out: product(A, B, out=out)), product


def run(dtype: str, n: int, labels: list[str], repeat: int, graphs: bool) -> list[dict]:
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n), dtype=dtype), rng.standard_normal((n, n), dtype=dtype)
    reference = cupy.matmul(A, B)
    theirs = lambda: cupy.matmul(A, B, out=reference)  # noqa: E731
    out = cupy.empty_like(reference)
    rows = []
    for label in labels:
        call, product = _product(label, dtype)
        out.fill(0)
        call(A, B, out)
        error = relative_error(out, reference, A, B)
        # matmul's levels are its table's choice: 3, the deepest configuration it has, bounds them
        bound = error_bound(dtype, n, 2.3, product.lowered.options.levels if product else 3)
        variants = [(label, lambda: call(A, B, out))]
        if graphs and product is not None:
            variants.append((f"{label} graph", product.capture(A, B, out)))
        for name, ours in variants:
            library_ms, ours_ms = _pair(ours, theirs, repeat)
            rows.append({"dtype": dtype, "n": n, "config": name, "cublas_ms": library_ms, "ours_ms": ours_ms,
                         "ratio": library_ms / ours_ms, "error": error, "bound": bound, "correct": error <= bound})
            print(f"{dtype} n={n:>5} {name:<34} ours {ours_ms:9.3f} ms  cuBLAS {library_ms:9.3f} ms  "
                  f"ratio {library_ms / ours_ms:.3f}  err {error:.1e}{'' if error <= bound else ' WRONG'}", flush=True)
        if product is not None:
            product.release_workspace()
        variants = None  # the graph holds the product's workspace: let it go before the next one
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("-n", type=int, nargs="+", default=[16384])
    parser.add_argument("--configs", nargs="+", required=True, help="labels of breadth.py's CONFIGS, or matmul")
    parser.add_argument("--repeat", type=int, default=10, help="rounds per configuration (half of each order)")
    parser.add_argument("--graphs", action="store_true", help="also time each product replayed as a CUDA graph")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    unknown = [label for label in args.configs if label != "matmul" and label not in {c[0] for c in CONFIGS}]
    if unknown:
        parser.error(f"unknown configurations {unknown}; known: matmul, {', '.join(c[0] for c in CONFIGS)}")
    rows = [row for n in args.n for row in run(args.dtype, n, args.configs, args.repeat, args.graphs)]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
