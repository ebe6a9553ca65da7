"""Memset nodes of a captured graph made kernel nodes (bilinear/runtime/graph_memsets.py).

The host side (which unit, which pattern) is checked on the CPU against what a memset writes, by
running the fill kernel's loop in Python; the kernel itself compiles with nvcc here and runs on
the GPU in the tests marked gpu.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bilinear.lower.render import render
from bilinear.runtime.graph_memsets import fill_arguments


def _memset(memory: bytearray, dst: int, pitch: int, value: int, element_size: int, width: int, height: int) -> None:
    element = (value & ((1 << (8 * element_size)) - 1)).to_bytes(element_size, "little")
    for r in range(height):
        at = dst + r * pitch
        memory[at : at + width * element_size] = element * width


def _fill(memory: bytearray, dst: int, pitch: int, pattern: int, row_units: int, rows: int, unit: int) -> None:
    """templates/fill.cu.j2's loop, one thread after another (little-endian, as the GPU)."""
    word = pattern.to_bytes(4, "little")
    for t in range(row_units * rows):
        r, u = divmod(t, row_units)
        at = dst + r * pitch + u * unit
        if unit in (16, 4):
            assert at % unit == 0  # the kernel's uint4 and unsigned int stores need it
            memory[at : at + unit] = word * (unit // 4)
        else:
            memory[at] = word[u % 4]


@settings(max_examples=300, deadline=None)
@given(element_size=st.sampled_from([1, 2, 4]), offset=st.integers(0, 40), width=st.integers(1, 40),
       height=st.integers(1, 4), extra=st.integers(0, 9), value=st.integers(0, 2**32 - 1))
def test_the_fill_kernel_writes_what_the_memset_did(element_size, offset, width, height, extra, value):
    dst = offset * element_size  # CUDA's memsets start element-aligned
    pitch = (width + extra) * element_size
    size = dst + pitch * height + 64
    expected, got = bytearray(b"\xee" * size), bytearray(b"\xee" * size)
    _memset(expected, dst, pitch, value, element_size, width, height)
    _fill(got, *fill_arguments(dst, pitch, value, element_size, width, height))
    assert got == expected


@pytest.mark.parametrize(("dst", "pitch", "bytes_", "height", "unit"), [
    (4096, 0, 13_107_200, 1, 16),  # cuBLAS's: one aligned row
    (4096, 1000, 1000, 3, 4),  # a pitch of 1000 bytes is no multiple of 16
    (4097, 0, 64, 1, 1), (4096, 0, 66, 1, 1), (4100, 0, 64, 1, 4),
])
def test_the_widest_unit_the_layout_allows(dst, pitch, bytes_, height, unit):
    assert fill_arguments(dst, pitch, 0, 1, bytes_, height)[5] == unit


def test_the_value_is_cut_to_its_element_and_replicated():
    assert fill_arguments(0, 0, 0x1FF, 1, 4, 1)[2] == 0xFFFFFFFF
    assert fill_arguments(0, 0, 0x12345678, 2, 4, 1)[2] == 0x56785678
    assert fill_arguments(0, 0, 0x12345678, 4, 4, 1)[2] == 0x12345678


def test_the_kernel_node_passes_each_parameter_as_the_kernel_declares_it():
    """The arguments go to the driver as bytes: a parameter whose C type and ctypes type differ in size
    would shift every one after it."""
    import ctypes

    from bilinear.runtime.graph_memsets import _FILL_TYPES

    signature = re.search(r"\((.*?)\)\s*\{", render("fill.cu.j2", name="bilinear_fill"), re.S).group(1)
    declared = [re.sub(r"\s*\w+$", "", parameter.replace("__restrict__", "").replace("const", "")).strip()
                for parameter in signature.split(",")]
    as_ctypes = {"unsigned char*": ctypes.c_ulonglong, "unsigned long long": ctypes.c_ulonglong,
                 "unsigned int": ctypes.c_uint, "int": ctypes.c_int}
    assert [as_ctypes[c_type] for c_type in declared] == list(_FILL_TYPES)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_compiles_the_fill_kernel(tmp_path):
    source = tmp_path / "fill.cu"
    source.write_text(render("fill.cu.j2", name="bilinear_fill"))
    result = subprocess.run([shutil.which("nvcc"), "-arch=sm_90", "-c", str(source), "-o", str(tmp_path / "fill.o")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_parameter_structures_are_laid_out_as_cuda_h_says(tmp_path):
    """ctypes' structures against the driver header's: a field out of place would hand the driver
    garbage on the GPU only."""
    import ctypes

    from bilinear.runtime.graph_memsets import _KernelParams, _MemsetParams

    program = tmp_path / "layout.cu"
    program.write_text("""#include <cuda.h>
#include <stdio.h>
#include <stddef.h>
#define AT(s, f) printf("%zu ", offsetof(s, f))
int main() {
    printf("%zu ", sizeof(CUDA_KERNEL_NODE_PARAMS_v2));
    AT(CUDA_KERNEL_NODE_PARAMS_v2, func); AT(CUDA_KERNEL_NODE_PARAMS_v2, gridDimX); AT(CUDA_KERNEL_NODE_PARAMS_v2, blockDimX);
    AT(CUDA_KERNEL_NODE_PARAMS_v2, sharedMemBytes); AT(CUDA_KERNEL_NODE_PARAMS_v2, kernelParams);
    AT(CUDA_KERNEL_NODE_PARAMS_v2, extra); AT(CUDA_KERNEL_NODE_PARAMS_v2, kern); AT(CUDA_KERNEL_NODE_PARAMS_v2, ctx);
    printf("%zu ", sizeof(CUDA_MEMSET_NODE_PARAMS));
    AT(CUDA_MEMSET_NODE_PARAMS, dst); AT(CUDA_MEMSET_NODE_PARAMS, pitch); AT(CUDA_MEMSET_NODE_PARAMS, value);
    AT(CUDA_MEMSET_NODE_PARAMS, elementSize); AT(CUDA_MEMSET_NODE_PARAMS, width); AT(CUDA_MEMSET_NODE_PARAMS, height);
    return 0;
}
""")
    built = subprocess.run([shutil.which("nvcc"), str(program), "-o", str(tmp_path / "layout")], capture_output=True,
                           text=True)
    assert built.returncode == 0, built.stderr
    header = subprocess.run([str(tmp_path / "layout")], capture_output=True, text=True, check=True).stdout.split()
    ours = [ctypes.sizeof(_KernelParams), *(getattr(_KernelParams, f).offset for f in (
        "func", "grid_x", "block_x", "shared_bytes", "params", "extra", "kern", "ctx")),
        ctypes.sizeof(_MemsetParams), *(getattr(_MemsetParams, f).offset for f in (
            "dst", "pitch", "value", "element_size", "width", "height"))]
    assert [int(x) for x in header] == ours


def _driver():
    import ctypes

    lib = ctypes.CDLL("libcuda.so.1")
    P, SIZE = ctypes.c_void_p, ctypes.c_size_t
    lib.cuMemsetD16Async.argtypes = [ctypes.c_ulonglong, ctypes.c_ushort, SIZE, P]
    lib.cuMemsetD2D32Async.argtypes = [ctypes.c_ulonglong, SIZE, ctypes.c_uint, SIZE, SIZE, P]
    return lib


def _captured(cp, memsets, reads):
    """A graph of each memset (a function of the stream) followed by a kernel that adds the bytes it
    wrote into ``reads`` (so the kernel depends on the memset), as captured."""
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for memset, view in memsets:
            memset(stream.ptr)
            cp.add(reads, view, out=reads)
        return stream, stream.end_capture()


def _edges(graph) -> int:
    return len(re.findall(r"->", graph.debug_dot_str()))


# (element bytes, offset in bytes, elements, rows, pitch in bytes, value): 1-byte runs at each
# alignment, a 16-bit memset at an address 2 past a multiple of 4 (one-byte units, pattern bytes
# alternating), and a pitched 32-bit one (four-byte units: the pitch is no multiple of 16)
MEMSETS = [(1, 0, 1 << 20, 1, 0, 0), (1, 3, 1001, 1, 0, 0xAB), (1, 16, 4096, 1, 0, 7), (2, 2, 999, 1, 0, 0xBEEF),
           (4, 0, 300, 5, 1204, 0xDEADBEEF)]


@pytest.mark.gpu
@pytest.mark.parametrize(("element", "offset", "width", "height", "pitch", "value"), MEMSETS)
def test_memsets_replayed_as_kernels_write_the_same_bytes_before_the_kernels_after_them(
        element, offset, width, height, pitch, value):
    cp = pytest.importorskip("cupy")
    from bilinear.runtime.graph_memsets import KernelGraph, kernels_only

    size = offset + max(pitch, width * element) * height + 64
    memory, reads = cp.full(size, 0xEE, dtype=cp.uint8), cp.zeros(size, dtype=cp.uint8)
    driver, at = _driver(), memory.data.ptr + offset

    def memset(stream, value):
        if element == 1:
            cp.cuda.runtime.memsetAsync(at, value, width, stream)
        elif element == 2:
            assert driver.cuMemsetD16Async(at, value, width, stream) == 0
        else:
            assert driver.cuMemsetD2D32Async(at, pitch, value, width, height, stream) == 0

    values = [value, value ^ 0x5A5A5A5A & ((1 << 8 * element) - 1), value]  # each kernel must read its own
    stream, captured = _captured(cp, [((lambda s, v=v: memset(s, v)), memory) for v in values], reads)
    graph = kernels_only(captured)
    assert isinstance(graph, KernelGraph) and "MEMSET" not in graph.debug_dot_str()
    assert _edges(graph) == _edges(captured)  # each fill kernel after and before what its memset was
    graph.launch(stream)
    stream.synchronize()
    expected = np.full(size, 0xEE, dtype=np.uint8)
    sums = np.zeros(size, dtype=np.uint8)
    for v in values:
        for r in range(height):
            start = offset + r * pitch
            expected[start : start + width * element] = np.frombuffer(
                (v & ((1 << 8 * element) - 1)).to_bytes(element, "little") * width, dtype=np.uint8)
        sums += expected
    assert np.array_equal(memory.get(), expected) and np.array_equal(reads.get(), sums)


@pytest.mark.gpu
def test_a_graph_without_memsets_is_kept_as_captured():
    cp = pytest.importorskip("cupy")
    from bilinear.runtime.graph_memsets import kernels_only

    x = cp.ones(8)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        x *= 3.0
        captured = stream.end_capture()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say: there was nothing to edit
        assert kernels_only(captured) is captured


def test_a_graph_cupy_did_not_keep_is_replayed_as_captured_with_a_warning_saying_so():
    from bilinear.runtime.graph_memsets import kernels_only

    captured = SimpleNamespace(graph=0)  # CuPy's Graph after an instantiation that dropped it
    with pytest.warns(RuntimeWarning, match=r"^a CUDA graph is replayed as captured, memset nodes and all \(CuPy did "
                      r"not keep the captured graph once it was instantiated\): where cuBLAS clears its workspace "
                      r"with memsets, each replay costs tens of µs more host time$"):
        assert kernels_only(captured) is captured


@pytest.mark.gpu
def test_an_edit_that_fails_midway_keeps_the_graph_as_captured(monkeypatch):
    """The copy is edited, never the captured graph (CuPy instantiates that at its first launch): a
    fill kernel left without its edges would have cleared the bytes while a kernel read them."""
    cp = pytest.importorskip("cupy")
    from bilinear.runtime import graph_memsets

    memory, reads = cp.zeros(4096, dtype=cp.uint8), cp.zeros(4096, dtype=cp.uint8)
    stream, captured = _captured(cp, [((lambda s, v=v: cp.cuda.runtime.memsetAsync(memory.data.ptr, v, 4096, s)),
                                       memory) for v in (1, 2)], reads)
    real = graph_memsets._call

    def failing(name, *args):
        if name == "cuGraphAddDependencies_v2":
            raise graph_memsets.Unavailable("refused here")
        return real(name, *args)

    nodes = len(graph_memsets._nodes(captured.graph))
    monkeypatch.setattr(graph_memsets, "_call", failing)
    with pytest.raises(graph_memsets.Unavailable, match="refused here"):
        graph_memsets.edited(captured)
    with pytest.warns(RuntimeWarning, match=r"replayed as captured, memset nodes and all \(refused here\)"):
        assert graph_memsets.kernels_only(captured) is captured
    # no node added (the fill kernel, before its failed edges) or gone
    assert len(graph_memsets._nodes(captured.graph)) == nodes and "bilinear_fill" not in captured.debug_dot_str()
    captured.launch(stream)
    stream.synchronize()
    assert bool((reads == 3).all())


@pytest.mark.gpu
def test_a_replay_from_a_new_thread_finds_its_context():
    """cuGraphLaunch is the driver's: in a thread whose first CUDA call it is, no context is current
    (CuPy's launch, through the runtime, made it so itself)."""
    import threading

    cp = pytest.importorskip("cupy")
    from bilinear.runtime.graph_memsets import KernelGraph, kernels_only

    memory, reads = cp.zeros(4096, dtype=cp.uint8), cp.zeros(4096, dtype=cp.uint8)
    stream, captured = _captured(cp, [((lambda s: cp.cuda.runtime.memsetAsync(memory.data.ptr, 5, 4096, s)), memory)],
                                 reads)
    graph = kernels_only(captured)
    assert isinstance(graph, KernelGraph)
    failures = []

    def replay():
        try:
            graph.launch(stream)
            stream.synchronize()
        except Exception as error:  # noqa: BLE001 (reported by the assertion below)
            failures.append(error)

    thread = threading.Thread(target=replay)
    thread.start()
    thread.join()
    assert failures == [] and bool((reads == 5).all())
