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

from ..diagnostics import BilinearError, counted
from ..ir import Algorithm, written_coefficient
from ..output import encoded
from ..report_sizes import bytes_text
from ..verify.expand import expansion_of
from . import loader
from .formats.common import modulus_in_name
from .formats.plinopt import basis_role

FORMATS = ("fast-matmul", "plinopt", "alphatensor")


#: A table kept sparse (rows × columns, and the nonzero entries by (row, column)): a
#: ⟨32,32,32;16807⟩ scheme's dense tables were 51 million Fractions (2.6 GB).
Table = tuple[int, int, dict[tuple[int, int], Fraction]]


def _tables(algorithm: Algorithm) -> tuple[Table, Table, Table]:
    """U (A blocks × products), V (B blocks × products), W (C blocks × products)."""
    expansion = expansion_of(algorithm)
    shape = algorithm.shape
    sides = (("A", [u for u, _ in expansion.factors]), ("B", [v for _, v in expansion.factors]), ("C", expansion.weights))
    tables = []
    for operand, forms in sides:
        row = {b: i for i, b in enumerate(shape.blocks(operand))}
        entries = {(row[name], r): coef for r, form in enumerate(forms) for name, coef in form.terms}
        tables.append((len(row), algorithm.rank, entries))
    return tuple(tables)


def _transposed(table: Table) -> Table:
    rows, columns, entries = table
    return columns, rows, {(j, i): c for (i, j), c in entries.items()}


def _text_rows(table: Table):
    """The table's rows as fast-matmul writes them, one at a time: zeros as ``0``."""
    rows, columns, entries = table
    by_row: list[list[tuple[int, Fraction]]] = [[] for _ in range(rows)]
    for (i, j), c in entries.items():
        by_row[i].append((j, c))
    for row in by_row:
        cells = ["0"] * columns
        for j, c in row:
            cells[j] = written_coefficient(c)
        yield " ".join(cells)


def _comment(header: tuple[str, ...]) -> list[str]:
    return [f"# {line}".rstrip() for line in "\n".join(header).splitlines()]


def to_fast_matmul(algorithm: Algorithm, header: tuple[str, ...] = ()) -> str:
    """fast-matmul's text form (one leading ``#`` comment line: the header joined)."""
    lines = _comment((" ".join(header),)) if header else [f"# {algorithm.name}"]
    for index, table in enumerate(_tables(algorithm)):
        if index:
            lines.append("#")
        lines += _text_rows(table)
    return "\n".join(lines) + "\n"


def _sms(table: Table, comment: str) -> str:
    comment = " ".join(comment.splitlines())  # one line as every reader splits lines (U+2028 and form feed too)
    rows, columns, entries = table
    lines = [f"# {comment}".rstrip(), f"{rows} {columns} R"]
    lines += [f"{i + 1} {j + 1} {written_coefficient(entries[i, j])}" for i, j in sorted(entries) if entries[i, j]]
    return "\n".join(lines + ["0 0 0"]) + "\n"


def to_plinopt(algorithm: Algorithm, header: tuple[str, ...] = ()) -> dict[str, str]:
    """The three ``.sms`` texts by suffix ``L``, ``R``, ``P``."""
    u, v, w = _tables(algorithm)
    # the source's comment is the source's (a PLinOpt L file's says "left HM matrix"): marked so, on each file
    about = algorithm.name + (f"; source: {' '.join(header)}" if header else "")
    return {
        "L": _sms(_transposed(u), f"Left matrix (products x A blocks) of {about}"),
        "R": _sms(_transposed(v), f"Right matrix (products x B blocks) of {about}"),
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
    from .formats.alphatensor import BINARY_PLACES

    if value.denominator > 2**BINARY_PLACES:  # it would not read back
        raise ValueError(f"{where} has the coefficient {value}, a binary fraction of more than {BINARY_PLACES} places, "
                         "which the .npz reader refuses as a rounding")
    return float(value)


def to_alphatensor(algorithm: Algorithm) -> tuple[str, object]:
    """The archive key and the array to store under it."""
    import numpy as np

    shape = algorithm.shape
    u, v, w_blocks = _tables(algorithm)
    # W's row j·m + i is C_ij: C's blocks are row-major (i·n + j)
    rows, columns, entries = w_blocks
    w = (rows, columns, {((b % shape.n) * shape.m + b // shape.n, r): c for (b, r), c in entries.items()})
    coefficients = [c for table in (u, v, w) for c in table[2].values()]
    # int64 where every coefficient fits one, else float64 (exact or refused): 2^70 had been refused
    integral = all(c.denominator == 1 and -(2**63) <= c < 2**63 for c in coefficients)
    convert = np.int64 if integral else np.float64
    arrays = []
    for rows, columns, entries in (u, v, w):
        array = np.zeros((rows, columns), dtype=convert)
        for (i, j), c in entries.items():
            array[i, j] = int(c) if integral else _float(c, algorithm.name)
        arrays.append(array)
    key = f"{shape.m},{shape.k},{shape.n}"
    if arrays[0].shape == arrays[1].shape == arrays[2].shape:
        return key, np.stack(arrays)
    stacked = np.empty(3, dtype=object)
    stacked[:] = arrays
    return key, stacked


def _check_fast_matmul_name(algorithm: Algorithm, path: Path) -> None:
    """Refuse a name fast-matmul's reader would take for another shape or product count (grey234-20-144
    for a ⟨4,3,2⟩ scheme): the file would not read back."""
    from .formats.fast_matmul import name_facts

    named, count, _ = name_facts(path)
    shape = algorithm.shape
    if named is not None and ((named.m, named.k, named.n), count) != ((shape.m, shape.k, shape.n), algorithm.rank):
        raise ValueError(f"the name {path.name} says ⟨{named.m},{named.k},{named.n}⟩ with {counted(count, 'product')}, "
                         f"but {algorithm.name} is ⟨{shape.m},{shape.k},{shape.n};{algorithm.rank}⟩: fast-matmul's reader "
                         f"takes the shape from the name; name it like grey{shape.m}{shape.k}{shape.n}-{algorithm.rank}-1, "
                         "or with no such pattern")


def _check_modulus_name(name: str) -> None:
    """Refuse a name the readers take for a claim modulo p (mod3, mod_3; mod0 is over Q): the exact scheme
    would read back as a modular one, and fail there where a coefficient has no value modulo p."""
    try:
        modulus = modulus_in_name(Path(name))
    except BilinearError:  # mod1, which no reader takes
        modulus = 1
    if modulus:
        written = re.search(rf"mod[-_]?0*{modulus}", name, re.IGNORECASE)
        raise ValueError(f"the name {name} says {written.group(0) if written else f'mod{modulus}'}, which the readers "
                         f"take for a scheme valid only modulo {modulus}: the file would read back as one; choose another")


def rendered(algorithm: Algorithm, format: str, path: Path, header: tuple[str, ...] = ()) -> dict[Path, str | bytes]:
    """What :func:`write` writes: each file's path and contents (PLinOpt: three files named from
    ``path``), so that a caller can check every target before writing any."""
    if format == "fast-matmul":
        _check_modulus_name(path.name)  # (its reader reads a name's modulus too)
        _check_fast_matmul_name(algorithm, path)
        return _read_back({path: to_fast_matmul(algorithm, header)}, algorithm, format)
    if format == "plinopt":
        if path.is_dir():  # a folder: the three files go inside it, named after the scheme; the reader's
            # prefix of a name that starts with a digit dropped (it had grown on every round trip)
            # and the shape prefix a derived scheme's default name kept of its source's (2x2x2_7_A_x_B)
            # (a name that shortens to nothing, plinopt_2x2x2_7_, keeps what it has: the folder itself had
            # become the stem, and the files went beside it)
            unprefixed = algorithm.name.removeprefix("plinopt_")
            stem = re.sub(r"^\d+x\d+x\d+_\d+_", "", unprefixed) or unprefixed or algorithm.name
            # a scheme read in an alternative basis (…_ALT) is written in the standard one: so named, the
            # files would read as an alternative basis whose change of basis is missing
            path = path / (f"{stem}_expanded" if basis_role(stem) else stem)
        whole = path.suffix.lower() == ".sms"  # one of the three files named whole (.SMS too)
        stem = path.name[: -len(path.suffix)] if whole else path.name
        if whole:  # their common stem
            stem = re.sub(r"_[LRP]$", "", stem)
        shape = algorithm.shape
        prefix = f"{shape.m}x{shape.k}x{shape.n}_{algorithm.rank}_"
        named = re.match(r"^(\d+)x(\d+)x(\d+)_(\d+)_", stem)  # PLinOpt's data names its schemes MxKxN_R_text
        if named is None:
            stem = prefix + stem
        elif named.group(0) != prefix:
            m, k, n, rank = named.groups()
            raise ValueError(f"the name {stem} says ⟨{m},{k},{n}⟩ with {counted(int(rank), 'product')}, but "
                             f"{algorithm.name} is ⟨{shape.m},{shape.k},{shape.n};{algorithm.rank}⟩: PLinOpt's readers "
                             f"take the shape from the name; name it {prefix}... or leave the prefix out")
        if role := basis_role(stem):  # the readers take such names for an alternative basis and its change
            raise ValueError(f"the name {stem} ends in {role}, which PLinOpt's files keep for a scheme in an "
                             "alternative basis and its change of basis: the files would not read back; choose another")
        _check_modulus_name(f"{stem}_L.sms")
        files = {path.with_name(f"{stem}_{part}.sms"): text for part, text in to_plinopt(algorithm, header).items()}
        return _read_back(files, algorithm, format)
    if format == "alphatensor":
        import io

        import numpy as np

        if path.stem.lower().endswith("_f2"):  # the reader takes such archives for schemes modulo 2
            raise ValueError(f"the name {path.name} ends in {path.stem[-3:]}, which AlphaTensor's archives keep for "
                             "schemes modulo 2: the file would read back as one; choose another")
        _check_modulus_name(path.name)
        key, array = to_alphatensor(algorithm)
        buffer = io.BytesIO()
        np.savez(buffer, **{key: array})
        return {path: buffer.getvalue()}
    raise ValueError(f"export format must be one of {', '.join(FORMATS)}, not {format!r}")


def _read_back(files: dict[Path, str], algorithm: Algorithm, format: str) -> dict[Path, str]:
    """``files``, where each is no larger than bilinear reads (:data:`~bilinear.frontend.loader.MAX_SOURCE_BYTES`).

    Raises:
        ValueError: for one larger, with the formats that write it smaller.
    """
    limit = loader.MAX_SOURCE_BYTES
    for path, text in files.items():
        if (size := len(encoded(text))) > limit:
            instead = "alphatensor (an .npz)" + (" or plinopt (sparse)" if format == "fast-matmul" else "")
            raise ValueError(f"the {format} text {path.name} of {algorithm.name} would be {bytes_text(size)}, "
                             f"more than the {bytes_text(limit)} bilinear reads from a scheme file; export it to {instead}")
    return files


def write(algorithm: Algorithm, format: str, path: Path, header: tuple[str, ...] = ()) -> list[Path]:
    """Write ``algorithm`` in ``format`` at ``path`` (PLinOpt: three files named from ``path``); the files written."""
    from ..output import write_together

    files = rendered(algorithm, format, path, header)
    write_together(files)  # all or none
    return list(files)
