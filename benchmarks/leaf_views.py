"""How fast cuBLAS multiplies the block views our leaves hand it, against contiguous blocks.

A level of recursion on an n×n matrix multiplies (n/2)×(n/2) views whose leading dimension is
n.  This times the leaves' own GEMM call (``CupyBackend.gemm``) on the same block size three
ways, interleaved, median of --repeat: a contiguous block, a view of an n×n matrix (leading
dimension n, a power of two), and a view of a matrix padded to n + 64 columns.  Then, as the
recursion runs them, back to back: the eight block products of the eight (n/2)³ leaves that
make up one n³ product's flops, against that one n³ product, while the SM clock is sampled.

    python benchmarks/leaf_views.py --dtype float64 float32 --n 16384
"""

from __future__ import annotations

import argparse

import cupy as cp

from bilinear.measure import median, time_device
from bilinear.runtime.compiled import make_backend


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[16384])
    parser.add_argument("--dtype", nargs="+", default=["float64", "float32"])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    backend = make_backend("cupy")
    for dtype in args.dtype:
        for n in args.n:
            for block in (n // 2, n // 4):
                layouts = {}
                for name, cols in (("view ld=n", n), ("view ld=n+64", n + 64)):
                    big = [cp.random.standard_normal((n, cols)).astype(dtype) for _ in range(3)]
                    layouts[name] = [x[:block, :block] for x in big]
                layouts["contiguous"] = [cp.random.standard_normal((block, block)).astype(dtype) for _ in range(3)]
                times = {name: [] for name in layouts}
                for _ in range(args.repeat):  # interleaved: clocks drift alike for every layout
                    for name, (a, b, c) in layouts.items():
                        times[name] += time_device(lambda: backend.gemm(a, b, c, 1.0, 0.0), cp, repeat=1)
                base = median(times["contiguous"])
                for name, samples in times.items():
                    seconds = median(samples)
                    print(f"{dtype} n={n} block {block}: {name:13s} {seconds * 1e3:8.3f} ms "
                          f"{2 * block**3 / seconds / 1e12:6.1f} TF  ({base / seconds:.3f} of contiguous)", flush=True)
                del layouts
            sustained(backend, n, dtype, args.repeat)


def sm_clock_mhz() -> int:
    import pynvml  # shipped with CuPy's CUDA runtime wheels; only used to explain timings

    return pynvml.nvmlDeviceGetClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM)


def sustained(backend, n: int, dtype: str, repeat: int) -> None:
    """Eight back-to-back (n/2)³ block GEMMs on views against one n³ GEMM: equal flops."""
    A, B, C = (cp.random.standard_normal((n, n)).astype(dtype) for _ in range(3))
    h = n // 2
    blocks = [(A[i:i + h, k:k + h], B[k:k + h, j:j + h], C[i:i + h, j:j + h])
              for i in (0, h) for j in (0, h) for k in (0, h)]

    def leaves() -> None:
        for a, b, c in blocks:
            backend.gemm(a, b, c, 1.0, 1.0)

    calls = {"8 leaves of n/2": leaves, "one product of n": lambda: backend.gemm(A, B, C, 1.0, 0.0)}
    times = {name: [] for name in calls}
    clocks = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            times[name] += time_device(call, cp, repeat=1)
            try:
                clocks[name].append(sm_clock_mhz())  # right after the timed call: the clock it ended at
            except Exception:  # no NVML here: the timings stand alone
                pass
    base = median(times["one product of n"])
    for name, samples in times.items():
        seconds = median(samples)
        clock = f", SM clock after it {median(clocks[name]):.0f} MHz" if clocks[name] else ""
        print(f"{dtype} n={n} back to back: {name:17s} {seconds * 1e3:8.3f} ms {2 * n**3 / seconds / 1e12:6.1f} TF "
              f"({base / seconds:.3f} of one product){clock}", flush=True)


if __name__ == "__main__":
    main()
