"""Rendering verification reports as text, Markdown or JSON.

:func:`report_data` computes everything a reader sees into plain data (the
JSON form); the text and Markdown renderers only arrange it.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

from .diagnostics import Diagnostic, counted, markdown_code, markdown_text, render, shown
from .output import json_ready
from .report_sizes import at_n, bytes_text, level_bytes, split_part
from .report_rings import (approximate_status, approximate_text, complex_status, complex_text,
                           modular_status, modular_text, ring_details)
from .verify import AlgorithmReport, Report, ScheduleReport
from .verify.counts import algorithm_flops
from .verify.rings import ApproximateReport, ComplexReport, ModularReport
from .verify.stability import as_float

FLOATING_POINT_NOTE = ("restoration is exact in this proof; in floating point (a+b)-b may differ from a in the last "
                       "bits, so `bilinear run` measures the restoration error instead of claiming bitwise recovery")


def _plain(value: Fraction) -> int | float:
    """An exact quantity as JSON shows it: whole numbers stay whole (up to 2^53; larger ones
    become floats, inf beyond their range, so text formatting never overflows)."""
    if value.denominator == 1 and abs(value.numerator) <= 1 << 53:
        return int(value)
    return round(as_float(value), 4)


STABILITY_LEVELS = 3  # levels of recursion the report shows the error growth for


def _diagnostics(items: tuple[Diagnostic, ...]) -> list[dict]:
    return [d.to_json() for d in items]


def _algorithm_data(entry: AlgorithmReport, n: int, dtype: str) -> dict:
    algorithm, counts = entry.algorithm, entry.counts
    leaf, adds = algorithm_flops(algorithm, n, n, n)
    return {
        "kind": "algorithm",
        "name": algorithm.name,
        "shape": algorithm.signature,
        "ok": entry.ok,
        "errors": _diagnostics(entry.errors),
        "warnings": _diagnostics(entry.warnings),
        "products": counts.products, "unused_products": counts.unused_products,
        "classical_products": counts.classical_products,
        "speedup_per_level": None if counts.speedup_per_level is None else round(counts.speedup_per_level, 4),
        "additions": counts.additions,
        "additions_by_side": dict(zip(("A", "B", "C"), counts.additions_by_side)),
        "additions_unshared": counts.additions_unshared,
        "growth_factor": round(entry.stability.growth_factor, 4),
        "e_max": _plain(entry.stability.e_max),
        "q": entry.stability.q,
        "error_growth": [
            {"levels": g.levels, "growth_factor": round(g.growth_factor, 4), "e_max": _plain(g.e_max), "q": g.q}
            for g in entry.stability.per_level(STABILITY_LEVELS)
        ],
        "one_level": {"n": n, "dtype": dtype, "leaf_flops": leaf, "addition_flops": adds,
                      "part": split_part(algorithm.shape, n)},
    }


def _schedule_data(entry: ScheduleReport, n: int, dtype: str) -> dict:
    schedule, algorithm, counts = entry.schedule, entry.algorithm, entry.counts

    def bytes_of(blocks: dict[str, int]) -> int:
        return level_bytes(algorithm.shape, blocks, n, dtype)

    compiled = entry.compiled
    return {
        "kind": "schedule",
        "name": schedule.name,
        "algorithm": algorithm.name,
        "properties": sorted(schedule.properties),
        "computes": "C = A*B" if schedule.overwrites_c else "C += A*B",
        "ok": entry.ok,
        "errors": _diagnostics(entry.errors),
        "warnings": _diagnostics(entry.warnings),
        "stages": counts.stages,
        "elementwise_stages": counts.elementwise_stages,
        "product_stages": counts.product_stages,
        "product_statements": counts.product_statements,
        "target_updates": counts.target_updates,
        "products": [
            {"stage": use.stage, "statement": str(use.statement), "product": use.product, "scale": str(use.scale)}
            for use in entry.product_uses
        ],
        "workspace_blocks_per_level": entry.workspace,
        "workspace_bytes_one_level": bytes_of(entry.workspace),
        "elementwise_bytes_one_level": bytes_of(counts.elementwise_blocks_moved),  # stage by stage, as written
        "compiled": None if compiled is None else {
            "leaf": compiled.leaf, "fuse": compiled.fuse, "refused": compiled.refused,
            "elementwise_bytes_one_level":
                None if compiled.counts is None else bytes_of(compiled.counts.elementwise_blocks_moved),
            "from_zero_elementwise_bytes_one_level":
                None if compiled.from_zero is None else bytes_of(compiled.from_zero.elementwise_blocks_moved),
            "elementwise_launches_one_level": None if compiled.counts is None else compiled.counts.elementwise_stages,
            "launches_one_level": None if compiled.counts is None else compiled.counts.launches(compiled.leaf == "fused"),
            "from_zero_launches_one_level":
                None if compiled.from_zero is None else compiled.from_zero.launches(compiled.leaf == "fused")},
        "shape_conditions": [str(condition) for condition in entry.shape_conditions],
        "restores": schedule.restores,
        "n": n,
        "part": split_part(algorithm.shape, n),
        "dtype": dtype,
    }


def _approximate_data(entry: ApproximateReport) -> dict:
    scheme = entry.scheme
    return {
        "kind": "approximate",
        "name": scheme.name,
        "shape": scheme.shape.signature(scheme.rank),
        "ok": entry.ok,
        "holds_in_the_limit": entry.holds,
        "parameter": str(scheme.parameter),
        "error_order": entry.order,
        "cancellation": entry.cancellation,
        "errors": _diagnostics(entry.errors),
        "warnings": _diagnostics(entry.warnings),
    }


def _modular_data(entry: ModularReport) -> dict:
    algorithm = entry.scheme.algorithm
    return {
        "kind": "modular",
        "name": algorithm.name,
        "shape": algorithm.signature,
        "ok": entry.ok,
        "modulus": entry.scheme.modulus,
        "modulus_reason": entry.scheme.reason,
        "holds_modulo": entry.holds,
        "wrong_over_q": len(entry.rational_errors),
        "exact_over_q": entry.exact_over_q,
        "errors": _diagnostics(entry.errors),
        "warnings": _diagnostics(entry.warnings),
    }


def _complex_data(entry: ComplexReport) -> dict:
    scheme = entry.scheme
    return {
        "kind": "complex",
        "name": scheme.name,
        "shape": scheme.shape.signature(scheme.rank),
        "ok": entry.ok,
        "holds_over_q_i": entry.holds,
        "why_not_compiled": scheme.not_exact_because,
        "errors": _diagnostics(entry.errors),
        "warnings": _diagnostics(entry.warnings),
    }


def _entry_data(entry, n: int, dtype: str) -> dict:
    if isinstance(entry, AlgorithmReport):
        return _algorithm_data(entry, n, dtype)
    if isinstance(entry, ScheduleReport):
        return _schedule_data(entry, n, dtype)
    if isinstance(entry, ApproximateReport):
        return _approximate_data(entry)
    if isinstance(entry, ComplexReport):
        return _complex_data(entry)
    return _modular_data(entry)


#: Bumped whenever a key of the JSON report changes meaning or goes away.
REPORT_SCHEMA_VERSION = 1


def report_data(report: Report, n: int = 8192, dtype: str = "float64") -> dict:
    """The report as plain data (the ``--format json`` output)."""
    entries = [_entry_data(e, n, dtype) for e in report.entries]
    return {"schema_version": REPORT_SCHEMA_VERSION, "file": report.path, "ok": report.ok, "entries": entries}


def to_json(report: Report, n: int = 8192, dtype: str = "float64") -> str:
    """The report as strict JSON: a quantity past a float's range (a 400-digit coefficient's growth
    factor) is null."""
    return json_text(report_data(report, n, dtype))


def json_text(data) -> str:
    """``data`` as strict JSON text, non-ASCII as itself; a file name's bytes that are not UTF-8 (held as
    lone surrogates, which a UTF-8 stream writes back as those bytes) escaped as ``\\udcff``."""
    text = json.dumps(json_ready(data), indent=2, ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda lone: f"\\u{ord(lone.group()):04x}", text)


# --- text ---------------------------------------------------------------------------


def _status(ok: bool) -> str:
    return "verified" if ok else "FAILED"


def _products(data: dict) -> str:
    """"8, of which 1 never used" (the flops count the 7 computed), or "7"."""
    unused = data.get("unused_products")
    return f"{data['products']}, of which {unused} never used" if unused else str(data["products"])


def _per_level(data: dict) -> str:
    """Classical products over those computed, in words: "1.1429x fewer", "1.5x more", "as many"."""
    classical, computed = data["classical_products"], data["products"] - (data.get("unused_products") or 0)
    more = f"{round(computed / classical, 4):g}x more"  # from the counts: 1/0.6667 had read 1.4999
    return "as many" if computed == classical else f"{data['speedup_per_level']}x fewer" if computed < classical else more


def _algorithm_text(data: dict) -> list[str]:
    lines = [f"algorithm {data['name']} {data['shape']}: {_status(data['ok'])}"]
    if data["ok"]:
        lines.append("  Brent equations: every C block equals its classical sum exactly")
    sides = data["additions_by_side"]
    lines += [
        f"  products: {_products(data)}"
        f" (classical {data['classical_products']}"
        + (f"; {_per_level(data)} multiplications per level)" if data["speedup_per_level"] else ")"),
        f"  additions: {data['additions']} as written (A side {sides['A']}, B side {sides['B']}, "
        f"C side {sides['C']}); {data['additions_unshared']} without sharing",
        f"  stability: growth factor {data['growth_factor']} per level (L levels: its L-th power); "
        f"e_max {data['e_max']}, Q {data['q']} (Ballard et al. 2016)",
        "  error growth after L levels (γ^L, e_max^L, L·Q): "
        + "; ".join(f"L={g['levels']}: {g['growth_factor']:.6g}, {g['e_max']:g}, {g['q']}" for g in data["error_growth"]),
    ]
    one = data["one_level"]
    lines.append(f"  one level at {at_n(one['n'], one['part'])}: {one['leaf_flops'] / 1e9:.1f} GFLOP in products, "
                 f"{one['addition_flops'] / 1e9:.3f} GFLOP in additions as written")
    return lines


def _part_cell(one: dict) -> str:
    """A markdown cell's note of the part a level splits, where it is not all of n."""
    n = one["n"]
    return "" if one["part"] == [n, n, n] else f" (on {'×'.join(map(str, one['part']))})"


def _schedule_text(data: dict) -> list[str]:
    props = ", ".join(data["properties"]) or "no properties"
    lines = [f"schedule {data['name']} for {data['algorithm']} [{props}]: {_status(data['ok'])}"]
    lines.append(f"  computes {data['computes']}; {counted(data['stages'], 'stage')} "
                 f"({data['elementwise_stages']} element-wise, {data['product_stages']} with products)")
    for use in data["products"]:
        scale = "" if use["scale"] == "1" else f" x {use['scale']}"
        matched = f"{use['product']}{scale}" if use["product"] else f"no product of {data['algorithm']}"
        lines.append(f"    {use['stage']}: {use['statement']}  = {matched}")
    workspace = data["workspace_blocks_per_level"]
    blocks = ", ".join(counted(count, f"{like} block") for like, count in workspace.items()) or "none"
    lines.append(
        f"  workspace per level: {blocks} = {bytes_text(data['workspace_bytes_one_level'])} at "
        f"{at_n(data['n'], data['part'])} {data['dtype']}"
    )
    lines.append(f"  element-wise traffic per level at {at_n(data['n'], data['part'])}: "
                 f"{bytes_text(data['elementwise_bytes_one_level'])} "
                 f"as written{_compiled_traffic(data['compiled'], data['computes'])}")
    if (launches := _compiled_launches(data["compiled"], data["computes"])) is not None:
        lines.append(f"  kernel launches per level, {launches}")
    for condition in data["shape_conditions"]:
        lines.append(f"  requires {condition}")
    if data["restores"] and data["ok"]:
        lines.append("  restore: every A and B block ends equal to its original")
        lines.append(f"  note: {FLOATING_POINT_NOTE}")
    return lines


def _compiled_traffic(compiled: dict | None, computes: str) -> str:
    if compiled is None:
        return ""
    if compiled["refused"]:
        return f"; compiled ({compiled['leaf']} leaves): refused, {compiled['refused']} (--leaf fused runs it)"
    text = (f"; compiled ({compiled['leaf']} leaves, {'fused' if compiled['fuse'] else 'unfused'} passes): "
            f"{bytes_text(compiled['elementwise_bytes_one_level'])} for {computes.replace('*', '·')}")
    zero = compiled["from_zero_elementwise_bytes_one_level"]
    return text if zero is None else text + f", {bytes_text(zero)} where C starts at zero"


def _compiled_launches(compiled: dict | None, computes: str) -> str | None:
    """"compiled (cublas leaves, fused passes): 12 (5 element-wise, 7 GEMMs) for C += A·B, 12 where C
    starts at zero" (msmes's), or None where nothing was compiled to count."""
    if compiled is None or compiled["launches_one_level"] is None:
        return None
    launches, element_wise = compiled["launches_one_level"], compiled["elementwise_launches_one_level"]
    products, zero = launches - element_wise, compiled["from_zero_launches_one_level"]
    text = f"compiled ({compiled['leaf']} leaves, {'fused' if compiled['fuse'] else 'unfused'} passes): "
    if compiled["leaf"] == "ozaki":  # a leaf is many launches, as many as the moduli a call chooses
        return text + (f"{element_wise} element-wise and {products} ozaki leaves (each runs its own passes and an int8 "
                       f"GEMM per modulus and tile) for {computes.replace('*', '·')}"
                       + ("" if zero is None else f", {zero - products} element-wise where C starts at zero"))
    text += (f"{launches} ({element_wise} element-wise, {products} {'product kernels' if compiled['leaf'] == 'fused' else 'GEMMs'})"
             f" for {computes.replace('*', '·')}")
    return text if zero is None else text + f", {zero} where C starts at zero"


_TEXT = {
    "algorithm": _algorithm_text,
    "schedule": _schedule_text,
    "approximate": approximate_text,
    "modular": modular_text,
    "complex": complex_text,
}


def to_text(report: Report, n: int = 8192, dtype: str = "float64") -> str:
    data = report_data(report, n, dtype)
    out: list[str] = []
    for entry, raw in zip(data["entries"], report.entries):
        for diagnostic in (*raw.errors, *raw.warnings):
            out.append(render(diagnostic))
        out += _TEXT[entry["kind"]](entry)
        out.append("")
    out.append(f"{shown(report.path)}: {_tally(data['entries'])}")
    return "\n".join(out)


def _tally(entries: list[dict]) -> str:
    """How many verified, held only modulo p or in the limit (never compiled, but not wrong), or failed."""
    only = {"modular": lambda e: modular_status(e).replace("holds", "holding"),
            "approximate": lambda e: "holding in the limit only" if e["error_order"] is not None
            else f"holding for every {e['parameter']}",
            "complex": lambda e: "holding over Q(i) only"}
    held = [only[e["kind"]](e) for e in entries
            if not e["ok"] and (e.get("holds_modulo") or e.get("holds_in_the_limit") or e.get("holds_over_q_i"))]
    counts = {"verified": sum(e["ok"] for e in entries), **{kind: held.count(kind) for kind in dict.fromkeys(held)}}
    return ", ".join(f"{count} {kind}" for kind, count in counts.items()) + f", {len(entries) - sum(counts.values())} failed"


# --- Markdown -------------------------------------------------------------------------


def to_markdown(report: Report, n: int = 8192, dtype: str = "float64") -> str:
    data = report_data(report, n, dtype)
    out = [f"# Verification report: {markdown_code(report.path)}", ""]
    algorithms = [e for e in data["entries"] if e["kind"] == "algorithm"]
    schedules = [e for e in data["entries"] if e["kind"] == "schedule"]
    inexact = [e for e in data["entries"] if e["kind"] in ("approximate", "modular", "complex")]
    if algorithms:
        out += [
            "| algorithm | shape | status | products | additions (shared / unshared) | growth factor | e_max | Q | "
            f"GFLOP of one level at n={n}: products / additions as written |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {markdown_text(a['name'])} | {a['shape']} | {_status(a['ok'])} | {_products(a)} | "
            f"{a['additions']} / {a['additions_unshared']} | {a['growth_factor']} | {a['e_max']} | {a['q']} | "
            f"{a['one_level']['leaf_flops'] / 1e9:.1f} / {a['one_level']['addition_flops'] / 1e9:.3f}"
            f"{_part_cell(a['one_level'])} |"
            for a in algorithms
        ]
        out.append("")
    if inexact:
        status = {"approximate": approximate_status, "modular": modular_status, "complex": complex_status}
        out += ["| scheme | shape | kind | status | details |", "|---|---|---|---|---|"]
        out += [f"| {markdown_text(e['name'])} | {e['shape']} | {e['kind']} | {status[e['kind']](e)} | "
                f"{markdown_text(ring_details(e))} |" for e in inexact]
        out.append("")
    if schedules:
        out += [
            f"| schedule | for | computes | status | stages | workspace per level at n={n} {dtype} | "
            f"element-wise traffic per level at n={n} {dtype} | kernel launches per level |",
            "|---|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {markdown_text(s['name'])} | {markdown_text(s['algorithm'])} | `{s['computes']}` | {_status(s['ok'])} | {s['stages']} | "
            f"{bytes_text(s['workspace_bytes_one_level'])}{_part_cell(s)} | {bytes_text(s['elementwise_bytes_one_level'])} "
            f"as written{markdown_text(_compiled_traffic(s['compiled'], s['computes']))}{_part_cell(s)} | "
            f"{_compiled_launches(s['compiled'], s['computes']) or '—'} |"
            for s in schedules
        ]
        out.append("")
        # a result that holds only where blocks have some shape is said as the text report says it
        out += [f"- {markdown_text(s['name'])} requires {markdown_text(condition)}" for s in schedules for condition in s["shape_conditions"]]
        out += [""] if any(s["shape_conditions"] for s in schedules) else []
    problems = [d for e in data["entries"] for d in (*e["errors"], *e["warnings"])]
    if problems:
        out += ["## Findings", ""]
        for d in problems:
            out.append(f"- {_markdown_place(d)}{d['severity']}: {markdown_text(d['message'])}")
            out += [f"  - note: {markdown_text(note)}" for note in d.get("notes", ())]
        out.append("")
    return "\n".join(out)


def _markdown_place(diagnostic: dict) -> str:
    """Where a finding is, as the text report says it (file:line:column), and nothing where it is nowhere."""
    place = ":".join(str(diagnostic[key]) for key in ("file", "line", "column") if key in diagnostic)
    return f"{markdown_code(place)} " if place else ""


RENDERERS = {"text": to_text, "md": to_markdown, "json": to_json}

__all__ = ["RENDERERS", "report_data", "to_json", "to_markdown", "to_text"]
