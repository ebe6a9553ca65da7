"""Issue 3's acceptance matrix on the GPU: correctness, restoration and zero extra bytes.

For every scheme, level 1-3, dtype and leaf kind, on square and rectangular
sizes including odd ones: the relative error ‖C−C_ref‖/(‖A‖‖B‖) against a
float64 product beside cuBLAS's own error and the documented bound, and how
well in-place inputs were restored.  Then msmes at n = 4096 and 8192, levels
1-3: bytes requested from CuPy's pool during the call (must be 0).

    python benchmarks/runtime_acceptance.py --out results.json [--leaf cublas fused]
"""

from __future__ import annotations

import argparse
import json
import time

import cupy as cp

import bilinear
from bilinear.api import lower_program
from bilinear.runtime.compiled import CompiledProduct, make_backend
from bilinear.runtime.prepare import compile_ahead
from bilinear.measure import error_bound, extra_bytes, float64_reference, random_inputs, relative_error, restoration
from bilinear.runtime.run import growth_run

SCHEMES = ["strassen", "winograd", "msmes", "rsmm", "grey333"]
SIZES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (1000, 1000, 1000), (1023, 517, 2049), (4097, 4097, 4097)]


def check(product, M, K, N, seed=0):
    dtype = product.dtype
    beta = 0.0 if product.lowered.levels[0].schedule.overwrites_c else 0.5
    A, B, C = random_inputs(cp, M, K, N, dtype, seed)
    A0, B0 = A.copy(), B.copy()
    exact = float64_reference(A, B, C, 1.0, beta)
    reference = A @ B + beta * C
    product(A, B, out=C, beta=beta)
    error = relative_error(C, exact, A0, B0)
    library = relative_error(reference, exact, A0, B0)
    bound = error_bound(dtype, K, growth_run(product, M, K, N))  # the levels this shape runs
    ra, rb = restoration(A, A0), restoration(B, B0)
    return {
        "error": error, "cublas_error": library, "bound": bound, "ok": error <= bound,
        "restore_ulps": max(ra.max_ulps, rb.max_ulps), "restore_normwise": max(ra.normwise, rb.normwise),
    }


def run_case(product, config, size) -> dict:
    scheme, leaf, levels, dtype = config
    M, K, N = size
    row = {"scheme": scheme, "leaf": leaf, "levels": levels, "dtype": dtype, "M": M, "K": K, "N": N}
    try:
        row.update(check(product, M, K, N))
    except Exception as error:  # keep going: one broken case must not cost the whole run
        row.update({"error": float("inf"), "bound": 1.0, "ok": False, "exception": repr(error),
                    "cublas_error": float("nan"), "restore_normwise": float("nan")})
        print(f"  {scheme} {leaf} L{levels} {dtype} {M}x{K}x{N}: {error!r}", flush=True)
    return row


def summary(config, rows) -> str:
    scheme, leaf, levels, dtype = config
    worst = max(rows, key=lambda r: r["error"] / r["bound"])
    return (
        f"{scheme:9s} {leaf:6s} L{levels} {dtype}: worst error {worst['error']:.2e} at "
        f"{worst['M']}x{worst['K']}x{worst['N']} (cuBLAS {worst['cublas_error']:.2e}, bound {worst['bound']:.2e}); "
        f"restore <= {max(r['restore_normwise'] for r in rows):.1e} normwise"
        + ("" if all(r["ok"] for r in rows) else "  FAIL")
    )


def zero_bytes(levels: int, n: int) -> int:
    product = bilinear.compile("algorithms/msmes.bl", dtype="float64", levels=levels, backend="cupy")
    A, B, C = random_inputs(cp, n, n, n, "float64")
    product(A, B, out=C)  # warm-up: compiles kernels, creates the cuBLAS handle
    return extra_bytes(lambda: product(A, B, out=C, beta=1.0), cp)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="runtime_acceptance.json")
    parser.add_argument("--leaf", nargs="+", default=["cublas"])
    parser.add_argument("--schemes", nargs="+", default=SCHEMES)
    parser.add_argument("--memory", action="store_true", help="also measure msmes's extra bytes at 4096 and 8192")
    parser.add_argument("--skip", nargs="*", default=[], metavar="SCHEME:LEAF:LEVELS",
                        help="configurations to leave out, e.g. grey333:fused:3")
    args = parser.parse_args()
    rows, failures = [], 0
    start = time.time()
    configs = [
        (scheme, leaf, levels, dtype)
        for scheme in args.schemes for leaf in args.leaf for levels in (1, 2, 3) for dtype in ("float32", "float64")
        if f"{scheme}:{leaf}:{levels}" not in args.skip
    ]
    print(f"{len(configs)} configurations", flush=True)
    backend = make_backend("cupy")
    products = {c: CompiledProduct(lower_program(f"algorithms/{c[0]}.bl", dtype=c[3], levels=c[2], leaf=c[1]), backend)
                for c in configs}
    compiled_schemes = set()
    for config in configs:
        if config[0] not in compiled_schemes:  # a scheme's kernels at once, before its cases
            compiled_schemes.add(config[0])
            began = time.time()
            jobs = [(p.lowered, size) for c, p in products.items() if c[0] == config[0] for size in SIZES]
            count = compile_ahead(jobs, backend)
            print(f"{config[0]}: compiled {count} kernels in {time.time() - began:.0f} s", flush=True)
        rows_of_config = [run_case(products[config], config, size) for size in SIZES]
        rows += rows_of_config
        failures += sum(not row["ok"] for row in rows_of_config)
        print(summary(config, rows_of_config), flush=True)
        with open(args.out, "w") as handle:  # after every configuration: a run cut short keeps its rows
            json.dump({"rows": rows, "memory": []}, handle, indent=1)
    memory = [{"levels": L, "n": n, "extra_bytes": zero_bytes(L, n)} for L in (1, 2, 3) for n in (4096, 8192)] if args.memory else []
    for entry in memory:
        print(f"msmes L{entry['levels']} n={entry['n']}: {entry['extra_bytes']} extra bytes", flush=True)
    with open(args.out, "w") as handle:
        json.dump({"rows": rows, "memory": memory}, handle, indent=1)
    print(f"{len(rows)} cases, {failures} over the bound; {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
