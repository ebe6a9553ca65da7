"""Host time of a graph launch by the kinds of node in it: 49 kernel nodes, 49 memset nodes, and
49 of each alternating (as cuBLAS's split-K GEMMs leave them in a captured product), each
launched bare, the same graph with its memsets made kernels (``graph_memsets.kernels_only``)
beside the last.  Each of ten back-to-back launches after the GPU went idle, the median over nine
rounds (GPU only).

    python3 benchmarks/memset_node_probe.py
"""
import cupy
from breadth import _each_us

from bilinear.runtime.graph_memsets import kernels_only

BUFFERS = [cupy.empty(1 << 18, dtype=cupy.float64) for _ in range(49)]


def kernels() -> None:
    for buffer in BUFFERS:
        buffer.fill(1.0)


def memsets() -> None:
    stream = cupy.cuda.get_current_stream().ptr
    for buffer in BUFFERS:
        cupy.cuda.runtime.memsetAsync(buffer.data.ptr, 0, buffer.nbytes, stream)


def alternating() -> None:
    stream = cupy.cuda.get_current_stream().ptr
    for buffer in BUFFERS:
        cupy.cuda.runtime.memsetAsync(buffer.data.ptr, 0, 4096, stream)
        buffer *= 2.0


def captured(body):
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        body()  # kernels compiled before the capture
        stream.synchronize()
        stream.begin_capture()
        body()
        return stream.end_capture(), stream


if __name__ == "__main__":
    for name, body in (("49 kernels", kernels), ("49 memsets", memsets), ("49 memset+kernel", alternating)):
        graph, stream = captured(body)
        print(f"{name}: {', '.join(f'{us:.1f}' for us in _each_us(lambda: graph.launch(stream), 10, 9))} us",
              flush=True)
    graph, stream = captured(alternating)
    edited = kernels_only(graph)
    print(f"49 memset+kernel, memsets made kernels: "
          f"{', '.join(f'{us:.1f}' for us in _each_us(lambda: edited.launch(stream), 10, 9))} us", flush=True)
