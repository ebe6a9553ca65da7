"""The Brent equations, exactly: does an algorithm compute C = A·B?

Assumes: a checked :class:`~bilinear.ir.Algorithm` (see frontend.check).
Ensures: one diagnostic per wrong C block, saying which terms it has that
it should not and which it misses, located at the block's equation; and,
where changing one written coefficient would make every equation hold, that
change as a note.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from ..diagnostics import Diagnostic, Span
from ..ir import Algorithm, Form, Shape, format_coefficient, parse_block
from .expand import Expansion, bilinear, classical, expansion_of
from .tensor import residual_summary


def describe_difference(actual: Form, expected: Form) -> str:
    """``has +A21*B11 that should not be there; misses A11*B12`` and the like."""
    extra, missing, wrong = [], [], []
    for name, coef in (actual - expected).terms:
        want = expected.coefficient(name)
        if want == 0:
            extra.append(_signed(coef, name))
        elif actual.coefficient(name) == 0:
            missing.append(_signed(want, name).lstrip("+"))
        else:
            wrong.append(f"{_signed(actual.coefficient(name), name)} where it needs {_signed(want, name)}")
    parts = []
    if extra:
        parts.append(f"has {_few(extra, ', ')} that should not be there")
    if missing:
        parts.append(f"misses {_few(missing, ', ')}")
    if wrong:
        parts.append(f"has {_few(wrong, '; ')}")
    return "; ".join(parts)


# Terms a wrong block's message shows of each sum: a scheme cut short had put whole expansions of
# thousands of terms in one line (52 KB for six C blocks).
SHOWN_TERMS = 12


def _few(items: list[str], separator: str) -> str:
    shown = separator.join(items[:SHOWN_TERMS])
    return shown if len(items) <= SHOWN_TERMS else f"{shown} and {len(items) - SHOWN_TERMS} more"


def _form_text(form: Form) -> str:
    if len(form.terms) <= SHOWN_TERMS:
        return str(form or "0")
    return f"{Form.of(dict(form.terms[:SHOWN_TERMS]))} … ({len(form.terms)} terms)"


def _signed(coef: Fraction, name: str) -> str:
    sign = "-" if coef < 0 else "+"
    size = abs(coef)
    return f"{sign}{name}" if size == 1 else f"{sign}{format_coefficient(size)}*{name}"


# Residual entries held whole (every block's every wrong term, for its message and the fix search);
# past this many each wrong block keeps its count and its first few terms.
RESIDUAL_WHOLE = 20_000


def brent_residual(expansion: Expansion) -> dict[str, Form]:
    """Per C block, what the algorithm computes minus the classical sum (only nonzero ones); past
    :data:`RESIDUAL_WHOLE` entries, only each block's first :data:`SHOWN_TERMS` (:func:`verify_algorithm`
    says how many there are).

    Computed exactly by verify.tensor, term by term or one A block at a time
    as the term count decides; the blocks come in row-major order.
    """
    return dict(_residual(expansion)[0])


def _residual(expansion: Expansion) -> tuple[dict[str, Form], dict[str, int] | None]:
    """:func:`brent_residual`'s blocks, and where they are cut short, each one's count of wrong terms."""
    cached = getattr(expansion, "_brent_residual", None)  # compile verifies, then lowering verifies again
    if cached is not None:
        return cached
    shape = expansion.algorithm.shape
    left, right = zip(*expansion.factors) if expansion.factors else ((), ())
    summary = residual_summary(shape, left, right, expansion.weights, SHOWN_TERMS, RESIDUAL_WHOLE)
    if summary.every is not None:
        per_block: dict[str, dict[str, Fraction]] = {}
        for (a, b, c), value in summary.every.items():
            per_block.setdefault(c, {})[f"{a}*{b}"] = value
        cached = {block: Form.of(per_block[block]) for block in summary.counts}, None
    else:
        cached = ({block: Form.of({f"{a}*{b}": value for (a, b), value in first.items()})
                   for block, first in summary.first.items()}, summary.counts)
    expansion._brent_residual = cached
    return cached


def wrong_blocks(algorithm: Algorithm) -> tuple[str, ...]:
    """The C blocks whose Brent equations fail over Q, row-major: what :func:`verify_algorithm` reports on,
    without its diagnostics (the catalogue tally's question)."""
    return tuple(brent_residual(expansion_of(algorithm)))


# The fix search tries every coefficient of every named sum against every sum it could gain: about
# (named sums)² steps, 2 s at 400 sums on the 2-core machine, 19 s at 1,200.  PLinOpt's ⟨4,4,4;48⟩
# program has 156; its ⟨32,32,32;15096⟩ has 50,000, which the search would not finish.
FIX_SEARCH_SUMS = 400


def verify_algorithm(algorithm: Algorithm, fix_search_sums: int = FIX_SEARCH_SUMS) -> tuple[Diagnostic, ...]:
    """Errors for every C block the algorithm gets wrong (empty when it is right); the first carries
    up to three single-coefficient fixes, searched when the program has at most ``fix_search_sums``
    named sums."""
    expansion = expansion_of(algorithm)
    residual, counts = _residual(expansion)
    if not residual:
        return ()
    spans = {o.block: o.span for o in algorithm.outputs}
    located = spans.get(next(iter(residual))) or algorithm.span  # where the first error, with the notes, points
    if counts is not None:  # the search compares whole residuals: past RESIDUAL_WHOLE none is held
        notes = (f"no single-coefficient fix was searched for: {sum(counts.values())} terms are wrong (the search "
                 f"covers up to {RESIDUAL_WHOLE})",)
    elif len(algorithm.sums) <= fix_search_sums:
        fixes = tuple(single_coefficient_fixes(expansion, residual, located.path if located else None))
        notes = tuple(f"changing {fix} would make every equation hold" for fix in fixes[:3])
    else:
        notes = (f"no single-coefficient fix was searched for: the program has {len(algorithm.sums)} named sums "
                 f"(the search covers up to {fix_search_sums})",)
    if (reach := reach_note(expansion)) is not None:
        notes = (reach, *notes)
    shape = algorithm.shape
    if algorithm.rank < (least := max(shape.m * shape.k, shape.k * shape.n, shape.m * shape.n)):  # a file cut short
        notes = (f"no {shape} scheme has fewer than {least} products (A, B and C have {shape.m * shape.k}, "
                 f"{shape.k * shape.n} and {shape.m * shape.n} blocks); this one has {algorithm.rank}: is it complete?",
                 *notes)
    errors = []
    for block, difference in residual.items():
        expected = classical(*_indices(block), algorithm.shape.k)
        if counts is None:
            actual = expected + difference
            message = (f"{block} is wrong: it computes {_form_text(actual)} but must be {_form_text(expected)}; "
                       f"{describe_difference(actual, expected)}")
        else:
            wrong = [_signed(coef, name) for name, coef in difference.terms]
            message = (f"{block} is wrong: {counts[block]} of its terms differ from {_form_text(expected)}, the "
                       f"classical sum, among them {', '.join(wrong)} (computed minus classical)")
        errors.append(Diagnostic(message, spans.get(block) or algorithm.span, notes=() if errors else notes))
    return tuple(errors)


def reach_note(expansion: Expansion) -> str | None:
    """Where the products reach fewer rows or columns than the shape has (no scheme that does is
    right): which, and the shape they fit, since that shape may have come from a file's name."""
    shape = expansion.algorithm.shape
    a = [_indices(name) for u, _ in expansion.factors for name in u.names()]
    b = [_indices(name) for _, v in expansion.factors for name in v.names()]
    c = [_indices(name) for w in expansion.weights for name in w.names()]
    reached = (max((i for i, _ in a + c), default=0), max([j for _, j in a] + [i for i, _ in b], default=0),
               max((j for _, j in b + c), default=0))
    wheres = (("row", "of A and C"), ("column", "of A and {row} of B"), ("column", "of B and C"))
    short = []
    for got, full, (noun, rest) in zip(reached, (shape.m, shape.k, shape.n), wheres):
        if got < full:
            short.append(f"{_indices_text(noun, got + 1, full)} {rest.format(row=_indices_text('row', got + 1, full))}")
    if not short or 0 in reached:  # (no product reaches anything: the errors say all there is)
        return None
    listed = short[0] if len(short) == 1 else f"{', '.join(short[:-1])}, or {short[-1]}"
    return (f"no product reaches {listed}: the products fit {Shape(*reached)}, inside this scheme's {shape}; a shape "
            "taken from a file's name or --shape may be the wrong one")


def _indices_text(noun: str, first: int, last: int) -> str:
    return f"{noun} {first}" if first == last else f"{noun}s {first}-{last}"


def _indices(block: str) -> tuple[int, int]:
    _, row, col = parse_block(block)
    return row, col


# --- single-coefficient fixes ------------------------------------------------------------


def single_coefficient_fixes(expansion: Expansion, residual: dict[str, Form], home: str | None = None) -> list[str]:
    """Written coefficients whose change alone zeroes the residual, as readable edits, each with
    its line (and its file, where that is not ``home``, the file the error points into).

    The residual tensor E is affine in any single written coefficient c, so
    changing c by δ fixes everything exactly when E + δ·∂T/∂c = 0.  Changes to
    a whole number come first: a misprinted sign or digit is likelier than a
    fraction that happens to compensate.
    """
    target = _flatten(residual)
    found = []
    for site, span, current, direction, sole in _sites(expansion, set(residual), _factor_blocks(target, set(residual))):
        delta = _ratio(target, direction)
        if delta is not None and not (sole and current + delta == 0):  # no empty factor or sum
            found.append((site, span, current, current + delta))
    found.sort(key=lambda fix: fix[3].denominator != 1)
    return [f"{site} from {format_coefficient(current)} to {format_coefficient(new)}{_where(span, home)}"
            for site, span, current, new in found]


def _where(span: Span | None, home: str | None) -> str:
    """" (line 5)", " (line 5 of NAME)" in another file of the scheme, or nothing where a file has no
    lines to name (an AlphaTensor .npz) or its reader knows none (a Perminov .txt or .json: every
    product at the file's start, whose "line 1" is a header)."""
    if span is None or span.path.endswith(".npz") or span.is_whole_file:
        return ""
    return f" (line {span.line})" if span.path == home else f" (line {span.line} of {Path(span.path).name})"


def _flatten(per_block: dict[str, Form]) -> dict[tuple[str, str], Fraction]:
    return {(block, term): coef for block, form in per_block.items() for term, coef in form.terms}


def _ratio(target: dict, direction: dict) -> Fraction | None:
    """δ with target == -δ·direction, if any."""
    if not direction or target.keys() != direction.keys():
        return None
    key = next(iter(target))
    delta = -target[key] / direction[key]
    return delta if all(target[k] == -delta * direction[k] for k in target) else None


def _factor_blocks(target: dict[tuple[str, str], Fraction], wrong_blocks: set[str]) -> tuple[set, set] | None:
    """(A blocks, B blocks) where the residual's terms are every wrong C block times every A*B of them,
    as a change of one product's factor makes them (the changed factor's blocks times the other's);
    None where they are not, and no such change can fix it."""
    pairs = {tuple(term.split("*")) for _, term in target}
    a_blocks, b_blocks = {a for a, _ in pairs}, {b for _, b in pairs}
    return (a_blocks, b_blocks) if len(target) == len(wrong_blocks) * len(a_blocks) * len(b_blocks) else None


def _blocks(form: Form) -> set[str]:
    return {name for name, _ in form.terms}


def _sites(expansion: Expansion, wrong_blocks: set[str], factor_blocks: tuple[set, set] | None):
    """(description, span, current coefficient, ∂T/∂c, whether it is its factor's or sum's only term)
    for every written coefficient that could matter: a product's factor only where the change of it
    and the other factor span ``factor_blocks`` (:func:`_factor_blocks`; forming every candidate's
    product took minutes on dense schemes)."""
    algorithm = expansion.algorithm
    shape = algorithm.shape
    usage = expansion.uses
    kinds = {s.name: _sum_kind(expansion, s.name) for s in algorithm.sums}
    for r, product in enumerate(algorithm.products):
        if set(usage[product.name]) != wrong_blocks or factor_blocks is None:
            continue  # changing a factor of this product touches other blocks than the wrong ones
        u, v = expansion.factors[r]
        for side, form, kind, other, (changed, kept) in (("left", product.left, "A", v, factor_blocks),
                                                         ("right", product.right, "B", u, factor_blocks[::-1])):
            if _blocks(other) != kept:
                continue
            for name in _candidates(form, [*shape.blocks(kind), *_addable_sums(algorithm, kinds, kind)], algorithm):
                change = expansion.of(name)
                if _blocks(change) != changed:
                    continue
                term = bilinear(change, other) if side == "left" else bilinear(other, change)
                direction = {(c, t): w * x for c, w in usage[product.name].items() for t, x in term.terms}
                yield (
                    f"the coefficient of {name} in the {side} factor of {product.name}",
                    form.span_of(name) or product.span,  # a table's entry is on its block's row
                    form.coefficient(name),
                    direction,
                    form.names() == (name,),
                )
    for output in algorithm.outputs:
        if {output.block} != wrong_blocks:
            continue
        for name in _candidates(output.form, [*(p.name for p in algorithm.products), *_addable_sums(algorithm, kinds, "M")], algorithm):
            direction = {(output.block, t): x for t, x in _product_value(expansion, name).terms}
            span = output.form.span_of(name) or output.span  # a catalogue line holds one product's C terms
            yield f"the coefficient of {name} in {output.block}", span, output.form.coefficient(name), direction, False
    yield from _sum_sites(expansion, wrong_blocks, usage, kinds)


def _sum_sites(expansion: Expansion, wrong_blocks: set[str], usage: dict, kinds: dict[str, str]):
    """Coefficients inside named sums (Winograd's S1 = A21 + A22 ...).

    Changing the coefficient of x in a sum S by one changes the residual by
    an outer product: x's expansion times what S meets (per C block, the
    other factor of each product S feeds, or the weight of S in the output).
    """
    algorithm = expansion.algorithm
    for entry in algorithm.sums:
        kind = kinds[entry.name]
        meets = _sum_meets(expansion, entry.name, kind, usage)
        if {block for block, _ in meets} != wrong_blocks:
            continue  # a change of this sum touches other blocks than the wrong ones
        bases = algorithm.shape.blocks(kind) if kind in "AB" else [p.name for p in algorithm.products]
        for name in _candidates(entry.form, [*bases, *_addable_sums(algorithm, kinds, kind, into=entry.name)], algorithm):
            if kind == "A":
                change = expansion.of(name)
                direction = {(c, f"{a}*{b}"): x * y for a, x in change.terms for (c, b), y in meets.items()}
            elif kind == "B":
                change = expansion.of(name)
                direction = {(c, f"{a}*{b}"): x * y for b, x in change.terms for (c, a), y in meets.items()}
            else:
                direction = {(c, t): x * y for t, x in _product_value(expansion, name).terms for (c, _), y in meets.items()}
            span = entry.form.span_of(name) or entry.span
            yield f"the coefficient of {name} in {entry.name}", span, entry.form.coefficient(name), direction, entry.form.names() == (name,)


def _sum_kind(expansion: Expansion, name: str) -> str:
    """'A' or 'B' for a sum of blocks, 'M' for a sum of products."""
    return expansion.operand(name) or "M"


def _addable_sums(algorithm: Algorithm, kinds: dict[str, str], kind: str, into: str | None = None) -> list[str]:
    """Named sums of one kind that a form could gain; for the sum ``into``, only those that do not use it."""
    users: dict[str, list[str]] = {}
    for entry in algorithm.sums:
        for term in entry.form.names():
            users.setdefault(term, []).append(entry.name)
    using = {into} if into else set()  # into, and every sum that reads it, however indirectly
    frontier = list(using)
    while frontier:
        for user in users.get(frontier.pop(), ()):
            if user not in using:
                using.add(user)
                frontier.append(user)
    return [name for name, of_kind in kinds.items() if of_kind == kind and name not in using]


def _sum_meets(expansion: Expansion, sum_name: str, kind: str, usage: dict) -> dict[tuple[str, str], Fraction]:
    """(C block, other factor's block) -> weight for a sum of blocks; (C block, "") -> weight for a sum of products."""
    algorithm = expansion.algorithm
    total: dict[tuple[str, str], Fraction] = {}
    if kind in "AB":
        for r, product in enumerate(algorithm.products):
            weight = expansion.partial(product.left if kind == "A" else product.right, sum_name)
            if weight == 0:
                continue
            u, v = expansion.factors[r]
            for block, w in usage[product.name].items():
                for atom, x in (v if kind == "A" else u).terms:
                    total[(block, atom)] = total.get((block, atom), 0) + weight * w * x
    else:
        for output in algorithm.outputs:
            total[(output.block, "")] = expansion.partial(output.form, sum_name)
    return {key: weight for key, weight in total.items() if weight != 0}


def _product_value(expansion: Expansion, name: str) -> Form:
    """A product or a sum of products, over ``"A*B"`` names."""
    total = Form()
    for product, coef in expansion.form(Form.symbol(name)).terms:
        total = total + expansion.product_terms[expansion.product_index[product]].scale(coef)
    return total


def _candidates(form: Form, base_names, algorithm: Algorithm) -> list[str]:
    """Names whose coefficient in ``form`` could be changed: its terms and any base name."""
    return sorted(set(form.names()) | set(base_names))

