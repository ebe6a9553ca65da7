"""The exact proof of a distributed plan at scale: a plan of many breadth-first steps is proven in
bounded memory, still exactly (a corrupted plan is refused, coefficients past int64 are summed as
Python integers)."""

from __future__ import annotations

import dataclasses
import resource
import subprocess
import sys
from fractions import Fraction

import pytest
from conftest import ROOT, scheme_file

import bilinear
from bilinear.distributed.check import verify_plan
from bilinear.distributed.plan import make_plan
from bilinear.lower.decompose import GlobalProduct, breadth_first

ODD = (101, 67, 53)
MEMORY_LIMIT = 1 << 30  # address space the proof of ⟨3,3,6;40⟩² runs in; its terms expanded at once took past 12 GB

PROVE_SMIRNOV_SQUARED = """
import sys
import bilinear
from bilinear.distributed.check import verify_plan
from bilinear.distributed.plan import make_plan
from bilinear.distributed.steps import decomposition_for

program = bilinear.load(sys.argv[1])
check = verify_plan(make_plan(decomposition_for(program, 2, "bfs", 2), (1000, 1000, 1000), 2))
print(check.ok, check.band_classes, check.terms, check.problems)
"""


def _limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.mark.slow
def test_the_plan_of_1600_products_is_proven_within_a_gigabyte():
    """``bilinear plan smirnov336 --steps 2`` ran out of memory in the proof (it expanded all 3·10⁸ terms at once)."""
    path = scheme_file("fast-matmul/smirnov336-40-960")
    done = subprocess.run(
        [sys.executable, "-c", PROVE_SMIRNOV_SQUARED, str(path)],
        capture_output=True, text=True, timeout=300, preexec_fn=_limited_memory, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "True 1 3330 ()"  # 9 core rows × (9+1) inner × (36+1) column pieces


def _winograd_squared_plan(ranks=3):
    algorithm = bilinear.load(ROOT / "algorithms/winograd.bl").algorithms[-1]
    return make_plan(breadth_first(algorithm, 2), ODD, ranks)


def _with_product(plan, index, product):
    d = plan.decomposition
    products = d.products[:index] + (product,) + d.products[index + 1:]
    return dataclasses.replace(plan, decomposition=dataclasses.replace(d, products=products))


def test_a_two_step_plan_with_one_wrong_weight_is_refused_with_the_terms_it_gets_wrong():
    plan = _winograd_squared_plan()
    assert verify_plan(plan).ok
    last = plan.decomposition.products[-1]
    (block, weight), *rest = last.w
    broken = _with_product(plan, len(plan.decomposition.products) - 1, GlobalProduct(last.u, last.v, ((block, -weight), *rest)))
    check = verify_plan(broken)
    differing = len(last.u) * len(last.v)  # the wrong C block's terms: every A piece by every B piece of the product
    assert check.problems == (
        f"bands 0, 1, 2 of the core rows: the ranks compute {', '.join(f'M{p + 1}' for p in range(49))}: "
        f"{differing} of the tensor's terms differ from the classical product's",
    )


def test_a_two_step_plan_missing_a_band_is_refused():
    plan = _winograd_squared_plan()
    broken = dataclasses.replace(plan, tasks=plan.tasks[:-1])
    (problem,) = verify_plan(broken).problems
    assert problem.startswith("band 2 of the core rows: the ranks compute M1, M2, ") and "; missing M49: " in problem


def _scaled(product: GlobalProduct, factor: Fraction) -> GlobalProduct:
    """The same rank-one tensor, its u scaled up and its w down by ``factor``."""
    return GlobalProduct(tuple((i, c * factor) for i, c in product.u), product.v,
                         tuple((i, c / factor) for i, c in product.w))


def test_coefficients_past_int64_are_summed_exactly():
    """Scaling u by 2⁷⁰ and w by 2⁻⁷⁰ leaves the tensor as it was, but its terms, over a common
    denominator, pass int64: the proof holds as Python integers, and still refuses a wrong sign."""
    plan = _winograd_squared_plan()
    huge = Fraction(2**70)
    scaled = _with_product(plan, 0, _scaled(plan.decomposition.products[0], huge))
    check = verify_plan(scaled)
    assert check.ok and check.terms == verify_plan(plan).terms
    product = plan.decomposition.products[0]
    wrong = GlobalProduct(product.u, product.v, tuple((i, -c) for i, c in product.w))
    assert not verify_plan(_with_product(plan, 0, _scaled(wrong, huge))).ok


def test_a_block_named_twice_in_a_product_counts_both_coefficients():
    """Summed one slice at a time, each piece must come once per product: a block listed twice (as
    a hand-made decomposition may) adds its two coefficients, as the one-product tensor does."""
    plan = _winograd_squared_plan()
    product = plan.decomposition.products[0]
    (block, c), *rest = product.u
    halves = GlobalProduct(((block, c / 2), (block, c / 2), *rest), product.v, product.w)
    assert verify_plan(_with_product(plan, 0, halves)).ok
    one_half = GlobalProduct(((block, c / 2), *rest), product.v, product.w)
    assert not verify_plan(_with_product(plan, 0, one_half)).ok
