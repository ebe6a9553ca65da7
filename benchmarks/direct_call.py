"""Host time of a direct product call (no graph) on the GPU, and what it costs a small product.

A direct call's checks (alpha, beta, the arrays' kind, layout and overlap, the plan for the size)
run before its first launch, so at 2048-5120 their microseconds are GPU time lost: the crossover
table's "without graphs" column.  For each breadth-first configuration with batched leaves:

- ``checks``: host µs per call with the executor's run taken out (median of 15 rounds of 200 calls);
- ``call``: host µs per call of five issued back to back after the GPU went idle (the crossover
  table's host timing, ``breadth._host_us``);
- the direct call's time against cuBLAS (CUDA events, interleaved, median of --repeat), and its graph's.

With --profile, the whole call's functions by own time (cProfile) at the first size.

    python3 benchmarks/direct_call.py --sizes 2048 3072 4096 5120 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from statistics import median

import cupy
from breadth import _host_us, time_rotated

import bilinear

CONFIGS = {"winograd L1 bfs1 batched": dict(levels=1, breadth=1), "winograd L2 bfs2 batched": dict(levels=2, breadth=2)}


def checks_us(product, A, B, out, rounds: int = 15, calls: int = 200) -> float:
    """Host µs per call of everything but the executor's run."""
    executor = product.executor_for(*A.shape, B.shape[1])
    run, executor.run = executor.run, lambda *args, **kwargs: None
    try:
        samples = []
        for _ in range(rounds):
            begin = time.perf_counter()
            for _ in range(calls):
                product(A, B, out=out)
            samples.append((time.perf_counter() - begin) / calls)
    finally:
        executor.run = run
    return median(samples) * 1e6


def profile(product, A, B, out, calls: int = 200) -> str:
    """The whole call's functions by own time (its launches too), the GPU idle before each call."""
    profiler = cProfile.Profile()
    for _ in range(calls):
        cupy.cuda.Device().synchronize()
        profiler.enable()
        product(A, B, out=out)
        profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
    return text.getvalue()


def one_size(n: int, repeat: int, show_profile: bool) -> list[str]:
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    reference = cupy.matmul(A, B)
    calls = {"cuBLAS": lambda: cupy.matmul(A, B, out=reference)}
    lines = [f"n={n}"]
    for label, levels in CONFIGS.items():
        product = bilinear.compile("winograd", dtype="float64", launch="batched", backend="cupy", **levels)
        out = cupy.zeros((n, n))
        product(A, B, out=out)
        error = float(cupy.abs(out - reference).max() / cupy.abs(reference).max())
        calls[label] = (lambda p, o: lambda: p(A, B, out=o))(product, out)
        calls[f"{label} graph"] = product.capture(A, B, out)
        lines.append(f"  {label}: checks {checks_us(product, A, B, out):.1f} us, call {_host_us(calls[label]):.1f} us "
                     f"(five after idle), max error {error:.1e}")
        if show_profile and label.startswith("winograd L1"):  # (the caller asks at one size)
            lines.append(profile(product, A, B, out))
    times = time_rotated(calls, repeat)
    cublas = median(times["cuBLAS"])
    lines += [f"  {label:34s} {median(ms):8.3f} ms  ratio {cublas / median(ms):.3f}" for label, ms in times.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 3072, 4096, 5120])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    for n in args.sizes:
        print("\n".join(one_size(n, args.repeat, args.profile and n == args.sizes[0])), flush=True)


if __name__ == "__main__":
    main()
