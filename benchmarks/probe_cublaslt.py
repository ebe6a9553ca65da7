"""Probe: does cuBLASLt with an autotuned algorithm (nvmath-python's Matmul) beat cuBLAS's default
(cupy.matmul) at the grid shapes where `matmul` keeps cuBLAS?  CUDA events, warm-up, interleaved
rounds, median; random normal data; output allocated in both."""

import json
import sys

import cupy as cp
import numpy as np
from nvmath.linalg.advanced import Matmul

SHAPES = [("float64", 2048, 2048, 2048), ("float64", 3072, 3072, 3072), ("float64", 4096, 4096, 4096),
          ("float64", 6144, 6144, 6144), ("float64", 16384, 4096, 16384), ("float64", 16384, 16384, 4),
          ("float64", 32768, 32768, 8), ("float64", 65536, 1024, 64), ("float32", 4096, 4096, 64),
          ("float64", 8192, 8192, 8192)]


def timed(call, stream, reps=3):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record(stream)
    for _ in range(reps):
        call()
    stop.record(stream)
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / reps


def main(out):
    rng = cp.random.default_rng(1)
    stream = cp.cuda.get_current_stream()
    rows = []
    for dtype, m, k, n in SHAPES:
        try:
            rows.append(probe(rng, stream, dtype, m, k, n))
        except Exception as error:  # one shape's failure does not end the probe
            print(f"{dtype} {m}x{k}x{n}: {type(error).__name__}: {error}", flush=True)
        cp.get_default_memory_pool().free_all_blocks()
    json.dump(rows, open(out, "w"), indent=1)


def probe(rng, stream, dtype, m, k, n):
    a = rng.standard_normal((m, k), dtype=dtype)
    b = rng.standard_normal((k, n), dtype=dtype)
    mm = Matmul(a, b, stream=stream)
    mm.plan()
    default_algo = mm.execute(stream=stream)
    ref = cp.matmul(a, b)
    err_default = float(cp.abs(default_algo - ref).max() / cp.abs(ref).max())
    mm.autotune(iterations=10, stream=stream)
    tuned = mm.execute(stream=stream)
    err_tuned = float(cp.abs(tuned - ref).max() / cp.abs(ref).max())
    del default_algo, tuned, ref
    calls = {"cublas": lambda: cp.matmul(a, b), "lt_tuned": lambda: mm.execute(stream=stream)}
    for call in calls.values():
        for _ in range(3):
            call()
    times = {name: [] for name in calls}
    for _ in range(11):
        for name, call in calls.items():
            times[name].append(timed(call, stream))
    med = {name: float(np.median(t)) for name, t in times.items()}
    row = {"dtype": dtype, "shape": [m, k, n], **{f"{n_}_ms": v for n_, v in med.items()},
           "ratio": med["cublas"] / med["lt_tuned"],
           "rounds": [c / t for c, t in zip(times["cublas"], times["lt_tuned"])],
           "err_vs_cupy_default_algo": err_default, "err_vs_cupy_tuned": err_tuned}
    print(f"{dtype} {m}x{k}x{n}: cublas {med['cublas']:.4f} ms, lt tuned {med['lt_tuned']:.4f} ms, "
          f"ratio {row['ratio']:.3f} (rounds {min(row['rounds']):.3f}-{max(row['rounds']):.3f}), "
          f"diff {err_tuned:.1e}", flush=True)
    mm.free()
    return row


if __name__ == "__main__":
    main(sys.argv[1])
