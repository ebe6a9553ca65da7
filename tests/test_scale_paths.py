"""The fast paths of issue 10's size targets give what the slow ones gave.

- Kauers/flips lines of the plain form are read by two regular expressions; every such line
  of the shared catalogue files must read exactly as the ast reader reads it (values and spans).
- Lowering caches the passes by object identity: both element types get the same prepared
  schedule, and a changed pass table is never answered from the cache.
- The fused default schedule splits large schemes into stages whose kernels compile fast;
  the split schedule verifies, and the shipped small schemes keep one stage.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import SCHEMES, scheme_file

import bilinear.frontend.formats.trilinear as trilinear
from bilinear.api import load
from bilinear.diagnostics import BilinearError
from bilinear.ir import Schedule, Span
from bilinear.lower import levels
from bilinear.paths import algorithms_dir
from bilinear.lower.plan import Options, lower
from bilinear.schedule import default_schedule
from bilinear.schedule.default import FUSED_STAGE_VIEWS, fused_chunks
from bilinear.verify.lazy import verify_schedule


def _full_reader(line: str, number: int, path, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(trilinear, "_plain_product", lambda *args: None)
        try:
            return trilinear.parse_product(line, number, path)
        except BilinearError as error:
            return error


def test_plain_lines_read_as_the_ast_reader_reads_them(monkeypatch):
    files = sorted(p for folder in ("kauers", "flips") for p in (SCHEMES / folder).glob("*.exp"))
    if not files:
        pytest.skip(f"no .exp files in {SCHEMES}")
    plain = 0
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip() or line.strip().startswith("#"):
                continue
            whole = Span(str(path), number, 1, number, len(line) + 1)
            fast = trilinear._plain_product(line, number, path, whole)
            if fast is None:
                continue
            plain += 1
            slow = _full_reader(line, number, path, monkeypatch)
            assert not isinstance(slow, BilinearError), f"{path}:{number}"
            assert (fast.factors, fast.entry_spans, fast.span) == (slow.factors, slow.entry_spans, slow.span), f"{path}:{number}"
    assert plain > 100


@pytest.mark.parametrize(
    "line",
    [
        "(a11 + a12)*(b11)*(c11 + c11 - c11 - c11)",  # a zero factor: the full reader's message
        "(a11 + b12)*(b11)*(c11)",  # a sum mixing letters
        "(a11)*(a12)*(c11)",  # two factors of a-entries
        "(a11)*(b11)*(c11)/0",  # division by zero
        "(0*(a11))*(b11)*(c11)",  # zero times its one sum: a zero factor
    ],
)
def test_lines_the_plain_form_declines_get_the_full_readers_error(line, tmp_path, monkeypatch):
    path = tmp_path / "bad.exp"
    assert trilinear._plain_product(line, 1, path, Span(str(path), 1, 1, 1, len(line) + 1)) is None
    with pytest.raises(BilinearError):
        trilinear.parse_product(line, 1, path)


@pytest.mark.parametrize("plain, full", [
    ("(-a21+0*a22)*(-b11+b13)*(c12)", "(-a21+0*a22)*(-b11+b13)*c12"),
    ("(-a21+0a22)*(b11)*(c12)", "(-a21 + 0 a22)*(b11)*c12"),
    ("(a21)*(b11-0*b12)*(c12)", "(a21)*(b11 - 0*b12)*c12"),
])
def test_a_zero_term_in_a_sum_is_a_zero_coefficient_on_either_path(plain, full):
    """`0*a22` inside a sum was refused as "the product is multiplied by zero" by the full reader (bare
    `c12`) and read as a zero coefficient by the plain form (`(c12)`), the same product (a hunt)."""
    path = Path("x-223-1.exp")
    assert trilinear._plain_product(full, 1, path, Span(str(path), 1, 1, 1, len(full) + 1)) is None
    fast, slow = trilinear.parse_product(plain, 1, path), trilinear.parse_product(full, 1, path)
    assert fast.factors == slow.factors and all(0 not in factor.values() for factor in slow.factors)


def test_scaled_and_divided_plain_lines():
    path = "x.exp"
    product = trilinear.parse_product("(-3*(a11 - 2a12))*(b21)*(c11 + 2*c12)/6", 1, path)
    a, b, c = product.factors
    assert a == {(1, 1): -3, (1, 2): 6} and b == {(2, 1): 1}
    assert c == {(1, 1): pytest.approx(1 / 6), (1, 2): pytest.approx(1 / 3)} and c[(1, 1)].denominator == 6
    assert product.entry_spans[("a", 1, 2)].column == 13


def test_both_element_types_share_the_prepared_schedule():
    program = load(algorithms_dir() / "grey333.bl")
    first = lower(program, Options(dtype="float64"))
    second = lower(program, Options(dtype="float32"))
    assert first.levels[0].schedule is second.levels[0].schedule


def test_a_changed_pass_table_is_not_answered_from_the_cache(monkeypatch):
    program = load(algorithms_dir() / "strassen.bl")
    lower(program, Options())

    def broken(schedule):
        return replace(schedule, stages=schedule.stages[:-1])

    monkeypatch.setattr(levels, "PASSES", (*levels.PASSES, levels.Pass("broken", lambda options: True, broken)))
    with pytest.raises(AssertionError, match="broken"):
        lower(program, Options())


def test_fused_chunks_respect_the_budget():
    pairs = [(7, 5), (2, 10), (2, 9), (3, 4), (7, 5), (30, 40), (1, 1)]
    chunks = fused_chunks(pairs, budget=40)
    assert [i for chunk in chunks for i in chunk] == list(range(len(pairs)))
    for chunk in chunks:
        distinct = {pairs[i] for i in chunk}
        assert len(chunk) == 1 or sum(a + b for a, b in distinct) <= 40


@pytest.mark.parametrize("name", ["strassen", "winograd", "grey333"])
def test_shipped_schemes_keep_one_fused_stage(name):
    program = load(algorithms_dir() / f"{name}.bl")
    main = program.main
    algorithm = program.algorithm(main.algorithm) if isinstance(main, Schedule) else main
    assert len(default_schedule(algorithm, "fused").stages) == 1


def test_a_large_scheme_is_split_and_still_verifies():
    algorithm = load(scheme_file("kauers/446-k0a44a47e90f9bce.exp")).main
    schedule = default_schedule(algorithm, "fused")
    assert len(schedule.stages) > 5
    for stage in schedule.stages:
        distinct = {(len(s.left.terms), len(s.right.terms)) for s in stage.statements}
        assert len(stage.statements) == 1 or sum(a + b for a, b in distinct) <= FUSED_STAGE_VIEWS
    assert verify_schedule(schedule, algorithm).ok
    lowered = lower(load(scheme_file("kauers/446-k0a44a47e90f9bce.exp")), Options(leaf="fused"))
    assert len(lowered.product_specs()) == len(schedule.stages) + 1  # one launch per stage, and the peeled strips'
