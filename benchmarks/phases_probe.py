"""msmes2 with its products in the fewest phases found against the greedy split of before, in one process.

`single_target` changes the basis of C at each boundary between a product stage's phases; it now
searches shuffled orders for fewer phases (bilinear/schedule/basis.py, split_phases), which moved
msmes2's C passes from 209 to 175 quarter blocks (177 to 142 where C starts at zero).  This builds
msmes2 both ways and times them against cuBLAS, interleaved after a sustained warm-up (CUDA events,
medians; ratio = cuBLAS time / ours), each checked against cuBLAS first:

    python3 benchmarks/phases_probe.py -n 16384 --repeat 15
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
import bilinear.schedule.basis as basis  # noqa: E402
from bilinear.measure import median, relative_error  # noqa: E402


def _build(dtype: str, greedy: bool):
    searched = basis.split_phases
    if greedy:
        basis.split_phases = basis._greedy_phases
    try:  # a program of its own: the lowering caches prepared schedules by the objects they came from
        return bilinear.compile(bilinear.load(ROOT / "algorithms" / "msmes2.bl"), levels=1, dtype=dtype)
    finally:
        basis.split_phases = searched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=16384)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    products = {"fewest phases": _build(args.dtype, False), "greedy phases": _build(args.dtype, True)}
    stages = {label: sum(stage.is_product_stage() for stage in product.lowered.levels[0].schedule.stages)
              for label, product in products.items()}
    assert stages["fewest phases"] < stages["greedy phases"], stages  # the two builds differ
    rng = cupy.random.default_rng(args.n)
    A, B = (rng.standard_normal((args.n, args.n), dtype=args.dtype) for _ in range(2))
    reference, out = cupy.matmul(A, B), cupy.empty((args.n, args.n), dtype=args.dtype)
    calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=reference)}
    for label, product in products.items():
        product(A, B, out=out)
        print(f"{label}: {stages[label]} product stages, error {relative_error(out, reference, A, B):.1e}", flush=True)
        calls[label] = lambda product=product: product(A, B, out=out)
    samples = time_rotated(calls, args.repeat)
    ms = {label: median(times) for label, times in samples.items()}
    rows = {label: {"ms": ms[label], "ratio": ms["cuBLAS"] / ms[label]} for label in ms}
    for label, row in rows.items():
        print(f"{args.dtype} n={args.n} {label:<14} {row['ms']:9.3f} ms  ratio {row['ratio']:.3f}")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "dtype": args.dtype, "repeat": args.repeat, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
