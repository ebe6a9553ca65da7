"""How much of msmes2's element-wise time could hide behind its leaf GEMMs, at best (a probe).

msmes2 at FP64 16384 spends about 20 ms of ~147 in element-wise passes and the rest in 49 leaf
DGEMMs.  Before building dependency-aware overlap of passes with GEMMs, this bounds its gain by
timing the same product three ways against cuBLAS, interleaved after a sustained warm-up:

- ``serial``: as it runs (every pass and GEMM in stream order);
- ``passes beside``: every element-wise pass issued on a second stream with no dependency at all,
  joined at the end of the call (racy: C is wrong, and A and B are copied back before each call,
  untimed, for every configuration alike); ``high priority`` is the same with the pass stream at
  the highest priority;
- ``no passes``: the passes left out (the leaves alone).

``serial - passes beside`` is the most any overlap can save; ``serial - no passes`` the passes' cost.

    python3 benchmarks/overlap_upper.py -n 16384 --repeat 9
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from breadth import ROOT, time_rotated  # noqa: E402

import bilinear  # noqa: E402
from bilinear.measure import median, relative_error  # noqa: E402


def _variant(product, mode: str):
    """The product's call with its element-wise passes issued as ``mode`` says."""
    backend = product.backend
    issue = type(backend).elementwise.__get__(backend)
    if mode == "serial":
        return lambda A, B, out: product(A, B, out=out)
    if mode == "no passes":
        def call(A, B, out):
            backend.elementwise = lambda kernel, views: None
            try:
                product(A, B, out=out)
            finally:
                del backend.elementwise
        return call
    side = (cupy.cuda.ExternalStream(cupy.cuda.runtime.streamCreateWithPriority(1, -100))  # clamped to the highest
            if mode == "high priority" else cupy.cuda.Stream(non_blocking=True))

    def beside(kernel, views):
        with side:
            issue(kernel, views)

    def call(A, B, out):
        main = cupy.cuda.get_current_stream()
        side.wait_event(main.record())
        backend.elementwise = beside
        try:
            product(A, B, out=out)
        finally:
            del backend.elementwise
        main.wait_event(side.record())
    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=16384)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    product = bilinear.compile(bilinear.load(ROOT / "algorithms" / "msmes2.bl"), levels=1, dtype=args.dtype)
    rng = cupy.random.default_rng(args.n)
    A0, B0 = (rng.standard_normal((args.n, args.n), dtype=args.dtype) for _ in range(2))
    A, B = A0.copy(), B0.copy()
    reference, out = cupy.matmul(A, B), cupy.empty((args.n, args.n), dtype=args.dtype)
    product(A, B, out=out)
    print(f"serial: error {relative_error(out, reference, A, B):.1e}", flush=True)
    calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=reference)}
    for mode in ("serial", "passes beside", "high priority", "no passes"):
        calls[mode] = lambda run=_variant(product, mode): run(A, B, out)

    def fresh() -> None:  # the racy variants leave A and B changed: every call starts from the same data
        A[...] = A0
        B[...] = B0

    samples = time_rotated(calls, args.repeat, before=fresh)
    ms = {label: median(times) for label, times in samples.items()}
    rows = {label: {"ms": ms[label], "ratio": ms["cuBLAS"] / ms[label]} for label in ms}
    for label, row in rows.items():
        print(f"{args.dtype} n={args.n} {label:<14} {row['ms']:9.3f} ms  ratio {row['ratio']:.3f}")
    print(f"most any overlap saves: {ms['serial'] - ms['passes beside']:.2f} ms "
          f"({ms['serial'] - ms['high priority']:.2f} at high priority); the passes cost "
          f"{ms['serial'] - ms['no passes']:.2f} ms")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "dtype": args.dtype, "repeat": args.repeat, "rows": rows,
                                         "samples": samples}, indent=2))


if __name__ == "__main__":
    main()
