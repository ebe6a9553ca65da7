"""Every scheduling pass, applied to every shipped algorithm and schedule, verifies again."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import bilinear
from bilinear.ir import Algorithm, Multiply, Schedule
from bilinear.schedule import default_schedule, fuse_elementwise, group_stages, single_target
from bilinear.schedule.basis import CONDITION_LIMIT
from bilinear.verify import verify_schedule

from conftest import ALGORITHMS, ROOT, scheme_file


def _definitions():
    for path in ALGORITHMS:
        program = bilinear.load(path)
        for definition in program.own_definitions():
            algorithm = definition if isinstance(definition, Algorithm) else program.algorithm(definition.algorithm)
            yield pytest.param(definition, algorithm, id=f"{path.stem}:{definition.name}")


def _schedules(definition, algorithm):
    if isinstance(definition, Schedule):
        yield definition
    else:
        yield default_schedule(algorithm, "cublas")
        yield default_schedule(algorithm, "fused")


@pytest.mark.parametrize("definition, algorithm", list(_definitions()))
def test_passes_preserve_correctness(definition, algorithm):
    for schedule in _schedules(definition, algorithm):
        assert verify_schedule(schedule, algorithm).ok, schedule.name
        targeted = single_target(schedule)
        check = verify_schedule(targeted, algorithm)
        assert check.ok, [d.message for d in check.errors]
        assert all(len(s.targets.terms) == 1 for _, s in targeted.statements() if isinstance(s, Multiply))
        fused = fuse_elementwise(targeted)
        assert verify_schedule(fused, algorithm).ok
        # after fusion no two element-wise stages are adjacent
        assert not any(
            not a.is_product_stage() and not b.is_product_stage() for a, b in zip(fused.stages, fused.stages[1:])
        )


@pytest.mark.parametrize("definition, algorithm", list(_definitions()))
def test_regrouping_a_schedule_keeps_it_correct(definition, algorithm):
    for schedule in _schedules(definition, algorithm):
        flat = tuple(s for _, s in schedule.statements())
        regrouped = group_stages(flat)
        assert verify_schedule(replace(schedule, stages=regrouped), algorithm).ok
        assert len(regrouped) <= len(flat)


def test_default_cublas_schedule_uses_two_temporaries_at_most():
    strassen = bilinear.load("algorithms/strassen.bl").main
    schedule = default_schedule(strassen, "cublas")
    assert [t.like for t in schedule.temporaries] == ["A", "B"]


def test_default_fused_schedule_is_one_stage_without_workspace():
    strassen = bilinear.load("algorithms/strassen.bl").main
    schedule = default_schedule(strassen, "fused")
    assert len(schedule.stages) == 1 and not schedule.temporaries
    assert len(schedule.stages[0].statements) == 7


def test_msmes_single_target_phases():
    program = bilinear.load("algorithms/msmes.bl")
    targeted = single_target(program.main)
    phases = [s.name for s in targeted.stages if s.is_product_stage()]
    # products1 has four target columns of rank 3, products2 three of rank 2: two phases each.
    assert phases == ["products1.1", "products1.2", "products2.1", "products2.2"]
    assert not targeted.temporaries


def test_report_counts_elementwise_traffic_by_block_shape():
    """A B-shaped copy in a ⟨1,1,2⟩ scheme moves two (n × n/2) blocks, not two A-sized (n × n) ones."""
    from bilinear.frontend import program_from_text
    from bilinear.report import report_data

    from helpers.schedules import PAIR

    text = PAIR + """
schedule copy for pair: overwrite
  temp X: B
  stage s: X = B12
  stage p: C11 = A11 * B11;  C12 = A11 * X
"""
    report = bilinear.verify(program_from_text(text, "pair.bl"))
    assert report.ok
    schedule = report_data(report, n=64)["entries"][1]
    assert schedule["elementwise_bytes_one_level"] == 2 * 64 * 32 * 8


def test_passes_are_a_declared_list_and_each_result_is_verified_again(monkeypatch):
    """A pass that breaks the schedule is caught right after it runs, by name."""
    from dataclasses import replace as _replace

    import bilinear.lower.levels as levels
    from bilinear.lower.options import Options

    assert [p.name for p in levels.PASSES] == ["single target", "fuse element-wise stages"]
    broken = levels.Pass("drop the last stage", lambda options: True, lambda s: _replace(s, stages=s.stages[:-1]))
    monkeypatch.setattr(levels, "PASSES", (*levels.PASSES, broken))
    program = bilinear.load("algorithms/msmes.bl")
    with pytest.raises(AssertionError, match="drop the last stage"):
        bilinear.lower.plan.lower(program, Options(levels=1))


CROSSING = """use "naive2x2.bl"
schedule crossing for naive2x2: overwrite
  temp T: A
  stage p1: C11 = A11 * B11;  T = A12 * B21
  stage s1: T = T + C11
  stage s2: C11 = T
  stage p2: C12 = A11 * B12;  C21 = A21 * B11;  C22 = A21 * B12
  stage p3: C12 += A12 * B22;  C21 += A22 * B21;  C22 += A22 * B22
"""


def test_fusion_keeps_apart_stages_whose_block_shapes_would_read_each_other(tmp_path):
    """s1 writes an A-shaped T from C11 and s2 copies it back: fused, one kernel would write T in its
    A-shaped part while its C-shaped part reads it, and run and compile refused: "split the stage"."""
    from bilinear.measure import random_inputs

    for name in ("naive2x2.bl", "crossing.bl"):
        text = CROSSING if name == "crossing.bl" else (ROOT / "algorithms" / name).read_text(encoding="utf-8")
        (tmp_path / name).write_text(text, encoding="utf-8")
    program = bilinear.load(tmp_path / "crossing.bl")
    fused = fuse_elementwise(program.schedules[0])
    assert [s.name for s in fused.stages] == ["p1", "s1", "s2", "p2", "p3"]
    product = bilinear.compile(program, backend="numpy", levels=2)
    A, B, _ = random_inputs(np, 40, 40, 40, "float64", seed=2)
    assert np.allclose(product(A, B), A @ B, rtol=1e-12, atol=1e-12)


def test_the_lowering_refuses_a_stage_whose_shapes_read_each_other(tmp_path):
    """The rule the fusion pass keeps (schedule.effect.crossing_shapes) is the one the lowering checks."""
    from bilinear.ir import Stage
    from bilinear.lower.elementwise import lower_elementwise

    for name in ("naive2x2.bl", "crossing.bl"):
        text = CROSSING if name == "crossing.bl" else (ROOT / "algorithms" / name).read_text(encoding="utf-8")
        (tmp_path / name).write_text(text, encoding="utf-8")
    schedule = bilinear.load(tmp_path / "crossing.bl").schedules[0]
    s1, s2 = (next(s for s in schedule.stages if s.name == n) for n in ("s1", "s2"))
    merged = Stage("s1+s2", s1.statements + s2.statements, s1.span, ordered=True)
    with pytest.raises(ValueError, match="^a stage writes a C-shaped buffer that a A-shaped statement reads in the same stage"):
        lower_elementwise(merged, schedule, "k", "float64")


HALVES = """# the classical 1x2x1 product with A11*B11 split into two proportional halves
algorithm halves <1,2,1;3>:
  M1 = A11 * B11
  M2 = A12 * B21
  M3 = A11 * B11
  C11 = M1/2 + M2 + M3/2

algorithm thirds <1,1,1;2>:
  M1 = A11 * B11
  M2 = 2*A11 * B11
  C11 = 3*M1 - M2

schedule once_each for thirds:
  stage p: A11 * B11 -> +3*C11
  stage q: (2*A11) * B11 -> -C11
"""


def test_proportional_products_are_each_computed_once(tmp_path):
    """Two products with proportional factors are two products: the schedule check took every
    statement computing either for the first, so the default schedule of `halves` "computed M1
    again" (a traceback in run and compile) and `once_each` "never computed M2"."""
    path = tmp_path / "halves.bl"
    path.write_text(HALVES)
    report = bilinear.verify(str(path))
    assert report.ok, report
    product = bilinear.compile(str(path), levels=2, backend="numpy")
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((9, 10)), rng.standard_normal((10, 7))
    assert np.allclose(product(A, B), A @ B, rtol=0, atol=1e-12)
    for name, algorithm in (("halves", "halves"), ("thirds", "thirds")):
        check = verify_schedule(default_schedule(bilinear.load(str(path)).algorithm(algorithm), "cublas"),
                                bilinear.load(str(path)).algorithm(algorithm))
        assert not check.errors, (name, check.errors)


@pytest.mark.parametrize("c11", ["M1 + M4 - M5 + M7 + M8 - M8", "M1 + M4 - M5 + M7"])
def test_a_product_no_output_uses_is_not_computed(tmp_path, c11):
    """Strassen with M8 = A11 * B11 added and taken away again (or never used): verify passed, and run
    and compile failed with the unlocated "a product statement needs at least one target"."""
    text = (ROOT / "algorithms" / "strassen.bl").read_text().replace("<2,2,2;7>", "<2,2,2;8>").replace(
        "  C11 = M1 + M4 - M5 + M7", f"  M8 = A11 * B11\n  C11 = {c11}")
    path = tmp_path / "odd.bl"
    path.write_text(text)
    for leaf, breadth in (("cublas", 0), ("fused", 0), ("cublas", 1), ("cublas", 2)):
        product = bilinear.compile(str(path), levels=2, leaf=leaf, breadth=breadth, backend="numpy")
        rng = np.random.default_rng(1)
        A, B = rng.standard_normal((13, 13)), rng.standard_normal((13, 13))
        assert np.allclose(product(A, B), A @ B, rtol=0, atol=1e-12)


def _phase_conditions(schedule):
    """The condition number of each change of basis single_target builds (directions scaled to unit length)."""
    from bilinear.schedule.basis import _basis, split_phases

    conditions = []
    for stage in schedule.stages:
        if stage.is_product_stage() and any(len(s.targets.terms) > 1 for s in stage.statements):
            for phase in split_phases(stage.statements):
                _, q, _, _ = _basis(phase)
                matrix = np.array([[float(x) for x in row] for row in q])
                conditions.append(float(np.linalg.cond(matrix / np.linalg.norm(matrix, axis=0))))
    return conditions


def test_a_derived_schedule_of_a_rational_scheme_keeps_run_s_error_bound():
    """DPS's ⟨2,2,2;7⟩ (PLinOpt) derived in place: a phase's change of basis took C11 and C22 as the pivots of
    two directions whose entries there nearly cancel (condition number 396), and the error grew about 100×
    a level: 2.5e-13 at two levels against run's bound of 1.6e-14 (a hunt).  Fused leaves, which add each
    product into its targets directly, were within it."""
    from bilinear.runtime.compiled import CompiledProduct, make_backend
    from bilinear.runtime.run import run_once
    from bilinear.lower.plan import Options, lower

    program = bilinear.inplace(scheme_file("plinopt/2x2x2_7_DPS-integral-12.0662_L.sms"))
    assert max(_phase_conditions(program.schedules[0])) <= CONDITION_LIMIT
    for levels in (1, 2, 3):
        product = CompiledProduct(lower(program, Options(levels=levels, dtype="float64")), make_backend("numpy"))
        result = run_once(product, 64, 64, 64, repeat=1)
        assert result.passes, (levels, result.error, result.bound)


@pytest.mark.parametrize("definition, algorithm", list(_definitions()))
def test_every_shipped_change_of_basis_is_well_conditioned(definition, algorithm):
    for schedule in _schedules(definition, algorithm):
        assert max(_phase_conditions(schedule), default=1.0) <= CONDITION_LIMIT, schedule.name


def _schedule_entry(text: str) -> dict:
    from bilinear.frontend import program_from_text
    from bilinear.report import report_data
    from bilinear.verify import verify_program

    return report_data(verify_program(program_from_text(text)))["entries"][-1]


def test_a_statement_names_the_product_it_computes_with_the_scale_of_every_factor():
    """A11 * B11 is M1/2 where M1 = A11 * (2·B11): the scale comes from both factors (a source mutation that read
    the left factor's alone reported 1)."""
    entry = _schedule_entry("algorithm sc <1,1,1;1>:\n  M1 = A11*(2*B11)\n  C11 = 1/2*M1\n\n"
                            "schedule p for sc:\n  stage s:\n    C11 += A11*B11\n")
    assert entry["ok"] and entry["products"] == [
        {"stage": "s", "statement": "A11 * B11 -> +C11", "product": "M1", "scale": "1/2"}]


def test_a_schedule_may_compute_the_used_one_of_two_equal_products():
    """M1 and M2 are both A11·B11 and only M2 is used: a schedule computing A11·B11 once computes what C needs (a
    source mutation that matched the first equal product alone said it never computes M2)."""
    entry = _schedule_entry("algorithm tw <1,1,1;2>:\n  M1 = A11*B11\n  M2 = A11*B11\n  C11 = M2\n\n"
                            "schedule p for tw:\n  stage s:\n    C11 += A11*B11\n")
    assert entry["ok"], entry["errors"]
    assert [use["product"] for use in entry["products"]] == ["M2"]


def test_a_crossing_in_a_later_term_of_a_sum_is_found():
    """T (A-shaped) doubles while C11 += T reads it: one kernel cannot run both, whichever term of C11's sum reads
    T (a source mutation that looked at each sum's first term alone found none)."""
    from bilinear.ir import Form, Temporary
    from bilinear.schedule.effect import crossing_shapes

    schedule = Schedule("s", "t", frozenset(), (Temporary("T", "A"),), ())
    T, C11 = Form.symbol("T"), Form.symbol("C11")
    assert crossing_shapes({"T": T + T, "C11": C11 + T}, schedule) == ("A", "C")
    assert crossing_shapes({"T": T + T, "C11": C11 + C11}, schedule) is None
