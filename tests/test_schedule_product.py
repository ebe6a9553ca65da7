"""Two levels of a schedule as one (bilinear.schedule.product): verified, fused into fewer passes, shipped as msmes2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT

import bilinear
from bilinear.cli import main
from bilinear.frontend.loader import program_from_text
from bilinear.lower.levels import ElementwiseKernel
from bilinear.report import report_data
from bilinear.schedule.basis import single_target
from bilinear.schedule.product import ScheduleProductError, schedule_product
from bilinear.schedule.stages import fuse_elementwise
from bilinear.verify import verify_program
from bilinear.verify.counts import count_schedule
from helpers.schedules import SUM_PRODUCT

MSMES2 = ROOT / "algorithms" / "msmes2.bl"


def _blocks_moved(schedule) -> dict[str, int]:
    """Blocks read and written by the element-wise passes the lowering launches (fused, single-target)."""
    return count_schedule(fuse_elementwise(single_target(fuse_elementwise(schedule)))).elementwise_blocks_moved


def test_msmes2_is_in_place_restores_and_verifies():
    program = bilinear.load(MSMES2)
    report = verify_program(program)
    schedule = program.main
    assert report.ok and schedule.inplace and schedule.restores and schedule.temporaries == ()
    algorithm = program.algorithm(schedule.algorithm)
    assert (algorithm.shape.m, algorithm.shape.k, algorithm.shape.n, algorithm.rank) == (4, 4, 4, 49)


def test_msmes2_moves_fewer_blocks_than_msmes_at_two_levels():
    """Counted in blocks of a quarter of msmes's (the 4x4 blocks): msmes at two levels is one level
    of msmes's blocks (4 quarters each) and 7 of quarter blocks."""
    one = _blocks_moved(bilinear.load(ROOT / "algorithms" / "msmes.bl").main)
    flat = _blocks_moved(bilinear.load(MSMES2).main)
    assert one == {"A": 20, "B": 20, "C": 22}
    assert flat == {"A": 136, "B": 136, "C": 175}
    two_levels = {side: 4 * count + 7 * count for side, count in one.items()}  # in quarter blocks
    assert all(flat[side] < two_levels[side] for side in "ABC"), (flat, two_levels)


def test_verify_reports_the_traffic_the_compiled_passes_move_beside_the_written_one(capsys):
    """As written, msmes2 moves what msmes at two levels does (506 quarter blocks at n = 8192); the
    lowering's passes (single-target C, fused element-wise runs) move 447, and 408 where C starts at
    zero (the plan a beta = 0 call runs).  Verify shows all three."""
    quarter = (8192 // 4) ** 2 * 8
    entry = next(e for e in report_data(bilinear.verify(MSMES2))["entries"] if e["kind"] == "schedule")
    assert entry["elementwise_bytes_one_level"] == 506 * quarter
    assert entry["compiled"] == {"leaf": "cublas", "fuse": True, "refused": None,
                                 "elementwise_bytes_one_level": (136 + 136 + 175) * quarter,
                                 "from_zero_elementwise_bytes_one_level": (136 + 136 + 136) * quarter,
                                 "elementwise_launches_one_level": 10, "launches_one_level": 59,
                                 "from_zero_launches_one_level": 59}
    assert main(["verify", str(MSMES2)]) == 0
    assert ("  element-wise traffic per level at n=8192: 15.81 GiB as written; compiled (cublas leaves, fused passes): "
            "13.97 GiB for C += A·B, 12.75 GiB where C starts at zero\n") in capsys.readouterr().out
    assert main(["verify", str(MSMES2), "--format", "md"]) == 0
    assert ("| 0 bytes | 15.81 GiB as written; compiled (cublas leaves, fused passes): 13.97 GiB for C += A·B, "
            "12.75 GiB where C starts at zero | compiled (cublas leaves, fused passes): 59 (10 element-wise, 49 GEMMs) "
            "for C += A·B, 59 where C starts at zero |\n") in capsys.readouterr().out


@pytest.mark.parametrize("options, compiled", [
    ([], "; compiled (cublas leaves, fused passes): 7.75 GiB for C += A·B, 6.75 GiB where C starts at zero"),
    (["--no-fuse"], "; compiled (cublas leaves, unfused passes): 8.62 GiB for C += A·B, 7.62 GiB where C starts at "
                    "zero"),
    (["--leaf", "fused"], "; compiled (fused leaves, fused passes): 5.00 GiB for C += A·B"),
    (["--levels", "0"], ""),  # no kernels: nothing compiled to count
])
def test_compile_reports_the_traffic_of_the_passes_it_ran(tmp_path, capsys, options, compiled):
    """msmes's C basis change (one target per library GEMM) costs C passes; fused leaves need none."""
    assert main(["compile", str(ROOT / "algorithms" / "msmes.bl"), "-o", str(tmp_path / "out"), *options]) == 0
    line = f"  element-wise traffic per level at n=8192: 5.75 GiB as written{compiled}\n"
    assert line in capsys.readouterr().out
    assert line in (tmp_path / "out" / "report.txt").read_text()


def _plan_launches(plan, fused: bool) -> int:
    """A lowered level's launches where its products are leaves: a kernel per element-wise step, and a
    GEMM per product (one kernel per product stage with fused leaves), as model.count_launches counts."""
    return sum(1 if isinstance(step, ElementwiseKernel) or fused else len(step.statements) for step in plan.steps)


@pytest.mark.parametrize("leaf", ["cublas", "fused"])
@pytest.mark.parametrize("name", ["msmes", "msmes2", "rsmm"])
def test_the_report_counts_the_kernel_launches_a_compiled_level_issues(name, leaf, tmp_path, capsys):
    """DESIGN.md's counts include kernel launches per level; the report had stages only.  They are the
    launches of the level compile builds (verify's with cublas leaves, compile's with its own): for the
    schedule's own plan and for its from-zero plan."""
    from bilinear.lower.levels import with_compiled_counts
    from bilinear.lower.options import Options

    path = ROOT / "algorithms" / f"{name}.bl"
    plan = bilinear.compile(path, levels=1, leaf=leaf, backend="numpy").lowered.levels[0]
    fused = leaf == "fused"
    written = _plan_launches(plan.running(plan.schedule.overwrites_c), fused)
    zero = None if plan.schedule.overwrites_c or plan.from_zero is None else _plan_launches(plan.from_zero, fused)
    report = with_compiled_counts(bilinear.verify(path), Options(leaf=leaf))
    entry = next(e for e in report_data(report)["entries"] if e["kind"] == "schedule")
    assert (entry["compiled"]["launches_one_level"], entry["compiled"]["from_zero_launches_one_level"]) == (written, zero)
    command = ["verify", str(path)] if leaf == "cublas" else ["compile", str(path), "--leaf", leaf, "-o", str(tmp_path)]
    assert main(command) == 0
    products = "product kernels" if fused else "GEMMs"
    element_wise = sum(isinstance(step, ElementwiseKernel) for step in plan.running(plan.schedule.overwrites_c).steps)
    line = (f"  kernel launches per level, compiled ({leaf} leaves, fused passes): {written} ({element_wise} "
            f"element-wise, {written - element_wise} {products}) for {entry['computes'].replace('*', '·')}")
    line += "\n" if zero is None else f", {zero} where C starts at zero\n"
    assert line in capsys.readouterr().out


def test_the_report_does_not_count_an_ozaki_leaf_as_one_launch(tmp_path, capsys):
    """"12 (5 element-wise, 7 GEMMs)" for msmes with ozaki leaves, each of which runs its passes and an int8
    GEMM per modulus (a hunt)."""
    assert main(["compile", "msmes", "--leaf", "ozaki", "-o", str(tmp_path / "oz")]) == 0
    out = capsys.readouterr().out
    assert ("  kernel launches per level, compiled (ozaki leaves, fused passes): 5 element-wise and 7 ozaki leaves "
            "(each runs its own passes and an int8 GEMM per modulus and tile) for C += A·B, 5 element-wise where C starts "
            "at zero\n") in out
    assert "GEMMs)" not in (tmp_path / "oz" / "report.txt").read_text()


def test_a_library_whose_every_level_is_breadth_first_counts_no_compiled_traffic(tmp_path, capsys):
    """compile msmes --levels 1 --breadth 1 said msmes's passes move 7.75 GiB, beside its note that
    msmes's in-place stages run at no level (an audit)."""
    assert main(["compile", "msmes", "--levels", "1", "--breadth", "1", "-o", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "  element-wise traffic per level at n=8192: 5.75 GiB as written\n" in out and "; compiled" not in out
    assert main(["compile", "msmes", "--levels", "2", "--breadth", "1", "-o", str(tmp_path / "c")]) == 0
    assert "; compiled (cublas leaves, fused passes): 7.75 GiB" in capsys.readouterr().out  # its top level runs them
    # a workspace limit's depth-first fallback runs them too (a review)
    assert main(["compile", "msmes", "--levels", "1", "--breadth", "1", "--workspace-limit", "0", "-o",
                 str(tmp_path / "d")]) == 0
    assert "; compiled (cublas leaves, fused passes): 7.75 GiB" in capsys.readouterr().out


def test_a_hybrids_report_counts_no_compiled_traffic(tmp_path, capsys):
    """Its levels run other schedules than each file's on its own (rsmm under msmes runs the default)."""
    assert main(["compile", "strassen", "--levels-schemes", "msmes,rsmm", "-o", str(tmp_path / "h")]) == 0
    out = capsys.readouterr().out
    assert "  element-wise traffic per level at n=8192: 5.75 GiB as written\n" in out and "; compiled" not in out


def test_an_overwriting_schedules_compiled_traffic_is_for_c_equals_a_times_b(capsys):
    assert main(["verify", str(ROOT / "algorithms" / "rsmm.bl")]) == 0
    assert "; compiled (cublas leaves, fused passes): 4.12 GiB for C = A·B\n" in capsys.readouterr().out


def test_a_schedule_that_cublas_leaves_cannot_run_reports_no_compiled_traffic_for_them(tmp_path, capsys):
    """verify said "compiled (cublas leaves, fused passes): 1.50 GiB" of a schedule that compile refuses
    with cublas leaves (its products multiply sums of blocks; found by an audit)."""
    path = tmp_path / "sums.bl"
    path.write_text(SUM_PRODUCT)
    assert main(["verify", str(path)]) == 0
    assert ("  element-wise traffic per level at n=8192: 0 bytes as written; compiled (cublas leaves): refused, "
            "the product (A11 + 2*A12) * B11 multiplies a sum of blocks, and cublas leaves multiply single blocks "
            "(--leaf fused runs it)\n") in capsys.readouterr().out
    entry = next(e for e in report_data(bilinear.verify(path))["entries"] if e["kind"] == "schedule")
    assert entry["compiled"] == {"leaf": "cublas", "fuse": True, "elementwise_bytes_one_level": None,
                                 "from_zero_elementwise_bytes_one_level": None, "elementwise_launches_one_level": None,
                                 "launches_one_level": None, "from_zero_launches_one_level": None, "refused": (
                                     "the product (A11 + 2*A12) * B11 multiplies a sum of blocks, and cublas leaves "
                                     "multiply single blocks")}
    assert main(["compile", str(path), "--leaf", "fused", "-o", str(tmp_path / "out")]) == 0
    assert "; compiled (fused leaves, fused passes): 0 bytes for C += A·B\n" in capsys.readouterr().out


def test_a_product_stages_products_go_into_the_fewest_phases_found():
    """Each phase of one-target products costs a change of basis over C.  msmes2's first product stage has
    16 target directions of rank 9: in the written order the greedy split took 3 phases (9, 5, 2), where 2
    do (9, 7); its 12-product stages took 3 where 2 do.  Each phase keeps its products in written order."""
    from bilinear.schedule.basis import split_phases

    stages = [stage for stage in bilinear.load(MSMES2).main.stages if stage.is_product_stage()]
    phases = [split_phases(stage.statements) for stage in stages]
    assert [sorted(len(phase.directions) for phase in split) for split in phases] == [[7, 9], [6, 6], [6, 6], [2, 3, 4]]
    for stage, split in zip(stages, phases):
        written = [stage.statements.index(member[0]) for phase in split for member in phase.members]
        assert sorted(written) == list(range(len(stage.statements)))
        for phase in split:
            order = [stage.statements.index(member[0]) for member in phase.members]
            assert order == sorted(order)


def test_the_shipped_msmes2_is_what_the_product_command_writes(tmp_path, capsys):
    written = tmp_path / "msmes2.bl"
    assert main(["product", "msmes", "msmes", "--name", "msmes2", "-o", str(written)]) == 0
    assert capsys.readouterr().out == (f"wrote {written} (strassen_x_strassen <4,4,4;49> and schedule msmes2 "
                                       "[inplace, restore], verified)\n")
    assert written.read_text() == MSMES2.read_text()


@pytest.mark.parametrize("shape", [(64, 64, 64), (37, 29, 41)])
def test_msmes2_multiplies_and_restores_on_numpy(shape):
    M, K, N = shape
    rng = np.random.default_rng(M)
    A, B, C = rng.standard_normal((M, K)), rng.standard_normal((K, N)), rng.standard_normal((M, N))
    A0, B0, expected = A.copy(), B.copy(), A @ B + 0.5 * C
    bilinear.compile(MSMES2, backend="numpy")(A, B, out=C, beta=0.5)
    assert np.allclose(C, expected, rtol=1e-12, atol=1e-12)
    assert np.allclose(A, A0, rtol=1e-13, atol=1e-13) and np.allclose(B, B0, rtol=1e-13, atol=1e-13)


def test_a_schedule_with_temporaries_is_refused_with_the_reason(tmp_path, capsys):
    target = tmp_path / "x.bl"
    assert main(["product", "rsmm", "msmes", "-o", str(target)]) == 1
    assert ("schedule rsmm has temporaries; a product of schedules is written for schedules over the operands' "
            "blocks alone (in-place ones such as msmes); --algorithm winograd multiplies the algorithms alone\n"
            ) in capsys.readouterr().err  # (the way out had not been said: an audit)
    assert not target.exists()


SHARED = """use "strassen.bl"
use "naive2x2.bl"
schedule shared for naive2x2
  stage p1: A11 * B11 -> +C11;  A11 * B12 -> +C12;  A21 * B11 -> +C21;  A21 * B12 -> +C22
  stage p2: A12 * B21 -> +C11;  A12 * B22 -> +C12;  A22 * B21 -> +C21;  A22 * B22 -> +C22
"""


def test_outer_products_that_share_a_block_the_inner_schedule_writes_run_one_after_another(tmp_path):
    """In lock-step, two inner MSMES schedules would both overwrite A11's sub-blocks in one stage."""
    (tmp_path / "shared.bl").write_text(SHARED.replace('"strassen.bl"', f'"{ROOT}/algorithms/strassen.bl"')
                                        .replace('"naive2x2.bl"', f'"{ROOT}/algorithms/naive2x2.bl"'))
    outer_program = bilinear.load(tmp_path / "shared.bl")
    inner_program = bilinear.load(ROOT / "algorithms" / "msmes.bl")
    outer, inner = outer_program.main, inner_program.main
    first, second = outer_program.algorithm("naive2x2"), inner_program.algorithm("strassen")
    from bilinear.compose import kronecker
    from bilinear.frontend.export import schedule_to_bl, to_bl

    algorithm = kronecker(first, second)
    schedule = schedule_product(outer, first.shape, inner, second.shape, algorithm.name, "flat")
    assert [s.name for s in schedule.stages][:3] == ["p1_1_pre", "p1_1_products1", "p1_1_mid"]
    assert sum(s.name.endswith("_pre") for s in schedule.stages) == 4  # p1 and p2, each in two groups
    text = to_bl(algorithm) + "\n" + schedule_to_bl(schedule)
    assert verify_program(program_from_text(text, "flat.bl")).ok


def test_an_inner_schedule_that_overwrites_c_is_refused():
    text = ("algorithm x <1,1,1>:\n  M1 = A11 * B11\n  C11 = M1\n"
            "schedule s for x: overwrite\n  stage p: C11 = A11 * B11\n")
    program = program_from_text(text, "s.bl")
    with pytest.raises(ScheduleProductError, match="^schedule s overwrites C; a product of schedules is written for "
                                                   "schedules whose products add into C$"):
        schedule_product(program.main, program.algorithm("x").shape, program.main, program.algorithm("x").shape,
                         "x_x", "s_x_s")


def test_an_inner_schedule_that_updates_c_is_refused_with_the_reason(tmp_path):
    """Its C blocks are the sub-blocks of the product, which an outer product's targets spread over several
    C blocks: a KeyError had escaped (found in review)."""
    text = ('use "strassen.bl"\nschedule c for strassen: inplace, restore\n  stage t: C11 += C22\n'
            "  stage p: A11 * B11 -> +C11\n")
    (tmp_path / "c.bl").write_text(text.replace('"strassen.bl"', f'"{ROOT}/algorithms/strassen.bl"'))
    inner = bilinear.load(tmp_path / "c.bl")
    outer = bilinear.load(ROOT / "algorithms" / "msmes.bl")
    shape = outer.algorithm("strassen").shape
    with pytest.raises(ScheduleProductError, match="^the inner schedule's element-wise statements touch C, which an "
                                                   "outer product's targets spread over several blocks$"):
        schedule_product(outer.main, shape, inner.main, shape, "s_x_s", "m_x_c")


def test_a_schedule_that_does_not_verify_is_refused_before_anything_is_derived(tmp_path, capsys):
    """The thesis's MSMES as printed (three sign errors): the derived schedule's errors had named blocks
    of the 4x4 product the user never wrote."""
    printed = ROOT / "tests" / "fixtures" / "msmes_thesis_printed.bl"
    target = tmp_path / "x.bl"
    assert main(["product", str(printed), "msmes", "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"msmes_printed in {printed} does not verify; nothing was derived from it" in err
    assert "A31" not in err and not target.exists()


NOT_RESTORING = """use "{root}/algorithms/strassen.bl"
schedule msmes_nr for strassen: inplace
  stage pre:        A21 += A22;  A12 += A11;  B12 -= B22;  B21 -= B11
  stage products1:  A21 * B11 -> +C21 -C22
                    A11 * B12 -> +C12 +C22
                    A22 * B21 -> +C11 +C21
                    A12 * B22 -> -C11 +C12
  stage mid:        A11 += A22;  B11 += B22
  stage mid2:       A21 -= A11;  B12 += B11;  A12 -= A11;  B21 += B11
  stage products2:  A11 * B11 -> +C11 +C22
                    A21 * B12 -> +C22
                    A12 * B21 -> +C11
"""


def _without_restore(tmp_path):
    """msmes without its two restoring stages: it verifies alone (it may leave A and B changed)."""
    path = tmp_path / "nr.bl"
    path.write_text(NOT_RESTORING.format(root=ROOT))
    assert bilinear.verify(path).ok
    return path


def test_an_inner_schedule_that_does_not_restore_is_refused_up_front(tmp_path, capsys):
    """Inside each outer product it would leave the outer schedule's blocks changed: the derived schedule
    failed to verify, and its errors were located in the -o file, which was never written (an audit)."""
    target = tmp_path / "out.bl"
    assert main(["product", "msmes", str(_without_restore(tmp_path)), "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert ("schedule msmes_nr overwrites A or B without restoring them: inside each outer product it would leave the "
            "outer schedule's blocks changed; give an inner schedule that restores (restore)") in err, err
    assert "out.bl:" not in err and not target.exists()


def test_an_inner_inplace_schedule_that_writes_neither_a_nor_b_is_taken_without_restore(tmp_path, capsys):
    """It was refused as one that "overwrites A or B without restoring them", though it writes neither and
    verify says it gives them back (a hunt)."""
    path = tmp_path / "k2s.bl"
    path.write_text("algorithm k2 <1,2,1;2>:\n  M1 = A11 * B11\n  M2 = A12 * B21\n  C11 = M1 + M2\n\n"
                    "schedule k2s for k2: inplace\n  stage p: A11 * B11 -> +C11\n  stage q: A12 * B21 -> +C11\n")
    target = tmp_path / "out.bl"
    assert main(["product", "msmes", str(path), "-o", str(target)]) == 0, capsys.readouterr().err
    assert bilinear.verify(target).ok
    (schedule,) = bilinear.load(target).schedules
    assert schedule.inplace and schedule.restores  # msmes's restore holds for the product: k2s writes nothing back


def test_a_name_that_is_the_product_algorithms_is_refused(tmp_path, capsys):
    """--name strassen_x_strassen wrote a program defining that name twice, and reported it in an -o file
    never written.  The name comes from the files: a refusal of what they hold, status 1, not a usage error."""
    target = tmp_path / "out.bl"
    assert main(["product", "msmes", "msmes", "--name", "strassen_x_strassen", "-o", str(target)]) == 1
    assert ("--name strassen_x_strassen is the name of the product algorithm the schedule is written for (from the "
            "files' names); give the schedule another") in capsys.readouterr().err
    assert not target.exists()


def test_stage_names_that_would_repeat_are_made_unique(tmp_path, capsys):
    """An outer stage named products1_pre beside the expanded products1 + _pre: "stage products1_pre is
    defined twice" (an audit)."""
    source = (ROOT / "algorithms" / "msmes.bl").read_text().replace("stage mid:", "stage products1_pre:")
    renamed = tmp_path / "ren.bl"
    renamed.write_text(source.replace('use "strassen.bl"', f'use "{ROOT}/algorithms/strassen.bl"'))
    target = tmp_path / "renp.bl"
    assert main(["product", str(renamed), "msmes", "-o", str(target)]) == 0, capsys.readouterr().err
    names = [s.name for s in bilinear.load(target).main.stages]
    assert len(names) == len(set(names)) and "products1_pre_2" in names


PRODUCT_NAME_HELP = (
    "--name NAME name of the new algorithm (default: FILE's and SECOND's algorithms' names joined by _x_, as "
    "strassen_x_winograd); where FILE's and SECOND's main definitions are both schedules and no --algorithm is given, "
    "of the new schedule instead (default: their names joined by _x_, as msmes_x_msmes), the algorithm keeping its "
    "default name --algorithm ALGORITHM")


def test_product_help_says_what_name_names_and_its_defaults(capsys):
    """It read "name of the new algorithm (of the new schedule where FILE and SECOND are both schedules)":
    files are not schedules, --algorithm makes --name the algorithm's again, and no default was given."""
    with pytest.raises(SystemExit):
        main(["product", "--help"])
    assert PRODUCT_NAME_HELP in " ".join(capsys.readouterr().out.split())


def test_product_name_names_what_its_help_says(tmp_path, capsys):
    """The help's claims: the defaults, and --name naming the algorithm where --algorithm is given."""
    for argv, lines in (([], ["algorithm strassen_x_strassen <4,4,4;49>:", "schedule msmes_x_msmes for strassen_x_strassen: "
                                                                          "inplace, restore"]),
                        (["--name", "m2"], ["algorithm strassen_x_strassen <4,4,4;49>:",
                                            "schedule m2 for strassen_x_strassen: inplace, restore"]),
                        (["--algorithm", "strassen", "--name", "s2"], ["algorithm s2 <4,4,4;49>:"])):
        assert main(["product", "msmes", "msmes", *argv]) == 0
        headers = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("algorithm ", "schedule "))]
        assert headers == lines, argv


@pytest.mark.parametrize("levels, said", [
    ("strassen,rsmm", "level 2's rsmm sets C (C = A·B), but every product of level 1 (strassen_cublas) adds into C: "
                      "level 2 runs winograd_cublas, its algorithm's default schedule, throughout, and rsmm's kernels "
                      "are never launched"),
    ("msmes,rsmm", "level 2's rsmm sets C (C = A·B), but every product of level 1 (msmes) adds into C"),
    ("rsmm,rsmm", None),  # rsmm's own products set their blocks: level 2 runs rsmm there
    ("strassen,winograd", None),
])
def test_a_hybrid_level_whose_schedule_never_runs_is_said(tmp_path, capsys, levels, said):
    """rsmm under strassen was compiled, named in the manifest's levels and never launched: every product
    of the level above adds into C, so its accumulating fallback ran, without a word (a hunt)."""
    assert main(["compile", "strassen", "--levels-schemes", levels, "-o", str(tmp_path / "h")]) == 0
    err = capsys.readouterr().err
    unused = json.loads(next((tmp_path / "h").glob("manifest.json")).read_text())["host"].get("unused", [])
    if said is None:
        assert "never launched" not in err and not [note for note in unused if "never launched" in note]
    else:
        assert said in err and [note for note in unused if said in note], err


def test_a_shape_condition_of_a_schedule_that_never_runs_refuses_nothing(tmp_path, capsys):
    """rsmm with its temporaries' shapes swapped (X like B, Y like A) requires K/k = M/m; under grey234 it
    never runs (its fallback does), yet a 60³ product was refused for that condition at level 2 (a hunt)."""
    text = (ROOT / "algorithms" / "rsmm.bl").read_text(encoding="utf-8")
    text = text.replace("temp X: A\n  temp Y: B", "temp X: B\n  temp Y: A").replace("schedule rsmm for", "schedule sc for")
    path = tmp_path / "sc.bl"
    path.write_text(text.replace('use "', f'use "{ROOT / "algorithms"}/'), encoding="utf-8")
    grey234 = str(ROOT / "algorithms" / "grey234.bl")
    assert main(["run", str(path), "--levels-schemes", f"{grey234},{path}", "-n", "60", "--backend", "numpy"]) == 0, (
        capsys.readouterr().err)
    assert "never launched" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"schedule sc requires K/k = N/n"):  # where it runs, its conditions hold
        bilinear.compile(path, levels=1, backend="numpy")(np.ones((60, 60)), np.ones((60, 40)))
