"""Perminov's catalogue (dronperminov/FastMatrixMultiplication ``schemes/``): ``.json`` schemes.

A scheme is a JSON object with ``"n": [m, k, n]``, ``"m"`` (the rank),
``"z2"`` (true: valid modulo 2 only) and the factor tables ``"u"``, ``"v"``,
``"w"``: one row per product, over the A blocks (row-major), the B blocks
and the C blocks transposed (entry j·m + i is C_ij, the trace convention).
Entries are integers or fraction strings (``"-9/2"``).  The human-readable
``"multiplications"`` strings are not read: their entries (``a104``) are
ambiguous beyond 9×9.  The same schemes' ``.m`` files are Mathematica
lists (:mod:`.mathematica`).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from ...ir import Algorithm, Shape
from ...verify.rings import ModularScheme
from ..loader import read_source
from .common import algorithm_from_tables, check_side, fail, identifier, transposed_c_rows, whole_file


def _number(value, where: str, path: Path) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        fail(f"{where}: {value!r} is not a coefficient (an integer or a fraction string such as \"-1/2\")", whole_file(path))
    try:
        return Fraction(value)
    except (ValueError, ZeroDivisionError):
        fail(f"{where}: {value!r} is not a rational coefficient", whole_file(path))


def _table(data: dict, letter: str, rank: int, width: int, path: Path) -> list[list[Fraction]]:
    rows = data.get(letter)
    if not isinstance(rows, list) or len(rows) != rank:
        found = f"{len(rows)} rows" if isinstance(rows, list) else "nothing"
        fail(f"{path.name}: \"{letter}\" needs one row per product ({rank}); found {found}", whole_file(path))
    table = []
    for r, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            fail(f"{path.name}: row {r + 1} of \"{letter}\" needs {width} entries", whole_file(path))
        table.append([_number(x, f"{path.name}: \"{letter}\" row {r + 1}", path) for x in row])
    return [list(column) for column in zip(*table)]  # blocks × products


def read_perminov(path: Path, shape: Shape | None = None) -> Algorithm | ModularScheme:
    """One ``.json`` scheme; a ModularScheme when ``"z2"`` is true."""
    text = read_source(path)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        line, column = getattr(error, "lineno", 1), getattr(error, "colno", 1)
        from ...ir import Span

        fail(f"{path.name} is not JSON: {getattr(error, 'msg', 'nested too deeply')}", Span(str(path), line, column, line, column + 1))
    if not isinstance(data, dict) or "u" not in data or "n" not in data:
        fail(
            f"{path.name} is not a scheme: a Perminov scheme is a JSON object with \"n\" (the shape), \"m\" (the rank) "
            "and the factor tables \"u\", \"v\", \"w\"",
            whole_file(path),
        )
    dims = data["n"]
    if not (isinstance(dims, list) and len(dims) == 3 and all(type(d) is int for d in dims)):
        fail(f"{path.name}: \"n\" must be the shape [m, k, n], not {dims!r}", whole_file(path))
    found = check_side(Shape(*dims), f"\"n\" of {path.name}", whole_file(path))
    if shape is not None and shape != found:
        fail(f"\"n\" of {path.name} says {found}, but the shape given is {shape}", whole_file(path))
    rank = data.get("m", len(data["u"]) if isinstance(data["u"], list) else 0)
    if type(rank) is not int or rank < 1:
        fail(f"{path.name}: \"m\" must be the number of products, not {rank!r}", whole_file(path))
    u = _table(data, "u", rank, found.m * found.k, path)
    v = _table(data, "v", rank, found.k * found.n, path)
    w = _table(data, "w", rank, found.n * found.m, path)
    modulus = 2 if data.get("z2") is True else 0
    if modulus and any(x.denominator != 1 for table in (u, v, w) for row in table for x in row):
        fail(f"{path.name}: a scheme valid modulo 2 has integer coefficients", whole_file(path))
    algorithm = algorithm_from_tables(
        identifier(path.stem, "scheme"), found, u, v, transposed_c_rows(w, found), path.name, whole_file(path)
    )
    return ModularScheme(algorithm, modulus) if modulus else algorithm


def looks_like_perminov(text: str) -> bool:
    head = text.lstrip()[:400]
    return head.startswith("{") and '"n"' in head
