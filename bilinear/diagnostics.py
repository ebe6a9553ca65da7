"""Compiler-style diagnostics: ``file:line:col: error: message``, the line, a caret.

User mistakes (bad input, wrong schemes) are reported through
:class:`BilinearError`, never through a Python traceback.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .ir import Span


@dataclass(frozen=True)
class Diagnostic:
    """One finding, located in the source where that is possible."""

    message: str
    span: Span | None = None
    severity: str = "error"
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        located = (
            {"file": self.span.path, "line": self.span.line, "column": self.span.column} if self.span else {}
        )
        return {"severity": self.severity, "message": self.message, **located, "notes": list(self.notes)}


# At most this many errors are reported for one input, then a count of the rest: a file that is
# wrong everywhere (a <1000,1000,1000> shape with one equation) must not print millions of lines.
MAX_ERRORS = 20


def limited(diagnostics, limit: int = MAX_ERRORS) -> tuple[Diagnostic, ...]:
    """The first ``limit`` diagnostics and, when there are more, one that counts the rest
    (located where the first one left out is)."""
    diagnostics = tuple(diagnostics)
    if len(diagnostics) <= limit + 1:
        return diagnostics
    rest = diagnostics[limit:]
    summary = Diagnostic(
        f"{len(rest)} more errors like these are not shown (only the first {limit} are)", rest[0].span, rest[0].severity
    )
    return (*diagnostics[:limit], summary)


def in_column_order(diagnostics) -> tuple[Diagnostic, ...]:
    """The diagnostics with those on one line of one file in column order, in the places that
    line's held.  The checks report phase by phase (an undefined name, then the factor it stands
    in), so one line's errors came in any order; the order across lines is the checks' own (a
    missing C block, at the header, comes last) and is kept.  Call it before :func:`limited`, so
    that the errors shown of a long line are its first ones."""
    diagnostics = tuple(diagnostics)
    places: dict[tuple[str, int], list[int]] = {}  # (file, line) -> where its diagnostics stand
    for place, diagnostic in enumerate(diagnostics):
        if diagnostic.span is not None:
            places.setdefault((diagnostic.span.path, diagnostic.span.line), []).append(place)
    ordered = list(diagnostics)
    for line_places in places.values():
        by_column = sorted((diagnostics[place] for place in line_places), key=lambda d: d.span.column)
        for place, diagnostic in zip(line_places, by_column):
            ordered[place] = diagnostic
    return tuple(ordered)


class BilinearError(Exception):
    """Input the user must fix; carries one or more diagnostics (at most MAX_ERRORS and a count)."""

    def __init__(self, *diagnostics: Diagnostic):
        diagnostics = limited(diagnostics)
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics

    def __reduce__(self):
        """Rebuilt from its diagnostics (a job's error comes back so from a worker process; from its
        message alone, as Exception's pickle does, it had become AttributeError there)."""
        return type(self), self.diagnostics


def diagnostics_of(error: Exception) -> tuple[Diagnostic, ...]:
    """A BilinearError's diagnostics, or a refusal made before anything was read (a ValueError) as one
    without a location: what a JSON report lists as its errors."""
    return error.diagnostics if isinstance(error, BilinearError) else (Diagnostic(str(error)),)


class SourceCache:
    """The text of every file read, so a diagnostic can quote its line."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def add(self, path: str, text: str) -> None:
        self._texts[path] = text

    def line(self, path: str, number: int) -> str | None:
        text = self._texts.get(path)
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
            if "\x00" in text:  # a binary file (an empty zip is valid UTF-8) has no line to quote
                return None
            self._texts[path] = text
        # Only '\n' ends a line, as for the parser; str.splitlines would also split at form
        # feeds and U+2028 and quote the wrong line.  An empty file still has a line 1.
        lines = text.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        return lines[number - 1].rstrip("\r") if 1 <= number <= len(lines) else None


SOURCES = SourceCache()


QUOTED = 160  # characters of a long line quoted around the error (a 200,000-character line was printed whole, twice)


def _window(line: str, column: int) -> tuple[str, int]:
    """The part of ``line`` to quote, and where ``column`` (0-based) falls in it: the whole line,
    or QUOTED characters from a little before the column, with … where it was cut."""
    if len(line) <= QUOTED:
        return line, column
    first = max(0, min(column - QUOTED // 4, len(line) - QUOTED))
    prefix, suffix = ("…" if first else ""), ("…" if first + QUOTED < len(line) else "")
    return prefix + line[first:first + QUOTED] + suffix, column - first + len(prefix)


def render(diagnostic: Diagnostic, sources: SourceCache = SOURCES) -> str:
    """The diagnostic as a compiler prints it, with the offending line and a caret."""
    span = diagnostic.span
    where = f"{span}: " if span else ""
    out = [f"{where}{diagnostic.severity}: {diagnostic.message}"]
    line = sources.line(span.path, span.line) if span and span.line > 0 else None
    if line is not None:
        line = line.rstrip("\n")
        gutter = f"{span.line:>5} | "
        width = span.end_column - span.column if span.end_line == span.line else len(line) - span.column + 1
        quoted, column = _window(line, span.column - 1)
        out.append(gutter + quoted)
        underlined = quoted[column:column + max(1, min(width, len(quoted) - column))]
        caret = "^" + "~" * max(0, _display_width(underlined) - 1)
        indent = "".join(c if c == "\t" else " " * _display_width(c) for c in quoted[:column])  # tabs keep it aligned
        out.append(" " * (len(gutter) - 2) + "| " + indent + caret)
    out.extend(f"  note: {note}" for note in diagnostic.notes)
    return "\n".join(out).translate(_CONTROLS)


def _display_width(text: str) -> int:
    """Terminal columns ``text`` takes: two for East Asian wide and full-width characters (中), none
    for combining marks, one otherwise, so a caret under a line holding them points where it should."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# Control characters quoted from a file (an escape sequence can retitle or reprogram a terminal)
# print as U+FFFD, one column like most of them, so the caret stays aligned; tabs and newlines stay.
# So do bidi controls, which reorder the quoted line, and line and paragraph separators, which split it.
_BIDI_AND_SEPARATORS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)
_CONTROLS = {c: "\ufffd" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0), *_BIDI_AND_SEPARATORS) if chr(c) not in "\t\n"}


def brief(text: str, width: int = 40) -> str:
    """``text`` itself, or its ends around an ellipsis where it is longer than ``width`` (a number
    of thousands of digits, quoted in a message)."""
    return text if len(text) <= width else f"{text[:width - 12]}…{text[-10:]}"


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless the count is one: "1 row", "0 rows", "3 rows"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def listed(words) -> str:
    """Words as a sentence lists them: "a", "a and b", "a, b and c"."""
    words = list(words)
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")  # what Markdown reads as emphasis, links or HTML


def shown(text: str) -> str:
    """Text quoted from a file or its name, as a terminal may print it: control characters as U+FFFD."""
    return text.translate(_CONTROLS)


def markdown_code(text: str) -> str:
    """``text`` as one Markdown code span, whatever it holds (a path with a backtick had closed its span
    early): fenced by one backtick more than its longest run of them, padded where it begins or ends
    with one, and on one line, its line breaks and control characters as U+FFFD."""
    text = shown(text).replace("\n", "\ufffd").replace("\t", " ")
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_text(text: str) -> str:
    """A message in Markdown: escaped outside its `code` spans (2*A11*B11 had rendered as 2<em>A11</em>B11)."""
    parts = text.split("`")
    parts = parts if len(parts) % 2 else [text]  # a backtick without its pair: no code spans
    return "`".join(part if index % 2 else _MARKDOWN_SPECIAL.sub(r"\\\1", part) for index, part in enumerate(parts))


def markdown_block(text: str) -> str:
    """``text`` as a fenced Markdown code block, its fence longer than any run of backticks in it."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{fence}text\n{text}\n{fence}"
