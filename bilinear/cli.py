"""The ``bilinear`` command: verify, compile, run and benchmark bilinear schemes.

Exit status: 0 when everything holds, 1 when verification fails or the input
is wrong (with located diagnostics on stderr), 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .diagnostics import BilinearError, render

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
  bilinear compile algorithms/msmes.bl -o build/msmes
"""


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-n", type=int, default=8192, metavar="N",
        help="problem size used for workspace bytes and per-level counts in the report (default 8192)",
    )
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float64", help="element type for byte counts (default float64)")


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a .bl file, or a scheme file in a catalogue format")
    parser.add_argument(
        "--from", dest="input_format", default=None,
        help="input format: bl, or a catalogue format (fast-matmul, ...); detected when omitted",
    )
    parser.add_argument("--shape", default=None, metavar="m,k,n", help="block shape of a catalogue scheme when it cannot be inferred")


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
        "--format", default="text",
        help="report format: text (default), md or json; a catalogue format name (e.g. fast-matmul) "
        "selects the input format instead, like --from",
    )
    _add_report_options(verify)
    verify.set_defaults(handler=_verify)

    compile_ = commands.add_parser(
        "compile",
        help="verify, then write generated code, a manifest and the report",
        description="Verify FILE, then write its generated CUDA source, a JSON manifest of kernels and the "
        "launch plan, and the verification report into DIR. Works without a GPU.",
    )
    _add_input_options(compile_)
    compile_.add_argument("-o", "--output", type=Path, default=None, metavar="DIR", help="output folder (default build/<name>)")
    _add_report_options(compile_)
    compile_.set_defaults(handler=_compile)
    return parser


def _load(args) -> "Program":  # noqa: F821 - imported lazily to keep --help fast
    from .api import load

    return load(args.file, format=args.input_format, shape=args.shape)


def _verify(args) -> int:
    from .report import RENDERERS
    from .verify import verify_program

    if args.format not in RENDERERS:
        if args.input_format is None:
            args.input_format, args.format = args.format, "text"
        else:
            raise SystemExit(f"bilinear verify: --format must be text, md or json, not {args.format!r}")
    program = _load(args)
    report = verify_program(program)
    print(RENDERERS[args.format](report, n=args.n, dtype=args.dtype))
    return 0 if report.ok else 1


def _compile(args) -> int:
    from .report import to_json, to_markdown, to_text
    from .verify import verify_program

    program = _load(args)
    report = verify_program(program)
    out = args.output or Path("build") / program.main.name
    if not report.ok:
        print(to_text(report, n=args.n, dtype=args.dtype), file=sys.stderr)
        print(f"bilinear compile: {args.file} does not verify; nothing written", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.txt").write_text(to_text(report, n=args.n, dtype=args.dtype) + "\n", encoding="utf-8")
    (out / "report.md").write_text(to_markdown(report, n=args.n, dtype=args.dtype), encoding="utf-8")
    (out / "report.json").write_text(to_json(report, n=args.n, dtype=args.dtype) + "\n", encoding="utf-8")
    print(to_text(report, n=args.n, dtype=args.dtype))
    print(f"wrote {out}/report.txt, report.md, report.json")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except BilinearError as error:
        for diagnostic in error.diagnostics:
            print(render(diagnostic), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bilinear: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
