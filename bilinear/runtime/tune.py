"""The tuner of the fused product kernel's tile configuration: compile every candidate, read
the compiler's resource report, prune by occupancy (:func:`bilinear.lower.product.prune`),
time the survivors on the GPU and store the fastest (:mod:`bilinear.runtime.tuning`).
"""

from __future__ import annotations

import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..lower.product import (
    Candidate,
    DeviceLimits,
    FusedProduct,
    ProductStageSpec,
    Resources,
    SpecTerm,
    TileConfig,
    candidate_configs,
    gemm_spec,
    occupancy,
    prune,
)
from ..measure import time_interleaved
from ..processes import mapped
from .cuda import device_info
from .product import ProductStage, compiled_kernel
from .tuning import cache_path, gpu_model, store

MIN_WARPS = 8  # resident warps per SM below which a candidate is not timed


def representative_spec(dtype: str, kind: str) -> ProductStageSpec:
    """What a kind is tuned on: a plain GEMM, or Strassen's M1 = (A11 + A22)(B11 + B22) -> C11."""
    if kind == "single":
        return gemm_spec(dtype, f"tune_{dtype}_single")
    one = Fraction(1)
    product = FusedProduct((SpecTerm(0, one), SpecTerm(1, one)), (SpecTerm(0, one), SpecTerm(1, one)), (SpecTerm(0, one),))
    return ProductStageSpec(f"tune_{dtype}_sum", dtype, (product,), 2, 2, 1, 1)


def resources_of(kernel) -> Resources:
    """CuPy's function attributes as a resource report (local memory counts as spilling)."""
    return Resources(kernel.num_regs, kernel.local_size_bytes, kernel.shared_size_bytes)


def _compile_worker(job: tuple[ProductStageSpec, TileConfig]) -> tuple[int, int, int]:
    res = resources_of(compiled_kernel(*job))
    return res.registers, res.spill_bytes, res.static_shared


def compile_all(
    spec: ProductStageSpec, configs: Sequence[TileConfig], jobs: int = 8
) -> list[tuple[TileConfig, Resources]]:
    """Compile every candidate (in ``jobs`` processes: NVRTC is single-threaded) and read its resources.

    The workers fill CuPy's on-disk kernel cache, so compiling again here only loads the binaries.
    """
    if jobs > 1 and len(configs) > 1:  # spawned: a forked child would share the parent's CUDA context
        mapped(_compile_worker, [(spec, c) for c in configs], jobs, "spawn")
    return [(config, resources_of(compiled_kernel(spec, config))) for config in configs]


def operands(spec: ProductStageSpec, M: int, N: int, K: int, seed: int = 0):
    """Fresh normal random views for one batch entry of ``spec`` (tuning and benchmarks)."""
    import cupy

    rng = cupy.random.default_rng(seed)

    def draw(rows: int, cols: int, count: int) -> list:
        return [rng.standard_normal((rows, cols), dtype=spec.dtype) for _ in range(count)]

    return [(draw(M, K, spec.n_a), draw(K, N, spec.n_b), draw(M, N, spec.n_c)) for _ in range(spec.batch)]


def time_calls(calls: Sequence, repeats: int = 5, warmup: int = 2) -> list[float]:
    """Median seconds of each zero-argument call, interleaved round-robin (:func:`bilinear.measure.time_interleaved`)."""
    import cupy

    return [statistics.median(t) for t in time_interleaved(list(calls), cupy, repeats, warmup)]


@dataclass(frozen=True)
class TuneResult:
    candidates: tuple[Candidate, ...]
    seconds: dict  # TileConfig -> median seconds, for the timed survivors
    best: TileConfig
    tflops: float


def tune(
    dtype: str,
    kind: str = "single",
    n: int = 4096,
    keep: int = 6,
    repeats: int = 5,
    jobs: int = 8,
    configs: Sequence[TileConfig] | None = None,
    save: bool = True,
) -> TuneResult:
    """Prune ``configs`` (default: :func:`candidate_configs`) by occupancy, time the best ``keep``
    on an n×n×n problem, and (with ``save``) cache the fastest for this GPU."""
    spec = representative_spec(dtype, kind)
    limits = device_limits()
    # Shared memory alone already rules some out: no need to compile those.
    worth = [
        c for c in (configs or candidate_configs(dtype)) if occupancy(c, dtype, Resources(0), limits).warps >= MIN_WARPS
    ]
    measured = compile_all(spec, worth, jobs)
    judged = prune(measured, dtype, limits, min_warps=MIN_WARPS, keep=keep)
    survivors = [c.config for c in judged if c.verdict == "keep"]
    if not survivors:
        raise RuntimeError(f"no {dtype} {kind} candidate survived pruning: " + "; ".join(c.verdict for c in judged))
    views = operands(spec, n, n, n)
    stages = [ProductStage(spec, config) for config in survivors]
    seconds = time_calls([lambda s=s: s(views, n, n, n) for s in stages], repeats)
    timed = dict(zip(survivors, seconds))
    best = min(timed, key=timed.get)
    tflops = 2 * n**3 / timed[best] / 1e12  # effective: the operand sums are not counted
    if save and not store(gpu_model(), dtype, kind, best, {"n": n, "seconds": timed[best], "effective_tflops": tflops}):
        warnings.warn(f"the winner could not be cached in {cache_path()} (the next tuning measures again)", stacklevel=2)
    return TuneResult(tuple(judged), timed, best, tflops)


def device_limits() -> DeviceLimits:
    """The occupancy limits of the current device (H100 defaults where it does not say)."""
    info, defaults = device_info(), DeviceLimits()

    def known(value, default):
        return default if value is None else value

    return DeviceLimits(
        sms=info.sms,
        max_warps=known(info.max_threads_per_sm, 32 * defaults.max_warps) // 32,
        max_blocks=known(info.max_blocks_per_sm, defaults.max_blocks),
        registers=known(info.registers_per_sm, defaults.registers),
        shared=known(info.shared_per_sm, defaults.shared),
        shared_per_block=known(info.shared_per_block, defaults.shared_per_block),
        shared_reserved=known(info.shared_reserved, defaults.shared_reserved),
    )
