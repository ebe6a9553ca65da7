"""What the checks of :mod:`bilinear.frontend.check` share: collected findings and block names in range."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..diagnostics import MAX_ERRORS, BilinearError, Diagnostic, in_column_order
from ..ir import Shape, Span, block_name, parse_block

ONE_INDEX_BLOCK = re.compile(r"^[ABC]\d$|^[ABC]\d{3,}$")


class Findings:
    """Every problem found in one definition, raised together."""

    def __init__(self) -> None:
        self.errors: list[Diagnostic] = []
        self._reported: set[Diagnostic] = set()  # beside the list: scanning it made n errors cost n² comparisons
        # undefined names -> (the name, a call giving the names known where it was met)
        self._undefined: dict[Diagnostic, tuple[str, Callable[[], Iterable[str]]]] = {}

    def error(self, message: str, span: Span | None, *notes: str) -> Diagnostic | None:
        """Records an error; the new diagnostic, or None when this one was reported before."""
        diagnostic = Diagnostic(message, span, notes=notes)
        if diagnostic in self._reported:  # two checks that meet one mistake (an output named C222) say it once
            return None
        self._reported.add(diagnostic)
        self.errors.append(diagnostic)
        return diagnostic

    def undefined(self, name: str, span: Span | None, known: Callable[[], Iterable[str]]) -> None:
        """``name is not defined``, with :func:`suggest`'s notes over ``known()`` added only if the
        error is shown: searching thousands of names for each of thousands of errors took minutes,
        and at most MAX_ERRORS are shown."""
        diagnostic = self.error(f"{name} is not defined", span)
        if diagnostic is not None:
            self._undefined[diagnostic] = (name, known)

    def raise_if_any(self) -> None:
        if self.errors:
            raise BilinearError(*self._with_suggestions(in_column_order(self.errors)))

    def _with_suggestions(self, ordered: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
        """The errors, those BilinearError may show (the first MAX_ERRORS + 1) with their suggestions."""
        shown = MAX_ERRORS + 1
        return tuple(
            replace(diagnostic, notes=suggest(*self._undefined[diagnostic])) if place < shown and diagnostic in self._undefined
            else diagnostic
            for place, diagnostic in enumerate(ordered)
        )


MISNAMED_BLOCK = re.compile(r"^([ABCabc])(\d)(\d)$")


def misnamed_block(name: str) -> str | None:
    """Why ``name`` looks like a block and is none (``C00``, ``a12``), or None."""
    found = MISNAMED_BLOCK.match(name)
    if found is None or parse_block(name) is not None:
        return None
    operand = found.group(1).upper()
    if "0" in found.group(2, 3):
        return f"block indices start at 1: {operand}11 is {operand}'s first block"
    return f"block names are capitalized: {operand}{found.group(2)}{found.group(3)}"


def suggest(name: str, candidates) -> tuple[str, ...]:
    """Notes for a name that is not defined: what is wrong with a block-like name, and close names
    (``candidates``: the names, or a call giving them)."""
    why = misnamed_block(name)
    names = candidates() if callable(candidates) else candidates
    # each once: a caller's names may repeat (a sum among the sums and among the kinds known), and
    # difflib would offer both copies ("did you mean S1 or S1?")
    close = difflib.get_close_matches(name, list(dict.fromkeys(names)), n=3, cutoff=0.6)
    return ((why,) if why else ()) + ((f"did you mean {' or '.join(close)}?",) if close else ())


def block_range(shape: Shape, operand: str) -> str:
    rows, cols = shape.grid(operand)
    return f"{block_name(operand, 1, 1)}..{block_name(operand, rows, cols)}"


def check_block(name: str, shape: Shape, span: Span | None, findings: Findings, owner: str) -> bool:
    """True if ``name`` is a block; reports blocks outside the shape."""
    parsed = parse_block(name)
    if parsed is None:
        if ONE_INDEX_BLOCK.match(name):
            findings.error(f"{name} is not a block name: blocks take a row and a column, e.g. {name[0]}12 or {name[0]}[1,2]", span)
            return True
        return False
    if not shape.contains(name):
        operand = parsed[0]
        rows, cols = shape.grid(operand)
        findings.error(
            f"{name} is not a block of {operand}: {owner} {shape} splits {operand} into {rows}x{cols} blocks "
            f"({block_range(shape, operand)})",
            span,
        )
    return True
