"""Name resolution and static checks: raw definitions to checked IR.

Assumes: the raw definitions of :mod:`bilinear.frontend.parser`.
Ensures: every name in an :class:`~bilinear.ir.Algorithm` is a block inside
its shape or a sum or product it defines, without cycles; sums do not mix A,
B and product terms; products are (A-side) * (B-side); every C block has one
output.  Every buffer in a :class:`~bilinear.ir.Schedule` is a block or a
declared temporary, and the schedule's properties are consistent with what it
writes.  All problems found in one definition are reported together.

Algorithms written as equations are checked here; tables in
:mod:`~bilinear.frontend.check_table`, schedules in
:mod:`~bilinear.frontend.check_schedule`.
"""

from __future__ import annotations

from collections.abc import Generator
from itertools import islice

from ..diagnostics import counted
from ..ir import Algorithm, Form, Output, Shape, Span, operand_of, parse_block
from ..verify.expand import Expansion
from .check_schedule import build_schedule
from .check_table import build_table
from .findings import Findings, check_block, misnamed_block
from .raw import RawAlgorithm, RawDefinition, RawTable

__all__ = ["build", "build_algorithm", "build_schedule", "build_table"]


def build_algorithm(raw: RawAlgorithm) -> Algorithm:
    """Resolve and check an algorithm written as equations."""
    findings = Findings()
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
            check_block(output.block, raw.shape, output.span, findings, f"algorithm {raw.name}")
        elif output.block in seen_outputs:
            findings.error(f"{output.block} is defined twice", output.span, f"first defined at {seen_outputs[output.block]}")
        seen_outputs[output.block] = output.span
    kinds = _infer_kinds(raw, findings)
    _check_products(raw, kinds, findings)
    _check_outputs(raw, kinds, findings)
    _check_cancelled_names(raw, kinds, findings)
    missing = [block for block in raw.shape.blocks("C") if block not in seen_outputs]
    for block in missing:
        findings.error(f"algorithm {raw.name} has no equation for {block}", raw.span)
    for entry in raw.sums if missing else ():  # `c11 = ...`, `C00 = ...`: read as named sums
        why = misnamed_block(entry.name) if entry.name[0] in "Cc" else None
        meant = entry.name.upper() if why and "0" not in entry.name else None  # c11 -> C11; C00 names none
        if why and (meant in missing or meant is None):
            findings.error(f"{entry.name} is not a C block, so it is read as a named sum; {why}", entry.span)
    distinct = len({product.name for product in raw.products})  # a product written twice is its own error
    if raw.rank is not None and raw.rank != distinct:
        defined = counted(distinct, "product")
        findings.error(f"algorithm {raw.name} declares rank {raw.rank} but defines {defined}", raw.span)
    findings.raise_if_any()
    return Algorithm(raw.name, raw.shape, raw.sums, raw.products, _ordered(raw.outputs, raw.shape), raw.rank, raw.span)


def _ordered(outputs: tuple[Output, ...], shape: Shape) -> tuple[Output, ...]:
    order = {name: index for index, name in enumerate(shape.blocks("C"))}
    return tuple(sorted(outputs, key=lambda o: order[o.block]))


def _infer_kinds(raw: RawAlgorithm, findings: Findings) -> dict[str, str]:
    """Map each defined name to 'A', 'B', 'M' (products or sums of them), or '?' when broken."""
    forms = {s.name: s for s in raw.sums}
    kinds: dict[str, str] = {p.name: "M" for p in raw.products}
    visiting: dict[str, None] = {}  # the sums being walked, in order: the path from the first

    def kind_of(name: str, span: Span | None) -> Generator[tuple[str, Span | None], str, str]:
        """The kind of ``name``; it yields (term, span) for each term of a sum and is sent that
        term's kind (see _walked): sums on a cycle are walked one level per sum, and a walk by
        recursion failed past a few hundred of them."""
        if check_block(name, raw.shape, span, findings, f"algorithm {raw.name}"):
            return operand_of(name) or "?"
        if name in kinds:
            return kinds[name]
        if name not in forms:
            # kinds only gains names (never loses one), so its first len(kinds) are those known now
            findings.undefined(name, span, lambda known=len(kinds): [*forms, *islice(kinds, known)])
            kinds[name] = "?"
            return "?"
        if name in visiting:
            findings.error(f"{name} is defined in terms of itself{_cycle_text(list(visiting), name)}", forms[name].span)
            return "?"
        visiting[name] = None
        form, sum_span = forms[name].form, forms[name].span
        found = {}
        for term in form.names():
            found[term] = yield term, form.span_of(term) or sum_span
        kinds[name] = _kind_of_sum(found, sum_span, name)
        del visiting[name]
        return kinds[name]

    def _kind_of_sum(found: dict[str, str], span: Span | None, owner: str) -> str:
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

    for name in _in_dependency_order(forms):  # each sum's sums first, so each walk is one level deep
        _walked(kind_of, name, forms[name].span)
    for entry in raw.sums:  # the sums on cycles, in the file's order
        _walked(kind_of, entry.name, entry.span)
    return kinds


def _cycle_text(path: list[str], name: str, shown: int = 8) -> str:
    """": S1 -> S2 -> S1", the cycle that leads back to ``name`` on the walk's ``path`` ("" for a sum
    that reads itself); a long one shows its first sums and its last, and says how many it has."""
    cycle = path[path.index(name):]
    if len(cycle) == 1:
        return ""
    if len(cycle) > shown:
        return f": {' -> '.join(cycle[:shown - 1])} -> ... -> {cycle[-1]} -> {name} ({len(cycle)} sums)"
    return f": {' -> '.join(cycle)} -> {name}"


def _walked(visit, name: str, span: Span | None) -> str:
    """What the generator ``visit(name, span)`` returns, running the visits of the (term, span)
    pairs it yields on a stack of its own, each sent back what its visit returned: the walk of a
    recursive function, in its order, without Python's recursion limit."""
    stack = [visit(name, span)]
    result = None
    while stack:
        try:
            term, term_span = stack[-1].send(result)
        except StopIteration as done:
            stack.pop()
            result = done.value
        else:
            stack.append(visit(term, term_span))
            result = None
    return result


def _in_dependency_order(forms: dict[str, Form]) -> list[str]:
    """The named sums, each after the sums it reads, in the order a depth-first walk from each in
    turn meets them: a chain of any length takes no recursion.  A sum on a cycle, or reading one, is
    left out, so that the cycle is reported where the file's order meets it (at its first member)."""
    order: list[str] = []
    placed: set[str] = set()
    cyclic: set[str] = set()
    for start in forms:
        stack, path, on_path = [(start, False)], [], set()
        while stack:
            name, leaving = stack.pop()
            if leaving:
                on_path.discard(path.pop())
                order.append(name)
                continue
            if name in placed:
                continue
            placed.add(name)
            path.append(name)
            on_path.add(name)
            stack.append((name, True))
            terms = [term for term in forms[name].form.names() if term in forms]
            for term in terms:
                if term in on_path:  # a cycle: every sum from term round to name is on it
                    cyclic.update(path[path.index(term):])
            stack.extend((term, False) for term in reversed(terms))
    for name in order:  # and the sums that read a cycle (each after what it reads: one pass)
        if any(term in cyclic for term in forms[name].form.names()):
            cyclic.add(name)
    return [name for name in order if name not in cyclic]


_KIND_WORDS = {"A": "A side", "B": "B side", "M": "products", "C": "output", "?": "unknown"}


def _form_kind(form: Form, kinds: dict[str, str], shape: Shape) -> set[str]:
    return {operand_of(name) if parse_block(name) else kinds.get(name, "?") for name in form.names()}


def _check_products(raw: RawAlgorithm, kinds: dict[str, str], findings: Findings) -> None:
    is_zero = _sum_expander(raw)
    for product in raw.products:
        got = {}
        for side, form in (("left", product.left), ("right", product.right)):
            for name in form.names():
                span = form.span_of(name) or product.span
                if not check_block(name, raw.shape, span, findings, f"algorithm {raw.name}") and name not in kinds:
                    findings.undefined(name, span, lambda: kinds)  # no name is added to kinds after _infer_kinds
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
    """A test whether a form that names sums expands to zero (False past a cycle, which the kinds
    report, or for forms of blocks only).  The raw algorithm's sums are all Expansion reads."""
    expansion = Expansion(raw)

    def is_zero(form: Form) -> bool:
        if not any(name in expansion._sums for name in form.names()):
            return False
        try:
            return expansion.form(form).is_zero()
        except ValueError:  # a named sum that depends on itself
            return False

    return is_zero


def _check_cancelled_names(raw: RawAlgorithm, kinds: dict[str, str], findings: Findings) -> None:
    """Names written in a sum whose terms cancel (``A11 + X9 - X9``) must be defined too, and of the
    sum's kind (``A11 + B12 - B12`` is a slip, not an A-side sum): the sum dropped them before names
    were resolved, so the other checks never see them."""
    forms = [*((s.name, s.form, kinds.get(s.name, "?")) for s in raw.sums),
             *((f"the {side} factor of {p.name}", form, want) for p in raw.products
               for side, form, want in (("left", p.left, "A"), ("right", p.right, "B"))),
             *((o.block, o.form, "M") for o in raw.outputs)]
    for owner, form, want in forms:
        kept = set(form.names())
        for name in dict(form.spans).keys() - kept:
            span = form.span_of(name)
            if not check_block(name, raw.shape, span, findings, f"algorithm {raw.name}") and name not in kinds:
                findings.undefined(name, span, lambda: kinds)  # no name is added to kinds after _infer_kinds
                continue
            kind = operand_of(name) if parse_block(name) else kinds[name]
            if "?" not in (kind, want) and kind != want:
                among = "products" if want == "M" else f"{_KIND_WORDS[want]} terms"
                findings.error(f"{owner} writes {name} ({_KIND_WORDS[kind]}) among {among}: its terms cancel, "
                               "but a sum's terms are all of one kind", span)


def _check_outputs(raw: RawAlgorithm, kinds: dict[str, str], findings: Findings) -> None:
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
                findings.undefined(name, span, lambda: kinds)  # no name is added to kinds after _infer_kinds
            elif kinds[name] in ("A", "B"):
                where = f" at {sum_spans[name]}" if sum_spans.get(name) else ""
                findings.error(
                    f"{output.block} uses {name}, a sum of {kinds[name]} blocks, not a product",
                    span,
                    f"{name} is defined{where} with one factor; a product needs two: {name} = (A side) * (B side)",
                )


def build(raw: RawDefinition, algorithms: dict[str, Algorithm], schedules_for: dict[str, str] | None = None):
    """Dispatch on the kind of raw definition (``schedules_for``: each schedule's algorithm, by name)."""
    if isinstance(raw, RawAlgorithm):
        return build_algorithm(raw)
    if isinstance(raw, RawTable):
        return build_table(raw)
    return build_schedule(raw, algorithms, schedules_for or {})
