"""What a dispatch table's JSON must hold before ``bilinear.matmul`` chooses from it.

The table is written by the GPU benchmarks and may be edited by hand.  Unchecked, a NaN threshold
had made every nearby measurement a fast choice ("nan× cuBLAS"), a string speedup failed only for
shapes near its row, and an unknown scheme name only when a call compiled it.  Every value is
checked when the table is read, and the first wrong one is named with its place
(``rows[3].m``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .lower.options import LAUNCHES, LEAF_KINDS, MAX_LEVELS, OptionError, Options
from .lower.tsm2_params import TSM2L_MAX_K, TSM2L_MAX_N, Params
from .paths import algorithms_dir

DTYPES = ("float32", "float64")
FAMILIES = ("tsm2r", "tsm2l")
CHECKS = ("grid", "inplace")  # what a checked_on entry vouches for (bilinear.dispatch.GRID_CHECK, IN_PLACE_CHECK)


class TableError(ValueError):
    """A dispatch table value that cannot be chosen from, with its place in the table."""


def check_table(data: Any) -> None:
    """Raise TableError for the first value of a dispatch table's JSON that is missing or wrong."""
    _expect(isinstance(data, dict), "the table", "must be a JSON object")
    if "device" in data:
        _name(data["device"], "device")
    for index, entry in enumerate(_entries(data, "checked_on", "checked_on")):
        _expect(isinstance(entry, dict), f"checked_on[{index}]", "must be an object")
        _name(entry.get("device"), f"checked_on[{index}].device")
        _one_of(entry.get("checks"), f"checked_on[{index}].checks", CHECKS)
    _expect("checked_on" not in data or "device" in data, "checked_on",
            "needs the table's own device (the GPU its rows were measured on)")
    for index, row in enumerate(_entries(data, "rows", "rows")):
        _tsm2_row(row, f"rows[{index}]")
    limits = _section(data, "limits", "limits")
    for key, most in (("tsm2r_max_n", TSM2L_MAX_N), ("tsm2l_max_k", TSM2L_MAX_K)):
        if key in limits:
            _whole(limits[key], f"limits.{key}", 1, most)
    recursive = _section(data, "recursive", "recursive")
    _expect(recursive.get("min_dim") is None, "recursive.min_dim",
            "is no longer read (the measured rows decide each shape): remove it or set it to null")
    for key in ("min_speedup", "emulated_min_speedup"):
        if key in recursive:
            _speedup(recursive[key], f"recursive.{key}")
    first_of = {}  # (dtype, m, k, n, leaf) -> the index of its row
    for index, row in enumerate(_entries(recursive, "rows", "recursive.rows")):
        _recursive_row(row, f"recursive.rows[{index}]")
        key = (row["dtype"], row["m"], row["k"], row["n"], row.get("leaf", "cublas"))
        _expect(key not in first_of, f"recursive.rows[{index}]",
                f"is a second row of {key[0]} {key[1]}×{key[2]}×{key[3]} with {key[4]} leaves (recursive.rows"
                f"[{first_of.get(key)}]): a shape holds the fastest configuration of each leaf kind")
        first_of[key] = index
    for index, row in enumerate(_entries(_section(data, "inplace", "inplace"), "rows", "inplace.rows")):
        _in_place_row(row, f"inplace.rows[{index}]")


def _tsm2_row(row: Any, where: str) -> None:
    _shape_of(row, where)
    _one_of(row.get("family"), f"{where}.family", FAMILIES)
    _one_of(row.get("winner"), f"{where}.winner", (*FAMILIES, "cublas"))
    if "speedup" in row:
        _speedup(row["speedup"], f"{where}.speedup")
    if row.get("params"):
        _expect(isinstance(row["params"], dict), f"{where}.params", "must be an object")
        kind = row["params"].get("kind")
        _expect(kind == row["family"], f"{where}.params.kind", f"must be the row's family {row['family']}, not {kind!r}")
        try:
            Params.from_dict(row["params"])
        except (TypeError, ValueError) as error:
            raise TableError(f"{where}.params: {error}") from None


def _recursive_row(row: Any, where: str) -> None:
    _shape_of(row, where)
    _scheme(row.get("scheme"), f"{where}.scheme")
    levels = _whole(row.get("levels"), f"{where}.levels", 0, MAX_LEVELS)
    breadth = _whole(row.get("breadth"), f"{where}.breadth", 0, levels)
    _speedup(row.get("speedup"), f"{where}.speedup")
    leaf = _one_of(row.get("leaf", "cublas"), f"{where}.leaf", tuple(LEAF_KINDS))
    launch = _one_of(row.get("launch", "serial"), f"{where}.launch", LAUNCHES)
    if "workspace_bytes" in row:
        _whole(row["workspace_bytes"], f"{where}.workspace_bytes", 0, 2**63 - 1)
    try:  # each value may be allowed alone and compile refuse them together (a fused leaf under breadth-first levels)
        Options(dtype=row["dtype"], levels=levels, leaf=leaf, breadth=breadth, launch=launch)
    except OptionError as error:
        raise TableError(f"{where}: {error}") from None


def _in_place_row(row: Any, where: str) -> None:
    _shape_of(row, where)
    _scheme(row.get("scheme", "msmes"), f"{where}.scheme")
    _whole(row.get("levels"), f"{where}.levels", 1, MAX_LEVELS)
    _speedup(row.get("speedup"), f"{where}.speedup")


def _shape_of(row: Any, where: str) -> None:
    _expect(isinstance(row, dict), where, "must be an object")
    _one_of(row.get("dtype"), f"{where}.dtype", DTYPES)
    for key in "mkn":
        _whole(row.get(key), f"{where}.{key}", 1, 2**31 - 1)


def _section(data: dict, key: str, where: str) -> dict:
    section = data.get(key, {})
    _expect(isinstance(section, dict), where, "must be an object")
    return section


def _entries(data: dict, key: str, where: str) -> list:
    entries = data.get(key, [])
    _expect(isinstance(entries, list), where, "must be a list")
    return entries


def _whole(value: Any, where: str, least: int, most: int) -> int:
    _expect(isinstance(value, int) and not isinstance(value, bool) and least <= value <= most, where,
            f"must be a whole number from {least} to {most}, not {value!r}")
    return value


def _speedup(value: Any, where: str) -> None:
    _expect(isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0,
            where, f"must be a finite number above 0, not {value!r}")


def _one_of(value: Any, where: str, allowed: tuple[str, ...]) -> Any:
    _expect(value in allowed, where, f"must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _name(value: Any, where: str) -> None:
    _expect(isinstance(value, str) and value.strip() != "", where, f"must name a GPU (as CUDA does), not {value!r}")


def _scheme(value: Any, where: str) -> None:
    """A shipped algorithm's name: matmul compiles ``algorithms/NAME.bl`` (never a path from the table)."""
    _expect(isinstance(value, str) and value.isidentifier() and (algorithms_dir() / f"{value}.bl").is_file(), where,
            f"must name a shipped scheme (a file algorithms/NAME.bl), not {value!r}")


def check_row_scheme(section: str, scheme: str, product: Any, table: Path) -> None:
    """Raise TableError where a row of ``section`` ("recursive" or "inplace") names a scheme of the
    other kind, as ``product`` (the scheme compiled) shows: a recursive row's must leave A and B alone
    (matmul promises it), an in-place row's must overwrite and restore them (it promises no workspace).
    Checked once matmul has compiled the row's scheme, not when the table is read: reading every
    scheme each time the table is (msmes2's parse alone takes half a second) would slow matmul's
    first call at every shape."""
    if section == "recursive" and product.writes_inputs:
        what = ("overwrites A and B while it runs: recursive rows must name a scheme that leaves them as they are "
                "(in-place schedules belong in inplace.rows)")
    elif section == "inplace" and not (product.writes_inputs and product.restores_inputs):
        changed = "leaves A and B changed" if product.writes_inputs else "never writes A or B"
        what = f"{changed}: inplace rows must name an in-place schedule that restores them, such as msmes"
    else:
        return
    raise TableError(f"{table}: a row of {section}.rows names {scheme}, which {what}")


def _expect(holds: bool, where: str, what: str) -> None:
    if not holds:
        raise TableError(f"{where} {what}")
