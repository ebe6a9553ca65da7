"""The fused product kernel on the GPU: odd sizes, unaligned views, every shipped algorithm as
one fused stage, every accumulating product stage of the shipped schedules, batches larger
than one launch, and zero bytes of device memory.  Run on the GPU machine with ``-m gpu``.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from conftest import ALGORITHMS

import bilinear
from bilinear.ir import Multiply, parse_block
from bilinear.lower.product import (
    FusedProduct,
    ProductStageSpec,
    SpecTerm,
    TileConfig,
    gemm_spec,
    max_batch,
    reference_update,
)
from bilinear.verify.expand import Expansion

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu
try:
    if cupy.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
except cupy.cuda.runtime.CUDARuntimeError:  # no driver
    pytest.skip("no CUDA device", allow_module_level=True)

from bilinear.runtime.product import ProductStage

TOL = {"float64": 1e-12, "float32": 3e-5}
# Small tiles, double-buffered fragments; SINGLE the same with one fragment buffer.
SMALL = {"float64": TileConfig(64, 64, 16, 2, 2, 3, 8, 2, 2), "float32": TileConfig(64, 64, 8, 2, 2, 3, 1, 4, 2)}
SINGLE = {dtype: replace(config, frag_buffers=1) for dtype, config in SMALL.items()}


def view(rng, rows: int, cols: int, dtype: str, aligned: bool):
    """A rows×cols slice of a larger matrix (odd offset and leading dimension unless aligned)."""
    vec = 16 // np.dtype(dtype).itemsize
    ld = -(-cols // vec) * vec + (vec if aligned else vec + 1)
    offset = vec if aligned else 1
    parent = rng.standard_normal((rows + 1, ld), dtype=dtype)
    return parent[1:, offset : offset + cols]



def check_stage(spec, M, N, K, config=None, aligned=False, alpha=0.5, seed=0):
    rng = cupy.random.default_rng(seed)
    entries = [
        tuple(
            [view(rng, r, c, spec.dtype, aligned) for _ in range(n)]
            for n, r, c in ((spec.n_a, M, K), (spec.n_b, K, N), (spec.n_c, M, N))
        )
        for _ in range(spec.batch)
    ]
    before = [[c.astype(np.float64) for c in entry[2]] for entry in entries]
    ProductStage(spec, config)(entries, M, N, K, alpha=alpha)
    for entry, old in zip(entries, before):
        for got, was, want in zip(entry[2], old, reference_update(spec, entry, alpha, cupy)):
            error = float(cupy.linalg.norm(got.astype(np.float64) - was - want))
            assert error <= TOL[spec.dtype] * max(float(cupy.linalg.norm(want)), 1.0), (spec.name, M, N, K)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("aligned", [True, False], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("M, N, K", [(1, 1, 1), (5, 3, 200), (65, 63, 17), (129, 130, 131), (256, 256, 64)])
@pytest.mark.parametrize("configs", [SMALL, SINGLE], ids=["two-fragment-buffers", "one-fragment-buffer"])
def test_plain_gemm_any_size_and_leading_dimension(dtype, aligned, M, N, K, configs):
    check_stage(gemm_spec(dtype), M, N, K, config=configs[dtype], aligned=aligned, seed=M * N + K)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_tuned_default_config_on_a_multi_tile_problem(dtype):
    check_stage(gemm_spec(dtype), 300, 520, 270, aligned=True, alpha=-1.25, seed=3)


def _algorithms():
    seen = {}
    for path in ALGORITHMS:
        for algorithm in bilinear.load(path).algorithms:
            seen.setdefault(algorithm.name, algorithm)
    return sorted(seen.values(), key=lambda a: a.name)


def algorithm_stage(algorithm, dtype: str) -> ProductStageSpec:
    """All R products of one level in one launch: C_blocks += Σ_r W·(U·A)(V·B)."""
    U, V, W = Expansion(algorithm).tables()

    def column(table, r):
        return tuple(SpecTerm(i, Fraction(row[r])) for i, row in enumerate(table) if row[r] != 0)

    products = tuple(FusedProduct(column(U, r), column(V, r), column(W, r)) for r in range(algorithm.rank))
    shape = algorithm.shape
    return ProductStageSpec(
        f"alg_{algorithm.name}_{dtype}", dtype, products, shape.m * shape.k, shape.k * shape.n, shape.m * shape.n, 1
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("algorithm", _algorithms(), ids=lambda a: a.name)
def test_every_shipped_algorithm_as_one_fused_stage_computes_c_plus_ab(algorithm, dtype):
    spec = algorithm_stage(algorithm, dtype)
    bm, bk, bn = 37, 29, 41  # odd block sizes: nothing is aligned
    s = algorithm.shape
    rng = cupy.random.default_rng(11)
    A = rng.standard_normal((s.m * bm, s.k * bk + 3), dtype=dtype)[:, 3:]
    B = rng.standard_normal((s.k * bk, s.n * bn + 1), dtype=dtype)[:, 1:]
    C = rng.standard_normal((s.m * bm, s.n * bn), dtype=dtype)
    reference = C.astype(np.float64) + A.astype(np.float64) @ B.astype(np.float64)

    def blocks(X, rows, cols, r, c):
        return [X[i * r : (i + 1) * r, j * c : (j + 1) * c] for i in range(rows) for j in range(cols)]

    entry = (blocks(A, s.m, s.k, bm, bk), blocks(B, s.k, s.n, bk, bn), blocks(C, s.m, s.n, bm, bn))
    ProductStage(spec, SMALL[dtype])([entry], bm, bn, bk)
    error = float(cupy.linalg.norm(C.astype(np.float64) - reference) / cupy.linalg.norm(reference))
    assert error < TOL[dtype] * 10


def _schedule_stages():
    found = []
    for path in ALGORITHMS:
        program = bilinear.load(path)
        for schedule in program.schedules:
            for stage in schedule.stages:
                multiplies = [s for s in stage.statements if isinstance(s, Multiply) and not s.overwrite]
                if multiplies:
                    found.append((schedule, stage, multiplies))
    return found


def schedule_stage_spec(schedule, stage, multiplies, dtype: str):
    """A schedule's product stage as a spec: buffers (blocks, temporaries) become slots."""

    def side_of(name):
        parsed = parse_block(name)
        return parsed[0] if parsed else schedule.temporary(name).like

    names = {"A": [], "B": [], "C": []}
    for statement in multiplies:
        for form in (statement.left, statement.right, statement.targets):
            for name in form.names():
                if name not in names[side_of(name)]:
                    names[side_of(name)].append(name)

    def slots(form, side):
        return tuple(SpecTerm(names[side].index(n), c) for n, c in form.terms)

    products = tuple(FusedProduct(slots(s.left, "A"), slots(s.right, "B"), slots(s.targets, "C")) for s in multiplies)
    spec = ProductStageSpec(
        f"{schedule.name}_{stage.name}_{dtype}", dtype, products, len(names["A"]), len(names["B"]), len(names["C"]), 2
    )
    return spec


@pytest.mark.parametrize("found", _schedule_stages(), ids=lambda f: f"{f[0].name}-{f[1].name}")
def test_every_accumulating_product_stage_of_the_shipped_schedules(found):
    spec = schedule_stage_spec(*found, "float64")
    check_stage(spec, 45, 38, 51, config=SMALL["float64"], alpha=1.0, seed=5)
    check_stage(replace(spec, name=spec.name + "_single"), 45, 38, 51, config=SINGLE["float64"], seed=7)
    check_stage(replace(spec, name=spec.name + "_aligned"), 64, 72, 40, aligned=True, seed=6)


def test_batches_beyond_one_launch_are_split():
    spec = gemm_spec("float64", "gemm_many")
    spec = replace(spec, batch=max_batch("float64", 1, 1, 1) + 3)
    check_stage(spec, 9, 7, 5, config=SMALL["float64"], seed=9)


def test_a_launch_allocates_no_device_memory():
    from cupy.cuda import memory_hook

    class Count(memory_hook.MemoryHook):
        name = "count"

        def __init__(self):
            self.bytes = 0

        def malloc_preprocess(self, **kwargs):
            self.bytes += kwargs["size"]

    spec = gemm_spec("float64", "gemm_nomem")
    stage = ProductStage(spec, SMALL["float64"])
    rng = cupy.random.default_rng(1)
    A, B, C = (rng.standard_normal((96, 96)) for _ in range(3))
    stage([[A, B, C]], 96, 96, 96)
    cupy.cuda.Device().synchronize()
    with Count() as hook:
        stage([[A[:80, :70], B[:70, :90], C[:80, :90]]], 80, 90, 70)
        cupy.cuda.Device().synchronize()
    assert hook.bytes == 0


def test_bad_views_are_rejected_with_a_reason():
    spec = gemm_spec("float64", "gemm_reject")
    stage = ProductStage(spec, SMALL["float64"])
    A = cupy.zeros((8, 8))
    with pytest.raises(ValueError, match="unit column stride"):
        stage([[A[:, ::2], A[:4, :], A[:, :]]], 8, 8, 4)
    with pytest.raises(ValueError, match="float32"):
        stage([[A.astype(np.float32), A, A]], 8, 8, 8)
    with pytest.raises(ValueError, match="shape"):
        stage([[A, A[:4], A]], 8, 8, 8)
