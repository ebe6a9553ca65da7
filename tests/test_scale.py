"""Scale: the fast exact paths agree with the direct ones, and large schemes stay fast.

- the sparse integer Brent check (verify.tensor) against expanding every C
  block as a Form (``Expansion.output_value``), on random corrupted schemes;
- dependency grouping (schedule.stages) against the pairwise ``depends``;
- the lazy schedule simulation (verify.lazy) against the full one, on the
  shipped schedules, their single-target and fused forms, and corruptions;
- timing: verification near-linear in nonzeros (issue 12) and AlphaTensor's
  ⟨11,11,11;896⟩ under 5 s (skipped when ../shared is absent).
"""

from __future__ import annotations

import gc
import time
from dataclasses import replace
from fractions import Fraction

import pytest
from conftest import ALGORITHMS, ROOT, SCHEMES
from helpers import schemes as S
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_properties import transformed

import bilinear
from bilinear.diagnostics import BilinearError
from bilinear.frontend.loader import program_from_text
from bilinear.ir import Algorithm, Form, Multiply, Output, Product, Shape, Sum, Update, block_name
from bilinear.schedule import default_schedule, fuse_elementwise, single_target
from bilinear.schedule.stages import depends, group_stages
from bilinear.verify import report_algorithm
from bilinear.verify.algorithm import brent_residual, verify_algorithm
from bilinear.verify.conflicts import stage_conflicts
from bilinear.verify.expand import Expansion, classical
from bilinear.verify.lazy import LazySimulation
from bilinear.verify.schedule import _Simulation

SHARED = SCHEMES  # ../shared/schemes, or the folder BILINEAR_SCHEMES names
ALPHATENSOR = SHARED / "alphatensor" / "factorizations_r.npz"


def _direct_residual(algorithm: Algorithm) -> dict[str, Form]:
    """The residual the slow way: every C block expanded as a Form, minus its classical sum."""
    expansion = Expansion(algorithm)
    shape = algorithm.shape
    residual = {}
    for i in range(1, shape.m + 1):
        for j in range(1, shape.n + 1):
            block = block_name("C", i, j)
            difference = expansion.output_value(block) - classical(i, j, shape.k)
            if not difference.is_zero():
                residual[block] = difference
    return residual


def _load(scheme: S.Scheme) -> Algorithm:
    return program_from_text(S.to_equations(scheme, "t"), "<scale>").algorithms[0]


entries = st.fractions(min_value=-3, max_value=3, max_denominator=4)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_sparse_brent_check_agrees_with_direct_expansion(data):
    scheme, _ = data.draw(transformed(steps_from=("transpose", "cyclic", "permute", "rescale")))
    r = data.draw(st.integers(0, scheme.rank - 1))
    table = data.draw(st.sampled_from("UVW"))
    rows, cols = getattr(scheme, table)[r].shape
    scheme = S.with_entry(
        scheme, table, r, data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1)), data.draw(entries)
    )
    try:
        algorithm = _load(scheme)
    except BilinearError:  # the change left a factor zero: not a scheme the frontend accepts
        assume(False)
    assert brent_residual(Expansion(algorithm)) == _direct_residual(algorithm)


def test_sparse_brent_check_is_exact_past_int64():
    """Coefficients whose products overflow int64 take the Python-integer path and stay exact."""
    big = Fraction(2**40, 3)
    product = Product("M1", Form.of({"A11": big}), Form.of({"B11": big}))
    algorithm = Algorithm("big", Shape(1, 1, 1), (), (product,), (Output("C11", Form.of({"M1": 1 / big**2})),))
    assert brent_residual(Expansion(algorithm)) == {}
    wrong = replace(algorithm, outputs=(Output("C11", Form.of({"M1": 1 / big})),))
    assert brent_residual(Expansion(wrong)) == _direct_residual(wrong) != {}


def _reference_grouping(statements):
    """group_stages as first written: compare every pair with ``depends``."""
    placed, stages, kinds = [], [], []
    for statement in statements:
        earliest = 1 + max((index for other, index in placed if depends(statement, other)), default=-1)
        kind = type(statement).__name__
        index = next((i for i in range(earliest, len(stages)) if kinds[i] == kind), None)
        if index is None:
            index = max(earliest, len(stages))
            stages.append([])
            kinds.append(kind)
        stages[index].append(statement)
        placed.append((statement, index))
    return [tuple(group) for group in stages]


buffers = st.sampled_from(["A11", "A12", "B11", "X", "Y", "C11", "C12"])


@st.composite
def statements(draw):
    target = draw(buffers)
    terms = draw(st.dictionaries(buffers, st.integers(-2, 2).filter(bool), min_size=1, max_size=3))
    return Update(target, Form.of(terms))


@settings(max_examples=200, deadline=None)
@given(st.lists(statements(), max_size=12))
def test_linear_grouping_agrees_with_pairwise(program):
    assert [stage.statements for stage in group_stages(tuple(program))] == _reference_grouping(program)


def _schedules():
    for path in ALGORITHMS:
        program = bilinear.load(path)
        for schedule in program.schedules:
            yield path.stem, schedule, program.algorithm(schedule.algorithm)
        for algorithm in program.algorithms:
            yield path.stem, default_schedule(algorithm, "cublas"), algorithm


@pytest.mark.parametrize("name,schedule,algorithm", list(_schedules()), ids=lambda x: x if isinstance(x, str) else "")
def test_lazy_simulation_agrees_with_full(name, schedule, algorithm):
    for variant in (schedule, single_target(schedule), fuse_elementwise(single_target(schedule))):
        assert LazySimulation(variant, algorithm).run().ok == _Simulation(variant, algorithm).run().ok is True
    # corrupt each element-wise update's coefficients in turn: the lazy check never accepts what the full one rejects
    for index, (stage, statement) in enumerate(schedule.statements()):
        if isinstance(statement, Update) and len(statement.form.terms) > 1:
            name0, coef0 = statement.form.terms[-1]
            broken = _replace_statement(schedule, index, replace(statement, form=statement.form.with_coefficient(name0, coef0 + 1)))
            assert LazySimulation(broken, algorithm).run().ok == _Simulation(broken, algorithm).run().ok


def _replace_statement(schedule, index, new):
    stages, seen = [], 0
    for stage in schedule.stages:
        statements = list(stage.statements)
        for i in range(len(statements)):
            if seen == index:
                statements[i] = new
            seen += 1
        stages.append(replace(stage, statements=tuple(statements)))
    return replace(schedule, stages=tuple(stages))


def _classical(m: int, k: int, n: int) -> Algorithm:
    """The classical ⟨m,k,n⟩ scheme, one product per (i, l, j): mkn one-entry products."""
    products, outputs = [], {}
    for i in range(1, m + 1):
        for l in range(1, k + 1):
            for j in range(1, n + 1):
                name = f"M{len(products) + 1}"
                products.append(Product(name, Form.symbol(block_name("A", i, l)), Form.symbol(block_name("B", l, j))))
                outputs.setdefault(block_name("C", i, j), {})[name] = 1
    return Algorithm("classical", Shape(m, k, n), (), tuple(products), tuple(Output(c, Form.of(w)) for c, w in outputs.items()))


def _seconds(algorithm: Algorithm, repeat: int = 3) -> float:
    """The fastest of ``repeat`` verifications, each after a collection: one run alone swings 2-3×
    with the garbage collector and the machine's load (a CI run measured 0.07 s and 1.48 s, 20.6×)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        assert report_algorithm(algorithm).ok
        times.append(time.perf_counter() - start)
    return min(times)


def test_verification_is_near_linear_in_products():
    """Issue 12: 10⁴ products took 8 s and 3·10⁴ 69 s; 8× the products must cost well under 8²× the time
    (the fastest of three runs: 4.9-15× on a 2-core machine)."""
    small, large = _classical(10, 10, 10), _classical(20, 20, 20)
    small_time, large_time = _seconds(small), _seconds(large)
    assert large_time < 20 * max(small_time, 0.05), (small_time, large_time)
    assert large_time < 10


@pytest.mark.skipif(not ALPHATENSOR.exists(), reason="../shared/schemes (AlphaTensor) is absent")
def test_alphatensor_11x11x11_verifies_in_under_5_seconds():
    start = time.perf_counter()
    program = bilinear.load(ALPHATENSOR, key="11,11,11")
    report = bilinear.verify(program)
    elapsed = time.perf_counter() - start
    assert report.ok and program.algorithms[0].rank == 896
    assert elapsed < 5, elapsed


def test_a_chain_of_twenty_thousand_sums_expands_and_verifies():
    """A straight-line program's sums read the one before (PLinOpt's ⟨32,32,32;15096⟩ has 50,000):
    expanding them must not recurse once per link.  S0 = A11, S_i = 2·S_(i-1) − A11 = A11."""
    chain = [Sum("S0", Form.of({"A11": 1}))]
    chain += [Sum(f"S{i}", Form.of({f"S{i - 1}": 2, "A11": -1})) for i in range(1, 20_000)]
    product = Product("M1", Form.of({"S19999": 1}), Form.of({"B11": 1}))
    algorithm = Algorithm("chain", Shape(1, 1, 1), tuple(chain), (product,), (Output("C11", Form.of({"M1": 1})),))
    assert Expansion(algorithm).of("S19999") == Form.of({"A11": 1})
    assert report_algorithm(algorithm).ok


def _chain(links: int, output_weight: int) -> Algorithm:
    """S0 = A11, S_i = 2·S_(i-1) − A11 (= A11), M1 = S_last·B11, C11 = output_weight·M1."""
    chain = [Sum("S0", Form.of({"A11": 1}))]
    chain += [Sum(f"S{i}", Form.of({f"S{i - 1}": 2, "A11": -1})) for i in range(1, links)]
    product = Product("M1", Form.of({f"S{links - 1}": 1}), Form.of({"B11": 1}))
    return Algorithm("chain", Shape(1, 1, 1), tuple(chain), (product,), (Output("C11", Form.of({"M1": output_weight})),))


def test_a_wrong_program_with_a_long_chain_of_sums_is_reported_without_recursing():
    """The fix search's derivatives walked the chain recursively (a RecursionError at 20,000 sums);
    past FIX_SEARCH_SUMS it is not run, and the report says so."""
    report = report_algorithm(_chain(20_000, 2))
    assert not report.ok
    (error,) = report.errors
    assert error.message.startswith("C11 is wrong: it computes 2*A11*B11 but must be A11*B11")
    assert error.notes == (
        "no single-coefficient fix was searched for: the program has 20000 named sums (the search covers up to 400)",
    )


def test_the_fix_search_walks_a_chain_longer_than_the_recursion_limit():
    """400 links under a recursion limit of 300 (a chain past Python's default 1,000 takes the
    quadratic search 15 s): a walk that recurses once per link fails."""
    import sys

    links, limit = 400, sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        errors = verify_algorithm(_chain(links, 2), fix_search_sums=links)
    finally:
        sys.setrecursionlimit(limit)
    assert errors[0].notes[0] == "changing the coefficient of M1 in C11 from 2 to 1 would make every equation hold"


def test_expansion_keeps_exact_fractions_and_refuses_a_sum_that_reads_itself():
    sums = (Sum("H", Form.of({"A11": Fraction(1, 3), "A12": Fraction(-2, 9)})), Sum("G", Form.of({"H": Fraction(3, 2), "A12": Fraction(1, 3)})))
    expansion = Expansion(Algorithm("x", Shape(1, 2, 1), sums, (), ()))
    assert expansion.of("G") == Form.of({"A11": Fraction(1, 2)})
    looped = (Sum("P", Form.of({"Q": 1, "A11": 1})), Sum("Q", Form.of({"P": 2})))
    with pytest.raises(ValueError, match="depends on itself"):
        Expansion(Algorithm("loop", Shape(1, 1, 1), looped, (), ())).of("Q")


def test_a_stage_is_checked_for_conflicts_once_per_statement_not_per_pair(monkeypatch):
    """Every pair of a stage rebuilt both statements' reads and writes: the classical ⟨12,12,12⟩'s
    one stage of 1728 products took `compile` 47 s.  Each statement's buffers are built once now."""
    algorithm = _classical(8, 8, 8)
    schedule = default_schedule(algorithm, "cublas")
    assert [len(stage.statements) for stage in schedule.stages] == [512]
    calls = []
    original = Multiply.reads
    monkeypatch.setattr(Multiply, "reads", lambda self: calls.append(self) or original(self))
    assert _Simulation(schedule, algorithm).run().ok
    assert len(calls) <= 2 * 512, len(calls)


def _reference_conflicts(statements) -> list[tuple[str, str, str]]:
    """The stage check as first written: every pair, earlier statement first."""
    def own_reads(statement):
        return statement.reads() - statement.writes() if statement.is_accumulation() else statement.reads()

    found = []
    for i, first in enumerate(statements):
        for second in statements[i + 1:]:
            for writer, reader in ((first, second), (second, first)):
                if overlap := writer.writes() & own_reads(reader):
                    found.append((str(writer), str(reader), f"it writes {', '.join(sorted(overlap))}, which the other reads"))
                    break
            else:
                both = first.writes() & second.writes()
                if both and not (first.is_accumulation() and second.is_accumulation()):
                    found.append((str(second), str(first), f"both write {', '.join(sorted(both))}"))
    return found


@st.composite
def products(draw):
    def form(names):
        return Form.of(draw(st.dictionaries(st.sampled_from(names), st.integers(-2, 2).filter(bool), min_size=1, max_size=2)))

    return Multiply(form(["A11", "A12", "X"]), form(["B11", "B12", "Y"]), form(["C11", "C12", "X", "Y"]), draw(st.booleans()))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(statements(), products()), max_size=10))
def test_stage_conflicts_agree_with_pairwise(stage):
    found = [(str(c.culprit), str(c.other), c.reason) for c in stage_conflicts(stage)]
    assert found == _reference_conflicts(stage)


def _collection_during_read(monkeypatch, text):
    """Whether the cyclic collector was on while lark parsed ``text`` (with sums of names lexed whole, then, where
    that parser stops, with the language's own) and while the tree became IR."""
    from bilinear.frontend import parser

    seen = {}
    for name, lark in (("parse", parser.NAME_SUMS_LARK), ("language's parse", parser.LARK)):
        monkeypatch.setattr(lark, "parse", lambda *a, name=name, parse=lark.parse, **k:
                            (seen.setdefault(name, gc.isenabled()), parse(*a, **k))[1])
    transform = parser._ToIR.transform
    monkeypatch.setattr(parser._ToIR, "transform",
                        lambda self, tree: (seen.setdefault("transform", gc.isenabled()), transform(self, tree))[1])
    try:
        program_from_text(text, "t.bl")
    except BilinearError:
        pass
    return seen


def test_reading_a_file_pauses_the_cyclic_collector_and_restores_it(monkeypatch):
    """A parse tree is millions of objects with no cycle among them, and each of the collector's passes walked
    them all: reading <27,27,27;12167> (3.8 MB of equations) took 34 s with it on, 16 s with it off."""
    assert gc.isenabled()
    strassen = (ROOT / "algorithms" / "strassen.bl").read_text()
    assert _collection_during_read(monkeypatch, strassen) == {"parse": False, "transform": False}
    assert gc.isenabled()
    assert _collection_during_read(monkeypatch, "algorithm x <1,1,1>:\n  C11 = A11 * B11 +\n") == {
        "parse": False, "language's parse": False}
    assert gc.isenabled()  # after a syntax error too
    gc.disable()
    try:  # a caller's own choice stands
        assert _collection_during_read(monkeypatch, strassen) == {"parse": False, "transform": False}
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_kronecker_product_is_built_with_the_cyclic_collector_paused(monkeypatch):
    """<27,27,27;12167> built as grey333's product with <9,9,9;529>: 2.4 s with the collector on, 1.1 s off."""
    from bilinear import compose

    seen, build = [], compose._build
    monkeypatch.setattr(compose, "_build", lambda *args: (seen.append(gc.isenabled()), build(*args))[1])
    strassen = bilinear.load("strassen").main
    assert compose.kronecker(strassen, strassen).shape == compose.Shape(4, 4, 4)
    assert seen == [False] and gc.isenabled()


def test_lowering_and_writing_a_library_run_with_the_cyclic_collector_paused(monkeypatch, tmp_path):
    """AlphaTensor's <11,11,11;896> compiled in 19.1 s with the collector on and 12.2 s with it paused while the
    scheme is lowered and its library written (two cores)."""
    from bilinear.cli import main
    from bilinear.lower import artifact, plan

    seen = {}
    lowered, library_source = plan._lower, artifact.library_source
    monkeypatch.setattr(plan, "_lower", lambda *a, **k: (seen.setdefault("lower", gc.isenabled()), lowered(*a, **k))[1])
    monkeypatch.setattr(artifact, "library_source",
                        lambda *a, **k: (seen.setdefault("write", gc.isenabled()), library_source(*a, **k))[1])
    assert main(["compile", "strassen", "-o", str(tmp_path / "s")]) == 0
    assert seen == {"lower": False, "write": False} and gc.isenabled()
    seen.clear()  # lowering alone, as bilinear.compile does it for the runtime
    assert plan.lower(bilinear.load("strassen"), plan.Options()).name == "strassen"
    assert seen == {"lower": False} and gc.isenabled()
