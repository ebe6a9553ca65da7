"""The distributed plan as ``bilinear plan`` prints it: one line per rank and task, or JSON data."""

from __future__ import annotations

from ..diagnostics import counted
from ..ir import block_name, format_coefficient
from ..report_sizes import bytes_text, flops_text
from .plan import Plan


def _term(side: str, index: tuple[int, int], c, spaced: bool) -> str:
    """``- 1/8*B12`` (``spaced``: in an operand sum) or ``-1/8*C12`` (a target)."""
    sign = "-" if c < 0 else "+"
    scale = "" if abs(c) == 1 else f"{format_coefficient(abs(c))}*"
    return f"{sign}{' ' if spaced else ''}{scale}{block_name(side, index[0] + 1, index[1] + 1)}"


class _Terms(dict):
    """Each term's text, written once: ⟨3,3,6;40⟩²'s 1,600 products hold 331,776 terms, and its
    text had formatted 212,992 coefficients one by one (keyed by the coefficient's numerator and
    denominator: they hash faster than the Fraction)."""

    def joined(self, side: str, coefficients, spaced: bool) -> str:
        texts = []
        for index, c in coefficients:
            key = (side, index, c.numerator, c.denominator, spaced)
            text = self.get(key)
            if text is None:
                text = self[key] = _term(side, index, c, spaced)
            texts.append(text)
        return " ".join(texts)


def _sum(side: str, coefficients, terms: _Terms) -> str:
    text = terms.joined(side, coefficients, spaced=True)
    return text[2:] if text.startswith("+ ") else text


def _products_share(plan: Plan, rank: int) -> float:
    """The products' worth of rows ``rank`` multiplies: where a block has fewer rows than bands, a
    band holds one row or none, so its tasks' rows, not their bands, say it (by bands where the
    core is empty: no rows at all)."""
    rows = plan.block[0]
    if rows == 0:
        return sum(t.band_count for t in plan.tasks_of(rank)) / plan.bands
    return sum(stop - start for start, stop in map(plan.task_rows, plan.tasks_of(rank))) / rows


def describe_plan(plan: Plan, itemsize: int, roles: tuple[bool, bool]) -> list[str]:
    """One line per rank, then one per task: what the rank forms, multiplies and adds where; the
    workspace with local products of ``roles`` (writes its inputs, accumulates: see local_roles)."""
    from .execute import rank_workspace_bytes

    d = plan.decomposition
    empty = 0 in plan.core  # (too small a product for the grid: the fringes are all of it)
    lines = [
        f"{d.name}: {d.rank} products over a {d.rows}x{d.inner}x{d.cols} block grid, {counted(plan.ranks, 'rank')}, "
        f"{counted(plan.bands, 'band')} per block; "
        f"core {'x'.join(map(str, plan.core))} of {'x'.join(map(str, plan.shape))}"
        + (" (empty: the fringe products hold all the work)" if empty else "")
    ]
    terms = _Terms()
    for rank in range(plan.ranks):
        share = _products_share(plan, rank)
        lines.append(
            f"rank {rank}: {share:g} product{'' if share == 1 else 's'}{' of the empty core' if empty else ''}, "
            f"{flops_text(plan.flops_of(rank))}, "
            f"workspace {bytes_text(rank_workspace_bytes(plan, rank, itemsize, *roles))}"
        )
        for task in plan.tasks_of(rank):
            p = d.products[task.product]
            rows = "all rows" if task.bands == (0, plan.bands) else f"bands {task.bands[0]}..{task.bands[1] - 1}"
            targets = terms.joined("C", p.w, spaced=False)
            lines.append(f"  M{task.product + 1} ({rows}): ({_sum('A', p.u, terms)}) * ({_sum('B', p.v, terms)}) -> {targets}")
        for fringe in plan.fringe_of(rank):
            dims = plan.fringe_dims(fringe.kind)
            lines.append(
                f"  fringe {fringe.kind}: classical {'x'.join(map(str, dims))}" + (" (empty)" if 0 in dims else "")
            )
    source = {"replicated": "every rank holds A and B", "root": "A and B broadcast from rank 0",
              "block2d": "each rank holds its 2D block of A and B, gathered by every rank"}[plan.inputs]
    reduce = {"replicated": "all-reduce of the partial C", "root": "reduction of the partial C to rank 0",
              "block2d": "the partial C summed into each rank's 2D block"}[plan.output]
    lines.append(f"data: {source}; {reduce}")
    return lines


#: The version of ``plan --format json``'s layout (as verify's and the manifest's): raised when a key changes meaning.
PLAN_SCHEMA_VERSION = 1


def plan_as_data(plan: Plan, itemsize: int, roles: tuple[bool, bool]) -> dict:
    """The plan as JSON data, with what the text form says per rank: flops and workspace bytes at
    ``itemsize`` (--dtype's; the JSON had been the same for float32 and float64)."""
    from .execute import rank_workspace_bytes

    d = plan.decomposition
    return {
        "schema_version": PLAN_SCHEMA_VERSION,
        "dtype_bytes": itemsize,
        "per_rank": [{"rank": rank, "flops": plan.flops_of(rank),
                      "workspace_bytes": rank_workspace_bytes(plan, rank, itemsize, *roles)}
                     for rank in range(plan.ranks)],
        "decomposition": d.name,
        "grid": [d.rows, d.inner, d.cols],
        "shape": list(plan.shape),
        "core": list(plan.core),
        "ranks": plan.ranks,
        "bands": plan.bands,
        "inputs": plan.inputs,
        "output": plan.output,
        # terms as tuples, not copied into lists (Winograd's 7⁴ products hold 115,248 of them)
        "products": [{"u": [(i, str(c)) for i, c in p.u], "v": [(i, str(c)) for i, c in p.v],
                      "w": [(i, str(c)) for i, c in p.w]} for p in d.products],
        "tasks": [{"rank": t.rank, "product": t.product, "bands": t.bands} for t in plan.tasks],
        "fringe": [{"rank": f.rank, "kind": f.kind, "dims": list(plan.fringe_dims(f.kind))} for f in plan.fringe],
    }
