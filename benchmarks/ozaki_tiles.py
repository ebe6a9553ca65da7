"""How the ozaki leaf cuts its int8 GEMMs into cuBLAS calls, measured at rectangular shapes: the
leaf alone (its default accuracy target) replayed as a graph against cuBLAS, and the time of its
int8 GEMMs within one direct call, for each tiling policy (bilinear.runtime.int8_gemm's
``tile``, ``k_tile`` and ``tile_spans``; a call per modulus, or one strided-batched call over the
moduli per tile).  "fixed" cuts every dimension at multiples of the tile (10000 = 8192 + 1808), as
the leaf did before balanced spans.

    python3 benchmarks/ozaki_tiles.py 10000x9000x11000 12288x12288x12288 [--dtype float32]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cupy

import bilinear
from bilinear.runtime import int8_gemm

sys.path.insert(0, str(Path(__file__).parent))
from dispatch_grid import ROOT, _inputs, _shape, _speedup  # noqa: E402
from ozaki import breakdown, leaf_of  # noqa: E402

BALANCED = int8_gemm.tile_spans


def fixed_spans(extent: int, tile: int, align: int) -> list[tuple[int, int]]:
    return [(start, min(tile, extent - start)) for start in range(0, extent, tile)]


#: name: (spans, tile, k_tile, batched: one strided-batched call over the moduli per tile)
POLICIES = {
    "fixed 8192": (fixed_spans, 8192, None, False),
    "balanced 8192": (BALANCED, 8192, None, False),
    "balanced 8192, k whole": (BALANCED, 8192, 0, False),
    "balanced 4096, k whole": (BALANCED, 4096, 0, False),
    "whole": (BALANCED, 0, 0, False),
    "batched, balanced 8192, k whole": (BALANCED, 8192, 0, True),
    "batched, balanced 4096, k whole": (BALANCED, 4096, 0, True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", nargs="+", type=_shape, metavar="MxKxN")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    args = parser.parse_args()
    for m, k, n in args.shapes:
        A, B, C = _inputs(args.dtype, m, k, n)
        out = cupy.zeros_like(C)
        print(f"{m}x{k}x{n} {args.dtype}", flush=True)
        for name in args.policies:
            int8_gemm.tile_spans, tile, k_tile, batched = POLICIES[name]
            product = bilinear.compile(ROOT / "algorithms" / "winograd.bl", levels=0, leaf="ozaki", dtype=args.dtype)
            runner = leaf_of(product).cuda
            runner.tile, runner.k_tile, runner.batched = tile, k_tile, batched
            ratio, error = _speedup(product, A, B, C, out, 7)
            passes = breakdown(product, A, B, out)
            product.release_workspace()
            ms = passes["ms"]
            print(f"  {name:32s} {ratio:.3f}x cuBLAS  (one direct call {passes['total_ms']:7.2f} ms: int8 GEMMs "
                  f"{ms.get('int8 GEMMs', 0):7.2f}, residues {ms.get('residues A', 0) + ms.get('residues B', 0):6.2f}, "
                  f"reconstruct {ms.get('reconstruct', 0):6.2f}; error against cuBLAS {error:.2e})", flush=True)
        int8_gemm.tile_spans = BALANCED
        A = B = C = out = None
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
