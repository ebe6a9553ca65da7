"""Shape conditions pinned where the rest of the suite let a changed line pass: a source-mutation audit of
bilinear/verify/shape_condition.py against tests/test_shape_conditions.py, tests/test_cli_verify.py,
tests/test_workspace_fallback.py and tests/test_schedule_product.py.  7 mutants: 6 killed by the suite, none
equivalent, 1 killed here (``read``'s default ``False`` as ``True``: the verifier always passes ``read``, but
ShapeCondition is exported from bilinear.verify), none left unjudged.  One hand-made mutant the tool does not
make also passed the suite and is killed here: ``described`` naming an operand block (a zero A11 read into a
C-shaped target) as a temporary, since no test reached that branch.  No bug found.
"""

from __future__ import annotations

import bilinear
from bilinear.ir import Shape
from bilinear.verify import ShapeCondition

OPERAND_READ = """algorithm n1 <1,1,1;1>:
  M1 = A11 * B11
  C11 = M1

schedule s for n1: inplace
  stage p: A11 * B11 -> +C11
  stage z: A11 = A11 - A11
  stage a: C11 += A11
"""


def test_a_condition_built_without_read_is_a_write_condition():
    """ShapeCondition("K", "N", "Y", "A", "B") has read False and reads "K/k = N/n (temporary Y, shaped like A,
    holds a B-side value)"; with read=True the same fields read "... is read into a buffer shaped like B"."""
    written = ShapeCondition("K", "N", "Y", "A", "B")
    assert written.read is False
    assert str(written) == "K/k = N/n (temporary Y, shaped like A, holds a B-side value)"
    assert written == ShapeCondition("K", "N", "Y", "A", "B", False)
    read = ShapeCondition("K", "N", "Y", "A", "B", read=True)
    assert str(read) == "K/k = N/n (temporary Y, shaped like A, is read into a buffer shaped like B)"
    assert written != read


def test_holds_compares_the_two_named_block_dimensions():
    """M/m = N/n holds for blocks (5, 7, 5) and not for (5, 7, 6) nor (5, 5, 6), whatever K/k is; K/k = M/m
    holds for (4, 4, 9) and not for (4, 9, 4)."""
    m_n = ShapeCondition("M", "N", "Y", "A", "C")
    assert [m_n.holds(b) for b in ((5, 7, 5), (5, 7, 6), (5, 5, 6))] == [True, False, False]
    k_m = ShapeCondition("K", "M", "Z", "B", "C", read=True)
    assert [k_m.holds(b) for b in ((4, 4, 9), (4, 9, 4))] == [True, False]


def test_an_operand_block_read_holding_zero_is_named_as_itself(tmp_path):
    """A11, zeroed in place, then added into C11: its condition is ShapeCondition("K", "N", "A11", "A", "C",
    read=True), stated "K/k = N/n (A11 is read into a buffer shaped like C)" (not "temporary A11, shaped like
    A,"), and with a <2,3,4> shape's counts "K/3 = N/4 (A11 ...)"."""
    path = tmp_path / "operand_read.bl"
    path.write_text(OPERAND_READ, encoding="utf-8")
    (entry,) = [e for e in bilinear.verify(path).entries if hasattr(e, "shape_conditions")]
    assert entry.shape_conditions == (ShapeCondition("K", "N", "A11", "A", "C", True),)
    (condition,) = entry.shape_conditions
    assert str(condition) == "K/k = N/n (A11 is read into a buffer shaped like C)"
    assert condition.described(Shape(2, 3, 4)) == "K/3 = N/4 (A11 is read into a buffer shaped like C)"
