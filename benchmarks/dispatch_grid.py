"""The fast-scheme rows of bilinear/data/dispatch.json, and bilinear.matmul against cuBLAS on a 30-shape grid.

    python3 benchmarks/dispatch_grid.py --table bilinear/data/dispatch.json   # measure, write the rows
    python3 benchmarks/dispatch_grid.py --check --out results/                # matmul vs cuBLAS

--table times every non-perturbing candidate configuration (A and B are never
written) against cuBLAS at each grid shape that is not tall-and-skinny and
stores the best with its speedup; tall-and-skinny shapes keep the TSM2 rows
benchmarks/tsm2.py measured.  --check (run it in a fresh process, after the
table is written) times ``bilinear.matmul`` against ``cupy.matmul`` at every
shape, interleaved: CUDA events around back-to-back calls after warm-up
(enough calls for ≥ 20 ms per timing, so host time hides behind the GPU's as it
does in any pipeline), median of --repeat, random normal data; ratio = cuBLAS
time / matmul's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cupy

import bilinear
from bilinear.dispatch import _committed_choice, dispatch, family_of, load_table, parse_table
from bilinear.measure import median
from bilinear.runtime import prepared_calls

ROOT = Path(__file__).resolve().parent.parent
GRID = [
    # square
    *[("float64", n, n, n) for n in (2048, 3072, 4096, 6144, 8192, 10240, 12288, 16384)],
    *[("float32", n, n, n) for n in (4096, 8192, 16384)],
    # rectangular
    ("float64", 16384, 8192, 8192), ("float64", 8192, 16384, 8192), ("float64", 8192, 8192, 16384),
    ("float64", 16384, 16384, 8192), ("float64", 4096, 16384, 4096), ("float64", 12288, 12288, 6144),
    ("float64", 10000, 9000, 11000), ("float64", 16384, 4096, 16384),
    ("float32", 16384, 8192, 16384), ("float32", 8192, 8192, 16384),
    # skinny
    ("float64", 100000, 16, 16), ("float64", 16384, 16384, 4), ("float64", 32768, 32768, 8),
    ("float64", 1000000, 8, 8), ("float64", 65536, 1024, 64),
    ("float32", 16384, 16384, 2), ("float32", 1000000, 4, 4), ("float32", 32768, 16384, 16), ("float32", 4096, 4096, 64),
]
# Non-perturbing candidates (scheme, levels, breadth, launch): A and B are read only.
CANDIDATES = [("winograd", 1, 1, "streams"), ("winograd", 2, 2, "streams"), ("winograd", 2, 2, "batched"),
              ("rsmm", 1, 0, "serial"), ("rsmm", 2, 1, "streams"), ("winograd", 3, 2, "streams")]


def _timed(call, target_ms: float = 20.0) -> callable:
    """A timing of back-to-back calls: as many as make ``target_ms``, per call."""
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    call()
    stop.record()
    stop.synchronize()
    count = max(1, min(200, int(target_ms / max(cupy.cuda.get_elapsed_time(start, stop), 1e-3))))

    def timing() -> float:
        start.record()
        for _ in range(count):
            call()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / count

    return timing


def _inputs(dtype: str, m: int, k: int, n: int):
    rng = cupy.random.default_rng(m + k + n)
    return rng.standard_normal((m, k), dtype=dtype), rng.standard_normal((k, n), dtype=dtype), cupy.zeros((m, n), dtype)


def _interleaved(calls: dict, repeat: int) -> dict[str, float]:
    timings = {label: _timed(call) for label, call in calls.items()}
    for timing in timings.values():
        timing()
    samples = {label: [] for label in calls}
    for _ in range(repeat):
        for label, timing in timings.items():
            samples[label].append(timing())
    return {label: median(values) for label, values in samples.items()}


def measure_table(path: Path, repeat: int) -> None:
    data = json.loads(path.read_text())
    table = parse_table(data)
    rows = []
    for dtype, m, k, n in GRID:
        if family_of(m, k, n, table) is not None or min(m, k, n) < 1024:
            continue
        A, B, C = _inputs(dtype, m, k, n)
        calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=C)}
        products = {}
        out = cupy.zeros_like(C)  # every candidate overwrites it (beta = 0): one output for all
        for candidate in CANDIDATES:
            scheme, levels, breadth, launch = candidate
            product = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", dtype=dtype, levels=levels, breadth=breadth,
                                       launch=launch)
            products[candidate] = product
            calls[candidate] = (lambda p: lambda: p(A, B, out=out))(product)
        ms = _interleaved(calls, repeat)
        best = min(products, key=lambda key: ms[key])
        speedup = ms["cuBLAS"] / ms[best]
        rows.append({"dtype": dtype, "m": m, "k": k, "n": n, "scheme": best[0], "levels": best[1], "breadth": best[2],
                     "launch": best[3], "speedup": round(speedup, 4),
                     "workspace_bytes": products[best].workspace_bytes(m, k, n),
                     "candidates": {f"{s} L{lv} b{b} {la}": round(ms["cuBLAS"] / ms[(s, lv, b, la)], 4)
                                    for s, lv, b, la in products}})
        print(f"{dtype} {m}x{k}x{n}: best {best} {speedup:.3f}x  {rows[-1]['candidates']}", flush=True)
        A = B = C = out = calls = products = None  # the next shape's arrays need the room
        cupy.get_default_memory_pool().free_all_blocks()
    data["recursive"] = {
        "min_dim": None, "min_speedup": 1.05, "rows": rows,
        "generated_by": "python benchmarks/dispatch_grid.py --table bilinear/data/dispatch.json",
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    path.write_text(json.dumps(data, indent=1) + "\n")


def check(repeat: int) -> list[dict]:
    load_table.cache_clear()
    _committed_choice.cache_clear()
    prepared_calls.forget()  # decisions of the table just written, not of the one before
    results = []
    for dtype, m, k, n in GRID:
        A, B, C = _inputs(dtype, m, k, n)
        C2 = cupy.zeros_like(C)
        choice = dispatch(m, k, n, dtype)
        bilinear.matmul(A, B, out=C2)  # compiles what it chose
        reference = cupy.matmul(A, B)
        error = float(cupy.abs(C2 - reference).max()) / max(float(cupy.abs(reference).max()), 1e-300)
        reference = None
        ms = _interleaved({"cuBLAS": lambda: cupy.matmul(A, B, out=C), "matmul": lambda: bilinear.matmul(A, B, out=C2)},
                          repeat)
        ratio = ms["cuBLAS"] / ms["matmul"]
        results.append({"dtype": dtype, "m": m, "k": k, "n": n, "choice": choice.kernel, "reason": choice.reason,
                        "cublas_ms": ms["cuBLAS"], "matmul_ms": ms["matmul"], "ratio": ratio, "max_diff": error})
        print(f"{dtype} {m:>7}x{k:>6}x{n:>6}  {choice.kernel:<9} ratio {ratio:6.3f}  "
              f"(cuBLAS {ms['cuBLAS']:8.3f} ms, matmul {ms['matmul']:8.3f} ms)  {choice.reason}", flush=True)
        A = B = C = C2 = None
        cupy.get_default_memory_pool().free_all_blocks()
    worst = min(r["ratio"] for r in results)
    chosen = [r["ratio"] for r in results if r["choice"] != "cublas"]
    print(f"worst ratio {worst:.3f}; where a faster kernel was chosen: min {min(chosen, default=0):.3f} over {len(chosen)} shapes")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, help="measure the fast-scheme rows into this dispatch table")
    parser.add_argument("--check", action="store_true", help="time bilinear.matmul against cuBLAS on the grid")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.table:
        measure_table(args.table, args.repeat)
    if args.check:
        results = check(args.repeat)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "matmul_grid.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
