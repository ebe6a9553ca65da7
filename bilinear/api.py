"""The Python API: load and verify schemes."""

from __future__ import annotations

from pathlib import Path

from .frontend import load_program
from .frontend.importers import detect_format, parse_shape, read_catalogue
from .ir import Program
from .verify import Report, verify_program


def load(path: str | Path, format: str | None = None, shape: str | None = None) -> Program:
    """Load a .bl file (with what it uses) or a catalogue scheme file.

    Args:
        path: the file.
        format: ``"bl"`` or a catalogue format such as ``"fast-matmul"``;
            detected from the file when omitted.
        shape: ``"m,k,n"`` for catalogue files whose shape cannot be inferred.

    Raises:
        BilinearError: with located diagnostics when the file is malformed.
    """
    path = Path(path)
    format = format or detect_format(path)
    if format == "bl":
        return load_program(path)
    algorithm = read_catalogue(path, format, parse_shape(shape))
    return Program(str(path), (algorithm,), (), (algorithm.name,))


def verify(path_or_program: str | Path | Program) -> Report:
    """Verify every definition of a file (or loaded program); see :class:`Report`."""
    program = path_or_program if isinstance(path_or_program, Program) else load(path_or_program)
    return verify_program(program)
