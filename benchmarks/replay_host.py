"""Host time of a graph replay through CapturedProduct.__call__ (the product's ordering and lock) against
the bare cudaGraphLaunch of the same graph, interleaved in one process."""
import sys
import time
from statistics import median

import cupy

sys.path.insert(0, ".")
import bilinear


def host_us(call, count=5, repeat=15):
    samples = []
    for _ in range(repeat):
        cupy.cuda.Device().synchronize()
        begin = time.perf_counter()
        for _ in range(count):
            call()
        samples.append((time.perf_counter() - begin) / count)
    cupy.cuda.Device().synchronize()
    return median(samples) * 1e6


for n in (4096, 8192, 16384):
    product = bilinear.compile("winograd", dtype="float64", levels=2, breadth=2, launch="streams", backend="cupy")
    rng = cupy.random.default_rng(n)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    C = cupy.zeros((n, n))
    graph = product.capture(A, B, C)
    bare = lambda: graph.graph.launch(cupy.cuda.get_current_stream())
    rows = {"through __call__": [], "bare launch": []}
    for _ in range(5):
        rows["through __call__"].append(host_us(graph))
        rows["bare launch"].append(host_us(bare))
    print(f"n={n}: " + ", ".join(f"{k} {median(v):.1f} us (samples {', '.join(f'{x:.1f}' for x in v)})" for k, v in rows.items()))
    del graph, product
    cupy.get_default_memory_pool().free_all_blocks()
