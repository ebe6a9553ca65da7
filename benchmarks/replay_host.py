"""Host time of a graph replay through ``CapturedProduct.__call__`` (the product's stream ordering and
lock) against the bare ``cudaGraphLaunch`` of the same graph, interleaved in one process (GPU only).

Two readings per size.  Per call of five back to back after the GPU went idle (the crossover
table's host timing, ``breadth._host_us``), and each of those five calls apart: the first, issued
after a synchronize, pays a wake-up the bare launch pays too (35-88 µs through ``__call__``,
15-62 µs bare on the H100 in session 59), the others are what a loop of replays costs per call.

    python3 benchmarks/replay_host.py
"""
from statistics import median

import cupy
from breadth import _each_us, _host_us  # the crossover table's host timings

import bilinear


def one_size(n: int) -> str:
    product = bilinear.compile("winograd", dtype="float64", levels=2, breadth=2, launch="streams", backend="cupy")
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    graph = product.capture(A, B, cupy.zeros((n, n)))

    def bare() -> None:
        graph.graph.launch(cupy.cuda.get_current_stream())

    calls = {"through __call__": graph, "bare launch": bare}
    rows = {label: [] for label in calls}
    for _ in range(5):
        for label, call in calls.items():
            rows[label].append(_host_us(call, repeat=15))
    lines = [f"n={n}, per call of five after idle: " + ", ".join(
        f"{label} {median(us):.1f} us (samples {', '.join(f'{x:.1f}' for x in us)})" for label, us in rows.items())]
    for label, call in calls.items():
        each = _each_us(call)
        lines.append(f"  {label}, call by call: {', '.join(f'{us:.1f}' for us in each)} us; after the first "
                     f"{sum(each[1:]) / len(each[1:]):.1f} us per call")
    return "\n".join(lines)


if __name__ == "__main__":
    for n in (4096, 8192, 16384):
        print(one_size(n))
        cupy.get_default_memory_pool().free_all_blocks()
