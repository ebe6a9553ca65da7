"""The fast-scheme rows of bilinear/data/dispatch.json, and bilinear.matmul against cuBLAS on a 30-shape grid.

    python3 benchmarks/dispatch_grid.py --table bilinear/data/dispatch.json   # measure, write the rows
    python3 benchmarks/dispatch_grid.py --check --out results/                # matmul vs cuBLAS
    python3 benchmarks/dispatch_grid.py --check --record                      # ... on another GPU: does the table hold?

--table times every non-perturbing candidate configuration (A and B are never
written) against cuBLAS at each grid shape that is not tall-and-skinny and
stores the best with its speedup (the first round's three fastest, and the fastest
with native leaves, are timed again, and the second round decides); where the best
has an emulated leaf (ozaki), the best with native leaves is stored as a second row of
the shape, which matmul runs where the emulated row's speedup is below the higher bar
an emulated leaf must clear; tall-and-skinny shapes keep the TSM2 rows
benchmarks/tsm2.py measured.  Candidates are timed as the CUDA graphs
bilinear.matmul replays from a product's third call on the same arrays
(bilinear.runtime.graph_cache), since that is what a user's repeated call runs;
a row is used where its speedup reaches --min-speedup.  --check (run it in a
fresh process, after the table is written) times ``bilinear.matmul`` against
``cupy.matmul`` at every shape, interleaved: CUDA events around back-to-back
calls after warm-up (enough calls for ≥ 20 ms per timing, so host time hides
behind the GPU's as it does in any pipeline), median of --repeat, random normal
data; ratio = cuBLAS time / matmul's, with the spread of the rounds' ratios and cuBLAS
timed against itself (the same call: what a ratio of 1 reads as), the three writing three output
buffers in turn, round by round; a shape where cuBLAS against itself reads more than 0.1 from 1 was
disturbed, and is timed again, three times at most (the line and the JSON keep the disturbed ratios).  Both modes first run every call for a second (FP64 GEMMs reach
the 700 W cap's clocks within half of it) and alternate the order of the calls
from round to round, so no call always runs on another's heat.

A table holds for the GPU it was measured on (--table measures only into a table of this GPU) and
for those where its check held (bilinear.dispatch).  --check on another GPU checks the table's
choices there on trial; where every faster kernel it chose measured at least the table's
min_speedup times cuBLAS over the whole grid, --record adds this GPU to the table's checked_on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import cupy

import bilinear
from bilinear import matmul_api
from bilinear.dispatch import GRID_CHECK, TABLE_ENV, dispatch, family_of, forget_decisions, parse_table, table_json, table_path
from bilinear.dispatch_checks import TableError
from bilinear.dispatch_writes import measuring_on, misses, record_check, with_check
from bilinear.measure import error_bound, median, relative_error
from bilinear.output import write_atomic
from bilinear.runtime import graph_cache, prepared_calls
from bilinear.runtime.graphs import CapturedProduct

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
# Measured into the table (--table) but not in the 30-shape check (--check --only takes them): where no
# grid shape is near enough (bilinear.dispatch_nearest.RECURSIVE_REACH) and a candidate may still win.  At FP64
# 32768 the ozaki leaf's workspace for all of C (96 GiB) passes an H100's memory, and it runs in tiles of
# C (as matmul gives it what is free).
TABLE_ONLY = [("float32", 2048, 2048, 2048), ("float32", 3072, 3072, 3072), ("float64", 24576, 24576, 24576),
              ("float64", 32768, 32768, 32768), ("float32", 24576, 24576, 24576), ("float32", 32768, 32768, 32768)]
# Non-perturbing candidates (scheme, levels, breadth, launch, leaf): A and B are read only.
CANDIDATES = [("winograd", 1, 1, "streams", "cublas"), ("winograd", 1, 1, "batched", "cublas"),
              ("winograd", 2, 2, "streams", "cublas"), ("winograd", 2, 2, "batched", "cublas"),
              ("rsmm", 1, 0, "serial", "cublas"), ("rsmm", 2, 1, "streams", "cublas"),
              ("winograd", 3, 2, "streams", "cublas"), ("winograd", 3, 2, "batched", "cublas"),
              ("rsmm", 3, 2, "streams", "cublas")]
# Also the ozaki leaf alone: products on the int8 tensor cores at its default accuracy target, every
# element kept to 53 bits (float64: 16 moduli) or 24 (float32: 8) relative to its row's or column's
# largest (plain: a Strassen level on the residues lost at 16384 once k ran whole).  A Winograd
# level above it lost to it alone at every shape probed (results/issue13/session22/ozaki_levels_*.txt).
# In float32 it must also be no less accurate than cuBLAS against the float64 product (cheap there;
# in float64 the exact reference costs too much, and benchmarks/ozaki.py measured the leaf 58 times
# more accurate than DGEMM at 8192).
EMULATED = [("winograd", 0, 0, "serial", "ozaki")]
# How the rows' candidates were timed (matmul_api._run_fast runs them so).
TIMED_AS = "graph replays; direct calls, the workspace given back after each, where matmul keeps none"
SUSTAIN_SECONDS = 1.0
CONFIGURATION = ("scheme", "levels", "breadth", "launch", "leaf")  # a row's fields that name its candidate
CONFIRMED = 3  # candidates timed a second time, the first round's fastest
# cuBLAS against itself further from 1 than the margin a fast scheme must clear (1.1) could decide a check
# by itself: such a timing was disturbed, and is taken again, up to ATTEMPTS times in all.
DISTURBED = 0.1
ATTEMPTS = 3
WINOGRAD_GROWTH = 2.3  # the error bound's growth per level (bilinear.measure.error_bound), rsmm's too


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
    """Median time per call of each, after a sustained warm-up, in rounds whose order reverses each time."""
    return {label: median(values) for label, values in _rounds(calls, repeat).items()}


def _rounds(calls: dict, repeat: int) -> dict[str, list[float]]:
    """Each call's time per call in each of ``repeat`` rounds (see :func:`_interleaved`)."""
    return _rotating_rounds({label: (lambda call: lambda _: call())(call) for label, call in calls.items()}, [None], repeat)


def _rotating_rounds(contenders: dict, outs: list, repeat: int) -> dict[str, list[float]]:
    """Each contender's time per call (``label: f(out)``) in each of ``repeat`` rounds, after a sustained
    warm-up, the order reversing each round, and each writing a different one of ``outs`` from round to
    round: an output buffer's placement moved a memory-bound product by 2 % (FP32 4096×4096×64, 61 µs:
    the same cuBLAS kernel into two buffers read 0.976-0.994 in every round)."""
    labels = list(contenders)
    timings = {(label, j): _timed((lambda f, out: lambda: f(out))(contenders[label], out))
               for label in labels for j, out in enumerate(outs)}
    end = time.perf_counter() + SUSTAIN_SECONDS
    while time.perf_counter() < end:
        for timing in timings.values():
            timing()
    samples = {label: [] for label in labels}
    order = list(labels)
    for r in range(repeat):
        for label in order:
            samples[label].append(timings[(label, (labels.index(label) + r) % len(outs))]())
        order.reverse()
    return samples


def _compiled(dtype: str) -> dict:
    """Every candidate for ``dtype``, compiled once: a product runs at any shape."""
    candidates = CANDIDATES + EMULATED
    return {candidate: bilinear.compile(ROOT / "algorithms" / f"{candidate[0]}.bl", dtype=dtype, levels=candidate[1],
                                        breadth=candidate[2], launch=candidate[3], leaf=candidate[4])
            for candidate in candidates}


def _speedup(product, A, B, C, out, repeat: int) -> tuple[float, float]:
    """The product's calls against cuBLAS alone, and their error against cuBLAS's product (``out``
    holds their result after); its workspace let go after (nine
    workspaces do not fit beside the inputs at n = 16384).  It runs as matmul runs it: captured
    after a call on these arrays (a capture of its own first runs on copies of them: 24 GiB more at
    FP64 32768, and the ozaki leaf measured 0 for want of them), or, where matmul would not keep its
    workspace (as much not free beside it, or ozaki leaves in tiles of C), directly, its workspace
    given back after each call (``matmul_api._run_fast``).  (0, inf) where it does not fit."""
    room = matmul_api._fits(product, A, B)
    try:
        if not room.fits:
            print(f"  {product!r}: its workspace is not free beside the operands", flush=True)
            return 0.0, math.inf
        with product.leaf_budget(room.budget):
            product(A, B, out=out)
        if room.keep:
            ours = CapturedProduct(product, A, B, out, warm=False)
        else:
            ours = lambda: matmul_api._run_fast(product, A, B, out, 1.0, 0.0, room)  # noqa: E731
        ms = _interleaved({"cuBLAS": lambda: cupy.matmul(A, B, out=C), "ours": ours}, repeat)
        return ms["cuBLAS"] / ms["ours"], relative_error(out, C, A, B)
    except cupy.cuda.memory.OutOfMemoryError as error:  # breadth-first buffers past the device's memory
        print(f"  {product!r} ({room}): {error}", flush=True)
        return 0.0, math.inf
    finally:
        ours = None  # a graph holds its workspace: let it go before the release
        product.release_workspace()
        cupy.get_default_memory_pool().free_all_blocks()


def _measured_rows(dtype: str, m: int, k: int, n: int, products: dict, repeat: int) -> list[dict]:
    """Every candidate timed as the graph matmul would replay; the best few timed again, and the
    best of that second round kept with its second speedup (the largest of nine noisy first-round
    speedups overstates its candidate: at float32 4096 one measured 1.156 there and 1.04-1.06 head
    to head).  Where the best has an emulated leaf, the best with DGEMM or SGEMM leaves is kept too:
    matmul runs it where the emulated row does not clear its higher bar (FP64 16384x4096x16384)."""
    A, B, C = _inputs(dtype, m, k, n)
    out = cupy.zeros_like(C)
    exact = cupy.matmul(A.astype("float64"), B.astype("float64")) if dtype == "float32" else None
    cublas_error = relative_error(cupy.matmul(A, B), exact, A, B) if exact is not None else None
    first, errors, exact_errors = {}, {}, {}
    for candidate, product in products.items():
        speedup, errors[candidate] = _speedup(product, A, B, C, out, repeat)
        # a wrong product is never chosen, however fast
        correct = errors[candidate] <= error_bound(dtype, k, WINOGRAD_GROWTH, candidate[1])
        if candidate in EMULATED and exact is not None:  # nor an emulation less accurate than cuBLAS
            exact_errors[candidate] = relative_error(out, exact, A, B)
            correct = correct and exact_errors[candidate] <= cublas_error
        first[candidate] = speedup if correct else 0.0
    chosen = finalists(first)
    if not chosen:
        raise RuntimeError(f"no candidate's product is within the error bound at {dtype} {m}x{k}x{n}: {errors}")
    second = {candidate: _speedup(products[candidate], A, B, C, out, repeat)[0] for candidate in chosen}
    measured = {"candidates": {_label(c): round(x, 4) for c, x in first.items()},
                **({"errors_against_float64": {"cuBLAS": cublas_error, **{_label(c): x for c, x in exact_errors.items()}}}
                   if exact_errors else {}),
                "confirmed": {_label(c): round(x, 4) for c, x in second.items()}}
    return [{"dtype": dtype, "m": m, "k": k, "n": n, "scheme": best[0], "levels": best[1], "breadth": best[2],
             "launch": best[3], "leaf": best[4], "speedup": round(second[best], 4),
             "workspace_bytes": products[best].workspace_bytes(m, k, n), "relative_error": errors[best], **measured}
            for best in kept(second)]


def finalists(first: dict[tuple, float]) -> list[tuple]:
    """The candidates timed a second time: the CONFIRMED fastest of the first round, and the fastest with
    native leaves where none of those has them; a candidate that measured 0 (wrong, or no room) never."""
    ranked = [candidate for candidate in sorted(first, key=first.get, reverse=True) if first[candidate]]
    native = [candidate for candidate in ranked if candidate[4] == "cublas"]
    chosen = ranked[:CONFIRMED]
    return chosen + native[:1] if native and native[0] not in chosen else chosen


def kept(second: dict[tuple, float]) -> list[tuple]:
    """The candidates a shape's rows hold: the fastest of the second round, and where its leaf is emulated,
    the fastest with native leaves too (a row of each leaf kind: bilinear.dispatch runs the fastest that
    clears its bar)."""
    best = max(second, key=second.get)
    native = [candidate for candidate in second if candidate[4] == "cublas"]
    if best[4] == "cublas" or not native:
        return [best]
    return [best, max(native, key=second.get)]


def _label(candidate: tuple) -> str:
    """A candidate as the table's rows name it: "winograd L2 b2 batched", "winograd L0 b0 serial ozaki"."""
    scheme, levels, breadth, launch, leaf = candidate
    return f"{scheme} L{levels} b{breadth} {launch}" + ("" if leaf == "cublas" else f" {leaf}")


def measure_table(path: Path, repeat: int, min_speedup: float, dtypes: list[str],
                  only: Sequence[tuple[int, int, int]] | None = None) -> None:
    """The rows of ``dtypes`` (of the shapes ``only`` names: m, k, n) measured anew into the table
    at ``path``; other rows stay.  The table is written after every row (whole, by a rename), each
    measured row replacing its shape's old one: a run cut off (a device call's time limit; FP64
    32768 takes minutes a row) keeps what it measured and every row it did not reach."""
    data = measuring_on(table_json(path), _gpu_name())
    table = parse_table(data)
    recursive = data.get("recursive", {})
    rows = list(recursive.get("rows", []))
    # the table's own settings, and the commands that measured its rows, as they were before this run
    previous = recursive.get("generated_by")
    kept = {key: value for key, value in recursive.items() if key.startswith("emulated_min_speedup")}
    done: list[tuple] = []  # the shapes this run measured

    def write(whole_run: bool) -> None:
        command = f"python benchmarks/dispatch_grid.py --table {path} --dtype {' '.join(dtypes)} --min-speedup {min_speedup} --repeat {repeat}"
        if not whole_run:
            command += " --only " + " ".join(dict.fromkeys(f"{m}x{k}x{n}" for _, m, k, n in done))
        data["recursive"] = {
            "min_speedup": min_speedup, **kept, "rows": _in_grid_order(rows), "timed_as": TIMED_AS,
            "generated_by": f"{previous}; then {command}" if previous else command,
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        write_atomic(path, json.dumps(data, indent=1) + "\n")

    compiled = {}
    for dtype, m, k, n in selected(GRID + TABLE_ONLY, dtypes, only):
        why = no_row_because(m, k, n, table)
        if why is not None:
            if only is not None:  # the grid's skinny shapes go by without a word; a shape asked for does not
                print(f"{dtype} {m}x{k}x{n}: no row ({why})", flush=True)
            continue
        if dtype not in compiled:
            compiled[dtype] = _compiled(dtype)
        measured = _measured_rows(dtype, m, k, n, compiled[dtype], repeat)
        rows = [row for row in rows if _shape_of(row) != (dtype, m, k, n)] + measured
        done.append((dtype, m, k, n))
        print(f"{dtype} {m}x{k}x{n}: " + "; ".join(
            f"{'best' if index == 0 else 'best native'} {_label(tuple(row[f] for f in CONFIGURATION))} {row['speedup']:.3f}x"
            for index, row in enumerate(measured)) + f"  {measured[0]['candidates']}", flush=True)
        write(whole_run=False)
    if only is None and done:  # a whole run replaces every row of its dtypes: shapes it no longer measures go
        rows = [row for row in rows if row["dtype"] not in dtypes or _shape_of(row) in done]
        write(whole_run=True)


def _shape_of(row: dict) -> tuple:
    return row["dtype"], row["m"], row["k"], row["n"]


def _in_grid_order(rows: list[dict]) -> list[dict]:
    """The table's rows in the order of GRID, then TABLE_ONLY, then any other."""
    order = {shape: index for index, shape in enumerate(GRID + TABLE_ONLY)}
    return sorted(rows, key=lambda row: order.get(_shape_of(row), len(order)))


def no_row_because(m: int, k: int, n: int, table) -> str | None:
    """Why a shape gets no fast-scheme row, or None where it gets one."""
    if family_of(m, k, n, table) is not None:
        return "tall-and-skinny: benchmarks/tsm2.py measures it"
    if min(m, k, n) < 1024:
        return "fast schemes start at 1024"
    return None


def selected(shapes: list[tuple], dtypes: list[str], only: Sequence[tuple[int, int, int]] | None) -> list[tuple]:
    """What a run measures: the (dtype, m, k, n) of ``shapes`` at ``dtypes``, or, where ``only`` names
    shapes (m, k, n), each of them at every one of ``dtypes``: those of ``shapes`` in its order, then the
    others as named."""
    if only is None:
        return [shape for shape in shapes if shape[0] in dtypes]
    order = list(dict.fromkeys(shape[1:] for shape in shapes))
    named = sorted(dict.fromkeys(only), key=lambda shape: order.index(shape) if shape in order else len(order))
    return [(dtype, *shape) for shape in named for dtype in dtypes]


def _gpu_name() -> str:
    from bilinear.runtime.cuda import device_info

    return device_info().name


def _against_cublas(A, B, outs: list, repeat: int) -> dict:
    """matmul's timing against cuBLAS's, and cuBLAS's against itself (the same call: the noise a ratio
    of 1 carries), the three writing ``outs`` in turn."""
    rounds = _rotating_rounds({"cuBLAS": lambda out: cupy.matmul(A, B, out=out),
                               "matmul": lambda out: bilinear.matmul(A, B, out=out),
                               "cuBLAS again": lambda out: cupy.matmul(A, B, out=out)}, outs, repeat)
    ms = {label: median(values) for label, values in rounds.items()}
    return {"cublas_ms": ms["cuBLAS"], "matmul_ms": ms["matmul"], "ratio": ms["cuBLAS"] / ms["matmul"],
            "round_ratios": sorted(c / o for c, o in zip(rounds["cuBLAS"], rounds["matmul"])),
            "cublas_vs_itself": ms["cuBLAS"] / ms["cuBLAS again"]}


def settled(time_once: Callable[[], dict], attempts: int = ATTEMPTS) -> dict:
    """``time_once()``'s timing, taken again, up to ``attempts`` in all, while cuBLAS against itself
    reads further from 1 than :data:`DISTURBED`: FP64 100000×16×16 (20 µs) once read 0.980 with cuBLAS
    against itself at 0.687, and 1.26-1.39 in four runs after (session 84). The first undisturbed
    timing counts, or the last; the earlier ones' ratios stay in ``disturbed_before``."""
    before = []
    for attempt in range(attempts):
        timing = time_once()
        disturbed = abs(timing["cublas_vs_itself"] - 1) > DISTURBED
        if not disturbed or attempt == attempts - 1:
            return {**timing, "disturbed": disturbed, "disturbed_before": before}
        before.append({"ratio": timing["ratio"], "cublas_vs_itself": timing["cublas_vs_itself"]})
    raise ValueError(f"attempts must be at least 1, not {attempts}")


def timing_text(timing: dict) -> str:
    """A check's line after its shape and kernel: the ratio, its rounds' spread, cuBLAS against itself,
    both times, and the disturbed timings taken again before it."""
    rounds = timing["round_ratios"]
    text = (f"ratio {timing['ratio']:6.3f} (rounds {rounds[0]:.3f}-{rounds[-1]:.3f}; cuBLAS/cuBLAS "
            f"{timing['cublas_vs_itself']:.3f})  (cuBLAS {timing['cublas_ms']:8.3f} ms, matmul {timing['matmul_ms']:8.3f} ms)")
    earlier = "; ".join(f"ratio {t['ratio']:.3f}, cuBLAS/cuBLAS {t['cublas_vs_itself']:.3f}"
                        for t in timing["disturbed_before"])
    if earlier:
        text += f"  [timed again after a disturbed run: {earlier}]"
    if timing["disturbed"]:
        text += f"  [disturbed in all {len(timing['disturbed_before']) + 1} runs]"
    return text


def check(repeat: int, dtypes: list[str], only: Sequence[tuple[int, int, int]] | None = None) -> list[dict]:
    """matmul against cuBLAS at every grid shape of ``dtypes``, or at the shapes ``only`` names (m, k, n),
    by the table $BILINEAR_DISPATCH_TABLE names (the committed one without it)."""
    forget_decisions()
    prepared_calls.forget()  # decisions of the table just written, not of the one before
    device = _gpu_name()
    results = []
    for dtype, m, k, n in selected(GRID if only is None else GRID + TABLE_ONLY, dtypes, only):
        A, B, C = _inputs(dtype, m, k, n)
        C2, C3 = cupy.zeros_like(C), cupy.zeros_like(C)  # before matmul's first call, which sizes its workspace
        choice = dispatch(m, k, n, dtype, device=device)
        bilinear.matmul(A, B, out=C2)  # compiles what it chose
        cupy.matmul(A, B, out=C3)
        # in bands of rows: a difference of all of C did not fit beside matmul's workspace at FP64 24576
        band = 4096
        error = max(float(cupy.abs(C2[i:i + band] - C3[i:i + band]).max()) for i in range(0, m, band))
        error /= max(max(float(cupy.abs(C3[i:i + band]).max()) for i in range(0, m, band)), 1e-300)
        timing = settled(lambda: _against_cublas(A, B, [C, C2, C3], repeat))
        results.append({"dtype": dtype, "m": m, "k": k, "n": n, "choice": choice.kernel, "reason": choice.reason,
                        "chosen": choice.kernel != "cublas", **timing, "max_diff": error})
        print(f"{dtype} {m:>7}x{k:>6}x{n:>6}  {choice.kernel:<9} {timing_text(timing)}  {choice.reason}", flush=True)
        A = B = C = C2 = C3 = None
        for product in matmul_api._FAST.values():  # the next shape's operands need the memory matmul kept
            graph_cache.drop(product)
            product.release_workspace()
        cupy.get_default_memory_pool().free_all_blocks()
    worst = min(r["ratio"] for r in results)
    chosen = [r["ratio"] for r in results if r["choice"] != "cublas"]
    print(f"worst ratio {worst:.3f}; where a faster kernel was chosen: min {min(chosen, default=0):.3f} over {len(chosen)} shapes")
    return results


def _shape(text: str) -> tuple[int, int, int]:
    try:
        m, k, n = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not MxKxN (e.g. 8192x8192x8192)") from None
    return m, k, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, help="measure the fast-scheme rows into this dispatch table")
    parser.add_argument("--check", action="store_true", help="time bilinear.matmul against cuBLAS on the grid")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dtype", nargs="+", default=["float64", "float32"], choices=["float64", "float32"],
                        help="measure (--table) only these dtypes' rows, keeping the others'; check only these")
    parser.add_argument("--min-speedup", type=float, default=1.1,
                        help="the speedup over cuBLAS a fast scheme must have measured to be used (default 1.1: "
                             "FP64 4096's ozaki leaf measured 1.027 and 1.053, within the noise); the ozaki leaf "
                             "must also clear the table's emulated_min_speedup, which --table keeps")
    parser.add_argument("--only", nargs="+", type=_shape, metavar="MxKxN",
                        help="measure (--table) only these shapes' rows, keeping the others', or check only these; "
                             "each at every --dtype, on the grid or off it")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--record", action="store_true",
                        help="with --check of the whole grid on a GPU the table was not measured on: add the GPU to "
                             "the table's checked_on where its choices held")
    args = parser.parse_args()
    if args.record and not (args.check and args.only is None and set(args.dtype) == {"float64", "float32"}):
        parser.error("--record needs --check of the whole grid (no --only, both dtypes)")
    try:
        if args.table:
            measure_table(args.table, args.repeat, args.min_speedup, args.dtype, args.only)
        if args.check:
            checked(args.table or table_path(), args)
    except TableError as error:
        sys.exit(f"dispatch_grid.py: {error}")


def check_on_trial(path: Path, device: str, check: str, run: Callable[[], list[dict]]) -> list[dict]:
    """``run()`` (a check of ``matmul`` against cuBLAS) with ``$BILINEAR_DISPATCH_TABLE`` naming the table
    at ``path``; where it does not hold for ``device``, naming a copy that does: its choices on trial.
    matmul decides afterwards as before (the variable as it was, decisions and remembered calls dropped)."""
    data = table_json(path)
    table = parse_table(data)
    with tempfile.TemporaryDirectory() as folder:
        used = path
        if table.not_held_on(device, check) is not None:
            print(f"{path} holds for {', '.join(table.devices(check))}: checking it on this {device} on trial")
            used = Path(folder) / "trial.json"
            used.write_text(json.dumps(with_check(data, device, check, {"trial": True})))
        before = os.environ.get(TABLE_ENV)
        os.environ[TABLE_ENV] = str(used)
        try:
            return run()
        finally:
            if before is None:
                del os.environ[TABLE_ENV]
            else:
                os.environ[TABLE_ENV] = before
            forget_decisions()
            prepared_calls.forget()


def checked(path: Path, args) -> None:
    """--check of the table at ``path`` (on trial on a GPU it does not hold for), and --record."""
    device = _gpu_name()
    results = check_on_trial(path, device, GRID_CHECK, lambda: check(args.repeat, args.dtype, args.only))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "matmul_grid.json").write_text(json.dumps(results, indent=1))
    least = parse_table(table_json(path)).min_speedup
    for result in misses(results, least):
        print(f"not held: {result['dtype']} {result['m']}x{result['k']}x{result['n']} {result['choice']} "
              f"{result['ratio']:.3f}x cuBLAS, below the table's {least:g}")
    if args.record:
        print("--record:", record_check(path, device, GRID_CHECK, results,
                                        f"python benchmarks/dispatch_grid.py --check --record --repeat {args.repeat}"))


if __name__ == "__main__":
    main()
