"""How far rounding can carry an input that an in-place schedule overwrites and then restores.

The proof shows every A and B block ends equal to its original in exact arithmetic; in floating
point each update ``X := Σ c_j·Y_j`` rounds, and the next update carries that error on, times its
coefficients, until the block is restored.  A first-order worst-case bound, in units of u·max|X|
(the unit roundoff times the input's largest entry, as ``bilinear run``'s normwise restoration):

- each buffer holds a combination of the original blocks; its magnitude m is that combination's
  1-norm (at most m·max|X| an entry), and its error e carries the errors of what it was formed from;
- ``X := Σ_{j≤t} c_j·Y_j`` evaluated from loaded values (a stage's net effect, as its kernel
  computes it) adds ``k·Σ|c_j|·m_j``: t − 1 additions, one rounding for the products by
  coefficients other than ±1, and one more for coefficients a float cannot hold (13/7);
- a product statement whose factor is one buffer hands it down to the level below, which may
  overwrite and restore it in turn: it adds that level's bound times the buffer's magnitude.

So each block ends with an error at most ``own + inner·G``, G the level below's bound (0 under a
leaf that only reads its operands), and L levels compose from the innermost out.  ``bilinear run``
judges a restoration by C's bound 8·u·√K·ρ^L, whose ρ does not see this chain (a derived schedule of
PLinOpt's DPS ⟨2,2,2;7⟩ restores to 1.6e-13 against 1.1e-13 at five levels); where one passes it,
the run says whether this worst case allows it, that is, whether rounding can be why.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..ir import Multiply, Schedule, Update
from ..ir.names import operand_of
from ..ir.schedule import net_effect


@dataclass(frozen=True)
class RestoreGrowth:
    """One level's bound on its restored blocks: each block's ``(own, inner)``, its error at most
    ``own + inner·G`` in units of u·max|X|, G the level below's (per operand, A and B)."""

    blocks: dict[str, tuple[tuple[float, float], ...]]

    def bound(self, operand: str, below: float = 0.0) -> float:
        """The level's bound for ``operand`` ('A' or 'B') over a level below whose bound is ``below``."""
        return max((own + inner * below for own, inner in self.blocks.get(operand, ())), default=0.0)


def _is_float(coef: Fraction) -> bool:
    """Whether a float32 (so a float64) holds ``coef`` exactly (the kernels write each coefficient as a
    literal of the data's type): ``coef`` = odd·2^shift with a power of two denominator, the odd part of at
    most 24 bits, its lowest bit no finer than the smallest subnormal, 2^-149, and its highest below 2^128."""
    numerator, denominator = abs(coef.numerator), coef.denominator
    if numerator == 0:
        return True
    if denominator & (denominator - 1):
        return False
    twos = (numerator & -numerator).bit_length() - 1
    odd, shift = numerator >> twos, twos - (denominator.bit_length() - 1)
    return odd.bit_length() <= 24 and shift >= -149 and shift + odd.bit_length() - 1 <= 127


def _roundings(form: dict[str, Fraction]) -> int:
    """How many roundings of at most u·Σ|c_j·y_j| evaluating ``form`` can take: one per addition, one
    for the products by coefficients other than ±1, one for a coefficient a float cannot hold."""
    scaled = any(abs(c) != 1 for c in form.values())
    inexact = any(not _is_float(c) for c in form.values())
    return max(len(form) - 1, 0) + scaled + inexact


class _Buffers:
    """Each buffer of one operand's shape: its content over the original blocks, and its error as a
    combination of rounding events (an update's, of size ``own``; a product's hand-down, of size
    ``inner`` times the bound below), so an error that a later update takes back out cancels, as
    it does in the arithmetic (``A11 += A12`` then ``A11 -= A12`` leaves A12's error out of A11)."""

    def __init__(self, blocks: tuple[str, ...]) -> None:
        self.content = {block: {block: Fraction(1)} for block in blocks}
        self.error: dict[str, dict[int, float]] = {block: {} for block in blocks}
        self.sizes: list[tuple[float, float]] = []  # each event's (own, inner)

    def magnitude(self, name: str) -> float:
        return float(sum(abs(c) for c in self.content.get(name, {}).values()))

    def _event(self, own: float, inner: float) -> dict[int, float]:
        self.sizes.append((own, inner))
        return {len(self.sizes) - 1: 1.0}

    def assign(self, updates: dict[str, dict[str, Fraction]]) -> None:
        """Targets set at once from the buffers' current values (a stage's net effect)."""
        content, error = {}, {}
        for target, form in updates.items():
            combined: dict[str, Fraction] = {}
            carried: dict[int, float] = {}
            for name, coef in form.items():
                for block, inner in self.content.get(name, {}).items():
                    combined[block] = combined.get(block, 0) + coef * inner
                for event, weight in self.error.get(name, {}).items():
                    carried[event] = carried.get(event, 0.0) + float(coef) * weight
            content[target] = {block: c for block, c in combined.items() if c}
            rounding = _roundings(form) * sum(float(abs(c)) * self.magnitude(name) for name, c in form.items())
            error[target] = {**carried, **self._event(rounding, 0.0)} if rounding else carried
        self.content.update(content)
        self.error.update(error)

    def hand_down(self, factor: dict[str, Fraction]) -> None:
        """A product's factor: one buffer is passed to the level below, which may overwrite and restore it."""
        if len(factor) == 1:
            (name,) = factor
            self.error[name] = {**self.error.get(name, {}), **self._event(0.0, self.magnitude(name))}

    def bound(self, block: str) -> tuple[float, float]:
        """The block's (own, inner): its events' sizes times the weights they reach it with."""
        own = sum(abs(w) * self.sizes[e][0] for e, w in self.error[block].items())
        inner = sum(abs(w) * self.sizes[e][1] for e, w in self.error[block].items())
        return own, inner


def restore_growth(schedule: Schedule, blocks: dict[str, tuple[str, ...]]) -> RestoreGrowth:
    """The first-order bound on each of ``blocks`` ({'A': ('A11', …), 'B': …}) after ``schedule`` ran.

    Each stage is taken by its net effect, as its kernel computes it (``lower.elementwise``: one
    rounding chain per output, from the values the stage began with)."""
    buffers = {operand: _Buffers(names) for operand, names in blocks.items()}
    likes = {t.name: t.like for t in schedule.temporaries}
    for stage in schedule.stages:
        effect = net_effect(tuple(s for s in stage.statements if isinstance(s, Update)))
        for operand, shaped in buffers.items():
            shaped.assign({target: form.as_dict() for target, form in effect.items()
                           if (operand_of(target) or likes.get(target)) == operand})
        for statement in stage.statements:
            if isinstance(statement, Multiply):
                for operand, factor in (("A", statement.left), ("B", statement.right)):
                    if operand in buffers:
                        buffers[operand].hand_down(factor.as_dict())
    return RestoreGrowth({operand: tuple(buffers[operand].bound(block) for block in names)
                          for operand, names in blocks.items()})
