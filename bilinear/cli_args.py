"""Command-line argument types and checks: a bad value is refused before any work starts."""

from __future__ import annotations

import argparse
import re

from .ir import parse_block

REPORT_FORMATS = ("text", "md", "json")
KEYWORDS = frozenset({"algorithm", "table", "schedule", "for", "stage", "temp", "use"})


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


BYTE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def byte_count(text: str) -> int:
    """An argparse type: bytes, with an optional binary unit (``512M``, ``24G``, ``0``)."""
    cleaned = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = cleaned[-1:] if cleaned[-1:] in BYTE_UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)]
    try:
        value = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected bytes such as 0, 512M or 24G, not {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"bytes must be a finite number >= 0, not {text!r}")
    return int(value * BYTE_UNITS[unit])


def level_count(text: str) -> int:
    """An argparse type: levels of recursion, checked at once (a huge count would lower for minutes)."""
    from .lower.options import MAX_LEVELS

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of levels, not {text!r}") from None
    if not 0 <= value <= MAX_LEVELS:
        raise argparse.ArgumentTypeError(
            f"levels must be between 0 and {MAX_LEVELS}, not {value} (each level at least halves a dimension)"
        )
    return value


def bench_levels(text: str) -> str:
    return text if text == "auto" else str(level_count(text))


def report_format(text: str) -> str:
    """An argparse type: the report format; an input format name points to --from."""
    if text in REPORT_FORMATS:
        return text
    raise argparse.ArgumentTypeError(
        f"the report format is text, md or json, not {text!r}; to read a file in a catalogue format say --from {text}"
    )


def check_name(name: str) -> None:
    """--name must be a .bl name (ASCII letters, digits, _), not a keyword or a block name."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in KEYWORDS or parse_block(name) is not None:
        raise ValueError(
            f"--name must be an identifier in .bl (an ASCII letter or _, then letters, digits or _; not a keyword or a block "
            f"name like A11), not {name!r}"
        )
