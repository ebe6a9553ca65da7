"""Memset nodes of a captured graph made kernel nodes (bilinear/runtime/graph_memsets.py).

The host side (which unit, which pattern) is checked on the CPU against what a memset writes, by
running the fill kernel's loop in Python; the kernel itself compiles with nvcc here and runs on
the GPU in the tests marked gpu.
"""

from __future__ import annotations

import re
import shutil
import subprocess

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


@pytest.mark.gpu
@pytest.mark.parametrize(("offset", "length", "value"), [(0, 1 << 20, 0), (3, 1001, 0xAB), (16, 4096, 7)])
def test_a_graph_of_memsets_and_kernels_replays_them_as_kernels(offset, length, value):
    cp = pytest.importorskip("cupy")
    from bilinear.runtime.graph_memsets import KernelGraph, kernels_only

    memory = cp.full(offset + length + 64, 0xEE, dtype=cp.uint8)
    doubled = cp.ones(1000)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for _ in range(3):
            cp.cuda.runtime.memsetAsync(memory.data.ptr + offset, value, length, stream.ptr)
            doubled *= 2.0
        captured = stream.end_capture()
    assert len(re.findall(r"\bMEMSET\b", captured.debug_dot_str())) == 3
    graph = kernels_only(captured)
    assert isinstance(graph, KernelGraph) and not re.findall(r"\bMEMSET\b", graph.debug_dot_str())
    graph.launch(stream)
    stream.synchronize()
    expected = np.full(offset + length + 64, 0xEE, dtype=np.uint8)
    expected[offset : offset + length] = value
    assert np.array_equal(memory.get(), expected) and bool((doubled == 8.0).all())


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
    assert kernels_only(captured) is captured
