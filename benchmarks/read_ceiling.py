#!/usr/bin/env python3
"""How fast can the H100 read memory, and how close do TSM2R and cuBLAS come, for FP64 C = A·B
with n ≤ 8 (a read of A and nothing else that matters)?

    python3 benchmarks/read_ceiling.py --out DIR [--shapes 16384x16384x4,32768x32768x8]

1. The read ceiling: kernels that only read a 2 GiB and an 8 GiB buffer, with 16-byte
   ``ld.global.nc`` loads (several grid sizes and unrolls) and with Hopper's bulk copy engine
   (``cp.async.bulk`` into shared memory, mbarrier completion).  Bytes read per second.
2. For each shape: cuBLAS and every TSM2R candidate the model's space holds, interleaved
   (``benchmarks/tsm2.py``'s timing), GB/s of A + B + C.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import cupy
import tsm2 as tsm2_bench

from bilinear.lower import tsm2 as model
from bilinear.lower.tsm2 import Params
from bilinear.runtime import tsm2 as runtime

READ = r"""
extern "C" __global__ void read_ldg(const double2* __restrict__ p, long long n2, double* out)
{
    double s = 0.0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n2; i += UNROLL * stride) {
        double2 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = __ldg(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) s += v[u].x + v[u].y;
    }
    for (; i < n2; i += stride) { double2 v = __ldg(p + i); s += v.x + v.y; }
    if (s == 1.2345e300) out[0] = s;  // keeps the loads
}
"""

BULK = r"""
__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

extern "C" __global__ void read_bulk(const char* __restrict__ src, long long chunks, double* out)
{
    extern __shared__ __align__(128) unsigned char buf[];
    __shared__ __align__(8) unsigned long long bar[STAGES];
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(&bar[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    long long mine = (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x;  // chunks b, b + grid, ...
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES && s < mine; ++s) {
            const char* from = src + (blockIdx.x + (long long)s * gridDim.x) * CHUNK;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                         :: "r"(smem_addr(&bar[s])), "r"(CHUNK) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         :: "r"(smem_addr(buf + s * CHUNK)), "l"(from), "r"(CHUNK), "r"(smem_addr(&bar[s])) : "memory");
        }
    }
    double s = 0.0;
    for (long long i = 0; i < mine; ++i) {
        const int slot = i % STAGES;
        const unsigned phase = (i / STAGES) & 1;
        asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
                     :: "r"(smem_addr(&bar[slot])), "r"(phase) : "memory");
        s += reinterpret_cast<const double*>(buf + slot * CHUNK)[threadIdx.x];
        __syncthreads();
        if (threadIdx.x == 0 && i + STAGES < mine) {
            const char* from = src + (blockIdx.x + (i + STAGES) * gridDim.x) * CHUNK;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                         :: "r"(smem_addr(&bar[slot])), "r"(CHUNK) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         :: "r"(smem_addr(buf + slot * CHUNK)), "l"(from), "r"(CHUNK), "r"(smem_addr(&bar[slot])) : "memory");
        }
    }
    if (s == 1.2345e300) out[0] = s;
}
"""


def read_ceiling(timer, gib: int, reps: int, log) -> list[dict]:
    nbytes = gib << 30
    data = cupy.random.standard_normal(nbytes // 8, dtype=cupy.float64)
    sink = cupy.zeros(1, dtype=cupy.float64)
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    contenders = {}
    for unroll in (4, 8):
        kernel = cupy.RawKernel(READ, "read_ldg", options=(f"-DUNROLL={unroll}",))
        for blocks_per_sm in (4, 8, 16):
            grid = sms * blocks_per_sm

            def run(_, kernel=kernel, grid=grid, data=data):
                kernel((grid,), (256,), (data, np.int64(nbytes // 16), sink))

            contenders[f"ldg u{unroll} {blocks_per_sm}/SM"] = run
    for chunk, stages, per_sm in ((16384, 4, 3), (32768, 4, 1), (8192, 8, 3), (32768, 3, 2)):
        kernel = cupy.RawKernel(BULK, "read_bulk", options=(f"-DCHUNK={chunk}", f"-DSTAGES={stages}"))
        smem = chunk * stages
        kernel.max_dynamic_shared_size_bytes = smem
        grid = sms * per_sm

        def run(_, kernel=kernel, grid=grid, chunk=chunk, smem=smem, data=data):
            kernel((grid,), (256,), (data, np.int64(nbytes // chunk), sink), shared_mem=smem)

        contenders[f"bulk {chunk // 1024} KiB x{stages} {per_sm}/SM"] = run
    for fn in contenders.values():
        fn(0)
    cupy.cuda.Device().synchronize()
    samples = {name: [] for name in contenders}
    for _ in range(reps):
        for name, fn in contenders.items():
            samples[name].append(timer.batch(fn, 3))
    rows = []
    for name, values in samples.items():
        seconds = statistics.median(values)
        rows.append({"kernel": name, "gib": gib, "seconds": seconds, "gbs": nbytes / seconds / 1e9})
        log(f"read {gib} GiB  {name:28s} {nbytes / seconds / 1e9:7.0f} GB/s")
    contenders.clear()  # the closures hold the buffer
    del data
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def all_candidates(dtype: str, k: int, n: int) -> list[Params]:
    out = []
    for params in model.candidates("tsm2r", dtype, k, n):
        if tsm2_bench._fits(params, dtype, k, n) and params not in out:
            out.append(params)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shapes", default="16384x16384x4,32768x32768x8,16384x16384x8,32768x32768x4")
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    log = tsm2_bench.tee(args.out / "read_ceiling.txt")
    device = runtime.device_model()
    timer = tsm2_bench.Timer(device.clock_hz)
    log(f"device: {device.name}")
    copy = tsm2_bench.copy_bandwidth(timer, args.reps)
    log(f"copy (2 GiB, read + written): {copy / 1e9:.0f} GB/s")
    results = {"copy_gbs": copy / 1e9, "read": [], "shapes": []}
    for gib in (2, 8):
        results["read"] += read_ceiling(timer, gib, args.reps, log)

    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    per_n = {}
    for _, k, n in shapes:
        per_n.setdefault(n, all_candidates(args.dtype, k, n))
    specs = [model.spec_for(p, args.dtype, 16384, n) for n, cands in per_n.items() for p in cands]
    began = time.time()
    runtime.precompile(specs, workers=16)
    log(f"compiled {len(specs)} kernels in {time.time() - began:.1f} s")
    for m, k, n in shapes:
        result = tsm2_bench.measure_shape("tsm2r", args.dtype, m, k, n, per_n[n], timer, args.reps, log)
        cupy.get_default_memory_pool().free_all_blocks()
        timed = sorted((c for c in result["candidates"] if "seconds" in c), key=lambda c: c["seconds"])
        log(f"\n{args.dtype} {m}x{k}x{n}: cuBLAS {result['cublas_gbs']:.0f} GB/s; {len(timed)} candidates, best 8:")
        for c in timed[:8]:
            log(
                f"  {c['gbs']:7.0f} GB/s  {result['cublas_seconds'] / c['seconds']:.3f}x  {c['params']}  "
                f"grid {c['grid']} regs {c['regs']} blocks/SM {c['blocks_per_sm']}"
            )
        results["shapes"].append({"m": m, "k": k, "n": n, **result})
    (args.out / "read_ceiling.json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
