"""The largest factor a lowered product's leaves multiply alpha by, and the alpha it cannot take.

A leaf GEMM (or fused launch) runs with ``alpha·c``, c the coefficient its levels give it (a weighted
output, ``C11 = 3*M1 - 2*M2``, is 3 at one level and 9 at two), formed as a scalar of the call's dtype.
Lowering keeps each c in the dtype's range (``check_range``); alpha·c may still pass it, and that scalar
is then inf: every element the leaf writes is inf or NaN, where the product itself is finite.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np

from ..ir import Form, Multiply
from .levels import LevelPlan
from .plan import Lowered


def _folded(form: Form) -> Fraction:
    """What an operand's coefficient adds to a leaf's factor: a single view's is folded into it (a sum's
    stay in the fused kernel, as ProblemForm.normalized leaves them)."""
    return abs(form.terms[0][1]) if len(form.terms) == 1 else Fraction(1)


def _largest(form: Form) -> Fraction:
    return max((abs(coef) for _, coef in form.terms), default=Fraction(0))


def _level_factor(plan: LevelPlan) -> Fraction:
    """The most one product statement of a level's plans (its own, from zero, its accumulating fallback)
    multiplies its product by: its largest target coefficient times a single A and B view's."""
    plans = [variant for variant in (plan, plan.from_zero, plan.accumulate_fallback) if variant is not None]
    return max((_folded(s.left) * _folded(s.right) * _largest(s.targets) for variant in plans
                for step in variant.steps for s in getattr(step, "statements", ()) if isinstance(s, Multiply)),
               default=Fraction(1))


def largest_leaf_scale(lowered: Lowered) -> Fraction:
    """At least the largest |c| any leaf of ``lowered`` multiplies alpha by: the product over its
    depth-first levels of each level's largest factor (a leaf's c is the product of the factors on its
    path; walking every path took seconds for msmes2 at three levels).  Breadth-first levels apply
    alpha apart from their coefficients."""
    bound = Fraction(1)
    for plan in lowered.levels:
        bound *= _level_factor(plan)
    return bound


def alpha_scale(largest: Fraction) -> float | None:
    """``largest`` (:func:`largest_leaf_scale`) as the float64 both runtimes multiply |alpha| by, None
    where it is at most 1 (no alpha in range is taken past it); past float64's own range, its largest."""
    return None if largest <= 1 else float(min(largest, Fraction(sys.float_info.max)))


def alpha_refusal(largest: Fraction, dtype: str, alpha: float) -> str | None:
    """Why a call with ``alpha`` cannot run: alpha times ``largest`` (:func:`largest_leaf_scale`) is past
    ``dtype``'s range (the leaves' scalar would be inf); None where it is within it.  The generated
    library checks the same product (``alpha_scale``), returning -5."""
    scale = alpha_scale(largest)
    if scale is None or abs(alpha) * scale <= float(np.finfo(dtype).max):
        return None
    return (f"alpha = {alpha:g} times {largest}, the largest coefficient the leaves of this product may multiply it by, "
            f"is past {dtype}'s range (its largest is {np.finfo(dtype).max!s}): a leaf's scalar would be inf; scale A "
            "or B instead, or choose a smaller alpha")
