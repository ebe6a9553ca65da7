"""FP64 products on the int8 tensor cores (the ozaki leaf) against cuBLAS DGEMM, on the GPU.

For every size n, level count L (FP64 Strassen levels above ozaki leaves, through the compiled
product), number of moduli N, scaling (max, norm) and residue levels R (0, or 1: a Strassen
level on the int8 residues inside each leaf, exact, shown as "+R"): the median time of ours and
of cuBLAS DGEMM, interleaved in
one process (CUDA events after a warm-up, median of --repeat), ratio = DGEMM time / ours,
effective TFLOP/s (2n³/time), the int8 GEMMs' share of the time (L = 0), the workspace; and the
error on a 64×64 sample of C against an exact reference computed on the host (every product
split into exact halves, summed by math.fsum), beside DGEMM's error on the same entries:
max |C - C_exact| / (|A||B|) and the RMS of |C - C_exact| / |C_exact|.

    python benchmarks/ozaki.py --quick --out results/ozaki-quick     # n = 2048, a minute
    python benchmarks/ozaki.py --out results/ozaki                   # n = 4096, 8192, 16384

With --breakdown, one more call of every configuration records a CUDA event after each pass
of each leaf (statistics of A and B, residues of A and B, int8 GEMMs, reconstruction with the
unscaling and alpha/beta) and prints the summed times per pass beside a memory-traffic model
(bytes / the measured copy bandwidth of an n×n float64 copy), "other" being the rest of the call
(FP64 Strassen additions above the leaves, gaps):

    python benchmarks/ozaki.py -n 16384 --moduli 14 15 --levels 0 --scalings max norm \
        --residue-levels 0 --breakdown --out results/ozaki-breakdown   # about 2 minutes

Writes ozaki.txt (the table) and ozaki.json into --out.  Exits 1 when any configuration fails
or, with --quick, when any error exceeds 16× DGEMM's plus 2^-46 (a wrong result is off by O(1)).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy as cp
import numpy as np

from bilinear.api import load
from bilinear.lower.options import Options
from bilinear.lower.plan import lower
from bilinear.measure import median, time_interleaved
from bilinear.runtime import ozaki
from bilinear.runtime.compiled import CompiledProduct
from bilinear.runtime.cupy_backend import CupyBackend
from bilinear.lower.ozaki_passes import TILE

SAMPLE = 64


def exact_sample(A, B, rows, cols) -> tuple[np.ndarray, np.ndarray]:
    """(exact (A@B)[rows][:, cols] rounded once, (|A||B|) there), on the host: each a·b is
    split into four exact products of 26-bit halves and math.fsum adds them exactly."""
    a, b = cp.asnumpy(A[cp.asarray(rows)]), cp.asnumpy(B[:, cp.asarray(cols)])

    def halves(x):
        c = 134217729.0 * x  # Veltkamp's split: x = hi + lo, each with at most 26 significant bits
        hi = c - (c - x)
        return hi, x - hi

    (ah, al), (bh, bl) = halves(a), halves(b)
    exact = np.empty((len(rows), len(cols)))
    for i in range(len(rows)):
        terms = np.concatenate([ah[i, :, None] * bh, ah[i, :, None] * bl, al[i, :, None] * bh, al[i, :, None] * bl])
        for j in range(len(cols)):
            exact[i, j] = math.fsum(terms[:, j].tolist())
    return exact, np.abs(a) @ np.abs(b)


def errors(C, rows, cols, exact, scale) -> dict:
    got = cp.asnumpy(C[cp.asarray(rows)][:, cp.asarray(cols)])
    difference = np.abs(got - exact)
    return {"max_rel_AB": float(np.max(difference / scale)),
            "rms_rel": float(np.sqrt(np.mean((difference / np.maximum(np.abs(exact), 1e-300)) ** 2)))}


def leaf_of(product: CompiledProduct):
    """The product's OzakiLeaf (the executor's GEMM, or the leaf under its breadth-first levels)."""
    gemm = product.executor.gemm
    return gemm if hasattr(gemm, "residue_levels") else gemm.gemm


def int8_gemm_seconds(product: CompiledProduct, n: int, count: int, repeat: int, scaling: str) -> dict:
    """The int8 GEMMs of a plain (L = 0) product alone, on its live workspace, in ms: as the leaf
    runs them by default (per modulus, in tiles of ozaki_passes.TILE rows and columns, k whole),
    one strided-batched call whole and in tiles of 8192, one call per modulus whole and in tiles
    (k whole throughout: the runner's k_tile)."""
    runner = leaf_of(product).cuda
    at = ozaki.workspace_layout(n, n, n, count, scaling=scaling)
    base = runner.workspace.data.ptr
    n4, kp = -(-n // 4) * 4, -(-n // 16) * 16
    variants = {"default": (False, TILE), "batched": (True, 0), "batched_t8192": (True, 8192),
                "per_modulus": (False, 0), "per_modulus_t8192": (False, 8192)}

    def call(batched, tile):
        runner.batched, runner.tile = batched, tile
        runner._int8_gemms(base + at["ra"], base + at["rb"], base + at["products"], n4, n4, kp, count)
        runner.batched, runner.tile = False, TILE

    times = time_interleaved([lambda v=v: call(*v) for v in variants.values()], cp, repeat=repeat)
    return {name: 1e3 * median(t) for name, t in zip(variants, times)}


def copy_bandwidth(A, C) -> float:
    """Bytes per second of cp.copyto(C, A) (read and write counted), the best of 3."""
    times = []
    for _ in range(4):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        cp.copyto(C, A)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return 2 * A.nbytes / min(times[1:])


def traffic_model(n: int, levels: int, count: int, scaling: str) -> dict:
    """Bytes each pass moves in all leaves (7^levels leaves of size n/2^levels, beta = 0): A and B
    read once per statistic (norm: B twice), residues written, products read, C written."""
    s, leaves = n >> levels, 7**levels
    kp = -(-s // 16) * 16
    model = {"stats A": 8 * s * s, "stats B": 8 * s * s * (2 if scaling == "norm" else 1),
             "residues A": 8 * s * s + count * s * kp, "residues B": 8 * s * s + count * s * kp,
             "reconstruct": 4 * count * s * s + 8 * s * s}
    return {name: leaves * size for name, size in model.items()}


def breakdown(product: CompiledProduct, A, B, C) -> dict:
    """Milliseconds per pass of one call, summed over its leaves (and chunks), "other"
    the rest of the call, "leaves" how many leaf products it ran."""
    runner = leaf_of(product).cuda
    runner.timing = []
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    product(A, B, out=C)
    end.record()
    end.synchronize()
    marks, runner.timing = runner.timing, None
    passes: dict = {}
    for (_, before), (name, after) in zip(marks, marks[1:]):
        if name != "start":
            passes[name] = passes.get(name, 0.0) + cp.cuda.get_elapsed_time(before, after)
    total = cp.cuda.get_elapsed_time(start, end)
    passes["other"] = total - sum(passes.values())
    return {"ms": passes, "total_ms": total, "leaves": sum(name == "start" for name, _ in marks)}


def run_config(program, n, levels, count, scaling, residue, A, B, C, Cd, dgemm, sample, repeat, budget,
               bandwidth=None, breadth=0) -> dict:
    options = Options(dtype="float64", levels=levels, leaf="ozaki", moduli=count, breadth=breadth)
    product = CompiledProduct(lower(program, options), CupyBackend())
    leaf = leaf_of(product)  # its scaling, residue Strassen and memory budget (not Options fields)
    leaf.scaling, leaf.residue_levels = scaling, residue
    leaf.budget = None if budget is None else int(budget * 2**30)
    leaf_k = n >> levels
    row = {"n": n, "levels": levels, "breadth": breadth, "residue_levels": residue, "moduli": count,
           "scaling": scaling, "bits": ozaki.scale_bits(count, leaf_k, scaling)}
    ours_times, dgemm_times = time_interleaved([lambda: product(A, B, out=C), dgemm], cp, repeat=repeat, warmup=1)
    ours, library = median(ours_times), median(dgemm_times)
    row.update({"ours_ms": 1e3 * ours, "dgemm_ms": 1e3 * library, "ratio": library / ours,
                "tflops": 2.0 * n**3 / ours / 1e12, "dgemm_tflops": 2.0 * n**3 / library / 1e12,
                "workspace_bytes": product.workspace_bytes(n, n, n)})
    product(A, B, out=C)
    row["error"] = errors(C, *sample)
    row["dgemm_error"] = errors(Cd, *sample)
    if bandwidth is not None:
        row["breakdown"] = breakdown(product, A, B, C)
        row["breakdown"]["model_ms"] = {name: 1e3 * size / bandwidth
                                        for name, size in traffic_model(n, levels, count, scaling).items()}
        row["breakdown"]["copy_GBps"] = bandwidth / 1e9
    if levels == 0 and budget is None and not residue:
        row["int8_ms"] = int8_gemm_seconds(product, n, count, repeat, scaling)
        row["int8_tops"] = {name: count * 2.0 * n**3 / ms / 1e9 for name, ms in row["int8_ms"].items()}
    return row  # the product and its workspace go with this frame (the caller frees the pool)


def label(row: dict) -> str:
    """n, levels (with "b" for the breadth-first ones), +R, N: the configuration's name in the table."""
    bfs = f"b{row['breadth']}" if row.get("breadth") else "  "
    return f"{row['n']:6d} L{row['levels']}{bfs}{'+R' if row['residue_levels'] else '  '} N={row['moduli']:2d}"


def line(row: dict) -> str:
    if "exception" in row:
        return (f"{label(row)} {row['scaling']:4s}  FAILED: {row['exception']}")
    e, d = row["error"], row["dgemm_error"]
    gemm = ("  int8 " + ", ".join(f"{name} {ms:.2f} ms ({row['int8_tops'][name]:.0f} TOPS)"
                                  for name, ms in row["int8_ms"].items()) if "int8_ms" in row else "")
    return (f"{label(row)} {row['scaling']:4s} bits={row['bits'][0]}/{row['bits'][1]}  "
            f"ours {row['ours_ms']:8.2f} ms {row['tflops']:6.1f} TF  dgemm {row['dgemm_ms']:8.2f} ms  "
            f"ratio {row['ratio']:5.3f}  err {e['max_rel_AB']:.2e}/{e['rms_rel']:.2e} vs dgemm "
            f"{d['max_rel_AB']:.2e}/{d['rms_rel']:.2e}  ws {row['workspace_bytes'] / 2**30:5.1f} GiB{gemm}")


def breakdown_line(row: dict) -> str:
    """The passes of one call: measured ms (the traffic model's ms at the copy bandwidth)."""
    b = row["breakdown"]
    model = {} if row["residue_levels"] else b["model_ms"]  # the model is the plain scheme's
    ops = 7**row["levels"] * row["moduli"] * 2.0 * (row["n"] >> row["levels"]) ** 3
    parts = []
    for name, ms in b["ms"].items():
        extra = (f" ({model[name]:.2f})" if name in model else
                 f" ({ops / ms / 1e9:.0f} TOPS)" if name == "int8 GEMMs" and not row["residue_levels"] else "")
        parts.append(f"{name} {ms:.2f}{extra}")
    return (f"       passes in ms (model at {b['copy_GBps']:.0f} GB/s), {b['leaves']} leaf call(s), "
            f"total {b['total_ms']:.2f}: " + " | ".join(parts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for ozaki.txt and ozaki.json")
    parser.add_argument("--quick", action="store_true", help="n = 2048 only, N = 14 and 16, levels 0 and 1")
    parser.add_argument("--budget", type=float, default=None, metavar="GIB",
                        help="workspace budget per leaf product in GiB (the leaf then runs in tiles of C)")
    parser.add_argument("-n", type=int, nargs="+", default=None, help="sizes (default 4096 8192 16384)")
    parser.add_argument("--moduli", type=int, nargs="+", default=None, help="N at level 0 (default 13..18)")
    parser.add_argument("--level-moduli", type=int, nargs="+", default=None, help="N with levels (default 14 15)")
    parser.add_argument("--levels", type=int, nargs="+", default=None, help="Strassen levels (default 0 1 2)")
    parser.add_argument("--scheme", default="algorithms/strassen.bl")
    parser.add_argument("--scalings", nargs="+", default=list(ozaki.SCALINGS), choices=ozaki.SCALINGS,
                        help="how rows and columns are scaled to integers (default: both)")
    parser.add_argument("--residue-levels", type=int, nargs="+", default=[0, 1], choices=[0, 1],
                        help="Strassen levels on the int8 residues inside each leaf (exact; default 0 and 1)")
    parser.add_argument("--breadth", type=int, nargs="+", default=[0],
                        help="how many of the Strassen levels run breadth-first (default 0: depth-first)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--breakdown", action="store_true",
                        help="time every pass of one more call of each configuration (CUDA events)")
    args = parser.parse_args()
    sizes = args.n or ([2048] if args.quick else [4096, 8192, 16384])
    level_counts = args.levels or ([0, 1] if args.quick else [0, 1, 2])
    plain = args.moduli or ([14, 16] if args.quick else [13, 14, 15, 16, 17, 18])
    with_levels = args.level_moduli or ([14, 16] if args.quick else [14, 15])
    args.out.mkdir(parents=True, exist_ok=True)
    program = load(args.scheme)
    backend = CupyBackend()
    rows, started = [], time.time()
    print(f"ozaki bench on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: n {sizes}, levels "
          f"{level_counts}, N {plain} (L0) / {with_levels} (L>0), scheme {args.scheme}", flush=True)
    for n in sizes:
        rng = cp.random.default_rng(n)
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        C, Cd = cp.empty((n, n)), cp.empty((n, n))
        picker = np.random.default_rng(0)
        rows_, cols_ = np.sort(picker.choice(n, SAMPLE, replace=False)), np.sort(picker.choice(n, SAMPLE, replace=False))
        t0 = time.time()
        exact, scale = exact_sample(A, B, rows_, cols_)
        print(f"n={n}: exact reference of {SAMPLE}x{SAMPLE} entries in {time.time() - t0:.1f} s", flush=True)
        sample = (rows_, cols_, exact, scale)
        bandwidth = copy_bandwidth(A, C) if args.breakdown else None
        if bandwidth:
            print(f"n={n}: copy bandwidth {bandwidth / 1e9:.0f} GB/s (read + write of an {n}x{n} float64 copy)")

        def dgemm(Cd=Cd, A=A, B=B):
            backend.gemm(A, B, Cd, 1.0, 0.0)

        for levels in level_counts:
            breadths = sorted({min(b, levels) for b in args.breadth})
            for count, scaling, residue, breadth in itertools.product(plain if levels == 0 else with_levels,
                                                                      args.scalings, args.residue_levels, breadths):
                try:
                    row = run_config(program, n, levels, count, scaling, residue, A, B, C, Cd, dgemm, sample,
                                     args.repeat, args.budget, bandwidth, breadth)
                except Exception as error:  # loud, and the rest still runs
                    traceback.print_exc()
                    row = {"n": n, "levels": levels, "breadth": breadth, "residue_levels": residue, "moduli": count,
                           "scaling": scaling, "exception": repr(error)}
                gc.collect()
                cp.get_default_memory_pool().free_all_blocks()
                rows.append(row)
                print(line(row), f"[{time.time() - started:.0f} s]", flush=True)
                if "breakdown" in row:
                    print(breakdown_line(row), flush=True)
        del A, B, C, Cd, dgemm
        gc.collect()
        cp.get_default_memory_pool().free_all_blocks()
    failures = [r for r in rows if "exception" in r]
    if args.quick:  # a wrong result is off by O(1); FP64 Strassen levels may add a few times DGEMM's error
        failures += [r for r in rows if "exception" not in r and
                     r["error"]["max_rel_AB"] > 16 * r["dgemm_error"]["max_rel_AB"] + 2.0**-46]
    text = "\n".join(line(r) + ("\n" + breakdown_line(r) if "breakdown" in r else "") for r in rows)
    (args.out / "ozaki.txt").write_text(text + "\n")
    (args.out / "ozaki.json").write_text(json.dumps({"rows": rows, "seconds": time.time() - started}, indent=1) + "\n")
    print(f"wrote {args.out / 'ozaki.txt'} and ozaki.json in {time.time() - started:.0f} s")
    if failures:
        print(f"FAILED: {len(failures)} configuration(s):\n" + "\n".join(line(r) for r in failures), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
