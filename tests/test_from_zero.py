"""C = A·B with an accumulating schedule: the from-zero plan (bilinear.schedule.from_zero).

With beta = 0 a call used to zero C and run the schedule, whose first change of C's basis then
read and wrote those zeros (msmes at n = 16384 in FP64: 2 GiB zeroed, then 4 GiB of C moved for
nothing).  The pass drops those reads, sets where a product adds into a zero block, and its
result is verified as an overwrite schedule: one that never reads C.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

import bilinear
from bilinear.frontend import program_from_text
from bilinear.ir import Algorithm, Multiply, Schedule, Stage
from bilinear.lower.levels import Options, prepare_schedule
from bilinear.runtime.compiled import CompiledProduct
from bilinear.runtime.numpy_backend import NumpyBackend
from bilinear.schedule import from_zero
from bilinear.verify import verify_schedule

from conftest import ALGORITHMS
from helpers.schedules import PAIR


def _prepared(path="algorithms/msmes.bl", name=None, fuse=True):
    program = bilinear.load(path)
    definition = program.definition(name) if name else program.main
    algorithm = definition if isinstance(definition, Algorithm) else program.algorithm(definition.algorithm)
    schedule = definition if isinstance(definition, Schedule) else bilinear.lower.levels.default_for(algorithm, "cublas")
    return prepare_schedule(schedule, algorithm, Options(fuse=fuse)), algorithm


def _text(schedule: Schedule) -> list[str]:
    return [f"{stage.name}: " + "; ".join(map(str, stage.statements)) for stage in schedule.stages]


def test_msmes_from_zero_drops_the_first_change_of_basis_and_sets_the_first_products():
    prepared, algorithm = _prepared()
    zeroed = from_zero(prepared, algorithm.shape.blocks("C"))
    assert zeroed.overwrites_c and zeroed.inplace and zeroed.restores
    assert _text(zeroed)[:4] == [
        "pre+products1.basis1: A21 += A22; A12 += A11; B12 -= B22; B21 -= B11",  # C's 11 statements: zeros
        "products1.1: C11 = A21 * B11; C12 = A11 * B12; C22 = A22 * B21",  # GEMMs with beta = 0
        # C21 still holds zero: its first statement copies, and nothing reads C21 before
        "products1.basis2: C21 = C22; C11 += C22; C22 += C21; C11 += C21; C21 -= C22; C22 += 2*C12; "
        "C21 -= C12; C11 += C12; C22 -= C11; C21 += C11; C11 -= C21",
        "products1.2: A12 * B22 -> +C12",
    ]
    assert _text(zeroed)[4:] == _text(prepared)[4:]  # the rest as it was
    assert verify_schedule(zeroed, algorithm).ok


def _shipped():
    for path in ALGORITHMS:
        program = bilinear.load(path)
        for definition in program.own_definitions():
            if not (isinstance(definition, Schedule) and definition.overwrites_c):
                yield pytest.param(path, definition.name, id=f"{path.stem}:{definition.name}")


@pytest.mark.parametrize("path, name", list(_shipped()))
def test_every_shipped_accumulating_schedule_has_a_from_zero_plan_that_never_reads_c(path, name):
    from bilinear.verify.lazy import _may_read_original_c

    prepared, algorithm = _prepared(path, name)
    zeroed = from_zero(prepared, algorithm.shape.blocks("C"))
    assert zeroed is not None and zeroed.overwrites_c
    assert not _may_read_original_c(zeroed, algorithm)
    check = verify_schedule(zeroed, algorithm)
    assert check.ok, [d.message for d in check.errors]
    products = [s for _, s in zeroed.statements() if isinstance(s, Multiply)]
    assert len(products) == len([s for _, s in prepared.statements() if isinstance(s, Multiply)])


@pytest.mark.parametrize("path, name", list(_shipped()))
@pytest.mark.parametrize("levels", [1, 2])
def test_with_beta_zero_c_is_neither_zeroed_nor_read(path, name, levels):
    """C full of NaN comes out as the product; the backend is never asked to zero a view (the
    executor did, and zeroing would hide a read of C)."""

    class Recording(NumpyBackend):
        def __init__(self):
            super().__init__()
            self.scaled = []

        def scale(self, c, beta):
            self.scaled.append(beta)
            super().scale(c, beta)

    program = bilinear.load(path)
    lowered = bilinear.lower.plan.lower(program, Options(levels=levels), (name,) * levels)
    backend = Recording()
    rng = np.random.default_rng(levels)
    n = 4 * 9 * 5  # every shipped shape's blocks split evenly, twice
    A, B = rng.standard_normal((2, n, n))
    C = np.full((n, n), np.nan)
    product = CompiledProduct(lowered, backend)
    assert product(A.copy(), B.copy(), out=C, alpha=0.5) is C
    assert np.allclose(C, 0.5 * A @ B) and backend.scaled == []
    accumulated = rng.standard_normal((n, n))
    expected = 0.5 * A @ B + 0.25 * accumulated
    assert np.allclose(product(A.copy(), B.copy(), out=accumulated, alpha=0.5, beta=0.25), expected)
    assert backend.scaled == [0.25]  # beta ≠ 0: C scaled once, then the accumulating plan




def _schedule(body: str):
    program = program_from_text(PAIR + body, "pair.bl")
    return program.main, program.algorithm("pair")


def test_a_second_product_into_a_block_the_first_sets_runs_after_it():
    program = program_from_text("""
algorithm inner <1,2,1;2>:
  M1 = A11 * B11
  M2 = A12 * B21
  C11 = M1 + M2

schedule both for inner:
  stage p: A11 * B11 -> +C11;  A12 * B21 -> +C11
""", "inner.bl")
    schedule, algorithm = program.main, program.algorithm("inner")
    assert verify_schedule(schedule, algorithm).ok
    zeroed = from_zero(schedule, ("C11",))
    assert _text(zeroed) == ["p: C11 = A11 * B11", "p.2: A12 * B21 -> +C11"]
    assert verify_schedule(zeroed, algorithm).ok


@pytest.mark.parametrize("body", [
    # a product into a block holding zero and one that does not
    "schedule mixed for pair:\n  stage a: C11 += A11 * B11\n  stage b: A11 * B12 -> +C11 +C12\n"
    "  stage c: A11 * B11 -> -C11;  A11 * B12 -> -C11\n  stage d: C11 += A11 * B11\n",
    # a C block no statement writes keeps C's content: no pass of dropped reads sets it
    "schedule half for pair:\n  stage a: C11 += A11 * B11\n",
    # a block written, then made zero by name (X - X): writing zero needs a statement
    "schedule cancel for pair:\n  stage a: C11 += A11 * B11;  C12 += A11 * B12\n  stage b: C12 -= C12\n"
    "  stage c: C12 += A11 * B12\n",
])
def test_the_pass_declines_what_dropping_reads_cannot_express(body):
    schedule, _ = _schedule(body)
    assert from_zero(schedule, ("C11", "C12")) is None


def test_a_from_zero_plan_that_reads_c_is_refused_by_the_full_simulation():
    """The verifier proves the plan never reads C: turn its first product back into one that
    adds, and the read of C's original content is found (the lazy simulation cannot see it)."""
    prepared, algorithm = _prepared()
    zeroed = from_zero(prepared, algorithm.shape.blocks("C"))
    stage = zeroed.stages[1]
    adding = replace(stage, statements=(replace(stage.statements[0], overwrite=False), *stage.statements[1:]))
    broken = replace(zeroed, stages=(zeroed.stages[0], adding, *zeroed.stages[2:]))
    check = verify_schedule(broken, algorithm)
    assert not check.ok
    assert "reads C11, which holds C's original content (C11⁰)" in check.errors[0].message


NAIVE = (ALGORITHMS[0].parent / "naive2x2.bl").resolve()


def _naive(tmp_path, schedule: str):
    path = tmp_path / "schedule.bl"
    path.write_text(f'use "{NAIVE}"\n\n' + schedule)
    program = bilinear.load(path)
    return program, program.algorithm("naive2x2")


def test_two_additions_into_a_block_of_one_stage_run_in_order_when_the_first_sets_it(tmp_path):
    """`C11 += T; C11 += U` (one concurrent stage) became `C11 = T; C11 += U`, which conflict:
    the schedule, which verifies, no longer compiled, for any beta."""
    program, algorithm = _naive(tmp_path, """schedule viatemps for naive2x2:
  temp T: C
  temp U: C
  stage p1:  T = A11 * B11;  U = A12 * B21
  stage s1:  C11 += T;  C11 += U
  stage p2:  T = A11 * B12;  U = A12 * B22
  stage s2:  C12 += T;  C12 += U
  stage p3:  T = A21 * B11;  U = A22 * B21
  stage s3:  C21 += T;  C21 += U
  stage p4:  T = A21 * B12;  U = A22 * B22
  stage s4:  C22 += T;  C22 += U
""")
    zeroed = from_zero(program.main, algorithm.shape.blocks("C"))
    assert _text(zeroed)[1] == "s1: C11 = T; C11 += U" and zeroed.stages[1].ordered
    assert verify_schedule(zeroed, algorithm).ok
    product = bilinear.compile(program, backend="numpy")
    A, B = np.random.default_rng(1).standard_normal((2, 6, 6))
    assert np.allclose(product(A, B, out=np.full((6, 6), np.nan)), A @ B)
    C = np.ones((6, 6))
    assert np.allclose(product(A, B, out=C.copy(), beta=1.0), A @ B + C)


def test_repeated_element_wise_stages_keep_their_own_kernels_and_step_names(tmp_path):
    """Kernels were shared by body: both `B21 = -B21` stages ran as one step name, and bench's
    per-step timing of a beta = 0 call failed."""
    program, _ = _naive(tmp_path, """schedule negtwice for naive2x2: inplace, restore
  stage n1:  B21 = -B21
  stage p1:  A11 * B11 -> +C11;  A11 * B12 -> +C12;  A21 * B11 -> +C21;  A21 * B12 -> +C22
  stage p2:  A12 * B21 -> -C11;  A22 * B21 -> -C21
  stage n2:  B21 = -B21
  stage p3:  A12 * B22 -> +C12;  A22 * B22 -> +C22
""")
    plan = bilinear.lower.plan.lower(program, Options()).levels[0]
    names = [step.name for step in plan.from_zero.steps]
    assert names == ["negtwice_float64_s0", "p1", "p2", "negtwice_float64_s3", "p3"]
    assert [s.name for s in plan.steps if not isinstance(s, Stage)] == ["negtwice_float64_s0", "negtwice_float64_s3"]


def test_the_products_of_a_stage_split_in_two_at_most():
    """naive2x2's default stage of eight products became five stages, one per block set twice."""
    algorithm = bilinear.load(NAIVE).main
    zeroed = from_zero(bilinear.lower.levels.default_for(algorithm, "cublas"), algorithm.shape.blocks("C"))
    products = [stage for stage in zeroed.stages if stage.is_product_stage()]
    assert [len(stage.statements) for stage in products] == [4, 4]
    assert all(s.overwrite for s in products[0].statements) and not any(s.overwrite for s in products[1].statements)


def test_no_from_zero_plan_above_an_overwriting_level():
    """msmes over rsmm: products the from-zero plan set ran rsmm below, the others its fallback,
    so a call held both their temporaries (2 MiB at n = 1024 against 1 MiB), and a workspace limit
    that had let the call run refused it."""
    from bilinear.hybrid import merge

    merged = merge([bilinear.load(ALGORITHMS[0].parent / f"{name}.bl") for name in ("msmes", "rsmm")])
    lowered = bilinear.lower.plan.lower(merged, Options(levels=2), ("msmes", "rsmm"))
    assert lowered.levels[0].from_zero is None and lowered.levels[1].accumulate_fallback is not None
    assert bilinear.lower.plan.workspace_bytes(lowered, 1024, 1024, 1024) == 1024 * 1024
    msmes = bilinear.lower.plan.lower(bilinear.load(ALGORITHMS[0].parent / "msmes.bl"), Options(levels=2))
    assert all(level.from_zero is not None for level in msmes.levels)


def test_the_manifest_states_the_from_zero_plan(tmp_path):
    from bilinear.cli import main

    assert main(["compile", "msmes", "-o", str(tmp_path / "out")]) == 0
    level = json.loads((tmp_path / "out" / "manifest.json").read_text())["levels"][0]
    assert level["computes"] == "C += A*B" and level["from_zero"]["computes"] == "C = A*B"
    assert [launch.get("kernel", launch.get("stage")) for launch in level["from_zero"]["launches"]][:2] == [
        "msmes_from_zero_float64_s0", "products1.1"]


@pytest.mark.parametrize("path, name", list(_shipped()) + [pytest.param(p, None, id=p.stem) for p in ALGORITHMS])
def test_no_statement_of_a_from_zero_plan_copies_a_block_onto_itself(path, name):
    """Unfused, `C22 += C12` with C12 still zero became `C22 = C22`: stages of such statements
    compiled to kernels without parameters (the emulated library did not build)."""
    prepared, algorithm = _prepared(path, name, fuse=False)
    zeroed = from_zero(prepared, algorithm.shape.blocks("C"))
    if zeroed is None:
        return
    copies = [str(s) for _, s in zeroed.statements() if not isinstance(s, Multiply) and s.form.names() == (s.target,)
              and s.form.coefficient(s.target) == 1]
    assert copies == [] and all(stage.statements for stage in zeroed.stages)
    assert verify_schedule(zeroed, algorithm).ok


def test_an_unfused_compile_writes_no_kernel_without_parameters(tmp_path):
    from bilinear.cli import main

    assert main(["compile", "strassen", "--no-fuse", "-o", str(tmp_path / "out")]) == 0
    source = (tmp_path / "out" / "strassen.cu").read_text()
    assert "__global__ void" in source and not re.search(r"__global__ void \w+\(\s*\)", source)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    launches = [launch for level in manifest["levels"] for plan in (level, level.get("from_zero") or {})
                for launch in plan.get("launches", [])]
    assert launches and all(launch["buffers"] for launch in launches if launch["kind"] == "elementwise")
