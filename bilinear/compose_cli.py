"""Commands that derive a scheme from another and write it: ``import``, ``transform``, ``product``,
``export`` and ``optimize``; each verifies what it writes."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from .cli_args import (add_input_options, asks_for_reading_option, bl_name, chains, load_input_noting,
                       note_schedule_not_carried, note_unused_definitions, scheme_path, side_counts, tries)
from .cli_outputs import add_bl_output_options, check_bl_output, export_output, export_output_path
from .cli_sources import SECOND_NOTE, chosen_algorithm, copied_header, named_algorithm, verified, with_second_note
from .diagnostics import BilinearError, Diagnostic, brief, counted, render
from .frontend.provenance import licence
from .ir import shape_too_large
from .lower.options import OptionError
from .output import check_target, held, write_atomic, write_together
from .report_sizes import duration_text
from .import_cli import import_scheme, sums_multiplied_out
from .schedule_product_cli import both_schedules, note_dropped_products, write_schedule_product


def _write(algorithm, header: tuple[str, ...], output: Path | None, style: str, force: bool) -> int:
    from .frontend.export import to_bl
    from .verify import report_algorithm

    report = report_algorithm(algorithm)
    if not report.ok:  # a bug here, or an input that was not an exact algorithm
        for diagnostic in report.errors:
            print(render(diagnostic), file=sys.stderr)
        print(f"bilinear: the derived {algorithm.name} does not verify; nothing written", file=sys.stderr)
        return 1
    for diagnostic in report.warnings:  # what verify would say of the file written (a product no output uses)
        print(render(diagnostic), file=sys.stderr)
    text = to_bl(algorithm, style=style, header=header)
    summary = f"{algorithm.name} {algorithm.signature}, verified"
    if output is None:
        sys.stdout.write(text)
        print(summary, file=sys.stderr)
    else:
        write_atomic(output, text, replace=force)  # without --force, a file made there meanwhile is kept
        print(f"wrote {output} ({summary})")
    return 0


def _note_sums_multiplied_out(*sources) -> None:
    for source in sources:  # what permute and kronecker write has no named sums
        if note := sums_multiplied_out(source, "the result", "`bilinear optimize` it to share sums again"):
            print(note, file=sys.stderr)


def transform(args) -> int:
    from .compose import permute, unused_products

    check_bl_output(args, args.file)
    program = load_input_noting(args)
    source = chosen_algorithm(args, program)
    result = permute(source, args.to, name=args.name)
    if args.algorithm is None:
        note_schedule_not_carried(program, source, "transform permutes", TRANSFORM_SCHEDULE)
    if note := sums_multiplied_out(source, "the result", "`bilinear optimize` it to share sums again", result):
        print(note, file=sys.stderr)
    if dropped := unused_products(source):
        print(f"note: dropped {', '.join(dropped)}, which no output uses (a permutation would turn its zero "
              "W column into a zero factor)", file=sys.stderr)
    shape = source.shape
    header = (*copied_header(args.file, program, source, writes=result.name),
              f"{result.name}: {source.name} <{shape.m},{shape.k},{shape.n}> permuted to order {args.to}, from {args.file.name}.")
    return _write(result, header, args.output, args.style, args.force)


TRANSFORM_SCHEDULE = (" (transform derives algorithms only: a schedule's statements name blocks of A, B and C, which "
                      "a permutation moves); compile and run derive one for the result")
PRODUCT_SCHEDULE = (" (it writes one schedule of both levels only where FILE's and SECOND's main definitions are both "
                    "schedules)")

# What product's --name names: FILE and SECOND are files, their main definitions schedules; --algorithm
# (an algorithm of FILE) makes the product an algorithm's even of two schedules.
PRODUCT_NAME_HELP = (" (default: FILE's and SECOND's algorithms' names joined by _x_, as strassen_x_winograd); where "
                     "FILE's and SECOND's main definitions are both schedules and no --algorithm is given, of the new "
                     "schedule instead (default: their names joined by _x_, as msmes_x_msmes), the algorithm keeping "
                     "its default name")

LARGE_PRODUCT = 10_000  # products past which building and verifying is said to take time
# ... which is quadratic in the products: 25,921 took 40 s on two cores (12,167: 9.6 s), with the cyclic
# collector paused while the scheme is built and read (bilinear.collector; 57 s and 12 s before)
_MEASURED_PRODUCTS, _MEASURED_SECONDS = 25_921, 40.0
# A side's terms past which optimize says that its seeded orders take minutes (optimize.seeded_terms), as
# measured on two cores:
LARGE_OPTIMIZE = 8000
OPTIMIZE_MEASURED = "⟨11,11,11;896⟩'s 13,206: 3.8 min with 16"
OPTIMIZE_GREEDY = "41 s there, for 2,610 additions on that side against 2,320"


def large_product_time(rank: int) -> str:
    """About how long building and verifying a product of ``rank`` products takes, from the measurement."""
    return duration_text(_MEASURED_SECONDS * (rank / _MEASURED_PRODUCTS) ** 2)


def product(args) -> int:
    from .api import load_noted
    from .compose import kronecker, unused_products
    from .schedule.product import product_refusal

    check_bl_output(args, args.file, args.second)
    try:
        program = load_input_noting(args)
    except BilinearError as error:  # FILE refused a reading option (a .bl file): one meant for SECOND, maybe
        raise with_second_note(error, args.second) from None
    if args.algorithm is None:
        note_unused_definitions(args.command, args.file, program)
    first = named_algorithm(program, args.algorithm)
    try:
        loaded, notes = load_noted(args.second)  # said as FILE's are (claimed modulo p, an alternative basis)
    except BilinearError as error:  # the reading options were FILE's: say so where SECOND needed one
        raise with_second_note(error, args.second) from None
    for note in notes:
        print(render(note), file=sys.stderr)
    note_unused_definitions(args.command, args.second, loaded, choosable=False)  # --algorithm chooses FILE's only
    second = named_algorithm(loaded, None)
    outer, inner = first.shape, second.shape
    if too_large := shape_too_large(outer.m * inner.m, outer.k * inner.k, outer.n * inner.n):  # before verifying either
        raise BilinearError(Diagnostic(too_large))
    first = verified(first, args.file, program if args.algorithm is None else None)
    second = verified(second, args.second, loaded)
    if args.algorithm is None and both_schedules(program, loaded):  # msmes ⊗ msmes: one schedule of both levels
        return write_schedule_product(args, program, loaded, first, second)
    why = PRODUCT_SCHEDULE
    if args.algorithm is not None and both_schedules(program, loaded):  # two schedules: why no product of them
        refused = next(filter(None, map(product_refusal, (program.main, loaded.main))), None)
        why = (f" ({refused})" if refused else f" (--algorithm {args.algorithm} chose FILE's algorithm; without it, "
               "product writes one schedule of both levels)")
    for source, derived in ((program, first), (loaded, second))[0 if args.algorithm is None else 1:]:
        note_schedule_not_carried(source, derived, "product multiplies", why)  # --algorithm: FILE's only
    # said before the product is built (itself half a minute at 10^4 products), from the products it keeps
    if (rank := math.prod(len(each.products) - len(unused_products(each)) for each in (first, second))) >= LARGE_PRODUCT:
        print(f"note: the product of {first.name} and {second.name} has {rank} products; building and verifying it before "
              f"it is written takes about {large_product_time(rank)} (time quadratic in the products: "
              f"{_MEASURED_SECONDS:.0f} s at {_MEASURED_PRODUCTS:,})",
              file=sys.stderr)  # ⟨54,54,54;97336⟩: 20 silent minutes
    result = kronecker(first, second, name=args.name)
    note_dropped_products(first, second)
    same = args.second.resolve() == args.file.resolve()  # strassen ⊗ strassen: its header once
    _note_sums_multiplied_out(first, *(() if same and second.name == first.name else (second,)))  # and its note
    first_header = copied_header(args.file, program, first, writes=result.name)
    second_header = () if same else copied_header(args.second, loaded, second, writes=result.name)
    # msmes ⊗ strassen: both algorithms are strassen.bl's, whose header both copies are
    header = (*first_header, *(() if second_header == first_header else second_header),
              f"{result.name}: the Kronecker product of {first.name} ({args.file.name}) and {second.name} ({args.second.name}).")
    return _write(result, header, args.output, args.style, args.force)


def export(args) -> int:
    from .frontend.importers import READERS
    from .frontend.writers import rendered

    try:
        args.output = export_output_path(args.output, args.to)
    except ValueError as error:
        raise OptionError(str(error)) from None
    # a .bl name reads back as .bl text, which this is not; PLinOpt's -o, a stem, would make x.bl_L.sms (a
    # folder named x.bl is a folder)
    if args.output.suffix.lower() == ".bl" and not (args.to == "plinopt" and args.output.is_dir()):
        meant = args.output.with_suffix(".npz" if args.to == "alphatensor" else "")
        why = ("names its three files after -o (MxKxN_R_OUT_L.sms, _R.sms and _P.sms), and .bl would sit inside their "
               "names" if args.to == "plinopt" else
               f"writes {args.to} files, and one named .bl would be read back as .bl text")
        raise OptionError(f"-o {args.output}: export --to {args.to} {why}: name it {meant} instead (`bilinear import` "
                          "writes .bl)")
    if args.to != "plinopt":  # its one file is known now: checked before any work (6.7 s on <16,16,16>)
        check_target(args.output, args.force, protect=(args.file,))
    elif not args.output.is_dir():  # a stem the three files are named after: it must not be a FIFO or a
        check_target(args.output, force=True)  # device (their files went beside /dev/null), nor under a file
    program = load_input_noting(args)
    algorithm = chosen_algorithm(args, program)
    if args.algorithm is None:
        note_schedule_not_carried(program, algorithm, "export writes", " (a catalogue format holds a scheme's "
                                  "coefficients alone)")
    kept = copied_header(args.file, program, algorithm)
    header = (*kept, f"Exported by bilinear from {args.file.name}.")
    files = rendered(algorithm, args.to, args.output, header)
    with held(next(iter(files)).parent):  # a second export into the folder waits, then finds the files
        for path in files:  # every target checked before any is written: a refusal leaves nothing behind
            check_target(path, args.force, protect=(args.file,))
        write_together(files, replace=args.force)  # PLinOpt's three files, all or none
    for path in files:
        print(f"wrote {path}")
    owner = next((reader.name for reader in READERS if args.output.suffix.lower() in reader.suffixes), args.to)
    if args.to != "plinopt" and owner != args.to:  # detection goes by the suffix first
        print(f"note: {args.output.suffix} is the suffix of {owner} files: read it back with --from {args.to}",
              file=sys.stderr)
    if args.to == "alphatensor" and len(kept) > 1:  # more than "from NAME": a reference, a licence
        print(f"note: an .npz has no place for a comment: the header comment of {args.file.name} ({brief(kept[1])}) "
              f"is not in {args.output.name}", file=sys.stderr)
    shape = algorithm.shape
    if args.to == "alphatensor" and not shape.m == shape.k == shape.n:
        print("note: a rectangular scheme is stored as AlphaTensor stores its own, an object array (pickled); "
              "reading it back needs --allow-pickle", file=sys.stderr)
    return 0


def optimize(args) -> int:
    from rich.console import Console

    from .optimize import optimize as eliminate_common_sums
    from .optimize import optimized_name, seeded_terms, small_sides
    from .optimize_dead import dropped
    from .optimize_products import moved, said

    if args.style == "table":  # it had been ignored: the result was written as equations anyway
        raise OptionError("optimize writes named sums, which --style table (U, V and W, a column per product) cannot "
                         "hold; leave --style out")
    also = args.also or []
    check_bl_output(args, args.file, *also)
    program = load_input_noting(args)
    source = chosen_algorithm(args, program)
    if args.name is None:
        optimized_name(source)  # refused before the search, where it is too long
    if args.algorithm is None:
        note_schedule_not_carried(program, source, "optimize rewrites")
    small = small_sides(source)
    _note_unused_search_options(args, source.name, small)
    if args.seeds > 0 and (terms := seeded_terms(source)) >= LARGE_OPTIMIZE:
        print(f"note: {source.name}'s seeded orders ({args.seeds} a side) take minutes on a side of {terms:,} terms "
              f"({OPTIMIZE_MEASURED}); --seeds 0 runs the greedy order alone ({OPTIMIZE_GREEDY})", file=sys.stderr)
    others = _other_programs(source, also)
    started = time.perf_counter()
    with Console(stderr=True).status(f"optimizing {source.name}"):  # a spinner where stderr is a terminal
        # said first: a large scheme's sides take minutes (a <2,5,7;55> took 372 s in silence)
        print(f"optimizing {source.name}: {counted(source.rank, 'product')}, sides {' '.join(small) or 'none'} "
              "small enough for the searches past greedy elimination", file=sys.stderr)
        result, counts = eliminate_common_sums(
            source, seeds=args.seeds, name=args.name, polish=args.polish, chains=args.chains, also=others,
            starts=args.starts
        )
    print(f"optimized in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    for side, label in zip("ABC", ("A side (left factors)", "B side (right factors)", "C side (outputs)")):
        (adds_before, scal_before), (adds_after, scal_after) = counts[side]["before"], counts[side]["after"]
        print(f"{label:24s} additions {adds_before:5d} -> {adds_after:5d}   scalings {scal_before:4d} -> {scal_after:4d}", file=sys.stderr)
    if gone := dropped(source, result):  # verify would only warn of them; the scheme is smaller without
        print(f"note: dropped {', '.join(gone)}, which no output uses: "
              f"{result.name} has {counted(result.rank, 'product')}, {result.signature}", file=sys.stderr)
    rescaled = moved(source, result)
    if rescaled:
        print(f"note: products rescaled where that saves scalings (the same C): {said(rescaled)}", file=sys.stderr)
    if source.sums:  # "before" is each form on its own; a file with named sums already shares some
        from .optimize_sides import in_use

        as_written = ", ".join(f"{side} {s.additions}+{s.scalings}" for side, s in zip("ABC", in_use(source)))
        print(f"(before: each form on its own; {source.name} as written: {as_written}, additions+scalings)", file=sys.stderr)
    header = (*copied_header(args.file, program, source, writes=result.name),
              f"{result.name}: {source.name} with common sums eliminated by `bilinear optimize`.")
    for path, other in zip(also, others):  # a side may be this program's: say where it came from
        header += (f"Also tried (--also): {other.name} from {path.name}.", *licence(path))
    return _write(result, header, args.output, "equations", args.force)


def _note_unused_search_options(args, name: str, small: list[str]) -> None:
    """--polish, --chains and --starts work on small sides only: say so where none of ``name``'s is, or
    where --starts names one that is not (``small`` lists those that are; they were ignored without a
    word on ⟨10,10,10⟩)."""
    # SIDE=1 is that side's default one start: --starts A=1 gives nothing
    starts = max(args.starts.values(), default=1) if isinstance(args.starts, dict) else args.starts
    given = [flag for flag, value, default in (("--polish", args.polish, 0), ("--chains", args.chains, 1),
                                               ("--starts", starts, 1)) if value != default]
    if given and not small:
        print(f"note: {', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to small sides only, and none of {name}'s is small; "
              "each side takes the greedy elimination alone", file=sys.stderr)
    elif given and args.chains != 1 and not args.polish:
        print("note: --chains applies with --polish (independent polishing searches); without it, it is ignored",
              file=sys.stderr)
    named = args.starts if isinstance(args.starts, dict) else {}
    if small and (large := [f"{side}={count}" for side, count in named.items() if count != 1 and side not in small]):
        what = "names a side that is not small; it takes" if len(large) == 1 else "name sides that are not small; they take"
        print(f"note: --starts {','.join(large)} {what} the greedy elimination alone", file=sys.stderr)
    if "--starts" in given and small and args.seeds == 0:
        print("note: --starts draws seeds, and --seeds 0 draws none: every start is the same greedy elimination; "
              "give --seeds", file=sys.stderr)


def _other_programs(source, paths: list[Path]) -> list:
    """The ``--also`` files' algorithms, each saying which of its sides are candidates; one computing
    none of ``source``'s sides is refused (another scheme, or its products in another order)."""
    from .api import load
    from .optimize_sides import borrowed

    others = []
    for path in paths:
        try:
            other = named_algorithm(load(path), None)
        except BilinearError as error:  # FILE's reading options are FILE's: say how to give another file's
            if not Path(path).is_file() or not asks_for_reading_option(error):
                raise  # a missing file, a folder, an approximate scheme: no reading option would help
            option = "--key m,k,n" if Path(path).suffix == ".npz" else "--shape m,k,n"
            raise BilinearError(*error.diagnostics, Diagnostic(
                f"--also {path} reads the file as detected, with no reading options (--key, --shape, ...); "
                f"import it to .bl first, e.g. `bilinear import {path} {option} -o other.bl`")) from None
        used = [side for side, program in zip("ABC", borrowed(source, other)) if program is not None]
        if not used:
            raise ValueError(f"--also {path}: {other.name} computes none of {source.name}'s sides (left factors, right "
                             "factors, outputs, its products taken in order); give a program of the same scheme")
        print(f"--also {path}: side{'s' if len(used) > 1 else ''} {', '.join(used)} of {other.name} tried too", file=sys.stderr)
        others.append(other)
    return others


STYLE_HELP = "equations (products and outputs as formulas; the default) or table (U, V and W, a row per block, a column per product)"
# optimize keeps --style so that `--style table` meets its own refusal (which says why), not argparse's
# "unrecognized arguments"; its help must not offer what that refusal turns down
OPTIMIZE_STYLE_HELP = ("equations only (the default): optimize writes named sums, which a table (U, V and W, a column "
                       "per product) cannot hold")


def add_parsers(commands) -> None:
    """``import``, ``transform``, ``product``, ``export`` and ``optimize``, in the order --help lists them."""
    import_ = commands.add_parser(
        "import",
        help="convert a catalogue scheme (fast-matmul, plinopt, kauers, mathematica, perminov, alphatensor) to a .bl file",
        description="Read a scheme in a catalogue format, verify it, and write it as .bl text (equations or a "
        "U/V/W table) with a header saying where it came from. Approximate schemes, and modulo-p ones that do not hold "
        "over Q, are refused; one claimed modulo p that holds over Q is written, with a note (but where --mod P claims it "
        "and a coefficient has no value modulo P, it is refused: without --mod it is written).",
    )
    add_input_options(import_)
    add_bl_output_options(import_)
    import_.add_argument("--style", choices=("equations", "table"), default="equations", help=STYLE_HELP)
    import_.add_argument("--name", type=bl_name, default=None, help="name of the algorithm in the .bl file")
    import_.set_defaults(handler=import_scheme)

    transform_cmd = commands.add_parser(
        "transform", help="permute a scheme's shape (transpose / cyclic symmetry), verify it, write .bl",
        description="Write the scheme for a permutation of <m,k,n> derived from FILE's algorithm by transposition "
        "and the cyclic symmetry: --to nkm gives <n,k,m> (transpose), knm and nmk the cyclic shifts, mnk and kmn "
        "the rest. The result is verified before it is written.",
    )
    add_input_options(transform_cmd)
    transform_cmd.add_argument("--to", required=True, choices=("mkn", "mnk", "kmn", "knm", "nmk", "nkm"), help="target order")
    product_cmd = commands.add_parser(
        "product", help="the Kronecker product of two schemes, verified, as .bl",
        description="Write the <m1*m2,k1*k2,n1*n2;R1*R2> scheme that runs FILE's algorithm on blocks and SECOND's "
        "inside them, verified before it is written. Where both files' main definitions are schedules (bilinear "
        "product msmes msmes), also the two levels of schedule as one schedule over its blocks (--name names it), "
        "whose adjacent element-wise passes the lowering fuses.",
    )
    add_input_options(product_cmd)
    product_cmd.add_argument("second", type=scheme_path, metavar="SECOND", help="the inner scheme: a .bl file, a shipped name, or a catalogue file read as detected (" + SECOND_NOTE + ")")
    export_cmd = commands.add_parser(
        "export", help="write a verified scheme as fast-matmul, PLinOpt .sms or AlphaTensor .npz",
        description="Write FILE's algorithm (named sums multiplied out) in a catalogue format; the header comment "
        "of a .bl source (reference, licence) goes into the fast-matmul and PLinOpt files' comments (an AlphaTensor "
        ".npz has no place for it, and a note says so). plinopt writes MxKxN_R_OUT_L/_R/_P.sms.",
    )
    add_input_options(export_cmd)
    export_cmd.add_argument("--to", required=True, choices=("fast-matmul", "plinopt", "alphatensor"), help="format")
    export_cmd.add_argument("-o", "--output", type=export_output, required=True, metavar="OUT", help="file (plinopt: OUT names MxKxN_R_OUT_L.sms, _R.sms and _P.sms; a folder gets "
                            "MxKxN_R_NAME_*.sms, NAME the algorithm's)")
    export_cmd.add_argument("--algorithm", default=None, help="which algorithm of FILE (default: its last definition)")
    export_cmd.add_argument("--force", action="store_true", help="replace files that exist")
    export_cmd.set_defaults(handler=export)
    optimize_cmd = commands.add_parser(
        "optimize", help="eliminate common subexpressions: named sums, fewer additions, verified",
        description="Rewrite FILE's algorithm with shared named sums found by greedy pair elimination over U, V "
        "and W (best of --seeds tie-breaking orders; on small sides also the kernel split, targets rewritten "
        "over other targets, butterflies of pairs of targets, a local search, and with --polish an iterated one), print additions and scalings before and after per side, verify the result and "
        "write it as .bl.",
    )
    add_input_options(optimize_cmd)
    optimize_cmd.add_argument("--seeds", type=tries, default=16, help="random orders tried per method beside the greedy elimination (default 16; 0: the greedy one alone)")
    optimize_cmd.add_argument(
        "--polish", type=tries, default=0, metavar="TRIES",
        help="then, per side of at most 4096 coefficients, TRIES rounds of an iterated local search: a few named sums "
        "folded back and the local search run again around them, kept when no dearer (default 0; about 4 s a round "
        "per side on PLinOpt's rational <4,4,4;48>)",
    )
    optimize_cmd.add_argument(
        "--also", type=scheme_path, action="append", metavar="PROGRAM",
        help="another program of the same scheme (an optimized .bl, PLinOpt's .slp, ...): each of its sides that "
        "computes the same forms, its products taken in order, is a starting program too, the cheapest kept; repeatable",
    )
    optimize_cmd.add_argument(
        "--chains", type=chains, default=1, metavar="K",
        help="with --polish, K independent searches per side from seeds 0..K-1, the cheapest kept; they run in "
        "parallel, one per core (default 1)",
    )
    optimize_cmd.add_argument(
        "--starts", type=side_counts, default=1, metavar="N|SIDE=N,...",
        help="per side of at most 4096 coefficients, N starting programs (start k from seeds k*SEEDS..), each "
        "finished and, with --polish, polished alone (start k's chains from seeds k*K..), the cheapest kept; "
        "A=5,B=21 names sides, the others 1 (default 1). Each start costs about a default run of its side.",
    )
    for command, handler in ((transform_cmd, transform), (product_cmd, product), (optimize_cmd, optimize)):
        add_bl_output_options(command)
        style_help = OPTIMIZE_STYLE_HELP if command is optimize_cmd else STYLE_HELP
        command.add_argument("--style", choices=("equations", "table"), default="equations", help=style_help)
        named = PRODUCT_NAME_HELP if command is product_cmd else ""
        command.add_argument("--name", type=bl_name, default=None, help=f"name of the new algorithm{named}")
        command.add_argument("--algorithm", default=None, help="which algorithm of FILE (default: its last definition)")
        command.set_defaults(handler=handler)
