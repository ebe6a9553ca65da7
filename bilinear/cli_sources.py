"""FILE's algorithm for the commands that derive a scheme from it (transform, product, export,
optimize, inplace): the one chosen, verified with the file's schedule of it, and the header comments
a derived file copies; and what product says of SECOND where a reading option was meant for it."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

from .cli_args import asks_for_reading_option, note_unused_definitions
from .diagnostics import BilinearError, Diagnostic
from .frontend.provenance import source_header


def chosen_algorithm(args, program):
    """FILE's algorithm, verified: --algorithm's, or its main one's (with a note on what that leaves out)."""
    if args.algorithm is None:
        note_unused_definitions(args.command, args.file, program)
    return verified(named_algorithm(program, args.algorithm), args.file, program if args.algorithm is None else None)


def named_algorithm(program, name: str | None):
    """FILE's main algorithm (a schedule's), or the one ``name`` (--algorithm) names."""
    from .ir import Algorithm

    if name is None:
        main = program.main
        return main if isinstance(main, Algorithm) else program.algorithm(main.algorithm)
    found = program.algorithm(name)
    schedule = next((s for s in program.schedules if s.name == name), None)
    if found is None and schedule is not None:  # "no algorithm named msmes" left the user guessing
        raise ValueError(f"{name} is a schedule (for {schedule.algorithm}); --algorithm names an algorithm: "
                         f"--algorithm {schedule.algorithm}")
    if found is None:
        raise ValueError(f"no algorithm named {name!r}; the file defines {', '.join(a.name for a in program.algorithms)}")
    return found


def verified(algorithm, path: Path, program=None):
    """``algorithm`` (from ``path``) when it verifies, and ``program``'s main schedule of it where there
    is one (a file whose schedule does not restore A had been taken for its algorithm); otherwise their
    own errors, located in the file, before anything is derived from it (a derived scheme's errors name
    blocks and products the user never wrote)."""
    from .ir import Schedule
    from .verify import verify_schedule
    from .verify.algorithm import verify_algorithm

    wrong, errors = algorithm, verify_algorithm(algorithm)
    main = program.main if program is not None else None
    if not errors and isinstance(main, Schedule) and main.algorithm == algorithm.name:
        wrong, errors = main, verify_schedule(main, algorithm).errors
    if errors:
        raise BilinearError(*errors, Diagnostic(f"{wrong.name} in {path} does not verify; nothing was derived from it"))
    return algorithm


def copied_header(path: Path, program, source, writes: str | None = None) -> tuple[str, ...]:
    """``path``'s header (:func:`source_header`) for a file written from ``source``, with a note where it
    copies comments and ``path``'s main definition is another one (a schedule, or --algorithm's choice),
    which they may describe instead (msmes.bl's describe the in-place schedule, not Strassen).  A
    definition read through ``use`` takes the header of the file that defines it (strassen.bl's for
    msmes.bl's strassen): its reference and any licence that asks to be kept are there.  A line that
    describes ``writes`` (``NAME: ...``, what a command writes of a definition it derives) goes: the
    command writes its own, and a file derived again had carried both."""
    defined_in = Path(source.span.path) if source.span is not None else path
    if defined_in.is_file() and defined_in.resolve() != path.resolve():
        return _without_description(source_header(defined_in), writes)
    header = _without_description(source_header(path), writes)
    others = [name for name in program.own if name != source.name]  # a file's comments come first, before any
    if program.main is not source and len(header) > 1:  # more than "from NAME"
        print(f"note: the header comments copied from {path.name} may describe its main definition, "
              f"{program.main.name}, rather than {source.name}", file=sys.stderr)
    elif others and len(header) > 1:
        print(f"note: the header comments copied from {path.name} may describe another of its definitions, "
              f"{', '.join(others)}, rather than {source.name}", file=sys.stderr)
    return header


def _without_description(header: tuple[str, ...], name: str | None) -> tuple[str, ...]:
    return header if name is None else tuple(line for line in header if not line.startswith(f"{name}: "))


SECOND_NOTE = ("--from, --shape, --key, --mod and --allow-pickle read FILE; to choose how SECOND is read, "
               "`bilinear import` it to a .bl file first")


def with_second_note(error: BilinearError, second: Path) -> BilinearError:
    """``error`` with SECOND_NOTE where it is about a reading option and SECOND is a catalogue file (a
    reading option would not help a missing file or a modular scheme: import refuses it too)."""
    if second.suffix.lower() == ".bl" or not os.path.isfile(second) or not asks_for_reading_option(error):
        return error
    if _holds_only_modulo(second):  # (--mod given for SECOND had been sent there)
        return error
    first_error, *rest = error.diagnostics
    return BilinearError(replace(first_error, notes=(*first_error.notes, SECOND_NOTE)), *rest)


def _holds_only_modulo(path: Path) -> bool:
    """Whether ``path`` reads, as it is, as a scheme valid only modulo p, which import refuses."""
    from .reading import read
    from .verify.rings import ModularScheme

    try:
        return isinstance(read(path, None, None, None, False), ModularScheme)
    except BilinearError:
        return False
