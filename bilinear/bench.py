"""Side-by-side benchmarks against the library GEMM: the Python API behind ``bilinear bench``.

Every configuration is timed in the same process as cuBLAS (or NumPy on the
CPU), interleaved ours/theirs, with CUDA events after a warm-up; the median
of the repeats is reported, with effective TFLOP/s (2mnk / time), the ratio
library-time / our-time, the extra device bytes from a memory hook, the
relative error against a float64 product, and the time of each level-1 stage
beside the performance model's prediction.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from .diagnostics import BilinearError
from .lower.plan import Lowered
from .measure import extra_bytes, float64_reference, median, random_inputs, relative_error, time_device
from .model import Ceilings, predict, predict_steps
from .runtime.compiled import CompiledProduct, make_backend

CACHE = Path(os.environ.get("BILINEAR_CACHE", Path.home() / ".cache" / "bilinear"))
CEILING_SIZES = (512, 1024, 2048, 4096, 8192, 16384)
COPY_ELEMENTS = 1 << 27  # the bandwidth copy: 1 GiB of float64, 0.5 GiB of float32, well past L2
# On the CPU (the NumPy backend) the same measurements at these sizes take a second or two;
# the GPU's would take many minutes and gigabytes (an 8x8 product waited 11 minutes).
CPU_CEILING_SIZES = (64, 128, 256, 512)
CPU_COPY_ELEMENTS = 1 << 23  # 64 MiB of float64: past the caches
# FP64 GEMMs reach the board's power cap and clock down (1980 -> ~1550 MHz on the H100) within
# about 0.5 s; a long product runs there, so rates are timed after this much sustained load.
SUSTAIN_SECONDS = 0.6


# --- ceilings -------------------------------------------------------------------------------


def _device_name(xp) -> str:
    if xp is np:
        return "cpu"
    return xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)["name"].decode()


def _stored_ceilings(cache: Path) -> dict:
    """The cache file's entries; an unreadable, truncated or edited file counts as empty."""
    try:
        stored = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


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
        if not gemm or not 0 < bandwidth < float("inf") or not 0 <= launch < 1:
            return None
        return Ceilings(device, dtype, bandwidth, gemm, fused, launch)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def measure_ceilings(xp, dtype: str, sizes: Iterable[int] | None = None, fused: Callable | None = None) -> Ceilings:
    """Copy bandwidth and library GEMM rates on this device, cached on disk per device and dtype.

    A cache entry that is malformed is measured again and replaced; the file is written
    atomically, so an interrupted run never leaves half of it.
    """
    from .output import write_atomic

    device = _device_name(xp)
    cache = CACHE / "ceilings.json"
    stored = _stored_ceilings(cache)
    key = f"{device}|{dtype}|leaf-gemm-sustained"  # older entries: xp.matmul, or burst clocks
    if key in stored and (ceilings := _ceilings_from(device, dtype, stored[key])) is not None:
        return ceilings
    on_cpu = xp is np
    sizes = tuple(sizes) if sizes is not None else CPU_CEILING_SIZES if on_cpu else CEILING_SIZES
    source = xp.ones(CPU_COPY_ELEMENTS if on_cpu else COPY_ELEMENTS, dtype=dtype)
    target = xp.empty_like(source)
    seconds = median(time_device(lambda: target.__setitem__(Ellipsis, source), xp, repeat=5))
    bandwidth = 2 * source.nbytes / seconds
    del source, target
    rates = [(n, _gemm_rate(xp, dtype, n)) for n in sizes]
    launch = _launch_seconds(xp, dtype)
    ceilings = Ceilings(device, dtype, bandwidth, tuple(rates), launch_seconds=launch)
    stored[key] = {"bandwidth": bandwidth, "gemm_rate": rates, "launch_seconds": launch}
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache, json.dumps(stored, indent=1))
    except (OSError, BilinearError):
        pass  # a cache that cannot be written costs a measurement next time, nothing else
    return ceilings


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


# --- one configuration ----------------------------------------------------------------------


@dataclass(frozen=True)
class StageTime:
    level_step: str
    measured_ms: float
    predicted_ms: float


@dataclass(frozen=True)
class BenchResult:
    name: str
    source: str
    levels: int
    leaf: str
    dtype: str
    M: int
    K: int
    N: int
    ours_ms: float
    library_ms: float
    ratio: float
    ours_tflops: float
    library_tflops: float
    extra_bytes: int | None
    error: float
    library_error: float
    predicted_ms: float
    stages: tuple[StageTime, ...] = field(default=())

    def row(self) -> dict:
        data = asdict(self)
        data["stages"] = [asdict(s) for s in self.stages]
        return data


def _stage_times(product: CompiledProduct, A, B, C, xp) -> dict[str, float]:
    """Milliseconds per level-1 step, from events recorded around each step (median of 3 runs)."""
    samples: dict[str, list[float]] = {}
    if xp is np:
        return {}
    for _ in range(3):
        events: dict[str, list] = {}

        def observe(level: int, name: str, phase: str) -> None:
            if level == 0:
                event = xp.cuda.Event()
                event.record()
                events.setdefault(name, []).append(event)

        product.executor.observer = observe
        product(A, B, out=C)
        product.executor.observer = None
        xp.cuda.get_current_stream().synchronize()
        for name, (begin, end) in events.items():
            samples.setdefault(name, []).append(xp.cuda.get_elapsed_time(begin, end))
    return {name: median(values) for name, values in samples.items()}


def bench_one(product: CompiledProduct, source: str, M: int, K: int, N: int, ceilings: Ceilings | None,
              repeat: int = 5, seed: int = 0, breakdown: bool = True) -> BenchResult:
    """Time one configuration against the library, interleaved, and check it."""
    xp = product.backend.xp
    A, B, C = random_inputs(xp, M, K, N, product.dtype, seed)
    A0, B0 = A.copy(), B.copy()
    exact = float64_reference(A, B, C, 1.0, 0.0)
    reference = xp.empty_like(C)
    xp.matmul(A, B, out=reference)
    library_error = relative_error(reference, exact, A0, B0)
    product(A, B, out=C)  # warm-up and correctness
    error = relative_error(C, exact, A0, B0)
    del exact, A0, B0
    extra = extra_bytes(lambda: product(A, B, out=C), xp)
    ours, theirs = [], []
    for _ in range(repeat):  # interleaved, so drift in clocks or temperature hits both alike
        ours += time_device(lambda: product(A, B, out=C), xp, repeat=1, warmup=0)
        theirs += time_device(lambda: xp.matmul(A, B, out=reference), xp, repeat=1, warmup=0)
    ours_s, theirs_s = median(ours), median(theirs)
    stages: tuple[StageTime, ...] = ()
    predicted = float("nan")
    if ceilings is not None:
        predicted = predict(product.lowered, ceilings, M, K, N) * 1e3
        if breakdown:
            measured = _stage_times(product, A, B, C, xp)
            stages = tuple(
                StageTime(step.name, measured.get(step.name, float("nan")), step.seconds * 1e3)
                for step in predict_steps(product.lowered, ceilings, M, K, N)
            )
    flops = 2.0 * M * K * N
    options = product.lowered.options
    return BenchResult(
        name=product.lowered.name, source=source, levels=options.levels, leaf=options.leaf, dtype=options.dtype,
        M=M, K=K, N=N, ours_ms=ours_s * 1e3, library_ms=theirs_s * 1e3, ratio=theirs_s / ours_s,
        ours_tflops=flops / ours_s / 1e12, library_tflops=flops / theirs_s / 1e12, extra_bytes=extra,
        error=error, library_error=library_error, predicted_ms=predicted, stages=stages,
    )


def choose_levels(lowered_for: Callable[[int, str], Lowered], ceilings: Ceilings, M: int, K: int, N: int,
                  leaves: Iterable[str] = ("cublas",), max_levels: int = 4) -> tuple[int, str, float]:
    """The (levels, leaf) the model predicts fastest, with its predicted seconds; levels 0 is the library alone."""
    best = (0, "cublas", 2.0 * M * K * N / ceilings.rate(M, K, N))
    for leaf in leaves:
        for levels in range(1, max_levels + 1):
            seconds = predict(lowered_for(levels, leaf), ceilings, M, K, N)
            if seconds < best[2]:
                best = (levels, leaf, seconds)
    return best


def write_json(results: list[BenchResult], ceilings: dict[str, Ceilings], path: Path) -> None:
    from .output import write_atomic

    write_atomic(path, json.dumps({
        "ceilings": {k: asdict(c) for k, c in ceilings.items()},
        "results": [r.row() for r in results],
    }, indent=1))


def read_json(path: Path) -> list[BenchResult]:
    """The results a ``--json`` file holds (to plot or compare them again)."""
    rows = json.loads(Path(path).read_text())["results"]
    return [BenchResult(**{**row, "stages": tuple(StageTime(**s) for s in row["stages"])}) for row in rows]


_MARKERS = {0: "D", 1: "o", 2: "s", 3: "^"}  # by level count


def plot(results: list[BenchResult], path: Path) -> None:
    """Effective TFLOP/s against n, one panel per dtype: a colour per scheme, a marker per level
    count, solid lines for cuBLAS leaves and dotted for fused ones; cuBLAS itself in black."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = sorted({r.dtype for r in results})
    figure, axes = plt.subplots(1, len(dtypes), figsize=(7 * len(dtypes), 5.5), sharey=True, squeeze=False)
    colours = dict(zip(sorted({r.name for r in results}), plt.get_cmap("tab10").colors))
    for axis, dtype in zip(axes[0], dtypes):
        of_dtype = [r for r in results if r.dtype == dtype]
        for name, levels, leaf in sorted({(r.name, r.levels, r.leaf) for r in of_dtype}):
            rows = sorted((r for r in of_dtype if (r.name, r.levels, r.leaf) == (name, levels, leaf)), key=lambda r: r.N)
            axis.plot([r.N for r in rows], [r.ours_tflops for r in rows], color=colours[name],
                      marker=_MARKERS.get(levels, "x"), linestyle="-" if leaf == "cublas" else ":",
                      label=f"{name} L{levels} {leaf}")
        library: dict[int, list[float]] = {}
        for r in of_dtype:
            library.setdefault(r.N, []).append(r.library_tflops)
        sizes = sorted(library)
        axis.plot(sizes, [median(library[n]) for n in sizes], color="black", linestyle="--", linewidth=2.5,
                  marker="*", markersize=9, label="cuBLAS")
        axis.set_title(dtype)
        axis.set_xscale("log", base=2)
        axis.set_xticks(sizes, [str(n) for n in sizes])
        axis.set_xlabel("n (square n×n×n products)")
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("effective TFLOP/s (2n³ / time)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
