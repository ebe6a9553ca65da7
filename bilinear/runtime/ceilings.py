"""The ceilings the performance model predicts from, measured on this device: copy
bandwidth, the leaves' GEMM rate by size, and the host time to issue a launch.  Cached on disk
per device and dtype (in :func:`bilinear.paths.cache_dir`).
"""

from __future__ import annotations

import os
import platform
import time
from typing import Callable, Iterable

import numpy as np

from ..measure import median, random_inputs, time_device
from ..model import Ceilings
from ..paths import cache_dir, read_cache_file, update_cache_file
from .compiled import make_backend

CEILING_SIZES = (512, 1024, 2048, 4096, 8192, 16384)
COPY_ELEMENTS = 1 << 27  # the bandwidth copy: 1 GiB of float64, 0.5 GiB of float32, well past L2
# On the CPU (the NumPy backend) the same measurements at these sizes take a few seconds; the GPU's
# would take many minutes and gigabytes (an 8x8 product waited 11 minutes).  1024: a larger product runs
# at the largest size's rate, and 512³'s alone, one slow reading there, had made NumPy's product look
# slower than one level of Strassen at 3072 (a hunt).
CPU_CEILING_SIZES = (64, 128, 256, 512, 1024)
CPU_COPY_ELEMENTS = 1 << 23  # 64 MiB of float64: past the caches
# FP64 GEMMs reach the board's power cap and clock down (1980 -> ~1550 MHz on the H100) within
# about 0.5 s; a long product runs there, so rates are timed after this much sustained load.
SUSTAIN_SECONDS = 0.6
# What sets how many threads NumPy's BLAS runs (OpenBLAS, MKL, BLIS, OpenMP builds).
BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


# --- ceilings -------------------------------------------------------------------------------


def _device_name(xp) -> str:
    if xp is np:
        return _cpu_name()
    from .cuda import device_info

    return device_info().name


def _cpu_name() -> str:
    """The CPU as its rates depend on it: the cores this process may use and the BLAS thread settings
    (one "cpu" entry had served runs with every core from a measurement made with OMP_NUM_THREADS=1)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = "".join(f" {name}={os.environ[name]}" for name in BLAS_THREAD_VARIABLES if name in os.environ)
    return f"cpu {platform.machine()} {cores} cores{threads}"


def _copy_bandwidth(xp, dtype: str) -> float:
    """Bytes per second of a large device copy (read + write); its buffers are freed on return."""
    source = xp.ones(CPU_COPY_ELEMENTS if xp is np else COPY_ELEMENTS, dtype=dtype)
    target = xp.empty_like(source)
    seconds = median(time_device(lambda: target.__setitem__(Ellipsis, source), xp, repeat=5))
    return 2 * source.nbytes / seconds


def _ceilings_from(device: str, dtype: str, entry) -> Ceilings | None:
    """A cache entry as Ceilings, or None when it is not what this version writes (then re-measure)."""

    def rates(table) -> tuple:
        pairs = tuple((int(n), float(rate)) for n, rate in table)
        if any(n < 1 or not 0 < rate < float("inf") for n, rate in pairs):
            raise ValueError("a rate that is not a positive number")
        return pairs

    try:
        bandwidth, launch = float(entry["bandwidth"]), float(entry.get("launch_seconds", 0.0))
        gemm, fused = rates(entry["gemm_rate"]), rates(entry.get("fused_rate", ()))
        if not gemm or not 0 < bandwidth < float("inf") or not 0 <= launch < 1 or _slowed(gemm):
            return None
        # on the CPU the NumPy backend multiplies a stage's products one after another, and forms a
        # fused leaf's sums in passes
        cpu = device.startswith("cpu ")
        return Ceilings(device, dtype, bandwidth, gemm, fused, launch, concurrent=not cpu, sums_in_passes=cpu)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):  # (a size of 1e400: int(inf))
        return None


def measure_ceilings(xp, dtype: str, sizes: Iterable[int] | None = None, fused: Callable | None = None) -> Ceilings:
    """Copy bandwidth and library GEMM rates on this device, cached on disk per device and dtype.

    A cache entry that is malformed is measured again and replaced; the file is written
    atomically, so an interrupted run never leaves half of it.  On the CPU the sizes are
    small (CPU_CEILING_SIZES): seconds, not minutes.
    """
    device = _device_name(xp)
    cache = cache_dir() / "ceilings.json"
    stored = read_cache_file(cache)
    key = f"{device}|{dtype}|leaf-gemm-sustained"  # older entries: xp.matmul, or burst clocks
    measured = tuple(sizes) if sizes is not None else CPU_CEILING_SIZES if xp is np else CEILING_SIZES
    if key in stored and (ceilings := _ceilings_from(device, dtype, stored[key])) is not None \
            and set(measured) <= {n for n, _ in ceilings.gemm_rate}:  # (a table of fewer sizes: an older version's)
        return ceilings
    sizes = measured
    bandwidth = _copy_bandwidth(xp, dtype)
    rates = _gemm_rates(xp, dtype, sizes)
    launch = _launch_seconds(xp, dtype)
    ceilings = Ceilings(device, dtype, bandwidth, tuple(rates), launch_seconds=launch, concurrent=xp is not np,
                        sums_in_passes=xp is np)
    if not _slowed(rates):  # else the next run measures again
        update_cache_file(cache, key, {"bandwidth": bandwidth, "gemm_rate": rates, "launch_seconds": launch})
    return ceilings


def _gemm_rates(xp, dtype: str, sizes: tuple[int, ...], tries: int = 3) -> list[tuple[int, float]]:
    """The GEMM rate at each size, the best of up to ``tries`` measurements where one was slowed."""
    best: dict[int, float] = {}
    for _ in range(tries):
        for n in sizes:
            best[n] = max(best.get(n, 0.0), _gemm_rate(xp, dtype, n))
        if not _slowed(list(best.items())):
            break
    return [(n, best[n]) for n in sizes]


def _slowed(rates) -> bool:
    """Whether a GEMM rate is below half of one measured at a smaller size: a library's rate does not
    fall so with the size, other work on the machine slowed that timing (on the development machine's
    two shared cores, FP64 0.84 GFLOP/s at 256³ beside 26.0 at 128³, and levels="auto" then chose fused
    Strassen where NumPy's product is the faster)."""
    fastest = 0.0
    for _, rate in sorted(rates):
        if rate < fastest / 2:
            return True
        fastest = max(fastest, rate)
    return False


def _gemm_rate(xp, dtype: str, n: int) -> float:
    """Flop/s of the call the leaves make (the backend's GEMM on views, not ``xp.matmul``, whose
    own overhead priced small leaves at a fraction of their rate), several calls per timing
    where one is too short for the events to resolve, at the clock of sustained load."""
    backend = make_backend("numpy" if xp is np else "cupy")
    A, B, C = random_inputs(xp, n, n, n, dtype)
    reference = 512 if xp is np else 4096  # the CPU is ~100 times slower: the same seconds per timing
    calls = max(1, (reference // n) ** 3 // 8)  # GPU: 64 calls of 512³, 8 of 1024³, then 1

    def batch() -> None:
        for _ in range(calls):
            backend.gemm(A, B, C, 1.0, 0.0)

    _sustain(batch, xp)
    return 2.0 * n**3 * calls / median(time_device(batch, xp, repeat=5))


def _sustain(call: Callable[[], None], xp) -> None:
    """Run ``call`` back to back for SUSTAIN_SECONDS, so the GPU's clock settles where it stays."""
    if xp is np:
        return
    stop = time.perf_counter() + SUSTAIN_SECONDS
    while time.perf_counter() < stop:
        call()
        xp.cuda.get_current_stream().synchronize()


def _launch_seconds(xp, dtype: str, count: int = 200) -> float:
    """Host seconds per GEMM issued through the backend on tiny matrices (the launch-bound floor)."""
    backend = make_backend("numpy" if xp is np else "cupy")
    a, b, c = random_inputs(xp, 8, 8, 8, dtype)
    backend.gemm(a, b, c, 1.0, 0.0)
    backend.synchronize()
    start = time.perf_counter()
    for _ in range(count):
        backend.gemm(a, b, c, 1.0, 1.0)
    backend.synchronize()
    return (time.perf_counter() - start) / count
