"""Algorithms out to the catalogue formats: fast-matmul, PLinOpt ``.sms`` and AlphaTensor ``.npz``.

Each writer takes a checked algorithm (named sums are multiplied out into
U, V, W) and writes what the matching reader in frontend.importers reads
back to the same coefficients; the tests read every export back and verify
it.  ``header`` lines (source, reference, licence) become the formats'
comments where they have them (fast-matmul's leading ``#`` line, each
``.sms`` file's ``#`` line); ``.npz`` has no place for them.

- fast-matmul: U (A blocks row-major × products), ``#``, V, ``#``, W (C
  blocks row-major × products), entries as integers or ``p/q``;
- PLinOpt: ``MxKxN_R_NAME_L.sms`` (products × A blocks; the prefix is
  added unless the name has it, as PLinOpt's data names its schemes), ``NAME_R.sms`` (products ×
  B blocks), ``NAME_P.sms`` (C blocks × products), each ``rows cols R``,
  1-based ``i j value`` lines and ``0 0 0``;
- AlphaTensor: key ``"m,k,n"``; U (mk × R), V (kn × R), W (nm × R) whose
  row j·m + i is C_ij (AlphaTensor decomposes (A, B) ↦ (AB)ᵀ); one integer
  (or float) array of shape (3, mk, R) when the three have one shape, as the
  square schemes of factorizations_r.npz are, else an object array as its
  rectangular ones are (which reading needs ``--allow-pickle`` for).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

from ..ir import Algorithm, block_name, format_coefficient
from ..verify.expand import expansion_of

FORMATS = ("fast-matmul", "plinopt", "alphatensor")


def _tables(algorithm: Algorithm) -> tuple[list[list[Fraction]], list[list[Fraction]], list[list[Fraction]]]:
    expansion = expansion_of(algorithm)
    shape = algorithm.shape
    positions = {operand: {b: i for i, b in enumerate(shape.blocks(operand))} for operand in "ABC"}
    tables = []
    for operand, forms in (("A", [u for u, _ in expansion.factors]), ("B", [v for _, v in expansion.factors]), ("C", expansion.weights)):
        table = [[Fraction(0)] * algorithm.rank for _ in positions[operand]]
        for r, form in enumerate(forms):
            for name, coef in form.terms:
                table[positions[operand][name]][r] = coef
        tables.append(table)
    return tuple(tables)


def _comment(header: tuple[str, ...]) -> list[str]:
    return [f"# {line}".rstrip() for line in "\n".join(header).splitlines()]


def to_fast_matmul(algorithm: Algorithm, header: tuple[str, ...] = ()) -> str:
    """fast-matmul's text form (one leading ``#`` comment line: the header joined)."""
    lines = _comment((" ".join(header),)) if header else [f"# {algorithm.name}"]
    for index, table in enumerate(_tables(algorithm)):
        if index:
            lines.append("#")
        lines += [" ".join(format_coefficient(c) for c in row) for row in table]
    return "\n".join(lines) + "\n"


def _sms(rows: list[list[Fraction]], comment: str) -> str:
    comment = " ".join(comment.splitlines())  # one line as every reader splits lines (U+2028 and form feed too)
    lines = [f"# {comment}".rstrip(), f"{len(rows)} {len(rows[0]) if rows else 0} R"]
    lines += [f"{i + 1} {j + 1} {format_coefficient(c)}" for i, row in enumerate(rows) for j, c in enumerate(row) if c]
    return "\n".join(lines + ["0 0 0"]) + "\n"


def to_plinopt(algorithm: Algorithm, header: tuple[str, ...] = ()) -> dict[str, str]:
    """The three ``.sms`` texts by suffix ``L``, ``R``, ``P``."""
    u, v, w = _tables(algorithm)
    about = " ".join(header) or algorithm.name
    def transpose(table):
        return [list(column) for column in zip(*table)]

    return {
        "L": _sms(transpose(u), f"Left matrix (products x A blocks) of {about}"),
        "R": _sms(transpose(v), f"Right matrix (products x B blocks) of {about}"),
        "P": _sms(w, f"Post matrix (C blocks x products) of {about}"),
    }


def _float(value: Fraction, where: str) -> float:
    """``value`` as a float64 that holds it exactly (a power-of-two denominator is not enough: the
    numerator must fit in 53 bits)."""
    try:
        exact = Fraction(float(value)) == value
    except OverflowError:
        exact = False
    if not exact:
        raise ValueError(f"{where} has the coefficient {value}, which a binary floating-point .npz cannot hold exactly")
    return float(value)


def _int64(value: Fraction, where: str) -> int:
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"{where} has the coefficient {value}, which a 64-bit integer .npz cannot hold")
    return int(value)


def to_alphatensor(algorithm: Algorithm) -> tuple[str, object]:
    """The archive key and the array to store under it."""
    import numpy as np

    shape = algorithm.shape
    u, v, w_blocks = _tables(algorithm)
    by_block = dict(zip(shape.blocks("C"), w_blocks))
    w = [by_block[block_name("C", i + 1, j + 1)] for j in range(shape.n) for i in range(shape.m)]
    integral = all(c.denominator == 1 for table in (u, v, w) for row in table for c in row)
    arrays = [
        np.array([[_int64(c, algorithm.name) if integral else _float(c, algorithm.name) for c in row] for row in table],
                 dtype=np.int64 if integral else np.float64)
        for table in (u, v, w)
    ]
    key = f"{shape.m},{shape.k},{shape.n}"
    if arrays[0].shape == arrays[1].shape == arrays[2].shape:
        return key, np.stack(arrays)
    stacked = np.empty(3, dtype=object)
    stacked[:] = arrays
    return key, stacked


def rendered(algorithm: Algorithm, format: str, path: Path, header: tuple[str, ...] = ()) -> dict[Path, str | bytes]:
    """What :func:`write` writes: each file's path and contents (PLinOpt: three files named from
    ``path``), so that a caller can check every target before writing any."""
    if format == "fast-matmul":
        return {path: to_fast_matmul(algorithm, header)}
    if format == "plinopt":
        if path.is_dir():  # a folder: the three files go inside it, named after the scheme
            path = path / algorithm.name
        stem = path.name[: -len(path.suffix)] if path.suffix == ".sms" else path.name
        shape = algorithm.shape
        prefix = f"{shape.m}x{shape.k}x{shape.n}_{algorithm.rank}_"
        named = re.match(r"^(\d+)x(\d+)x(\d+)_(\d+)_", stem)  # PLinOpt's data names its schemes MxKxN_R_text
        if named is None:
            stem = prefix + stem
        elif named.group(0) != prefix:
            m, k, n, rank = named.groups()
            raise ValueError(f"the name {stem} says ⟨{m},{k},{n}⟩ with {rank} products, but {algorithm.name} is "
                             f"⟨{shape.m},{shape.k},{shape.n};{algorithm.rank}⟩: PLinOpt's readers take the shape from "
                             f"the name; name it {prefix}... or leave the prefix out")
        return {path.with_name(f"{stem}_{part}.sms"): text for part, text in to_plinopt(algorithm, header).items()}
    if format == "alphatensor":
        import io

        import numpy as np

        key, array = to_alphatensor(algorithm)
        buffer = io.BytesIO()
        np.savez(buffer, **{key: array})
        return {path: buffer.getvalue()}
    raise ValueError(f"export format must be one of {', '.join(FORMATS)}, not {format!r}")


def write(algorithm: Algorithm, format: str, path: Path, header: tuple[str, ...] = ()) -> list[Path]:
    """Write ``algorithm`` in ``format`` at ``path`` (PLinOpt: three files named from ``path``); the files written."""
    files = rendered(algorithm, format, path, header)
    for target, data in files.items():
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data, encoding="utf-8")
    return list(files)
