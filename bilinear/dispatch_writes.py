"""What the GPU benchmarks write into a dispatch table, and on which GPU it then holds.

A table's rows are measurements of one GPU (its ``device``); ``checked_on`` lists other GPUs where a
check of ``matmul`` against cuBLAS found its choices still winning (``bilinear.dispatch`` takes the
table's choices on those GPUs only).  Rows measured into a table are of the GPU at hand: a table of
another GPU is not added to (its rows would pass for this one's), and every check on other GPUs goes,
since it checked the rows before.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .dispatch import GRID_CHECK, IN_PLACE_CHECK, parse_table, table_json
from .dispatch_checks import TableError
from .output import write_atomic


def merge_tsm2_rows(old: dict, header: dict, rows: list[dict]) -> dict:
    """A table's JSON with newly measured TSM2 rows: a shape measured now replaces its old row,
    rows of shapes not measured now stay, and so does the recursive section (measured apart, by
    benchmarks/dispatch_grid.py); ``header`` (device, date, limits, ...) replaces the old one.
    No table keeps its checks on other GPUs (they checked the rows before these).

    Raises:
        TableError: where ``old`` was measured on another GPU than ``header``'s (it had been replaced whole),
            or ``old`` or the merged table holds a value missing or wrong.
    """
    def shape(row: dict) -> tuple:
        return row["family"], row["dtype"], row["m"], row["k"], row["n"]

    parse_table(old)  # a malformed table: its place named, not a KeyError after a whole GPU sweep
    old = measuring_on(old, header["device"]) if "device" in header else old
    measured = {shape(row) for row in rows}
    kept = [row for row in old.get("rows", ()) if shape(row) not in measured]
    merged = {**header, "recursive": old.get("recursive", {}), **({"inplace": old["inplace"]} if "inplace" in old else {}),
              "rows": sorted(kept + rows, key=lambda row: (row["family"], row["dtype"], row["n"], row["m"], row["k"]))}
    parse_table(merged)
    return merged


def measuring_on(data: dict, device: str) -> dict:
    """``data`` (a table's JSON) ready for rows measured on ``device``: its own GPU named, checks gone.

    Raises:
        TableError: where the table's rows were measured on another GPU.
    """
    if data.get("device", device) != device:
        raise TableError(f"the table's rows were measured on {data['device']}, not this {device}: measure a table "
                         "of this GPU into a new file (benchmarks/tsm2.py --table FILE first)")
    return {**{key: value for key, value in data.items() if key != "checked_on"}, "device": device}


def with_check(data: dict, device: str, check: str, evidence: dict) -> dict:
    """``data`` with ``device`` added to the GPUs its ``check`` (GRID_CHECK or IN_PLACE_CHECK) held on,
    ``evidence`` (what was run and measured) beside it; an earlier entry of the same GPU and check goes."""
    if check not in (GRID_CHECK, IN_PLACE_CHECK):
        raise ValueError(f"check must be {GRID_CHECK!r} or {IN_PLACE_CHECK!r}, not {check!r}")
    if data.get("device") is None:
        raise TableError("the table names no GPU, so it holds on every one: a check has nothing to record")
    if data["device"] == device:
        raise TableError(f"the table's own GPU is {device}: a check records another GPU")
    kept = [entry for entry in data.get("checked_on", ()) if (entry["device"], entry["checks"]) != (device, check)]
    return {**data, "checked_on": [*kept, {"device": device, "checks": check, **evidence}]}


def misses(results: list[dict], least: float) -> list[dict]:
    """The results of a check (``dispatch_grid.check``'s or ``inplace_table.check``'s) that do not
    hold a table's choice on this GPU: a faster kernel chosen that measured below ``least`` times cuBLAS.
    Where cuBLAS is kept the same call runs on both sides, so those shapes say nothing."""
    return [result for result in results if result["chosen"] and result["ratio"] < least]


def record_check(path: Path, device: str, check: str, results: list[dict], by: str) -> str:
    """``device`` added to the GPUs the table at ``path`` holds for (its ``check``), where ``results``
    (a check over everything it covers, the table on trial) hold its choices; what was done."""
    data = table_json(path)
    table = parse_table(data)
    chosen = [result["ratio"] for result in results if result["chosen"]]
    if table.not_held_on(device, check) is None:
        return f"{path} already holds for this {device}; nothing recorded"
    if not chosen:  # (an entry of no measurement had read as a ratio of 0)
        return f"the check chose no faster kernel on this {device}: nothing to record"
    if misses(results, table.min_speedup):
        return f"the table did not hold on this {device}; nothing recorded"
    evidence = {"date": time.strftime("%Y-%m-%d"), "by": by, "shapes": len(results), "faster_kernel_at": len(chosen),
                "least_ratio_there": round(min(chosen), 3)}
    write_atomic(path, json.dumps(with_check(data, device, check, evidence), indent=1) + "\n")
    return f"{path} now holds for this {device} too"
