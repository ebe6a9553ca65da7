"""What a file written from a scheme keeps of its source: the source's leading comments (a
catalogue file's reference, a .bl file's provenance and licence text) and a licence file found
near it."""

from __future__ import annotations

import os
from pathlib import Path


def source_header(path: Path) -> tuple[str, ...]:
    """What a header should keep of a scheme's source: its leading ``#`` comment lines (a
    catalogue file's reference, a .bl file's provenance and licence text), and, for a file
    inside a fetched repository, that repository's licence file and its first line."""
    lines: list[str] = []
    if path.suffix != ".npz" and path.is_file():
        with path.open(encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if not line.startswith("#") or len(lines) >= 40:
                    break
                lines.append(line[1:].strip())
    if path.suffix != ".bl":
        lines += licence(path)
    return (f"from {path.name}", *(line for line in lines if line))


def licence(path: Path) -> list[str]:
    """The first licence file in the source's folder or up to three above (a catalogue file deep in
    a fetched repository), named relative to the source (no absolute path of this machine goes into
    a written file), with its first line: found near it, which need not make it the source's."""
    source = path.resolve()
    for folder in list(source.parents)[:4]:
        for candidate in sorted(folder.iterdir()) if folder.is_dir() else ():
            if candidate.is_file() and any(word in candidate.name.lower() for word in ("licen", "copying")):
                first = next((line.strip() for line in candidate.read_text(errors="replace").splitlines() if line.strip()), "")
                return [f"Licence file found near the source: {os.path.relpath(candidate, source.parent)} ({first})"]
    return []
