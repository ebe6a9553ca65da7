"""Files to a checked :class:`~bilinear.ir.Program`: reading, ``use``, checking.

``use "file.bl"`` is resolved relative to the file that says it, then in the
shipped ``algorithms/`` folder.  A use cycle, a missing file, a binary file
and a name defined in two files are errors located at the ``use`` or the
definition.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from dataclasses import replace
from pathlib import Path

from ..diagnostics import SOURCES, BilinearError, Diagnostic, in_column_order
from ..ir import Algorithm, Program, Schedule, Span
from ..paths import algorithms_dir
from .check import build
from .encoding import lines_ended_by_lf, marked_encoding, marked_text
from .parser import parse_text
from .raw import RawAlgorithm, RawSchedule, Use
from .syntax_errors import DEFINITION_KEYWORDS, misspelt_keyword

# The largest source file read: far above any real scheme (a .bl file of 10^5 products is
# a few MiB), so /dev/zero or a stray disk image cannot exhaust memory.
MAX_SOURCE_BYTES = 64 << 20
BL_START = re.compile(rf"^({'|'.join(DEFINITION_KEYWORDS)})\b")  # what a .bl file's first statement begins with


def check_regular(path: Path, span: Span | None = None, wanted: str = "a .bl file",
                  scheme: bool = True) -> os.stat_result:
    """The file's status, or a located error where it is not a regular file (``wanted``, said of a
    directory): opening a FIFO would wait for a writer for ever, and a directory or device is no scheme.
    A missing ``scheme`` file's error says which shipped schemes its name is close to."""
    try:
        info = path.stat()
    except OSError as error:
        notes = _not_found_notes(path) if scheme and isinstance(error, FileNotFoundError) else ()
        raise BilinearError(Diagnostic(f"cannot read {path}: {error.strerror or error}", span, notes=notes)) from None
    if stat.S_ISDIR(info.st_mode):
        raise BilinearError(Diagnostic(f"{path} is a directory, not {wanted}", span))
    if not stat.S_ISREG(info.st_mode):
        raise BilinearError(Diagnostic(f"{path} is not a regular file (a device, FIFO or socket); it is not read", span))
    return info


def _not_found_notes(path: Path) -> tuple[str, ...]:
    """What a bare name that is no file was looked for as (a shipped scheme, found by :func:`find_scheme`),
    with the names it is close to; ``-`` is not standard input."""
    if str(path) == "-":
        return ("- is no file: a scheme is read from a file, not from standard input",)
    if path.parent.name == "algorithms" and path.suffix == ".bl" and (algorithms_dir() / path.name).is_file():
        return (f"no file {path} here; the shipped {path.stem} is read by its name alone, from any folder: {path.stem}",)
    if len(path.parts) != 1 or path.suffix:  # (a file name, x.bl, is not taken for a shipped scheme's)
        return ()
    shipped = sorted(scheme.stem for scheme in algorithms_dir().glob("*.bl"))  # lower-case: STRASSEN means strassen
    close = difflib.get_close_matches(path.name.lower(), shipped, n=3)
    meant = f": did you mean {' or '.join(close)}?" if close else ""
    return (f"no file {path} here, and no shipped scheme of that name{meant} (`bilinear list` shows the shipped ones)",)


def read_source(path: Path, span: Span | None = None, text_of: str = ".bl text", scheme: bool = True) -> str:
    """The UTF-8 text of a source file (a regular file of at most MAX_SOURCE_BYTES), or a
    located error saying why not (a binary file is not ``text_of``; a missing file that is no
    ``scheme`` is not looked for among the shipped ones)."""
    info = check_regular(path, span, wanted=f"a {text_of.removesuffix(' text')} file" if text_of.endswith(" text") else text_of,
                         scheme=scheme)
    try:
        if info.st_size > MAX_SOURCE_BYTES:
            raise BilinearError(Diagnostic(f"{path} is {info.st_size} bytes; source files are limited to {MAX_SOURCE_BYTES >> 20} MiB", span))
        with path.open("rb") as stream:
            data = stream.read(MAX_SOURCE_BYTES + 1)
    except OSError as error:
        raise BilinearError(Diagnostic(f"cannot read {path}: {error.strerror or error}", span)) from None
    if len(data) > MAX_SOURCE_BYTES:
        raise BilinearError(Diagnostic(f"{path} grew past {MAX_SOURCE_BYTES >> 20} MiB while being read", span))
    if data.startswith(b"PK\x03\x04"):  # where AlphaTensor's factors are, under another name
        raise BilinearError(Diagnostic(f"{path} is a zip archive (an AlphaTensor .npz?), not {text_of}",
                                       _offset_span(str(path), data, 0),
                                       notes=("to read it as AlphaTensor factors, give --from alphatensor (format='alphatensor')",)))
    marked = marked_text(data)
    if marked is not None:
        SOURCES.add(str(path), marked)
        return marked
    if b"\0" in data:
        # a file that begins as UTF-16 does (a stray byte after PowerShell's text) is said to
        encoding = marked_encoding(data)
        note = (f"it begins with a {encoding} byte order mark, but is not {encoding} text",) if encoding else ()
        raise BilinearError(Diagnostic(f"{path} is a binary file, not {text_of}", _offset_span(str(path), data, data.index(b"\0")),
                                       notes=note))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        SOURCES.add(str(path), lines_ended_by_lf(data.decode("utf-8", errors="replace")))  # so the message can quote the line
        raise BilinearError(
            Diagnostic(f"{path} is not UTF-8 text (byte 0x{data[error.start]:02x})", _offset_span(str(path), data, error.start))
        ) from None
    text = lines_ended_by_lf(text.removeprefix("\ufeff"))  # a byte order mark, as some editors write: not part of the text
    SOURCES.add(str(path), text)
    return text


def source_lines(text: str) -> list[str]:
    """A source's lines as the parser and the quoted lines count them: at LFs only (read_source has made
    every line ending one).  str.splitlines also breaks at form feeds, \\v, \\x1c-\\x1e, \\x85, U+2028 and
    U+2029: one in a catalogue file's comment moved every later error a line down."""
    return text.split("\n")


def _offset_span(path: str, data: bytes, offset: int) -> Span:
    """The line and the column, in characters, of a byte offset (lines ended as lines_ended_by_lf ends them)."""
    # utf-8-sig: a byte order mark, which the parser skips, takes no column
    before = lines_ended_by_lf(data[:offset].decode("utf-8-sig", errors="replace"))
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    return Span(path, line, column, line, column + 1)


def _resolve_use(use: Use, including: Path) -> Path:
    if not use.path.strip():  # it had resolved to the including file's folder: ". is a directory"
        raise BilinearError(Diagnostic('`use` names no file: give it a .bl file\'s name, as in use "strassen.bl"', use.span))
    if not use.path.lower().endswith(".bl"):  # as a file named on the command line is told
        raise BilinearError(Diagnostic(f"`use` takes .bl files, not {use.path!r}", use.span))
    local = (including.parent / use.path)
    if os.path.lexists(local):  # a broken or looping link too: read_source says which
        return local
    if os.path.isabs(use.path):
        raise BilinearError(Diagnostic(f"cannot find {use.path!r}", use.span))
    # The shipped folder answers for what lies in it: "../tests/..." had read the repository's own files.
    shipped = Path(os.path.normpath(algorithms_dir() / use.path))
    inside = shipped.is_relative_to(algorithms_dir())
    if inside and os.path.exists(shipped):
        return shipped
    also = " and in the shipped algorithms" if inside else ""
    raise BilinearError(Diagnostic(f"cannot find {use.path!r}: looked in {including.parent}{also}", use.span))


class _Loader:
    def __init__(self) -> None:
        self.raw: list = []  # raw definitions in dependency order
        self.done: set[Path] = set()
        self.files: list[Path] = []  # resolved, each once, each after the files it uses

    def visit(self, path: Path, stack: tuple[tuple[Path, Span | None], ...], span: Span | None) -> tuple[str, ...]:
        text = read_source(path, span)  # first: it reports unreadable files and symlink loops
        try:
            key = path.resolve()
        except (OSError, RuntimeError) as error:  # a loop that appeared since (RuntimeError before 3.13)
            raise BilinearError(Diagnostic(f"cannot read {path}: {error}", span)) from None
        chain = [p for p, _ in stack]
        if key in chain:
            names = " -> ".join(p.name for p in chain[chain.index(key):]) + f" -> {path.name}"
            raise BilinearError(Diagnostic(f"use cycle: {names}", span))
        if len(chain) >= MAX_USE_DEPTH:  # each level recurses here and in the parser: Python's stack ends near 950
            raise BilinearError(Diagnostic(f"`use` nests more than {MAX_USE_DEPTH} files deep, from {chain[0].name}", span))
        if span is not None and not _looks_like_bl(text):
            # A used file is named by a .bl file, perhaps not written by the person running
            # bilinear: say where the `use` is, but never quote the other file's lines.
            raise BilinearError(Diagnostic(f"{path} is not .bl text (it does not begin with algorithm, table, schedule or use)", span))
        uses, definitions = parse_text(text, str(path))
        if key not in self.done:
            for use in uses:
                self.visit(_resolve_use(use, path), stack + ((key, use.span),), use.span)
            self.done.add(key)
            self.files.append(key)
            self.raw.extend(definitions)
        return tuple(d.name for d in definitions)


#: How many files deep `use` may nest (far beyond any real scheme's one or two).
MAX_USE_DEPTH = 200


def _looks_like_bl(text: str) -> bool:
    """Whether the first line that is neither blank nor a comment starts a .bl definition, or with
    a misspelt keyword (`algoritm`: the parser then says so where it stands)."""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            if BL_START.match(stripped):
                return True
            return misspelt_keyword(stripped) is not None  # a near keyword before a header's shape (never a foreign file's line)
    return True  # empty or only comments: the loader reports that it defines nothing


def load_program(path: str | Path) -> Program:
    """Read, parse and check a .bl file and everything it uses.

    Raises:
        BilinearError: with every located problem found.
    """
    path = Path(path)
    loader = _Loader()
    own = loader.visit(path, (), None)
    # what the manifest names beside the source: the definitions read through them are built too
    return replace(_assemble(str(path), loader.raw, own), uses=tuple(str(file) for file in loader.files[:-1]))


def program_from_text(text: str, path: str = "<text>") -> Program:
    """A program from text that uses no other files (for tests and the API)."""
    text = lines_ended_by_lf(text)  # as read_source reads a file
    SOURCES.add(path, text)
    uses, definitions = parse_text(text, path)
    if uses:
        raise BilinearError(Diagnostic("`use` needs a file on disk; load the file instead", uses[0].span))
    return _assemble(path, list(definitions), tuple(d.name for d in definitions))


def _assemble(path: str, raw_definitions: list, own: tuple[str, ...]) -> Program:
    algorithms: dict[str, Algorithm] = {}
    schedules: dict[str, Schedule] = {}
    spans: dict[str, Span] = {}
    errors: list[Diagnostic] = []
    unique = []
    for raw in raw_definitions:
        if raw.name in spans:
            errors.append(Diagnostic(f"{raw.name} is defined twice", raw.span, notes=(f"first defined at {spans[raw.name]}",)))
            continue
        spans[raw.name] = raw.span
        unique.append(raw)
    # Algorithms first, so a schedule may come before the algorithm it is for.
    schedules_for = {raw.name: raw.algorithm for raw in unique if isinstance(raw, RawSchedule)}
    broken: set[str] = set()  # algorithms whose errors are said: their schedules are not told they are undefined
    for raw in sorted(unique, key=lambda raw: isinstance(raw, RawSchedule)):
        if isinstance(raw, RawSchedule) and raw.algorithm in broken:
            errors.append(Diagnostic(f"schedule {raw.name} is for {raw.algorithm}, which has errors of its own; the "
                                     "schedule is checked once they are fixed", raw.span))
            continue
        try:
            built = build(raw, algorithms, schedules_for)
        except BilinearError as error:
            errors.extend(error.diagnostics)
            broken.add(raw.name)
            continue
        except RecursionError:  # name resolution recurses once per level of named sums
            kind = "algorithm" if isinstance(raw, RawAlgorithm) else "definition"
            message = f"{kind} {raw.name} nests its named sums too deeply to check (a chain of hundreds of sums)"
            errors.append(Diagnostic(message, raw.span))
            broken.add(raw.name)
            continue
        (algorithms if isinstance(built, Algorithm) else schedules)[built.name] = built
    if errors:  # each definition's are in order already; two definitions may share a line
        raise BilinearError(*in_column_order(errors))
    if not own:
        raise BilinearError(Diagnostic("the file defines no algorithm, table or schedule", Span(path, 1, 1, 1, 2)))
    return Program(path, tuple(algorithms.values()), tuple(schedules.values()), own)


def find_scheme(text: str) -> Path:
    """A path as given, or the shipped scheme it names: ``strassen`` is ``algorithms/strassen.bl``,
    and a name defined in a shipped file (``msmes``, ``strassen_t``) is that file.

    A file that exists, or a path with a folder in it, is taken as it is (a folder named like a
    shipped scheme, as ``compile strassen -o strassen`` makes, is not).
    """
    path = Path(text)
    # os.path's checks, not Path's: a name too long, or a folder one may not enter, is not a file
    # here (Path.is_file raised, in an argparse type: a traceback); reading it says why
    if os.path.isfile(path):
        return path
    if any(sep and sep in text for sep in (os.sep, os.altsep)):  # (the text: Path drops a leading ./)
        # ./strassen as Path is strassen, which the next lookup (bilinear.load's) took for the shipped one
        return path if len(path.parts) != 1 else path.absolute()
    for shipped_file in (algorithms_dir() / text, algorithms_dir() / f"{text}.bl"):
        if os.path.isfile(shipped_file):
            return shipped_file
    if path.suffix:
        return path
    for candidate in sorted(algorithms_dir().glob("*.bl")):
        _, definitions = parse_text(candidate.read_text(encoding="utf-8"), str(candidate))
        if any(definition.name == text for definition in definitions):
            if definitions[-1].name == text:  # the file's last definition: what it runs
                return candidate
            found = ShippedDefinition(candidate)
            found.definition = text
            return found
    return path


class ShippedDefinition(type(Path())):  # type: ignore[misc] - Path's concrete class (PosixPath, WindowsPath)
    """A shipped file found by the name of a definition that is not its last (``strassen_x_strassen``
    in msmes2.bl): loading it gives the program with that definition as its main, as the name asks
    (the file's last, msmes2, had run instead, without a word).  A path derived from it (``resolve()``)
    keeps the class but not the name: None, the file as it is.  Two of one file naming different
    definitions are different inputs, and compare so (bench had timed one of them, twice listed)."""

    definition: str | None = None

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and self.definition == getattr(other, "definition", None)

    def __hash__(self) -> int:
        return hash((super().__hash__(), self.definition))
