"""The fused product kernel on the CPU: golden sources, nvcc compiles them, resource reports,
occupancy pruning, the by-value parameter struct and the tuning cache.

Regenerate the golden files after an intended change with
``BILINEAR_UPDATE_GOLDEN=1 python -m pytest tests/test_product_kernel.py``.
"""

from __future__ import annotations

import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from conftest import check_golden

from bilinear.lower.product_model import Occupancy
from bilinear.lower.product import (
    PARAM_LIMIT,
    DeviceLimits,
    FusedProduct,
    ProductStageSpec,
    Resources,
    SpecTerm,
    TileConfig,
    c_literal,
    candidate_configs,
    config_problems,
    gemm_spec,
    max_batch,
    occupancy,
    param_fields,
    params_dtype,
    parse_ptxas,
    plan_kernel,
    prune,
    render_product_stage,
    shared_targets,
)
from bilinear.runtime import tuning

NVCC = shutil.which("nvcc")

F64 = tuning.DEFAULTS[("float64", "single")]
F32 = tuning.DEFAULTS[("float32", "single")]


def terms(*pairs) -> tuple[SpecTerm, ...]:
    return tuple(SpecTerm(slot, Fraction(coef)) for slot, coef in pairs)


def msmes_products1(dtype: str = "float64", batch: int = 7) -> ProductStageSpec:
    products = (
        FusedProduct(terms((2, 1)), terms((0, 1)), terms((2, 1), (3, -1))),
        FusedProduct(terms((0, 1)), terms((1, 1)), terms((1, 1), (3, 1))),
        FusedProduct(terms((3, 1)), terms((2, 1)), terms((0, 1), (2, 1))),
        FusedProduct(terms((1, 1)), terms((3, 1)), terms((0, -1), (1, 1))),
    )
    return ProductStageSpec("msmes_products1", dtype, products, 4, 4, 4, batch)


def sums(dtype: str = "float32", batch: int = 2) -> ProductStageSpec:
    products = (
        FusedProduct(terms((0, 1), (3, 1)), terms((0, 1), (3, -1)), terms((0, 1), (3, Fraction(1, 3)))),
        FusedProduct(terms((2, -1), (1, Fraction(1, 2))), terms((1, 1)), terms((3, -2))),
    )
    return ProductStageSpec("sums", dtype, products, 4, 4, 4, batch)


GOLDEN_CASES = {
    "product_gemm_f64": (gemm_spec("float64", "gemm_f64"), F64),
    "product_msmes_products1_f64": (msmes_products1(), F64),
    "product_sums_f32": (sums(), tuning.DEFAULTS[("float32", "sum")]),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_rendered_source_matches_golden(name):
    source = render_product_stage(*GOLDEN_CASES[name])
    check_golden(f"{name}.cu", source)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_nvcc_compiles_without_spills(name, tmp_path):
    """Compiles for sm_90 (the static_assert ties Params to the NumPy struct) with no local memory."""
    spec, config = GOLDEN_CASES[name]
    source = tmp_path / f"{name}.cu"
    source.write_text(render_product_stage(spec, config))
    done = subprocess.run(
        [NVCC, "-arch=sm_90", "-std=c++17", "-c", str(source), "-o", str(tmp_path / "k.o"), "-Xptxas", "-v"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    resources = parse_ptxas(done.stderr)[spec.name]
    assert 0 < resources.registers <= 255
    if name != "product_sums_f32":  # operand sums are tuned separately; single views must never spill
        assert resources.spill_bytes == 0, done.stderr


def test_the_fp64_kernel_uses_tensor_core_mma_and_cp_async():
    source = render_product_stage(gemm_spec("float64"), F64)
    assert f"mma.sync.aligned.m16n8k{F64.k_step}.row.col.f64.f64.f64.f64" in source
    assert "cp.async.cg.shared.global" in source and "cp.async.wait_group" in source
    assert "wmma" not in source and "#include" not in source


def test_fp64_k8_variant_uses_the_k8_shape():
    source = render_product_stage(gemm_spec("float64"), TileConfig(128, 128, 16, 2, 4, 3, 8, 1))
    assert "mma.sync.aligned.m16n8k8.row.col.f64" in source


PTXAS = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm_f64' for 'sm_90'
ptxas info    : Function properties for gemm_f64
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 242 registers, used 1 barriers, 400 bytes cmem[0]
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
    24 bytes stack frame, 32 bytes spill stores, 48 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 2048 bytes smem, 400 bytes cmem[0]
"""


def test_ptxas_report_is_parsed_per_kernel():
    found = parse_ptxas(PTXAS)
    assert found["gemm_f64"] == Resources(242, 0, 0)
    assert found["other"] == Resources(128, 80, 2048)


def test_occupancy_names_the_limiting_resource():
    h100 = DeviceLimits()
    big = TileConfig(128, 128, 16, 2, 4, 3, 16, 1)  # 8 warps, 112 KiB of shared memory
    assert occupancy(big, "float64", Resources(242), h100).blocks == 1
    assert occupancy(big, "float64", Resources(242), h100).limiter == "registers"
    # two blocks of 112 KiB fit the SM's 228 KiB of shared memory, where registers would let more run
    assert occupancy(big, "float64", Resources(64), h100) == Occupancy(blocks=2, warps=16, limiter="shared memory")
    small = TileConfig(64, 64, 16, 2, 2, 3, 16, 2)
    occ = occupancy(small, "float64", Resources(128), h100)
    assert (occ.blocks, occ.warps) == (4, 16)
    # register allocation is per warp in units of 256: 129 registers cost as much as 136
    assert occupancy(small, "float64", Resources(129), h100) == occupancy(small, "float64", Resources(136), h100)


def test_prune_drops_spills_and_thin_occupancy_and_ranks_by_l2_traffic():
    big = TileConfig(128, 128, 16, 2, 4, 3, 16, 1)
    mid = TileConfig(128, 64, 16, 2, 2, 3, 16, 2)
    thin = TileConfig(128, 64, 32, 2, 2, 4, 16, 2)  # 212 KiB: one block of 4 warps
    spilling = TileConfig(128, 128, 32, 2, 4, 3, 8, 1)
    judged = prune(
        [(mid, Resources(255)), (big, Resources(242)), (thin, Resources(200)), (spilling, Resources(254, 32))],
        "float64",
        keep=1,
    )
    verdicts = {c.config: c.verdict for c in judged}
    assert verdicts[big] == "keep"  # largest tile: least L2 traffic per flop
    assert verdicts[mid] == "ranked below the timed set"
    assert verdicts[thin].startswith("4 warps per SM")
    assert verdicts[spilling].startswith("spills")
    assert judged[0].config == big


def test_every_candidate_config_builds():
    for dtype in ("float64", "float32"):
        configs = candidate_configs(dtype)
        assert configs
        for config in configs:
            assert config_problems(config, dtype) == []
            plan_kernel(gemm_spec(dtype), config)


@pytest.mark.parametrize(
    "config, dtype, problem",
    [
        (TileConfig(128, 128, 16, 2, 4, 1, 16), "float64", "2 pipeline stages"),
        (TileConfig(128, 128, 12, 2, 4, 3, 8), "float64", "multiple of the mma k"),
        (TileConfig(128, 128, 16, 2, 4, 3, 2), "float64", "k = 4, 8 or 16"),
        (TileConfig(128, 128, 8, 4, 2, 3, 16), "float32", "k_step 1"),
        (TileConfig(128, 128, 16, 16, 1, 3, 16), "float64", "16x8 mma tiles"),
        # a tuning.json entry like these had been taken (a hunt): neither can launch on any GPU
        (TileConfig(1024, 1024, 64, 16, 32, 8, 8), "float64", "16384 threads per block; a block has at most 1024"),
        (TileConfig(128, 128, 16, 2, 4, 100, 16), "float64", "bytes of shared memory per block; a block has at most"),
    ],
)
def test_bad_configs_are_explained(config, dtype, problem):
    assert any(problem in p for p in config_problems(config, dtype))
    with pytest.raises(ValueError, match="cannot build"):
        plan_kernel(gemm_spec(dtype), config)


def test_spec_validation():
    with pytest.raises(ValueError, match="C identifier"):
        ProductStageSpec("bad name", "float64", msmes_products1().products, 4, 4, 4)
    with pytest.raises(ValueError, match="C identifier"):  # `$` alone would let a final newline through
        ProductStageSpec("k\n", "float64", msmes_products1().products, 4, 4, 4)
    with pytest.raises(ValueError, match="only 3"):
        ProductStageSpec("k", "float64", msmes_products1().products, 3, 4, 4)
    with pytest.raises(ValueError, match="zero coefficient"):
        SpecTerm(0, Fraction(0))
    with pytest.raises(ValueError, match="twice"):
        FusedProduct(terms((0, 1), (0, 2)), terms((0, 1)), terms((0, 1)))
    with pytest.raises(ValueError, match="batch"):
        ProductStageSpec("k", "float64", msmes_products1().products, 4, 4, 4, 0)
    assert SpecTerm(1, 2).coef == Fraction(2)


def test_atomics_only_for_targets_that_two_products_share():
    assert shared_targets(msmes_products1()) == {0, 1, 2, 3}
    assert shared_targets(gemm_spec("float64")) == frozenset()
    plan = plan_kernel(sums(), tuning.DEFAULTS[("float32", "sum")])
    atomic = {(case.index, t.slot): t.atomic for case in plan.cases for t in case.targets}
    assert atomic == {(0, 0): False, (0, 3): True, (1, 3): True}


def test_operand_coefficients_fold_into_the_target_scale():
    plan = plan_kernel(sums(), tuning.DEFAULTS[("float32", "sum")])
    second = plan.cases[1]
    # (-A2 + 1/2 A1) -> factor -1 leaves (A2 - 1/2 A1); the target's -2 becomes +2
    assert [(s.slot, s.coef) for s in second.left] == [(2, "1.0"), (1, "-0.5")]
    assert [(t.slot, t.scale) for t in second.targets] == [(3, "2.0")]
    assert plan.cases[0].targets[1].scale == c_literal(Fraction(1, 3)) == repr(1 / 3)
    assert [(s.n_left, s.n_right) for s in plan.signatures] == [(2, 2), (2, 1)]


def test_params_struct_puts_eight_byte_members_first_and_fits_the_limit():
    fields = param_fields("float64", 7, 4, 4, 4)
    layout = params_dtype(fields)
    offsets = [layout.fields[f.name][1] for f in fields]
    assert offsets == sorted(offsets)
    assert layout.fields["alpha"][1] == 8 * 7 * 12
    assert layout.itemsize % 8 == 0
    most = max_batch("float64", 4, 4, 4)
    assert params_dtype(param_fields("float64", most, 4, 4, 4)).itemsize <= PARAM_LIMIT
    assert params_dtype(param_fields("float64", most + 1, 4, 4, 4)).itemsize > PARAM_LIMIT
    with pytest.raises(ValueError, match="at most"):
        plan_kernel(msmes_products1(batch=most + 1), F64)


def test_params_dtype_matches_the_static_assert_in_the_source():
    spec = msmes_products1(batch=3)
    plan = plan_kernel(spec, F64)
    source = render_product_stage(spec, F64)
    assert f"static_assert(sizeof(Params) == {plan.params_bytes}," in source
    assert plan.params_bytes == params_dtype(plan.fields).itemsize
    record = np.zeros(1, params_dtype(plan.fields))
    record[0]["a"][2, 3] = 2**40 + 8
    assert record["a"][0, 2, 3] == 2**40 + 8


def test_tuning_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("BILINEAR_CACHE", str(tmp_path))
    assert tuning.cache_path() == tmp_path / "tuning.json"
    assert tuning.lookup("NVIDIA H100 80GB HBM3", "float64", "single") is None
    best = TileConfig(128, 64, 16, 2, 2, 3, 8, 2)
    tuning.store("NVIDIA H100 80GB HBM3", "float64", "single", best, {"effective_tflops": 55.0})
    tuning.store("NVIDIA H100 80GB HBM3", "float32", "single", F32, {})
    assert tuning.lookup("NVIDIA H100 80GB HBM3", "float64", "single") == best
    assert tuning.lookup("NVIDIA H200", "float64", "single") is None
    assert tuning.lookup("NVIDIA H100 80GB HBM3", "float32", "single") == F32


def test_variant_separates_operand_sums():
    assert tuning.variant(gemm_spec("float64")) == "single"
    assert tuning.variant(msmes_products1()) == "single"
    assert tuning.variant(sums()) == "sum"


def test_a_launch_keeps_its_grid_within_cudas_65535_rows():
    """grid.y is batch entries × products: 909 entries of 80 products fit the parameters' limit, and the
    launch asked for 72720 rows, past CUDA's 65535 (a hunt)."""
    from dataclasses import replace

    from bilinear.lower.product import default_config, launch_batch

    products = tuple(FusedProduct((SpecTerm(0, 1),), (SpecTerm(0, 1),), (SpecTerm(0, Fraction(1, i + 1)),))
                     for i in range(80))
    spec = ProductStageSpec("many", "float64", products, 1, 1, 1, batch=909)
    assert max_batch("float64", 1, 1, 1) >= 909
    assert launch_batch(spec) == 65535 // 80 == 819
    with pytest.raises(ValueError, match=r"909 batch entries of 80 products need 72720 rows of blocks \(CUDA's "
                                         r"limit 65535\); launch at most 819 at a time"):
        plan_kernel(spec, default_config(spec))
    assert plan_kernel(replace(spec, batch=819), default_config(spec)).params_bytes <= PARAM_LIMIT
    assert launch_batch(msmes_products1(batch=3)) == 3
