"""Run under ``mpiexec -n P``: every shipped scheme's distributed product against a float64 product.

    mpiexec -n 4 python tests/helpers/distributed_check.py --backend numpy [--sizes 1,1,1 37,29,41 ...]

Rank 0 prints one line per case (``ok`` or ``FAIL``) and a summary; the
exit status is 1 if any case fails on any rank.  The same script checks the
GPUs (``--backend cupy``, NCCL) and the CPU (``--backend numpy``, MPI).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import bilinear.distributed as dist  # noqa: E402
from bilinear.distributed.measure import error_bound, layout_pieces, same_inputs  # noqa: E402
from bilinear.measure import relative_error  # noqa: E402

SCHEMES = ("strassen", "winograd", "msmes", "rsmm", "grey333", "grey234", "naive2x2")
# (decomposition scheme, local scheme or None for the same, local levels, inputs, output)
LAYOUTS = (("replicated", "replicated"), ("root", "root"), ("root", "replicated"), ("block2d", "block2d"))


def _cases(schemes):
    for scheme in schemes:
        yield scheme, "bfs", None, 1, LAYOUTS[0]
    yield "winograd", "bfs", "msmes", 2, LAYOUTS[1]
    yield "strassen", "2d", "strassen", 1, LAYOUTS[2]
    yield "grey333", "bfs", "msmes", 1, LAYOUTS[1]
    yield "winograd", "bfs", "msmes", 1, LAYOUTS[3]
    yield "grey234", "2d", "rsmm", 1, LAYOUTS[3]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--schemes", nargs="*", default=list(SCHEMES))
    parser.add_argument("--sizes", nargs="*", default=["1,1,1", "2,3,2", "37,29,41", "64,64,64", "101,67,53"])
    args = parser.parse_args()
    comm = dist.comm.make_comm(args.backend)
    xp, failures, count = comm.xp, 0, 0
    for scheme, kind, local, levels, (inputs, output) in _cases(args.schemes):
        product = dist.compile(
            ROOT / "algorithms" / f"{scheme}.bl",
            decomposition=kind,
            local=None if local is None else ROOT / "algorithms" / f"{local}.bl",
            levels=levels,
            dtype=args.dtype,
            backend=args.backend,
            inputs=inputs,
            output=output,
            comm=comm,
        )
        for size in args.sizes:
            M, K, N = map(int, size.split(","))
            A, B = same_inputs(xp, M, K, N, args.dtype, seed=M * 7 + N)
            C = same_inputs(xp, M, N, 1, args.dtype, seed=K)[0]
            expected = 1.5 * (A.astype("float64") @ B.astype("float64")) - 0.5 * C.astype("float64")
            given = layout_pieces(product, A.copy(), B.copy(), C.copy())
            passed = {name: given[name].copy() for name in ("A", "B") if given[name] is not None}
            result = product(given["A"], given["B"], out=given["out"], alpha=1.5, beta=-0.5)
            computed = result is not None and result.size
            error = relative_error(result, expected[given["region"]], A, B) if computed else 0.0
            bound = error_bound(product, args.dtype, M, K, N)
            unchanged = all(bool(xp.array_equal(given[name], before)) for name, before in passed.items())
            bad = int(comm.max(float(not (error <= bound and unchanged))))
            failures += bad
            count += 1
            if comm.rank == 0:
                status = "FAIL" if bad else "ok"
                print(
                    f"{status} {scheme} ({kind}, local {local or scheme} L{levels}, {inputs}->{output}) {M}x{K}x{N} "
                    f"error {error:.2e} bound {bound:.2e} inputs {'unchanged' if unchanged else 'CHANGED'}",
                    flush=True,
                )
    if comm.rank == 0:
        print(f"{count - failures} passed, {failures} failed on {comm.size} ranks ({args.backend})", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
