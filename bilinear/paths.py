"""Where the shipped ``templates/`` and ``algorithms/`` folders are, and where caches go.

In a wheel they are force-included inside the package; in a source checkout
(or an editable install) they sit beside it at the repository's top level.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import platformdirs

_PACKAGE = Path(__file__).resolve().parent

#: The one variable that moves every on-disk cache (compiled kernels, tuned tile configs, ceilings).
CACHE_ENV = "BILINEAR_CACHE"


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


def cache_dir() -> Path:
    """The folder every cache of bilinear lives in: ``$BILINEAR_CACHE``, else the platform's user
    cache folder (``~/.cache/bilinear`` on Linux)."""
    folder = Path(os.environ.get(CACHE_ENV) or platformdirs.user_cache_dir("bilinear"))
    try:  # ~ expanded: a value from a configuration file or in quotes reaches no shell that would
        return folder.expanduser()
    except RuntimeError:  # ~nosuchuser, or no home to find: the folder as given
        return folder


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`bilinear.output.write_atomic`), making its folder."""
    from .output import write_atomic as write

    path.parent.mkdir(parents=True, exist_ok=True)
    write(path, text)


def read_cache_file(path: Path) -> dict:
    """A JSON cache file's entries.  One missing, unreadable, truncated, edited, nested past the
    parser's depth, or not a regular file (a named pipe had made bench wait for ever) counts as
    empty: what it held is measured again."""
    try:
        if not path.is_file():
            return {}
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return entries if isinstance(entries, dict) else {}


def update_cache_file(path: Path, key: str, entry: Any) -> bool:
    """Set one entry of a JSON cache file, the others as the file holds them now (another process
    may have added its own since this one read it); False where it cannot be written, which costs
    only a measurement next time."""
    from .diagnostics import BilinearError

    entries = read_cache_file(path)
    entries[key] = entry
    try:
        write_atomic(path, json.dumps(entries, indent=1, sort_keys=True))
    except (OSError, BilinearError):
        return False
    return True
