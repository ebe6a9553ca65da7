"""Check, tune and time the fused product kernel against cuBLAS, on the GPU machine.

    python3 benchmarks/product_kernel.py --check --tune float64,float32 \
        --sizes 4096,8192,16384 --msmes 16384 --out $OUT

Everything is measured in one process: CUDA events after warm-up, the median of
``--repeats``, our kernel and cuBLAS interleaved, fresh normal random inputs.
The table is printed last; ``results.json`` and the CUDA source of each chosen
kernel (for ``cuobjdump -sass``) go under ``--out``.  ``--sanitize`` runs only a
small correctness case (for compute-sanitizer memcheck / racecheck).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
try:  # the package's own __init__ pulls in the whole compiler; the kernel needs none of it
    import bilinear  # noqa: F401
except Exception as error:  # noqa: BLE001 -- any failure: load the subpackages directly
    import types

    print(f"note: import bilinear failed ({error}); loading its subpackages directly", file=sys.stderr)
    shim = types.ModuleType("bilinear")
    shim.__path__ = [str(ROOT / "bilinear")]
    sys.modules["bilinear"] = shim

from bilinear.lower.product import (
    FusedProduct,
    ProductStageSpec,
    SpecTerm,
    TileConfig,
    gemm_spec,
    reference_update,
    render_product_stage,
)
from bilinear.runtime import tune, tuning
from bilinear.runtime.product import ProductStage

TOL = {"float64": 1e-12, "float32": 2e-5}


def terms(*pairs) -> tuple[SpecTerm, ...]:
    return tuple(SpecTerm(slot, Fraction(coef)) for slot, coef in pairs)


def msmes_products1(dtype: str, batch: int = 1) -> ProductStageSpec:
    """MSMES stage products1 over blocks 0..3 = 11, 12, 21, 22 of A, B and C."""
    products = (
        FusedProduct(terms((2, 1)), terms((0, 1)), terms((2, 1), (3, -1))),  # A21 * B11 -> +C21 -C22
        FusedProduct(terms((0, 1)), terms((1, 1)), terms((1, 1), (3, 1))),  # A11 * B12 -> +C12 +C22
        FusedProduct(terms((3, 1)), terms((2, 1)), terms((0, 1), (2, 1))),  # A22 * B21 -> +C11 +C21
        FusedProduct(terms((1, 1)), terms((3, 1)), terms((0, -1), (1, 1))),  # A12 * B22 -> -C11 +C12
    )
    return ProductStageSpec(f"msmes_products1_{dtype}_{batch}", dtype, products, 4, 4, 4, batch)


def sums_stage(dtype: str, batch: int = 2) -> ProductStageSpec:
    """Operand sums with fractional coefficients and a target shared by two products."""
    products = (
        FusedProduct(terms((0, 1), (3, 1)), terms((0, 1), (3, 1)), terms((0, 1), (3, Fraction(1, 3)))),
        FusedProduct(terms((2, -1), (1, Fraction(1, 2)), (0, 2)), terms((1, 1)), terms((3, -2))),
        FusedProduct(terms((1, 1)), terms((2, 1), (3, -1)), terms((1, 1))),
    )
    return ProductStageSpec(f"sums_{dtype}_{batch}", dtype, products, 4, 4, 4, batch)


def parent_view(cp, rng, rows: int, cols: int, dtype: str, aligned: bool):
    """A rows×cols view into a larger matrix: odd leading dimension and offset unless aligned."""
    vec = 16 // np.dtype(dtype).itemsize
    ld = -(-cols // vec) * vec + (2 * vec if aligned else 2 * vec + 1)
    offset = vec if aligned else 1
    parent = rng.standard_normal((rows + 2, ld), dtype=dtype)
    return parent, parent[1 : rows + 1, offset : offset + cols]


def run_case(cp, spec: ProductStageSpec, config: TileConfig | None, M: int, N: int, K: int, aligned: bool, seed: int):
    """Run one stage on random views; return (relative error, untouched-outside ok)."""
    rng = cp.random.default_rng(seed)
    stage = ProductStage(spec, config)
    entries, parents = [], []
    for _ in range(spec.batch):
        sides = []
        for count, rows, cols in ((spec.n_a, M, K), (spec.n_b, K, N), (spec.n_c, M, N)):
            made = [parent_view(cp, rng, rows, cols, spec.dtype, aligned) for _ in range(count)]
            parents.append([p for p, _ in made])
            sides.append([v for _, v in made])
        entries.append(sides)
    c_parents_before = [[p.copy() for p in group] for group in parents[2::3]]
    before = [[c.astype(np.float64) for c in e[2]] for e in entries]
    alpha = -0.75
    stage(entries, M, N, K, alpha=alpha)
    cp.cuda.Device().synchronize()
    worst, outside_ok = 0.0, True
    for e, (a_views, b_views, c_views) in enumerate(entries):
        expected = reference_update(spec, (a_views, b_views, c_views), alpha, cp)
        for slot, c in enumerate(c_views):
            got = c.astype(np.float64) - before[e][slot]
            scale = float(cp.linalg.norm(expected[slot])) or 1.0
            worst = max(worst, float(cp.linalg.norm(got - expected[slot])) / scale)
            parent, old = parents[3 * e + 2][slot], c_parents_before[e][slot]
            mask = cp.ones(parent.shape, dtype=bool)
            offset = 16 // np.dtype(spec.dtype).itemsize if aligned else 1
            mask[1 : M + 1, offset : offset + N] = False
            outside_ok &= bool(cp.all(parent[mask] == old[mask]))
    return worst, outside_ok


def check(cp, configs: dict) -> list[dict]:
    """Correctness over odd sizes, unaligned views, shared targets, operand sums, batches."""
    rows = []
    shapes = [(1, 1, 1), (17, 33, 9), (130, 257, 31), (257, 129, 300), (64, 64, 64)]
    seed = 0
    for dtype in ("float64", "float32"):
        config = configs.get((dtype, "single"))
        for aligned in (True, False):
            for M, N, K in shapes:
                seed += 1
                err, ok = run_case(cp, gemm_spec(dtype), config, M, N, K, aligned, seed)
                rows.append(
                    {
                        "case": f"gemm {dtype} {M}x{N}x{K} {'aligned' if aligned else 'unaligned'}",
                        "err": err,
                        "outside_ok": ok,
                        "pass": ok and err < TOL[dtype],
                    }
                )
        for M, N, K in ((37, 41, 29), (200, 136, 260)):
            seed += 1
            err, ok = run_case(cp, msmes_products1(dtype, 3), config, M, N, K, M % 2 == 0, seed)
            rows.append(
                {
                    "case": f"msmes products1 {dtype} batch 3 {M}x{N}x{K}",
                    "err": err,
                    "outside_ok": ok,
                    "pass": ok and err < TOL[dtype],
                }
            )
            seed += 1
            err, ok = run_case(cp, sums_stage(dtype, 2), configs.get((dtype, "sum")), M, N, K, M % 2 == 0, seed)
            rows.append(
                {
                    "case": f"sums {dtype} batch 2 {M}x{N}x{K}",
                    "err": err,
                    "outside_ok": ok,
                    "pass": ok and err < TOL[dtype],
                }
            )
    return rows


def cublas_accumulate(cp):
    """C += A @ B through cuBLAS (beta = 1), as the runtime's library leaves do."""
    try:
        from cupy import cublas

        return lambda A, B, C: cublas.gemm("N", "N", A, B, out=C, alpha=1.0, beta=1.0)
    except (ImportError, AttributeError):
        return lambda A, B, C: cp.matmul(A, B, out=C)


def bench_sizes(cp, dtype: str, config: TileConfig, sizes, repeats: int) -> list[dict]:
    rows = []
    spec = gemm_spec(dtype)
    stage = ProductStage(spec, config)
    gemm = cublas_accumulate(cp)
    for n in sizes:
        a_views, b_views, c_views = tune.operands(spec, n, n, n, seed=n)[0]
        entry = [a_views[0], b_views[0], c_views[0]]
        ours, lib = tune.time_calls([lambda e=entry, n=n: stage([e], n, n, n), lambda e=entry: gemm(*e)], repeats)
        flops = 2.0 * n**3
        rows.append(
            {
                "dtype": dtype,
                "n": n,
                "config": config.label(),
                "cublas_tflops": flops / lib / 1e12,
                "ours_tflops": flops / ours / 1e12,
                "ratio": lib / ours,
            }
        )
        del a_views, b_views, c_views, entry
        cp.get_default_memory_pool().free_all_blocks()
    return rows


def bench_msmes(cp, n: int, config: TileConfig, repeats: int) -> dict:
    """products1 of one MSMES level on n×n matrices (blocks n/2) vs cuBLAS doing the same 4 products
    into their first target only (a lower bound for library leaves, which need 8 GEMMs or a temporary)."""
    spec = msmes_products1("float64", 1)
    stage = ProductStage(spec, config)
    h = n // 2
    rng = cp.random.default_rng(1)
    A, B, C = (rng.standard_normal((n, n)) for _ in range(3))

    def blocks(X):
        return [X[:h, :h], X[:h, h:], X[h:, :h], X[h:, h:]]

    a, b, c = blocks(A), blocks(B), blocks(C)
    gemm = cublas_accumulate(cp)

    def library():
        for product in spec.products:
            gemm(a[product.left[0].slot], b[product.right[0].slot], c[product.targets[0].slot])

    ours, lib = tune.time_calls([lambda: stage([[a, b, c]], h, h, h), library], repeats)
    flops = 4 * 2.0 * h**3
    return {
        "n": n,
        "config": config.label(),
        "ours_tflops": flops / ours / 1e12,
        "cublas_4gemm_tflops": flops / lib / 1e12,
        "ratio": lib / ours,
    }


def peak_source(k: int) -> str:
    """A register-only loop of independent FP64 mma.sync (8 accumulators per warp): the DMMA ceiling."""
    na, nb = k // 2, k // 4
    a_ops = ",".join(f"%{4 + i}" for i in range(na))
    b_ops = ",".join(f"%{4 + na + i}" for i in range(nb))
    a_args = ", ".join(f'"d"(a[{i}])' for i in range(na))
    b_args = ", ".join(f'"d"(b[{i}])' for i in range(nb))
    return f"""
extern "C" __global__ void __launch_bounds__(256) peak(double* out, int iters) {{
  const int lane = threadIdx.x % 32;
  double a[{na}], b[{nb}], acc[8][4];
  for (int i = 0; i < {na}; ++i) a[i] = lane * 1e-3 + i;
  for (int i = 0; i < {nb}; ++i) b[i] = lane * 1e-3 - i;
  for (int j = 0; j < 8; ++j) for (int e = 0; e < 4; ++e) acc[j][e] = 0.0;
  for (int it = 0; it < iters; ++it) {{
#pragma unroll
    for (int j = 0; j < 8; ++j)
      asm volatile("mma.sync.aligned.m16n8k{k}.row.col.f64.f64.f64.f64 {{%0,%1,%2,%3}}, {{{a_ops}}}, {{{b_ops}}}, "
                   "{{%0,%1,%2,%3}};" : "+d"(acc[j][0]), "+d"(acc[j][1]), "+d"(acc[j][2]), "+d"(acc[j][3])
                   : {a_args}, {b_args});
  }}
  double s = 0.0;
  for (int j = 0; j < 8; ++j) for (int e = 0; e < 4; ++e) s += acc[j][e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}}
"""


def bench_peak(cp, repeats: int) -> list[dict]:
    """TF of bare FP64 mma.sync at 8 and 16 resident warps per SM (blocks of 8 warps)."""
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rows = []
    for k in (4, 8, 16):
        kernel = cp.RawKernel(peak_source(k), "peak")
        for blocks_per_sm in (1, 2):
            grid = sms * blocks_per_sm
            out = cp.empty(grid * 256)
            iters = 4096 * 16 // k
            launch = functools.partial(kernel, (grid,), (256,), (out, np.int32(iters)))
            (seconds,) = tune.time_calls([launch], repeats)
            flops = grid * 8 * iters * 8 * (16 * 8 * k * 2)
            rows.append({"k": k, "warps_per_sm": 8 * blocks_per_sm, "tflops": flops / seconds / 1e12})
    return rows


def tune_table(cp, dtype: str, kind: str, keep: int, repeats: int, out: Path | None) -> tuple[TileConfig, list[dict]]:
    started = time.time()
    result = tune.tune(dtype, kind, n=4096, keep=keep, repeats=repeats, jobs=12, save=True)
    rows = []
    for cand in result.candidates:
        seconds = result.seconds.get(cand.config)
        rows.append(
            {
                "dtype": dtype,
                "kind": kind,
                "config": cand.config.label(),
                "regs": cand.resources.registers,
                "local": cand.resources.spill_bytes,
                "blocks_per_sm": cand.occupancy.blocks,
                "warps": cand.occupancy.warps,
                "limiter": cand.occupancy.limiter,
                "verdict": cand.verdict,
                "tflops": 2 * 4096**3 / seconds / 1e12 if seconds else None,
            }
        )
    print(
        f"tuned {dtype}/{kind} in {time.time() - started:.0f} s: best {result.best.label()} {result.tflops:.1f} TF",
        flush=True,
    )
    if out:
        spec = tune.representative_spec(dtype, kind)
        (out / f"best_{dtype}_{kind}.cu").write_text(render_product_stage(spec, result.best))
    return result.best, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tune", default="", help="dtypes to tune, e.g. float64,float32")
    parser.add_argument("--tune-sums", default="", help="dtypes whose operand-sum kind to tune too")
    parser.add_argument("--keep", type=int, default=12, help="survivors to time per tuning")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--sanitize", action="store_true", help="only a small correctness case")
    parser.add_argument("--sizes", default="", help="plain GEMM sizes, e.g. 4096,8192,16384")
    parser.add_argument("--msmes", type=int, default=0, help="n for the MSMES products1 stage")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peak", action="store_true", help="bare mma.sync throughput (the DMMA ceiling)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    import cupy as cp

    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    if args.sanitize:
        small = TileConfig(64, 64, 16, 2, 2, 3, 8, 2, 2)  # double-buffered fragments
        single = TileConfig(64, 64, 16, 2, 2, 3, 16, 2, 1)
        for spec, config, dims, aligned in (
            (gemm_spec("float64"), small, (70, 45, 33), False),
            (gemm_spec("float64"), small, (64, 96, 48), True),
            (gemm_spec("float64", "gemm_single"), single, (64, 96, 48), True),
            (msmes_products1("float64", 2), small, (40, 36, 50), True),
            (sums_stage("float64", 2), single, (33, 40, 20), False),
            (sums_stage("float64", 2), small, (64, 40, 32), True),
            (gemm_spec("float32"), TileConfig(64, 64, 8, 2, 2, 3, 1, 4, 2), (70, 45, 33), True),
        ):
            err, ok = run_case(cp, spec, config, *dims, aligned, 7)
            print(f"sanitize {spec.name} {dims} err={err:.2e} outside_ok={ok}")
        return 0

    results: dict = {"device": tuning.gpu_model()}
    if args.peak:
        results["peak"] = bench_peak(cp, args.repeats)
    chosen: dict = {}
    for dtype in filter(None, args.tune.split(",")):
        kinds = ["single", "sum"] if dtype in args.tune_sums.split(",") else ["single"]
        for kind in kinds:
            best, rows = tune_table(cp, dtype, kind, args.keep if kind == "single" else 4, args.repeats, args.out)
            chosen[(dtype, kind)] = best
            results.setdefault("tuning", []).extend(rows)
    configs = {
        key: chosen.get(key) or tuning.config_for(tune.representative_spec(*key))
        for key in [(d, k) for d in ("float64", "float32") for k in ("single", "sum")]
    }
    results["configs"] = {f"{d}/{k}": c.label() for (d, k), c in configs.items()}
    if args.check:
        results["check"] = check(cp, configs)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    for dtype in ("float64", "float32"):
        if sizes:
            results.setdefault("sizes", []).extend(
                bench_sizes(cp, dtype, configs[(dtype, "single")], sizes, args.repeats)
            )
    if args.msmes:
        results["msmes"] = bench_msmes(cp, args.msmes, configs[("float64", "single")], args.repeats)
    if args.out:
        (args.out / "results.json").write_text(json.dumps(results, indent=2, default=str))
    print_tables(results)
    failed = [r for r in results.get("check", []) if not r["pass"]]
    return 1 if failed else 0


def print_tables(results: dict) -> None:
    for row in results.get("peak", []):
        print(f"  peak mma.sync m16n8k{row['k']} f64, {row['warps_per_sm']} warps/SM: {row['tflops']:.1f} TF")
    for row in results.get("tuning", []):
        tf = f"{row['tflops']:.1f} TF" if row["tflops"] else ""
        print(
            f"  {row['dtype']}/{row['kind']} {row['config']:30s} regs={row['regs']:3d} local={row['local']:3d} "
            f"blk/SM={row['blocks_per_sm']} warps={row['warps']:2d} ({row['limiter']}) {row['verdict']} {tf}"
        )
    for row in results.get("check", []):
        print(
            f"  {'ok  ' if row['pass'] else 'FAIL'} {row['case']:45s} rel.err={row['err']:.2e} "
            f"outside untouched={row['outside_ok']}"
        )
    if "msmes" in results:
        r = results["msmes"]
        print(
            f"msmes products1 n={r['n']} ({r['config']}): ours {r['ours_tflops']:.1f} TF, cuBLAS 4 GEMMs "
            f"{r['cublas_4gemm_tflops']:.1f} TF, ratio {r['ratio']:.3f}"
        )
    print(f"device: {results.get('device')}")
    print(f"{'dtype':8s} {'n':>6s} {'cuBLAS TF':>10s} {'ours TF':>8s} {'ratio':>6s}  config")
    for r in results.get("sizes", []):
        print(
            f"{r['dtype']:8s} {r['n']:6d} {r['cublas_tflops']:10.1f} {r['ours_tflops']:8.1f} {r['ratio']:6.3f}  "
            f"{r['config']}"
        )


if __name__ == "__main__":
    sys.exit(main())
