"""Stability quantities: growth factor, Ballard et al.'s e and Q, and their growth per level.

Reference values for e_max and Q were computed by hand from the definitions
(the module docstring of bilinear.verify.stability) — the paper's own table
was not reachable to compare with:

- classical 2x2x2: every product is one A block times one B block
  (‖u‖₁ = ‖v‖₁ = 1, α + β = 2) and every C block sums 2 of them: e = (2, 2, 2, 2),
  Q = 2 + 2 = 4.
- Strassen: ‖u_r‖₁‖v_r‖₁ = 4, 2, 2, 2, 2, 4, 4 for M1..M7; C11 = M1 + M4 - M5 + M7
  gives e = 4 + 2 + 2 + 4 = 12, C12 = M3 + M5 gives 4; α + β = 4, 3, 3, 3, 3, 4, 4,
  so Q = 4 + 4 = 8 at C11 and C22 and 2 + 3 = 5 at C12 and C21.
- Winograd (unshared): ‖u‖₁‖v‖₁ = 1, 1, 4, 4, 4, 9, 4 for P1..P7; C12 = P1 + P3 + P5 + P6
  gives 18, as do C21 and C22; C11 = P1 + P2 gives 2.  α + β = 2, 2, 5, 5, 4, 6, 4,
  so Q = 4 + 6 = 10 where P6 is used.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from conftest import ALGORITHMS, ROOT, scheme_file
from hypothesis import given, settings
from hypothesis import strategies as st

import bilinear
from bilinear.frontend.importers import read_catalogue
from bilinear.report import report_data, to_markdown, to_text
from bilinear.verify.stability import LevelGrowth, stability


def _algorithm(stem: str):
    return bilinear.load(ROOT / "algorithms" / f"{stem}.bl").algorithm(stem)


@pytest.mark.parametrize(
    "stem, e_vector, q_vector",
    [
        ("naive2x2", (2, 2, 2, 2), (4, 4, 4, 4)),
        ("strassen", (12, 4, 4, 12), (8, 5, 5, 8)),
        ("winograd", (2, 18, 18, 18), (4, 10, 10, 10)),
    ],
)
def test_e_and_q_match_the_hand_computed_vectors(stem, e_vector, q_vector):
    result = stability(_algorithm(stem))
    assert result.e_vector == tuple(Fraction(e) for e in e_vector)
    assert result.q_vector == q_vector
    assert (result.e_max, result.q) == (max(e_vector), max(q_vector))


def test_classical_3x3x3_has_e_max_3_and_q_5():
    # Each C block sums 3 single-block products: e = 3, Q = 3 + 2.
    result = stability(read_catalogue(scheme_file("fast-matmul/classical333-27-81")))
    assert (result.e_max, result.q, result.growth_factor) == (3, 5, 27.0)


def test_rational_coefficients_enter_e_exactly():
    # Dumas, Pernet and Sedoglavic's accurate variant: growth factor 12.06616423 (from the file's header).
    result = stability(read_catalogue(scheme_file("plinopt/2x2x2_7_DPS-integral-12.0662_L.sms")))
    assert result.growth_factor == pytest.approx(12.06616423, abs=1e-8)
    assert isinstance(result.e_max, Fraction) and result.e_max.denominator > 1


def test_growth_per_level_is_the_power_of_one_level():
    result = stability(_algorithm("strassen"))
    assert result.per_level(3) == (
        LevelGrowth(1, pytest.approx(14.828427), 12, 8),
        LevelGrowth(2, pytest.approx(14.828427**2), 144, 16),
        LevelGrowth(3, pytest.approx(14.828427**3), 1728, 24),
    )
    assert result.growth_after(2) == pytest.approx(219.8823)


@pytest.mark.parametrize("path", ALGORITHMS, ids=[p.stem for p in ALGORITHMS])
def test_every_shipped_algorithm_is_at_least_as_unstable_as_classical(path):
    for algorithm in bilinear.load(path).algorithms:
        result = stability(algorithm)
        # The classical ⟨m,k,n⟩ algorithm has e_max = k and Q = k + 2; no bilinear scheme does better.
        assert result.e_max >= algorithm.shape.k and result.q >= algorithm.shape.k + 2


def test_the_report_shows_e_max_q_and_the_growth_per_level():
    report = bilinear.verify(ROOT / "algorithms" / "strassen.bl")
    text = to_text(report)
    assert "stability: growth factor 14.8284 per level (L levels: its L-th power); e_max 12, Q 8" in text
    assert "error growth after L levels (γ^L, e_max^L, L·Q): L=1: 14.8284, 12, 8; L=2: 219.882, 144, 16;" in text
    entry = report_data(report)["entries"][0]
    assert (entry["e_max"], entry["q"]) == (12, 8)
    assert entry["error_growth"][1] == {"levels": 2, "growth_factor": 219.8823, "e_max": 144, "q": 16}
    assert "| strassen | <2,2,2;7> | verified | 7 | 18 / 18 | 14.8284 | 12 | 8 |" in to_markdown(report)


_RATIONALS = st.builds(
    lambda n, d, e: Fraction(n, d) * Fraction(10) ** e,
    st.integers(-10**6, 10**6), st.integers(1, 10**6), st.integers(-400, 400))


@settings(max_examples=300, deadline=None)
@given(st.lists(_RATIONALS, max_size=12))
def test_the_fast_norms_agree_with_their_definitions(values):
    """The float path of log‖v‖₂ (taken when every value is a normal float) and the
    common-denominator 1-norm against the definitions in exact arithmetic."""
    import math

    from bilinear.verify.stability import _log_norm2, _norm1

    assert _norm1(values) == sum((abs(v) for v in values), Fraction(0))
    square = sum((v * v for v in values), Fraction(0))
    log = _log_norm2(values)
    if square == 0:
        assert log is None
    else:  # log √(p/q) = (log p - log q) / 2, computed on the integers' logarithms
        exact = (math.log(square.numerator) - math.log(square.denominator)) / 2
        assert log == pytest.approx(exact, rel=1e-12, abs=1e-12)


def test_the_markdown_report_says_its_workspace_is_per_level():
    """report.md's column read "workspace at n=8192" beside the text report's "per level": rsmm at
    three levels holds 416 MiB, where the column said 256."""
    from bilinear.verify import verify_program

    report = verify_program(bilinear.load(ROOT / "algorithms" / "rsmm.bl"))
    markdown = to_markdown(report)
    assert "| workspace per level at n=8192 float64 |" in markdown and "256.00 MiB |" in markdown


def test_fractional_output_weights_enter_e_over_their_common_denominator():
    """C11 = M1/3 + 2·M2/3 with M1 = M2 = A11·B11: e counts 1/3 + 2/3 = 1 (a source mutation that dropped the
    weights' common denominator gave 0)."""
    from bilinear.frontend import program_from_text

    algorithm = program_from_text("algorithm t <1,1,1;2>:\n  M1 = A11*B11\n  M2 = A11*B11\n  C11 = M1/3 + 2*M2/3\n").main
    assert stability(algorithm).e_vector == (Fraction(1),)


def test_a_growth_past_floats_range_is_infinite():
    """Two products that cancel 10^150·A12·B11 grow the error by about 2·10^150 a level: three levels pass float's
    range and read inf, not 0 (a source mutation)."""
    from bilinear.frontend import program_from_text

    big = 10**150
    algorithm = program_from_text(f"algorithm t <1,2,1;2>:\n  M1 = (A11 + {big}*A12)*B11\n"
                                  f"  M2 = A12*(B21 - {big}*B11)\n  C11 = M1 + M2\n").main
    assert stability(algorithm).growth_after(1) == pytest.approx(2e150)
    assert stability(algorithm).growth_after(3) == float("inf")
