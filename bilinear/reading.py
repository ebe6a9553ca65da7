"""What :func:`bilinear.load` reads: the path (or a shipped scheme's name) and a catalogue file's
reading options, checked as the CLI checks its own, then the file by its format, given or detected."""

from __future__ import annotations

import operator
import os
import reprlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from .diagnostics import BilinearError, Diagnostic, brief
from .frontend import load_program
from .frontend.importers import (
    Scheme,
    comma_separated,
    detect_format,
    format_note,
    other_look,
    parse_shape,
    read_catalogue,
)
from .frontend.loader import ShippedDefinition, find_scheme
from .ir import Program, shape_too_large


def true_or_false(value: object, name: str) -> bool:
    """A flag: a bool (NumPy's too), never another truthy value such as the string "False"."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, not {reprlib.repr(value)}")
    return bool(value)


def read(
    path: Path, format: str | None, shape: str | None, key: str | None, allow_pickle: bool, modulus: int | None = None
) -> Scheme | Program:
    """A .bl file as a Program, or the scheme a catalogue file holds."""
    allow_pickle = true_or_false(allow_pickle, "allow_pickle")  # "False" is true: the gate on running a file's code opened
    shape, key, modulus = _dims_text(shape, "shape"), _dims_text(key, "key"), _whole(modulus, "modulus")
    _check_shape_option(shape)
    if format is not None:
        return _read_as(path, format, shape, key, allow_pickle, modulus)
    format = detect_format(path)
    try:
        return _read_as(path, format, shape, key, allow_pickle, modulus)
    except BilinearError as error:
        if (other := other_look(path, format)) is None or not _reads(path, other, shape, key, allow_pickle, modulus):
            raise
        first, *rest = error.diagnostics
        raise BilinearError(replace(first, notes=(*first.notes, format_note(path, other))), *rest) from None


def _reads(path: Path, format: str, *options) -> bool:
    """Whether ``format``'s reader reads the file (the look of its text alone had offered fast-matmul for
    PLinOpt text it could not read)."""
    try:
        _read_as(path, format, *options)
    except BilinearError:
        return False
    return True


def _read_as(path: Path, format: str, shape: str | None, key: str | None, allow_pickle: bool,
             modulus: int | None) -> Scheme | Program:
    if format == "bl":
        given = [option for option, value in (("--mod (modulus=)", modulus), ("--shape (shape=)", shape), ("--key (key=)", key),
                                              ("--allow-pickle (allow_pickle=)", allow_pickle or None)) if value is not None]
        if given:  # --shape and --key had been ignored without a word
            raise BilinearError(Diagnostic(f"{' and '.join(given)} {'applies' if len(given) == 1 else 'apply'} to "
                                           f"catalogue schemes, not to .bl files ({path} is one)"))
        return load_program(path)
    return read_catalogue(path, format, parse_shape(shape), key=key, allow_pickle=allow_pickle, modulus=modulus)


def _dims_text(value: object, name: str) -> str | None:
    """``shape`` or ``key`` as the readers take it, ``"m,k,n"``: a string, or three whole numbers."""
    if value is None or isinstance(value, str):
        return value
    try:
        dims = [_whole(d, name) for d in value]
    except (TypeError, ValueError):
        dims = []
    if len(dims) != 3:
        raise ValueError(f"{name} must be 'm,k,n' or three whole numbers, not {reprlib.repr(value)}")
    return ",".join(map(str, dims))


def _whole(value: object, name: str) -> int | None:
    """An int (NumPy's too), None kept; ValueError for a bool, a float or a string."""
    if value is None:
        return None
    try:
        if not isinstance(value, bool):
            return operator.index(value)
    except TypeError:
        pass
    raise ValueError(f"{name} must be a whole number, not {reprlib.repr(value)}")


def _check_shape_option(shape: str | None) -> None:
    """Refuse a --shape too large to check before any reader sizes tables by it."""
    try:
        dims = [int(part) for part in comma_separated(shape).split(",")] if shape is not None else None
    except ValueError:
        return  # the reader says what is wrong with it
    if dims is not None and len(dims) == 3 and (problem := shape_too_large(*dims)):
        raise BilinearError(Diagnostic(f"--shape (shape=): {problem}"))


def as_path(value: object) -> Path:
    """A file name as a Path, or the shipped scheme a bare name names (as the CLI reads FILE, whose
    ShippedDefinition stays one); ValueError for anything else (None, numbers, bytes, lists)."""
    if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
        path = Path(value)
        if isinstance(value, str) and "\n" in value and not os.path.lexists(value):  # a scheme's text, not a name
            raise ValueError(f"expected a path to a .bl or catalogue file, not text of several lines "
                             f"({brief(repr(str(value)))}); for a scheme's text, "
                             "bilinear.frontend.program_from_text(text) gives a program to pass instead")
        if "\x00" in str(path):  # pathlib's stat would raise a bare "embedded null byte"
            raise ValueError(f"expected a path to a .bl or catalogue file, not {str(value)!r}: "
                             "a file name holds no NUL character")
        if os.fspath(value) != "":  # (Path("") is ".", a directory: the reader would say so of a name never given)
            return value if isinstance(value, ShippedDefinition) else find_scheme(os.fspath(value))  # ./ kept
        raise ValueError(f"expected a path to a .bl or catalogue file, not {str(value)!r}")
    # reprlib: a large object (a loaded Algorithm) is named, not printed whole
    raise ValueError(f"expected a path to a .bl or catalogue file, not {type(value).__name__} {reprlib.repr(value)}")
