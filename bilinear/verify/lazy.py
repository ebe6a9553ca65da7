"""The schedule simulation with C values kept as symbols: fast on large algorithms.

The full simulation (verify.schedule) gives every C buffer its value as a
bilinear form, so each product statement and each change of basis works on
forms with up to mk·kn terms.  Here a product statement's value is a fresh
symbol ``*P7`` (its left and right factors remembered), and every write of
a C value gives the buffer a fresh symbol ``*V12`` defined by the (short)
form written; A and B values are simulated exactly as before.  At the end,
the weight of every symbol in every final C block is propagated backwards
through those definitions, so each costs its length times the few C blocks
it reaches.  A C block is right exactly when its C⁰ part is what the
schedule declares, and Σ_k weight_k · left_k ⊗ right_k is the classical
tensor, which verify.tensor checks exactly (term by term, or one A block
at a time for a large term count).

Assumes: what verify.schedule assumes.  Ensures: ``ok`` only when the full
simulation's is (it may reject more, e.g. a C value that cancels to zero
where an A value is due; the caller then runs the full simulation, whose
verdict and diagnostics stand); ``final`` holds values over the symbols.
"""

from __future__ import annotations

from fractions import Fraction

from ..ir import Algorithm, Form, Schedule
from .schedule import ScheduleCheck, _Simulation, kind_of, original_c
from .tensor import residual_entries

_PRODUCT, _VALUE = "*P", "*V"  # both contain "*", so kind_of reads them as C values


class LazySimulation(_Simulation):
    def __init__(self, schedule, algorithm):
        super().__init__(schedule, algorithm)
        self.factors: list[tuple[Form, Form]] = []
        self.definitions: list[Form] = []

    def read(self, form: Form, stage, statement) -> Form | None:
        """As the full simulation reads, summing in one dict (values here are short)."""
        total: dict[str, Fraction | int] = {}
        for name, coef in form.terms:
            value = self.values.get(name)
            if value is None or name in self.unknown:
                return super().read(form, stage, statement)  # reports the unwritten buffer, or skips
            coef = coef.numerator if coef.denominator == 1 else coef  # int arithmetic where it can
            for inner, inner_coef in value.terms:
                inner_coef = inner_coef.numerator if inner_coef.denominator == 1 else inner_coef
                total[inner] = total.get(inner, 0) + coef * inner_coef
        value = Form.of(total)
        return super().read(form, stage, statement) if kind_of(value) == "?" else value

    def product_value(self, left: Form, right: Form) -> Form:
        self.factors.append((left, right))
        return Form.symbol(f"{_PRODUCT}{len(self.factors) - 1}")

    def write(self, target, value, stage, statement) -> None:
        if kind_of(value) == "C":
            self.definitions.append(value)
            value = Form.symbol(f"{_VALUE}{len(self.definitions) - 1}")
        super().write(target, value, stage, statement)

    def final_weights(self) -> dict[str, dict[str, Fraction]]:
        """C⁰ and product symbols -> their weight in each final C block.

        The weights are summed in FLINT's exact rationals (``fmpq``, C arithmetic): a change
        of basis gives definitions coefficients like 1/8, and Python's Fraction made this
        loop most of the time a large scheme's lowering took."""
        from flint import fmpq

        weights: dict[str, dict[str, object]] = {}
        for block in self.algorithm.shape.blocks("C"):
            for name, coef in self.values[block].terms:
                into = weights.setdefault(name, {})
                into[block] = into.get(block, 0) + fmpq(coef.numerator, coef.denominator)
        for index in range(len(self.definitions) - 1, -1, -1):
            reached = weights.pop(f"{_VALUE}{index}", None)
            if not reached:
                continue
            reached = list(reached.items())
            for name, coef in self.definitions[index].terms:
                coef = fmpq(coef.numerator, coef.denominator)
                into = weights.setdefault(name, {})
                for block, weight in reached:
                    into[block] = into.get(block, 0) + coef * weight
        return {
            name: {b: Fraction(int(c.p), int(c.q)) for b, c in per_block.items() if c != 0}
            for name, per_block in weights.items()
        }

    def check_outputs(self) -> None:
        weights = self.final_weights()
        shape = self.algorithm.shape
        for name, per_block in weights.items():
            if name.startswith(_PRODUCT) or not per_block:
                continue
            block = name[: -len(original_c(""))] if name.endswith(original_c("")) else None
            if self.schedule.overwrites_c or block is None or per_block != {block: 1}:
                self.error(f"{name} ends in the wrong C blocks: {per_block}", None)
                return
        if not self.schedule.overwrites_c and any(not weights.get(original_c(b)) for b in shape.blocks("C")):
            self.error("a C block loses its original value", None)
            return
        columns = [Form.of(weights.get(f"{_PRODUCT}{k}", {})) for k in range(len(self.factors))]
        lefts = [left for left, _ in self.factors]
        rights = [right for _, right in self.factors]
        if residual_entries(shape, lefts, rights, columns):
            self.error("the C blocks do not end as their classical sums", None)


def verify_schedule(schedule: Schedule, algorithm: Algorithm) -> ScheduleCheck:
    """Simulate ``schedule`` and report everything that makes it not ``algorithm``.

    A fast simulation with products kept as symbols decides first (the
    LazySimulation above); only a schedule it rejects is simulated again in full, for
    diagnostics that show every buffer's bilinear value.  An overwrite schedule
    that may read C's original content is simulated in full at once (that read is an error the
    lazy simulation cannot see).
    """
    if schedule.overwrites_c and _may_read_original_c(schedule, algorithm):
        # C's original content is poison there (see _Simulation._poisoned); the lazy simulation hides
        # what a C buffer holds behind a symbol, so it cannot see a read of it.
        return _Simulation(schedule, algorithm).run()
    check = LazySimulation(schedule, algorithm).run()
    return check if check.ok else _Simulation(schedule, algorithm).run()


def _may_read_original_c(schedule: Schedule, algorithm: Algorithm) -> bool:
    """Whether a statement reads a buffer that may still hold C's original content: a C block
    before a statement writes it without reading such a buffer (the first read of one answers yes,
    so nothing is ever written from one).  By names alone, so it may say yes where values cancel
    (the full simulation then decides); no means no such read."""
    holding = set(algorithm.shape.blocks("C"))
    for _, statement in schedule.statements():  # a concurrent stage's statements read no other's writes
        if statement.reads() & holding:
            return True
        holding -= statement.writes()
    return False
