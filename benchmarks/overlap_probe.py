"""Does an element-wise pass hide behind a running DGEMM on the GPU?  (issue 13, msmes at 0 B)

MSMES at n = 16384 spends ≈ 8 ms of its ≈ 150 ms in element-wise stages that run between its
seven 8192³ leaf GEMMs.  Their bytes compete little with a compute-bound GEMM, so if the
hardware runs both at once, issuing element-wise statements on a second stream as soon as their
own dependencies allow would hide them.  This times, interleaved (CUDA events, median of
--repeat), a DGEMM of n³ alone, `--passes` element-wise passes (e = f + g over n×n) alone, both
on one stream, and both on two streams started together, with the pass stream at default or
high priority:

    python3 benchmarks/overlap_probe.py -n 8192 --passes 2

hidden = (serial - concurrent) / element-wise alone: 1 means the passes cost nothing beside the GEMM.
"""

from __future__ import annotations

import argparse
import statistics

import cupy as cp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=8192)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dtype", default="float64")
    args = parser.parse_args()
    n, rng = args.n, cp.random.default_rng(1)
    x, y, z = (rng.standard_normal((n, n), dtype=args.dtype) for _ in range(3))
    f, g, e = (rng.standard_normal((n, n), dtype=args.dtype) for _ in range(3))
    main_stream = cp.cuda.Stream(non_blocking=True)
    side = {"same": cp.cuda.Stream(non_blocking=True),
            "high": cp.cuda.ExternalStream(cp.cuda.runtime.streamCreateWithPriority(1, -100))}  # clamped to the highest

    def gemm():
        cp.matmul(x, y, out=z)

    def passes():
        for _ in range(args.passes):
            cp.add(f, g, out=e)

    def timed(body) -> float:
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        with main_stream:
            start.record()
            body()
            stop.record()
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop)

    def concurrent(priority):
        def body():
            fork = cp.cuda.Event()
            fork.record()
            side[priority].wait_event(fork)
            gemm()
            with side[priority]:
                passes()
                done = cp.cuda.Event()
                done.record()
            main_stream.wait_event(done)
        return body

    cases = {"gemm": gemm, "passes": passes, "serial": lambda: (gemm(), passes()),
             "concurrent": concurrent("same"), "concurrent, passes high": concurrent("high")}
    for body in cases.values():
        timed(body)
    samples = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, body in cases.items():
            samples[name].append(timed(body))
    ms = {name: statistics.median(values) for name, values in samples.items()}
    for name, value in ms.items():
        print(f"{args.dtype} n={n} passes={args.passes}  {name:<24} {value:8.3f} ms")
    for name in ("concurrent", "concurrent, passes high"):
        print(f"hidden ({name}): {(ms['serial'] - ms[name]) / ms['passes']:.2f} of the passes' time")


if __name__ == "__main__":
    main()
