"""U, V, W coefficient tables to a checked :class:`~bilinear.ir.Algorithm` (one column per product)."""

from __future__ import annotations

from collections import Counter

from ..diagnostics import counted
from ..ir import Algorithm, Form, Output, Product
from .findings import Findings, block_range
from .raw import RawTable


def build_table(raw: RawTable) -> Algorithm:
    """An algorithm from its U, V, W coefficient tables (one column per product)."""
    findings = Findings()
    sections: dict[str, tuple] = {}
    for letter, rows, span in raw.sections:
        if letter in sections:
            findings.error(f"table {raw.name} has two {letter} sections", span)
        sections[letter] = (rows, span)
    for letter in "UVW":
        if letter not in sections:
            findings.error(f"table {raw.name} has no {letter} section", raw.span)
    findings.raise_if_any()
    widths = Counter(len(numbers) for letter in "UVW" for numbers, _ in sections[letter][0])
    if len(widths) == 1 and raw.rank is not None and raw.rank not in widths:  # every row agrees: the rank is wrong
        columns = counted(next(iter(widths)), "column")
        findings.error(f"table {raw.name} declares rank {raw.rank} but has {columns}", raw.span)
        findings.raise_if_any()
    # The rows are measured against the declared rank, or else what most rows have (not the first
    # row: when that one is short, it alone is wrong).
    rank = raw.rank if raw.rank is not None else widths.most_common(1)[0][0]
    expected = f"table {raw.name} declares rank {rank}" if raw.rank is not None else f"the other rows have {rank}"
    for letter, operand in zip("UVW", ("A", "B", "C")):
        rows, span = sections[letter]
        want = len(raw.shape.blocks(operand))
        if len(rows) != want:
            findings.error(
                f"{letter} has {counted(len(rows), 'row')}; {raw.shape} needs {want}, one per {operand} block "
                f"({block_range(raw.shape, operand)}, row-major)",
                span,
            )
        for numbers, row_span in rows:
            if len(numbers) != rank:
                findings.error(f"this row has {len(numbers)} entries; {expected}", row_span)
    findings.raise_if_any()
    columns = {letter: _columns(sections[letter][0], raw.shape.blocks(op)) for letter, op in zip("UVW", "ABC")}
    products = []
    for r in range(rank):
        name = f"M{r + 1}"
        left, right = columns["U"][r], columns["V"][r]
        for letter, form in (("U", left), ("V", right)):
            if form.is_zero():
                findings.error(f"column {r + 1} of {letter} is all zero: product {name} has a zero factor", sections[letter][1])
        products.append(Product(name, left, right, raw.span) if not (left.is_zero() or right.is_zero()) else None)
    findings.raise_if_any()
    outputs = []
    for index, block in enumerate(raw.shape.blocks("C")):
        numbers, row_span = sections["W"][0][index]
        form = Form.of({f"M{r + 1}": c for r, c in enumerate(numbers)})
        outputs.append(Output(block, form, row_span))
    return Algorithm(raw.name, raw.shape, (), tuple(products), tuple(outputs), raw.rank, raw.span, tabular=True)


def _columns(rows, blocks: tuple[str, ...]) -> list[Form]:
    """One Form per column; each block remembers its row, so a diagnostic can point at the entry's line."""
    rank = len(rows[0][0])
    spans = [(block, rows[i][1]) for i, block in enumerate(blocks)]
    return [Form.of({block: rows[i][0][r] for i, block in enumerate(blocks)}, spans) for r in range(rank)]
