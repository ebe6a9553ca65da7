"""Perminov's catalogue (dronperminov/FastMatrixMultiplication ``schemes/``): ``.json`` schemes.

A scheme is a JSON object with ``"n": [m, k, n]``, ``"m"`` (the rank),
``"z2"`` (true: valid modulo 2 only) and the factor tables ``"u"``, ``"v"``,
``"w"``: one row per product, over the A blocks (row-major), the B blocks
and the C blocks transposed (entry j·m + i is C_ij, the trace convention).
Entries are integers or fraction strings (``"-9/2"``).  The human-readable
``"multiplications"`` strings are not read: their entries (``a104``) are
ambiguous beyond 9×9.  ``*_reduced.json`` files add fresh variables
(``"u_fresh"``, ``"v_fresh"``, ``"w_fresh"``: shared sums, index ≥ the real
variables' count, negative for a negated one), which become named sums.
``.txt`` files hold ``m k n R`` and then U, V, W flattened product by
product.  The same schemes' ``.m`` files are Mathematica lists
(:mod:`.mathematica`).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

from ...ir import Algorithm, Form, Output, Product, Shape, Sum
from ...verify.rings import ModularScheme
from ..loader import read_source, source_lines
from .common import (
    TOO_MANY_DIGITS,
    TooManyDigits,
    algorithm_from_tables,
    brief,
    check_side,
    exact_fraction,
    fail,
    identifier,
    modulus_in_name,
    named_so,
    rank_mismatch,
    rational,
    token_span,
    transposed_c_rows,
    whole_file,
)


def _quoted(value) -> str:
    """A value of the file as JSON writes it (``true``, ``null``: Python's repr had said ``True``), cut short."""
    return brief(json.dumps(value))


def _number(value, where: str, path: Path) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        fail(f"{where}: {_quoted(value)} is not a coefficient (an integer or a fraction string such as \"-1/2\")", whole_file(path))
    try:
        return Fraction(value) if isinstance(value, int) else exact_fraction(value)
    except TooManyDigits as error:
        fail(f"{where}: {error}", whole_file(path))
    except (ValueError, ZeroDivisionError):
        fail(f"{where}: {brief(value)!r} is not a rational coefficient", whole_file(path))


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


def _variable(index, value, names: list[str], fresh: str, where: str, path: Path) -> tuple[str, Fraction]:
    """A reduced file's ``{"index": i, "value": c}``: a real variable, a fresh one (i ≥ the real count),
    or a fresh one negated (i < 0)."""
    if type(index) is not int:
        fail(f"{where}: the index {_quoted(index)} is not a whole number", whole_file(path))
    sign = -1 if index < 0 else 1
    index = abs(index)
    if index < len(names):
        return names[index], sign * value
    return f"{fresh}{index - len(names) + 1}", sign * value


def _reduced_form(terms, names: list[str], fresh: str, where: str, path: Path) -> Form:
    if not isinstance(terms, list) or not all(isinstance(t, dict) and {"index", "value"} <= set(t) for t in terms):
        fail(f"{where}: expected a list of {{\"index\": i, \"value\": c}}", whole_file(path))
    total: dict[str, Fraction] = {}
    for term in terms:
        name, value = _variable(term["index"], _number(term["value"], where, path), names, fresh, where, path)
        total[name] = total.get(name, Fraction(0)) + value
    return Form.of(total)


def _reduced(data: dict, found: Shape, rank: int, path: Path) -> Algorithm:
    """An ``*_reduced.json`` file: fresh variables (shared sums) become named sums A_X*, B_X*, M_X*."""
    for letter, want in (("u", rank), ("v", rank), ("w", found.n * found.m)):  # before names are built for them
        if not isinstance(data.get(letter), list) or len(data[letter]) != want:
            fail(f"{path.name}: \"{letter}\" needs {want} entries", whole_file(path))
    a_names, b_names = list(found.blocks("A")), list(found.blocks("B"))
    m_names = [f"M{r + 1}" for r in range(rank)]
    sums = []
    for key, names, prefix in (("u_fresh", a_names, "A_X"), ("v_fresh", b_names, "B_X"), ("w_fresh", m_names, "M_X")):
        fresh = data.get(key, [])
        if not isinstance(fresh, list):
            fail(f"{path.name}: \"{key}\" must be a list of sums", whole_file(path))
        for i, terms in enumerate(fresh):
            sums.append(Sum(f"{prefix}{i + 1}", _reduced_form(terms, names, prefix, f"{path.name}: {key}[{i}]", path), whole_file(path)))
    products = tuple(
        Product(
            m_names[r],
            _reduced_form(data["u"][r], a_names, "A_X", f"{path.name}: u[{r}]", path),
            _reduced_form(data["v"][r], b_names, "B_X", f"{path.name}: v[{r}]", path),
            whole_file(path),
        )
        for r in range(rank)
    )
    by_ct = [_reduced_form(t, m_names, "M_X", f"{path.name}: w[{i}]", path) for i, t in enumerate(data["w"])]
    outputs = tuple(Output(block, form, whole_file(path)) for block, form in zip(found.blocks("C"), transposed_c_rows(by_ct, found)))
    try:
        return Algorithm(identifier(path.stem, "scheme"), found, tuple(sums), products, outputs, rank, whole_file(path))
    except ValueError as error:
        fail(f"{path.name}: {error}", whole_file(path))


def read_perminov(path: Path, shape: Shape | None = None) -> Algorithm | ModularScheme:
    """One ``.json`` scheme; a ModularScheme when ``"z2"`` is true."""
    text = read_source(path, text_of="Perminov text")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        line, column = getattr(error, "lineno", 1), getattr(error, "colno", 1)
        from ...ir import Span

        fail(f"{path.name} is not JSON: {getattr(error, 'msg', 'nested too deeply')}", Span(str(path), line, column, line, column + 1))
    except ValueError:  # an integer past Python's digit limit (JSONDecodeError, a ValueError too, is caught above)
        fail(f"{path.name}: {TOO_MANY_DIGITS}", whole_file(path))
    if not isinstance(data, dict) or "u" not in data or "n" not in data:
        fail(
            f"{path.name} is not a scheme: a Perminov scheme is a JSON object with \"n\" (the shape), \"m\" (the rank) "
            "and the factor tables \"u\", \"v\", \"w\"",
            whole_file(path),
        )
    dims = data["n"]
    if type(dims) is int:  # a square scheme may give one side
        dims = [dims] * 3
    if not (isinstance(dims, list) and len(dims) == 3 and all(type(d) is int for d in dims)):
        fail(f"{path.name}: \"n\" must be the shape [m, k, n], not {_quoted(dims)}", whole_file(path))
    found = check_side(Shape(*dims), f"\"n\" of {path.name}", whole_file(path))
    if shape is not None and shape != found:
        fail(f"\"n\" of {path.name} says {found}, but the shape given is {shape}", whole_file(path))
    rank = data.get("m", len(data["u"]) if isinstance(data["u"], list) else 0)
    if type(rank) is not int or rank < 1:
        fail(f"{path.name}: \"m\" must be the number of products, not {_quoted(rank)}", whole_file(path))
    _check_name(path, found, rank)
    if type(z2 := data.get("z2", False)) is not bool:  # "true", a string, had been read over Q
        fail(f"{path.name}: \"z2\" must be true or false, not {_quoted(z2)}", whole_file(path))
    modulus = 2 if z2 else modulus_in_name(path)  # (`mod2` in the name, as the other formats read it)
    reason = 'the file says "z2": true' if z2 else named_so(path)
    if "u_fresh" in data:
        algorithm = _reduced(data, found, rank, path)
        return ModularScheme(algorithm, modulus, reason) if modulus else algorithm
    u = _table(data, "u", rank, found.m * found.k, path)
    v = _table(data, "v", rank, found.k * found.n, path)
    w = _table(data, "w", rank, found.n * found.m, path)
    algorithm = algorithm_from_tables(
        identifier(path.stem, "scheme"), found, u, v, transposed_c_rows(w, found), path.name, whole_file(path)
    )
    return ModularScheme(algorithm, modulus, reason) if modulus else algorithm


def read_perminov_text(path: Path, shape: Shape | None = None) -> Algorithm | ModularScheme:
    """A ``.txt`` scheme: ``m k n R``, then U, V and W flattened product by product (W over Cᵀ)."""
    numbers = []
    for number, line in enumerate(source_lines(read_source(path, text_of="Perminov text")), start=1):
        if line.lstrip().startswith("#"):  # indented too, as the Kauers and fast-matmul readers take one
            continue
        position = 0
        for token in line.split():
            position = line.index(token, position)
            numbers.append(rational(token, token_span(path, number, position + 1, token)))
            position += len(token)
    if len(numbers) < 4 or any(x.denominator != 1 or x < 1 for x in numbers[:4]):
        fail(f"{path.name} does not start with the shape and rank 'm k n R'", whole_file(path))
    m, k, n, rank = (int(x) for x in numbers[:4])
    found = check_side(Shape(m, k, n), f"the first line of {path.name}", whole_file(path))
    if shape is not None and shape != found:
        fail(f"the first line of {path.name} says {found}, but the shape given is {shape}", whole_file(path))
    _check_name(path, found, rank)
    sizes = (m * k, k * n, n * m)
    if len(numbers) - 4 != rank * sum(sizes):
        fail(f"{path.name} holds {len(numbers) - 4} coefficients; {found} with {rank} products needs {rank * sum(sizes)}", whole_file(path))
    tables, start = [], 4
    for size in sizes:
        flat = numbers[start: start + rank * size]
        tables.append([[flat[r * size + i] for r in range(rank)] for i in range(size)])
        start += rank * size
    algorithm = algorithm_from_tables(
        identifier(path.stem, "scheme"), found, tables[0], tables[1], transposed_c_rows(tables[2], found), path.name, whole_file(path)
    )
    modulus = 2 if "Z2" in path.stem.split("_") else modulus_in_name(path)  # (`mod3`, as the .json reader)
    return ModularScheme(algorithm, modulus, named_so(path)) if modulus else algorithm


_NAME = re.compile(r"([0-9]{1,4})x([0-9]{1,4})x([0-9]{1,4})_m([0-9]{1,9})(?:_|$)")  # 2x3x4_m20_Q


def _check_name(path: Path, found: Shape, rank: int) -> None:
    """A name such as ``2x3x4_m20_Q`` says the shape and the product count: a file it does not describe is
    refused, as the other catalogues' readers refuse theirs (3x3x3_m23_Q.json had held ⟨2,3,4;20⟩ unremarked)."""
    if (match := _NAME.match(path.stem)) is None:
        return
    m, k, n, named = (int(group) for group in match.groups())
    if (m, k, n) != (found.m, found.k, found.n):
        fail(f"the name '{path.name}' says ⟨{m},{k},{n}⟩, but the scheme is {found}", whole_file(path))
    rank_mismatch(named, rank, f"the name '{path.name}'", whole_file(path))


def looks_like_perminov(text: str) -> bool:
    head = text.lstrip()[:400]
    return head.startswith("{") and '"n"' in head


_HEAD = re.compile(r"\s*([1-9][0-9]{0,8})\s+([1-9][0-9]{0,8})\s+([1-9][0-9]{0,8})\s+([1-9][0-9]{0,8})\s*")  # m k n R


def looks_like_perminov_text(text: str) -> bool:
    """``m k n R`` alone on the first line, then as many numbers as U, V and W hold: R·(mk + kn + nm)
    (a fast-matmul table's first row has one entry per product, and no count to agree with).  Never
    raises: ASCII digits only (int() takes '²' and Arabic-Indic ones), the head before the rest."""
    lines = (line for line in source_lines(text) if line.strip() and not line.lstrip().startswith("#"))
    head = _HEAD.fullmatch(next(lines, ""))
    if head is None:
        return False
    m, k, n, rank = map(int, head.groups())
    return sum(len(line.split()) for line in lines) == rank * (m * k + k * n + n * m)
