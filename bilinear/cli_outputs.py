"""The argparse types of what commands write: -o files and folders, --json, --plot, a library's
name (split from cli_args, whose types read the inputs and options)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from .diagnostics import BilinearError, Diagnostic
from .output import check_target


def output_path(text: str) -> Path:
    """An argparse type: the file or folder -o names (an empty name had meant the working folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file or folder name, not {text!r}")
    if text == "-":  # it wrote a file named "-"
        raise argparse.ArgumentTypeError("'-' names no file here: give a file name (import, transform, product "
                                         "and optimize write .bl to standard output when -o is left out)")
    if text.endswith(("/", os.sep)) and not Path(text).is_dir():  # Path drops the slash: it became a file's name
        there = f"{Path(text)} is not a folder" if Path(text).exists() else "there is none"
        raise argparse.ArgumentTypeError(f"{text} names a folder (it ends with /), and {there}")
    return Path(text)


def export_output(text: str) -> str:
    """An argparse type: export's -o, as given. Whether a name ending with / may name a folder waits for --to
    (:func:`export_output_path`): "and there is none" had suggested that making it would do for every format."""
    if not text.endswith(("/", os.sep)):
        output_path(text)  # an empty name or "-"
    return text


def export_output_path(given: str, to: str) -> Path:
    """Export's -o for ``to``: PLinOpt's three files go into a folder that exists or after a stem; the other
    formats' one file is the file -o names, not a folder (ValueError, said as a usage error, for a name ending
    with /; BilinearError for a folder that is there)."""
    folder = given.rstrip("/" + os.sep) or given
    if to != "plinopt" and (given.endswith(("/", os.sep)) or Path(given).is_dir()):
        message = (f"-o {given}: export --to {to} writes one file, and {folder} is a folder (or names one, ending "
                   f"with /): name the file ({folder}/NAME{'.npz' if to == 'alphatensor' else ''})")
        if not given.endswith(("/", os.sep)):  # what is on disk, as an output that exists: status 1
            raise BilinearError(Diagnostic(message, None))
        raise ValueError(message)
    try:
        return output_path(given)
    except argparse.ArgumentTypeError as error:
        raise ValueError(str(error)) from None


def results_path(text: str) -> Path:
    """An argparse type: the file --json writes ('-': standard output)."""
    if not text.strip():  # it had become ".", "exists and is not a regular file"
        raise argparse.ArgumentTypeError(f"expected a file name, or - for standard output, not {text!r}")
    return Path(text)


def plot_path(text: str) -> Path:
    """An argparse type: the image --plot writes (it had written "-" as a file "-.png")."""
    if text == "-":
        raise argparse.ArgumentTypeError("'-' names no file here: --plot writes an image (FILE.png, .pdf, .svg)")
    return output_path(text)


MOST_NAME_CHARACTERS = 64  # a library's name: its files' and C functions' (<name>_dgemm) start

# Headers the library and its caller include, themselves or through CUDA's and the C library's: <name>.h,
# found first beside the .cu (and with the caller's -I.), takes one's place (--name cuda_runtime broke the
# header's own nvcc line: "fabsf is undefined"; --name cublas_v2 the caller's).
SYSTEM_HEADERS = frozenset((
    "cuda_runtime cuda_runtime_api cuda cublas_v2 cublas_api cublas cuComplex driver_types vector_types host_defines "
    "host_config builtin_types library_types device_types surface_types texture_types channel_descriptor "
    "driver_functions vector_functions cuda_device_runtime_api cuda_fp16 cuda_bf16 math_functions common_functions "
    "device_functions math_constants crt assert ctype errno float inttypes limits locale math setjmp signal stdarg "
    "stdbool stddef stdint stdio stdlib string strings time wchar wctype features alloca endian pthread sched unistd"
).split())


def library_name_problem(name: str) -> str | None:
    """Why a library may not be named ``name`` (its files and C functions start with it), or None."""
    if name in SYSTEM_HEADERS:
        return f"its header {name}.h would hide the system header <{name}.h> the library and its callers include"
    # a default name whose NAME.cu fits (a longer one is refused as the .cu is written); --name takes 64 characters
    if len(f"{name}.cu".encode()) <= 255 < len(f"lib{name}.so".encode()):
        return f"lib{name}.so, the header's build line's library, would be longer than a file name may be (255 bytes)"
    return None


def library_identifier(text: str) -> str:
    """An argparse type: a library's name, which starts its C functions and files (<name>_dgemm)."""
    if not re.fullmatch(rf"[A-Za-z][A-Za-z0-9_]{{0,{MOST_NAME_CHARACTERS - 1}}}", text):
        raise argparse.ArgumentTypeError(f"{text!r}: a library's name starts its C functions ({text}_dgemm): a letter, "
                                         f"then letters, digits or _, at most {MOST_NAME_CHARACTERS} characters")
    if problem := library_name_problem(text):
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}; choose another")
    return text


def bl_output_path(text: str) -> Path:
    """An argparse type: the file ``-o`` names for import, transform, product and optimize, which write
    .bl text. Another suffix promised a format the file would not be in (out.npz held .bl text); a name
    without one is taken as given (it reads back as .bl), so /dev/null and folders keep their refusals."""
    if text.endswith(("/", os.sep)):  # "and there is none" had suggested that a folder would do
        raise argparse.ArgumentTypeError(f"{text} names a folder (it ends with /), and .bl text goes into one file: "
                                         f"name it ({text}NAME.bl)")
    path = output_path(text)
    if path.suffix and path.suffix.lower() != ".bl":
        raise argparse.ArgumentTypeError(
            f"{text}: the output is .bl text, so -o names a .bl file, not a {path.suffix} file; {_other_format(path, text)}")
    return path


#: The suffixes `bilinear export` writes, with its --to and the format's owner (fast-matmul's have none).
EXPORT_SUFFIXES = {".npz": ("alphatensor", "AlphaTensor"), ".sms": ("plinopt", "PLinOpt")}


def _other_format(path: Path, text: str) -> str:
    """What to do instead of writing .bl text to ``path``: the export of the format its suffix names,
    or a .bl name (export writes no .json or .txt)."""
    if exported := EXPORT_SUFFIXES.get(path.suffix.lower()):
        return f"`bilinear export FILE --to {exported[0]} -o {text}` writes {exported[1]}'s format"
    stem = path.with_suffix("")
    named = stem if stem.suffix.lower() == ".bl" else stem.with_suffix(stem.suffix + ".bl")
    return (f"name it {named} (`bilinear export` writes the catalogue formats: fast-matmul's files have no suffix, "
            "PLinOpt's end .sms, AlphaTensor's .npz)")


def add_bl_output_options(parser: argparse.ArgumentParser) -> None:
    """-o FILE.bl and --force, for the commands that write .bl text (to standard output without -o)."""
    parser.add_argument("-o", "--output", type=bl_output_path, default=None, metavar="FILE.bl", help="write here (default: stdout)")
    parser.add_argument("--force", action="store_true", help="replace FILE.bl if it exists")


def output_folder(text: str) -> Path:
    """An argparse type: the folder ``compile -o`` writes into (made when missing, so ``DIR/`` names a
    new one too)."""
    return output_path(text.rstrip("/" + os.sep) or text)


def check_bl_output(args, *inputs: Path) -> None:
    """``-o`` of import, transform, product and optimize, checked before any work (optimizing can take
    minutes): no input, link or existing file unless ``--force`` (--name and -o's suffix are argparse's)."""
    if args.output is not None:
        check_target(args.output, args.force, protect=inputs)
    elif args.force:  # no option is ignored without a word
        print("note: --force replaces an -o file that exists; without -o the .bl text goes to standard output",
              file=sys.stderr)
