"""The ozaki leaf alone (its default accuracy target) as matmul would replay it, against cuBLAS,
beside the committed table's choice at each shape: is it a candidate worth measuring?  With
``--k-align`` and ``--mn-align``, once per padding of the int8 GEMMs' dimensions
(bilinear.runtime.ozaki.K_ALIGN, MN_ALIGN).

    python3 benchmarks/ozaki_probe.py 6144x6144x6144 10000x9000x11000 [--dtype float32] [--k-align 16 128]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cupy

import bilinear
from bilinear.dispatch import dispatch
from bilinear.measure import error_bound
from bilinear.runtime import ozaki

sys.path.insert(0, str(Path(__file__).parent))
from dispatch_grid import ROOT, _inputs, _shape, _speedup  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", nargs="+", type=_shape, metavar="MxKxN")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--k-align", nargs="+", type=int, default=[ozaki.K_ALIGN])
    parser.add_argument("--mn-align", nargs="+", type=int, default=[ozaki.MN_ALIGN])
    parser.add_argument("--levels", nargs="+", type=int, default=[0],
                        help="Winograd levels above the leaf (depth-first, leaves one after another)")
    args = parser.parse_args()
    for m, k, n in args.shapes:
        A, B, C = _inputs(args.dtype, m, k, n)
        out = cupy.zeros_like(C)
        table = dispatch(m, k, n, args.dtype)
        print(f"{m}x{k}x{n} {args.dtype}: table's choice {table.kernel} ({table.reason})", flush=True)
        for levels in args.levels:
            for ozaki.K_ALIGN in args.k_align:
                for ozaki.MN_ALIGN in args.mn_align:
                    product = bilinear.compile(ROOT / "algorithms" / "winograd.bl", levels=levels, leaf="ozaki",
                                               dtype=args.dtype)
                    ratio, error = _speedup(product, A, B, C, out, 7)
                    print(f"  winograd L{levels} over ozaki leaves, k padded to {ozaki.K_ALIGN}, m and n to "
                          f"{ozaki.MN_ALIGN}: {ratio:.3f}x cuBLAS (error against cuBLAS {error:.2e}, "
                          f"bound {error_bound(args.dtype, k, 2.3, levels):.2e})", flush=True)
        A = B = C = out = None
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
