#!/usr/bin/env python3
"""The classical distributed baseline: cuBLASMp 0.7 (through nvmath-python 0.7.0) FP64 C = A·B.

One process per GPU of one host, started by MPI:

    mpiexec -n P python3 benchmarks/cublasmp_baseline.py -n 16384 32768 --repeat 5 --json OUT.json

Every rank draws the same random normal n×n A and B (same seed, on its own GPU, as bilinear/distributed/measure.py
does) and keeps its column-major (Fortran) partitions. --layout picks them: "ag" (default; A and C split by rows,
B by columns: cuBLASMp's AllGather+GEMM; B on the NVSHMEM symmetric heap), "rs" (A and C split by columns, B by
rows: GEMM+ReduceScatter) or "2d" (all three block-cyclic on a near-square process grid). The stateful nvmath
Matmul is planned once (not timed). The first execute is checked against a CuPy reference of each rank's part of C
(error ‖C − C_ref‖_F / (‖A‖_F‖B‖_F) over all ranks) and serves as warm-up; then, as measure.py does, repeat + 1
rounds (the first discarded) of: barrier, CUDA events around execute() on every rank, the slowest rank's time;
barrier, rank 0's cupy.matmul of the full matrices (one GPU's cuBLAS DGEMM). Medians are reported. A check size
(--check, default 2048) runs first. nvmath 0.7 runs with both backends: NVSHMEM (its Matmul keeps the workspace on
the symmetric heap) and NCCL.
Exit status 3: nvmath.distributed (or what its cuBLASMp path needs) is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from importlib import metadata

import numpy as np

for _key in ("NCCL_NVLS_ENABLE", "NVSHMEM_DISABLE_NVLS", "TORCH_SYMM_MEM_DISABLE_MULTICAST"):
    os.environ.setdefault(_key, "0" if _key == "NCCL_NVLS_ENABLE" else "1")  # no NVLink multicast; set before MPI, CUDA

from mpi4py import MPI  # noqa: E402

comm = MPI.COMM_WORLD
rank, P = comm.Get_rank(), comm.Get_size()
PACKAGES = ("nvmath", "nvidia-cublas", "nvidia-nccl", "nvidia-nvshmem", "cuda-", "cupy", "mpi4py")  # versions() reports


def say(*args) -> None:
    if rank == 0:
        print(*args, flush=True)


def versions() -> dict:
    found = {}
    for distribution in metadata.distributions():  # in path order: the first of a name is the one imported
        found.setdefault((distribution.metadata["Name"] or "").lower().replace("_", "-"), distribution.version)
    return {name: version for name, version in sorted(found.items()) if name.startswith(PACKAGES)}


def missing(what: str, error: BaseException) -> None:
    say(
        f"cublasmp_baseline: {what} is missing or unusable ({type(error).__name__}: {error}); needs nvmath-python "
        "0.7.x (cuda-core<0.4) and nvidia-cublasmp-cu13 0.7 (NCCL>=2.28.3, nvidia-nvshmem-cu13>=3.3.24); "
        f"installed: {versions()}"
    )
    sys.exit(3)


try:
    import cupy as cp
except ImportError as e:
    missing("CuPy", e)

LIBRARIES = {  # cuda-pathfinder's name: the file in a wheel under a sys.path entry; libcublasmp's dependencies first
    "cublas": "cu13/lib/libcublas.so.13",
    "cublasLt": "cu13/lib/libcublasLt.so.13",
    "nccl": "nccl/lib/libnccl.so.2",
    "nvshmem_host": "nvshmem/lib/libnvshmem_host.so.3",
    "cublasmp": "cublasmp/cu13/lib/libcublasmp.so.0",
}


def preload() -> dict:
    """Load libcublasmp and what it links, RTLD_GLOBAL, before nvmath's bindings look (dlsym(RTLD_DEFAULT), then
    cuda-pathfinder, blind to PYTHONPATH; libcublasmp's RPATH $ORIGIN/../../../{nccl,cu13,nvshmem}/lib misses wheels
    in other site-packages).  Each: already loaded (soname), else the file on sys.path, else cuda-pathfinder."""
    import ctypes
    from pathlib import Path

    from cuda.pathfinder import load_nvidia_dynamic_lib

    loaded = {}
    for name, relative in LIBRARIES.items():
        try:
            ctypes.CDLL(Path(relative).name, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
            loaded[name] = "already loaded"
            continue
        except OSError:
            pass
        on_path = next((p for e in sys.path if (p := Path(e or ".", "nvidia", relative)).is_file()), None)
        if on_path is not None:
            ctypes.CDLL(str(on_path), mode=ctypes.RTLD_GLOBAL)  # an OSError (undefined symbol, ...) is reported
            loaded[name] = str(on_path)
            continue
        try:
            loaded[name] = load_nvidia_dynamic_lib(name).abs_path
        except Exception as error:
            loaded[name] = f"not found ({type(error).__name__}: {error})"
    return loaded


try:
    libraries = preload()
    import nvmath.distributed
    from nvmath.bindings import cublasMp
    from nvmath.distributed.distribution import BlockCyclic, ProcessGrid, Slab
    from nvmath.distributed.linalg.advanced import Matmul

    cublasmp_version = cublasMp.get_version()  # loads libcublasmp.so.0 if preload() did not
except Exception as e:  # ImportError, OSError, or the library not found on the first call
    missing("nvmath.distributed's cuBLASMp path", e)
if not nvmath.__version__.startswith("0.7."):  # 1.x: NCCL backend via nccl4py, B in NCCL memory (see git history)
    missing("nvmath-python 0.7", RuntimeError(f"found {nvmath.__version__}; this script speaks 0.7's API"))


def time_device(call) -> float:
    """Seconds of one call from CUDA events on the current stream (as bilinear.measure.time_device)."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    call()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / 1e3


def layout(name: str, n: int, block: int):
    """Distributions of A, B, C and this rank's (rows, columns) of each, as slices or index arrays."""
    if name in ("ag", "rs"):
        if n % P:
            raise ValueError(f"n={n} is not a multiple of {P} ranks")
        mine, every = slice(rank * (n // P), (rank + 1) * (n // P)), slice(None)
        rows, cols = (mine, every), (every, mine)
        if name == "ag":  # A, C by rows, B by columns: AllGather(B) + GEMM
            return [Slab.X, Slab.Y, Slab.X], [rows, cols, rows]
        return [Slab.Y, Slab.X, Slab.Y], [cols, rows, cols]  # GEMM + ReduceScatter(C)
    pr = max(d for d in range(1, int(P**0.5) + 1) if P % d == 0)
    pc = P // pr  # a near-square pr x pc grid, column-major (rank = row + pr * column)
    grid = ProcessGrid(shape=(pr, pc), layout=ProcessGrid.Layout.COL_MAJOR)
    blocks = np.arange(n) // block
    part = (cp.asarray(np.flatnonzero(blocks % pr == rank % pr)), cp.asarray(np.flatnonzero(blocks % pc == rank // pr)))
    return [BlockCyclic(grid, (block, block))] * 3, [part] * 3


def local(X, part):
    return X[part[0]][:, part[1]]


def empty_fortran(shape, symmetric: bool):
    """A Fortran-order float64 array and where it lives; on symmetric: on the NVSHMEM symmetric heap (collective:
    every rank, same size; freed by free_symmetric_memory, also collective), as cuBLASMp's AG+GEMM likes B."""
    if symmetric:
        try:
            return nvmath.distributed.allocate_symmetric_memory(shape, cp, dtype=np.float64, axis_order="F"), "nvshmem"
        except Exception as error:
            say(f"  (symmetric memory for B failed, plain CuPy memory instead: {type(error).__name__}: {error})")
    return cp.empty(shape, np.float64, order="F"), "cupy"


def run(n: int, args, repeat: int) -> dict:
    distributions, parts = layout(args.layout, n, args.block)
    rng = cp.random.default_rng(args.seed)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a = cp.asfortranarray(local(A, parts[0]))
    b_part = local(B, parts[1])
    b, b_memory = empty_fortran(b_part.shape, args.layout == "ag" and not args.no_symmetric)
    b[...] = b_part
    del b_part
    start = time.perf_counter()
    try:
        with Matmul(a, b, distributions=distributions) as mm:
            # does nvmath see B on the symmetric heap? (A is not, so it puts C in CuPy memory: nothing to free)
            registered = bool(getattr(mm.operands[1], "is_symmetric_memory", False))
            mm.plan()
            cp.cuda.Device().synchronize()
            plan_s = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
            c = mm.execute()  # the check, and the warm-up
            reference = A[parts[2][0]] @ B[:, parts[2][1]]  # this rank's part of C
            assert c.shape == reference.shape, f"rank {rank}: local C has shape {c.shape}, expected {reference.shape}"
            squares = comm.allreduce(float(cp.linalg.norm(c - reference)) ** 2, op=MPI.SUM)
            error = squares**0.5 / (float(cp.linalg.norm(A)) * float(cp.linalg.norm(B)))
            del reference, c
            single = cp.empty((n, n), np.float64) if rank == 0 else None
            times, single_times = [], []
            for _ in range(repeat + 1 if repeat else 0):  # the first of each is a warm-up
                comm.Barrier()
                times.append(comm.allreduce(time_device(mm.execute), op=MPI.MAX))
                comm.Barrier()
                mine = time_device(lambda: cp.matmul(A, B, out=single)) if rank == 0 else 0.0
                single_times.append(comm.allreduce(mine, op=MPI.MAX))
            algo = getattr(mm, "_expected_algo", None)
            compute_type = getattr(getattr(mm, "compute_type", None), "name", None)
    finally:
        if b_memory == "nvshmem":  # collective; nvshmem_free is not stream-ordered
            cp.cuda.Device().synchronize()
            nvmath.distributed.free_symmetric_memory(b)
    algo = {2: "GEMM+RS", 3: "AG+GEMM", 4: "GEMM+AR", 5: "local GEMM"}.get(algo, f"{algo} (naive/SUMMA)")
    bound = 8 * 2.0**-53 * n**0.5  # measure.py's bound for the classical product (growth 1)
    result = dict(n=n, ranks=P, layout=args.layout, error=error, bound=bound, plan_s=plan_s, algo=algo)
    result |= dict(b_memory=b_memory, b_registered=registered, compute_type=compute_type)
    if repeat:
        seconds, one_gpu = statistics.median(times[1:]), statistics.median(single_times[1:])
        result |= dict(cublasmp_ms=seconds * 1e3, one_gpu_ms=one_gpu * 1e3, speedup=one_gpu / seconds)
        result |= dict(tflops=2.0 * n**3 / seconds / 1e12, times_ms=[t * 1e3 for t in times[1:]])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, nargs="+", default=[16384, 32768], help="square sizes to time")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions (median; default 5)")
    parser.add_argument("--check", type=int, default=2048, help="size checked (not timed) first; 0: none")
    parser.add_argument("--layout", choices=("ag", "rs", "2d"), default="ag")
    parser.add_argument("--block", type=int, default=1024, help="block size of the 2d layout")
    parser.add_argument("--no-symmetric", action="store_true", help="B in plain CuPy memory, not NVSHMEM memory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, metavar="FILE", help="write a list of dicts to FILE (rank 0)")
    args = parser.parse_args()
    device_id = rank % cp.cuda.runtime.getDeviceCount()
    cp.cuda.Device(device_id).use()
    nvmath.distributed.initialize(device_id, comm, backends=["nvshmem", "nccl"])  # 0.7's Matmul requires both
    found = versions()
    say(
        f"cuBLASMp {cublasmp_version} via nvmath-python {nvmath.__version__}, {P} ranks, layout {args.layout}, FP64; "
        f"NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']} NVSHMEM_DISABLE_NVLS={os.environ['NVSHMEM_DISABLE_NVLS']}"
        f"\n  packages: {found}\n  libraries: {libraries}"
    )
    results = []
    for n, repeat in ([(args.check, 0)] if args.check else []) + [(n, args.repeat) for n in args.n]:
        try:
            r = run(n, args, repeat)
        except Exception as error:  # report, go on
            print(f"rank {rank}: n={n} failed: {type(error).__name__}: {error}", flush=True)
            continue
        finally:
            cp.get_default_memory_pool().free_all_blocks()
        flag = "ok" if r["error"] <= r["bound"] else "EXCEEDS THE BOUND"
        if not repeat:
            say(
                f"check n={n}: relative error {r['error']:.3e} (bound {r['bound']:.3e}) {flag}; {r['algo']}, "
                f"compute {r['compute_type']}, B in {r['b_memory']} memory (seen so by nvmath: {r['b_registered']})"
            )
        else:
            say(
                f"n={n:6d}  cuBLASMp {r['cublasmp_ms']:9.2f} ms  one-GPU DGEMM {r['one_gpu_ms']:9.2f} ms  "
                f"speed-up {r['speedup']:.3f}  {r['tflops']:6.1f} TFLOP/s  error {r['error']:.2e} {flag}  "
                f"plan {r['plan_s']:.2f} s  {r['algo']}"
            )
        kind = "bench" if repeat else "check"
        results.append(r | dict(kind=kind, cublasmp=cublasmp_version, nvmath=nvmath.__version__, packages=found))
    if args.json and rank == 0:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    comm.Barrier()
    nvmath.distributed.finalize()


if __name__ == "__main__":
    main()
