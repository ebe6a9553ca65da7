"""``bilinear bench``: configurations, a progress bar, the table, JSON and the plot."""

from __future__ import annotations

from argparse import ArgumentTypeError
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from .api import load
from .bench import BenchResult, bench_one, plot, write_json
from .cli_args import bench_levels, positive
from .frontend.loader import read_source
from .model import choose_levels
from .runtime.ceilings import measure_ceilings
from .lower.options import DTYPES, LEAVES
from .lower.plan import Options, lower
from .runtime.compiled import CompiledProduct, make_backend
from .runtime.run import check_fits


def _configurations(args):
    if args.configs is not None:
        yield from _listed(args.configs)
        return
    for path in args.files:
        for n in args.n:
            for dtype in args.dtype:
                for levels in args.levels:
                    for leaf in (args.leaf if levels != "auto" else ["auto"]):
                        yield path, n, dtype, levels, leaf


def _listed(path: Path):
    """Configurations from a file: ``scheme.bl n dtype levels leaf`` per line."""
    for number, line in enumerate(read_source(path).splitlines(), start=1):
        words = line.split("#")[0].split()
        if not words:
            continue
        try:
            if len(words) != 5 or words[2] not in DTYPES or words[4] not in (*LEAVES, "auto"):
                raise ArgumentTypeError(f"expected 'scheme.bl n {'|'.join(DTYPES)} levels|auto {'|'.join(LEAVES)}'")
            yield Path(words[0]), positive(words[1]), words[2], bench_levels(words[3]), words[4]
        except ArgumentTypeError as error:
            raise ValueError(f"{path}:{number}: {error}, got {line!r}") from None


def _check_before_measuring(args, configurations, backend) -> None:
    """Everything that would fail after the timing ran, checked first: output paths, sizes."""
    from .output import check_target

    for path in (args.json, args.plot):
        if path is not None:
            check_target(path, force=True)  # bench replaces its own results, never through a link
    if args.plot is not None:
        try:
            from matplotlib.backend_bases import FigureCanvasBase
        except ImportError:
            raise ValueError("--plot needs matplotlib (pip install matplotlib)") from None
        kinds = FigureCanvasBase.get_supported_filetypes()
        suffix = args.plot.suffix[1:].lower()
        if suffix and suffix not in kinds:  # no suffix: matplotlib writes PNG
            raise ValueError(f"--plot: matplotlib cannot write .{suffix} files; use one of {', '.join(sorted(kinds))}")
    for _, n, dtype, _, _ in configurations:
        check_fits(backend, n, n, n, dtype)


def run_bench(args) -> int:
    console = Console(width=None if Console().is_terminal else 200)
    backend = make_backend(args.backend)
    programs = {path: load(path) for path in args.files}
    ceilings = {}
    results: list[BenchResult] = []
    configurations = list(_configurations(args))
    _check_before_measuring(args, configurations, backend)
    programs.update({path: load(path) for path, *_ in configurations if path not in programs})
    _compile_ahead(configurations, programs, backend, console)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("benchmarking", total=len(configurations))
        for path, n, dtype, levels, leaf in configurations:
            if dtype not in ceilings and (backend.name == "cupy" or levels == "auto"):
                progress.update(task, description=f"measuring {dtype} ceilings")
                ceilings[dtype] = measure_ceilings(backend.xp, dtype)
            program = programs[path]

            def lowered(level_count: int, leaf_kind: str, program=program, dtype=dtype):
                return lower(program, Options(dtype=dtype, levels=level_count, leaf=leaf_kind))

            if levels == "auto":
                level_count, leaf, _ = choose_levels(lowered, ceilings[dtype], n, n, n, leaves=args.leaf)
            else:
                level_count = int(levels)
            progress.update(task, description=f"{path.name} n={n} {dtype} L{level_count} {leaf}")
            product = CompiledProduct(lowered(level_count, leaf), backend)
            result = bench_one(product, str(path), n, n, n, ceilings.get(dtype), args.repeat, breakdown=args.breakdown)
            results.append(result)
            # Each result as soon as it exists, so a run cut short still leaves its numbers.
            progress.console.print(_line(result))
            if args.json:
                write_json(results, ceilings, args.json)
            progress.advance(task)
    console.print(_table(results))
    if args.breakdown:
        for result in results:
            if result.stages:
                console.print(_stage_table(result))
    if args.json:
        write_json(results, ceilings, args.json)
        console.print(f"wrote {args.json}")
    if args.plot:
        plot(results, args.plot)
        console.print(f"wrote {args.plot}")
    return 0


def _compile_ahead(configurations, programs, backend, console) -> None:
    """Compile every kernel the fixed-level configurations launch, in parallel, before timing."""
    if backend.name != "cupy":
        return
    from .runtime.prepare import compile_ahead

    jobs = [
        (lower(programs[path], Options(dtype=dtype, levels=int(levels), leaf=leaf)), (n, n, n))
        for path, n, dtype, levels, leaf in configurations
        if levels != "auto"
    ]
    count = compile_ahead(jobs, backend)
    console.print(f"compiled {count} kernels ahead of timing")


def _line(r: BenchResult) -> str:
    extra = "-" if r.extra_bytes is None else str(r.extra_bytes)
    return (
        f"{r.name} n={r.N} {r.dtype} L{r.levels} {r.leaf}: ours {r.ours_ms:.2f} ms, cuBLAS {r.library_ms:.2f} ms, "
        f"ratio {r.ratio:.3f}, extra bytes {extra}, error {r.error:.1e}, model {r.predicted_ms:.2f} ms"
    )


def _table(results: list[BenchResult]) -> Table:
    table = Table(title="bilinear vs cuBLAS (ratio = cuBLAS time / our time, same process, interleaved)")
    for column in ("scheme", "n", "dtype", "L", "leaf", "ours ms", "cuBLAS ms", "ratio", "ours TF", "cuBLAS TF",
                   "extra bytes", "rel. error", "cuBLAS error", "model ms"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(
            r.name, str(r.N), r.dtype, str(r.levels), r.leaf, f"{r.ours_ms:.2f}", f"{r.library_ms:.2f}",
            f"{r.ratio:.3f}", f"{r.ours_tflops:.1f}", f"{r.library_tflops:.1f}",
            "-" if r.extra_bytes is None else str(r.extra_bytes), f"{r.error:.1e}", f"{r.library_error:.1e}",
            f"{r.predicted_ms:.2f}",
        )
    return table


def _stage_table(result: BenchResult) -> Table:
    table = Table(title=f"{result.name} n={result.N} {result.dtype} L{result.levels} {result.leaf}: level-1 stages")
    for column in ("stage", "measured ms", "model ms", "share of measured"):
        table.add_column(column, justify="right")
    total = sum(s.measured_ms for s in result.stages if s.measured_ms == s.measured_ms)
    for stage in result.stages:
        share = stage.measured_ms / total * 100 if total and stage.measured_ms == stage.measured_ms else float("nan")
        table.add_row(stage.level_step, f"{stage.measured_ms:.3f}", f"{stage.predicted_ms:.3f}", f"{share:.1f} %")
    return table


__all__ = ["run_bench"]
