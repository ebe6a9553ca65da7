"""C = A·B with an accumulating schedule: the from-zero plan against zeroing C and accumulating.

With beta = 0 a call whose first level runs an accumulating schedule (msmes) used to zero C,
then run the schedule, whose first change of C's basis read and wrote those zeros.  It now runs
the schedule's from-zero plan (``bilinear.schedule.from_zero``).  The old path is still what a
call takes after zeroing C itself with beta = 1, so both are timed here in one process, beside
cuBLAS, in rounds that rotate their order after a sustained warm-up (FP64 at the power cap);
CUDA events, medians, ratio = cuBLAS time / ours.

    python3 benchmarks/from_zero.py --dtype float64 -n 16384 --configs "msmes L1 dfs (0 B)" --json r.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from breadth import CONFIGS, ROOT, _event_ms  # noqa: E402
from head_to_head import _sustain  # noqa: E402

import bilinear  # noqa: E402
from bilinear.measure import error_bound, median, relative_error  # noqa: E402


def _compile(label: str, dtype: str):
    _, scheme, levels, breadth, launch = next(c for c in CONFIGS if c[0] == label)
    return bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", levels=levels, breadth=breadth, dtype=dtype,
                            launch=launch)


def run(dtype: str, n: int, label: str, repeat: int) -> dict:
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n), dtype=dtype), rng.standard_normal((n, n), dtype=dtype)
    reference = cupy.matmul(A, B)
    out = cupy.full_like(reference, cupy.nan)  # the from-zero plan must not read it
    product = _compile(label, dtype)
    product(A, B, out=out)
    error = relative_error(out, reference, A, B)
    bound = error_bound(dtype, n, 2.3, product.lowered.options.levels)

    def zero_then_add():
        out.fill(0)
        product(A, B, out=out, beta=1.0)

    calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=reference), "from zero": lambda: product(A, B, out=out),
             "zero, then add": zero_then_add}
    _sustain(list(calls.values()))
    samples: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for round_ in range(repeat):
        for name in names[round_ % 3:] + names[: round_ % 3]:  # each goes first, second and last alike
            samples[name].append(_event_ms(calls[name]))
    ms = {name: median(values) for name, values in samples.items()}
    row = {"dtype": dtype, "n": n, "config": label, "error": error, "bound": bound, "correct": error <= bound,
           **{f"{name} ms": value for name, value in ms.items()},
           "ratio from zero": ms["cuBLAS"] / ms["from zero"], "ratio zero, then add": ms["cuBLAS"] / ms["zero, then add"]}
    print(f"{dtype} n={n:>5} {label:<28} cuBLAS {ms['cuBLAS']:9.3f} ms | from zero {ms['from zero']:9.3f} ms, "
          f"ratio {row['ratio from zero']:.3f} | zero, then add {ms['zero, then add']:9.3f} ms, ratio "
          f"{row['ratio zero, then add']:.3f} | err {error:.1e}{'' if error <= bound else ' WRONG'}", flush=True)
    product.release_workspace()
    cupy.get_default_memory_pool().free_all_blocks()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("-n", type=int, nargs="+", default=[16384])
    parser.add_argument("--configs", nargs="+", default=["msmes L1 dfs (0 B)"], help="labels of breadth.py's CONFIGS")
    parser.add_argument("--repeat", type=int, default=9, help="rounds (each call once per round)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    unknown = [label for label in args.configs if label not in {c[0] for c in CONFIGS}]
    if unknown:
        parser.error(f"unknown configurations {unknown}; known: {', '.join(c[0] for c in CONFIGS)}")
    rows = [run(args.dtype, n, label, args.repeat) for n in args.n for label in args.configs]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
