"""The ozaki leaf under a workspace limit (tiles of C) against cuBLAS DGEMM, on the GPU.

A limit that leaves no room for all of C at once makes the leaf run in tiles of C that fit (bands
of rows, B's residues whole): each tile a product of its own, the same C bit for bit, for B's
residues formed again per band.  For each n × limit: the product compiled with ``leaf="ozaki"``,
``levels=0`` and that limit, and cuBLAS DGEMM (``cupy.matmul``) into the same C, interleaved in one
process (CUDA events after a warm-up, median of --repeat); ratio = DGEMM time / ours; the tile
and the workspace; the error on a --sample × --sample block of C against an exact reference
(benchmarks/ozaki.py's), beside DGEMM's; and whether C equals the product with all of C at once
where that fits (n = 16384).

    python3 benchmarks/ozaki_limit.py --out results/ozaki-limit          # 16384 and 32768, ~2 min

FP64 32768³ needs 96 GiB of workspace with all of C at once, more than an H100 holds; under a
50 GiB limit it runs in three bands of rows (42.7 GiB) beside its 24 GiB of A, B and C.  Session
38 measured moduli in groups first (benchmarks/results/issue13/session38/ozaki_groups.txt): the
same C, slower (0.802× DGEMM at 16384 with 2 moduli per group).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cupy as cp
import numpy as np

import bilinear
from bilinear.measure import median, time_interleaved
from bilinear.runtime import ozaki as scheme

from ozaki import errors, exact_sample  # the benchmark beside this one

GIB = 2**30
CONFIGS = {16384: (None, 16 * GIB, 12 * GIB), 32768: (50 * GIB,)}


def measure(n: int, limit: int | None, A, B, C, sample, repeat: int, at_once) -> dict:
    product = bilinear.compile("strassen", leaf="ozaki", levels=0, dtype="float64", workspace_limit=limit)
    count = scheme.moduli_for(scheme.default_bits(np.float64), n)
    rows, cols = scheme.tile_for_budget(n, n, n, count, limit)
    ours, dgemm = time_interleaved([lambda: product(A, B, out=C), lambda: cp.matmul(A, B, out=C)], cp, repeat=repeat)
    row = {"n": n, "limit_bytes": limit, "moduli": count, "tile": [rows, cols],
           "workspace_bytes": product.workspace_bytes(n, n, n), "ours_ms": 1e3 * median(ours),
           "dgemm_ms": 1e3 * median(dgemm), "ratio": median(dgemm) / median(ours)}
    row["dgemm_error"] = errors(C, *sample)  # C holds DGEMM's product: the last call of the rounds
    product(A, B, out=C)
    row["error"] = errors(C, *sample)
    if at_once is not None:
        row["equals_at_once"] = bool(cp.array_equal(C, at_once))
    return row  # the product and its workspace go with it


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=sorted(CONFIGS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sample", type=int, default=32)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        rng = cp.random.default_rng(n)
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        C = cp.empty((n, n))
        picks = np.random.default_rng(n)
        picked_rows, picked_cols = (sorted(picks.choice(n, args.sample, replace=False)) for _ in range(2))
        sample = (picked_rows, picked_cols, *exact_sample(A, B, picked_rows, picked_cols))
        at_once = None
        for limit in CONFIGS.get(n, (None,)):
            row = measure(n, limit, A, B, C, sample, args.repeat, at_once)
            cp.get_default_memory_pool().free_all_blocks()
            if limit is None:
                at_once = C.copy()
            rows.append(row)
            print(f"n={n} limit={'none' if limit is None else f'{limit / GIB:.0f} GiB'}: tiles of {row['tile'][0]}x{row['tile'][1]} "
                  f"({row['moduli']} moduli), workspace {row['workspace_bytes'] / GIB:.2f} GiB, ours "
                  f"{row['ours_ms']:.1f} ms, DGEMM {row['dgemm_ms']:.1f} ms, ratio {row['ratio']:.3f}, error "
                  f"{row['error']['max_rel_AB']:.2e} (DGEMM {row['dgemm_error']['max_rel_AB']:.2e})"
                  + (f", equals C at once: {row['equals_at_once']}" if "equals_at_once" in row else ""), flush=True)
        del A, B, C, at_once
        cp.get_default_memory_pool().free_all_blocks()
    (args.out / "ozaki_limit.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
