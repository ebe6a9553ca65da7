"""The runtime side of the leaf-kind table (:data:`bilinear.lower.options.LEAF_KINDS`): the GEMM a
single-view leaf kind runs, and the workspace it needs beyond the schedule's."""

from __future__ import annotations

import importlib
from typing import Callable

from ..lower.options import LEAF_KINDS, Options
from ..lower.plan import Lowered, gemm_shapes
from .backend import Backend

Gemm = Callable[..., None]  # gemm(a, b, c, alpha, beta): c = alpha·a@b + beta·c on views


def leaf_gemm(options: Options, backend: Backend) -> Gemm:
    """The GEMM the leaf kind of ``options`` runs on ``backend`` (the backend's own for cublas;
    for fused leaves it serves only as a fallback nobody calls)."""
    factory = LEAF_KINDS[options.leaf].gemm
    if factory is None:
        return backend.gemm
    module, name = factory.split(":")
    return getattr(importlib.import_module(module), name)(backend, options)


def leaf_workspace_bytes(lowered: Lowered, gemm: Gemm, M: int, K: int, N: int) -> int:
    """The most device bytes one leaf GEMM of an M×K×N product takes (a GEMM object reports
    them through ``workspace_bytes(m, k, n)``; library GEMMs take none we allocate): the largest
    over every GEMM the leaf kind runs, the breadth-first leaves and strips included (they had been
    left out, so a breadth-first plan could pass a workspace limit by its Ozaki leaves)."""
    bytes_for = getattr(gemm, "workspace_bytes", None)
    return 0 if bytes_for is None else max((bytes_for(*dims) for dims in gemm_shapes(lowered, M, K, N)
                                            if min(dims) > 0), default=0)
