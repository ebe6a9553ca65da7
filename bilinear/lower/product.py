"""The fused product kernel of one product stage, in four rooms:

- :mod:`.product_spec`: the contract with the scheduler (:class:`ProductStageSpec`: products of
  operand sums added into several targets, exact coefficients) and its plain reference;
- :mod:`.product_tiles`: the tunable tile configuration, what it needs, and the defaults;
- :mod:`.product_kernel`: everything a template needs (:func:`plan_kernel`) and the rendering;
- :mod:`.product_model`: the tuner's model (occupancy, pruning, ptxas reports, candidates).

This module is their public face: import from here.
"""

from __future__ import annotations

from .product_kernel import (
    GROUP_M,
    CopyPlan,
    ParamField,
    ProductCase,
    ProductKernel,
    Signature,
    Source,
    Target,
    c_literal,
    copy_plan,
    launch_batch,
    max_batch,
    param_fields,
    params_dtype,
    plan_kernel,
    render_product_stage,
    render_product_stages,
    shared_targets,
    template_for,
)
from .product_model import (
    Candidate,
    DeviceLimits,
    Occupancy,
    Resources,
    candidate_configs,
    l2_bytes_per_flop,
    occupancy,
    parse_ptxas,
    prune,
)
from .product_spec import (
    DTYPES,
    PARAM_LIMIT,
    FusedProduct,
    ProductStageSpec,
    SpecTerm,
    describe,
    gemm_spec,
    reference_update,
)
from .product_tiles import DEFAULTS, TileConfig, config_problems, default_config, shared_bytes, variant, vectors

__all__ = [
    "DEFAULTS", "DTYPES", "GROUP_M", "PARAM_LIMIT", "Candidate", "CopyPlan", "DeviceLimits", "FusedProduct",
    "Occupancy", "ParamField", "ProductCase", "ProductKernel", "ProductStageSpec", "Resources", "Signature", "Source",
    "SpecTerm", "Target", "TileConfig", "c_literal", "candidate_configs", "config_problems", "copy_plan",
    "default_config", "describe", "gemm_spec", "l2_bytes_per_flop", "launch_batch", "max_batch", "occupancy", "param_fields",
    "params_dtype", "parse_ptxas", "plan_kernel", "prune", "reference_update", "render_product_stage",
    "render_product_stages", "shared_bytes", "shared_targets", "template_for", "variant", "vectors",
]
