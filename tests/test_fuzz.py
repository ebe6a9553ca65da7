"""Fuzzed .bl files never give a traceback, and every diagnostic is located.

Each shipped file is edited at random (seeded, so a failure reproduces):
characters deleted or inserted, the text truncated, lines dropped or
duplicated, or several of these at once.  Whatever comes out must either
load and verify (possibly as wrong) or raise BilinearError, whose
diagnostics all carry a file, a line ≥ 1 and a column ≥ 1 inside the quoted
line; the report renderers must cope with whatever loads.
"""

from __future__ import annotations

import random

import pytest
from conftest import ALGORITHMS

import bilinear
from bilinear.diagnostics import BilinearError, Diagnostic, render
from bilinear.report import RENDERERS

CASES_PER_FILE = 30

# Fragments worth inserting: operators, digits, names that are almost right, keywords, odd characters.
FRAGMENTS = [
    "(", ")", "*", "+", "-", "/", "0", "1", "9", "10", "\n", ";", ":", "->", "=", "+=", "-=", "A", "B", "C", "M",
    "A31", "C0", "A1", "[", "]", ",", "#", "<", ">", '"', "\t", "é", "\r", " ", "/0", "A[10,3]", "B[0,1]",
    "stage", "temp", "use", "table", "U:", "W:", "algorithm", "schedule", "for", "inplace", "restore",
    "overwrite", "X", "1/0", ".5", "2.5", "\u00a0", "\ufeff", "\f", "\u2028", "0*", "M1", "S1", "P1", "C11",
    "A11 *", "* B11", "+C11", "temp X: A\n", "stage s: A11 += A12\n", 'use "strassen.bl"\n',
]


def edit(text: str, rng: random.Random) -> str:
    """One random edit (or, one time in six, a few)."""
    if not text:
        return rng.choice(FRAGMENTS)
    kind = rng.choice(["delete", "insert", "truncate", "drop-line", "duplicate-line", "several"])
    if kind == "delete":
        start = rng.randrange(len(text))
        return text[:start] + text[start + rng.randint(1, 12):]
    if kind == "insert":
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(FRAGMENTS) + text[at:]
    if kind == "truncate":
        return text[: rng.randrange(len(text))]
    lines = text.split("\n")
    if kind == "drop-line":
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    if kind == "duplicate-line":
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
        return "\n".join(lines)
    for _ in range(rng.randint(2, 5)):
        text = edit(text, rng)
    return text


def _unlocated(diagnostic: Diagnostic, fuzzed: dict[str, str]) -> str | None:
    """Why a diagnostic is not properly located, or None; ``fuzzed`` holds the text of the edited file."""
    span = diagnostic.span
    if span is None or not span.path:
        return f"no file: {diagnostic.message}"
    if span.line < 1 or span.column < 1:
        return f"line {span.line}, column {span.column}: {diagnostic.message}"
    text = fuzzed.get(span.path)
    if text is None:
        with open(span.path, encoding="utf-8", errors="replace") as file:
            text = file.read()
    lines = text.split("\n")
    if span.line > max(len(lines), 1):
        return f"line {span.line} past the end of {span.path}: {diagnostic.message}"
    if span.column > len(lines[span.line - 1]) + 1 if span.line <= len(lines) else False:
        return f"column {span.column} past the end of line {span.line}: {diagnostic.message}"
    render(diagnostic)
    return None


@pytest.mark.parametrize("original", ALGORITHMS, ids=[p.stem for p in ALGORITHMS])
def test_fuzzed_shipped_files_give_located_errors_or_reports(original, tmp_path):
    source = original.read_text(encoding="utf-8")
    problems = []
    for seed in range(CASES_PER_FILE):
        text = edit(source, random.Random(f"{original.name}:{seed}"))
        path = tmp_path / original.name  # same name, so `use` of a sibling still finds the shipped one
        path.write_text(text, encoding="utf-8")
        fuzzed = {str(path): text}
        try:
            report = bilinear.verify(path)
        except BilinearError as error:
            assert error.diagnostics, f"seed {seed}: a BilinearError without diagnostics"
            problems += [f"seed {seed}: {why}" for d in error.diagnostics if (why := _unlocated(d, fuzzed))]
            continue
        for entry in report.entries:
            for diagnostic in (*entry.errors, *entry.warnings):
                if why := _unlocated(diagnostic, fuzzed):
                    problems.append(f"seed {seed}: {why}")
        for renderer in RENDERERS.values():
            renderer(report)
    assert not problems, "\n".join(problems)


def test_the_edits_are_seeded_and_varied():
    source = ALGORITHMS[0].read_text(encoding="utf-8")
    first = [edit(source, random.Random(f"x:{seed}")) for seed in range(CASES_PER_FILE)]
    assert first == [edit(source, random.Random(f"x:{seed}")) for seed in range(CASES_PER_FILE)]
    assert len(set(first)) > CASES_PER_FILE * 0.8 and source not in first
