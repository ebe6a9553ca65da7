"""C = A·B with an accumulating schedule: the from-zero plan (bilinear.schedule.from_zero).

With beta = 0 a call used to zero C and run the schedule, whose first change of C's basis then
read and wrote those zeros (msmes at n = 16384 in FP64: 2 GiB zeroed, then 4 GiB of C moved for
nothing).  The pass drops those reads, sets where a product adds into a zero block, and its
result is verified as an overwrite schedule: one that never reads C.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import bilinear
from bilinear.frontend import program_from_text
from bilinear.ir import Algorithm, Multiply, Schedule
from bilinear.lower.levels import Options, prepare_schedule
from bilinear.runtime.compiled import CompiledProduct
from bilinear.runtime.numpy_backend import NumpyBackend
from bilinear.schedule import from_zero
from bilinear.verify import verify_schedule

from conftest import ALGORITHMS


def _prepared(path="algorithms/msmes.bl", name=None):
    program = bilinear.load(path)
    definition = program.definition(name) if name else program.main
    algorithm = definition if isinstance(definition, Algorithm) else program.algorithm(definition.algorithm)
    schedule = definition if isinstance(definition, Schedule) else bilinear.lower.levels.default_for(algorithm, "cublas")
    return prepare_schedule(schedule, algorithm, Options()), algorithm


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
        scaled: list = []

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


PAIR = """
algorithm pair <1,1,2;2>:
  M1 = A11 * B11
  M2 = A11 * B12
  C11 = M1
  C12 = M2
"""


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
