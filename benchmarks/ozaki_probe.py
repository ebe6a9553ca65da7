"""The ozaki leaf alone (default accuracy: 16 moduli, "max" scaling) as matmul would replay it, against
cuBLAS, beside the committed table's fast scheme at each shape: is it a candidate worth measuring?

    python3 benchmarks/ozaki_probe.py 6144x6144x6144 10000x9000x11000
"""

from __future__ import annotations

import sys

import cupy

import bilinear
from bilinear.dispatch import dispatch
from bilinear.measure import error_bound

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from dispatch_grid import ROOT, _inputs, _shape, _speedup  # noqa: E402


def main() -> None:
    ozaki = bilinear.compile(ROOT / "algorithms" / "winograd.bl", levels=0, leaf="ozaki")
    for text in sys.argv[1:]:
        m, k, n = _shape(text)
        A, B, C = _inputs("float64", m, k, n)
        out = cupy.zeros_like(C)
        ratio, error = _speedup(ozaki, A, B, C, out, 7)
        table = dispatch(m, k, n, "float64")
        fast = table.config and bilinear.compile(ROOT / "algorithms" / f"{table.config.scheme}.bl", levels=table.config.levels,
                                                 breadth=table.config.breadth, launch=table.config.launch)
        fast_ratio = _speedup(fast, A, B, C, out, 7)[0] if fast else float("nan")
        print(f"{text}: ozaki L0 {ratio:.3f}x (error {error:.2e}, bound {error_bound('float64', k, 2.3, 0):.2e}); "
              f"table's choice {table.kernel} {fast_ratio:.3f}x ({table.reason})", flush=True)
        A = B = C = out = None
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
