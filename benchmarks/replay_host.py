"""Host time of a graph replay through ``CapturedProduct.__call__`` (the product's stream ordering and
lock) against the bare ``cudaGraphLaunch`` of the same graph, interleaved in one process (GPU only).

    python3 benchmarks/replay_host.py
"""
from statistics import median

import cupy
from breadth import _host_us  # the crossover table's host timing, which issue 13's < 20 µs is read from

import bilinear


def one_size(n: int) -> str:
    product = bilinear.compile("winograd", dtype="float64", levels=2, breadth=2, launch="streams", backend="cupy")
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    graph = product.capture(A, B, cupy.zeros((n, n)))

    def bare() -> None:
        graph.graph.launch(cupy.cuda.get_current_stream())

    rows = {"through __call__": [], "bare launch": []}
    for _ in range(5):
        rows["through __call__"].append(_host_us(graph, repeat=15))
        rows["bare launch"].append(_host_us(bare, repeat=15))
    return f"n={n}: " + ", ".join(f"{label} {median(us):.1f} us (samples {', '.join(f'{x:.1f}' for x in us)})"
                                  for label, us in rows.items())


if __name__ == "__main__":
    for n in (4096, 8192, 16384):
        print(one_size(n))
        cupy.get_default_memory_pool().free_all_blocks()
