"""The generated fused product kernels, executed on the CPU (tests/host_emulator/device.h).

Each case renders a stage's kernel exactly as the runtime does (``render_product_stage``), builds
it with g++ as C++ against the emulator (one std::thread per CUDA thread, barriers, cp.async as a
synchronous copy, FP64 ``mma.sync`` through the warp's fragments), launches it once on block views
with padded leading dimensions at odd sizes, and compares every C view with the kernel's contract
(``reference_update``, in float64); bytes outside the C views must not change.  So CI runs the
generated code itself, not only the NumPy backend's re-implementation of it: tile edges, operand
sums, the cp.async ring, alignment paths, epilogues and atomics.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from bilinear.lower.product import (
    FusedProduct,
    ProductStageSpec,
    SpecTerm,
    TileConfig,
    gemm_spec,
    plan_kernel,
    reference_update,
    render_product_stage,
)
from bilinear.runtime import tuning
from bilinear.runtime.views import rows_aligned

EMULATOR = Path(__file__).resolve().parent / "host_emulator"
GXX = shutil.which("g++")

pytestmark = [pytest.mark.skipif(GXX is None, reason="g++ is not installed"), pytest.mark.slow]


def terms(*pairs) -> tuple[SpecTerm, ...]:
    return tuple(SpecTerm(slot, Fraction(coef)) for slot, coef in pairs)


def msmes_products1(dtype: str, batch: int) -> ProductStageSpec:
    """MSMES's first product stage: four products, each into two of four C blocks (so atomics)."""
    products = (
        FusedProduct(terms((2, 1)), terms((0, 1)), terms((2, 1), (3, -1))),
        FusedProduct(terms((0, 1)), terms((1, 1)), terms((1, 1), (3, 1))),
        FusedProduct(terms((3, 1)), terms((2, 1)), terms((0, 1), (2, 1))),
        FusedProduct(terms((1, 1)), terms((3, 1)), terms((0, -1), (1, 1))),
    )
    return ProductStageSpec(f"msmes_products1_{dtype}", dtype, products, 4, 4, 4, batch)


def sums(dtype: str, batch: int) -> ProductStageSpec:
    """Operand sums with fractional coefficients (register-staged loads)."""
    products = (
        FusedProduct(terms((0, 1), (3, 1)), terms((0, 1), (3, -1)), terms((0, 1), (3, Fraction(1, 3)))),
        FusedProduct(terms((2, -1), (1, Fraction(1, 2))), terms((1, 1)), terms((3, -2))),
    )
    return ProductStageSpec(f"sums_{dtype}", dtype, products, 4, 4, 4, batch)


@dataclass(frozen=True)
class Case:
    spec: ProductStageSpec
    config: TileConfig
    mnk: tuple[int, int, int]
    offset: int = 0  # elements: 1 misaligns every view (the one-element copy and epilogue paths)
    pad: int = 3  # extra elements per row of every buffer
    nbatch: int | None = None  # entries actually used (default: the spec's batch)
    alpha: float = 1.5

    @property
    def id(self) -> str:
        m, n, k = self.mnk
        return f"{self.spec.name}-{self.config.label().replace(' ', '_')}-{m}x{n}x{k}-o{self.offset}"


F32 = tuning.DEFAULTS[("float32", "single")]
F32_SUM = tuning.DEFAULTS[("float32", "sum")]
F64 = tuning.DEFAULTS[("float64", "single")]  # mma m16n8k4, double-buffered fragments
F64_SUM = tuning.DEFAULTS[("float64", "sum")]  # mma m16n8k8
F64_K16 = TileConfig(64, 64, 16, 2, 2, 2, 16, 1, 1)

CASES = [
    # FFMA: single views, aligned (float4 B pieces and epilogue) and not, tiles cut by every edge
    Case(gemm_spec("float32", "gemm_f32"), F32, (70, 133, 37)),
    Case(gemm_spec("float32", "gemm_f32"), F32, (65, 129, 100), offset=1, pad=2),
    Case(msmes_products1("float32", 2), F32, (45, 67, 29), pad=4),
    Case(msmes_products1("float32", 3), F32, (33, 40, 50), offset=1, nbatch=2),
    Case(sums("float32", 2), F32_SUM, (131, 70, 41), pad=1),
    Case(sums("float32", 1), F32_SUM, (20, 9, 70), offset=1),
    # FP64 tensor-core kernels, k = 4, 8 and 16
    Case(gemm_spec("float64", "gemm_f64"), F64, (70, 75, 37)),
    Case(msmes_products1("float64", 2), F64_SUM, (33, 17, 40), offset=1),
    Case(sums("float64", 2), F64_SUM, (40, 21, 35), pad=2),
    Case(gemm_spec("float64", "gemm_f64_k16"), F64_K16, (67, 70, 50), pad=1),
]


def _layout(case: Case):
    """Per entry, the (offset, ld) of every view: entry e's views of one side lie side by side in
    a band of rows of that side's buffer, each buffer row padded; returns the layouts and sizes."""
    spec, (m, n, k) = case.spec, case.mnk
    nbatch = case.nbatch or spec.batch
    shapes = {"a": (m, k, spec.n_a), "b": (k, n, spec.n_b), "c": (m, n, spec.n_c)}
    layouts, sizes = {}, {}
    for side, (rows, cols, count) in shapes.items():
        ld = count * cols + case.pad
        layouts[side] = [
            [(case.offset + e * rows * ld + s * cols, ld) for s in range(count)] for e in range(nbatch)
        ]
        sizes[side] = case.offset + nbatch * rows * ld + 8
    return nbatch, layouts, sizes


def _views(buffer: np.ndarray, layout, rows: int, cols: int) -> list[np.ndarray]:
    return [np.lib.stride_tricks.as_strided(buffer[offset:], (rows, cols), (ld * buffer.itemsize, buffer.itemsize))
            for offset, ld in layout]


def _run(case: Case, tmp_path: Path) -> None:
    spec, config, (m, n, k) = case.spec, case.config, case.mnk
    dtype = np.dtype(spec.dtype)
    nbatch, layouts, sizes = _layout(case)
    rng = np.random.default_rng(sum(case.mnk) + spec.n_a)
    buffers = {side: rng.standard_normal(sizes[side]).astype(dtype) for side in "abc"}
    for side in "abc":
        buffers[side].tofile(tmp_path / f"{side}.bin")
    lines = [f"{m} {n} {k} {case.alpha!r} {nbatch} {plan_kernel(spec, config).smem_bytes}"]
    for e in range(nbatch):
        lines += [" ".join(f"{o} {ld}" for o, ld in layouts[side][e]) for side in "abc"]
    (tmp_path / "case.txt").write_text("\n".join(lines) + "\n")

    kernel = tmp_path / "kernel.cu"
    kernel.write_text(render_product_stage(spec, config))
    binary = tmp_path / "emulated"
    build = subprocess.run(
        [GXX, "-std=c++20", "-O2", "-pthread", "-w", f"-I{EMULATOR}", f'-DKERNEL_FILE="{kernel}"',
         f"-DKERNEL={spec.name}", str(EMULATOR / "product_harness.cpp"), "-o", str(binary)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run(
        [str(binary), *(str(tmp_path / name) for name in ("case.txt", "a.bin", "b.bin", "c.bin", "out.bin"))],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "vec_ab {} vec_c {}".format(*_flags(spec, layouts, dtype.itemsize)) in run.stdout, run.stdout

    got = np.fromfile(tmp_path / "out.bin", dtype=dtype)
    want = buffers["c"].astype(np.float64)
    scale = np.zeros_like(want)
    for e in range(nbatch):
        entry = tuple(_views(buffers[side], layouts[side][e], *shape)
                      for side, shape in (("a", (m, k)), ("b", (k, n)), ("c", (m, n))))
        magnitude = tuple([np.abs(v) for v in views] for views in entry)
        for delta, bound, (offset, ld) in zip(reference_update(spec, entry, case.alpha, np),
                                              reference_update(_absolute(spec), magnitude, abs(case.alpha), np),
                                              layouts["c"][e]):
            _views(want, [(offset, ld)], m, n)[0][...] += delta
            _views(scale, [(offset, ld)], m, n)[0][...] += bound
    inside = scale > 0
    assert np.array_equal(got[~inside], buffers["c"][~inside]), "the kernel wrote outside its C views"
    unit = np.finfo(dtype).eps / 2
    error = np.abs(got[inside] - want[inside]) / (scale[inside] + np.abs(buffers["c"][inside]))
    assert error.max() <= 8 * unit * (k + 4), (float(error.max()), run.stdout)


def _flags(spec: ProductStageSpec, layouts, itemsize: int) -> tuple[int, int]:
    """vec_ab and vec_c as the runtime sets them (runtime/product.py), from the views' offsets."""
    vec = 16 // itemsize

    def aligned(side: str) -> bool:
        return all(rows_aligned(o * itemsize, ld, vec, itemsize) for entry in layouts[side] for o, ld in entry)

    vec_ab = (aligned("a") or spec.dtype == "float32") and aligned("b")  # FP32 copies A an element at a time
    return int(vec_ab), int(aligned("c"))


def _absolute(spec: ProductStageSpec) -> ProductStageSpec:
    """The spec with every coefficient's magnitude: Σ|u||A|·Σ|v||B| bounds what rounding can reach."""
    def absolute(side):
        return tuple(SpecTerm(t.slot, abs(t.coef)) for t in side)

    products = tuple(FusedProduct(absolute(p.left), absolute(p.right), absolute(p.targets)) for p in spec.products)
    return ProductStageSpec(spec.name, spec.dtype, products, spec.n_a, spec.n_b, spec.n_c, spec.batch)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_generated_product_kernel_runs_on_the_cpu(case, tmp_path):
    _run(case, tmp_path)


def test_the_cases_take_both_alignment_paths():
    flags = {_flags(c.spec, _layout(c)[1], np.dtype(c.spec.dtype).itemsize) for c in CASES}
    assert {f[0] for f in flags} == {0, 1} and {f[1] for f in flags} == {0, 1}
