"""The Brent equations, exactly: does an algorithm compute C = A·B?

Assumes: a checked :class:`~bilinear.ir.Algorithm` (see frontend.check).
Ensures: one diagnostic per wrong C block, saying which terms it has that
it should not and which it misses, located at the block's equation; and,
where changing one written coefficient would make every equation hold, that
change as a note.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterator

from ..diagnostics import Diagnostic
from ..ir import Algorithm, Form, format_coefficient, parse_block
from .expand import Expansion, bilinear, classical


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
        parts.append(f"has {', '.join(extra)} that should not be there")
    if missing:
        parts.append(f"misses {', '.join(missing)}")
    if wrong:
        parts.append(f"has {'; '.join(wrong)}")
    return "; ".join(parts)


def _signed(coef: Fraction, name: str) -> str:
    sign = "-" if coef < 0 else "+"
    size = abs(coef)
    return f"{sign}{name}" if size == 1 else f"{sign}{format_coefficient(size)}*{name}"


def brent_residual(expansion: Expansion) -> dict[str, Form]:
    """Per C block, what the algorithm computes minus the classical sum (only nonzero ones)."""
    shape = expansion.algorithm.shape
    residual = {}
    for i in range(1, shape.m + 1):
        for j in range(1, shape.n + 1):
            block = f"C{i}{j}" if i <= 9 and j <= 9 else f"C[{i},{j}]"
            difference = expansion.output_value(block) - classical(i, j, shape.k)
            if not difference.is_zero():
                residual[block] = difference
    return residual


def verify_algorithm(algorithm: Algorithm) -> tuple[Diagnostic, ...]:
    """Errors for every C block the algorithm gets wrong (empty when it is right)."""
    expansion = Expansion(algorithm)
    residual = brent_residual(expansion)
    if not residual:
        return ()
    fixes = tuple(single_coefficient_fixes(expansion, residual))
    notes = tuple(f"changing {fix} would make every equation hold" for fix in fixes[:3])
    spans = {o.block: o.span for o in algorithm.outputs}
    errors = []
    for block, difference in residual.items():
        expected = classical(*_indices(block), algorithm.shape.k)
        actual = expected + difference
        message = (
            f"{block} is wrong: it computes {actual or '0'} but must be {expected}; "
            f"{describe_difference(actual, expected)}"
        )
        errors.append(Diagnostic(message, spans.get(block) or algorithm.span, notes=() if errors else notes))
    return tuple(errors)


def _indices(block: str) -> tuple[int, int]:
    _, row, col = parse_block(block)
    return row, col


# --- single-coefficient fixes ------------------------------------------------------------


def single_coefficient_fixes(expansion: Expansion, residual: dict[str, Form]) -> Iterator[str]:
    """Written coefficients whose change alone zeroes the residual, as readable edits.

    The residual tensor E is affine in any single written coefficient c, so
    changing c by δ fixes everything exactly when E + δ·∂T/∂c = 0.
    """
    target = _flatten(residual)
    algorithm = expansion.algorithm
    for site, span, current, direction in _sites(expansion, set(residual)):
        delta = _ratio(target, direction)
        if delta is not None:
            yield f"{site} from {format_coefficient(current)} to {format_coefficient(current + delta)}" + (
                f" (line {span.line})" if span else ""
            )


def _flatten(per_block: dict[str, Form]) -> dict[tuple[str, str], Fraction]:
    return {(block, term): coef for block, form in per_block.items() for term, coef in form.terms}


def _ratio(target: dict, direction: dict) -> Fraction | None:
    """δ with target == -δ·direction, if any."""
    if not direction or target.keys() != direction.keys():
        return None
    key = next(iter(target))
    delta = -target[key] / direction[key]
    return delta if all(target[k] == -delta * direction[k] for k in target) else None


def _sites(expansion: Expansion, wrong_blocks: set[str]):
    """(description, span, current coefficient, ∂T/∂c) for every written coefficient that could matter."""
    algorithm = expansion.algorithm
    shape = algorithm.shape
    usage = {p.name: {c: w.coefficient(p.name) for c, w in expansion.outputs.items() if w.coefficient(p.name)} for p in algorithm.products}
    for r, product in enumerate(algorithm.products):
        if set(usage[product.name]) != wrong_blocks:
            continue  # changing a factor of this product touches other blocks than the wrong ones
        u, v = expansion.factors[r]
        for side, form, blocks, other in (("left", product.left, shape.blocks("A"), v), ("right", product.right, shape.blocks("B"), u)):
            for name in _candidates(form, blocks, algorithm):
                change = expansion.of(name)
                term = bilinear(change, other) if side == "left" else bilinear(other, change)
                direction = {(c, t): w * x for c, w in usage[product.name].items() for t, x in term.terms}
                yield (
                    f"the coefficient of {name} in the {side} factor of {product.name}",
                    product.span,
                    form.coefficient(name),
                    direction,
                )
    for output in algorithm.outputs:
        if {output.block} != wrong_blocks:
            continue
        for name in _candidates(output.form, [p.name for p in algorithm.products], algorithm):
            value = expansion.form(Form.symbol(name))
            total = Form()
            for product, coef in value.terms:
                total = total + expansion.product_terms[_index(algorithm, product)].scale(coef)
            direction = {(output.block, t): x for t, x in total.terms}
            yield f"the coefficient of {name} in {output.block}", output.span, output.form.coefficient(name), direction
    yield from _sum_sites(expansion, wrong_blocks)


def _sum_sites(expansion: Expansion, wrong_blocks: set[str]):
    """Coefficients inside named sums (Winograd's S1 = A21 + A22 ...)."""
    algorithm = expansion.algorithm
    for entry in algorithm.sums:
        kind = _sum_kind(expansion, entry.name)
        bases = algorithm.shape.blocks(kind) if kind in "AB" else [p.name for p in algorithm.products]
        for name in _candidates(entry.form, bases, algorithm):
            direction = _sum_direction(expansion, entry.name, kind, name)
            if {c for c, _ in direction} == wrong_blocks:
                yield f"the coefficient of {name} in {entry.name}", entry.span, entry.form.coefficient(name), direction


def _sum_kind(expansion: Expansion, name: str) -> str:
    """'A' or 'B' for a sum of blocks, 'M' for a sum of products."""
    first = expansion.of(name).names()[0] if expansion.of(name).terms else ""
    parsed = parse_block(first)
    return parsed[0] if parsed else "M"


def _sum_direction(expansion: Expansion, sum_name: str, kind: str, name: str) -> dict:
    algorithm = expansion.algorithm
    change = expansion.of(name)
    total: dict[tuple[str, str], Fraction] = {}
    if kind in "AB":
        for r, product in enumerate(algorithm.products):
            form = product.left if kind == "A" else product.right
            weight = expansion.partial(form, sum_name)
            if weight == 0:
                continue
            u, v = expansion.factors[r]
            term = bilinear(change, v) if kind == "A" else bilinear(u, change)
            for block, w in expansion.outputs.items():
                for t, x in term.terms:
                    if w.coefficient(product.name):
                        total[(block, t)] = total.get((block, t), 0) + weight * w.coefficient(product.name) * x
    else:
        value = Form()
        for product, coef in change.terms:
            value = value + expansion.product_terms[_index(algorithm, product)].scale(coef)
        for output in algorithm.outputs:
            weight = expansion.partial(output.form, sum_name)
            for t, x in value.terms:
                if weight:
                    total[(output.block, t)] = total.get((output.block, t), 0) + weight * x
    return {k: v for k, v in total.items() if v != 0}


def _candidates(form: Form, base_names, algorithm: Algorithm) -> list[str]:
    """Names whose coefficient in ``form`` could be changed: its terms and any base name."""
    return sorted(set(form.names()) | set(base_names))


def _index(algorithm: Algorithm, product: str) -> int:
    return next(r for r, p in enumerate(algorithm.products) if p.name == product)

