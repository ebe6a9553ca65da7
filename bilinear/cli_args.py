"""Command-line argument types and checks: a bad value is refused before any work starts; and the
notes that several commands print on what they leave out of their input."""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

from .cli_actions import Given
from .diagnostics import brief
from .frontend.formats.common import TOO_MANY_DIGITS, comma_separated
from .ir.names import definition_name_problem
from .optimize_arguments import MOST_CHAINS, MOST_TRIES
from .lower.options import DTYPES, LAUNCHES, LEAF_KINDS, LEAVES, MAX_BYTES, OZAKI_SCALINGS

REPORT_FORMATS = ("text", "md", "json")


def ascii_number(text: str, kind: type = int):
    """``kind(text)`` of ASCII text without ``_``, else ValueError (int() read 1_6 as 16, ١٢ as 12)."""
    if not text.isascii() or "_" in text:
        raise ValueError(f"not an ASCII number: {text!r}")
    return kind(text)


def positive(text: str, least: int = 1, most: int | None = None) -> int:
    """An argparse type: a whole number of at least 1 (``least``) and at most ``most``."""
    try:
        value = ascii_number(text)
    except ValueError:
        if text.isascii() and text.strip().lstrip("+-").isdigit():  # a whole number past Python's digit limit
            raise argparse.ArgumentTypeError(f"{brief(text)!r}: {TOO_MANY_DIGITS}") from None
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
    if most is not None and value > most:
        raise argparse.ArgumentTypeError(f"must be at most {most}, not {brief(text)}")
    return value


MAX_COUNTED_DIMENSION = 2**40  # past this, the flop counts of a report or a plan leave what a float holds honestly


def dimension(text: str) -> int:
    """An argparse type: a matrix dimension to count or plan for, 1 to MAX_COUNTED_DIMENSION."""
    return positive(text, most=MAX_COUNTED_DIMENSION)


def tries(text: str) -> int:
    """An argparse type: a search count, 0 to :data:`MOST_TRIES`."""
    return positive(text, least=0, most=MOST_TRIES)


def cutoff(text: str) -> int:
    """An argparse type: --cutoff, 1 to 2^31 - 1 (a block dimension the C library holds)."""
    from .lower.options import MAX_CUTOFF

    return positive(text, most=MAX_CUTOFF)


def modulus(text: str) -> int:
    """An argparse type: a modulus, a whole number of at least 2."""
    return positive(text, least=2)


def chains(text: str) -> int:
    """An argparse type: parallel searches, 1 to :data:`MOST_CHAINS`."""
    return positive(text, most=MOST_CHAINS)


def seed(text: str) -> int:
    """An argparse type: a random seed, 0 to 2^64 - 1 (a longer one overflowed what a distributed
    run's ranks agree on)."""
    return positive(text, least=0, most=2**64 - 1)


def finite(text: str) -> float:
    """An argparse type: a finite number (``nan`` and ``inf`` would make every product exceed its bound)."""
    try:
        value = ascii_number(text, float)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
    return value


def side_counts(text: str) -> int | dict[str, int]:
    """An argparse type: a whole number of at least 1 for every side (``21``), or one per side
    named (``A=5,B=21``: the others 1)."""
    if "=" not in text:
        return positive(text, most=MOST_TRIES)
    counts: dict[str, int] = {}
    for part in text.split(","):
        side, _, number = part.partition("=")
        side = side.strip().upper()
        if side not in ("A", "B", "C") or side in counts:
            raise argparse.ArgumentTypeError(f"expected N or SIDE=N,... with sides A, B, C each at most once, not {text!r}")
        counts[side] = positive(number.strip(), most=MOST_TRIES)
    return counts


BYTE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def byte_count(text: str) -> int:
    """An argparse type: bytes, with an optional binary unit (``512M``, ``24G``, ``0``)."""
    cleaned = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = cleaned[-1:] if cleaned[-1:] in BYTE_UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)]
    try:
        value = ascii_number(number, float)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected bytes such as 0, 512M or 24G, not {text!r}") from None
    total = value * BYTE_UNITS[unit]  # 1e308G passes float's range here: past 2^63 - 1 all the same
    if not value >= 0 or "inf" in number:  # (NaN is not >= 0)
        raise argparse.ArgumentTypeError(f"bytes must be a finite number >= 0, not {text!r}")
    # 1.1G: whole bytes, rounded down; 2^63 - 1 not rounded up; below 1, 0 (1e-10000000 took 10^10000000 to build)
    exact = MAX_BYTES + 1 if total == float("inf") else int(Fraction(number) * BYTE_UNITS[unit]) if total >= 1 else 0
    if exact > MAX_BYTES:
        raise argparse.ArgumentTypeError(f"bytes must be at most 2^63 - 1 (8 EiB), not {text!r}")
    return exact


def level_count(text: str) -> int:
    """An argparse type: levels of recursion, checked at once (a huge count would lower for minutes)."""
    from .lower.options import MAX_LEVELS

    try:
        value = ascii_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of levels, not {text!r}") from None
    if not 0 <= value <= MAX_LEVELS:
        raise argparse.ArgumentTypeError(f"levels must be between 0 and {MAX_LEVELS}, not {value} (each level of a "
                                         "scheme of more than one block at least halves a dimension)")
    return value


def bench_levels(text: str) -> str:
    if text == "auto":
        return text
    try:
        return str(level_count(text))
    except argparse.ArgumentTypeError as error:
        if str(error).startswith("expected"):
            raise argparse.ArgumentTypeError(f"expected a whole number of levels, or auto, not {text!r}") from None
        raise


def listed(kind, example: str):
    """An argparse type for an option of several values (bench's -n, --levels), whose refusal of a word
    that names a scheme says where FILE goes: `bench -n 16 strassen` takes strassen for a size
    (``example``: the option with a value, for the hint)."""
    def parse(text: str):
        try:
            return kind(text)
        except argparse.ArgumentTypeError as error:
            if _names_a_scheme(text):
                raise argparse.ArgumentTypeError(f"{error} (FILE goes before options that take several values, or "
                                                 f"after --: bench {text} {example})") from None
            raise

    parse.__name__ = kind.__name__  # argparse names the type by it in some refusals
    return parse


def _names_a_scheme(text: str) -> bool:
    """Whether ``text`` is a file, a .bl name or a shipped scheme's name."""
    from .paths import algorithms_dir

    path = Path(text)
    shipped = len(path.parts) == 1 and (algorithms_dir() / f"{text}.bl").is_file()
    return path.suffix.lower() == ".bl" or path.exists() or shipped


def report_format(text: str) -> str:
    """An argparse type: the report format; an input format name points to --from."""
    if text in REPORT_FORMATS:
        return text
    hint = f"; to read a file in a catalogue format say --from {text}" if text in INPUT_FORMATS else ""
    raise argparse.ArgumentTypeError(f"the report format is text, md or json, not {text!r}{hint}")


def bl_name(name: str) -> str:
    """An argparse type: --name, a .bl name (ASCII letters, digits, _), not a keyword or a block name."""
    if problem := definition_name_problem(name):
        raise argparse.ArgumentTypeError(problem)
    return name


def per_level_schemes(text: str) -> str:
    """An argparse type: --levels-schemes, one file or shipped name per level, comma-separated (an
    empty entry had been dropped, one level fewer than written)."""
    if not all(part.strip() for part in text.split(",")):
        raise argparse.ArgumentTypeError(f"expected one file or shipped name per level, comma-separated, not {text!r}")
    return text


# --- option groups several commands share ------------------------------------------


def add_report_options(parser: argparse.ArgumentParser, dtype_help: str = "element type the report counts bytes in") -> None:
    """-n and --dtype: the size and element type the report counts bytes for; ``dtype_help``: what --dtype does
    for this command (each command's --help says only what applies to it)."""
    parser.add_argument(
        "-n", type=dimension, default=8192, metavar="N", action=Given,
        help="problem size used for workspace bytes and per-level counts in the report (default 8192)",
    )
    parser.add_argument("--dtype", choices=DTYPES, default="float64", action=Given, help=f"{dtype_help} (default float64)")


def add_lowering_options(parser: argparse.ArgumentParser) -> None:
    """How a scheme is lowered: levels, leaf, fusion, cutoff, a hybrid per level."""
    parser.add_argument("--levels", type=level_count, default=1, action=Given, metavar="L",
                        help="levels of recursion (default 1)")
    parser.add_argument(
        "--leaf", choices=LEAVES, default="cublas",
        help="leaf products: " + "; ".join(f"{name}, {kind.help}" for name, kind in LEAF_KINDS.items()) + " (default cublas)",
    )
    parser.add_argument("--no-fuse", dest="fuse", action="store_false", help="one kernel per element-wise stage instead of fusing runs of them")
    parser.add_argument("--cutoff", type=cutoff, default=1, metavar="B", help="stop recursing where a block would be smaller than B (default 1)")
    parser.add_argument(
        "--breadth", type=level_count, default=0, metavar="L",
        help="run the innermost L of the levels breadth-first: one split per operand, the leaf GEMMs, one merge (default 0)",
    )
    parser.add_argument(
        "--moduli", type=positive, default=None, metavar="N",
        help="ozaki leaves: moduli of the INT8 emulation, 1 to 20 (default: enough for 53 bits, 24 with --dtype float32)",
    )
    parser.add_argument(
        "--scaling", choices=OZAKI_SCALINGS, default=None,
        help="ozaki leaves: scale rows of A and columns of B by their largest magnitude (max, the documented bound) "
             "or their 2-norm (norm: about two bits more at k=16384 on random data) (default max)",
    )
    parser.add_argument(
        "--launch", choices=LAUNCHES, default="serial",
        help="leaf products: serial on one stream, the independent ones of a stage on concurrent streams, or "
             "breadth-first leaves as one batched GEMM (default serial)",
    )
    parser.add_argument(
        "--workspace-limit", type=byte_count, default=None, metavar="BYTES",
        help="most workspace a call may use (e.g. 0, 512M, 24G); breadth-first levels that would pass it run "
             "depth-first, and ozaki leaves that still would run in tiles of C; a call that needs more even then "
             "is refused (the compiled library returns 4000) (default: no limit)",
    )
    parser.add_argument(
        "--levels-schemes", type=per_level_schemes, default=None, metavar="A.bl,B.bl",
        help="a hybrid: level 1 runs A.bl's scheme, level 2 B.bl's, ... (sets --levels to their number)",
    )


def scheme_path(text: str) -> Path:
    """An argparse type: a scheme file, or a shipped scheme's name."""
    from .frontend.loader import find_scheme

    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name is no file; give a .bl or catalogue file, or a shipped scheme's name")
    return find_scheme(text)


# bl and the readers of bilinear.frontend.importers.FORMATS (a test keeps them equal; importing the
# readers here would cost every command their start-up time).
INPUT_FORMATS = ("bl", "fast-matmul", "plinopt", "kauers", "mathematica", "perminov", "perminov-text", "alphatensor")


def shape_text(text: str) -> str:
    """An argparse type: ``m,k,n`` (or ``mxkxn``), three whole numbers of at least 1 (kept as text for the readers)."""
    parts = comma_separated(text).split(",")
    significant = [part.lstrip("0") for part in parts]  # "" for zero
    if len(parts) != 3 or not all(part.isascii() and part.isdigit() and digits for part, digits in zip(parts, significant)):
        raise argparse.ArgumentTypeError(f"expected m,k,n (three whole numbers of at least 1), not {brief(text)!r}")
    for digits in significant:
        if len(digits) > 9:
            raise argparse.ArgumentTypeError(f"{brief(digits)} is too large (at most 999999999)")
    return text


#: How FILE is read (add_input_options): what a second file of a command cannot be given.
READING_OPTIONS = ("--from", "--shape", "--key", "--mod", "--allow-pickle")


def asks_for_reading_option(error) -> bool:
    """Whether a BilinearError's diagnostics ask for a reading option, in a message or a note (a pickled
    .npz's --allow-pickle); a missing file or a scheme valid only modulo p asks for none."""
    return any(option in text for d in error.diagnostics for text in (d.message, *d.notes) for option in READING_OPTIONS)


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """FILE and how to read it (format, shape, key, pickles, modulus)."""
    parser.add_argument(
        "file", type=scheme_path, help="a .bl file, a scheme file in a catalogue format, or a shipped scheme's name (strassen)"
    )
    add_reading_options(parser)


def add_reading_options(parser: argparse.ArgumentParser) -> None:
    """How to read the input files (format, shape, key, pickles, modulus)."""
    parser.add_argument(
        "--from", dest="input_format", default=None, choices=INPUT_FORMATS, metavar="FORMAT",
        help=f"input format: {', '.join(INPUT_FORMATS)}; detected when omitted",
    )
    parser.add_argument("--shape", type=shape_text, default=None, metavar="m,k,n",
                        help="block shape of a catalogue scheme when it cannot be inferred")
    parser.add_argument("--key", type=shape_text, default=None, metavar="m,k,n", help="which scheme of an AlphaTensor .npz archive")
    parser.add_argument(
        "--allow-pickle", action="store_true",
        help="let AlphaTensor's pickled (rectangular) entries load; this runs code stored in the file",
    )
    parser.add_argument(
        "--mod", type=modulus, default=None, metavar="P",
        help="the scheme is claimed modulo P (the integers modulo P: GF(P) when P is prime), where its file name does not say so (e.g. a flip-graph vertex)",
    )


def load_input(args, path=None, noted: bool = False):
    """The program the input options describe (a :class:`~bilinear.ir.Program`): FILE's, or ``path``'s
    read with the same options; with ``noted``, and the notes ``verify`` gives it (api.load_noted)."""
    from .api import load_noted

    loaded = load_noted(
        args.file if path is None else path, format=args.input_format, shape=args.shape, key=args.key,
        allow_pickle=args.allow_pickle, modulus=args.mod,
    )
    return loaded if noted else loaded[0]


def load_input_noting(args, path=None):
    """:func:`load_input`'s program, the notes ``verify`` gives it said on stderr (a scheme claimed
    modulo p that holds over Q, an alternative basis): a command that writes or runs it says them too."""
    from .diagnostics import render

    program, notes = load_input(args, path, noted=True)
    for note in notes:
        print(render(note), file=sys.stderr)
    return program


CHOOSE_WITH_ALGORITHM = ("export", "transform", "product", "optimize", "inplace")  # the commands that take --algorithm NAME


def note_unused_definitions(command: str, path, program, choosable: bool = True) -> None:
    """Say which of ``path``'s own definitions ``command`` leaves out, as it uses ``program``'s last
    (a file of two algorithms was compiled, benched, planned or exported by its last without a word);
    ``choosable``: whether --algorithm chooses among them (FILE's, not product's SECOND's)."""
    if unused := program.unused():
        chosen = choosable and command in CHOOSE_WITH_ALGORITHM
        another = "--algorithm NAME" if chosen else "put it last, or in a file of its own"
        print(f"bilinear {command}: note: {path} also defines {', '.join(unused)}; {command} uses its last "
              f"definition, {program.main.name} (another: {another})", file=sys.stderr)


def note_schedule_not_carried(program, source, does: str, why: str = "") -> None:
    """Say that ``program``'s main schedule is not written where a command ``does`` something to its
    algorithm ``source`` alone (transform msmes dropped the in-place schedule without a word)."""
    from .ir import Schedule

    if isinstance(program.main, Schedule) and program.main.algorithm == source.name:
        print(f"note: {program.main.name} is a schedule; {does} its algorithm {source.name} and writes no "
              f"schedule{why}", file=sys.stderr)


SCALAR_OPTIONS = ("--alpha", "--beta")


def joined_scalars(argv: list[str]) -> list[str]:
    """``--alpha -1e5`` as ``--alpha=-1e5``: argparse before Python 3.13 takes a negative number in
    scientific notation (or ``-inf``) for an option and says "expected one argument".  Only the options
    whole: a prefix (``--alph``) is no option (the parser takes none)."""
    joined, index = [], 0
    while index < len(argv):
        word = argv[index]
        if word == "--":  # the rest are positional, as they are to argparse
            return joined + argv[index:]
        following = argv[index + 1] if index + 1 < len(argv) else ""
        if word in SCALAR_OPTIONS and following.startswith("-") and _is_number(following):
            joined.append(f"{word}={following}")
            index += 2
        else:
            joined.append(word)
            index += 1
    return joined


def _is_number(text: str) -> bool:
    try:
        ascii_number(text, float)
    except ValueError:
        return False
    return True
