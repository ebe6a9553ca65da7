"""cuBLAS's workspace in a graph of ours: given per handle while it is captured, held by the product.

Without it cuBLAS (12.2 and later) allocates the workspace of each GEMM that needs one inside
the graph, and every replay of Winograd L2's graph at n = 5120 paid 80 µs of host time (session
64, ``benchmarks/graph_launch_probe.py``; the memsets cuBLAS adds are made kernels by
graph_memsets).
"""

from __future__ import annotations

import re
import types

import pytest

import bilinear
from bilinear.measure import float64_reference, random_inputs, relative_error
from bilinear.runtime import cublas_capture
from bilinear.runtime.graphs import _cublas_workspace

from conftest import ROOT


class FakeLibrary:
    """The three cuBLAS calls prepare and holding make, recorded."""

    def __init__(self):
        self.calls = []

    def cublasSetStream_v2(self, handle, stream):
        self.calls.append(("stream", handle, stream))
        return 0

    def cublasSetPointerMode_v2(self, handle, mode):
        return 0

    def cublasSetWorkspace_v2(self, handle, address, size):
        self.calls.append(("workspace", handle, address, size))
        return 0


@pytest.fixture
def fake(monkeypatch):
    library = FakeLibrary()
    monkeypatch.setattr(cublas_capture, "library", lambda: library)
    return library


def test_a_handle_given_a_workspace_gets_it_while_held_and_cublass_own_after(fake):
    with cublas_capture.holding({1: (4096, 32)}, stream=9):
        cublas_capture.prepare(1, 5)
        cublas_capture.prepare(2, 6)  # no workspace given: cuBLAS's own
    cublas_capture.prepare(1, 5)
    assert fake.calls == [("stream", 1, 5), ("workspace", 1, 4096, 32), ("stream", 2, 6),
                          ("stream", 1, 9),  # holding's end: setting the stream gives cuBLAS's workspace back
                          ("stream", 1, 5)]


def test_a_capture_that_fails_still_gives_the_workspace_back(fake):
    with pytest.raises(RuntimeError, match="mid-capture"):
        with cublas_capture.holding({3: (8192, 64)}, stream=9):
            cublas_capture.prepare(3, 5)
            raise RuntimeError("mid-capture")
    cublas_capture.prepare(3, 5)
    assert fake.calls[-2:] == [("stream", 3, 9), ("stream", 3, 5)]


def test_a_holding_inside_another_gives_the_outer_workspaces_back(fake):
    with cublas_capture.holding({1: (4096, 32)}, stream=9):
        with cublas_capture.holding({2: (8192, 64)}, stream=9):
            pass
        cublas_capture.prepare(1, 5)
    assert fake.calls == [("stream", 2, 9), ("stream", 1, 5), ("workspace", 1, 4096, 32), ("stream", 1, 9)]


def test_the_workspace_is_the_capturing_threads_alone(fake):
    """Another thread's GEMMs (a product called directly meanwhile) keep cuBLAS's own workspace."""
    import threading

    with cublas_capture.holding({1: (4096, 32)}, stream=9):
        other = threading.Thread(target=cublas_capture.prepare, args=(1, 7))
        other.start()
        other.join()
    assert ("workspace", 1, 4096, 32) not in fake.calls


def _backend(handles):
    allocated = []

    def empty(size, dtype):
        allocated.append(size)
        return types.SimpleNamespace(data=types.SimpleNamespace(ptr=1000 * len(allocated)), nbytes=size)

    return types.SimpleNamespace(cublas_handles=lambda concurrent: handles[concurrent], xp=types.SimpleNamespace(empty=empty)), allocated


def test_an_executor_keeps_one_workspace_per_handle_for_all_its_graphs():
    product = bilinear.compile(ROOT / "algorithms/winograd.bl", levels=1, breadth=1, launch="streams", backend="numpy")
    executor = product.executor
    backend, allocated = _backend({True: [11, 12, 13], False: [11]})
    first = _cublas_workspace(executor, backend)
    assert {handle: buffer.data.ptr for handle, buffer in first.items()} == {11: 1000, 12: 2000, 13: 3000}
    assert all(buffer.nbytes == cublas_capture.WORKSPACE_BYTES for buffer in first.values())
    assert _cublas_workspace(executor, backend) == first and len(allocated) == 3  # the next capture shares them
    # not what matmul counts as the product's own workspace: the schedule's could not use it
    assert executor.leaf_buffers() == () and product.held_workspace_bytes() == 0
    product.release_workspace()  # but it goes with the rest
    assert executor.graph_gemm_workspace == {}


def test_a_handle_seen_later_adds_a_workspace_and_keeps_the_others():
    """A graph checks that the buffers it was given are still its executor's: a handle made since (a
    concurrent stream's, another thread's) must not make every earlier graph stale."""
    product = bilinear.compile(ROOT / "algorithms/winograd.bl", levels=1, breadth=1, launch="streams", backend="numpy")
    backend, allocated = _backend({True: [11], False: [11]})
    first = _cublas_workspace(product.executor, backend)
    backend.cublas_handles = lambda concurrent: [11, 14]
    later = _cublas_workspace(product.executor, backend)
    assert later[11] is first[11] and list(later) == [11, 14] and len(allocated) == 2


def test_a_failed_reset_is_reported_after_every_handle_was_tried(fake, monkeypatch):
    statuses = {1: 0, 2: 7, 3: 0}
    monkeypatch.setattr(fake, "cublasSetStream_v2", lambda handle, stream: fake.calls.append(("stream", handle, stream))
                        or statuses[handle])
    with pytest.raises(RuntimeError, match=r"cublasSetStream failed for 1 handle\(s\) after a capture"):
        with cublas_capture.holding({1: (1, 1), 2: (2, 1), 3: (3, 1)}, stream=9):
            pass
    assert fake.calls == [("stream", 1, 9), ("stream", 2, 9), ("stream", 3, 9)]
    with pytest.raises(ValueError, match="the capture's own"):  # never in place of the capture's error
        with cublas_capture.holding({2: (2, 1)}, stream=9):
            raise ValueError("the capture's own")


def test_serial_leaves_take_only_cupys_handle():
    product = bilinear.compile(ROOT / "algorithms/winograd.bl", levels=1, breadth=1, backend="numpy")
    backend, allocated = _backend({True: [11, 12], False: [11]})
    assert list(_cublas_workspace(product.executor, backend)) == [11] and len(allocated) == 1


@pytest.mark.gpu
def test_a_graph_of_gemms_cublas_runs_with_workspace_allocates_nothing_in_it():
    """Winograd's seven 1280 x 1280 x 1280 leaves: in FP64 on the H200 cuBLAS chose an algorithm with
    workspace, which it allocated inside a graph the caller captured and does not inside ours.  On a
    GPU where it does not allocate even in the caller's graph, the test says so and skips."""
    cp = pytest.importorskip("cupy")
    product = bilinear.compile(ROOT / "algorithms/winograd.bl", levels=1, breadth=1, backend="cupy")
    A, B, C = random_inputs(cp, 2560, 2560, 2560, "float64", seed=3)
    product(A, B, out=C)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        product(A, B, out=C)
        theirs = stream.end_capture()
    ours = product.capture(A, B, C)

    def nodes(graph, kind):
        return len(re.findall(rf"\b{kind}\b", graph.debug_dot_str()))

    assert nodes(ours.graph, "MEM_ALLOC") == 0 and nodes(ours.graph, "MEMSET") == 0  # made kernels (graph_memsets)
    assert [buffer.nbytes for buffer in ours.gemm_workspace.values()] == [cublas_capture.WORKSPACE_BYTES]
    C[...] = 0
    ours()
    ours.synchronize()
    assert relative_error(C, float64_reference(A, B, None, 1.0, 0.0), A, B) < 1e-14
    if not nodes(theirs, "MEM_ALLOC"):  # another GPU's cuBLAS: the size shows nothing there
        pytest.skip("cuBLAS ran these leaves without workspace on this GPU, so the test shows nothing here")
    assert nodes(theirs, "MEMSET") > 0
