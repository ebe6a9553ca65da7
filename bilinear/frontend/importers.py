"""Readers for catalogue scheme files (see ``../shared/schemes/README.md``), one module per format.

:data:`READERS` is the one table: a format's name, the file suffixes it
owns, a test that recognises its text, and its reader (a module in
:mod:`bilinear.frontend.formats`).  A new importer is one module and one
entry here.  :func:`detect_format` picks a reader from the suffix, else from
the content, and never guesses: a file no test recognises, or that several
recognise, is an error that asks for ``--from``.  :func:`read_catalogue`
reads one scheme, which is an exact :class:`~bilinear.ir.Algorithm`, an
:class:`~bilinear.frontend.formats.plinopt.AlternativeBasis` (an exact
algorithm published in changed bases), or, for schemes that are not exact
over Q, an :class:`~bilinear.verify.rings.ApproximateScheme`,
:class:`~bilinear.verify.rings.ModularScheme` or
:class:`~bilinear.verify.rings.ComplexScheme`; malformed input is a
:class:`~bilinear.diagnostics.BilinearError` located at file:line:col.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..diagnostics import BilinearError, Diagnostic
from ..ir import Algorithm, Shape
from ..verify.ring_modular import GIVEN_WITH_MOD
from ..verify.rings import ApproximateScheme, ComplexScheme, ModularScheme
from .formats.alphatensor import ZIP_MAGIC, read_alphatensor
from .formats.common import comma_separated, fail, identifier, infer_shape, line_span, parse_shape, unresolved, whole_file
from .formats.fast_matmul import first_unlike_row, looks_like_fast_matmul, read_fast_matmul
from .formats.kauers import looks_like_kauers, read_kauers
from .formats.mathematica import looks_like_mathematica, read_mathematica
from .formats.perminov import looks_like_perminov, looks_like_perminov_text, read_perminov, read_perminov_text
from .formats.plinopt import AlternativeBasis, plinopt_files, read_plinopt
from .encoding import lenient_text
from .loader import BL_START, check_regular, read_source, source_lines

Scheme = Algorithm | AlternativeBasis | ApproximateScheme | ModularScheme | ComplexScheme


@dataclass(frozen=True)
class Reader:
    """One catalogue format: what it is called, which suffixes are its own, how to spot it, how to read it."""

    name: str
    suffixes: tuple[str, ...]
    looks_like: Callable[[str], bool] | None  # on the text of a file with no known suffix
    read: Callable[..., Scheme]  # (path, shape, key, allow_pickle)
    source: str


# what a catalogue folder is not (a folder had been "not a .bl file" with --from plinopt given)
ONE_SCHEME_FILE = "one scheme file (of PLinOpt's, one of NAME_L, NAME_R and NAME_P)"


def _plain(reader: Callable[[Path, Shape | None], Scheme]) -> Callable[..., Scheme]:
    def read(path: Path, shape: Shape | None, key: str | None, allow_pickle: bool) -> Scheme:
        if key is not None:
            fail(f"--key (key=) picks a scheme inside an AlphaTensor .npz archive; {path.name} holds one scheme", None)
        return reader(path, shape)

    return read


READERS: tuple[Reader, ...] = (
    Reader("fast-matmul", (), looks_like_fast_matmul, _plain(read_fast_matmul), "arbenson/fast-matmul codegen/algorithms"),
    Reader("plinopt", (".sms", ".slp"), None, _plain(read_plinopt), "jgdumas/plinopt data"),
    Reader("kauers", (".exp",), looks_like_kauers, _plain(read_kauers), "mkauers/matrix-multiplication, jakobmoosbauer/flips"),
    Reader("mathematica", (".m",), looks_like_mathematica, _plain(read_mathematica), "Kauers', flips' and Perminov's .m lists"),
    Reader("perminov", (".json",), looks_like_perminov, _plain(read_perminov), "dronperminov/FastMatrixMultiplication schemes"),
    Reader("perminov-text", (".txt",), looks_like_perminov_text, _plain(read_perminov_text), "dronperminov/FastMatrixMultiplication schemes"),
    Reader("alphatensor", (".npz",), None, read_alphatensor, "google-deepmind/alphatensor, AlphaEvolve results"),
)
FORMATS = tuple(reader.name for reader in READERS)
_BY_NAME = {reader.name: reader for reader in READERS}


def _looks_like_bl(text: str) -> bool:
    """Whether the first statement of decoded text (its one byte-order mark gone, as the loader takes it
    off) starts a .bl definition (`algorithm` followed by a tab counts, as the loader counts it)."""
    for line in source_lines(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return bool(BL_START.match(stripped))
    return False


def _beginning(path: Path) -> str:
    """The first 64 KiB of a text file (enough to see its first statement), or "" when unreadable."""
    try:
        with path.open("rb") as stream:
            return lenient_text(stream.read(1 << 16))  # decoded as the reader decodes it
    except OSError:
        return ""  # the reader reports why the file cannot be read


def _holds_plinopt_parts(path: Path) -> bool:
    """Whether ``path`` is a folder with PLinOpt's parts in it (NAME_L.sms ...): where the hint that one
    of them is the file to give helps (any other folder had been said to want one)."""
    try:
        return path.is_dir() and any(re.search(r"_[LRP]\.sms$", entry.name, re.IGNORECASE) for entry in path.iterdir())
    except OSError:  # an unreadable folder: no hint
        return False


def detect_format(path: Path) -> str:
    """``'bl'`` or the catalogue format a file is in: by its suffix, else by what its text looks like.

    Raises:
        BilinearError: when the file cannot be read, or its format cannot be told for sure.
    """
    suffix = path.suffix.lower()
    if suffix == ".bl":
        return "bl"
    # before anything opens it: a FIFO would wait for a writer for ever
    check_regular(path, wanted=ONE_SCHEME_FILE if _holds_plinopt_parts(path) else "one scheme file")
    owners = _suffix_owners(suffix)
    if owners and owners[0] != "alphatensor" and _looks_like_bl(_beginning(path)):  # a .bl file saved as .txt
        raise BilinearError(Diagnostic(
            f"{path.name} could be bl or {owners[0]} (its suffix says {owners[0]}, its text reads as .bl); "
            f"give the format with --from (format=): bl, {', '.join(FORMATS)}", None))
    if owners:
        return owners[0]
    try:
        with path.open("rb") as stream:
            if stream.read(4) == ZIP_MAGIC:
                return "alphatensor"
    except OSError:
        pass  # read_source below reports why the file cannot be read
    known = "bl, " + ", ".join(FORMATS)
    # no suffix or --from says .bl: "not .bl text" would name one format of many
    text = read_source(path, text_of=f"a scheme in a format bilinear reads ({known}: text, or a zip archive for alphatensor)")
    if not text.strip():  # every format would refuse it, each its own way: --from would not help
        raise BilinearError(Diagnostic(f"{path.name} is empty: it holds no scheme in any format", None))
    matches = _looks_like(text)
    if not matches:
        if (line := first_unlike_row(text)) is not None:
            raise BilinearError(Diagnostic(
                f"cannot tell which format {path.name} is in: its rows read as fast-matmul but for line {line} "
                f"(--from fast-matmul says what is wrong there); give it with --from (format=): {known}",
                line_span(path, line, source_lines(text)[line - 1])))
        raise BilinearError(
            Diagnostic(f"cannot tell which format {path.name} is in; give it with --from (format=): {known}", None)
        )
    if len(matches) > 1:
        raise BilinearError(
            Diagnostic(f"{path.name} could be {' or '.join(matches)}; give the format with --from (format=): {known}", None)
        )
    return matches[0]


def _suffix_owners(suffix: str) -> list[str]:
    """The catalogue formats whose files have this (lower-case) suffix."""
    return [reader.name for reader in READERS if suffix in reader.suffixes]


def other_look(path: Path, format: str) -> str | None:
    """The format a file's text reads as, where :func:`detect_format` chose ``format`` (by its suffix)
    and the text does not look like that one too."""
    looks = reads_as(path)
    if format in looks or not looks:  # (every Perminov text looks like fast-matmul too: its own reader's error stands)
        return None
    return looks[0]


def format_note(path: Path, format: str) -> str:
    """The note that offers ``format`` for a file read as another."""
    return f"{path.name}'s text reads as {format}: give --from {format} (format={format!r})"


def _looks_like(text: str) -> list[str]:
    """The formats whose look ``text`` has (bl first)."""
    return (["bl"] if _looks_like_bl(text) else []) + [r.name for r in READERS if r.looks_like and r.looks_like(text)]


def reads_as(path: Path) -> list[str]:
    """The formats whose look a file's text has, or none where it is no readable text."""
    try:
        return _looks_like(read_source(path))
    except BilinearError:
        return []


def scheme_files(path: Path, format: str | None = None, shape: Shape | None = None) -> tuple[Path, ...]:
    """The files a catalogue scheme is read from, ``path`` first: PLinOpt's come in parts
    (:func:`~bilinear.frontend.formats.plinopt.plinopt_files`), every other format's in one file."""
    if (format or detect_format(path)) == "plinopt":
        return plinopt_files(path, shape)
    return (path,)


def read_catalogue(
    path: Path,
    format: str | None = None,
    shape: Shape | None = None,
    *,
    key: str | None = None,
    allow_pickle: bool = False,
    modulus: int | None = None,
) -> Scheme:
    """Read one scheme from a catalogue file.

    Args:
        path: the file (for plinopt, any of the ``_L``/``_R``/``_P`` files).
        format: one of :data:`FORMATS`; detected when omitted.
        shape: the block shape, where the file does not say it.
        key: which scheme of an AlphaTensor archive (``"3,3,3"``).
        allow_pickle: let AlphaTensor's pickled (rectangular) entries load;
            this runs code stored in the file, so only for trusted files.
        modulus: p for a scheme claimed only modulo p whose file does not
            say so (a flip-graph vertex over GF(2)); its integer (or
            p-invertible rational) coefficients are then checked in GF(p).

    Returns:
        An exact Algorithm or AlternativeBasis, or an ApproximateScheme,
        ModularScheme or ComplexScheme for schemes that are exact only in a
        limit, modulo p or over Q(i).

    Raises:
        BilinearError: located at the malformed line, entry or option.
    """
    path = Path(path)
    if format is None:
        format = detect_format(path)  # it checks the file is a regular one first
    else:
        # before a reader opens it: a FIFO would wait for a writer for ever
        # (PLinOpt's alone come in parts; a format may be anything here, a list too: refused below)
        check_regular(path, wanted=ONE_SCHEME_FILE if format == "plinopt" else "one scheme file")
    if format == "bl":
        fail(f"{path.name} is a .bl file; load it with bilinear.load, not as a catalogue scheme", None)
    if not isinstance(format, str) or format not in _BY_NAME:
        fail(f"unknown input format {reprlib.repr(format)}; known: bl, {', '.join(FORMATS)}", None)
    if key is not None and format != "alphatensor":
        fail(f"--key (key=) picks a scheme inside an AlphaTensor .npz archive; {path.name} is a {format} file, which "
             "holds one scheme", None)  # named: bench reads several files under one --key
    if allow_pickle and format != "alphatensor":  # it had been accepted without a word
        fail(f"--allow-pickle (allow_pickle=) lets an AlphaTensor .npz archive's pickled entries load; {path.name} is a "
             f"{format} file, which has none", None)
    if modulus is not None and modulus < 2:
        fail(f"--mod (modulus=) must be a modulus of at least 2, not {modulus}", None)
    try:
        scheme = _BY_NAME[format].read(path, shape, key, allow_pickle)
    except ValueError as error:  # the IR's own checks (a zero factor) on what a reader built
        fail(f"{path.name}: {error}", whole_file(path))
    inner = getattr(scheme, "algorithm", scheme)
    if isinstance(inner, Algorithm) and not inner.tabular:  # a table's names come from its shape
        problem = unresolved(inner)
        if problem:
            fail(f"{path.name}: algorithm {inner.name} {problem}", whole_file(path))
    if modulus is None:
        return scheme
    if isinstance(scheme, AlternativeBasis):
        scheme = scheme.algorithm
    if isinstance(scheme, ModularScheme):
        if scheme.modulus != modulus:
            fail(f"{path.name} is a scheme modulo {scheme.modulus}, not modulo {modulus} as --mod says", None)
        # the user's claim too, not the file's alone: a scheme with no value modulo p is then refused
        return replace(scheme, reason=f"{GIVEN_WITH_MOD} {modulus}" + (f"; {scheme.reason}" if scheme.reason else ""))
    if not isinstance(scheme, Algorithm):
        fail(f"--mod {modulus} (modulus={modulus}) applies to schemes with rational coefficients; {scheme.not_exact_because}", None)
    return ModularScheme(scheme, modulus, f"{GIVEN_WITH_MOD} {modulus}")


__all__ = [
    "FORMATS",
    "READERS",
    "AlternativeBasis",
    "Scheme",
    "comma_separated",
    "detect_format",
    "identifier",
    "infer_shape",
    "parse_shape",
    "read_catalogue",
]
