"""The kernels issue 13 added, run small under compute-sanitizer (memcheck, racecheck):
breadth-first split and merge (vector and scalar paths, beta = 0 and beta != 0, odd sizes),
leaves on concurrent streams, and the Ozaki leaf's passes: plain and with a Strassen level on the
residues, max and norm scaling, k in chunks, odd and padded sizes, float64 and float32; and
(session 33) the element-wise kernels of from-zero plans, with beta = 0 and C full of NaN (and since
session 46 msmes2's, from zero and accumulating); and (session 65) the fill kernel that replaces a
captured graph's memset nodes, in a replay of Winograd L2's graph at n = 5120 (where cuBLAS's FP64
1280^3 leaves clear part of their workspace) and over memsets of each width and alignment.

    compute-sanitizer --tool memcheck python3 benchmarks/sanitize_kernels.py [--only SECTION ...]

SECTION: from-zero, breadth (split, merge, leaves on streams), ozaki or graphs; all without --only.
The graphs section checks the fill kernel only (cuBLAS's kernels are NVIDIA's, and slow under racecheck):
    compute-sanitizer --tool racecheck --kernel-name kns=bilinear_fill python3 benchmarks/sanitize_kernels.py --only graphs
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cupy

import bilinear
from bilinear.runtime.ozaki import K_CHUNK

ROOT = Path(__file__).resolve().parent.parent


def from_zero() -> None:
    """C = A·B through from-zero plans (msmes in place, the default schedule's temporaries), odd sizes."""
    rng = cupy.random.default_rng(1)
    for scheme, levels, dtype in [("msmes", 2, "float64"), ("msmes", 1, "float32"), ("strassen", 1, "float64"),
                                  ("winograd", 2, "float32"), ("msmes2", 1, "float64"), ("msmes2", 1, "float32")]:
        product = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", levels=levels, dtype=dtype)
        assert product.lowered.levels[0].from_zero is not None, scheme
        for M, K, N in ((256, 256, 256), (261, 259, 263), (96, 200, 48)):
            A, B = rng.standard_normal((M, K), dtype=dtype), rng.standard_normal((K, N), dtype=dtype)
            out = cupy.full((M, N), cupy.nan, dtype=dtype)
            expected = A.astype("float64") @ B.astype("float64")
            product(A, B, out=out)
            error = float(cupy.abs(out - expected).max())
            assert error < (1e-9 if dtype == "float64" else 1e-2), (scheme, levels, dtype, M, K, N, error)
            print(f"from zero {scheme} L{levels} {dtype} {M}x{K}x{N}: max error {error:.1e}", flush=True)
            if scheme == "msmes2":  # (session 46) its accumulating stages too: C += A·B, A and B restored
                before, A0 = out.copy(), A.copy()
                product(A, B, out=out, beta=1.0)
                error = float(cupy.abs(out - before - expected).max())
                assert error < (1e-9 if dtype == "float64" else 1e-2) and float(cupy.abs(A - A0).max()) < 1e-3, error
                print(f"accumulating {scheme} L{levels} {dtype} {M}x{K}x{N}: max error {error:.1e}", flush=True)


def breadth_first() -> None:
    """Breadth-first split and merge (vector and scalar paths, beta = 0 and beta != 0, odd sizes) and
    leaves on concurrent streams."""
    rng = cupy.random.default_rng(0)
    cases = [("winograd", 2, 2, "serial", "float64"), ("winograd", 2, 2, "streams", "float32"),
             ("grey234", 1, 1, "batched", "float64"), ("strassen", 2, 1, "streams", "float64")]
    for scheme, levels, breadth, launch, dtype in cases:
        product = bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", levels=levels, breadth=breadth, launch=launch,
                                   dtype=dtype)
        for M, K, N in ((256, 256, 256), (261, 259, 263), (96, 200, 48)):
            A = rng.standard_normal((M, K), dtype=dtype)
            B = rng.standard_normal((K, N), dtype=dtype)
            C = rng.standard_normal((M, N), dtype=dtype)
            out = C.copy()
            levels_run = product.lowered.levels
            beta = 0.0 if levels_run and levels_run[0].schedule.overwrites_c else 2.0
            product(A, B, out=out, alpha=0.5, beta=beta)
            expected = 0.5 * (A.astype("float64") @ B.astype("float64")) + beta * C
            error = float(cupy.abs(out - expected).max())
            tolerance = 1e-9 if dtype == "float64" else 1e-2
            assert error < tolerance, (scheme, launch, dtype, M, K, N, error)
            print(f"{scheme} L{levels} bfs{breadth} {launch} {dtype} {M}x{K}x{N}: max error {error:.1e}", flush=True)


def ozaki_passes() -> None:
    """The ozaki leaf's passes: plain and with a Strassen level on the residues, max and norm
    scaling, k in chunks, int8 GEMMs in tiles, odd and padded sizes, float64 and float32."""
    rng = cupy.random.default_rng(2)
    ozaki = bilinear.compile(ROOT / "algorithms" / "strassen.bl", levels=1, leaf="ozaki")
    A, B = rng.standard_normal((130, 97)), rng.standard_normal((97, 129))
    error = float(cupy.abs(ozaki(A, B) - A @ B).max())
    assert error < 1e-10, error
    print(f"ozaki leaf 130x97x129: max error {error:.1e}")
    from bilinear.runtime.ozaki_cuda import CudaOzaki

    runner = CudaOzaki()
    for (M, K, N), scaling, residue_levels, chunk in [((130, 97, 129), "max", 1, K_CHUNK), ((67, 300, 45), "norm", 1, K_CHUNK),
                                                      ((256, 256, 256), "norm", 1, K_CHUNK), ((67, 300, 45), "norm", 0, 128),
                                                      ((261, 64, 263), "max", 0, K_CHUNK)]:
        A, B, C = (rng.standard_normal(shape) for shape in ((M, K), (K, N), (M, N)))
        out = C.copy()
        runner.gemm(A, B, out, 0.5, 2.0, count=14, scaling=scaling, residue_levels=residue_levels, k_chunk=chunk)
        error = float(cupy.abs(out - (0.5 * A @ B + 2.0 * C)).max())
        assert error < 1e-10, (M, K, N, scaling, residue_levels, error)
        print(f"ozaki {M}x{K}x{N} {scaling} residue levels {residue_levels} k chunk {chunk}: max error {error:.1e}",
              flush=True)
    # int8 GEMMs in several row, column and k spans (session 23; small tiles stand in for 8192 ones)
    for tile, k_tile in [(256, 0), (384, 128)]:
        runner.tile, runner.k_tile = tile, k_tile
        A, B, C = rng.standard_normal((1000, 700)), rng.standard_normal((700, 900)), rng.standard_normal((1000, 900))
        out = C.copy()
        runner.gemm(A, B, out, 0.5, 2.0, count=14)
        error = float(cupy.abs(out - (0.5 * A @ B + 2.0 * C)).max())
        assert error < 1e-10, (tile, k_tile, error)
        print(f"ozaki 1000x700x900 int8 tiles {tile}, k tiles {k_tile or 'whole'}: max error {error:.1e}", flush=True)
    runner.tile, runner.k_tile = CudaOzaki().tile, CudaOzaki().k_tile
    # float32 (session 22): float loads (four to a 16-byte load where a row is aligned; a column
    # offset leaves rows unaligned), C rounded once; k padded to K_ALIGN
    for (M, K, N), offset, scaling, residue_levels, chunk in [((130, 97, 129), 0, "max", 0, K_CHUNK),
                                                              ((67, 300, 45), 1, "norm", 1, K_CHUNK),
                                                              ((256, 256, 256), 0, "max", 1, K_CHUNK),
                                                              ((61, 200, 33), 3, "max", 0, 64)]:
        A = rng.standard_normal((M, K + offset), dtype="float32")[:, offset:]
        B, C = rng.standard_normal((K, N), dtype="float32"), rng.standard_normal((M, N), dtype="float32")
        out = C.copy()
        runner.gemm(A, B, out, 0.5, 2.0, scaling=scaling, residue_levels=residue_levels, k_chunk=chunk)
        expected = 0.5 * (A.astype("float64") @ B.astype("float64")) + 2.0 * C.astype("float64")
        error = float(cupy.abs(out - expected).max())
        assert error < 1e-4, (M, K, N, offset, scaling, residue_levels, error)
        print(f"ozaki float32 {M}x{K}x{N} offset {offset} {scaling} residue levels {residue_levels} k chunk {chunk}: "
              f"max error {error:.1e}", flush=True)


def graph_fills() -> None:
    """The fill kernel (templates/fill.cu.j2) where a replay runs it: Winograd L2's graph at n = 5120,
    whose leaves' memsets it stands for, against the same product run without a graph.  Memsets of
    each width, alignment and pitch: tests/test_graph_memsets.py under the sanitizer."""
    from bilinear.runtime.graph_memsets import KernelGraph

    rng = cupy.random.default_rng(3)
    n = 5120
    product = bilinear.compile("winograd", dtype="float64", levels=2, breadth=2, launch="serial", backend="cupy")
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    out, direct = cupy.zeros((n, n)), cupy.zeros((n, n))
    graph = product.capture(A, B, out)
    replayed = graph.graph
    assert isinstance(replayed, KernelGraph) and "bilinear_fill" in replayed.debug_dot_str(), type(replayed)
    graph()
    product(A, B, out=direct)
    error = float(cupy.abs(out - direct).max())  # cuBLAS may split k differently in a capture
    assert error < 1e-9, error
    print(f"winograd L2 graph n={n}: fill kernels in the replay, max difference from the direct call {error:.1e}",
          flush=True)


SECTIONS = {"from-zero": from_zero, "breadth": breadth_first, "ozaki": ozaki_passes, "graphs": graph_fills}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=SECTIONS, metavar="SECTION",
                        help=f"run these sections only ({', '.join(SECTIONS)})")
    for name in parser.parse_args().only or SECTIONS:
        SECTIONS[name]()


if __name__ == "__main__":
    main()
