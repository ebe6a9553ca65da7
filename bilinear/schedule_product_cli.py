"""``bilinear product`` of two schedules: the Kronecker product of their algorithms and the two
levels of schedule as one (:mod:`bilinear.schedule.product`), verified as written before it is written."""

from __future__ import annotations

import sys
from pathlib import Path

from .diagnostics import BilinearError, Diagnostic, render
from .output import write_atomic

HALF_NAME = 126  # each algorithm's part of a cut joined name: 126 + 3 + 126 = 255


def both_schedules(program, loaded) -> bool:
    """Whether FILE's and SECOND's main definitions are both schedules."""
    from .ir import Schedule

    return isinstance(program.main, Schedule) and isinstance(loaded.main, Schedule)


def write_schedule_product(args, program, loaded, first, second) -> int:
    """FILE's main schedule on the outer blocks and SECOND's inside, with the product algorithm, as one .bl
    (``product`` has verified both schedules with their algorithms, :func:`bilinear.cli_sources.verified`)."""
    from .compose import kronecker
    from .ir.names import LONGEST_NAME, derived_name
    from .frontend.provenance import source_header
    from .schedule.product import ScheduleProductError, schedule_product

    outer, inner = program.main, loaded.main
    # --name names the schedule here: the algorithm keeps its joined name, cut where a .bl file could not
    # hold it (the refusal's "give one" could not be followed)
    joined = f"{first.name}_x_{second.name}"
    algorithm = kronecker(first, second, name=joined if len(joined) <= LONGEST_NAME else
                          f"{first.name[:HALF_NAME]}_x_{second.name[:HALF_NAME]}")
    note_dropped_products(first, second)
    name = args.name or derived_name(f"{outer.name}_x_{inner.name}")
    if name == algorithm.name:
        raise BilinearError(Diagnostic(f"--name {name} is the name of the product algorithm the schedule is written for "
                                       "(from the files' names); give the schedule another"))
    try:
        schedule = schedule_product(outer, first.shape, inner, second.shape, algorithm.name, name)
    except ScheduleProductError as error:  # the way to the algorithms' product, which needs no schedule
        raise ScheduleProductError(f"{error}; --algorithm {first.name} multiplies the algorithms alone") from None
    made = (f"{name}: schedule {outer.name} on the outer blocks and {inner.name} inside each product, as one schedule "
            "(bilinear.schedule.product): adjacent element-wise passes of the two levels fuse into one.")
    # each file once: the schedules', then those their algorithms come from through `use` (msmes.bl, strassen.bl)
    files = dict.fromkeys(Path(path).resolve() for path in (args.file, args.second, first.span.path, second.span.path))
    header = (*(line for path in files for line in source_header(path)), made)
    return write_verified(algorithm, schedule, header, args.style, args.output, args.force)


def write_verified(algorithm, schedule, header: tuple[str, ...], style: str, output, force: bool) -> int:
    """``algorithm`` and ``schedule`` as one .bl text, to ``output`` (stdout when None), only once the
    text verifies as written: a derived schedule that does not is a bug, said and not written."""
    from .frontend.export import to_bl
    from .frontend.loader import program_from_text
    from .verify import verify_program

    text = to_bl(algorithm, style=style, header=header, schedule=schedule)
    # located in the derived text, never in -o (not written)
    report = verify_program(program_from_text(text, f"<derived {schedule.name}>"))
    if not report.ok:
        for diagnostic in (d for entry in report.entries for d in entry.errors):
            print(render(diagnostic), file=sys.stderr)
        print(f"bilinear: the derived schedule {schedule.name} does not verify; nothing written", file=sys.stderr)
        return 1
    summary = (f"{algorithm.name} {algorithm.signature} and schedule {schedule.name} "
               f"[{', '.join(sorted(schedule.properties))}], verified")
    if output is None:
        sys.stdout.write(text)
        print(summary, file=sys.stderr)
    else:
        write_atomic(Path(output), text, replace=force)  # without --force, a file made there meanwhile is kept
        print(f"wrote {output} ({summary})")
    return 0


def note_dropped_products(first, second) -> None:
    """Say which products of the factors ``kronecker`` leaves out, with every product of them: none
    of those is used by an output (the schedule product's algorithm too)."""
    from .compose import unused_products

    unused = [f"{side}'s {', '.join(names)}" for side, names in (("FILE", unused_products(first)),
                                                                 ("SECOND", unused_products(second))) if names]
    if unused:
        print(f"note: dropped the products that multiply {' or '.join(unused)}: no output uses them", file=sys.stderr)
