"""Name resolution and static checks: raw definitions to checked IR.

Assumes: the raw definitions of :mod:`bilinear.frontend.parser`.
Ensures: every name in an :class:`~bilinear.ir.Algorithm` is a block inside
its shape or a sum or product it defines, without cycles; sums do not mix A,
B and product terms; products are (A-side) * (B-side); every C block has one
output.  Every buffer in a :class:`~bilinear.ir.Schedule` is a block or a
declared temporary, and the schedule's properties are consistent with what it
writes.  All problems found in one definition are reported together.
"""

from __future__ import annotations

import difflib
import re

from ..diagnostics import BilinearError, Diagnostic
from ..ir import (
    PROPERTIES,
    Algorithm,
    Form,
    Multiply,
    Output,
    Product,
    Schedule,
    Shape,
    Span,
    block_name,
    operand_of,
    parse_block,
)
from .raw import RawAlgorithm, RawDefinition, RawSchedule, RawTable

_ONE_INDEX_BLOCK = re.compile(r"^[ABC]\d$|^[ABC]\d{3,}$")


class _Findings:
    def __init__(self) -> None:
        self.errors: list[Diagnostic] = []

    def error(self, message: str, span: Span | None, *notes: str) -> None:
        self.errors.append(Diagnostic(message, span, notes=notes))

    def raise_if_any(self) -> None:
        if self.errors:
            raise BilinearError(*self.errors)


def _suggest(name: str, candidates) -> tuple[str, ...]:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    return (f"did you mean {' or '.join(close)}?",) if close else ()


def _block_range(shape: Shape, operand: str) -> str:
    rows, cols = shape.grid(operand)
    return f"{block_name(operand, 1, 1)}..{block_name(operand, rows, cols)}"


def _check_block(name: str, shape: Shape, span: Span | None, findings: _Findings, owner: str) -> bool:
    """True if ``name`` is a block; reports blocks outside the shape."""
    parsed = parse_block(name)
    if parsed is None:
        if _ONE_INDEX_BLOCK.match(name):
            findings.error(f"{name} is not a block name: blocks take a row and a column, e.g. {name[0]}12 or {name[0]}[1,2]", span)
            return True
        return False
    if not shape.contains(name):
        operand = parsed[0]
        rows, cols = shape.grid(operand)
        findings.error(
            f"{name} is not a block of {operand}: {owner} {shape} splits {operand} into {rows}x{cols} blocks "
            f"({_block_range(shape, operand)})",
            span,
        )
    return True


# --- algorithms ----------------------------------------------------------------


def build_algorithm(raw: RawAlgorithm) -> Algorithm:
    """Resolve and check an algorithm written as equations."""
    findings = _Findings()
    definitions: dict[str, Span | None] = {}
    for item in (*raw.sums, *raw.products):
        if operand_of(item.name) in ("A", "B"):
            findings.error(
                f"{item.name} is an input block; an algorithm defines products, named sums and C blocks", item.span
            )
        elif item.name in definitions:
            first = definitions[item.name]
            findings.error(f"{item.name} is defined twice", item.span, *((f"first defined at {first}",) if first else ()))
        elif item.name not in definitions:
            definitions[item.name] = item.span
    for entry in raw.sums:
        if entry.form.is_zero():  # written as cancelling terms, or scaled by 0 (`M1 = 0 * B11`)
            findings.error(f"{entry.name} is zero as written", entry.span)
    seen_outputs: dict[str, Span | None] = {}
    for output in raw.outputs:
        if not raw.shape.contains(output.block):
            _check_block(output.block, raw.shape, output.span, findings, f"algorithm {raw.name}")
        elif output.block in seen_outputs:
            findings.error(f"{output.block} is defined twice", output.span, f"first defined at {seen_outputs[output.block]}")
        seen_outputs[output.block] = output.span
    kinds = _infer_kinds(raw, findings)
    _check_products(raw, kinds, findings)
    _check_outputs(raw, kinds, findings)
    for block in raw.shape.blocks("C"):
        if block not in seen_outputs:
            findings.error(f"algorithm {raw.name} has no equation for {block}", raw.span)
    if raw.rank is not None and raw.rank != len(raw.products):
        findings.error(
            f"algorithm {raw.name} declares rank {raw.rank} but defines {len(raw.products)} products", raw.span
        )
    findings.raise_if_any()
    return Algorithm(raw.name, raw.shape, raw.sums, raw.products, _ordered(raw.outputs, raw.shape), raw.rank, raw.span)


def _ordered(outputs: tuple[Output, ...], shape: Shape) -> tuple[Output, ...]:
    order = {name: index for index, name in enumerate(shape.blocks("C"))}
    return tuple(sorted(outputs, key=lambda o: order[o.block]))


def _infer_kinds(raw: RawAlgorithm, findings: _Findings) -> dict[str, str]:
    """Map each defined name to 'A', 'B', 'M' (products or sums of them), or '?' when broken."""
    forms = {s.name: s for s in raw.sums}
    kinds: dict[str, str] = {p.name: "M" for p in raw.products}
    visiting: set[str] = set()

    def kind_of(name: str, span: Span | None) -> str:
        if _check_block(name, raw.shape, span, findings, f"algorithm {raw.name}"):
            return operand_of(name) or "?"
        if name in kinds:
            return kinds[name]
        if name not in forms:
            findings.error(f"{name} is not defined", span, *_suggest(name, [*forms, *kinds]))
            kinds[name] = "?"
            return "?"
        if name in visiting:
            findings.error(f"{name} is defined in terms of itself", forms[name].span)
            return "?"
        visiting.add(name)
        kinds[name] = _kind_of_sum(forms[name].form, forms[name].span, name)
        visiting.discard(name)
        return kinds[name]

    def _kind_of_sum(form: Form, span: Span | None, owner: str) -> str:
        found = {term: kind_of(term, form.span_of(term) or span) for term in form.names()}
        distinct = set(found.values()) - {"?"}
        if len(distinct) > 1:
            parts = ", ".join(f"{t} ({_KIND_WORDS[k]})" for t, k in found.items() if k != "?")
            findings.error(f"{owner} mixes terms of different kinds: {parts}", span)
            return "?"
        if "C" in distinct:
            bad = next(t for t, k in found.items() if k == "C")
            findings.error(f"{owner} reads {bad}, an output block; sums combine A blocks, B blocks or products", span)
            return "?"
        return distinct.pop() if distinct else "?"

    for entry in raw.sums:
        kind_of(entry.name, entry.span)
    return kinds


_KIND_WORDS = {"A": "A side", "B": "B side", "M": "products", "C": "output", "?": "unknown"}


def _form_kind(form: Form, kinds: dict[str, str], shape: Shape) -> set[str]:
    return {operand_of(name) if parse_block(name) else kinds.get(name, "?") for name in form.names()}


def _check_products(raw: RawAlgorithm, kinds: dict[str, str], findings: _Findings) -> None:
    is_zero = _sum_expander(raw)
    for product in raw.products:
        got = {}
        for side, form in (("left", product.left), ("right", product.right)):
            for name in form.names():
                span = form.span_of(name) or product.span
                if not _check_block(name, raw.shape, span, findings, f"algorithm {raw.name}") and name not in kinds:
                    findings.error(f"{name} is not defined", span, *_suggest(name, kinds))
            got[side] = _form_kind(form, kinds, raw.shape) - {"?"}
        if got == {"left": {"B"}, "right": {"A"}}:
            findings.error(
                f"{product.name} is written (B side) * (A side); products are (A side) * (B side): swap the factors",
                product.span,
            )
            continue
        for side, form, want in (("left", product.left, "A"), ("right", product.right, "B")):
            if got[side] and got[side] != {want}:
                other = "B" if want == "A" else "A"
                if got[side] == {other}:
                    findings.error(
                        f"the {side} factor of {product.name} is a sum of {other} blocks; products are (A side) * (B side)",
                        product.span,
                    )
                else:
                    findings.error(
                        f"the {side} factor of {product.name} must be a sum of {want} blocks or named sums of them; "
                        f"it is {form}",
                        product.span,
                    )
            elif got[side] <= {want} and is_zero(form) and not _names_zero_sum(form, raw):
                # Written directly, (A11 - A11) is refused by the IR; through named sums it gets here.
                findings.error(f"the {side} factor of {product.name} is zero: {form} = 0", product.span)


def _names_zero_sum(form: Form, raw: RawAlgorithm) -> bool:
    """True when the form names a sum written as zero (reported at the sum itself)."""
    return any(s.form.is_zero() for s in raw.sums if s.name in form.names())


def _sum_expander(raw: RawAlgorithm):
    """A test whether a form that names sums expands to zero (False past a cycle or for forms of blocks only)."""
    sums = {s.name: s.form for s in raw.sums}
    memo: dict[str, dict | None] = {}

    def expand(form: Form, visiting: frozenset = frozenset()) -> dict | None:
        total: dict = {}
        for name, coef in form.terms:
            if name not in sums:
                total[name] = total.get(name, 0) + coef
                continue
            if name in visiting:
                return None
            if name not in memo:
                memo[name] = expand(sums[name], visiting | {name})
            if memo[name] is None:
                return None
            for atom, inner in memo[name].items():
                total[atom] = total.get(atom, 0) + coef * inner
        return {atom: coef for atom, coef in total.items() if coef}

    def is_zero(form: Form) -> bool:
        return any(name in sums for name in form.names()) and expand(form) == {}

    return is_zero


def _check_outputs(raw: RawAlgorithm, kinds: dict[str, str], findings: _Findings) -> None:
    sum_spans = {s.name: s.span for s in raw.sums}
    for output in raw.outputs:
        for name in output.form.names():
            span = output.form.span_of(name) or output.span
            if parse_block(name):
                findings.error(
                    f"{output.block} must be a sum of products; {name} is a block, not a product",
                    span,
                    "write the products first (M1 = (A11 + A22) * (B11 + B22)) and add their names",
                )
            elif name not in kinds:
                findings.error(f"{name} is not defined", span, *_suggest(name, kinds))
            elif kinds[name] in ("A", "B"):
                where = f" at {sum_spans[name]}" if sum_spans.get(name) else ""
                findings.error(
                    f"{output.block} uses {name}, a sum of {kinds[name]} blocks, not a product",
                    span,
                    f"{name} is defined{where} with one factor; a product needs two: {name} = (A side) * (B side)",
                )


# --- tables --------------------------------------------------------------------------


def build_table(raw: RawTable) -> Algorithm:
    """An algorithm from its U, V, W coefficient tables (one column per product)."""
    findings = _Findings()
    sections: dict[str, tuple] = {}
    for letter, rows, span in raw.sections:
        if letter in sections:
            findings.error(f"table {raw.name} has two {letter} sections", span)
        sections[letter] = (rows, span)
    for letter in "UVW":
        if letter not in sections:
            findings.error(f"table {raw.name} has no {letter} section", raw.span)
    findings.raise_if_any()
    rank = len(sections["U"][0][0][0])
    for letter, operand in zip("UVW", ("A", "B", "C")):
        rows, span = sections[letter]
        want = len(raw.shape.blocks(operand))
        if len(rows) != want:
            findings.error(
                f"{letter} has {len(rows)} rows; {raw.shape} needs {want}, one per {operand} block "
                f"({_block_range(raw.shape, operand)}, row-major)",
                span,
            )
        for numbers, row_span in rows:
            if len(numbers) != rank:
                findings.error(f"this row has {len(numbers)} entries; the first row of U has {rank}", row_span)
    if raw.rank is not None and raw.rank != rank:
        findings.error(f"table {raw.name} declares rank {raw.rank} but has {rank} columns", raw.span)
    findings.raise_if_any()
    columns = {letter: _columns(sections[letter][0], raw.shape.blocks(op)) for letter, op in zip("UVW", "ABC")}
    products = []
    for r in range(rank):
        name = f"M{r + 1}"
        left, right = columns["U"][r], columns["V"][r]
        for letter, form in (("U", left), ("V", right)):
            if form.is_zero():
                findings.error(f"column {r + 1} of {letter} is all zero: product {name} has a zero factor", sections[letter][1])
        products.append(Product(name, left, right, raw.span) if not (left.is_zero() or right.is_zero()) else None)
    findings.raise_if_any()
    outputs = []
    for index, block in enumerate(raw.shape.blocks("C")):
        numbers, row_span = sections["W"][0][index]
        form = Form.of({f"M{r + 1}": c for r, c in enumerate(numbers)})
        outputs.append(Output(block, form, row_span))
    return Algorithm(raw.name, raw.shape, (), tuple(products), tuple(outputs), raw.rank, raw.span, tabular=True)


def _columns(rows, blocks: tuple[str, ...]) -> list[Form]:
    """One Form per column; each block remembers its row, so a diagnostic can point at the entry's line."""
    rank = len(rows[0][0])
    spans = [(block, rows[i][1]) for i, block in enumerate(blocks)]
    return [Form.of({block: rows[i][0][r] for i, block in enumerate(blocks)}, spans) for r in range(rank)]


# --- schedules ---------------------------------------------------------------------


def build_schedule(raw: RawSchedule, algorithms: dict[str, Algorithm]) -> Schedule:
    """Resolve a schedule against the algorithm it names."""
    findings = _Findings()
    algorithm = algorithms.get(raw.algorithm)
    if algorithm is None:
        findings.error(
            f"schedule {raw.name} is for {raw.algorithm}, which is not defined",
            raw.span,
            *(_suggest(raw.algorithm, algorithms) or ("define it in this file or `use` the file that does",)),
        )
        findings.raise_if_any()
    properties = _check_properties(raw, findings)
    temporaries = _check_temporaries(raw, findings)
    stage_names: dict[str, Span] = {}
    for stage in raw.stages:
        if stage.name in stage_names:
            findings.error(f"stage {stage.name} is defined twice", stage.span, f"first defined at {stage_names[stage.name]}")
        stage_names[stage.name] = stage.span
        for statement in stage.statements:
            _check_statement(statement, algorithm.shape, temporaries, properties, raw.name, findings)
    if "inplace" in properties and raw.temporaries:
        findings.error(
            f"schedule {raw.name} is declared inplace but declares temporaries ({', '.join(t.name for t in raw.temporaries)})",
            raw.temporaries[0].span,
            "inplace means no workspace: overwrite A and B blocks instead",
        )
    if not raw.stages:
        findings.error(f"schedule {raw.name} has no stages", raw.span)
    findings.raise_if_any()
    return Schedule(raw.name, raw.algorithm, frozenset(properties), raw.temporaries, raw.stages, raw.span)


def _check_properties(raw: RawSchedule, findings: _Findings) -> set[str]:
    properties: set[str] = set()
    for name, span in raw.properties:
        if name not in PROPERTIES:
            findings.error(
                f"unknown schedule property {name!r}",
                span,
                "known properties: " + ", ".join(f"{k} ({v})" for k, v in PROPERTIES.items()),
            )
        elif name in properties:
            findings.error(f"property {name} is given twice", span)
        properties.add(name)
    if {"accumulate", "overwrite"} <= properties:
        findings.error(f"schedule {raw.name} cannot both accumulate into C and overwrite it", raw.span)
    return properties & PROPERTIES.keys()


def _check_temporaries(raw: RawSchedule, findings: _Findings) -> dict[str, str]:
    temporaries: dict[str, str] = {}
    for temp in raw.temporaries:
        if parse_block(temp.name) or _ONE_INDEX_BLOCK.match(temp.name):
            findings.error(f"{temp.name} is a block name; choose another name for the temporary", temp.span)
        elif temp.name in temporaries:
            findings.error(f"temporary {temp.name} is declared twice", temp.span)
        temporaries[temp.name] = temp.like
    return temporaries


def _check_statement(statement, shape: Shape, temporaries, properties, schedule: str, findings: _Findings) -> None:
    owner = f"the algorithm of {schedule}"
    for name in sorted(statement.reads() | statement.writes()):
        span = _name_span(statement, name)
        if name in temporaries:
            continue
        if not _check_block(name, shape, span, findings, owner):
            findings.error(
                f"{name} is neither a block nor a declared temporary",
                span,
                *(_suggest(name, temporaries) or (f"declare it: temp {name}: A",)),
            )
    for name in statement.writes():
        span = _name_span(statement, name)
        operand = operand_of(name)
        if operand in ("A", "B") and "inplace" not in properties:
            findings.error(
                f"the statement overwrites input block {name}, but schedule {schedule} is not declared inplace",
                span,
                "add `inplace` (and `restore`, if the inputs must come back) to the schedule's properties",
            )
        if isinstance(statement, Multiply) and operand in ("A", "B"):
            findings.error(f"a product cannot be written into {name}: targets are C blocks or temporaries", span)


def _name_span(statement, name: str) -> Span | None:
    forms = [statement.form] if hasattr(statement, "form") else [statement.left, statement.right, statement.targets]
    for form in forms:
        span = form.span_of(name)
        if span:
            return span
    return statement.span


def build(raw: RawDefinition, algorithms: dict[str, Algorithm]):
    """Dispatch on the kind of raw definition."""
    if isinstance(raw, RawAlgorithm):
        return build_algorithm(raw)
    if isinstance(raw, RawTable):
        return build_table(raw)
    return build_schedule(raw, algorithms)

