"""Fused product stages on the GPU: compiled once through CuPy (NVRTC), launched with every
view's pointer and leading dimension in one by-value struct, so a launch allocates no
device memory at all.

>>> stage = ProductStage(gemm_spec("float64"))          # C += alpha * A @ B
>>> stage([[A, B, C]], M, N, K, alpha=1.0)                # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .cuda import compiled_function
from .views import kernel_leading_dimension, rows_aligned
from ..lower.product import (
    DTYPES,
    ProductKernel,
    ProductStageSpec,
    TileConfig,
    launch_batch,
    params_dtype,
    plan_kernel,
    render_product_stage,
)

def compiled_kernel(spec: ProductStageSpec, config: TileConfig):
    """The CuPy function for ``spec`` under ``config``, compiled on first use (:mod:`.cuda`)."""
    plan = plan_kernel(spec, config)
    return compiled_function(render_product_stage(spec, config), spec.name, shared_bytes=plan.smem_bytes)


def _split_entry(entry, n_a: int, n_b: int, n_c: int) -> tuple[list, list, list]:
    """An entry is either (A-views, B-views, C-views) or one flat sequence of n_a + n_b + n_c views."""
    if len(entry) == 3 and not hasattr(entry[0], "shape"):
        a, b, c = (list(side) for side in entry)
    else:
        flat = list(entry)
        if len(flat) != n_a + n_b + n_c:
            raise ValueError(f"a batch entry needs {n_a} + {n_b} + {n_c} views, got {len(flat)}")
        a, b, c = flat[:n_a], flat[n_a : n_a + n_b], flat[n_a + n_b :]
    if (len(a), len(b), len(c)) != (n_a, n_b, n_c):
        raise ValueError(f"a batch entry needs ({n_a}, {n_b}, {n_c}) views, got ({len(a)}, {len(b)}, {len(c)})")
    return a, b, c


class ProductStage:
    """One fused product stage, ready to launch on CuPy arrays.

    Args:
        spec: the stage; ``spec.batch`` entries are computed per call.
        config: the tile configuration; ``None`` takes the tuned one cached for this GPU
            model and dtype (``bilinear.runtime.tuning``), or the built-in default.
    """

    def __init__(self, spec: ProductStageSpec, config: TileConfig | None = None):
        if config is None:
            from .tuning import config_for

            config = config_for(spec)
        self.spec = spec
        self.config = config
        self.per_launch = launch_batch(spec)
        self.launch_spec = replace(spec, batch=self.per_launch)
        self.plan: ProductKernel = plan_kernel(self.launch_spec, config)
        self.kernel = compiled_kernel(self.launch_spec, config)
        self._params_dtype = params_dtype(self.plan.fields)

    def __call__(self, views: Sequence, M: int, N: int, K: int, alpha: float = 1.0, stream=None) -> None:
        """For every batch entry and product: ``C_t += alpha·coef_t·(Σ u·A)(Σ v·B)``."""
        self.launch(self.parameters(views, M, N, K, alpha), M, N, stream)

    def parameters(self, views: Sequence, M: int, N: int, K: int, alpha: float = 1.0) -> list[np.ndarray]:
        """The by-value parameter structs of the launches that compute these views (one per
        ``per_launch`` batch entries; none when a size is 0).  They hold pointers, not arrays."""
        spec = self.spec
        if len(views) != spec.batch:
            raise ValueError(f"the stage has {spec.batch} batch entries, got {len(views)}")
        if min(M, N, K) < 0:
            raise ValueError(f"negative size M={M} N={N} K={K}")
        entries = [_split_entry(e, spec.n_a, spec.n_b, spec.n_c) for e in views]
        if min(M, N, K) == 0:
            return []  # nothing to add
        structs = []
        for start in range(0, spec.batch, self.per_launch):
            struct = np.zeros(1, self._params_dtype)
            self._fill(struct[0], entries[start : start + self.per_launch], M, N, K, alpha)
            structs.append(struct)
        return structs

    def launch(self, parameters: list[np.ndarray], M: int, N: int, stream=None) -> None:
        """Launch the kernel once per parameter struct (CUDA copies them at launch)."""
        tiles = -(-M // self.config.bm) * -(-N // self.config.bn)
        for struct in parameters:
            grid = (tiles, int(struct[0]["nbatch"]) * len(self.spec.products))
            self.kernel(grid, (self.plan.threads,), (struct,), shared_mem=self.plan.smem_bytes, stream=stream)

    def _fill(self, p, chunk: list, M: int, N: int, K: int, alpha: float) -> None:
        """Write pointers, leading dimensions, sizes and the alignment flags into one params struct."""
        dtype, size = self.spec.dtype, DTYPES[self.spec.dtype][1]
        vec = 16 // size
        vec_ab, vec_c = True, True
        for b, (a_views, b_views, c_views) in enumerate(chunk):
            for side, views, rows, cols, ld_name in (
                ("a", a_views, M, K, "lda"),
                ("b", b_views, K, N, "ldb"),
                ("c", c_views, M, N, "ldc"),
            ):
                for slot, view in enumerate(views):
                    ld = kernel_leading_dimension(view, rows, cols, dtype, f"entry {b} {side.upper()}[{slot}]")
                    pointer = view.data.ptr
                    p[side][b, slot] = pointer
                    p[ld_name][b, slot] = ld
                    ok = rows_aligned(pointer, ld, vec, size)
                    if side == "c":
                        vec_c &= ok
                    elif side in self.plan.vec_sides:
                        vec_ab &= ok
        p["alpha"] = alpha
        p["m"], p["n"], p["k"] = M, N, K
        p["nbatch"] = len(chunk)
        p["vec_ab"], p["vec_c"] = int(vec_ab), int(vec_c)
