"""The in-place rows of bilinear/data/dispatch.json: MSMES against cuBLAS, for ``matmul(inplace=True)``.

    python3 benchmarks/inplace_table.py --table bilinear/data/dispatch.json   # measure, write the rows
    python3 benchmarks/inplace_table.py --check --out results/                # matmul(inplace=True) vs cuBLAS
    python3 benchmarks/inplace_table.py --table bilinear/data/dispatch.json --only 24576x24576x24576  # one shape's rows

--table times MSMES (in place: no workspace, cuBLAS leaves; A and B overwritten and restored up to
rounding) at 1, 2 and 3 levels, and msmes2 (its two levels as one schedule) at 1 and 2, against cuBLAS at every grid shape of benchmarks/dispatch_grid.py
that is not tall-and-skinny, called as ``matmul(inplace=True)`` calls it (directly, not as a
graph), interleaved after a sustained warm-up (dispatch_grid's timer), and stores each shape's
fastest schedule and level count with its speedup.  ``matmul(inplace=True)`` runs MSMES only where the nearest
row measured at least the table's ``min_speedup``; elsewhere it multiplies as without ``inplace``
(before, it ran MSMES L1 wherever a fast scheme had won, and MSMES L1 measured 0.944 at FP64 8192).
--check (a fresh process, after the table is written) times ``bilinear.matmul(..., inplace=True)``
against ``cupy.matmul`` at the same shapes, by the table $BILINEAR_DISPATCH_TABLE names (the committed
one without it).  On a GPU the table was not measured on, it checks the table's in-place choices
there on trial, and --record (both dtypes, no --only) times the shapes where they run MSMES (elsewhere
``inplace=True`` changes nothing: dispatch_grid.py's check covers them) and, where each measured at
least the table's min_speedup, adds this GPU to the in-place rows' checked_on.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cupy

import bilinear
from bilinear.dispatch import IN_PLACE_CHECK, forget_decisions, in_place_choice, load_table, parse_table, table_json, table_path
from bilinear.dispatch_checks import TableError
from bilinear.dispatch_writes import measuring_on, record_check
from bilinear.measure import error_bound, relative_error
from bilinear.output import write_atomic

from dispatch_grid import (GRID, TABLE_ONLY, _gpu_name, _in_grid_order, _inputs, _interleaved, _shape, _shape_of,
                           check_on_trial, no_row_because, selected)

ROOT = Path(__file__).resolve().parent.parent
# (schedule, levels, Strassen levels they nest): a level of msmes2 is two of msmes's
CANDIDATES = (("msmes", 1, 1), ("msmes", 2, 2), ("msmes", 3, 3), ("msmes2", 1, 2), ("msmes2", 2, 4))
MSMES_GROWTH = 1.9  # Strassen's error growth per level over the classical product's (bilinear run's bound)


def _shapes(table, dtypes: list[str], only: Sequence[tuple[int, int, int]] | None) -> list[tuple[str, int, int, int]]:
    """What a run measures or checks (dispatch_grid's selection) but for what gets no fast-scheme row."""
    shapes = []
    for dtype, m, k, n in selected(GRID + TABLE_ONLY, dtypes, only):
        why = no_row_because(m, k, n, table)
        if why is None:
            shapes.append((dtype, m, k, n))
        elif only is not None:  # a shape asked for is not passed over without a word
            print(f"{dtype} {m}x{k}x{n}: no row ({why})", flush=True)
    return shapes


def _compiled(dtype: str) -> dict:
    """Every candidate, by its label (``msmes2 L1``): the product and the Strassen levels it nests."""
    return {f"{scheme} L{levels}": (bilinear.compile(ROOT / "algorithms" / f"{scheme}.bl", dtype=dtype, levels=levels), nested)
            for scheme, levels, nested in CANDIDATES}


def _measured_row(dtype: str, m: int, k: int, n: int, products: dict, repeat: int) -> dict:
    """Every level count timed against cuBLAS; one whose product is outside the error bound never wins."""
    A, B, C = _inputs(dtype, m, k, n)
    out = cupy.zeros_like(C)
    reference = cupy.matmul(A, B)
    calls, speedups = {"cuBLAS": lambda: cupy.matmul(A, B, out=C)}, {}
    for label, (product, nested) in products.items():
        product(A, B, out=out)
        if relative_error(out, reference, A, B) <= error_bound(dtype, k, MSMES_GROWTH, nested):
            calls[label] = lambda product=product: product(A, B, out=out)
    ms = _interleaved(calls, repeat)
    speedups = {label: round(ms["cuBLAS"] / time_ms, 4) for label, time_ms in ms.items() if label != "cuBLAS"}
    best = max(speedups, key=speedups.get)
    scheme, levels = best.split(" L")
    return {"dtype": dtype, "m": m, "k": k, "n": n, "scheme": scheme, "levels": int(levels), "speedup": speedups[best],
            "candidates": speedups}


def measure_table(path: Path, repeat: int, dtypes: list[str],
                  only: Sequence[tuple[int, int, int]] | None = None) -> None:
    """The in-place rows of ``dtypes`` (of the shapes ``only`` names: m, k, n) measured anew into the
    table at ``path``; other rows stay.  The table is written after every row, whole, by a rename,
    each measured row replacing its shape's old one: a run cut off keeps what it measured and every
    row it did not reach.  A whole run then drops its dtypes' rows it no longer measures."""
    data = measuring_on(table_json(path), _gpu_name())
    table = parse_table(data)
    previous = data.get("inplace", {})
    rows = list(previous.get("rows", []))
    done, compiled = [], {}

    def write(whole_run: bool) -> None:
        command = f"python benchmarks/inplace_table.py --table {path} --dtype {' '.join(dtypes)} --repeat {repeat}"
        if not whole_run:
            command += " --only " + " ".join(dict.fromkeys(f"{m}x{k}x{n}" for _, m, k, n in done))
        # only a finished whole run of both dtypes measured every row it leaves
        alone = whole_run and set(dtypes) >= {"float64", "float32"}
        generated_by = command if alone or not previous.get("generated_by") else f"{previous['generated_by']}; then {command}"
        data["inplace"] = {"rows": _in_grid_order(rows), "timed_as": "direct calls, as matmul(inplace=True) makes them",
                           "generated_by": generated_by, "date": time.strftime("%Y-%m-%d %H:%M:%S")}
        write_atomic(path, json.dumps(data, indent=1) + "\n")

    for shape in _shapes(table, dtypes, only):
        if shape[0] not in compiled:
            compiled[shape[0]] = _compiled(shape[0])
        row = _measured_row(*shape, compiled[shape[0]], repeat)
        rows = [old for old in rows if _shape_of(old) != shape] + [row]
        done.append(shape)
        print(f"{shape[0]} {shape[1]}x{shape[2]}x{shape[3]}: best {row['scheme']} L{row['levels']} {row['speedup']:.3f}x  "
              f"{row['candidates']}", flush=True)
        write(whole_run=False)
        cupy.get_default_memory_pool().free_all_blocks()
    if only is None and done:
        rows = [row for row in rows if row["dtype"] not in dtypes or _shape_of(row) in done]
        write(whole_run=True)


def check(repeat: int, dtypes: list[str], only: Sequence[tuple[int, int, int]] | None = None,
          in_place_only: bool = False) -> list[dict]:
    """matmul(inplace=True) against cuBLAS at every shape a whole --table run measures, or at those of
    them ``only`` names; with ``in_place_only``, at those where the table runs MSMES."""
    forget_decisions()
    device, results = _gpu_name(), []
    shapes = _shapes(load_table(), dtypes, only)
    if in_place_only:
        shapes = [shape for shape in shapes if in_place_choice(*shape[1:], shape[0], device=device) is not None]
    for dtype, m, k, n in shapes:
        A, B, C = _inputs(dtype, m, k, n)
        C2 = cupy.zeros_like(C)
        chosen = in_place_choice(m, k, n, dtype, device=device)
        bilinear.matmul(A, B, out=C2, inplace=True)  # compiles what it chose
        ms = _interleaved({"cuBLAS": lambda: cupy.matmul(A, B, out=C),
                           "matmul": lambda: bilinear.matmul(A, B, out=C2, inplace=True)}, repeat)
        ratio = ms["cuBLAS"] / ms["matmul"]
        choice = f"{chosen[0]} L{chosen[1]}" if chosen else "as without inplace"
        results.append({"dtype": dtype, "m": m, "k": k, "n": n, "choice": choice, "chosen": chosen is not None,
                        "ratio": ratio,
                        "cublas_ms": ms["cuBLAS"], "matmul_ms": ms["matmul"]})
        print(f"{dtype} {m:>6}x{k:>6}x{n:>6}  {choice:<20} ratio {ratio:6.3f}  "
              f"(cuBLAS {ms['cuBLAS']:8.3f} ms, matmul {ms['matmul']:8.3f} ms)", flush=True)
        A = B = C = C2 = None
        cupy.get_default_memory_pool().free_all_blocks()
    if results:  # none where every shape named gets no row
        print(f"worst ratio {min(r['ratio'] for r in results):.3f}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, help="measure the in-place rows into this dispatch table")
    parser.add_argument("--check", action="store_true", help="time matmul(inplace=True) against cuBLAS")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dtype", nargs="+", default=["float64", "float32"], choices=["float64", "float32"],
                        help="measure (--table) only these dtypes' rows, keeping the others', or check only these")
    parser.add_argument("--only", nargs="+", type=_shape, metavar="MxKxN",
                        help="measure (--table) only these shapes' rows, keeping the others', or check only these")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--record", action="store_true",
                        help="--check where the table runs MSMES, on a GPU it was not measured on: add the GPU to "
                             "the table's checked_on (in-place rows) where its choices held")
    args = parser.parse_args()
    if args.record and not (args.check and args.only is None and set(args.dtype) == {"float64", "float32"}):
        parser.error("--record needs --check of every shape (no --only, both dtypes)")
    try:
        if args.table:
            measure_table(args.table, args.repeat, args.dtype, args.only)
        if args.check:
            checked(args.table or table_path(), args)
    except TableError as error:
        sys.exit(f"inplace_table.py: {error}")


def checked(path: Path, args) -> None:
    """--check of the table at ``path`` (on trial on a GPU it does not hold for), and --record."""
    device = _gpu_name()
    results = check_on_trial(path, device, IN_PLACE_CHECK,
                             lambda: check(args.repeat, args.dtype, args.only, in_place_only=args.record))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "inplace_check.json").write_text(json.dumps(results, indent=1) + "\n")
    if args.record:
        by = f"python benchmarks/inplace_table.py --check --record --repeat {args.repeat}"
        print("--record:", record_check(path, device, IN_PLACE_CHECK, results, by))


if __name__ == "__main__":
    main()
