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
from bilinear.distributed.measure import error_bound, same_inputs  # noqa: E402
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


def _mine(comm, inputs: str, output: str, A, B, C, expected) -> dict:
    """What this rank passes in each layout (copies, so the whole matrices stay to compare with)."""
    from bilinear.distributed.layout import block_of

    def piece(X, layout):
        if layout == "block2d":
            rows, cols = block_of(comm.rank, comm.size, *X.shape)
            return X[rows, cols].copy()
        return X.copy() if layout == "replicated" or comm.rank == 0 else None

    return {"A": piece(A, inputs), "B": piece(B, inputs), "C": piece(C, output), "expected": piece(expected, output)}


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
            originals = A.copy(), B.copy()
            expected = 1.5 * (A.astype("float64") @ B.astype("float64")) - 0.5 * C.astype("float64")
            mine = _mine(comm, inputs, output, A, B, C, expected)
            result = product(mine["A"], mine["B"], out=mine["C"], alpha=1.5, beta=-0.5)
            error = relative_error(result, mine["expected"], A, B) if result is not None and result.size else 0.0
            bound = error_bound(product, args.dtype, K)
            unchanged = bool(xp.array_equal(A, originals[0]) and xp.array_equal(B, originals[1]))
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
