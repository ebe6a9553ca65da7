"""Probe: do the ozaki leaves of a breadth-first level gain from overlapping one leaf's memory-bound
passes (statistics, residues, reconstruction) with another's int8 GEMMs?  On the GPU.

Seven leaf products of n×n×n (as under one breadth-first Strassen level at 2n), N moduli, norm
scaling, run three ways and timed interleaved (CUDA events, median of --repeat):

- serial: one runner, one stream, one leaf after another (what the breadth-first runner does now);
- lockstep: two runners (a workspace and a cuBLAS handle each) on two streams, leaves alternating,
  no other ordering;
- pipelined: the same, and leaf r's passes start once leaf r-1's residues are written, and its int8
  GEMMs once leaf r-1's are done: the GEMMs run back to back while the passes of the leaves before
  and after them fill the memory system.

Every way must give the serial results bit for bit (exit 1 otherwise).

    python benchmarks/ozaki_pipeline_probe.py -n 8192 --moduli 14
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy as cp  # noqa: E402

from bilinear.measure import median, time_interleaved  # noqa: E402
from bilinear.runtime.ozaki_cuda import CudaOzaki  # noqa: E402

LEAVES = 7


class HookedOzaki(CudaOzaki):
    """A runner that calls ``hook(name)`` after issuing each pass (where timing records its events)."""

    hook = None

    def _mark(self, name: str) -> None:
        if self.hook is not None:
            self.hook(name)


def run_serial(runner, pairs, outs, count):
    for (a, b), c in zip(pairs, outs):
        runner.gemm(a, b, c, count=count, scaling="norm")


def run_streams(runners, streams, pairs, outs, count, pipelined: bool):
    origin = cp.cuda.get_current_stream()
    start = origin.record()
    for stream in streams:
        stream.wait_event(start)
    prepared, multiplied = [None] * len(pairs), [None] * len(pairs)
    for r, ((a, b), c) in enumerate(zip(pairs, outs)):
        stream, runner = streams[r % 2], runners[r % 2]

        def hook(name, r=r, stream=stream):
            if name == "start" and pipelined and r > 0:
                stream.wait_event(prepared[r - 1])
            elif name == "residues B":
                prepared[r] = stream.record()
                if pipelined and r > 0:
                    stream.wait_event(multiplied[r - 1])
            elif name == "int8 GEMMs":
                multiplied[r] = stream.record()

        runner.hook = hook
        with stream:
            runner.gemm(a, b, c, count=count, scaling="norm")
        runner.hook = None
    for stream in streams:
        origin.wait_event(stream.record())


def probe(n: int, count: int, repeat: int) -> bool:
    """Time the three ways at n; True when they all give the serial bits."""
    rng = cp.random.default_rng(n)
    pairs = [(rng.standard_normal((n, n)), rng.standard_normal((n, n))) for _ in range(LEAVES)]
    outs = {way: [cp.empty((n, n)) for _ in range(LEAVES)] for way in ("serial", "lockstep", "pipelined")}
    runners = [HookedOzaki(), HookedOzaki()]
    runners[1].handle = runners[1]._cublas.create()
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(2)]
    calls = {
        "serial": lambda: run_serial(runners[0], pairs, outs["serial"], count),
        "lockstep": lambda: run_streams(runners, streams, pairs, outs["lockstep"], count, False),
        "pipelined": lambda: run_streams(runners, streams, pairs, outs["pipelined"], count, True),
    }
    times = time_interleaved(list(calls.values()), cp, repeat=repeat, warmup=1)
    serial, all_same = median(times[0]), True
    for way, seconds in zip(calls, times):
        same = all(bool(cp.array_equal(x, y)) for x, y in zip(outs[way], outs["serial"]))
        all_same &= same
        print(f"n={n} N={count} {LEAVES} leaves {way:9s} {1e3 * median(seconds):8.2f} ms "
              f"(min {1e3 * min(seconds):8.2f})  serial/this {serial / median(seconds):.3f}  "
              f"{'same bits' if same else 'DIFFERENT RESULTS'}", flush=True)
    runners[1]._cublas.destroy(runners[1].handle)
    return all_same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, nargs="+", default=[8192])
    parser.add_argument("--moduli", type=int, default=14)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    failed = False
    for n in args.n:
        failed |= not probe(n, args.moduli, args.repeat)
        cp.get_default_memory_pool().free_all_blocks()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
