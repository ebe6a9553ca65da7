"""Algorithms back to .bl text, as equations or as a coefficient table.

``to_bl(algorithm)`` writes text that :mod:`bilinear.frontend` parses back to
the same algorithm (equal but for source positions); a header comment says
where the algorithm came from.  The shipped ⟨3,3,3;23⟩ and rectangular
schemes in ``algorithms/`` were written this way from catalogue files.
"""

from __future__ import annotations

from fractions import Fraction

from ..ir import Algorithm, Form, Schedule, written_coefficient
from ..ir.names import LONGEST_NAME
from ..output import encoded
from ..report_sizes import bytes_text
from ..verify.expand import Expansion
from . import loader

STYLES = ("equations", "table")


def _source(algorithm: Algorithm) -> str:
    return algorithm.span.path if algorithm.span else "an algorithm built in Python"


def _comment(lines: tuple[str, ...]) -> list[str]:
    # Split again, so a line holding a newline cannot leave the comment.
    return [f"# {line}".rstrip() for line in "\n".join(lines).splitlines()]


def _linear(form: Form, order: dict[str, int]) -> str:
    """``A11 - 3/4*A22``, terms in ``order`` (names it lacks last, by name).

    Outputs list their products in definition order (M2 before M10), which
    a reader comparing with the paper expects; the parser sorts them anyway.
    """
    terms = sorted(form.terms, key=lambda term: (order.get(term[0], len(order)), term[0]))
    parts = []
    for index, (name, coefficient) in enumerate(terms):
        size = abs(coefficient)
        text = name if size == 1 else f"{written_coefficient(size)}*{name}"
        if index == 0:
            parts.append(f"-{text}" if coefficient < 0 else text)
        else:
            parts.append(f"{'-' if coefficient < 0 else '+'} {text}")
    return " ".join(parts)


def _factor(form: Form) -> str:
    """A product's factor: a bare name, or the sum in parentheses."""
    if len(form.terms) == 1 and form.terms[0][1] == Fraction(1):
        return form.terms[0][0]
    return f"({_linear(form, {})})"


def _signature(algorithm: Algorithm) -> str:
    return f"{algorithm.name} {algorithm.signature}:"


def _equations(algorithm: Algorithm) -> list[str]:
    defined = [*(s.name for s in algorithm.sums), *(p.name for p in algorithm.products)]
    order = {name: index for index, name in enumerate(defined)}
    lines = [f"algorithm {_signature(algorithm)}"]
    if algorithm.sums:
        lines += [f"  {s.name} = {_linear(s.form, order)}" for s in algorithm.sums] + [""]
    lines += [f"  {p.name} = {_factor(p.left)} * {_factor(p.right)}" for p in algorithm.products]
    lines.append("")
    lines += [f"  {o.block} = {_linear(o.form, order)}" for o in algorithm.outputs]
    return lines


def _table(algorithm: Algorithm) -> list[str]:
    U, V, W = Expansion(algorithm).tables()
    shape = algorithm.shape
    sections = (("U", U, shape.blocks("A")), ("V", V, shape.blocks("B")), ("W", W, shape.blocks("C")))
    cells = {letter: [[written_coefficient(c) for c in row] for row in rows] for letter, rows, _ in sections}
    width = max(len(cell) for rows in cells.values() for row in rows for cell in row)
    lines = [f"table {_signature(algorithm)}"]
    for letter, _, blocks in sections:
        lines.append(f"  {letter}:")
        lines += [f"    {' '.join(c.rjust(width) for c in row)}  # {block}" for row, block in zip(cells[letter], blocks)]
    return lines


def to_bl(algorithm: Algorithm, style: str = "equations", header: tuple[str, ...] = (),
          schedule: Schedule | None = None) -> str:
    """The algorithm as .bl text that parses back to it.

    Args:
        algorithm: a checked algorithm.
        style: ``"equations"`` (products and outputs as formulas, named sums
            kept) or ``"table"`` (U, V, W with one column per product; named
            sums are multiplied out and the products are renamed M1..MR, as
            a table names them).
        header: comment lines to put first (provenance, license); by default
            one line naming the file the algorithm was read from.
        schedule: a schedule of the algorithm to write after it (``inplace``,
            a schedule product), in the same file.

    Returns:
        The text of a .bl file defining the algorithm (and the schedule),
        ending in a newline.

    Raises:
        ValueError: for an unknown style, or an output that is identically
            zero in the equations style (.bl has no equation for it; the
            table style writes its zero row), or a text larger than a .bl
            file bilinear reads (64 MiB), with the other style's size; see
            :func:`schedule_to_bl` for a schedule refused.
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    _check_names_fit([algorithm.name, *(p.name for p in algorithm.products), *(s.name for s in algorithm.sums)])
    after = "" if schedule is None else "\n" + schedule_to_bl(schedule)
    text = _text(algorithm, style, header) + after
    _check_reads_back(text, algorithm, style, header, schedule, after)
    return text


def _text(algorithm: Algorithm, style: str, header: tuple[str, ...]) -> str:
    zero = [o.block for o in algorithm.outputs if o.form.is_zero()]
    if style == "equations" and zero:
        raise ValueError(f"{', '.join(zero)} of {algorithm.name} is identically zero; write it with style='table'")
    header = header or (f"{algorithm.name}: converted by bilinear from {_source(algorithm)}",)
    notes = ()
    if style == "table" and (algorithm.sums or any(p.name != f"M{r + 1}" for r, p in enumerate(algorithm.products))):
        notes = ("Written as a table: named sums are multiplied out and products are numbered M1..MR.",)
    body = _equations(algorithm) if style == "equations" else _table(algorithm)
    return "\n".join([*_comment(header + notes), "", *body]) + "\n"


def _check_reads_back(text: str, algorithm: Algorithm, style: str, header: tuple[str, ...],
                      schedule: Schedule | None, after: str) -> None:
    """Refuse a text larger than bilinear reads (:data:`~bilinear.frontend.loader.MAX_SOURCE_BYTES`), with
    the other style's size where that one fits: <27,27,27;12167>'s dense table was 76 MiB, written and
    never read again; as equations it is 3.7 MiB.  ``after``, the text of ``schedule`` written after the
    algorithm (or nothing), counts too.

    Raises:
        ValueError: saying so.
    """
    size, limit = len(encoded(text)), loader.MAX_SOURCE_BYTES
    if size <= limit:
        return
    other = "table" if style == "equations" else "equations"
    try:
        other_size = len(encoded(_text(algorithm, other, header) + after))
    except ValueError:  # as equations, an output that is zero
        other_size = None
    if other_size is not None and other_size <= limit:
        instead = f"written as {other} it is {bytes_text(other_size)}"
    elif schedule is None:
        instead = "export it to a catalogue format instead (bilinear export)"
    else:
        instead = "no style of .bl holds it within that"
    what = f"{algorithm.name}" + ("" if schedule is None else f" with its schedule {schedule.name}")
    raise ValueError(f"the {style} text of {what} would be {bytes_text(size)}, more than the "
                     f"{bytes_text(limit)} bilinear reads from a .bl file; {instead}")


def schedule_to_bl(schedule: Schedule) -> str:
    """A schedule as .bl text, to follow its algorithm's: one statement a line, each stage's first
    on its ``stage`` line.  Ordered stages (one fused pass, made by the lowering's passes) have no
    .bl form and are refused."""
    if any(stage.ordered for stage in schedule.stages):
        raise ValueError(f"schedule {schedule.name} has ordered stages, which .bl does not write")
    _check_names_fit([schedule.name, *(s.name for s in schedule.stages), *(t.name for t in schedule.temporaries)])
    properties = ", ".join(p for p in ("inplace", "restore", "accumulate", "overwrite") if p in schedule.properties)
    lines = [f"schedule {schedule.name} for {schedule.algorithm}" + (f": {properties}" if properties else "")]
    for temporary in schedule.temporaries:
        lines.append(f"  temp {temporary.name}: {temporary.like}")
    width = max(len(stage.name) for stage in schedule.stages) + len("  stage : ")
    for stage in schedule.stages:
        first, *rest = (str(statement) for statement in stage.statements)
        lines.append(f"  stage {stage.name}: ".ljust(width) + first)
        lines += [" " * width + statement for statement in rest]
    return "\n".join(lines) + "\n"


def _check_names_fit(names) -> None:
    """Refuse a name the .bl reader would refuse (a catalogue's variable of 254 characters is P_ and 254
    in .bl; a derived stage or sum name can grow past it too): what is written must read back.

    Raises:
        ValueError: naming the first such name, cut short.
    """
    if long := next((name for name in names if len(name) > LONGEST_NAME), None):
        raise ValueError(f"the name {long[:40]}… has {len(long)} characters, more than the {LONGEST_NAME} a .bl name "
                         "may have: a .bl file cannot hold it")
