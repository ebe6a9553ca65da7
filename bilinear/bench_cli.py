"""``bilinear bench``: configurations, a progress bar, the table, JSON and the plot."""

from __future__ import annotations

import io
import math
import os
import re
import shlex
import sys
from argparse import ArgumentTypeError
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from .bench import BenchResult, bench_one, plot, write_json
from .diagnostics import BilinearError, brief, counted
from .cli_args import (ascii_number, asks_for_reading_option, bench_levels, load_input_noting, note_unused_definitions,
                       scheme_path)
from .frontend.loader import read_source
from .measure import bound_verdict, figures_text, growth_in, ratio_text
from .model import choose_levels
from .bench_outputs import STDOUT
from .runtime.ceilings import measure_ceilings
from .lower.options import DTYPES, LEAVES, OptionError
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
    """Configurations from a file: ``scheme.bl n dtype levels leaf`` per line (levels ``auto``: the
    model chooses the levels, with that line's leaf, or with cublas leaves for a leaf of ``auto``)."""
    if path.is_dir():  # what the file system holds, as a missing file: exit 1
        raise ValueError(f"--configs {path} is a folder; give the file that lists the configurations")
    listed = 0
    # what the file holds is no command-line mistake: its errors exit 1, not 2 with the usage
    text = read_source(path, text_of="a text list of configurations", scheme=False)
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            words = _words(line)
            if not words:
                continue
            if len(words) != 5 or words[2] not in DTYPES or words[4] not in (*LEAVES, "auto"):
                raise ArgumentTypeError(f"expected 'scheme.bl n {'|'.join(DTYPES)} levels|auto {'|'.join(LEAVES)}|auto'")
            levels = bench_levels(words[3])
            if words[4] == "auto" and levels != "auto":
                raise ArgumentTypeError("a leaf of auto needs levels auto")
            listed += 1
            yield _scheme(words[0], path), _size(words[1]), words[2], levels, words[4]
        except ArgumentTypeError as error:
            raise ValueError(f"{path}:{number}: {error}, got {line!r}") from None
    if not listed:
        raise ValueError(f"{path} lists no configurations (one per line: 'scheme.bl n dtype levels leaf')")


def _words(line: str) -> list[str]:
    """A configuration line's fields as a shell splits them: quotes hold spaces ('a b.bl'), and # begins
    a comment at the line's start or after a space (`v#2.bl` is a name)."""
    try:
        return shlex.split(re.sub(r"(^|\s)#.*", "", line))
    except ValueError as error:  # shlex's "No closing quotation"
        raise ArgumentTypeError(str(error)[0].lower() + str(error)[1:]) from None


def _size(text: str) -> int:
    """A configuration line's n; its refusal names the field, as the levels' does ('levels must be ...'):
    -n's own words ('must be at least 1, not 0') said nothing of which of the line's numbers was meant."""
    try:
        value = ascii_number(text)
    except ValueError:
        raise ArgumentTypeError(f"n must be a whole number, not {text!r}") from None
    if value < 1:
        raise ArgumentTypeError(f"n must be at least 1, not {value}")
    return value


def _scheme(text: str, configs: Path) -> Path:
    """A configuration's scheme: a file in the working folder, else beside the configurations file,
    else a shipped scheme's name (as FILE on the command line names it)."""
    for candidate in (Path(text), configs.parent / text):
        if candidate.is_file():
            return candidate
    found = scheme_path(text)
    if not found.exists():
        raise ArgumentTypeError(f"{text} does not exist (read from the working folder, beside {configs.name}, or as a "
                                "shipped scheme's name)")
    return found


def _once(configurations: list, console) -> list:
    """Each configuration once, in order: one listed twice (a file named twice, -n 16 16) gave two
    rows that could not be told apart."""
    kept, repeated = {}, []
    for path, *rest in configurations:
        key = (path.resolve(), getattr(path, "definition", None), *rest)  # (resolve() drops which definition)
        if key in kept:
            repeated.append((path, *rest))
        else:
            kept[key] = (path, *rest)
    if repeated:
        listed = "; ".join(f"{path} n={n} {dtype} {'levels auto' if levels == 'auto' else f'L{levels}'} "
                           f"{'leaf auto' if leaf == 'auto' else leaf}"
                           for path, n, dtype, levels, leaf in dict.fromkeys(repeated))
        console.print(f"listed more than once, timed once: {listed}", highlight=False, soft_wrap=True)
    return list(kept.values())


def _check_before_measuring(args, configurations, backend) -> None:
    """Everything that would fail after the timing ran, checked first: options, output paths, sizes."""
    from .bench_outputs import check_plot_target, check_results_target
    from .output import input_among, same_place

    if "ozaki" in args.leaf and len(set(args.leaf)) > 1 and any(row[3:] == ("auto", "auto") for row in configurations):
        raise OptionError("--levels auto ranks the --leaf kinds by the model, which has no rate of the ozaki leaf's own "
                          "(it would price it at the GEMM's): give --leaf ozaki alone with --levels auto, or time it "
                          "at fixed levels")
    if args.breakdown and backend.name != "cupy":
        raise OptionError("--breakdown times each stage with CUDA events; it needs the cupy backend (a GPU)")
    if args.plot is not None:
        args.plot = _plot_file(args.plot)
    if args.json is not None and args.plot is not None and same_place(args.json, args.plot):
        raise OptionError(f"--json and --plot name one file, {args.json}; the plot would replace the numbers")
    inputs = [*(path for path, *_ in configurations), *([args.configs] if args.configs else [])]
    for option, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None and path != STDOUT:
            clash = input_among(path, inputs)
            if clash is not None:
                raise ValueError(f"{option} {path} is the input file {clash}; choose another name")
            if option == "--json":
                check_results_target(path, option)  # its own earlier results only
            else:
                check_plot_target(path, option)  # its own earlier plot only, never through a link
    advice = "a smaller -n" if args.configs is None else f"a smaller n in {args.configs}"  # bench has no -m, -k
    for _, n, dtype, _, _ in configurations:
        check_fits(backend, n, n, n, dtype, advice=advice)


def _plot_file(path: Path) -> Path:
    """The file matplotlib will write for ``--plot PATH`` (PNG where PATH has no suffix), checked
    to be a kind it writes."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise ValueError("--plot needs matplotlib: pip install 'bilinear[plot]' (or matplotlib)") from None
    if not path.suffix:
        if path.exists() and not path.is_file():  # --plot /dev/null had written /dev/null.png
            raise ValueError(f"--plot {path} exists and is not a regular file; choose another name")
        return path.with_name(path.name + ".png")
    kinds = FigureCanvasBase.get_supported_filetypes()
    if path.suffix[1:].lower() not in kinds:
        raise OptionError(f"--plot: matplotlib cannot write {path.suffix} files; use one of {', '.join(sorted(kinds))}")
    _trial_plot(path)
    return path


def _trial_plot(path: Path) -> None:
    """Write an empty figure in ``path``'s format to memory, as ``bench.plot`` will write the plot:
    matplotlib lists formats it cannot write here (pgf without TeX), found only after every timing."""
    from matplotlib.figure import Figure

    from .bench_outputs import plot_metadata

    figure = Figure(figsize=(1, 1))
    figure.text(0.5, 0.5, "n")  # text, as the plot has: pgf measures it with TeX (an empty figure passed without)
    try:
        figure.savefig(io.BytesIO(), format=path.suffix[1:].lower(), **plot_metadata(path))
    except Exception as error:  # noqa: BLE001 - whatever stops the writer (a missing TeX, an image plugin)
        raise OptionError(f"--plot: matplotlib cannot write {path.suffix} files here ({brief(str(error), 80)}); "
                          "use .png, .pdf or .svg") from None


def _names(programs: dict) -> dict:
    """What each input is called in the results: its scheme's name, and its path beside it where
    two inputs name one scheme alike (their rows, and their lines in the plot, were one)."""
    names = {path: program.main.name for path, program in programs.items()}
    shared = {name for name in names.values() if list(names.values()).count(name) > 1}
    return {path: f"{name} ({path})" if name in shared else name for path, name in names.items()}


EVERY_FILE_NOTE = ("--from, --shape, --key, --mod and --allow-pickle read every FILE alike; to bench a catalogue "
                   "scheme beside others, `bilinear import` it to a .bl file first")


def _programs(args, paths) -> dict:
    """Each input loaded; where several are and one refuses a reading option, how to bench them together."""
    programs = {}
    for path in paths:
        try:
            programs[path] = load_input_noting(args, path)
        except BilinearError as error:
            if len(paths) == 1 or not asks_for_reading_option(error):
                raise
            first, *rest = error.diagnostics
            raise BilinearError(replace(first, notes=(*first.notes, EVERY_FILE_NOTE)), *rest) from None
    return programs


def run_bench(args) -> int:
    # A pipe or file gets wide lines unless COLUMNS says otherwise; with --json -, the JSON alone is stdout.
    stderr = args.json == STDOUT
    console = _console(stderr)
    backend = make_backend(args.backend)
    configurations = _once(list(_configurations(args)), console)
    _check_before_measuring(args, configurations, backend)
    programs = _programs(args, dict.fromkeys(path for path, *_ in configurations))
    for path, program in programs.items():
        note_unused_definitions(args.command, path, program)
    names = _names(programs)
    _lower_ahead(configurations, programs, backend, console, args.leaf)
    if backend.name != "cupy":
        console.print("no GPU backend: timing on the CPU against NumPy's product")
    ceilings = {}
    results: list[BenchResult] = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("benchmarking", total=len(configurations))
        for path, n, dtype, levels, leaf in configurations:
            # on the CPU, ceilings are measured for auto rows alone: a fixed row's model time had hung on
            # whether an auto row came before it
            modelled = backend.name == "cupy" or levels == "auto"
            if dtype not in ceilings and modelled:
                progress.update(task, description=f"measuring {dtype} ceilings")
                ceilings[dtype] = measure_ceilings(backend.xp, dtype)
            program = programs[path]

            def lowered(level_count: int, leaf_kind: str, program=program, dtype=dtype):
                return lower(program, Options(dtype=dtype, levels=level_count, leaf=leaf_kind))

            if levels == "auto":  # a --configs line's own leaf, or --leaf's choices
                leaves = args.leaf if leaf == "auto" else [leaf]
                level_count, leaf, _ = choose_levels(lowered, ceilings[dtype], n, n, n, leaves=leaves)
            else:
                level_count = int(levels)
            progress.update(task, description=escape(f"{path.name} n={n} {dtype} L{level_count} {leaf}"))
            product = CompiledProduct(lowered(level_count, leaf), backend)
            result = bench_one(product, str(path), n, n, n, ceilings[dtype] if modelled else None, args.repeat,
                               breakdown=args.breakdown,
                               name=names[path], requested="auto" if levels == "auto" else None)
            results.append(result)
            # Each result as soon as it exists, so a run cut short still leaves its numbers: the file
            # first (printed first, a closed pipe, `| head -1`, had ended the run before it)
            if args.json and args.json != STDOUT:
                write_json(results, ceilings, args.json, planned=len(configurations))
            progress.console.print(_line(result))
            progress.advance(task)
    _print_table(console, _table(results))
    if args.breakdown:
        for result in results:
            if result.stages:
                _print_table(console, _stage_table(result))
    if args.json:
        write_json(results, ceilings, args.json, planned=len(configurations))
        if args.json != STDOUT:
            console.print(f"wrote {args.json}")
    if args.plot:
        plot(results, args.plot)
        console.print(f"wrote {args.plot}")
    return 0 if all(result.within_bound for result in results) else 1  # the product's error, as bilinear run judges it


def _console(stderr: bool) -> Console:
    """COLUMNS where it is a positive width (0 had printed nothing), else the terminal's the output
    goes to (stderr's with --json -: stdout is then a pipe), and 200 columns for a pipe or file.  No
    markup: what it prints holds paths, and `[/x]` in one had ended the run in rich's MarkupError."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return Console(stderr=stderr, width=int(columns), markup=False)
    if not Console(stderr=stderr).is_terminal:
        return Console(stderr=stderr, width=200, markup=False)
    try:
        width = os.get_terminal_size((sys.stderr if stderr else sys.stdout).fileno()).columns
    except (OSError, ValueError):
        width = 80
    return Console(stderr=stderr, width=width, markup=False)


def _print_table(console: Console, table: Table) -> None:
    """The table where every cell fits whole (rich cuts or folds cells below its natural width:
    0.33 had been "0.3" over "3", 6.0e-17 "6.0e-…"); else a note of what each result's line above
    holds, and where the rest is."""
    needed = console.measure(table, options=console.options.update_width(1 << 16)).maximum  # unclamped by the width
    if needed <= console.width:
        console.print(table)
    else:
        console.print(f"(the table needs {needed} columns and the terminal has {console.width}; the lines above hold "
                      "its times, ratio, extra bytes and error; --json writes every column)")


def _lower_ahead(configurations, programs, backend, console, leaves: list[str]) -> None:
    """Lower (so verify) every configuration before timing any, and on the GPU compile every kernel
    the fixed-level ones launch, in parallel: a wrong scheme or option is refused before any work.
    A levels-auto configuration is checked at one level (the model chooses later), with the first of
    its leaves (``leaves`` for a leaf of auto) that lowers, as levels='auto' compiles."""
    jobs = [
        (_one_level(programs[path], dtype, leaves if leaf == "auto" else [leaf]) if levels == "auto"
         else lower(programs[path], Options(dtype=dtype, levels=int(levels), leaf=leaf)), (n, n, n), levels != "auto")
        for path, n, dtype, levels, leaf in configurations
    ]
    if backend.name != "cupy":
        return
    from .runtime.prepare import compile_ahead

    count = compile_ahead([(lowered, dims) for lowered, dims, fixed in jobs if fixed], backend)
    console.print(f"compiled {counted(count, 'kernel')} ahead of timing")


def _one_level(program, dtype: str, leaves: list[str]):
    """``program`` lowered one level with the first of ``leaves`` that takes it; the first refusal where none
    does (cublas leaves alone had refused a schedule of products of sums given --leaf fused)."""
    refusals = []
    for leaf in leaves:
        try:
            return lower(program, Options(dtype=dtype, levels=1, leaf=leaf))
        except (BilinearError, ValueError) as error:
            refusals.append(error)
    raise refusals[0]


def _levels(r: BenchResult) -> str:
    asked = r.levels_requested
    return f"L{r.levels}" + (f" ({asked} requested)" if asked is not None and asked != r.levels else "")


def _model(r: BenchResult) -> str:
    """The model's time, or "-" where there is none (no ceilings: on the CPU)."""
    return "-" if math.isnan(r.predicted_ms) else _ms(r.predicted_ms)


def _ms(value: float) -> str:
    """Milliseconds to a hundredth, and below one to three figures: a CPU's 16³ product had been 0.00."""
    return figures_text(value, 2)


def _line(r: BenchResult) -> str:
    extra = "-" if r.extra_bytes is None else str(r.extra_bytes)
    model = "" if math.isnan(r.predicted_ms) else f", model {_model(r)} ms"
    return (
        f"{r.name} n={r.N} {r.dtype} {_levels(r)} {r.leaf}: ours {_ms(r.ours_ms)} ms, {r.library} {_ms(r.library_ms)} ms, "
        f"ratio {ratio_text(r.ratio)}, extra bytes {extra}, error {r.error:.1e}{model}"
        + _verdict(r)
    )


def _verdict(r: BenchResult) -> str:
    """What a line says after the error where it misses run's bound: the bound and why."""
    said = "" if r.bound is None else bound_verdict(r.error, r.bound, r.trivial or 1.0, growth_in(r.bound, r.dtype, r.K)).strip()
    return f" (bound {r.bound:.1e}): {said}" if said else ""


def _table(results: list[BenchResult]) -> Table:
    library = results[0].library if results else "cuBLAS"
    table = Table(title=f"bilinear vs {library} (ratio = {library} time / our time, same process, interleaved)")
    for column in ("scheme", "n", "dtype", "L", "leaf", "ours ms", f"{library} ms", "ratio", "ours TF", f"{library} TF",
                   "extra bytes", "rel. error", f"{library} error", "model ms"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(
            r.name, str(r.N), r.dtype, _levels(r)[1:], r.leaf, _ms(r.ours_ms), _ms(r.library_ms),
            ratio_text(r.ratio), _tflops(r.ours_tflops), _tflops(r.library_tflops),
            "-" if r.extra_bytes is None else str(r.extra_bytes), f"{r.error:.1e}", f"{r.library_error:.1e}",
            _model(r),
        )
    return table


def _tflops(rate: float) -> str:
    """A GPU's tens of TFLOP/s to a tenth; a CPU's hundredths and less to three digits (they were all 0.0)."""
    return figures_text(rate, 1)


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
