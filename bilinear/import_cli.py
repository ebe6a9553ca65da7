"""``bilinear import``: a catalogue scheme, verified, as .bl text with a header saying where it came from."""

from __future__ import annotations

import sys
from pathlib import Path

from .cli_args import load_input_noting, note_unused_definitions
from .cli_outputs import check_bl_output
from .diagnostics import BilinearError, render
from .frontend.provenance import source_header
from .output import write_atomic


def import_scheme(args) -> int:
    """``bilinear import``: a catalogue scheme, verified, as .bl text."""
    from dataclasses import replace

    from .frontend.export import to_bl
    from .ir import Algorithm
    from .verify import report_algorithm

    check_bl_output(args, args.file)
    program = load_input_noting(args)  # what verify notes of it (an alternative basis, a modulus)
    algorithm = program.main
    if not isinstance(algorithm, Algorithm):
        raise ValueError(  # noqa: TRY004 - a user mistake: reported as a message
            f"import converts an algorithm, and the last definition of {args.file} is the schedule {algorithm.name}; "
            "a .bl file needs no import"
        )
    note_unused_definitions("import", args.file, program)
    report = report_algorithm(algorithm)  # what is written: another definition of a .bl file is left out
    if args.name:
        algorithm = replace(algorithm, name=args.name)
    if not report.ok:
        for diagnostic in report.errors:
            print(render(diagnostic), file=sys.stderr)
        print(f"bilinear import: {args.file} does not verify; nothing written", file=sys.stderr)
        return 1
    header = (*source_header(args.file), f"Imported by `bilinear import` from {args.file.name}.")
    text = to_bl(algorithm, style=args.style, header=header)
    if args.style == "table" and (note := sums_multiplied_out(algorithm, "the table", "--style equations keeps them")):
        print(note, file=sys.stderr)  # the table's comment said so, the command nothing (15 additions became 24)
    _check_reads_back(text, args.output)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomic(args.output, text, replace=args.force)  # without --force, a file made there meanwhile is kept
        print(f"wrote {args.output} ({algorithm.name}, {algorithm.signature})")
    return 0


def _check_reads_back(text: str, output: Path | None) -> None:
    """What import writes must load again; anything else is a bug, reported before writing."""
    from .frontend.loader import program_from_text

    try:
        program_from_text(text, str(output or "<import>"))
    except BilinearError as error:
        raise ValueError(f"internal error: the imported text does not read back ({error}); nothing written") from None


def sums_multiplied_out(source, where: str, remedy: str, result=None) -> str | None:
    """The note for a result (``where``) that multiplies out ``source``'s named sums, with the block
    additions a level they saved, or None where it has none; ``remedy`` says how to keep them.  With
    ``result`` (a permutation of ``source``), its own count: a cyclic one moves C's side onto A or B."""
    from .verify.counts import count_algorithm

    if not source.sums:
        return None
    counts = count_algorithm(source)
    after = (f"{count_algorithm(result).additions} in {where}" if result is not None
             else f"{counts.additions_unshared} multiplied out")
    return (f"note: {source.name}'s {len(source.sums)} named sums are multiplied out in {where} (its block additions: "
            f"{counts.additions} as written, {after}); {remedy}")
