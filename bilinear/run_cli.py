"""``bilinear compile``, ``run`` and ``bench``: lower a scheme, then write it out, run it or time it.

The parsers are built here; what the commands do is imported when they run, so
``--help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

from .cli_args import (
    add_input_options,
    add_reading_options,
    add_lowering_options,
    add_report_options,
    asks_for_reading_option,
    bench_levels,
    finite,
    listed,
    load_input,
    load_input_noting,
    note_unused_definitions,
    positive,
    scheme_path,
    seed,
)
from .cli_outputs import MOST_NAME_CHARACTERS, library_identifier, library_name_problem, output_folder, plot_path, results_path
from .diagnostics import brief, counted, render
from .distributed.cli import add_distribution_options
from .paths import algorithms_dir
from .lower.options import DTYPES, LEAVES, OptionError
from .runtime.compiled import BACKENDS


def add_compile_and_run_parsers(commands) -> None:
    """``compile`` and ``run``."""
    compile_ = commands.add_parser(
        "compile",
        help="verify, then write a standalone CUDA library (kernels and C++ host layer), a manifest and the report",
        description="Verify FILE, then write into DIR: <name>.cu (every generated kernel, element-wise and fused "
        "product stages, breadth-first split and merge, and the ozaki leaf's passes, for float64 and float32, and a C++ "
        "host layer running the recursion, breadth-first levels, ozaki leaves and a --workspace-limit's fallback "
        "plans), <name>.h (declaring "
        "<name>_dgemm and <name>_sgemm, column-major like cublasDgemm, their _workspace_bytes and _with_workspace "
        "(a workspace the caller holds), _sgemm left out with a note where a "
        "coefficient is past float32's range; `nvcc -O1 -std=c++17 -arch=sm_90 "
        "-Xcompiler -fPIC -shared <name>.cu -o lib<name>.so -lcublas` builds the library, as the header's first "
        "lines say: fused leaves need sm_90), manifest.json (kernels, stages, the launch plan per level, workspace bytes by n) and the "
        "verification report (report.txt, report.md, report.json). Works without a GPU.",
    )
    add_input_options(compile_)
    compile_.add_argument("-o", "--output", type=output_folder, default=None, metavar="DIR",
                          help="output folder, made when missing (default build/<name>)")
    compile_.add_argument("--force", action="store_true",
                          help="replace files that already exist in DIR, and remove the .cu and .h of another "
                               "library DIR's manifest names (they would be left stale beside the new manifest)")
    compile_.add_argument("--name", type=library_identifier, default=None,
                          help="the library's name: its files, functions (<name>_dgemm) and kernels (default the "
                               "scheme's, or a hybrid's levels; two builds of one scheme in one program need two)")
    add_lowering_options(compile_)
    add_report_options(compile_, "element type of the library's main function and the manifest's kernels, and that the "
                                 "report counts bytes in")
    compile_.set_defaults(handler=_compile)

    run = commands.add_parser(
        "run",
        help="run a scheme on random matrices and check it against the reference",
        description="Multiply random normal matrices (M×K)·(K×N) with FILE's scheme, compare with the reference "
        "(cuBLAS on the GPU, NumPy on the CPU; both against a float64 product), and print the relative error "
        "‖C−C_ref‖/(|α|‖A‖‖B‖ + |β|‖C‖), the time, the extra device bytes and, for in-place schedules, how well A and B "
        "were restored. Exits 1 when the error exceeds the bound 8·u·√K·ρ^L (u: unit roundoff, ρ: the "
        "algorithm's growth factor over the classical one's, L: levels; a hybrid's ρ^L is the product of its levels' "
        "own factors), or when that bound is so loose that a C of zeros would pass it (the run says NOT CHECKED), and "
        "when an in-place schedule restores A or B with a normwise error past that bound (the run says whether the "
        "worst case of its schedules' roundings allows it). Where |β|‖C‖ passes "
        "|α|‖A‖‖B‖ (hiding an error in A·B that much), A·B is also computed with β = 0 and judged alone.",
    )
    add_input_options(run)
    run.add_argument("-n", type=positive, required=True, metavar="N", help="matrix size (M = K = N unless -m/-k are given)")
    run.add_argument("-m", type=positive, default=None, metavar="M", help="rows of A and C")
    run.add_argument("-k", type=positive, default=None, metavar="K", help="columns of A, rows of B")
    add_lowering_options(run)
    run.add_argument("--dtype", choices=DTYPES, default="float64", help="element type (default float64)")
    run.add_argument("--backend", choices=BACKENDS, default=None, help="default: cupy when a GPU is present")
    run.add_argument("--alpha", type=finite, default=1.0, help="C = alpha·A@B + beta·C (default 1)")
    run.add_argument("--beta", type=finite, default=0.0, help="(default 0: C is not read)")
    run.add_argument("--repeat", type=positive, default=5, help="timed repetitions (median reported; default 5)")
    run.add_argument("--seed", type=seed, default=0, help="of the random matrices, 0 to 2^64 - 1 (default 0)")
    add_distribution_options(run)
    run.set_defaults(handler=_run)


def add_bench_parser(commands) -> None:
    """``bench``: our products against cuBLAS."""
    bench = commands.add_parser(
        "bench",
        help="time schemes against cuBLAS side by side (table, JSON, plot)",
        description="For every FILE, size, dtype, level count and leaf kind: time our product and cuBLAS in the "
        "same process, interleaved, with CUDA events after a warm-up (median of --repeat), on random normal "
        "data. Reports effective TFLOP/s (2mnk/time), the ratio cuBLAS-time/our-time, extra device bytes, the "
        "relative error against a float64 product, the model's prediction and (with --breakdown) the time of "
        "each level-1 stage beside the model. `--levels auto` lets the model choose the levels, and the leaf among "
        "--leaf's kinds (cublas alone by default); where it chooses 0 levels, the library's GEMM runs (the ozaki "
        "leaf, where that is the only kind given), whatever --leaf says.",
    )
    # The configuration options default to None, so that beside --configs a given one is refused
    # (it was dropped); bench_defaults fills them in.
    bench.add_argument("files", nargs="*", type=scheme_path, default=None, metavar="FILE",
                       help="schemes to time: files or shipped schemes' names (default msmes)")
    add_reading_options(bench)
    # several values each, and an option given twice keeps both (the second had replaced the first)
    bench.add_argument("-n", type=listed(positive, "-n 4096"), nargs="+", action="extend", default=None, metavar="N", help="square sizes (default 4096 8192; on the CPU 512 1024)")
    bench.add_argument("--dtype", nargs="+", action="extend", choices=DTYPES, default=None, help="element types (default float64)")
    bench.add_argument("--levels", type=listed(bench_levels, "--levels 1"), nargs="+", action="extend", default=None, metavar="L",
                       help="level counts, or auto (default 1 2; with --gpus 1)")
    bench.add_argument("--leaf", nargs="+", action="extend", choices=LEAVES, default=None, help="leaf kinds (default cublas)")
    bench.add_argument("--repeat", type=positive, default=5, help="timed repetitions per configuration (median; default 5)")
    bench.add_argument("--backend", choices=BACKENDS, default=None,
                       help="default: cupy when a GPU is present (on numpy, timed against NumPy's product)")
    bench.add_argument("--breakdown", action="store_true", help="print per-stage times beside the model")
    bench.add_argument(
        "--configs", type=Path, default=None, metavar="FILE",
        help="bench exactly the configurations listed in FILE, one per line: 'scheme.bl n dtype levels leaf' "
        "(levels auto: the model chooses them, with that leaf; a leaf of auto, beside levels auto, is cublas) "
        "(# comments allowed), instead of every combination of the options above",
    )
    bench.add_argument("--json", type=results_path, default=None, metavar="FILE",
                       help="write every number to FILE as JSON (- for standard output; the rest then goes to standard error)")
    bench.add_argument("--plot", type=plot_path, default=None, metavar="FILE.png",
                       help="plot effective TFLOP/s against n (needs matplotlib; .pdf, .svg and the other formats it "
                            "writes too; a name without a suffix gets .png)")
    add_distribution_options(bench)
    bench.set_defaults(handler=_bench)


def _options(args):
    from .lower.options import Options

    return Options.from_args(args)


def _per_level(args, program):
    """The program and one definition name per level for ``--levels-schemes`` (None without it)."""
    if getattr(args, "levels_schemes", None) is None:
        note_unused_definitions(args.command, args.file, program)
        return program, None
    from .hybrid import hybrid, same_definition

    given = program.main
    noted: set[Path] = set()

    def level(path: Path):
        loaded, said = _level_file(path)
        if path.resolve() not in noted:  # a file named for two levels is noted once, as FILE is
            noted.add(path.resolve())
            for note in said:
                print(render(note), file=sys.stderr)
            note_unused_definitions(args.command, path, loaded, choosable=False)
        return _verified_level(loaded, path)

    program, per_level = hybrid(args.levels_schemes, level)
    if getattr(args, "levels_given", False) and args.levels != len(per_level):
        raise OptionError(f"--levels {args.levels} contradicts --levels-schemes, which names "
                          f"{counted(len(per_level), 'level')}; leave --levels out")
    args.levels = len(per_level)
    # FILE is read (and must load) but multiplies nothing: say so (a level's definition of its name is
    # another definition when it differs, as a renamed copy of Winograd called strassen does); a
    # level's schedule for FILE's algorithm multiplies with it
    used = {*per_level, *(getattr(program.definition(name), "algorithm", name) for name in per_level)}
    if given.name not in used or not same_definition(given, program.definition(given.name)):
        print(f"bilinear {args.command}: note: --levels-schemes names every level's scheme; {args.file}'s "
              f"{given.name} is not one of them and is not used", file=sys.stderr)
    return program, per_level


def _level_file(path: Path):
    """One ``--levels-schemes`` file, read as detected (FILE's reading options are FILE's alone), with its notes."""
    from .api import load_noted
    from .diagnostics import BilinearError, Diagnostic

    try:
        return load_noted(path)
    except BilinearError as error:
        if path.suffix.lower() == ".bl" or not asks_for_reading_option(error):  # (a mod-2 scheme, a missing file)
            raise
        note = Diagnostic(f"{path} is a --levels-schemes file: it is read as detected, without FILE's reading options "
                          "(--from, --shape, --key, --mod, --allow-pickle); `bilinear import` it to a .bl file first",
                          severity="note")
        raise BilinearError(*error.diagnostics, note) from None


def _verified_level(program, path: Path):
    """One ``--levels-schemes`` file, verified on its own: its errors located in it (the merged
    program's are not, and the failure was blamed on FILE)."""
    from .diagnostics import BilinearError, Diagnostic
    from .verify import verify_program

    errors = [error for entry in verify_program(program).entries for error in entry.errors]
    if errors:
        raise BilinearError(*errors, Diagnostic(f"{path} (--levels-schemes) does not verify; nothing was built from it"))
    return program


def _lowered(args, program):
    from .lower.plan import lower

    program, per_level = _per_level(args, program)
    return lower(program, _options(args), per_level)


def _compile(args) -> int:
    import json

    from .lower.artifact import artifact_names, earlier_library, library_facts, library_summary, write_artifacts
    from .lower.manifest import LARGEST_SIDE
    from .lower.plan import library_name
    from .frontend.importers import scheme_files
    from .frontend.provenance import source_header
    from .hybrid import level_files
    from .output import check_folder, input_among, writing_into
    from .api import with_notes
    from .lower.plan import with_compiled_counts
    from .report import to_text
    from .verify import verify_program

    if args.n > LARGEST_SIDE:  # the manifest's workspace figure is what the C function returns at n
        raise OptionError(f"-n {args.n}: the library's functions take sizes up to {LARGEST_SIDE} (a C int); give a "
                          "smaller -n")
    # options at odds with each other are usage errors, said before any work (a hybrid's level count comes
    # from its --levels-schemes files: its options are checked once they are read)
    options = _options(args) if args.levels_schemes is None else None
    program, notes = load_input(args, noted=True)
    program, per_level = _per_level(args, program)
    options = options or _options(args)
    name = args.name or library_name(program, per_level)
    after = "its levels' definitions" if per_level else "the file's main definition"
    if name.startswith("_"):  # --name is checked as it is read; a definition's name may be longer, not this
        raise ValueError(f"the library would be named {name!r} after {after}, and its C functions "
                         f"({name}_dgemm) with it, but C reserves names that start with _: give --name")
    if (problem := library_name_problem(name)) and not args.name:
        raise ValueError(f"the library would be named {brief(name)} after {after}, but {problem}: give --name")
    # a hybrid's default joins every level's name (290 bytes at 32 levels: no file name); a definition's own
    # name is the user's, taken up to what a file name may hold
    if per_level and not args.name and len(name) > MOST_NAME_CHARACTERS:
        raise ValueError(f"the library would be named after {after}, {len(name)} characters ({brief(name)}), more "
                         f"than --name takes ({MOST_NAME_CHARACTERS}): give --name")
    out = args.output or Path("build") / name
    level_paths = level_files(args.levels_schemes) if per_level else []
    # a catalogue scheme's every file (PLinOpt's come in parts): sources, and never compile's output
    inputs = [*scheme_files(args.file, args.input_format, args.shape), *level_paths]
    for target in (out / artifact for artifact in artifact_names(name)):
        # refused even with --force: the input would become compile's output (a link is replaced itself);
        # os.path.islink: a name too long to exist is no link (check_folder says what is wrong with it)
        if not os.path.islink(target) and input_among(target, inputs):
            raise ValueError(f"-o {out} would replace the input file {target} with compile's {target.name}; "
                             "choose another -o")
    check_folder(out, artifact_names(name), args.force, files=False)  # /proc, a file: before verifying takes minutes
    report = verify_program(program) if per_level else with_notes(verify_program(program), notes)  # verify's notes
    if per_level:  # a hybrid's definitions come from every level's file (the first's had been credited with all)
        report = replace(report, path=", ".join(dict.fromkeys(str(path) for path in level_paths)))
    if not report.ok:  # said first: a refusal to replace files hid it until --force
        print(to_text(report, n=args.n, dtype=args.dtype), file=sys.stderr)
        print(f"bilinear compile: {args.file} does not verify; nothing written", file=sys.stderr)
        return 1
    check_folder(out, artifact_names(name), args.force)  # before lowering, the work that takes time (again when writing)
    # the files it was built from (a hybrid's levels come from their own), each once, absolute: the manifest is
    # read from its own folder, where a path as typed, relative to where compile ran, names nothing
    sources = list(dict.fromkeys(str(path.resolve()) for path in (level_paths or inputs)))
    # each source's header comment (a reference; a licence such as fast-matmul's BSD text asks to be kept),
    # and those of the files they `use`, whose definitions the library is built from too
    # (a hybrid's: its levels' files, as its sources, and what they use: its program is theirs merged)
    headed = dict.fromkeys([*(path.resolve() for path in (level_paths or inputs)), *map(Path, program.uses)])
    provenance = tuple(line for path in headed for line in source_header(path))
    # its traffic as this compile runs it: a hybrid's levels run other schedules, and where every level is
    # breadth-first no schedule's passes run
    every_level_breadth_first = (args.breadth or 0) == args.levels and args.workspace_limit is None  # (no fallback)
    if not per_level and args.levels != 0 and not every_level_breadth_first:
        report = with_compiled_counts(report, options)
    with writing_into(out, artifact_names(name), args.force):
        earlier = earlier_library(out, name)  # another scheme's .cu and .h, from a compile this one replaces (--force)
        written = write_artifacts(program, report, options, out, sources, n=args.n, per_level=per_level,
                                  provenance=provenance, name=name, replacing=tuple(earlier))
    if earlier:
        print(f"note: removed {' and '.join(p.name for p in earlier)}, the earlier library in this folder", file=sys.stderr)
    manifest = json.loads(written["manifest"].read_text())
    print(to_text(report, n=args.n, dtype=manifest["options"]["dtype"]))  # as report.txt: the main function's dtype
    facts = library_facts(manifest, args.n)
    print("\n" + "\n".join(library_summary(facts)[:2]))  # its notes: on stderr
    for note in facts["notes"]:  # what the library leaves to the Python runtime, and a long build: said, not dropped
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {written['source']}, {written['header']}, {written['manifest']} and report.txt/.md/.json "
          f"({facts['kernels']} kernels)")
    return 0


def _run(args) -> int:
    from .distributed.cli import check_single_device, run_command

    if args.gpus is not None:
        return run_command(args)
    if (refused := check_single_device(args)) is not None:
        return refused
    from .runtime.compiled import CompiledProduct, make_backend
    from .runtime.run import check_fits, run_once

    M = args.m or args.n
    K = args.k or args.n
    backend = make_backend(args.backend)
    check_fits(backend, M, K, args.n, args.dtype)  # before loading and lowering: refuse at once
    from .lower.notes import unused_options

    program = load_input_noting(args)
    product = CompiledProduct(_lowered(args, program), backend)
    notes = unused_options(product.lowered, "product")  # as compile says them: no option is taken without a word
    recurses = product.lowered.levels or product.lowered.breadth is not None  # (at 0 levels, unused_options says it)
    if backend.name == "numpy" and product.lowered.options.launch == "streams" and recurses:
        notes.append("--launch streams changes nothing on the numpy backend: it runs the calls streams would overlap "
                     "one after another")
    for note in notes:
        print(f"bilinear run: note: {note}", file=sys.stderr)
    with _quiet_numpy():
        result = run_once(product, M, K, args.n, alpha=args.alpha, beta=args.beta, repeat=args.repeat, seed=args.seed)
    print(result.describe())
    if result.passes:
        return 0
    if args.leaf == "ozaki" and args.moduli is not None:  # the leaves' k, below breadth-first levels too
        if why := _too_few_moduli(args.moduli, product.leaf_dims(M, K, args.n)[1], args.dtype):
            print(f"bilinear run: note: {why}", file=sys.stderr)
    return 1


BENCH_DEFAULTS = {"files": [algorithms_dir() / "msmes.bl"], "n": [4096, 8192], "dtype": ["float64"], "levels": ["1", "2"],
                  "leaf": ["cublas"]}
# the sizes on the CPU (the numpy backend), where 4096 and 8192 took minutes a product
CPU_BENCH_SIZES = [512, 1024]


def bench_defaults(args) -> None:
    """Fill in the configuration options left out; beside --configs, refuse any that were given."""
    given = [name for name in BENCH_DEFAULTS if getattr(args, name)]
    if args.configs is not None and given and not getattr(args, "gpus", None):  # the distributed bench refuses it
        flags = {"files": "FILE", "n": "-n", "dtype": "--dtype", "levels": "--levels", "leaf": "--leaf"}
        raise OptionError(f"--configs lists every configuration; leave out {', '.join(flags[name] for name in given)}")
    # the distributed bench times one level count at a time: one level, as run --gpus
    defaults = {**BENCH_DEFAULTS, "levels": ["1"]} if getattr(args, "gpus", None) else BENCH_DEFAULTS
    if not args.n and _on_the_cpu(args.backend):
        defaults = {**defaults, "n": CPU_BENCH_SIZES}
    for name, default in defaults.items():
        if not getattr(args, name):
            setattr(args, name, list(default))


def _on_the_cpu(backend: str | None) -> bool:
    """Whether ``--backend`` (None: CuPy where a GPU is) runs on NumPy."""
    if backend is not None:
        return backend == "numpy"
    from .runtime.cupy_backend import cupy_available

    return not cupy_available()


def _bench(args) -> int:
    from .distributed.cli import bench_command, check_single_device

    bench_defaults(args)
    if args.gpus is not None:
        return bench_command(args)
    if (refused := check_single_device(args)) is not None:
        return refused
    from .bench_cli import run_bench

    with _quiet_numpy():
        return run_bench(args)


def _quiet_numpy():
    """No NumPy warnings of overflow or NaN (naming its own source lines) before a report that says
    the error is inf or NaN, and how it compares with the bound."""
    import numpy as np

    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


def _too_few_moduli(count: int, k: int, dtype: str) -> str | None:
    """Why ``count`` moduli at inner dimension ``k`` may miss ``dtype``'s accuracy, or None when
    they are no fewer than the default target needs (said where a run fails its bound)."""
    from .runtime.ozaki import K_CHUNK, default_bits, moduli_for, scale_bits

    bits, k = default_bits(dtype), min(k, K_CHUNK)
    needed = moduli_for(bits, k)
    if count >= needed:
        return None
    bits_a, bits_b = scale_bits(count, k)
    return (f"{'1 modulus keeps' if count == 1 else f'{count} moduli keep'} {bits_a} and {bits_b} bits of A's and "
            f"B's elements at the leaves' k = {k}; {dtype}'s {bits} bits need {needed}, the number chosen when "
            "--moduli is left out")
