"""Symbolic simulation of a schedule, block by block, in exact arithmetic.

Assumes: a checked :class:`~bilinear.ir.Schedule` and the algorithm it names.
Ensures: a :class:`ScheduleCheck` that lists, with source locations, every
way the schedule fails to be its algorithm: a product statement that is not
one of the algorithm's products (or one computed twice or never), a C block
that does not end as C⁰ + A·B (C = A·B with ``overwrite``), an input that is
not restored under ``restore``, statements of one stage that conflict, a
buffer read before it is written, or values of different kinds mixed.

Each buffer holds a Form over atoms: ``A11`` and ``B12`` (the original
blocks), ``C11⁰`` (C's original content) and ``A11*B12`` (bilinear terms).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

from ..diagnostics import Diagnostic, counted
from ..ir import Algorithm, Form, Multiply, Schedule, Stage, Statement, Update, operand_of
from .algorithm import describe_difference
from .blame import dropped_c, wrong_weight
from .conflicts import stage_conflicts
from .expand import Expansion, bilinear, classical, expansion_of
from .shape_condition import BLOCK_DIMS, KIND_WORDS, ShapeCondition
from .simulated import ProductUse, kind_of, original_c


@dataclass(frozen=True)
class ScheduleCheck:
    """What the simulation found."""

    errors: tuple[Diagnostic, ...]
    product_uses: tuple[ProductUse, ...]
    final: dict = field(compare=False)
    shape_conditions: tuple[ShapeCondition, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


def _where(stage: Stage, statement: Statement) -> str:
    line = f"line {statement.span.line}, " if statement.span else ""
    return f"`{statement}` ({line}stage {stage.name})"


class _Simulation:
    def __init__(self, schedule: Schedule, algorithm: Algorithm):
        self.schedule = schedule
        self.algorithm = algorithm
        self.expansion = expansion_of(algorithm)
        self.errors: list[Diagnostic] = []
        self.uses: list[ProductUse] = []
        self.conditions: set[ShapeCondition] = set()
        self.writers: dict[str, list[tuple[Stage, Statement]]] = {}
        shape = algorithm.shape
        self.values: dict[str, Form | None] = {b: Form.symbol(b) for b in (*shape.blocks("A"), *shape.blocks("B"))}
        self.values.update({c: Form.symbol(original_c(c)) for c in shape.blocks("C")})
        self.values.update({t.name: None for t in schedule.temporaries})
        # each buffer's block shape: a block's own operand, a temporary's declared one
        self.like = {name: operand_of(name) for name in self.values} | {t.name: t.like for t in schedule.temporaries}
        self.catalogue = self._catalogue()
        # buffers whose value is not known: one whose read was refused (unwritten, or C's poisoned
        # content), and what a refused statement would have written, as it is not simulated; their
        # reads and final values would report that one mistake again (a statement reading one is skipped)
        self.unknown: set[str] = set()
        self.skipped_products = 0  # product statements skipped so: which products they compute is not known

    def _catalogue(self) -> dict[tuple[Form, Form], list[tuple[str, Fraction]]]:
        """Products keyed by their factors scaled so the first coefficient is 1, in the algorithm's
        order: proportional products (``M3 = 2*A11 * B11`` beside ``M1 = A11 * B11``) share a key."""
        catalogue: dict[tuple[Form, Form], list[tuple[str, Fraction]]] = {}
        for product, (u, v) in zip(self.algorithm.products, self.expansion.factors):
            nu, nv = _normalized(u), _normalized(v)
            scale = u.terms[0][1] * v.terms[0][1]
            catalogue.setdefault((nu, nv), []).append((product.name, scale))
        return catalogue

    def error(self, message: str, statement: Statement | None, *notes: str) -> None:
        span = statement.span if statement is not None else self.schedule.span
        self.errors.append(Diagnostic(message, span, notes=notes))

    # --- reading buffers -----------------------------------------------------------
    def read(self, form: Form, stage: Stage, statement: Statement) -> Form | None:
        total = Form()
        for name, coef in form.terms:
            value = self.values.get(name)
            if name in self.unknown:
                return None
            if value is None:
                self.error(f"{name} is read before anything is written to it", statement)
                self.unknown.add(name)
                return None
            total = total + value.scale(coef)
            if self._poisoned(name, value, statement):
                return None
        kind = kind_of(total)
        if kind == "?":
            parts = ", ".join(f"{n} holds {self.values[n]}" for n in form.names())
            self.error(f"`{statement}` mixes values of different kinds: {parts}", statement)
            return None
        return total

    def _poisoned(self, buffer: str, value: Form, statement: Statement) -> bool:
        """Under ``overwrite`` C's original content is poison, not a symbol: C may hold NaN or
        inf (it is not read with beta = 0), and NaN - NaN is not 0.  Reports a read of it."""
        if not self.schedule.overwrites_c:
            return False
        original = sorted(atom for atom in value.names() if atom.endswith("⁰"))
        if not original:
            return False
        self.unknown.add(buffer)
        self.error(
            f"`{statement}` reads {buffer}, which holds C's original content ({', '.join(original)}); "
            "an overwrite schedule must never read it: C may hold NaN or inf, which no later subtraction cancels",
            statement,
            f"schedule {self.schedule.name} is declared `overwrite` (C = A·B); write each C block with `=` before reading it",
        )
        return True

    def provenance(self, buffer: str) -> str:
        writes = self.writers.get(buffer)
        if not writes:
            return f"{buffer} has not been written"
        stage, statement = writes[-1]
        return f"{buffer} was last written by {_where(stage, statement)}"

    # --- writing buffers ----------------------------------------------------------------
    def write(self, target: str, value: Form, stage: Stage, statement: Statement) -> None:
        kind = kind_of(value)
        operand = operand_of(target)
        if operand is not None and kind not in (None, operand):
            self.error(f"{target} would hold {KIND_WORDS[kind]} ({value}); {operand} blocks hold {KIND_WORDS[operand]}", statement)
        elif operand is None and kind not in (None, self.like[target]):
            self._note_shape_condition(target, kind)
        self.values[target] = value
        self.unknown.discard(target)
        self.writers.setdefault(target, []).append((stage, statement))

    def _note_shape_condition(self, buffer: str, kind: str, read: bool = False) -> None:
        for have, need in zip(BLOCK_DIMS[self.like[buffer]], BLOCK_DIMS[kind]):
            if have != need:
                self.conditions.add(ShapeCondition(have, need, buffer, self.like[buffer], kind, read))

    # --- statements -------------------------------------------------------------------------
    def run_update(self, stage: Stage, statement: Update) -> None:
        value = self.read(statement.form, stage, statement)
        if value is None:
            self.unknown.add(statement.target)
            return
        # A kernel reads each buffer over its target's shape; a write gave a condition unless it wrote 0.
        for name in statement.form.names():
            if kind_of(self.values[name]) is None and self.like[name] != self.like[statement.target]:
                self._note_shape_condition(name, self.like[statement.target], read=True)
        self.write(statement.target, value, stage, statement)

    def run_multiply(self, stage: Stage, statement: Multiply) -> None:
        if own := statement.writes() & frozenset((*statement.left.names(), *statement.right.names())):  # checked on
            self.error(f"`{statement}` writes {', '.join(sorted(own))}, one of its own factors: a product kernel reads "
                       "its factors while it writes its targets", statement,  # as if it had not, so no errors follow
                       "write the product into another buffer (a temp of C's shape)")
        left = self.read(statement.left, stage, statement)
        right = self.read(statement.right, stage, statement)
        if left is None or right is None:
            return self.skip(statement)
        for side, value, want in (("left", left, "A"), ("right", right, "B")):
            if kind_of(value) != want:
                self.error(
                    f"the {side} factor of `{statement}` holds {value}, not {KIND_WORDS[want]}",
                    statement,
                )
                return self.skip(statement)
        self.uses.append(self.identify(stage, statement, left, right))
        product = self.product_value(left, right)
        for target, coef in statement.targets.terms:
            before = Form() if statement.overwrite else self.values.get(target)
            if before is None or (not statement.overwrite and target in self.unknown):
                if target not in self.unknown:
                    self.error(f"`{statement}` accumulates into {target} before anything is written to it", statement)
                self.unknown.add(target)
                continue
            if not statement.overwrite and self._poisoned(target, before, statement):
                continue
            if kind_of(before) not in (None, "C"):
                self.error(f"`{statement}` adds a product into {target}, which holds {before}", statement)
                self.unknown.add(target)
                continue
            self.write(target, before + product.scale(coef), stage, statement)

    def skip(self, statement: Multiply) -> None:
        """A product statement refused before its product was known: its targets' values are not."""
        self.unknown.update(statement.writes())
        self.skipped_products += 1

    def product_value(self, left: Form, right: Form) -> Form:
        """What a product statement adds (times its coefficient) into each target."""
        return bilinear(left, right)

    def identify(self, stage: Stage, statement: Multiply, left: Form, right: Form) -> ProductUse:
        """Which algorithm product ``left * right`` is, reporting it when it is none: of proportional
        products, the first not computed yet (so each is computed once, in any order) that an output
        uses (an unused twin before it had been taken, and the used one never computed)."""
        matches = self.catalogue.get((_normalized(left), _normalized(right)))
        if matches:
            computed = {use.product for use in self.uses}
            pending = [match for match in matches if match[0] not in computed]
            needed = [match for match in pending if self.expansion.uses[match[0]]]
            name, scale = (needed or pending or matches)[0]
            return ProductUse(stage.name, statement, name, left.terms[0][1] * right.terms[0][1] / scale)
        self.error(f"`{statement}` multiplies ({left}) * ({right}), which is not a product of {self.algorithm.name}",
                   statement, *self._closest(statement, left, right))
        return ProductUse(stage.name, statement, None, Fraction(0))

    def _closest(self, statement: Multiply, left: Form, right: Form) -> tuple[str, ...]:
        """Notes naming a product that shares a factor (one not computed yet first: a computed one's note had blamed
        the right factor), and where the other factor went wrong."""
        computed = {use.product for use in self.uses}
        pairs = zip(self.algorithm.products, self.expansion.factors)
        for product, (u, v) in sorted(pairs, key=lambda pair: pair[0].name in computed):
            if left.ratio_to(u) is not None:
                side, form, want, got = "right", statement.right, v, right
            elif right.ratio_to(v) is not None:
                side, form, want, got = "left", statement.left, u, left
            else:
                continue
            note = f"{product.name} = ({u}) * ({v}) shares a factor; its {side} factor is {want}, but {form} holds {got}"
            return (note, *(self.provenance(name) for name in form.names()))
        return ()

    # --- stages ---------------------------------------------------------------------------------
    def run(self) -> ScheduleCheck:
        for stage in self.schedule.stages:
            self.check_conflicts(stage)
            for statement in stage.statements:
                if isinstance(statement, Update):
                    self.run_update(stage, statement)
                else:
                    self.run_multiply(stage, statement)
        self.check_products()
        self.check_outputs()
        self.check_restored()
        return ScheduleCheck(tuple(self.errors), tuple(self.uses), dict(self.values), tuple(sorted(self.conditions, key=str)))

    def check_kinds(self, stage: Stage) -> None:
        """A stage is launched either as products or as element-wise kernels, never both."""
        products = [s for s in stage.statements if isinstance(s, Multiply)]
        updates = [s for s in stage.statements if not isinstance(s, Multiply)]
        if products and updates:
            self.error(
                f"stage {stage.name} mixes product statements with the element-wise update `{updates[0]}`; "
                "a stage holds either products or updates",
                updates[0],
                "move the update to a stage of its own (before or after, as it needs)",
            )

    def check_conflicts(self, stage: Stage) -> None:
        self.check_kinds(stage)
        if stage.ordered:
            return  # run in order per element: a later statement may read an earlier one's result
        for conflict in stage_conflicts(stage.statements):
            self.error(
                f"`{conflict.culprit}` conflicts with `{conflict.other}` in stage {stage.name}: {conflict.reason}",
                conflict.culprit,
                "statements of one stage run concurrently; move one of them to another stage",
            )

    def check_products(self) -> None:
        used: dict[str, ProductUse] = {}
        for use in self.uses:
            if use.product is None:
                continue
            if use.product in used:
                self.error(
                    f"`{use.statement}` computes {use.product} again",
                    use.statement,
                    f"{use.product} was already computed by `{used[use.product].statement}` in stage {used[use.product].stage}",
                )
            used[use.product] = use
        missing = [p.name for p in self.algorithm.products if p.name not in used and self.expansion.uses[p.name]]
        skipped = self.skipped_products  # each may compute any one of them: its own error is said
        if skipped and len(missing) > skipped:
            self.error(f"schedule {self.schedule.name} never computes {len(missing) - skipped} more of "
                       f"{', '.join(missing)}: the {counted(skipped, 'product statement')} refused above "
                       f"compute{'s' * (skipped == 1)} at most {skipped} of them", None)
        for name in missing if not skipped else ():  # (one no output uses may be left out)
            self.error(f"schedule {self.schedule.name} never computes {name} = {_product_text(self.expansion, name)}", None)

    def check_outputs(self) -> None:
        shape = self.algorithm.shape
        for i in range(1, shape.m + 1):
            for j in range(1, shape.n + 1):
                block = f"C{i}{j}" if i <= 9 and j <= 9 else f"C[{i},{j}]"
                expected = classical(i, j, shape.k)
                if not self.schedule.overwrites_c:
                    expected = expected + Form.symbol(original_c(block))
                actual = self.values[block]
                if actual != expected and block not in self.unknown:
                    writes = self.writers.get(block, [])
                    last = writes[-1][1] if writes else None
                    culprit, why = (dropped_c(self.schedule, writes, block, expected - actual)
                                    or wrong_weight(self.expansion, writes, self.uses, block) or (last, ()))
                    self.error(
                        f"{block} ends holding {actual} but must hold {expected}; "
                        f"{describe_difference(actual, expected)}",
                        culprit,
                        *why,
                        *self._written_by(block),
                    )

    def _written_by(self, buffer: str) -> tuple[str, ...]:
        writes = self.writers.get(buffer, [])
        return (f"{buffer} is written by " + "; ".join(_where(s, t) for s, t in writes),) if writes else ()

    def check_restored(self) -> None:
        if not self.schedule.restores:
            return
        shape = self.algorithm.shape
        for block in (*shape.blocks("A"), *shape.blocks("B")):
            if self.values[block] != Form.symbol(block) and block not in self.unknown:
                last = self.writers[block][-1][1]
                self.error(
                    f"{block} ends holding {self.values[block]}; `restore` needs it to end as {block}",
                    last,
                    *self._written_by(block),
                )


def _product_text(expansion: Expansion, name: str) -> str:
    index = next(r for r, p in enumerate(expansion.algorithm.products) if p.name == name)
    u, v = expansion.factors[index]
    return f"({u}) * ({v})"


def _normalized(form: Form) -> Form:
    return form.scale(1 / form.terms[0][1]) if form.terms else form


def workspace_blocks(schedule: Schedule) -> dict[str, int]:
    """Temporaries per level, counted by the operand whose block they are shaped like."""
    return dict(Counter(temp.like for temp in schedule.temporaries))

