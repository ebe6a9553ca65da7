"""AlphaTensor / AlphaEvolve ``.npz`` archives: one scheme per key ``"n,m,p"``.

Each entry holds the factor matrices U (n·m × R), V (m·p × R) and W
(p·n × R) of the tensor of (A, B) ↦ (AB)ᵀ, so W's rows run over Cᵀ.  Square
sizes are numeric arrays of shape (3, rows, R); rectangular ones are
pickled object arrays, and loading those executes code from the file, so
they are refused unless ``allow_pickle=True``.  ``*_f2.npz`` is valid only
modulo 2 (as is a name holding ``mod2``, the other readers' rule).  Float
entries are read exactly where they are short binary fractions (0.5), and
refused where they are roundings (1/3).  Complex entries (AlphaEvolve's ⟨4,4,4;48⟩ over ½·Z[i]) give a
:class:`~bilinear.verify.rings.ComplexScheme`.

The archive is read member by member through :mod:`zipfile`: every member
must be a ``.npy`` file whose header is well formed and whose declared
shape fits in the bytes the member really holds, all checked before an
array is allocated.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import struct
import tokenize
import zipfile
import zlib
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

from ...diagnostics import counted
from ...ir import Algorithm, Shape, Span
from ...verify.rings import ComplexScheme, ModularScheme
from .common import (
    algorithm_from_tables,
    check_side,
    comma_separated,
    fail,
    identifier,
    modulus_in_name,
    named_so,
    python_tree,
    shape_mismatch,
    transposed_c_rows,
    whole_file,
)

ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP_MAGIC = b"PK\x05\x06"  # a zip of no members (np.savez of nothing) is its end record alone
_MAX_MEMBER_BYTES = 1 << 30  # an uncompressed member above 1 GiB is no scheme
# Coefficients read from one entry, each a Fraction: the largest catalogue scheme, ⟨11,11,11;896⟩, holds 325,248;
# a 12 KB compressed archive declaring 12 million took minutes and gigabytes (a hunt)
MAX_ENTRIES = 1 << 22
_HEADER_READERS = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}  # by .npy format version
# What zipfile, zlib and numpy's .npy parser raise for a damaged archive.
_DAMAGED = (
    OSError, EOFError, ValueError, KeyError, NotImplementedError, RuntimeError, SyntaxError, zipfile.BadZipFile, zlib.error,
    struct.error,
)


def _normal_key(key: str) -> str:
    """A key as compared: separators and spaces as "2,2,2", and a number's leading zeros dropped
    (--key 02,2,2 names the shape --shape 02,2,2 does)."""
    parts = comma_separated(key).split(",")
    return ",".join(str(int(part)) if part.isascii() and part.isdigit() else part for part in parts)


def _choose_key(keys: list[str], key: str | None, shape: Shape | None, path: Path,
                pickled: Callable[[str], bool]) -> str:
    if key is None and shape is not None:
        key = f"{shape.m},{shape.k},{shape.n}"
    if key is None:
        if len(keys) == 1:
            return keys[0]
        fail(
            f"{path.name} holds {len(keys)} schemes; choose one with --key (e.g. --key {keys[0]}, key={keys[0]!r})",
            whole_file(path),
            "keys: " + " ".join(keys),
        )
    wanted = _normal_key(key)
    by_normal = {_normal_key(k): k for k in keys}  # an archive's own key may hold spaces ("2, 2, 2")
    if wanted not in by_normal:
        close = _nearest_shapes(wanted, keys) if _dims(wanted) else difflib.get_close_matches(wanted, keys, n=3)
        fail(
            f"{path.name} has no scheme {wanted!r}",
            whole_file(path),
            *(_permuted(path, wanted, keys, pickled) or ((f"did you mean {' or '.join(close)}?",) if close else ())),
            "keys: " + " ".join(keys),
        )
    return by_normal[wanted]


def _dims(key: str) -> tuple[int, ...] | None:
    parts = _normal_key(key).split(",")
    return tuple(map(int, parts)) if len(parts) == 3 and all(part.isdigit() for part in parts) else None


def _permuted(path: Path, wanted: str, keys: list[str], pickled: Callable[[str], bool]) -> tuple[str, ...]:
    """Where a key's shape is a permutation of ``wanted``'s, how `bilinear transform` derives it (a nearer
    size had been offered instead: 3,3,3 for 4,3,2 beside 2,3,4), allowing the pickle where its entry is one."""
    target = _dims(wanted)
    for key in keys:
        dims = _dims(key)
        if target is None or dims is None or sorted(dims) != sorted(target):
            continue
        to = next("".join(order) for order in itertools.permutations("mkn")
                  if tuple(dims["mkn".index(letter)] for letter in order) == target)
        shape = ",".join(map(str, target))
        allow = " --allow-pickle" if pickled(key) else ""
        return (f"it holds {key}, a permutation: `bilinear transform {path} --key {key}{allow} --to {to}` derives "
                f"⟨{shape}⟩ from it",)
    return ()


def _nearest_shapes(wanted: str, keys: list[str]) -> list[str]:
    """Up to three keys of shapes within 2 of ``wanted`` in m + k + n steps, nearest first (as text,
    "2,2,2" had looked like "12,12,12")."""
    target = _dims(wanted)
    distance = {key: sum(abs(a - b) for a, b in zip(dims, target)) for key in keys if (dims := _dims(key))}
    return sorted((key for key in distance if distance[key] <= 2), key=distance.get)[:3]


def _members(archive: zipfile.ZipFile, path: Path) -> dict[str, zipfile.ZipInfo]:
    """Key → member; every member must be an .npy array of a sane size."""
    members = {}
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            fail(f"{path.name} holds {info.filename!r}, which is not an .npy array: this is not a NumPy .npz archive", whole_file(path))
        if info.file_size > _MAX_MEMBER_BYTES:
            fail(f"{path.name}: member {info.filename!r} declares {info.file_size} bytes; no scheme is that large", whole_file(path))
        members[info.filename[: -len(".npy")]] = info
    if not members:
        fail(f"{path.name} is an empty archive: it holds no schemes", whole_file(path))
    return members


def _pickled(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """Whether a member's header declares an object array (a pickle); a damaged one reads as not, and is told
    so where it is read."""
    with archive.open(info) as stream:
        try:
            reader = _HEADER_READERS.get(npy.read_magic(stream))
            return reader is not None and reader(stream)[2].hasobject
        except (*_DAMAGED, TypeError, tokenize.TokenError):
            return False


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, allow_pickle: bool, where: str, span: Span) -> np.ndarray:
    with archive.open(info) as stream:
        try:
            version = npy.read_magic(stream)
            reader = _HEADER_READERS.get(version)
            if reader is None:
                fail(f"{where}: .npy format version {version} is not one NumPy writes", span)
            shape, _fortran, dtype = reader(stream)
        except (*_DAMAGED, TypeError, tokenize.TokenError) as error:  # numpy's header parser tokenizes the text
            _archive_damaged(error, where, span)
            fail(f"{where}: the .npy header is damaged ({type(error).__name__}: {error})", span)
        if dtype.hasobject:
            if not allow_pickle:
                fail(
                    f"{where} is a pickled object array; reading it runs code stored in the file, so bilinear refuses "
                    "unless you allow it",
                    span,
                    "if you trust the file, pass --allow-pickle (allow_pickle=True)",
                )
        else:
            count = int(np.prod(shape, dtype=object))
            if count * dtype.itemsize > info.file_size:
                fail(
                    f"{where}: the header declares an array of shape {shape} ({count * dtype.itemsize} bytes), "
                    f"but the member holds only {info.file_size} bytes",
                    span,
                )
    with archive.open(info) as stream:
        try:
            return npy.read_array(stream, allow_pickle=allow_pickle)
        except _DAMAGED as error:
            _archive_damaged(error, where, span)
            fail(f"cannot read {where}: {error}", span)
        except Exception as error:
            if not allow_pickle:
                raise
            # Unpickling, which the user allowed, can raise anything at all.
            fail(f"cannot unpickle {where}: {type(error).__name__}: {error}", span)


def _archive_damaged(error: Exception, where: str, span: Span) -> None:
    """Refuse a zip-level failure (a checksum, a member's header) as the archive's, not the array's:
    zipfile checks a member's CRC at its end, inside the first read of a small one."""
    if isinstance(error, zipfile.BadZipFile):
        fail(f"{where}: the archive is damaged ({error})", span)


def _factor_arrays(raw: np.ndarray, where: str, span: Span) -> list[np.ndarray]:
    """The U, V, W arrays of one archive entry, checked to be numeric 2-D tables."""
    if raw.dtype == object:
        parts = list(raw.ravel())
    elif raw.ndim == 3:
        parts = list(raw)
    else:
        parts = []
    if len(parts) != 3:
        fail(f"{where} is not three factor matrices U, V, W (found an array of shape {raw.shape})", span)
    for letter, part in zip("UVW", parts):
        if not isinstance(part, np.ndarray):  # three objects, as AlphaTensor keeps rectangular schemes: one of them
            fail(f"{where}: {letter} is a {type(part).__name__}, not a 2-D array", span)
        if part.ndim != 2:
            fail(f"{where}: {letter} has {counted(part.ndim, 'dimension')}, not 2", span)
    for letter, part in zip("UVW", parts):
        if part.dtype.kind not in "iufc":
            fail(f"{where}: {letter} holds {part.dtype} values, not numbers", span)
        if part.dtype.kind in "fc" and not np.isfinite(part).all():
            fail(f"{where}: {letter} holds a value that is not finite", span)
    return parts


def read_alphatensor(
    path: Path, shape: Shape | None = None, key: str | None = None, allow_pickle: bool = False
) -> Algorithm | ModularScheme | ComplexScheme:
    """One scheme of an AlphaTensor/AlphaEvolve ``.npz`` archive (``key`` ``"n,m,p"``)."""
    span = whole_file(path)
    try:
        with path.open("rb") as stream:
            magic = stream.read(4)
    except OSError as error:
        fail(f"cannot read {path}: {error.strerror or error}", None)
    if magic not in (ZIP_MAGIC, EMPTY_ZIP_MAGIC):
        fail(f"{path.name} is not an .npz archive (a zip file of arrays)", span)
    try:
        with zipfile.ZipFile(path) as archive:
            members = _members(archive, path)
            chosen = _choose_key(list(members), key, shape, path, lambda key: _pickled(archive, members[key]))
            raw = _read_member(archive, members[chosen], allow_pickle, f"scheme {chosen} of {path.name}", span)
    except _DAMAGED as error:
        fail(f"cannot read {path.name} as an .npz archive: {error}", span)
    where = f"scheme {chosen} of {path.name}"
    try:
        dims = Shape(*(int(part) for part in chosen.split(",")))
    except (TypeError, ValueError):
        fail(f"{where}: the key is not 'n,m,p'", span)
    check_side(dims, where, span)
    if shape is not None:
        shape_mismatch(dims, shape, f"the key {chosen!r}", span)
    u, v, w = _factor_arrays(raw, where, span)
    for letter, part, want, entries in (("U", u, dims.m * dims.k, "m·k"), ("V", v, dims.k * dims.n, "k·n"),
                                        ("W", w, dims.n * dims.m, "n·m")):
        if part.shape[0] != want:  # its rows are the shape's; its columns, however many, are the products
            turned = f" (transposed, it would be {want}x{part.shape[0]}: {part.shape[0]} products)" if part.shape[1] == want else ""
            fail(f"{where}: {letter} is {part.shape[0]}x{part.shape[1]}; {dims} needs {want} rows ({entries}), a column "
                 f"per product{turned}", span)
    if not u.shape[1] == v.shape[1] == w.shape[1]:
        fail(f"{where}: U, V and W have {u.shape[1]}, {v.shape[1]} and {w.shape[1]} columns; a column is a product, so "
             "they must have as many", span)
    entries = sum(part.size for part in (u, v, w))
    if entries > MAX_ENTRIES:  # before a Fraction per entry: a tiny compressed archive may declare millions
        fail(f"{where} holds {entries} coefficients ({u.shape[1]} products), more than the {MAX_ENTRIES} read from an "
             "archive", span)
    for letter, part in zip("UVW", (u, v, w)):
        _check_binary_fractions(part, letter, where, span)
    name = identifier(f"{path.stem}_{dims.m}x{dims.k}x{dims.n}")
    if any(np.iscomplexobj(p) and np.any(p.imag != 0) for p in (u, v, w)):
        return _complex(u, v, w, dims, name, where, span)
    u, v, w = (p.real if np.iscomplexobj(p) else p for p in (u, v, w))
    # DeepMind's own modulo-2 archive is factorizations_f2.npz; the other readers' rule (mod2, mod_2) holds too
    modulus = 2 if path.stem.lower().endswith("_f2") else modulus_in_name(path)
    tables = [[[_exact(c) for c in row] for row in part] for part in (u, v, w)]
    algorithm = algorithm_from_tables(name, dims, tables[0], tables[1], transposed_c_rows(tables[2], dims), where, span)
    return ModularScheme(algorithm, modulus, named_so(path)) if modulus else algorithm


#: The most binary places a float coefficient may have: 0.5 and 0.125 are read exactly as written, while
#: 1/3 stored as a float (0.333…, 54 places) is a rounding of a coefficient the file cannot hold.
BINARY_PLACES = 20


def _check_binary_fractions(part: np.ndarray, letter: str, where: str, span: Span) -> None:
    if part.dtype.kind not in "fc":
        return
    values = np.unique(np.concatenate([part.real.ravel(), part.imag.ravel()]) if part.dtype.kind == "c" else part)
    for value in values[values != np.round(values)]:
        if _exact(value).denominator > 2**BINARY_PLACES:
            fail(f"{where}: {letter} holds {_written(value)}, a float that is no short binary fraction (an exact "
                 "scheme's coefficients are integers or fractions such as 0.5); store exact values, or write the "
                 "scheme as a .bl file with fractions such as 1/3", span)


def _exact(value) -> Fraction:
    # Integers and binary floats (0.125) are exact rationals; Fraction keeps them so.  A long double goes
    # through its own ratio, not float64's: 1 + 2^-60 would round to 1 there.
    if isinstance(value, (float, np.floating)):
        return Fraction(*value.as_integer_ratio())
    return Fraction(int(value))


def _written(value) -> str:
    """A float coefficient as the file holds it: float64's shortest repr, a long double's own digits."""
    return repr(float(value)) if float(value) == value else np.format_float_positional(value, unique=True)


def _complex(u, v, w, dims: Shape, name: str, where: str, span: Span) -> ComplexScheme:
    def table(part):
        return tuple(tuple((_exact(c.real), _exact(c.imag)) for c in row) for row in part.astype(np.result_type(part, complex)))

    for letter, part in (("U", u), ("V", v)):
        empty = np.nonzero(~np.any(part != 0, axis=0))[0]
        if len(empty):
            fail(f"{where}: product {empty[0] + 1} has a zero factor (column {empty[0] + 1} of {letter})", span)
    return ComplexScheme(name, dims, table(u), table(v), tuple(transposed_c_rows(table(w), dims)), span)


def decompositions_from_notebook(source: str) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The ``decomposition_nmp = (np.array([...]), ...)`` literals of AlphaEvolve's results notebook, read
    with :func:`ast.literal_eval` (nothing is executed), keyed ``"n,m,p"`` as in an ``.npz`` archive."""
    found = {}
    for node in ast.walk(python_tree(source, "exec")):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        target = node.targets[0].id
        if not target.startswith("decomposition_") or not isinstance(node.value, ast.Tuple):
            continue
        arrays = [np.array(ast.literal_eval(call.args[0])) for call in node.value.elts if isinstance(call, ast.Call)]
        digits = target.removeprefix("decomposition_")
        if len(arrays) == 3 and digits.isdigit() and len(digits) == 3:
            found[",".join(digits)] = tuple(arrays)
    return found
