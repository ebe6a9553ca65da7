"""The in-place rows of bilinear/data/dispatch.json: MSMES against cuBLAS, for ``matmul(inplace=True)``.

    python3 benchmarks/inplace_table.py --table bilinear/data/dispatch.json   # measure, write the rows
    python3 benchmarks/inplace_table.py --check --out results/                # matmul(inplace=True) vs cuBLAS

--table times MSMES (in place: no workspace, cuBLAS leaves; A and B overwritten and restored up to
rounding) at 1, 2 and 3 levels against cuBLAS at every grid shape of benchmarks/dispatch_grid.py
that is not tall-and-skinny, called as ``matmul(inplace=True)`` calls it (directly, not as a
graph), interleaved after a sustained warm-up (dispatch_grid's timer), and stores each shape's
fastest level count with its speedup.  ``matmul(inplace=True)`` runs MSMES only where the nearest
row measured at least the table's ``min_speedup``; elsewhere it multiplies as without ``inplace``
(before, it ran MSMES L1 wherever a fast scheme had won, and MSMES L1 measured 0.944 at FP64 8192).
--check (a fresh process, after the table is written) times ``bilinear.matmul(..., inplace=True)``
against ``cupy.matmul`` at the same shapes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cupy

import bilinear
from bilinear.dispatch import family_of, in_place_levels, load_table, parse_table
from bilinear.measure import error_bound, relative_error

from dispatch_grid import GRID, TABLE_ONLY, _inputs, _interleaved

ROOT = Path(__file__).resolve().parent.parent
LEVELS = (1, 2, 3)
MSMES_GROWTH = 1.9  # Strassen's error growth per level over the classical product's (bilinear run's bound)


def _shapes(table) -> list[tuple[str, int, int, int]]:
    return [(dtype, m, k, n) for dtype, m, k, n in GRID + TABLE_ONLY
            if family_of(m, k, n, table) is None and min(m, k, n) >= 1024]


def _measured_row(dtype: str, m: int, k: int, n: int, products: dict, repeat: int) -> dict:
    """Every level count timed against cuBLAS; one whose product is outside the error bound never wins."""
    A, B, C = _inputs(dtype, m, k, n)
    out = cupy.zeros_like(C)
    reference = cupy.matmul(A, B)
    calls, speedups = {"cuBLAS": lambda: cupy.matmul(A, B, out=C)}, {}
    for levels, product in products.items():
        product(A, B, out=out)
        if relative_error(out, reference, A, B) <= error_bound(dtype, k, MSMES_GROWTH, levels):
            calls[f"L{levels}"] = lambda product=product: product(A, B, out=out)
    ms = _interleaved(calls, repeat)
    speedups = {label: round(ms["cuBLAS"] / time_ms, 4) for label, time_ms in ms.items() if label != "cuBLAS"}
    best = max(speedups, key=speedups.get)
    return {"dtype": dtype, "m": m, "k": k, "n": n, "levels": int(best[1:]), "speedup": speedups[best],
            "candidates": speedups}


def measure_table(path: Path, repeat: int) -> None:
    data = json.loads(path.read_text())
    table = parse_table(data)
    rows, compiled = [], {}
    for dtype, m, k, n in _shapes(table):
        if dtype not in compiled:
            compiled[dtype] = {levels: bilinear.compile(ROOT / "algorithms" / "msmes.bl", dtype=dtype, levels=levels)
                               for levels in LEVELS}
        rows.append(_measured_row(dtype, m, k, n, compiled[dtype], repeat))
        print(f"{dtype} {m}x{k}x{n}: best L{rows[-1]['levels']} {rows[-1]['speedup']:.3f}x  {rows[-1]['candidates']}",
              flush=True)
        cupy.get_default_memory_pool().free_all_blocks()
    data["inplace"] = {"rows": rows, "timed_as": "direct calls, as matmul(inplace=True) makes them",
                       "generated_by": f"python benchmarks/inplace_table.py --table {path}",
                       "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    path.write_text(json.dumps(data, indent=1) + "\n")


def check(repeat: int) -> list[dict]:
    load_table.cache_clear()
    results = []
    for dtype, m, k, n in _shapes(load_table()):
        A, B, C = _inputs(dtype, m, k, n)
        C2 = cupy.zeros_like(C)
        levels = in_place_levels(m, k, n, dtype)
        bilinear.matmul(A, B, out=C2, inplace=True)  # compiles what it chose
        ms = _interleaved({"cuBLAS": lambda: cupy.matmul(A, B, out=C),
                           "matmul": lambda: bilinear.matmul(A, B, out=C2, inplace=True)}, repeat)
        ratio = ms["cuBLAS"] / ms["matmul"]
        choice = f"msmes L{levels}" if levels else "as without inplace"
        results.append({"dtype": dtype, "m": m, "k": k, "n": n, "choice": choice, "ratio": ratio,
                        "cublas_ms": ms["cuBLAS"], "matmul_ms": ms["matmul"]})
        print(f"{dtype} {m:>6}x{k:>6}x{n:>6}  {choice:<20} ratio {ratio:6.3f}  "
              f"(cuBLAS {ms['cuBLAS']:8.3f} ms, matmul {ms['matmul']:8.3f} ms)", flush=True)
        A = B = C = C2 = None
        cupy.get_default_memory_pool().free_all_blocks()
    print(f"worst ratio {min(r['ratio'] for r in results):.3f}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, help="measure the in-place rows into this dispatch table")
    parser.add_argument("--check", action="store_true", help="time matmul(inplace=True) against cuBLAS")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.table:
        measure_table(args.table, args.repeat)
    if args.check:
        results = check(args.repeat)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "inplace_check.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
