"""Readers for catalogue scheme files, each giving a checked Algorithm.

- ``fast-matmul`` (arbenson/fast-matmul ``codegen/algorithms``): U, V and W
  blocks of numbers separated by ``#`` lines, one row per block (row-major),
  one column per product.  The shape is inferred from the row counts
  (mk, kn, mn) or given as ``--shape m,k,n``.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product as cartesian
from pathlib import Path

from ..diagnostics import BilinearError, Diagnostic
from ..ir import Algorithm, Form, Output, Product, Shape, Span
from .loader import read_source

FORMATS = ("fast-matmul",)


def parse_shape(text: str | None) -> Shape | None:
    """``"2,3,4"`` to a Shape; raises a located-less BilinearError when malformed."""
    if text is None:
        return None
    try:
        m, k, n = (int(part) for part in text.split(","))
        return Shape(m, k, n)
    except ValueError:
        raise BilinearError(Diagnostic(f"--shape must be three positive whole numbers m,k,n, not {text!r}")) from None


def _number(token: str, span: Span) -> Fraction:
    try:
        return Fraction(token)
    except (ValueError, ZeroDivisionError):
        raise BilinearError(Diagnostic(f"{token!r} is not a rational coefficient", span)) from None


def _fast_matmul_sections(text: str, path: str) -> list[list[tuple[list[Fraction], Span]]]:
    sections: list[list] = [[]]
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            if sections[-1]:
                sections.append([])
            continue
        if not stripped:
            continue
        span = Span(path, number, 1, number, len(line) + 1)
        row = []
        for token in stripped.split():
            column = line.index(token) + 1
            row.append(_number(token, Span(path, number, column, number, column + len(token))))
        sections[-1].append((row, span))
    return [s for s in sections if s]


def infer_shape(rows_a: int, rows_b: int, rows_c: int) -> Shape | None:
    """The unique ⟨m,k,n⟩ with mk, kn, mn rows, if there is one."""
    candidates = [
        Shape(m, k, n)
        for m, k, n in cartesian(range(1, rows_a + 1), repeat=3)
        if m * k == rows_a and k * n == rows_b and m * n == rows_c
    ]
    return candidates[0] if len(candidates) == 1 else None


def read_fast_matmul(path: Path, shape: Shape | None = None) -> Algorithm:
    text = read_source(path)
    sections = _fast_matmul_sections(text, str(path))
    whole = Span(str(path), 1, 1, 1, 2)
    if len(sections) < 3:
        raise BilinearError(Diagnostic(f"expected U, V and W blocks separated by '#' lines; found {len(sections)}", whole))
    u_rows, v_rows, w_rows = sections[:3]
    if shape is None:
        shape = infer_shape(len(u_rows), len(v_rows), len(w_rows))
        if shape is None:
            raise BilinearError(
                Diagnostic(
                    f"cannot infer the shape from {len(u_rows)}, {len(v_rows)} and {len(w_rows)} rows; give --shape m,k,n",
                    whole,
                )
            )
    rank = len(u_rows[0][0])
    for letter, rows, operand in (("U", u_rows, "A"), ("V", v_rows, "B"), ("W", w_rows, "C")):
        want = len(shape.blocks(operand))
        if len(rows) != want:
            raise BilinearError(Diagnostic(f"{letter} has {len(rows)} rows; {shape} needs {want}", rows[0][1]))
        for row, span in rows:
            if len(row) != rank:
                raise BilinearError(Diagnostic(f"this row has {len(row)} entries; U's first row has {rank}", span))
    name = path.name.replace("-", "_").replace(".", "_")
    if not name[0].isalpha():
        name = "s_" + name
    products = []
    for r in range(rank):
        left = Form.of({a: u_rows[i][0][r] for i, a in enumerate(shape.blocks("A"))})
        right = Form.of({b: v_rows[i][0][r] for i, b in enumerate(shape.blocks("B"))})
        if left.is_zero() or right.is_zero():
            raise BilinearError(Diagnostic(f"product {r + 1} has a zero factor (column {r + 1} of U or V is all zero)", whole))
        products.append(Product(f"M{r + 1}", left, right, u_rows[0][1]))
    outputs = tuple(
        Output(block, Form.of({f"M{r + 1}": c for r, c in enumerate(w_rows[i][0])}), w_rows[i][1])
        for i, block in enumerate(shape.blocks("C"))
    )
    return Algorithm(name, shape, (), tuple(products), outputs, None, whole, tabular=True)


def detect_format(path: Path) -> str:
    """'bl' for .bl files; otherwise the catalogue format the file looks like."""
    if path.suffix == ".bl":
        return "bl"
    return "fast-matmul"


def read_catalogue(path: Path, format: str, shape: Shape | None) -> Algorithm:
    if format == "fast-matmul":
        return read_fast_matmul(path, shape)
    raise BilinearError(Diagnostic(f"unknown input format {format!r}; known: bl, {', '.join(FORMATS)}"))
