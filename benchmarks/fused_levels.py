"""msmes at three levels written as one in-place schedule (msmes3) against msmes2, head to head.

msmes2 fuses two levels' passes and won at FP64 16384; this asks whether a third fused level
does too: its 343 leaves do 7/8 of msmes2's leaf work, its passes move 96.5 GiB against 55.9
(`bilinear verify FILE -n 16384`).  msmes3 is derived here (`bilinear product msmes2 msmes`), not
shipped.  Each configuration meets cuBLAS alone in ABBA rounds (head_to_head.py's pairs).

    python3 benchmarks/fused_levels.py -n 16384 --rounds 2 --repeat 12 --json FILE
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from head_to_head import ROOT, _pair  # noqa: E402

import bilinear  # noqa: E402
from bilinear.measure import error_bound, relative_error  # noqa: E402


def _msmes3(folder: Path) -> Path:
    path = folder / "msmes3.bl"
    subprocess.run([sys.executable, "-m", "bilinear", "product", str(ROOT / "algorithms" / "msmes2.bl"), "msmes",
                    "--name", "msmes3", "-o", str(path)], check=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=16384)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--rounds", type=int, default=2, help="times each configuration meets cuBLAS, alternating")
    parser.add_argument("--repeat", type=int, default=12, help="ABBA rounds per meeting")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        # label: (file, the Strassen levels its one schedule level holds, which bound its error)
        files = {"msmes3 L1 (0 B)": (_msmes3(Path(folder)), 3), "msmes2 L1 (0 B)": (ROOT / "algorithms" / "msmes2.bl", 2)}
        products = {label: (bilinear.compile(path, levels=1, dtype=args.dtype), depth)
                    for label, (path, depth) in files.items()}
    rng = cupy.random.default_rng(args.n)
    A, B = (rng.standard_normal((args.n, args.n), dtype=args.dtype) for _ in range(2))
    reference = cupy.matmul(A, B)
    out = cupy.empty_like(reference)
    rows = []
    for _ in range(args.rounds):
        for label, (product, depth) in products.items():
            out.fill(0)
            product(A, B, out=out)
            error = relative_error(out, reference, A, B)
            library_ms, ours_ms = _pair(lambda: product(A, B, out=out), lambda: cupy.matmul(A, B, out=reference),
                                        args.repeat)
            ratio = library_ms / ours_ms
            rows.append({"config": label, "n": args.n, "dtype": args.dtype, "ours_ms": ours_ms,
                         "cublas_ms": library_ms, "ratio": ratio, "error": error,
                         "correct": error <= error_bound(args.dtype, args.n, 2.3, depth)})
            print(f"{args.dtype} n={args.n} {label:<16} ours {ours_ms:8.3f} ms  cuBLAS {library_ms:8.3f} ms  "
                  f"ratio {ratio:.3f}  err {error:.1e}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
