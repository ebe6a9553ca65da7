"""The verifier's records of a simulated schedule pinned where the rest of the suite let a changed line
pass: a source-mutation audit of bilinear/verify/simulated.py and bilinear/verify/conflicts.py.

simulated.py, against tests/test_diagnostics.py, test_verify_approximate_mutations.py,
test_verify_counts_mutations.py, test_scale.py, test_from_zero.py and test_shape_conditions.py (not
slow): 13 mutants, 11 killed by the suite (kind_of's every branch and both halves of its C test among
them), 1 equivalent (kind_of's ``return None`` for a zero value rewritten as ``return None``: the same
source), 1 killed here (``ProductUse`` not frozen: unhashable, and its fields open to change after the
check), none left unjudged.

conflicts.py, against test_scale.py (its comparison with the pairwise check), test_diagnostics.py,
test_verify_counts_mutations.py and test_verify_approximate_mutations.py: 14 mutants, 12 killed by
the suite, 1 equivalent (``_Access`` not frozen: private, built once per statement and only read,
never hashed nor changed), 1 killed here (``Conflict`` not frozen, as ProductUse), none left unjudged.

No bug found.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from bilinear.frontend import program_from_text
from bilinear.ir import Form, Update
from bilinear.verify import verify_program
from bilinear.verify.conflicts import Conflict, stage_conflicts
from bilinear.verify.simulated import ProductUse


def test_a_product_use_is_a_frozen_value():
    """`C11 += A11 * B11` in stage p computes one's M1 times 1: one ProductUse ('p', the statement, 'M1',
    1).  Equal uses hash alike (the report's and a copy of it make a set of one), and no field can be
    changed after the check (unfrozen, the dataclass's __eq__ left it unhashable and its product open
    to reassignment)."""
    text = "algorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n\nschedule s for one:\n  stage p: C11 += A11 * B11\n"
    (entry,) = [e for e in verify_program(program_from_text(text, "one.bl")).entries if hasattr(e, "product_uses")]
    (use,) = entry.product_uses
    assert str(use.statement) == "A11 * B11 -> +C11"
    assert use == ProductUse("p", use.statement, "M1", Fraction(1))
    assert {use, dataclasses.replace(use)} == {use}
    with pytest.raises(dataclasses.FrozenInstanceError):
        use.product = "M2"  # type: ignore[misc]


def test_a_conflict_is_a_frozen_value():
    """X = A11 and X = A12 in one concurrent stage both set X: one Conflict, the later statement to
    blame, "both write X".  Equal conflicts hash alike, and none can be changed (unfrozen: unhashable)."""
    first, second = Update("X", Form.symbol("A11")), Update("X", Form.symbol("A12"))
    (conflict,) = stage_conflicts([first, second])
    assert conflict == Conflict(second, first, "both write X")
    assert {conflict, Conflict(second, first, "both write X")} == {conflict}
    with pytest.raises(dataclasses.FrozenInstanceError):
        conflict.reason = "none"  # type: ignore[misc]
