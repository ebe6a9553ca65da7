"""The lazy schedule simulation (verify/lazy.py) pinned where the rest of the suite let a changed line pass: a
source-mutation audit of it.  113 mutants (annotations left out): 40 killed by the verifier's mutation files
and tests/test_diagnostics.py, 62 more by test_scale.py (the lazy simulation against the full one on every
shipped schedule), test_verify_approximate_mutations.py, test_from_zero.py, test_scale_paths.py and
test_reliability_answers.py; 3 killed here; 8 equivalent; none left unjudged:

- ``_may_read_original_c``'s ``return False`` as ``return None``: its answer is only tested for truth;
- the whole-number shortcut skipped (lines 46 and 48, either coefficient kept a Fraction): the same sums;
- the backward walk over definitions started past the last one, or run on to index -1 (line 76): ``*V``
  names that do not exist pop nothing and are skipped;
- a read of a buffer in ``unknown`` taken from its stale value (line 44 without ``name in self.unknown``):
  a buffer enters ``unknown`` only where an error is reported, so the lazy verdict is no either way, and
  the diagnostics that reach the user are the full simulation's;
- ``block is None`` dropped from the wrong-blocks test (line 98): ``per_block != {None: 1}`` then holds;
- a final C block's value taken without ``or Form()`` (line 73): a C block's value is never None (it
  starts as C⁰ and is written only with Forms), so the ``or`` was dead and is gone.

No bug found.
"""

from __future__ import annotations

from helpers.schedules import ONE, schedule_for

from bilinear.verify.lazy import LazySimulation, verify_schedule


def test_a_half_is_read_as_itself_not_as_its_numerator():
    """X = ½·A11, then C11 += X·B11: C11 ends as C11⁰ + ½·A11·B11, wrong.  The whole-number shortcut
    applies to a denominator of exactly 1: taken for a denominator of 2 (where the statement's
    coefficient is read, or where X's value is), ½ became 1, and the lazy simulation accepted it."""
    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: A\n  stage s1: X = 1/2*A11\n"
                                            "  stage p1: C11 += X * B11\n")
    assert [e.message for e in LazySimulation(schedule, algorithm).run().errors] == [
        "the C blocks do not end as their classical sums"]
    assert [e.message for e in verify_schedule(schedule, algorithm).errors] == [
        "C11 ends holding 1/2*A11*B11 + C11⁰ but must hold A11*B11 + C11⁰; has +1/2*A11*B11 where it needs +A11*B11"]


def test_a_half_scaled_back_is_accepted_by_the_lazy_simulation():
    """X = ½·A11, then X·B11 → +2·C11: right, and decided lazily (C11 ends as the symbol *V0)."""
    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp X: A\n  stage s1: X = 1/2*A11\n"
                                            "  stage p1: X * B11 -> +2*C11\n")
    check = LazySimulation(schedule, algorithm).run()
    assert check.ok and str(check.final["C11"]) == "*V0"


def test_a_c_value_written_last_and_never_used_does_not_stop_the_backward_walk():
    """T = A11·B11 (*V0), C11 += T (*V1), then U = T (*V2), which no C block holds.  The backward
    walk skips *V2 and goes on to *V1 and *V0; stopping at the first definition no C block reaches
    left *V1 unresolved in C11, so the lazy simulation refused a right schedule (and the full one,
    slow on a large scheme, had to decide)."""
    schedule, algorithm = schedule_for(ONE, "schedule s for one:\n  temp T: C\n  temp U: C\n  stage p1: T = A11 * B11\n"
                                            "  stage s1: C11 += T\n  stage s2: U = T\n")
    check = LazySimulation(schedule, algorithm).run()
    assert check.ok, [e.message for e in check.errors]
    assert {name: str(check.final[name]) for name in ("T", "C11", "U")} == {"T": "*V0", "C11": "*V1", "U": "*V2"}
