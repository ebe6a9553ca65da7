#!/usr/bin/env python3
"""TSM2R / TSM2L against cuBLAS on the GPU; regenerates the dispatch table.

    python benchmarks/tsm2.py --table bilinear/data/dispatch.json --out results/

What it does, in one process:

1. measures the copy bandwidth (a 2 GiB device-to-device copy, bytes read + written);
2. for each (family, dtype, small dimension) compiles the model's choice for every
   measured m and a few alternatives around it (in parallel: NVRTC releases the GIL);
3. for each shape: random normal A and B, a correctness check of every candidate
   against cuBLAS (C poisoned with NaN first), then cuBLAS (``cupy.matmul``) and the
   candidates timed interleaved, each batch behind a spin kernel so that the CPU's
   launch overhead never leaves the GPU idle, CUDA events, median of ``--reps``;
   small problems rotate through enough copies of A and C to defeat the 50 MB L2;
4. writes every number to ``OUT/tsm2_results.json``, the dispatch table to ``--table``,
   and prints the table of the issue's grid last.

Bytes per product = A + B + C, each once.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cupy

from bilinear.dispatch import table_json
from bilinear.dispatch_checks import TableError
from bilinear.dispatch_writes import merge_tsm2_rows
from bilinear.lower import tsm2 as model
from bilinear.lower.tsm2 import Params
from bilinear.output import write_atomic
from bilinear.runtime import tsm2 as runtime

DTYPES = ("float32", "float64")
SMALL = (2, 4, 8, 16, 32)
R_TARGET = (16384, 32768)  # m = k: the grid
R_EXTRA = (4096, 8192)  # where the dispatcher's thresholds come from
L_TARGET = (10**6, 10**7)
L_EXTRA = (10**4, 10**5)
ROTATE_BYTES = 256 << 20  # small problems cycle through this much data (5× the L2)
SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


class Timer:
    """Per-call device time of a batch of calls, with the GPU kept busy while they are queued."""

    def __init__(self, clock_hz: float):
        self.spin = cupy.RawKernel(SPIN, "spin")
        self.clock_hz = clock_hz
        self.start, self.end = cupy.cuda.Event(), cupy.cuda.Event()

    def batch(self, fn, calls: int) -> float:
        # The spin covers the CPU's enqueueing of the whole batch (~50 µs a call at worst).
        self.spin((1,), (1,), (np.int64(self.clock_hz * (200e-6 + 60e-6 * calls)),))
        self.start.record()
        for i in range(calls):
            fn(i)
        self.end.record()
        self.end.synchronize()
        return cupy.cuda.get_elapsed_time(self.start, self.end) / 1e3 / calls


def tee(path: Path):
    """``log(line)``: print the line and append it to ``path`` at once (a run cut short keeps its lines)."""
    logfile = open(path, "w")

    def log(line: str) -> None:
        print(line, flush=True)
        logfile.write(line + "\n")
        logfile.flush()

    return log


def copy_bandwidth(timer: Timer, reps: int) -> float:
    """Bytes read + written per second by a 2 GiB device-to-device copy."""
    nbytes = 2 << 30
    src, dst = cupy.empty(nbytes, dtype=cupy.uint8), cupy.empty(nbytes, dtype=cupy.uint8)
    src.fill(1)
    stream = cupy.cuda.get_current_stream().ptr

    def copy(_):
        cupy.cuda.runtime.memcpyAsync(
            dst.data.ptr, src.data.ptr, nbytes, cupy.cuda.runtime.memcpyDeviceToDevice, stream
        )

    timer.batch(copy, 2)
    seconds = statistics.median(timer.batch(copy, 3) for _ in range(reps))
    return 2 * nbytes / seconds


# ---------------------------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------------------------


def _r_alternatives(n: int) -> list[Params]:
    return [
        Params("tsm2r", row_warps=1, k_groups=4, rows_per_thread=4, stages=4),
        Params("tsm2r", row_warps=1, k_groups=8, rows_per_thread=4, stages=4),
        Params("tsm2r", row_warps=2, k_groups=4, rows_per_thread=2, stages=4),
        Params("tsm2r", row_warps=4, k_groups=2, rows_per_thread=1, stages=4),
        Params("tsm2r", row_warps=1, k_groups=8, rows_per_thread=2, stages=6),
        Params("tsm2r", row_warps=2, k_groups=8, rows_per_thread=2, stages=3, k_tile_bytes=256),
    ]


def _l_alternatives() -> list[Params]:
    return [
        Params("tsm2l", threads=256, rows_per_thread=1, stages=3),
        Params("tsm2l", threads=256, rows_per_thread=2, stages=3),
        Params("tsm2l", threads=128, rows_per_thread=4, stages=4),
        Params("tsm2l", threads=256, rows_per_thread=8, stages=3),
        Params("tsm2l", threads=256, rows_per_thread=1, stages=3, persistent=False),
        Params("tsm2l", threads=512, rows_per_thread=1, stages=2),
    ]


def _fits(params: Params, dtype: str, k: int, n: int) -> bool:
    try:
        spec = model.spec_for(params, dtype, k, n)
    except ValueError:
        return False
    return (
        spec.regs_estimate <= 168 and model.occupancy(model.H100, spec.threads, spec.regs_estimate, spec.smem_bytes) > 0
    )


def sweep(
    family: str, dtype: str, k: int, n: int, ms: list[int], limit: int, device: model.Device = model.H100
) -> list[Params]:
    """The model's choice for every m, then alternatives, deduplicated, at most ``limit``."""
    chosen: list[Params] = []
    for m in ms:
        chosen.append(model.model_params(family, m, k, n, dtype, device))
    extra = _r_alternatives(n) if family == "tsm2r" else _l_alternatives()
    extra = [model.fit_params(p, family, dtype, k, n, model.Alignment()) for p in extra]
    out: list[Params] = []
    for params in chosen + [p for p in extra if _fits(p, dtype, k, n)]:
        if family == "tsm2r" and params.n_tile is None:
            params = Params(**{**params.__dict__, "n_tile": n})
        if params not in out:
            out.append(params)
    return out[: max(limit, len(set(chosen)))]


# ---------------------------------------------------------------------------------------------
# One shape
# ---------------------------------------------------------------------------------------------


def _operands(m: int, k: int, n: int, dtype: str, sets: int):
    As = [cupy.random.standard_normal((m, k), dtype=dtype) for _ in range(sets)]
    Bs = [cupy.random.standard_normal((k, n), dtype=dtype) for _ in range(sets)]
    Cs = [cupy.empty((m, n), dtype=dtype) for _ in range(sets)]
    return As, Bs, Cs


def _rel_error(C, ref) -> float:
    ref64 = ref.astype(cupy.float64)
    return float(cupy.linalg.norm(C.astype(cupy.float64) - ref64) / cupy.linalg.norm(ref64))


def measure_shape(family, dtype, m, k, n, candidates, timer, reps, log) -> dict:
    nbytes = model.bytes_moved(m, k, n, dtype)
    sets = max(1, min(32, math.ceil(ROTATE_BYTES / nbytes)))
    As, Bs, Cs = _operands(m, k, n, dtype, sets)
    ref = cupy.matmul(As[0], Bs[0])
    tolerance = 1e-4 if dtype == "float32" else 1e-10

    def cublas(i):
        j = i % sets
        cupy.matmul(As[j], Bs[j], out=Cs[j])

    contenders = {"cublas": cublas}
    info = {}
    for index, params in enumerate(candidates):

        def ours(i, params=params):
            j = i % sets
            runtime.tsm2_matmul(As[j], Bs[j], out=Cs[j], kernel=family, params=params)

        Cs[0].fill(cupy.nan)
        try:
            runtime.tsm2_matmul(As[0], Bs[0], out=Cs[0], kernel=family, params=params)
            error = _rel_error(Cs[0], ref)
        except Exception as failure:  # recorded, never fatal: the others still run
            log(f"    candidate {params.short()} failed: {failure!r}")
            continue
        call = runtime.validate(As[0], Bs[0], Cs[0])[3]
        launch = runtime.plan(call, family, params, cupy.cuda.Device().id)
        spec = launch.compiled.spec
        info[index] = {
            "params": params.short(),
            "error": error,
            "ok": bool(error < tolerance),
            "regs": launch.compiled.num_regs,
            "spill_bytes": launch.compiled.local_bytes,
            "blocks_per_sm": launch.compiled.blocks_per_sm,
            "grid": launch.grid,
            "smem": spec.smem_bytes,
            "paper": runtime.paper_parameters(launch, call),
            "predicted_gbs": model.predict(spec, m, k, n, runtime.device_model()).gbs(nbytes),
        }
        if info[index]["ok"]:
            contenders[index] = ours
        else:
            log(f"    candidate {params.short()} WRONG: relative error {error:.2e}")

    # Warm up, size the batches, then interleave.
    first = {}
    for name, fn in contenders.items():
        fn(0)
        first[name] = timer.batch(fn, 1)
    calls = {name: max(2, min(100, round(3e-3 / max(t, 1e-7)))) for name, t in first.items()}
    samples = {name: [] for name in contenders}
    for _ in range(reps):
        for name, fn in contenders.items():
            samples[name].append(timer.batch(fn, calls[name]))
    seconds = {name: statistics.median(values) for name, values in samples.items()}
    for index, entry in info.items():
        if index in seconds:
            entry["seconds"] = seconds[index]
            entry["gbs"] = nbytes / seconds[index] / 1e9
    return {
        "cublas_seconds": seconds["cublas"],
        "cublas_gbs": nbytes / seconds["cublas"] / 1e9,
        "candidates": [info[i] for i in sorted(info)],
        "bytes": nbytes,
        "sets": sets,
    }


def summarize(family, dtype, m, k, n, result, model_params: Params, copy_gbs: float) -> dict:
    timed = [c for c in result["candidates"] if "seconds" in c]
    best = min(timed, key=lambda c: c["seconds"]) if timed else None
    modelled = next((c for c in timed if c["params"] == model_params.short()), None)
    ours_gbs = best["gbs"] if best else 0.0
    speedup = result["cublas_seconds"] / best["seconds"] if best else 0.0
    # Never slower than cuBLAS: a TSM2 kernel must win by more than the timing noise (2 %).
    winner = family if best and speedup > 1.02 else "cublas"
    dispatched = ours_gbs if winner == family else result["cublas_gbs"]
    return {
        "family": family,
        "dtype": dtype,
        "m": m,
        "k": k,
        "n": n,
        "cublas_gbs": round(result["cublas_gbs"], 1),
        "ours_gbs": round(ours_gbs, 1),
        **({"speedup": round(speedup, 3)} if best else {}),  # none where no TSM2 kernel ran (the table takes no 0)
        "winner": winner,
        "dispatched_gbs": round(dispatched, 1),
        "copy_fraction": round(dispatched / copy_gbs, 3),
        "params": best["params"] if best and winner == family else None,
        "best_params": best["params"] if best else None,
        "best_paper": best["paper"] if best else None,
        "model_params": model_params.short(),
        "model_gbs": round(modelled["gbs"], 1) if modelled else None,
        "model_paper": modelled["paper"] if modelled else None,
        "model_predicted_gbs": round(modelled["predicted_gbs"], 1) if modelled else None,
    }


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def shapes(quick: bool):
    r_ms = R_TARGET if quick else R_EXTRA + R_TARGET
    l_ms = L_TARGET if quick else L_EXTRA + L_TARGET
    for dtype in DTYPES:
        for s in SMALL:
            yield "tsm2r", dtype, s, [(mk, mk, s) for mk in r_ms]
            yield "tsm2l", dtype, s, [(m, s, s) for m in l_ms]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("tsm2_results"), help="folder for the full results")
    parser.add_argument("--table", type=Path, help="write the dispatch table here (bilinear/data/dispatch.json)")
    parser.add_argument("--reps", type=int, default=7, help="timed batches per contender (median)")
    parser.add_argument("--candidates", type=int, default=7, help="kernels tried per (family, dtype, n)")
    parser.add_argument("--quick", action="store_true", help="the issue's grid only")
    parser.add_argument("--only", help="family[:dtype[:small]], e.g. tsm2l or tsm2r:float32:2 (the table keeps other rows)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    log = tee(args.out / "tsm2_log.txt")
    device = runtime.device_model()
    if args.table and args.table.exists():  # before any measurement: a malformed table or another GPU's is refused
        try:
            merge_tsm2_rows(table_json(args.table), {"device": device.name}, [])
        except TableError as error:
            sys.exit(f"tsm2.py: {error}")
    timer = Timer(device.clock_hz)
    copy = copy_bandwidth(timer, args.reps)
    cupy.get_default_memory_pool().free_all_blocks()
    log(f"device: {device.name}, {device.sms} SMs; copy bandwidth {copy / 1e9:.0f} GB/s")

    groups = list(shapes(args.quick))
    if args.only:
        wanted = args.only.split(":")
        groups = [g for g in groups if [str(x) for x in g[:len(wanted)]] == wanted]
    plans = []
    for family, dtype, s, group in groups:
        ms = [m for m, _, _ in group]
        k, n = group[0][1], group[0][2]
        plans.append((family, dtype, group, sweep(family, dtype, k, n, ms, args.candidates, device)))
    specs = [model.spec_for(p, dtype, g[0][1], g[0][2]) for family, dtype, g, cands in plans for p in cands]
    began = time.time()
    runtime.precompile(specs, workers=16)
    log(f"compiled {len(specs)} kernels in {time.time() - began:.1f} s")

    rows, raw = [], []
    for family, dtype, group, cands in plans:
        for m, k, n in group:
            began = time.time()
            result = measure_shape(family, dtype, m, k, n, cands, timer, args.reps, log)
            cupy.get_default_memory_pool().free_all_blocks()  # the shape's operands are gone
            row = summarize(
                family, dtype, m, k, n, result, model.model_params(family, m, k, n, dtype, device), copy / 1e9
            )
            rows.append(row)
            raw.append({**row, "detail": result})
            log(
                f"{family} {dtype} {m}x{k}x{n}: cuBLAS {row['cublas_gbs']:.0f} GB/s, ours {row['ours_gbs']:.0f} "
                f"({row['speedup']:.2f}x) -> {row['winner']}  model {row['model_gbs']} best {row['best_params']} "
                f"[{time.time() - began:.1f} s]"
            )

    meta = {
        "device": device.name,
        "copy_gbs": round(copy / 1e9, 1),
        "cupy": cupy.__version__,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "generated_by": "python benchmarks/tsm2.py --table bilinear/data/dispatch.json",
    }
    (args.out / "tsm2_results.json").write_text(json.dumps({**meta, "rows": raw}, indent=1))
    if args.table:
        args.table.parent.mkdir(parents=True, exist_ok=True)
        old = table_json(args.table) if args.table.exists() else {}
        table = merge_tsm2_rows(old, {**meta, "limits": {"tsm2r_max_n": max(SMALL), "tsm2l_max_k": max(SMALL)}}, rows)
        write_atomic(args.table, json.dumps(table, indent=1) + "\n")  # an interrupted write keeps the old table
    print_table(rows, copy / 1e9, log)
    return 0


def print_table(rows, copy_gbs, log) -> None:
    targets = [row for row in rows if row["m"] in R_TARGET + L_TARGET]
    log("\nmodel's choice vs best measured (GB/s; params: rows_per_thread/k_groups/stages or threads/r/stages)")
    for row in targets:
        log(
            f"  {row['family']} {row['dtype']} {row['m']}x{row['k']}x{row['n']}: model {row['model_gbs']} "
            f"(predicted {row['model_predicted_gbs']}) {row['model_paper']}  best {row['ours_gbs']} {row['best_paper']}"
        )
    log(f"\ncopy bandwidth: {copy_gbs:.0f} GB/s; targets: >= 85% of it, never slower than cuBLAS")
    log("| shape (m×k×n) | dtype | cuBLAS GB/s | ours GB/s | ours/cuBLAS | kernel | % copy |")
    log("|---|---|---:|---:|---:|---|---:|")
    for row in targets:
        log(
            f"| {row['m']}×{row['k']}×{row['n']} | {row['dtype']} | {row['cublas_gbs']:.0f} | {row['ours_gbs']:.0f} "
            f"| {row['speedup']:.2f} | {row['winner']} | {100 * row['copy_fraction']:.0f} |"
        )
    missed = [row for row in targets if row["copy_fraction"] < 0.85]
    log(
        f"below 85 % of copy: {len(missed)} of {len(targets)}: "
        + ", ".join(f"{r['family']} {r['dtype']} {r['m']}x{r['k']}x{r['n']}" for r in missed)
    )
    for family, dtype, small, want in (
        ("tsm2r", "float32", 2, 2.5),
        ("tsm2l", "float32", 2, 5.0),
        ("tsm2l", "float64", 2, 5.0),
    ):
        for row in targets:
            if (row["family"], row["dtype"], row["n"]) == (family, dtype, small):
                verdict = "met" if row["speedup"] >= want else "MISSED"
                log(
                    f"{family} {dtype} {row['m']}x{row['k']}x{row['n']}: {row['speedup']:.2f}x cuBLAS "
                    f"(target {want}x) {verdict}"
                )


if __name__ == "__main__":
    sys.exit(main())
