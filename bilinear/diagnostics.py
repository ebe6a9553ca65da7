"""Compiler-style diagnostics: ``file:line:col: error: message``, the line, a caret.

User mistakes (bad input, wrong schemes) are reported through
:class:`BilinearError`, never through a Python traceback.
"""

from __future__ import annotations

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


class BilinearError(Exception):
    """Input the user must fix; carries one or more diagnostics (at most MAX_ERRORS and a count)."""

    def __init__(self, *diagnostics: Diagnostic):
        diagnostics = limited(diagnostics)
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


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
            self._texts[path] = text
        # Only '\n' ends a line, as for the parser; str.splitlines would also split at form
        # feeds and U+2028 and quote the wrong line.  An empty file still has a line 1.
        lines = text.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        return lines[number - 1].rstrip("\r") if 1 <= number <= len(lines) else None


SOURCES = SourceCache()


def render(diagnostic: Diagnostic, sources: SourceCache = SOURCES) -> str:
    """The diagnostic as a compiler prints it, with the offending line and a caret."""
    span = diagnostic.span
    where = f"{span}: " if span else ""
    out = [f"{where}{diagnostic.severity}: {diagnostic.message}"]
    line = sources.line(span.path, span.line) if span and span.line > 0 else None
    if line is not None:
        gutter = f"{span.line:>5} | "
        out.append(gutter + line.rstrip("\n"))
        width = span.end_column - span.column if span.end_line == span.line else len(line) - span.column + 1
        caret = "^" + "~" * max(0, width - 1)
        indent = "".join(c if c == "\t" else " " for c in line[: span.column - 1])  # tabs keep the caret aligned
        out.append(" " * (len(gutter) - 2) + "| " + indent + caret)
    out.extend(f"  note: {note}" for note in diagnostic.notes)
    return "\n".join(out)
