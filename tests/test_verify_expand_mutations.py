"""Expansions of named sums (verify/expand.py) pinned where the rest of the suite let a changed line pass: a
source-mutation audit of it.  167 mutants (annotations left out): 111 killed by tests/test_diagnostics.py and
the verifier's mutation files, 42 more by test_verify_modular_mutations.py, test_properties.py,
test_export.py, test_scale.py, test_mutations.py and test_cli_verify.py (3 of the 153 by hanging: a walk
that never leaves a sum); 5 killed here; 9 equivalent; none left unjudged.

Here: a sum read along three paths (a walk meets it again after finishing it), coefficients that cancel to a
denominator and back, fix suggestions through a chain of sums, a derivative (``Expansion.partial``) taken
from a fresh expansion two sums above its name, and a loop.  Equivalent:

- the ``Integral`` alias dropped (line 42): annotations only;
- the cache of recent expansions (lines 37-38) not filled, filled behind its head, or kept one longer:
  each Expansion is the same, made again;
- ``operand``'s stand-in numerator 1 made 2 (line 73): only its key is read;
- a finished sum pushed again (line 102 without ``not in self._integrals``, line 146 without ``not in
  known``): it is popped and skipped;
- the derivative's own name walked as a sum (lines 131 and 146 without ``!= name``): its own entry is
  never read, as every read of it takes 1.

No bug found.
"""

from __future__ import annotations

import pytest

from bilinear.frontend.loader import program_from_text
from bilinear.ir import Algorithm, Form, Shape, Sum
from bilinear.verify.algorithm import brent_residual, single_coefficient_fixes
from bilinear.verify.expand import Expansion, expansion_of

#: ⟨1,2,1;2⟩, C11 = A11·B11 + A12·B21, where M1's left factor S3 = S0 + S1 + S2 reads S0 along three paths:
#: S1 = 2·S0 + A12 = A11 + A12 and S2 = S0 − A12 = ½·A11 − A12, so S3 = 2·A11, and C11 takes ½·M1.  A walk
#: from S3 meets S0 (pushed first) again after S2 has finished it: that visit is skipped, and the walk goes on.
DIAMOND = """\
algorithm diamond <1,2,1;2>:
  S0 = 1/2*A11
  S1 = 2*S0 + A12
  S2 = S0 - A12
  S3 = S0 + S1 + S2
  M1 = S3 * B11
  M2 = A12 * B21
  C11 = 1/2*M1 + M2
"""


def _algorithm(text: str):
    return program_from_text(text, "e.bl").algorithms[0]


def test_a_sum_read_along_three_paths_expands_once_in_lowest_terms():
    """S0 is read by S1, S2 and S3: each expands once (S0, finished on one path, is neither taken for a
    sum that depends on itself on another nor the end of the walk), and 2·(½·A11) reduces to A11 over 1
    (numerators divided by their common factor, not multiplied by it)."""
    expansion = Expansion(_algorithm(DIAMOND))
    assert {name: str(expansion.of(name)) for name in ("S3", "S2", "S1", "S0")} == {
        "S3": "2*A11", "S2": "1/2*A11 - A12", "S1": "A11 + A12", "S0": "1/2*A11"}
    assert brent_residual(expansion) == {}


def test_a_fix_inside_a_chain_of_sums_is_scaled_by_the_chain():
    """S1 = A11, S2 = 2·S1, S3 = S2 − S1 (= A11) and M1 = (S3 + S1)·B11: C11 is 2·A11·B11, twice due.
    Each fix's step is the residual over what one unit of its coefficient moves C11 by: S2 in M1's left
    factor moves it by 2·A11·B11 (S2 = 2·A11), so from 0 to −½; A11 in S1 by 2·A11·B11 (through
    S2 = 2·S1, S3 = S2 − S1 and M1's own +S1: 2 − 1 + 1), so from 1 to ½."""
    expansion = expansion_of(_algorithm(
        "algorithm s <1,1,1;1>:\n  S1 = A11\n  S2 = 2*S1\n  S3 = S2 - S1\n  M1 = (S3 + S1) * B11\n  C11 = M1\n"))
    assert single_coefficient_fixes(expansion, brent_residual(expansion), "e.bl") == [
        "the coefficient of A11 in the left factor of M1 from 0 to -1 (line 5)",
        "the coefficient of S1 in the left factor of M1 from 1 to 0 (line 5)",
        "the coefficient of S3 in the left factor of M1 from 1 to 0 (line 5)",
        "the coefficient of A11 in S2 from 0 to -1 (line 3)",
        "the coefficient of S1 in S2 from 2 to 1 (line 3)",
        "the coefficient of A11 in S3 from 0 to -1 (line 4)",
        "the coefficient of S1 in S3 from -1 to -2 (line 4)",
        "the coefficient of S2 in the left factor of M1 from 0 to -1/2 (line 5)",
        "the coefficient of B11 in the right factor of M1 from 1 to 1/2 (line 5)",
        "the coefficient of M1 in C11 from 1 to 1/2 (line 6)",
        "the coefficient of A11 in S1 from 1 to 1/2 (line 2)",
        "the coefficient of S2 in S3 from 1 to 1/2 (line 4)",
    ]


def test_partial_derivatives_through_a_diamond():
    """∂S3/∂A11 = 2 whether S3 is a name in the form or the form (every sum below expanded first, S0 met
    again and skipped; a fresh Expansion each, as the derivatives found are kept per name),
    ∂S3/∂S0 = 1 + 2 + 1 = 4 (directly, through S1 and through S2), and ∂(2·S3 − S1)/∂S0 = 8 − 2 = 6; a
    name the form never reaches has 0."""
    algorithm = _algorithm(DIAMOND)
    sums = {s.name: s.form for s in algorithm.sums}
    assert Expansion(algorithm).partial(Form.symbol("S3"), "A11") == 2
    expansion = Expansion(algorithm)
    assert (expansion.partial(sums["S3"], "A11"), expansion.partial(sums["S3"], "B11")) == (2, 0)
    assert expansion.partial(sums["S3"], "S0") == 4
    assert expansion.partial(Form.symbol("S3").scale(2) - sums["S1"], "S0") == 6


def test_a_partial_derivative_refuses_a_sum_that_reads_itself():
    """P = Q + A11 and Q = 2·P: ∂Q/∂A11 has no finite walk; the derivative's own walk says so, as the
    expansion's does (without its check it went round P and Q for ever)."""
    looped = (Sum("P", Form.of({"Q": 1, "A11": 1})), Sum("Q", Form.of({"P": 2})))
    with pytest.raises(ValueError, match="^named sum [PQ] depends on itself$"):
        Expansion(Algorithm("loop", Shape(1, 1, 1), looped, (), ())).partial(Form.symbol("Q"), "A11")
