"""A captured graph's memset nodes made kernel nodes, so that a replay launches kernels only.

cuBLAS clears part of some GEMMs' workspace with a memset (its split-K algorithms: FP64
1280 x 1280 x 1280 on the H200), which a capture records as a memset node before the GEMM's
kernel node.  49 kernel nodes alone launched in 1.4-1.9 µs of host time, and 49 memset nodes
alone as fast, but 49 of each alternating took 63.7-68.4 µs (``benchmarks/memset_node_probe.py``,
session 64), and a replay of Winograd L2's graph at n = 5120 68-71 µs.  In a copy of the graph
each memset node is replaced by a kernel node that writes the same bytes
(``templates/fill.cu.j2``), with the same dependencies, and the copy is instantiated.

This goes through the CUDA driver's graph API (CUDA 12.3 and later) with ctypes: CuPy wraps
capture and launch, not node editing.  Where a step fails (an older driver, a graph CuPy did not
keep, edges with data of their own) the copy is dropped and the graph kept as captured, with a
warning.
"""

from __future__ import annotations

import ctypes
import warnings
from functools import cache
from pathlib import Path
from typing import Any

from ..lower.render import render
from .cuda import compiled_function, device_info

THREADS = 256
BLOCKS_PER_SM = 8
_MEMSET_NODE = 2  # CU_GRAPH_NODE_TYPE_MEMSET
_INVALID_CONTEXT = 201  # CUDA_ERROR_INVALID_CONTEXT
_FILL = "bilinear_fill"
_P, _SIZE = ctypes.c_void_p, ctypes.c_size_t
#: The C types of the fill kernel's parameters, in order (templates/fill.cu.j2)
_FILL_TYPES = (ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_int)


class _MemsetParams(ctypes.Structure):  # CUDA_MEMSET_NODE_PARAMS
    _fields_ = [("dst", ctypes.c_ulonglong), ("pitch", _SIZE), ("value", ctypes.c_uint),
                ("element_size", ctypes.c_uint), ("width", _SIZE), ("height", _SIZE)]


class _KernelParams(ctypes.Structure):  # CUDA_KERNEL_NODE_PARAMS_v2
    _fields_ = [("func", _P), ("grid_x", ctypes.c_uint), ("grid_y", ctypes.c_uint), ("grid_z", ctypes.c_uint),
                ("block_x", ctypes.c_uint), ("block_y", ctypes.c_uint), ("block_z", ctypes.c_uint),
                ("shared_bytes", ctypes.c_uint), ("params", ctypes.POINTER(_P)), ("extra", ctypes.POINTER(_P)),
                ("kern", _P), ("ctx", _P)]


class Unavailable(Exception):
    """A step the driver or CuPy does not offer here: the graph stays as captured."""


@cache
def _driver() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        for name, types in (
            ("cuGraphGetNodes", [_P, _P, ctypes.POINTER(_SIZE)]),
            ("cuGraphNodeGetType", [_P, ctypes.POINTER(ctypes.c_int)]),
            ("cuGraphMemsetNodeGetParams", [_P, ctypes.POINTER(_MemsetParams)]),
            ("cuGraphNodeGetDependencies_v2", [_P, _P, _P, ctypes.POINTER(_SIZE)]),
            ("cuGraphNodeGetDependentNodes_v2", [_P, _P, _P, ctypes.POINTER(_SIZE)]),
            ("cuGraphAddKernelNode_v2", [ctypes.POINTER(_P), _P, _P, _SIZE, ctypes.POINTER(_KernelParams)]),
            ("cuGraphAddDependencies_v2", [_P, _P, _P, _P, _SIZE]),
            ("cuGraphDestroyNode", [_P]),
            ("cuGraphInstantiateWithFlags", [ctypes.POINTER(_P), _P, ctypes.c_ulonglong]),
            ("cuGraphLaunch", [_P, _P]),
            ("cuGraphExecDestroy", [_P]),
            ("cuGraphClone", [ctypes.POINTER(_P), _P]),
            ("cuGraphDestroy", [_P]),
            ("cuGraphDebugDotPrint", [_P, ctypes.c_char_p, ctypes.c_uint]),
        ):
            function = getattr(lib, name)
            function.argtypes, function.restype = types, ctypes.c_int
    except (OSError, AttributeError) as missing:
        raise Unavailable(str(missing)) from None
    return lib


def _call(name: str, *args) -> None:
    status = getattr(_driver(), name)(*args)
    if status != 0:
        raise Unavailable(f"{name} returned CUDA error {status}")


def kernels_only(captured: Any) -> Any:
    """``captured`` (CuPy's ``Graph``) where it has no memset node, else a :class:`KernelGraph` of a
    copy of its graph with each memset node made a kernel node (:func:`edited`), or ``captured`` as
    it is where that cannot be done here, with a warning saying why."""
    try:
        return edited(captured)
    except Exception as error:  # (any: the copy is dropped, and the graph as captured is right, only slower to launch)
        warnings.warn(f"a CUDA graph is replayed as captured, memset nodes and all ({error}): where cuBLAS clears "
                      f"its workspace with memsets, each replay costs tens of µs more host time", RuntimeWarning,
                      stacklevel=3)
        return captured


def edited(captured: Any) -> Any:
    """:func:`kernels_only`, saying why where it keeps the graph.  The captured graph itself is not
    touched (CuPy 13 and later instantiate it at its first launch): a copy is edited and instantiated.

    Raises:
        Unavailable: with what the driver or CuPy did not offer."""
    graph = getattr(captured, "graph", 0)
    if not graph:
        raise Unavailable("CuPy did not keep the captured graph once it was instantiated")
    memsets = [node for node in _nodes(graph) if _type(node) == _MEMSET_NODE]
    if not memsets:
        return captured
    fill = compiled_function(render("fill.cu.j2", name=_FILL), _FILL).kernel.ptr  # the RawKernel's CUfunction
    copy = _P()
    _call("cuGraphClone", ctypes.byref(copy), graph)
    try:
        for node in [node for node in _nodes(copy.value) if _type(node) == _MEMSET_NODE]:
            _as_kernel(copy.value, node, fill)
        executable = _P()
        _call("cuGraphInstantiateWithFlags", ctypes.byref(executable), copy.value, 0)
    except BaseException:
        _driver().cuGraphDestroy(copy.value)
        raise
    return KernelGraph(copy.value, executable.value, captured)


class KernelGraph:
    """A graph with memset nodes made kernel nodes, instantiated: ``launch(stream)`` replays it as
    CuPy's ``Graph.launch`` does.  Owns the graph and its executable."""

    def __init__(self, graph: int, executable: int, captured: Any):
        self.graph, self.executable = graph, executable
        self.captured = captured  # the graph as captured, for comparison
        driver = _driver()
        self._launch = driver.cuGraphLaunch  # looked up once: a replay's host time is what graphs save
        # (and at interpreter exit, when __del__ may find this module's names cleared)
        self._destroy = (driver.cuGraphExecDestroy, driver.cuGraphDestroy)

    def launch(self, stream: Any) -> None:
        status = self._launch(self.executable, stream.ptr)
        if status == _INVALID_CONTEXT:
            # A thread whose first CUDA call this is (CuPy's own launch, through the runtime, made the
            # device's context current itself): make it current, then launch.
            import cupy

            cupy.cuda.runtime.setDevice(cupy.cuda.runtime.getDevice())
            status = self._launch(self.executable, stream.ptr)
        if status != 0:
            raise RuntimeError(f"cuGraphLaunch returned CUDA error {status}")

    def debug_dot_str(self, flags: int = 0) -> str:
        """The graph in Graphviz's DOT language, as CuPy's ``Graph.debug_dot_str``."""
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".dot") as dot:
            _call("cuGraphDebugDotPrint", self.graph, dot.name.encode(), flags)
            return Path(dot.name).read_text()

    def __del__(self) -> None:
        destroy_executable, destroy_graph = self._destroy
        try:  # (statuses and errors here have no one left to tell)
            if self.executable:
                destroy_executable(self.executable)
                self.executable = 0
            if self.graph:
                destroy_graph(self.graph)
                self.graph = 0
        except Exception:
            pass


def _nodes(graph: int) -> list[int]:
    count = _SIZE(0)
    _call("cuGraphGetNodes", graph, None, ctypes.byref(count))
    nodes = (_P * count.value)()
    _call("cuGraphGetNodes", graph, nodes, ctypes.byref(count))
    return list(nodes[: count.value])


def _type(node: int) -> int:
    kind = ctypes.c_int()
    _call("cuGraphNodeGetType", node, ctypes.byref(kind))
    return kind.value


def _neighbours(name: str, node: int) -> list[int]:
    """The node's dependencies or dependents (``name`` says which); edges with data of their own are
    refused by the driver when no data is asked for (CUDA_ERROR_LOSSY_QUERY): then the graph stays."""
    count = _SIZE(0)
    _call(name, node, None, None, ctypes.byref(count))
    if count.value == 0:
        return []  # (asked again with an empty array, the driver answers CUDA_ERROR_INVALID_VALUE)
    nodes = (_P * count.value)()
    _call(name, node, nodes, None, ctypes.byref(count))
    return list(nodes[: count.value])


def _as_kernel(graph: int, node: int, fill: int) -> None:
    """Replace memset ``node`` by a kernel node of ``fill`` that writes what it wrote, after the same
    nodes and before the same."""
    memset = _MemsetParams()
    _call("cuGraphMemsetNodeGetParams", node, ctypes.byref(memset))
    before = _neighbours("cuGraphNodeGetDependencies_v2", node)
    after = _neighbours("cuGraphNodeGetDependentNodes_v2", node)
    arguments = fill_arguments(memset.dst, memset.pitch, memset.value, memset.element_size, memset.width,
                               memset.height)
    units = arguments[3] * arguments[4]
    blocks = max(1, min(-(-units // THREADS), device_info().sms * BLOCKS_PER_SM))
    values = [kind(value) for kind, value in zip(_FILL_TYPES, arguments)]
    pointers = (_P * len(values))(*[ctypes.addressof(value) for value in values])
    params = _KernelParams(func=fill, grid_x=blocks, grid_y=1, grid_z=1, block_x=THREADS, block_y=1, block_z=1,
                           params=ctypes.cast(pointers, ctypes.POINTER(_P)))
    kernel = _P()
    _call("cuGraphAddKernelNode_v2", ctypes.byref(kernel), graph, (_P * len(before))(*before) if before else None,
          len(before), ctypes.byref(params))  # the driver copies the arguments: they may go after
    if after:
        _call("cuGraphAddDependencies_v2", graph, (_P * len(after))(*[kernel.value] * len(after)),
              (_P * len(after))(*after), None, len(after))
    _call("cuGraphDestroyNode", node)


def fill_arguments(dst: int, pitch: int, value: int, element_size: int, width: int, height: int
                   ) -> tuple[int, int, int, int, int, int]:
    """The fill kernel's arguments (dst, pitch, pattern, row_units, rows, unit) for a memset of
    ``height`` rows of ``width`` elements of ``element_size`` bytes: the widest unit (16, 4 or 1
    bytes) the address, the pitch (of more than one row) and the row's bytes allow, and the value
    replicated over four bytes."""
    row_bytes = width * element_size
    spans = dst | row_bytes | (pitch if height > 1 else 0)
    unit = 16 if spans % 16 == 0 else 4 if spans % 4 == 0 else 1
    value &= (1 << (8 * element_size)) - 1
    pattern = value * {1: 0x01010101, 2: 0x00010001, 4: 1}[element_size]
    return dst, pitch, pattern, row_bytes // unit, height, unit
