"""Can the ozaki leaf hide its memory-bound reconstruction behind its compute-bound int8 GEMMs?
A probe: the leaf as it runs (one stream), against the same passes with the rows cut into blocks,
block b's reconstruction on a second stream while block b + 1's int8 GEMMs run on the first
(float64, default accuracy, alpha = 1, beta = 0): both captured as CUDA graphs and replayed, as
matmul replays them, against cuBLAS DGEMM called directly (CUDA events, interleaved, median of
--repeat).

    python3 benchmarks/ozaki_overlap.py 4096 8192 --blocks 2 4
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cupy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bilinear.measure import median, time_interleaved  # noqa: E402
from bilinear.runtime import cublas_capture, int8_gemm, ozaki  # noqa: E402
from bilinear.runtime.cuda import device_info  # noqa: E402
from bilinear.runtime.ozaki_cuda import THREADS, VALUES, BT_LANES, CudaOzaki, _ld  # noqa: E402


def pipelined(runner: CudaOzaki, A, B, C, blocks: int, side) -> None:
    """The plain leaf, rows in ``blocks`` blocks, reconstruction on ``side``."""
    m, k = A.shape
    n = B.shape[1]
    plan = ozaki.make_plan(k, None, ozaki.default_bits(C.dtype), "max")
    m4, n4, kp = ozaki.round_up(m, ozaki.MN_ALIGN), ozaki.round_up(n, ozaki.MN_ALIGN), ozaki.round_up(k, ozaki.K_ALIGN)
    kernels = runner.kernels(plan.count, A.dtype)
    at = ozaki.workspace_layout(m, k, n, plan.count, scaling=plan.scaling)
    buffer = runner._buffer(at["total"])
    base = buffer.data.ptr
    ptr = {name: np.uint64(base + offset) for name, offset in at.items()}
    grid = device_info().sms * 8
    runner._statistics(A, B, plan, buffer, at)
    kernels["oz_residues_a"]((min(-(-m4 * (kp // VALUES) // THREADS), grid),), (THREADS,), (
        A, np.int64(_ld(A)), np.int32(m), np.int32(k), np.int32(m4), np.int32(kp), ptr["amax_a"],
        np.int32(plan.bits_a), ptr["ra"]))
    kernels["oz_residues_bt"]((min(-(-n4 * ozaki.round_up(kp // VALUES, BT_LANES) // THREADS), grid),), (THREADS,), (
        B, np.int64(_ld(B)), np.int32(k), np.int32(n), np.int32(n4), np.int32(kp), ptr["amax_b"],
        np.int32(plan.bits_b), ptr["rb"]))
    main = cupy.cuda.get_current_stream()
    handle = cupy.cuda.device.get_cublas_handle()
    cublas_capture.prepare(handle, main.ptr)  # this probe runs only while a graph is captured
    ldc = _ld(C)
    for i0, rows in int8_gemm.tile_spans(m4, -(-m4 // blocks), 256):
        int8_gemm.issue(cublas_capture.gemm_strided_ex, handle, base + at["ra"] + i0 * kp, base + at["rb"],
                        base + at["products"] + 4 * i0 * n4, rows, n4, kp, plan.count, (m4 * kp, n4 * kp, m4 * n4),
                        batched=False, tile=runner.tile, k_tile=runner.k_tile)
        done = main.record()
        side.wait_event(done)
        real = min(rows, m - i0)
        with side:
            kernels["oz_reconstruct"]((min(-(-real * (n4 // 4) // THREADS), grid),), (THREADS,), (
                np.uint64(base + at["products"] + 4 * i0 * n4), np.int32(m4), np.int32(n4), np.int32(real), np.int32(n),
                np.uint64(base + at["amax_a"] + 8 * i0), ptr["amax_b"], np.int32(plan.bits_a), np.int32(plan.bits_b),
                C[i0:], np.int64(ldc), np.float64(1.0), np.float64(0.0)))
    main.wait_event(side.record())


def captured(call, stream):
    """``call`` recorded on ``stream`` as a CUDA graph."""
    stream.begin_capture()
    call()
    return stream.end_capture()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="+", type=int)
    parser.add_argument("--blocks", nargs="+", type=int, default=[2, 4])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    side, stream = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
    for n in args.sizes:
        rng = cupy.random.default_rng(n)
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        C, reference = cupy.empty((n, n)), cupy.empty((n, n))
        outs = {b: cupy.empty((n, n)) for b in args.blocks}
        runner = CudaOzaki()
        runner.gemm(A, B, reference)
        with stream:
            graphs = [captured(lambda: runner.gemm(A, B, C), stream)]
            graphs += [captured(lambda b=b: pipelined(runner, A, B, outs[b], b, side), stream) for b in args.blocks]
            calls = [graphs[0].launch, lambda: cupy.matmul(A, B, out=C), *[g.launch for g in graphs[1:]]]
            times = [1e3 * median(t) for t in time_interleaved(calls, cupy, repeat=args.repeat, warmup=2)]
        stream.synchronize()
        for b in args.blocks:
            assert bool(cupy.array_equal(outs[b], reference)), (n, b)  # the same bits
        print(f"n={n}: leaf {times[0]:.3f} ms, DGEMM {times[1]:.3f} ms ({times[1] / times[0]:.3f}x); "
              + ", ".join(f"{b} row blocks {t:.3f} ms ({times[1] / t:.3f}x)" for b, t in zip(args.blocks, times[2:])),
              flush=True)


if __name__ == "__main__":
    main()
