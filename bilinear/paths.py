"""Where the shipped ``templates/`` and ``algorithms/`` folders are.

In a wheel they are force-included inside the package; in a source checkout
(or an editable install) they sit beside it at the repository's top level.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def shipped(folder: str) -> Path:
    """The shipped folder ``templates`` or ``algorithms``."""
    for candidate in (_PACKAGE / folder, _PACKAGE.parent / folder):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the shipped folder {folder!r} is missing from this installation")


def templates_dir() -> Path:
    return shipped("templates")


def algorithms_dir() -> Path:
    return shipped("algorithms")
