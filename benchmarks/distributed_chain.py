"""A chain of 7 FP64 matrices of mixed sizes over every rank, against one GPU, in one run.

    mpiexec -n P python3 benchmarks/distributed_chain.py [--json OUT.json] [--scale 1.0]

The planner's model is measured first on this machine: one GPU's DGEMM rate
(an 8192³ product) and the distributed product at 16384 and 32768, which tell
its arithmetic's speed-up from the rate it moves A, B and C at
(``ChainModel.fitted``).  Then
the chain is planned (printed), run, checked against the product computed
on rank 0's GPU with cuBLAS in the same parenthesization, and timed against
one GPU doing it product by product with cuBLAS, both in the planner's
order and left to right.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bilinear.distributed as dist  # noqa: E402
from bilinear.distributed.measure import measure, same_inputs  # noqa: E402
from bilinear.measure import median, time_device  # noqa: E402

DIMS = (16384, 8192, 24576, 6144, 20480, 12288, 28672, 10240)  # 7 matrices: DIMS[i] x DIMS[i+1]


def one_gpu(xp, matrices, tree):
    if isinstance(tree, int):
        return matrices[tree]
    return xp.matmul(one_gpu(xp, matrices, tree[0]), one_gpu(xp, matrices, tree[1]))


def left_to_right(xp, matrices):
    result = matrices[0]
    for matrix in matrices[1:]:
        result = xp.matmul(result, matrix)
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every dimension (CPU checks: 0.01)")
    parser.add_argument("--backend", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    product = dist.compile(
        Path(__file__).resolve().parents[1] / "algorithms/winograd.bl",
        local="algorithms/msmes.bl",
        levels=1,
        backend=args.backend,
    )
    comm, xp = product.comm, product.comm.xp
    dims = [max(1, int(d * args.scale)) for d in DIMS]
    probe = max(16, int(8192 * args.scale))
    A, B = same_inputs(xp, probe, probe, probe, "float64", 1)
    rate = 2.0 * probe**3 / median(time_device(lambda: xp.matmul(A, B), xp, repeat=3))
    # the distributed product at two sizes: its arithmetic and its movement (ChainModel.fitted). Not at
    # 8192: over 4 H200s it took 21.9 ms there, slower than one GPU's 18 ms, bound by neither (the fit
    # at 8192 and 16384 found no positive cost of movement and predicted the chain at 108.6 ms; 141.0).
    timings = [((n, n, n), measure(product, n, n, n, "float64", repeat=3).seconds) for n in (2 * probe, 4 * probe)]
    model = dist.ChainModel.fitted(comm.max(rate), timings)
    matrices = [same_inputs(xp, dims[i], dims[i + 1], 1, "float64", seed=10 + i)[0] for i in range(7)]
    result, plan = dist.chain(matrices, product, model)
    _, tree = dist.chain_module.parenthesize(dims, lambda m, k, n: model.one_gpu(m, k, n))
    error = 0.0
    if comm.rank == 0:
        reference = one_gpu(xp, matrices, tree)
        error = float(xp.linalg.norm(result - reference) / xp.linalg.norm(reference))
        del reference
    times = []
    for _ in range(args.repeat):
        comm.barrier()
        times.append(comm.max(time_device(lambda: dist.chain(matrices, product, model), xp, repeat=1, warmup=0)[0]))
    planned = (
        median(time_device(lambda: one_gpu(xp, matrices, tree), xp, repeat=args.repeat)) if comm.rank == 0 else 0.0
    )
    naive = median(time_device(lambda: left_to_right(xp, matrices), xp, repeat=args.repeat)) if comm.rank == 0 else 0.0
    if comm.rank == 0:
        seconds = median(times)
        print(plan.describe())
        print(
            f"model: one GPU {model.rate / 1e12:.1f} TFLOP/s; over {comm.size} ranks the arithmetic "
            f"{model.speedup:.2f}x one GPU, A, B and C moved at "
            f"{'no cost told apart' if model.moved == float('inf') else f'{model.moved / 1e9:.0f} GB/s'} "
            f"(fitted to {2 * probe} and {4 * probe}: {timings[0][1] * 1e3:.1f} and {timings[1][1] * 1e3:.1f} ms)"
        )
        print(
            f"chain on {comm.size} ranks: {seconds * 1e3:.1f} ms (error {error:.1e} against one GPU, same order); "
            "one GPU "
            f"product by product with cuBLAS: {planned * 1e3:.1f} ms in this order ({planned / seconds:.2f}x), "
            f"{naive * 1e3:.1f} ms left to right ({naive / seconds:.2f}x)"
        )
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "dims": dims,
                        "ranks": comm.size,
                        "plan": plan.describe(),
                        "seconds": seconds,
                        "one_gpu_planned": planned,
                        "one_gpu_left_to_right": naive,
                        "error": error,
                        "rate": model.rate,
                        "speedup": model.speedup,
                        "moved": None if model.moved == float("inf") else model.moved,  # bytes/s; None: no cost
                        "predicted": plan.predicted_seconds,
                    },
                    indent=1,
                )
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
