"""The ``bilinear`` command: verify, compile, run and benchmark bilinear schemes.

Exit status: 0 when everything holds, 1 when verification fails or the input
is wrong (with located diagnostics on stderr), 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from .cli_args import bench_levels, byte_count, check_name, level_count, positive, report_format
from .diagnostics import BilinearError, render
from .distributed.cli import add_distribution_options, add_plan_parser
from .lower.options import DTYPES, LEAVES
from .runtime.compiled import BACKENDS

DESCRIPTION = """\
bilinear: a compiler, exact verifier and GPU runtime for fast matrix multiplication.

Write a scheme (Strassen, Winograd, a <3,3,3;23> scheme, an AlphaTensor
factorization) and optionally an in-place schedule in a .bl file; bilinear
proves it correct in exact arithmetic, lowers it to CUDA and runs it.
"""

EPILOG = """\
examples:
  bilinear verify algorithms/strassen.bl
  bilinear verify algorithms/msmes.bl --format md
  bilinear verify ../shared/schemes/fast-matmul/grey333-23-152
  bilinear compile algorithms/msmes.bl -o build/msmes --levels 2
  bilinear run algorithms/msmes.bl -n 4096 --levels 2 --dtype float64
  bilinear run algorithms/strassen.bl -n 33 --backend numpy --leaf fused
  bilinear plan algorithms/winograd.bl --gpus 2 -n 32768
  mpiexec -n 2 bilinear run algorithms/msmes.bl -n 32768 --gpus 2 --levels 1
"""


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-n", type=positive, default=8192, metavar="N",
        help="problem size used for workspace bytes and per-level counts in the report (default 8192)",
    )
    parser.add_argument("--dtype", choices=DTYPES, default="float64", help="element type for byte counts (default float64)")


def _add_lowering_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--levels", type=level_count, default=1, metavar="L", help="levels of recursion (default 1)")
    parser.add_argument("--leaf", choices=LEAVES, default="cublas", help="leaf products: cuBLAS GEMMs or the fused product kernel")
    parser.add_argument("--no-fuse", dest="fuse", action="store_false", help="one kernel per element-wise stage instead of fusing runs of them")
    parser.add_argument("--cutoff", type=positive, default=1, metavar="B", help="stop recursing where a block would be smaller than B (default 1)")
    parser.add_argument(
        "--breadth", type=level_count, default=0, metavar="L",
        help="run the innermost L of the levels breadth-first: one split per operand, the leaf GEMMs, one merge (default 0)",
    )
    parser.add_argument(
        "--workspace-limit", type=byte_count, default=None, metavar="BYTES",
        help="most workspace a call may use (e.g. 0, 512M, 24G); breadth-first levels that would pass it run depth-first",
    )
    parser.add_argument(
        "--levels-schemes", default=None, metavar="A.bl,B.bl",
        help="a hybrid: level 1 runs A.bl's scheme, level 2 B.bl's, ... (sets --levels to their number)",
    )


def _scheme_path(text: str) -> Path:
    from .frontend.loader import find_scheme

    return find_scheme(text)


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", type=_scheme_path, help="a .bl file, a scheme file in a catalogue format, or a shipped scheme's name (strassen)"
    )
    parser.add_argument(
        "--from", dest="input_format", default=None,
        help="input format: bl, or a catalogue format (fast-matmul, plinopt, kauers, mathematica, perminov, perminov-text, alphatensor); detected when omitted",
    )
    parser.add_argument("--shape", default=None, metavar="m,k,n", help="block shape of a catalogue scheme when it cannot be inferred")
    parser.add_argument("--key", default=None, metavar="m,k,n", help="which scheme of an AlphaTensor .npz archive")
    parser.add_argument(
        "--allow-pickle", action="store_true",
        help="let AlphaTensor's pickled (rectangular) entries load; this runs code stored in the file",
    )
    parser.add_argument(
        "--mod", type=int, default=None, metavar="P",
        help="the scheme is claimed modulo P (GF(P)), where its file name does not say so (e.g. a flip-graph vertex)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bilinear", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    verify = commands.add_parser(
        "verify",
        help="prove an algorithm or schedule correct and report what it costs",
        description="Prove every algorithm and schedule in FILE correct in exact rational arithmetic "
        "(the Brent equations; a symbolic simulation of schedules) and report products, additions, "
        "stages, workspace and stability. Exits 1 if anything is wrong.",
    )
    _add_input_options(verify)
    verify.add_argument(
        "--format", type=report_format, default="text",
        help="report format: text (default), md or json (the input format is --from's)",
    )
    _add_report_options(verify)
    verify.set_defaults(handler=_verify)

    compile_ = commands.add_parser(
        "compile",
        help="verify, then write a standalone CUDA library (kernels and C++ host layer), a manifest and the report",
        description="Verify FILE, then write into DIR: <name>.cu (every generated kernel, element-wise and fused "
        "product stages, for float64 and float32, and a C++ host layer running the recursion), <name>.h (declaring "
        "<name>_dgemm and <name>_sgemm, column-major like cublasDgemm; `nvcc -shared <name>.cu -lcublas` builds the "
        "library), manifest.json (kernels, stages, the launch plan per level, workspace bytes by n) and the "
        "verification report (report.txt, report.md, report.json). Works without a GPU.",
    )
    _add_input_options(compile_)
    compile_.add_argument("-o", "--output", type=Path, default=None, metavar="DIR", help="output folder (default build/<name>)")
    compile_.add_argument("--force", action="store_true", help="replace files that already exist in DIR")
    _add_lowering_options(compile_)
    _add_report_options(compile_)
    compile_.set_defaults(handler=_compile)

    run = commands.add_parser(
        "run",
        help="run a scheme on random matrices and check it against the reference",
        description="Multiply random normal matrices (M×K)·(K×N) with FILE's scheme, compare with the reference "
        "(cuBLAS on the GPU, NumPy on the CPU; both against a float64 product), and print the relative error "
        "‖C−C_ref‖/(‖A‖‖B‖), the time, the extra device bytes and, for in-place schedules, how well A and B "
        "were restored. Exits 1 when the error exceeds the bound 8·u·√K·ρ^L (u: unit roundoff, ρ: the "
        "algorithm's growth factor over the classical one's, L: levels).",
    )
    _add_input_options(run)
    run.add_argument("-n", type=positive, required=True, metavar="N", help="matrix size (M = K = N unless -m/-k are given)")
    run.add_argument("-m", type=positive, default=None, metavar="M", help="rows of A and C")
    run.add_argument("-k", type=positive, default=None, metavar="K", help="columns of A, rows of B")
    _add_lowering_options(run)
    run.add_argument("--dtype", choices=DTYPES, default="float64", help="element type (default float64)")
    run.add_argument("--backend", choices=BACKENDS, default=None, help="default: cupy when a GPU is present")
    run.add_argument("--alpha", type=float, default=1.0)
    run.add_argument("--beta", type=float, default=0.0)
    run.add_argument("--repeat", type=positive, default=5, help="timed repetitions (median reported; default 5)")
    run.add_argument("--seed", type=int, default=0)
    add_distribution_options(run)
    run.set_defaults(handler=_run)

    import_ = commands.add_parser(
        "import",
        help="convert a catalogue scheme (fast-matmul, plinopt, kauers, mathematica, perminov, alphatensor) to a .bl file",
        description="Read a scheme in a catalogue format, verify it, and write it as .bl text (equations or a "
        "U/V/W table) with a header saying where it came from. Approximate and modulo-p schemes are refused.",
    )
    _add_input_options(import_)
    import_.add_argument("-o", "--output", type=Path, default=None, metavar="FILE.bl", help="write here (default: stdout)")
    import_.add_argument("--force", action="store_true", help="replace FILE.bl if it exists")
    import_.add_argument("--style", choices=("equations", "table"), default="equations")
    import_.add_argument("--name", default=None, help="name of the algorithm in the .bl file")
    import_.set_defaults(handler=_import)

    _add_compose_commands(commands)

    list_ = commands.add_parser("list", help="list the shipped algorithms and schedules",
                                description="List every definition in the shipped algorithms/ folder with its "
                                "shape, rank and whether it verifies.")
    list_.set_defaults(handler=_list)

    bench = commands.add_parser(
        "bench",
        help="time schemes against cuBLAS side by side (table, JSON, plot)",
        description="For every FILE, size, dtype, level count and leaf kind: time our product and cuBLAS in the "
        "same process, interleaved, with CUDA events after a warm-up (median of --repeat), on random normal "
        "data. Reports effective TFLOP/s (2mnk/time), the ratio cuBLAS-time/our-time, extra device bytes, the "
        "relative error against a float64 product, the model's prediction and (with --breakdown) the time of "
        "each level-1 stage beside the model. `--levels auto` lets the model choose levels and leaf.",
    )
    bench.add_argument("files", nargs="*", type=Path, default=[Path("algorithms/msmes.bl")], metavar="FILE",
                       help="schemes to time (default algorithms/msmes.bl)")
    bench.add_argument("-n", type=positive, nargs="+", default=[4096, 8192], metavar="N", help="square sizes (default 4096 8192)")
    bench.add_argument("--dtype", nargs="+", choices=DTYPES, default=["float64"])
    bench.add_argument("--levels", type=bench_levels, nargs="+", default=["1", "2"], metavar="L", help="level counts, or auto (default 1 2)")
    bench.add_argument("--leaf", nargs="+", choices=LEAVES, default=["cublas"])
    bench.add_argument("--repeat", type=positive, default=5, help="timed repetitions per configuration (median; default 5)")
    bench.add_argument("--backend", choices=BACKENDS, default=None)
    bench.add_argument("--breakdown", action="store_true", help="print per-stage times beside the model")
    bench.add_argument(
        "--configs", type=Path, default=None, metavar="FILE",
        help="bench exactly the configurations listed in FILE, one per line: 'scheme.bl n dtype levels leaf' "
        "(# comments allowed), instead of every combination of the options above",
    )
    bench.add_argument("--json", type=Path, default=None, metavar="FILE", help="write every number to FILE")
    bench.add_argument("--plot", type=Path, default=None, metavar="FILE.png", help="plot effective TFLOP/s against n")
    add_distribution_options(bench)
    bench.set_defaults(handler=_bench)

    add_plan_parser(commands)
    return parser


def _add_compose_commands(commands) -> None:
    """``transform`` and ``product`` (logic in compose_cli)."""
    transform = commands.add_parser(
        "transform", help="permute a scheme's shape (transpose / cyclic symmetry), verify it, write .bl",
        description="Write the scheme for a permutation of <m,k,n> derived from FILE's algorithm by transposition "
        "and the cyclic symmetry: --to nkm gives <n,k,m> (transpose), knm and nmk the cyclic shifts, mnk and kmn "
        "the rest. The result is verified before it is written.",
    )
    _add_input_options(transform)
    transform.add_argument("--to", required=True, choices=("mkn", "mnk", "kmn", "knm", "nmk", "nkm"), help="target order")
    product = commands.add_parser(
        "product", help="the Kronecker product of two schemes, verified, as .bl",
        description="Write the <m1*m2,k1*k2,n1*n2;R1*R2> scheme that runs FILE's algorithm on blocks and SECOND's "
        "inside them, verified before it is written.",
    )
    _add_input_options(product)
    product.add_argument("second", type=_scheme_path, metavar="SECOND", help="the inner scheme (.bl or catalogue file)")
    export = commands.add_parser(
        "export", help="write a verified scheme as fast-matmul, PLinOpt .sms or AlphaTensor .npz",
        description="Write FILE's algorithm (named sums multiplied out) in a catalogue format; the header comment "
        "of a .bl source (reference, licence) goes into the formats' comments. plinopt writes MxKxN_R_OUT_L/_R/_P.sms.",
    )
    _add_input_options(export)
    export.add_argument("--to", required=True, choices=("fast-matmul", "plinopt", "alphatensor"), help="format")
    export.add_argument("-o", "--output", type=Path, required=True, metavar="OUT", help="file (plinopt: the stem)")
    export.add_argument("--algorithm", default=None, help="which algorithm of FILE (default: its last definition)")
    export.set_defaults(handler=lambda args: _derive("export", args))
    optimize = commands.add_parser(
        "optimize", help="eliminate common subexpressions: named sums, fewer additions, verified",
        description="Rewrite FILE's algorithm with shared named sums found by greedy pair elimination over U, V "
        "and W (best of --seeds tie-breaking orders), print additions and scalings before and after per side, "
        "verify the result and write it as .bl.",
    )
    _add_input_options(optimize)
    optimize.add_argument("--seeds", type=int, default=16, help="random tie-breaking orders tried (default 16)")
    for command, handler in ((transform, _transform), (product, _product), (optimize, None)):
        command.add_argument("-o", "--output", type=Path, default=None, metavar="FILE.bl", help="write here (default: stdout)")
        command.add_argument("--style", choices=("equations", "table"), default="equations")
        command.add_argument("--name", default=None, help="name of the new algorithm")
        command.add_argument("--algorithm", default=None, help="which algorithm of FILE (default: its last definition)")
        command.set_defaults(handler=handler or (lambda args: _derive("optimize", args)))


def _derive(name: str, args) -> int:
    from . import compose_cli

    return getattr(compose_cli, name)(args)


def _transform(args) -> int:
    from .compose_cli import transform

    return transform(args)


def _product(args) -> int:
    from .compose_cli import product

    return product(args)


def _load(args) -> Program:  # noqa: F821 - imported lazily to keep --help fast
    from .api import load

    return load(
        args.file, format=args.input_format, shape=args.shape, key=args.key, allow_pickle=args.allow_pickle, modulus=args.mod
    )


def _verify(args) -> int:
    import json

    from .api import verify
    from .report import RENDERERS

    try:
        report = verify(
            args.file, format=args.input_format, shape=args.shape, key=args.key, allow_pickle=args.allow_pickle,
            modulus=args.mod,
        )
    except BilinearError as error:
        if args.format != "json":
            raise
        # A JSON reader gets JSON whatever happened: the file did not load, so no entries.
        errors = [d.to_json() for d in error.diagnostics]
        print(json.dumps({"file": str(args.file), "ok": False, "entries": [], "errors": errors}, indent=2, ensure_ascii=False))
        for diagnostic in error.diagnostics:
            print(render(diagnostic), file=sys.stderr)
        return 1
    print(RENDERERS[args.format](report, n=args.n, dtype=args.dtype))
    return 0 if report.ok else 1


def _options(args):
    from .lower.options import Options

    return Options.from_args(args)


def _per_level(args, program):
    """The program and one definition name per level for ``--levels-schemes`` (None without it)."""
    if not getattr(args, "levels_schemes", None):
        return program, None
    from .api import load
    from .hybrid import hybrid

    program, per_level = hybrid(args.levels_schemes, load)
    args.levels = len(per_level)
    return program, per_level


def _lowered(args, program):
    from .lower.plan import lower

    program, per_level = _per_level(args, program)
    return lower(program, _options(args), per_level)


def _compile(args) -> int:
    import json

    from .lower.artifact import artifact_names, write_artifacts
    from .output import check_folder
    from .report import to_text
    from .verify import verify_program

    program, per_level = _per_level(args, _load(args))
    out = args.output or Path("build") / program.main.name
    check_folder(out, artifact_names(program.main.name), args.force)  # before any work: a refusal costs nothing
    report = verify_program(program)
    if not report.ok:
        print(to_text(report, n=args.n, dtype=args.dtype), file=sys.stderr)
        print(f"bilinear compile: {args.file} does not verify; nothing written", file=sys.stderr)
        return 1
    written = write_artifacts(program, report, _options(args), out, str(args.file), n=args.n, per_level=per_level)
    print(to_text(report, n=args.n, dtype=args.dtype))
    kernels = len(json.loads(written["manifest"].read_text())["kernels"])
    print(f"wrote {written['source']}, {written['header']}, {written['manifest']} and report.txt/.md/.json ({kernels} kernels)")
    return 0


def _run(args) -> int:
    if args.gpus is not None:
        from .distributed.cli import run_command

        return run_command(args)
    from .runtime.compiled import CompiledProduct, make_backend
    from .runtime.run import check_fits, run_once

    M = args.m or args.n
    K = args.k or args.n
    backend = make_backend(args.backend)
    check_fits(backend, M, K, args.n, args.dtype)  # before loading and lowering: refuse at once
    program = _load(args)
    product = CompiledProduct(_lowered(args, program), backend)
    result = run_once(product, M, K, args.n, alpha=args.alpha, beta=args.beta, repeat=args.repeat, seed=args.seed)
    print(result.describe())
    return 0 if result.within_bound else 1


def _import(args) -> int:
    from dataclasses import replace

    from .frontend.export import to_bl
    from .ir import Algorithm
    from .output import check_target, write_atomic
    from .verify import verify_program

    if args.name is not None:
        check_name(args.name)
    if args.output is not None:
        check_target(args.output, args.force, protect=(args.file,))
    program = _load(args)
    algorithm = program.main
    if not isinstance(algorithm, Algorithm):
        raise ValueError(  # noqa: TRY004 - a user mistake: reported as a message
            f"import converts an algorithm, and the last definition of {args.file} is the schedule {algorithm.name}; "
            "a .bl file needs no import"
        )
    if args.name:
        algorithm = replace(algorithm, name=args.name)
    report = verify_program(program)
    if not report.ok:
        for entry in report.entries:
            for diagnostic in entry.errors:
                print(render(diagnostic), file=sys.stderr)
        print(f"bilinear import: {args.file} does not verify; nothing written", file=sys.stderr)
        return 1
    from .compose_cli import source_header

    header = (*source_header(args.file), f"Imported by `bilinear import` from {args.file}.")
    text = to_bl(algorithm, style=args.style, header=header)
    _check_reads_back(text, args.output)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomic(args.output, text)
        print(f"wrote {args.output} ({algorithm.name}, <{algorithm.shape.m},{algorithm.shape.k},{algorithm.shape.n};{algorithm.rank}>)")
    return 0


def _check_reads_back(text: str, output: Path | None) -> None:
    """What import writes must load again; anything else is a bug, reported before writing."""
    from .frontend.loader import program_from_text

    try:
        program_from_text(text, str(output or "<import>"))
    except BilinearError as error:
        raise ValueError(f"internal error: the imported text does not read back ({error}); nothing written") from None


def _list(args) -> int:
    from .api import load
    from .ir import Schedule
    from .paths import algorithms_dir
    from .verify import verify_program

    for path in sorted(algorithms_dir().glob("*.bl")):
        program = load(path)
        for entry in verify_program(program).entries:
            definition = getattr(entry, "schedule", None) or entry.algorithm
            if definition.name not in program.own:
                continue  # an algorithm the file only uses
            if isinstance(definition, Schedule):
                what = f"schedule for {definition.algorithm} [{', '.join(sorted(definition.properties))}]"
            else:
                what = f"algorithm <{definition.shape.m},{definition.shape.k},{definition.shape.n};{definition.rank}>"
            print(f"{path.name:16s} {definition.name:12s} {what:40s} {'verified' if entry.ok else 'FAILS'}")
    return 0


def _bench(args) -> int:
    if args.gpus is not None:
        from .distributed.cli import bench_command

        return bench_command(args)
    from .bench_cli import run_bench

    return run_bench(args)


def main(argv: list[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):  # `bilinear verify ... | head` ends quietly, like other tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except BilinearError as error:
        for diagnostic in error.diagnostics:
            print(render(diagnostic), file=sys.stderr)
        return 1
    except ValueError as error:  # bad options or arrays: the message says what to change
        print(f"bilinear {args.command}: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # a path the checks could not foresee (a full disk, permissions)
        where = f"{error.filename}: " if error.filename else ""
        print(f"bilinear {args.command}: error: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"bilinear {args.command}: error: out of memory; try a smaller size or fewer levels", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bilinear: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
