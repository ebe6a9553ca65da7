"""What a file written from a scheme keeps of its source: the source's leading comments (a
catalogue file's reference, a .bl file's provenance and licence text) and a licence file found
near it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .encoding import lenient_text
from .loader import MAX_SOURCE_BYTES

# What bilinear itself writes around a source's text (export's wrapper on PLinOpt files, the notes of
# each hop), taken off again when a file bilinear wrote is read as a source, so a round trip keeps
# the original text once instead of nesting every earlier header in the next one's.
_WRAPPER = re.compile(r"^(?:Left|Right|Post) matrix \([^)]*\) of [^;]*; source: ")
_HOPS = re.compile(r"\s*(?:Imported by `bilinear import` from|Exported by bilinear from) \S(?:.*?\S)?\.(?=\s|$)")
_FROM = re.compile(r"^from \S+(?:\s+|$)")  # the first line of every header bilinear writes


def source_header(path: Path) -> tuple[str, ...]:
    """What a header should keep of a scheme's source: its leading ``#`` comment lines (a
    catalogue file's reference, a .bl file's provenance and licence text), and, for a file
    inside a fetched repository, that repository's licence file and its first line."""
    lines: list[str] = []
    if path.suffix != ".npz" and path.is_file():
        with path.open("rb") as stream:  # decoded as the reader decodes it (UTF-8, or UTF-16 or UTF-32 with its mark)
            text = lenient_text(stream.read(MAX_SOURCE_BYTES))
        for line in text.split("\n"):  # all of them: a licence's disclaimer may come last
            if not line.startswith("#"):
                break
            lines.append(line[1:].strip())
    lines = _unwrapped(lines)
    lines += [line for line in licence(path) if line not in lines]
    return (f"from {path.name}", *(line for line in lines if line))


def _unwrapped(lines: list[str]) -> list[str]:
    """A source's header lines without what bilinear wrote around them, where bilinear wrote the source
    (a hop note or export's wrapper says so; a user's line that starts "from" is left alone)."""
    if not any(_WRAPPER.match(line) or _HOPS.search(line) for line in lines):
        return lines
    kept = []
    for number, line in enumerate(lines):
        unwrapped = _WRAPPER.sub("", line)
        if number == 0 or unwrapped != line:  # "from NAME" opens the header, and so a wrapped copy of it
            unwrapped = _FROM.sub("", unwrapped, count=1)
        unwrapped = _HOPS.sub("", unwrapped).strip()
        if unwrapped and unwrapped not in kept:
            kept.append(unwrapped)
    return kept


def licence(path: Path) -> list[str]:
    """The first licence file in the source's folder or up to three above (a catalogue file deep in
    a fetched repository), named relative to the source (no absolute path of this machine goes into
    a written file), with its first line: found near it, which need not make it the source's.  None for
    a .bl file, whose own comments say what it is and where it came from."""
    if path.suffix.lower() == ".bl":
        return []
    source = path.resolve()
    for folder in list(source.parents)[:4]:
        for candidate in _listed(folder):
            if candidate.is_file() and any(word in candidate.name.lower() for word in ("licen", "copying")):
                try:
                    text = candidate.read_text(errors="replace")
                except OSError:  # the search is an extra nobody asked for: what it cannot read, it passes over
                    continue
                first = next((line.strip() for line in text.splitlines() if line.strip()), "")
                return [f"Licence file found near the source: {os.path.relpath(candidate, source.parent)} ({first})"]
    return []


def _listed(folder: Path) -> list[Path]:
    """A folder's entries in order; none where it cannot be listed (it may be entered, not read)."""
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []
