"""Why a replay of Winograd L2's graph cost more host time at n = 5120 than at 4096 or 6144
(97 µs a call in a loop against 6-8 µs at every other size of session 64's first crossover table):
cuBLAS's 1280 x 1280 leaves put memory allocation, free and memset nodes into it
(``bilinear.runtime.cublas_capture``, ``bilinear.runtime.graph_memsets``).

For each size: the graph's nodes other than kernels, by type (in CuPy's ``debug_dot_str``, where
kernel nodes go by their names), then the host µs of each of
ten back-to-back replays after the GPU went idle (the median over nine rounds), through the
product's call and as a bare ``cudaGraphLaunch``, and the GPU's time per replay.

    python3 benchmarks/graph_launch_probe.py [--sizes 4096,5120,6144] [--launch serial]
"""
import argparse
import re
from collections import Counter
from pathlib import Path

import cupy
from breadth import _each_us, time_interleaved

import bilinear
from bilinear.measure import median


def node_types(dot: str) -> Counter:
    return Counter(re.findall(r"\b(KERNEL|MEMSET|MEMCPY|EVENT_RECORD|WAIT_EVENT|EMPTY|HOST|MEM_ALLOC|MEM_FREE|GRAPH)\b",
                              dot))


def one_size(n: int, launch: str, dots: Path | None) -> str:
    product = bilinear.compile("winograd", dtype="float64", levels=2, breadth=2, launch=launch, backend="cupy")
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    graph = product.capture(A, B, cupy.zeros((n, n)))
    try:
        dot = graph.graph.debug_dot_str()
        nodes = dict(node_types(dot))
        if dots:
            (dots / f"graph_{launch}_{n}.dot").write_text(dot)
    except Exception as error:  # noqa: BLE001 (a CuPy without the graph kept reports why)
        nodes = f"unknown ({type(error).__name__}: {error})"
    lines = [f"n={n} {launch}: nodes {nodes}, GPU {median(time_interleaved({'graph': graph}, 5)['graph']):.2f} ms a replay"]
    calls = {"through __call__": graph, "bare launch": lambda: graph.graph.launch(cupy.cuda.get_current_stream())}
    for label, call in calls.items():
        each = _each_us(call, count=10, repeat=9)
        lines.append(f"  {label}: {', '.join(f'{us:.1f}' for us in each)} us")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="4096,4608,5120,5632,6144")
    parser.add_argument("--launch", nargs="*", default=["serial", "batched"])
    parser.add_argument("--dots", type=Path, default=None, help="folder for each graph's DOT text")
    args = parser.parse_args()
    for launch in args.launch:
        for n in (int(x) for x in args.sizes.split(",")):
            print(one_size(n, launch, args.dots), flush=True)
            cupy.get_default_memory_pool().free_all_blocks()
