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
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .measure import (error_bound, error_scale, extra_bytes, float64_reference, median, random_inputs, relative_error,
                      time_device, within_bound, zero_error)
from .model import Ceilings, choose_levels, predict, predict_steps
from .runtime.backend import LIBRARY_NAMES
from .runtime.ceilings import measure_ceilings
from .runtime.compiled import CompiledProduct
from .runtime.run import growth_run, levels_run

__all__ = ["BenchResult", "bench_one", "choose_levels", "measure_ceilings", "plot", "read_json", "write_json"]

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
    levels_requested: int | str | None = None  # as asked: fewer may run, or "auto" (None in older files)
    backend: str = "cupy"  # the library timed beside: cuBLAS ("cupy") or NumPy ("numpy"); older files ran on GPUs
    bound: float | None = None  # the error bound bilinear run checks (None in older files)
    trivial: float | None = None  # the error a C of zeros would have: the bound must be below it (None: 1)

    @property
    def within_bound(self) -> bool:
        """Whether the error passes the bound ``bilinear run`` checks (a row without one: unchecked)."""
        return self.bound is None or within_bound(self.error, self.bound, self.trivial or 1.0)

    @property
    def library(self) -> str:
        return LIBRARY_NAMES.get(self.backend, self.backend)

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

        executor = product.executor_for(*A.shape, B.shape[1])  # under a workspace limit, the one that runs
        executor.observer = observe
        product(A, B, out=C)
        executor.observer = None
        xp.cuda.get_current_stream().synchronize()
        for name, (begin, end) in events.items():
            samples.setdefault(name, []).append(xp.cuda.get_elapsed_time(begin, end))
    return {name: median(values) for name, values in samples.items()}


def bench_one(product: CompiledProduct, source: str, M: int, K: int, N: int, ceilings: Ceilings | None,
              repeat: int = 5, seed: int = 0, breakdown: bool = True, name: str | None = None,
              requested: int | str | None = None) -> BenchResult:
    """Time one configuration against the library, interleaved, and check it (``name``: what to call
    it, the scheme's own name by default; ``requested``: the levels asked for, "auto" where the model
    chose them, the product's own by default)."""
    xp = product.backend.xp
    A, B, C = random_inputs(xp, M, K, N, product.dtype, seed)
    # A, B, C, the exact product and the library's output: five matrices and no copies, so
    # n = 32768 in float64 (8 GiB each) fits; the scale is taken before an in-place product
    # perturbs A and B.
    scale = error_scale(A, B)
    exact = float64_reference(A, B, C, 1.0, 0.0)
    reference = xp.empty_like(C)
    xp.matmul(A, B, out=reference)
    library_error = relative_error(reference, exact, A, B, scale)
    product.release_workspace()  # so the first call shows what the product holds at this size
    extra = extra_bytes(lambda: product(A, B, out=C), xp)  # warm-up and correctness too
    error = relative_error(C, exact, A, B, scale)
    trivial = zero_error(exact, scale)
    del exact
    ours, theirs = [], []
    for _ in range(repeat):  # interleaved, so drift in clocks or temperature hits both alike
        ours += time_device(lambda: product(A, B, out=C), xp, repeat=1, warmup=0)
        theirs += time_device(lambda: xp.matmul(A, B, out=reference), xp, repeat=1, warmup=0)
    ours_s, theirs_s = median(ours), median(theirs)
    stages: tuple[StageTime, ...] = ()
    predicted = float("nan")
    if ceilings is not None:
        runs = product.executor_for(M, K, N).lowered  # under a workspace limit, perhaps fewer breadth-first levels
        if runs.options.leaf != "ozaki":  # the model has no rate of its own for those leaves (NumPy's: 300× off)
            predicted = predict(runs, ceilings, M, K, N) * 1e3
        if breakdown:
            measured = _stage_times(product, A, B, C, xp)
            stages = tuple(
                StageTime(step.name, measured.get(step.name, float("nan")), step.seconds * 1e3)
                for step in predict_steps(runs, ceilings, M, K, N)
            )
    flops = 2.0 * M * K * N
    options = product.lowered.options
    bound = error_bound(options.dtype, K, growth_run(product, M, K, N))  # the growth of every level that ran
    return BenchResult(
        name=name or product.lowered.name, source=source, levels=levels_run(product, M, K, N),
        levels_requested=options.levels if requested is None else requested, leaf=options.leaf, dtype=options.dtype, backend=product.backend.name,
        M=M, K=K, N=N, ours_ms=ours_s * 1e3, library_ms=theirs_s * 1e3, ratio=theirs_s / ours_s,
        ours_tflops=flops / ours_s / 1e12, library_tflops=flops / theirs_s / 1e12, extra_bytes=extra,
        error=error, library_error=library_error, predicted_ms=predicted, stages=stages, bound=bound, trivial=trivial,
    )


def write_json(results: list[BenchResult], ceilings: dict[str, Ceilings], path: Path, planned: int | None = None) -> None:
    """The results so far; ``planned``: how many configurations the run times (``complete`` says whether
    all of them are here: a run cut short leaves its rows, marked as such)."""
    from .bench_outputs import WRITTEN_BY, write_results
    from .output import json_ready

    document = {"written_by": WRITTEN_BY, "ceilings": {k: asdict(c) for k, c in ceilings.items()},
                "results": [r.row() for r in results]}
    if planned is not None:
        document |= {"configurations": planned, "complete": len(results) == planned}
    write_results(path, json.dumps(json_ready(document), indent=1))


def read_json(path: Path) -> list[BenchResult]:
    """The results a ``--json`` file holds (to plot or compare them again)."""
    rows = json.loads(Path(path).read_text())["results"]

    def floats(fields: dict, kind) -> dict:  # null was NaN (write_json)
        return {k: math.nan if v is None and kind.__dataclass_fields__[k].type == "float" else v for k, v in fields.items()}

    return [BenchResult(**{**floats(row, BenchResult), "stages": tuple(StageTime(**floats(s, StageTime)) for s in row["stages"])})
            for row in rows]


_MARKERS = {0: "D", 1: "o", 2: "s", 3: "^"}  # by level count


def plot_series(results: list[BenchResult]) -> dict[tuple[str, int | str, str], list[BenchResult]]:
    """The plot's lines: rows by scheme, levels as requested (those that ran may be fewer at small n:
    grouped by those, one request was split over lines and merged into another's) and leaf, by n."""
    series: dict[tuple[str, int | str, str], list[BenchResult]] = {}
    for r in sorted(results, key=lambda r: r.N):
        asked = r.levels if r.levels_requested is None else r.levels_requested
        series.setdefault((r.name, asked, r.leaf), []).append(r)
    return dict(sorted(series.items(), key=lambda item: tuple(map(str, item[0]))))


def series_label(name: str, levels: int | str, leaf: str) -> str:
    """A line's legend entry, its ``$`` escaped: matplotlib reads text between two as mathematics
    (a path in a name, `x$^$y`, failed to parse after every timing)."""
    shown = name.replace("$", r"\$")
    return f"{shown} {'levels auto' if levels == 'auto' else f'L{levels}'} {leaf}"


def plot(results: list[BenchResult], path: Path) -> None:
    """Effective TFLOP/s against n, one panel per dtype: a colour per scheme, a marker per level
    count, solid lines for cuBLAS leaves and dotted for fused ones; cuBLAS itself in black."""
    import matplotlib
    from matplotlib.figure import Figure

    from .bench_outputs import write_plot

    # a Figure of its own, not pyplot's: pyplot kept every call's figure open and the caller's backend (a
    # notebook's) was switched to Agg for it
    dtypes = sorted({r.dtype for r in results})
    figure = Figure(figsize=(7 * len(dtypes), 5.5))
    axes = figure.subplots(1, len(dtypes), sharey=True, squeeze=False)
    palette = matplotlib.colormaps["tab10"].colors  # repeated past ten schemes (the legend names each line)
    colours = {name: palette[i % len(palette)] for i, name in enumerate(sorted({r.name for r in results}))}
    for axis, dtype in zip(axes[0], dtypes):
        of_dtype = [r for r in results if r.dtype == dtype]
        for (name, levels, leaf), rows in plot_series(of_dtype).items():
            axis.plot([r.N for r in rows], [r.ours_tflops for r in rows], color=colours[name],
                      marker=_MARKERS.get(levels, "x"), linestyle="-" if leaf == "cublas" else ":",
                      label=series_label(name, levels, leaf))
        library: dict[int, list[float]] = {}
        for r in of_dtype:
            library.setdefault(r.N, []).append(r.library_tflops)
        sizes = sorted(library)
        axis.plot(sizes, [median(library[n]) for n in sizes], color="black", linestyle="--", linewidth=2.5,
                  marker="*", markersize=9, label=results[0].library)
        axis.set_title(dtype)
        axis.set_xscale("log", base=2)
        axis.set_xticks(sizes, [str(n) for n in sizes])
        axis.set_xlabel("n (square n×n×n products)")
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("effective TFLOP/s (2n³ / time)")
    figure.tight_layout()
    write_plot(figure, Path(path), dpi=120)  # checked again, then renamed into place
