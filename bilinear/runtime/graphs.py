"""CUDA graphs: a compiled product's whole launch plan captured once per call signature, then replayed.

A captured call pays Python's host time (the recursion, binding views, one
library call per leaf) once; each replay is one ``cudaGraphLaunch``.  What is
captured is fixed: the arrays (their addresses), alpha and beta.  A replay
reads A, B and C as they are when it runs, so new values in the same arrays
need no new capture.

CuPy refuses its own cuBLAS wrappers while a stream captures (its check
predates cuBLAS's support for capture), so during capture the library GEMMs go
through :mod:`bilinear.runtime.cublas_capture`, which calls the same cuBLAS
library CuPy loaded, with CuPy's handle, and a workspace the product keeps for
its graphs: 32 MiB for each cuBLAS handle their GEMMs use (one, or with
concurrent leaves up to five).
"""

from __future__ import annotations

from typing import Any

from . import cublas_capture
from .cuda import current_device
from .graph_memsets import kernels_only


class CapturedProduct:
    """``out = alpha·A@B + beta·out`` as one CUDA graph of a compiled product; call it to replay.

    Raises:
        ValueError: on the NumPy backend (graphs are CUDA's).
    """

    def __init__(self, product: Any, A: Any, B: Any, out: Any, alpha: float = 1.0, beta: float = 0.0, *,
                 warm: bool = True):
        """``warm=False``: a call of this product at this shape has just run, so kernels are
        compiled and workspace sized; no warm-up run, and the arrays are not held (the caller
        replays only for arrays at these addresses: :mod:`bilinear.runtime.graph_cache`)."""
        if product.backend.name != "cupy":
            raise ValueError("graphs capture CUDA launches; compile with backend='cupy' to capture")
        import cupy

        self.product = product
        self._cupy = cupy
        self.device = current_device()  # a graph runs on the GPU it was captured on
        self.arrays = (A, B, out) if warm else ()  # the graph holds their addresses: keep them alive
        self.stream = cupy.cuda.Stream(non_blocking=True)
        backend = product.backend
        caller = cupy.cuda.get_current_stream()  # the stream the replays follow (_ordered)
        self.stream.wait_event(caller.record())  # A, B and out as the caller's work leaves them
        with self.stream:
            if warm:
                # A first run on copies compiles every kernel and sizes every workspace, so the
                # capture allocates nothing new and the caller's C is written only by replays.
                product(A.copy(), B.copy(), out=out.copy(), alpha=alpha, beta=beta)
                self.stream.synchronize()
            executor = product.executor_for(A.shape[0], A.shape[1], B.shape[1])
            self.executor = executor
            with product.calling, caller:  # (no other thread's capture or release in between)
                self.gemm_workspace = _cublas_workspace(executor, backend)
            given = {handle: (buffer.data.ptr, buffer.nbytes) for handle, buffer in self.gemm_workspace.items()}
            self.stream.begin_capture()
            backend.capturing = True
            try:
                with cublas_capture.holding(given, self.stream.ptr):
                    product(A, B, out=out, alpha=alpha, beta=beta)
            finally:
                backend.capturing = False
                self.graph = self.stream.end_capture()
            # memset nodes (cuBLAS's) made kernel nodes: alternating with kernels, they cost a replay
            # 65 µs of host time more (graph_memsets)
            self.graph = kernels_only(self.graph)
            # Workspace the graph writes (the schedule's, the breadth-first runner's, the leaf's): held
            # as long as the graph is.
            self.workspace = (dict(executor.workspace), dict(executor.breadth.workspace) if executor.breadth else {})
            self.leaf_buffers = executor.leaf_buffers()

    def holds_current_workspace(self) -> bool:
        """Whether the workspace this graph writes is still its executor's (not replaced by a call
        at another shape since): a graph that holds stale workspace holds memory of its own."""
        executor = self.executor
        now = (executor.workspace, executor.breadth.workspace if executor.breadth else {})
        # the views this graph writes, still its executor's (the breadth-first runner keeps views of
        # other leaf sizes beside them)
        schedule_current = all(all(k in current and then[k] is current[k] for k in then)
                               for then, current in zip(self.workspace, now))
        leaf_now = executor.leaf_buffers()
        leaf_current = len(leaf_now) == len(self.leaf_buffers) and all(a is b for a, b in zip(self.leaf_buffers, leaf_now))
        gemm_now = executor.graph_gemm_workspace
        gemm_current = all(gemm_now.get(handle) is buffer for handle, buffer in self.gemm_workspace.items())
        return schedule_current and leaf_current and gemm_current

    def __call__(self) -> None:
        """Replay the captured launches on the current stream (asynchronously, in its order), after
        the product's calls on other streams (the graph writes their workspace).

        Raises:
            ValueError: under another current device than the one it was captured on."""
        self.product.launch_graph(self.graph, self.device)

    def synchronize(self) -> None:
        self._cupy.cuda.get_current_stream().synchronize()


def _cublas_workspace(executor: Any, backend: Any) -> dict[int, Any]:
    """cuBLAS's workspace for the GEMMs a capture issues, by handle: else each GEMM that needs one
    allocates it in the graph, and every replay maps and frees it (:mod:`cublas_capture`).  The
    executor keeps them for its graphs, which share them (a product's calls and replays never
    overlap: ``CompiledProduct._ordered``); each graph holds the ones it was given.  CuPy's handle is
    the thread's: each thread that captures adds its own."""
    held = executor.graph_gemm_workspace
    for handle in backend.cublas_handles(concurrent=executor.options.launch != "serial"):
        if handle not in held:
            held[handle] = backend.xp.empty(cublas_capture.WORKSPACE_BYTES, dtype="uint8")
    return dict(held)
