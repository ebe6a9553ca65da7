"""The ``bilinear`` command: verify, compile, run and benchmark bilinear schemes.

Exit status: 0 when everything holds, 1 when verification fails (``verify``'s report,
its findings with it, on stdout) or the input is wrong (located diagnostics on stderr),
2 for a bad command line.

This module builds the parser and runs ``verify`` and ``list``; each other group
of commands has a module with its parsers and handlers: :mod:`bilinear.run_cli`
(compile, run, bench), :mod:`bilinear.compose_cli` (import, transform, product,
export, optimize) and :mod:`bilinear.distributed.cli` (plan); the options they
share are in :mod:`bilinear.cli_args`.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import signal
import threading
import sys
import warnings
from pathlib import Path

from .cli_args import add_input_options, add_report_options, joined_scalars, report_format
from .compose_cli import add_parsers as add_compose_parsers
from .inplace_cli import add_parser as add_inplace_parser
from . import __version__
from .diagnostics import BilinearError, diagnostics_of, markdown_block, markdown_code, render
from .lower.options import OptionError
from .distributed.cli import add_plan_parser
from .distributed.ranks import launched_ranks, mpi_started, refused_on_this_rank
from .run_cli import add_bench_parser, add_compile_and_run_parsers
from .cli_actions import StoreOnce

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


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose help and version fail when they cannot be written: argparse drops
    the OSError, so `bilinear --help > /dev/full` exited 0 having written nothing.  Options are taken
    whole (`--fo` had meant --force) and, where they hold one value, once (:class:`~bilinear.cli_actions.StoreOnce`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})
        for name in (None, "store"):
            self.register("action", name, StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        self._given = {}  # each parse counts its own (tests and ranks parse many times in one process)
        return super().parse_known_args(args, namespace)

    def _print_message(self, message: str, file=None) -> None:
        file = file or sys.stderr
        try:
            file.write(message)
            file.flush()  # a full disk is found now, not in the interpreter's exit
        except OSError as error:
            if file is not sys.stdout:  # a usage error's message: nowhere to say more, its status 2 stands
                return
            if isinstance(file, _ClosedStdout):  # its message says so already
                raise
            raise OSError(error.errno, f"cannot write to standard output: {error.strerror or error}") from error


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bilinear", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"bilinear {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    verify = commands.add_parser(
        "verify",
        help="prove an algorithm or schedule correct and report what it costs",
        description="Prove every algorithm and schedule in FILE correct in exact rational arithmetic "
        "(the Brent equations; a symbolic simulation of schedules) and report products, additions, "
        "stages, workspace and stability. Exits 1 if anything is wrong.",
    )
    add_input_options(verify)
    verify.add_argument(
        "--format", type=report_format, default="text",
        help="report format: text (default), md or json (the input format is --from's)",
    )
    add_report_options(verify)
    verify.set_defaults(handler=_verify)

    add_compile_and_run_parsers(commands)
    add_compose_parsers(commands)
    add_inplace_parser(commands)

    list_ = commands.add_parser("list", help="list the shipped algorithms and schedules",
                                description="List every definition in the shipped algorithms/ folder with its "
                                "shape, rank and whether it verifies. Exits 1 if one does not.")
    list_.set_defaults(handler=_list)

    add_bench_parser(commands)
    add_plan_parser(commands)
    return parser


def _verify(args) -> int:
    from .api import verify
    from .report import REPORT_SCHEMA_VERSION, RENDERERS, json_text

    try:
        report = verify(
            args.file, format=args.input_format, shape=args.shape, key=args.key, allow_pickle=args.allow_pickle,
            modulus=args.mod,
        )
    except (BilinearError, ValueError) as error:
        if args.format == "md":  # a report that says so (a CI job that keeps it had kept an empty file)
            rendered = "\n".join(render(d) for d in diagnostics_of(error))
            print(f"# Verification report: {markdown_code(str(args.file))}\n\n**not loaded**: nothing in it was "
                  f"verified.\n\n{markdown_block(rendered)}")
        if args.format != "json":
            raise
        # A JSON reader gets JSON whatever happened: the file did not load, so no entries.  A
        # ValueError is a request refused before reading (a shape too large), with no location.
        diagnostics = diagnostics_of(error)
        errors = [d.to_json() for d in diagnostics]
        document = {"schema_version": REPORT_SCHEMA_VERSION, "file": str(args.file), "ok": False, "entries": [],
                    "errors": errors}
        print(json_text(document))
        for diagnostic in diagnostics:
            print(render(diagnostic), file=sys.stderr)
        return 1
    print(RENDERERS[args.format](report, n=args.n, dtype=args.dtype))
    for note in _unused_report_options(args, report):
        print(f"bilinear verify: {note}", file=sys.stderr)
    return 0 if report.ok else 1


def _unused_report_options(args, report) -> list[str]:
    """Notes for -n and --dtype where the report has no figure they change: an algorithm's counts
    per level use n but count no bytes; a modular, approximate or complex scheme's report uses neither."""
    from .verify import AlgorithmReport, ScheduleReport

    kinds = {type(entry) for entry in report.entries}
    notes = []
    if getattr(args, "n_given", False) and not kinds & {AlgorithmReport, ScheduleReport}:
        notes.append(f"-n {args.n} changes nothing here: the report of {Path(args.file).name} counts no sizes")
    if getattr(args, "dtype_given", False) and ScheduleReport not in kinds:
        notes.append(f"--dtype {args.dtype} changes nothing here: it counts a schedule's bytes, and "
                     f"{Path(args.file).name} has no schedule")
    return notes


def _list(args) -> int:
    from .api import load
    from .ir import Schedule
    from .paths import algorithms_dir
    from .verify import verify_program

    rows = []
    for path in sorted(algorithms_dir().glob("*.bl")):
        try:
            program = load(path)
        except (BilinearError, ValueError, OSError) as error:  # one such file had hidden every other row
            rows.append((path.name, "-", f"cannot be read: {str(error).splitlines()[0]}", "FAILS"))
            continue
        for entry in verify_program(program).entries:
            definition = getattr(entry, "schedule", None) or entry.algorithm
            if definition.name not in program.own:
                continue  # an algorithm the file only uses
            if isinstance(definition, Schedule):
                what = (f"schedule for {definition.algorithm} {program.algorithm(definition.algorithm).signature} "
                        f"[{', '.join(sorted(definition.properties))}]")
            else:
                what = f"algorithm {definition.signature}"
            rows.append((path.name, definition.name, what, "verified" if entry.ok else "FAILS"))
    if not rows:  # an installation that lost its algorithms/ folder's files
        print(f"bilinear list: no .bl files in {algorithms_dir()}", file=sys.stderr)
        return 1
    widths = [max(len(row[column]) for row in rows) for column in range(3)]  # columns as wide as their longest
    for row in rows:
        print(" ".join(text.ljust(width) for text, width in zip(row, widths)) + " " + row[3])
    return 0 if all(row[3] == "verified" for row in rows) else 1


# the signals a command unwinds from, and what it says (its exit status is 128 + the signal's number)
_ENDING = {signal.SIGTERM: "terminated", **({signal.SIGHUP: "hung up"} if hasattr(signal, "SIGHUP") else {})}


class Terminated(BaseException):
    """SIGTERM (a timeout, a cancelled CI job) or SIGHUP (the terminal or SSH session closed): unwound as
    Ctrl-C is, so that what a command was writing is removed (``output.removed_on_failure``) rather than
    left half-written.  ``args[0]``: the signal."""

    @property
    def signal(self) -> int:
        return self.args[0] if self.args else signal.SIGTERM

    @property
    def said(self) -> str:
        """The line a command ends with."""
        return f"bilinear: {_ENDING.get(self.signal, 'terminated')}"

    @property
    def status(self) -> int:
        return 128 + self.signal


def _terminated(signum, frame) -> None:
    raise Terminated(signum)


_PACKAGE = Path(__file__).resolve().parent


def _said_as_a_note(shown):
    """warnings.showwarning for a command: bilinear's own warnings (UserWarning: a pool that could not
    run, work done in one process instead) as one note each, not Python's path, line and source."""
    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UserWarning) and Path(filename).resolve().is_relative_to(_PACKAGE):
            print(f"note: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    return show


def main(argv: list[str] | None = None) -> int:
    # signal handlers are the main thread's, and so is the process's warning display (catch_warnings
    # sets module state, which two threads' commands would leave to each other)
    if threading.current_thread() is not threading.main_thread():
        return _main(argv)
    with warnings.catch_warnings():  # the caller's own display comes back after
        warnings.showwarning = _said_as_a_note(warnings.showwarning)
        return _signalled(argv)


def _signalled(argv: list[str] | None) -> int:
    if hasattr(signal, "SIGPIPE"):  # `bilinear verify ... | head` ends quietly, like other tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # a signal ignored when the command started stays ignored: `nohup bilinear ...` outlives its terminal
    ending = [number for number in _ENDING if signal.getsignal(number) != signal.SIG_IGN]
    before = {number: signal.signal(number, _terminated) for number in ending}
    try:
        return _main(argv)
    except Terminated as ended:  # (in the arguments' parsing too)
        print(ended.said, file=sys.stderr)
        return ended.status
    except KeyboardInterrupt:  # in the arguments' parsing (a command's own is said where it runs)
        print("bilinear: interrupted", file=sys.stderr)
        return 130
    finally:  # a caller's own handlers, when main runs inside a program (None: one not set from Python)
        for number, handler in before.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)


@contextlib.contextmanager
def _usage_errors_said_once(words: list[str]):
    """A usage error (argparse's SystemExit) raised inside, said once for an MPI job whose ranks all
    refuse it alike, and told to ranks that wait to compare command lines with this one."""
    usage = io.StringIO()  # the message, held where a job's ranks may say it once between them
    try:
        with contextlib.redirect_stderr(usage) if launched_ranks()[0] > 1 else contextlib.nullcontext():
            yield
    except SystemExit as refused:
        if refused.code:
            refused_on_this_rank(words, usage.getvalue())
        raise


class _ClosedStdout(io.TextIOBase):
    """sys.stdout of a process started with it closed (`>&-`), which Python sets to None: a write
    is an OSError, reported as a write error is, not an AttributeError's traceback."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "cannot write to standard output: it is closed")


def _main(argv: list[str] | None) -> int:
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stderr is None:  # closed (`2>&-`): print(file=None) would write the messages into stdout's JSON
        sys.stderr = open(os.devnull, "w")
    for stream in (sys.stdout, sys.stderr):  # γ, ‖, ⟨⟩ on a cp1252 stdout: escaped, not a failed run
        if hasattr(stream, "reconfigure") and getattr(stream, "errors", None) == "strict":  # surrogateescape kept
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    words = joined_scalars(sys.argv[1:] if argv is None else list(argv))
    try:
        with _usage_errors_said_once(words):
            args, stray = parser.parse_known_args(words)
            (commands,) = [action for action in parser._actions if action.dest == "command"]
            if stray:  # the command's own usage, not the top level's (a FILE after a one-value option of bench)
                commands.choices[args.command].error(f"unrecognized arguments: {' '.join(stray)}")
    except OSError as error:  # --help or --version to a full disk or a closed stdout
        print(f"bilinear: error: {error.strerror or error}", file=sys.stderr)
        return 1
    try:
        return args.handler(args)
    except OptionError as error:  # contradictory or out-of-range options: a usage error, as argparse's are
        if mpi_started():  # refused on every rank alike once they compared options: rank 0 alone is here
            commands.choices[args.command].error(str(error))
        with _usage_errors_said_once(words):  # refused before any rank compared: as argparse's refusals
            commands.choices[args.command].error(str(error))
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
