"""FP64 products on integer units: the Ozaki scheme II (Ozaki, Uchino, Imamura 2025), on arrays.

:mod:`bilinear.lower.ozaki_scheme` states the scheme and holds its arithmetic (moduli, bits, CRT
constants, workspace), which lowering shares: this module re-exports it, and adds the steps on
arrays, generic over the array module (``xp`` is numpy or cupy), and :func:`gemm`, the whole
product with them: the CPU path, where an exact float64 product of the integer residues stands in
for the int8 GEMM (every partial sum is an integer below 2^53), so CPU tests run the very
algorithm the GPU runs.  :mod:`bilinear.runtime.ozaki_cuda` runs the same steps as fused CUDA
passes with cuBLAS's int8 GEMM.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lower.ozaki_scheme import (
    COLUMN_STRIP,
    DEFAULT_BITS,
    DEFAULT_SCALING,
    FLOAT32_BITS,
    K_ALIGN,
    K_CHUNK,
    LIMBS,
    MAX_BITS,
    MAX_MODULI,
    MN_ALIGN,
    MODULI,
    NORM_SAFETY,
    SCALINGS,
    Crt,
    OzakiPlan,
    crt_constants,
    default_bits,
    make_plan,
    moduli_for,
    modulus_product,
    round_up,
    scale_bits,
    tile_for_budget,
    usable,
    workspace_bytes,
    workspace_layout,
)

__all__ = [
    "COLUMN_STRIP",
    "DEFAULT_BITS",
    "DEFAULT_SCALING",
    "FLOAT32_BITS",
    "K_ALIGN",
    "K_CHUNK",
    "LIMBS",
    "MAX_BITS",
    "MAX_MODULI",
    "MN_ALIGN",
    "MODULI",
    "NORM_SAFETY",
    "SCALINGS",
    "Crt",
    "OzakiPlan",
    "crt_constants",
    "default_bits",
    "make_plan",
    "moduli_for",
    "modulus_product",
    "round_up",
    "scale_bits",
    "tile_for_budget",
    "usable",
    "workspace_bytes",
    "workspace_layout",
    "statistic",
    "exponents",
    "scaled_integers",
    "residues",
    "modular_products",
    "crt_accumulate",
    "crt_finish",
    "gemm",
]

# --- the steps, for any array module ------------------------------------------------------------
def statistic(xp: Any, x: Any, axis: int, scaling: str) -> Any:
    """What a row (axis 1) or column (axis 0) is scaled by: its largest magnitude, or an upper bound of
    its 2-norm, amax·‖x/amax‖·NORM_SAFETY (amax rounded up to a power of two: the squares neither
    overflow nor underflow); Inf or NaN when the row has one.  A norm bound past float64's range is
    written as -bound·2^-1024 (statistics are magnitudes: the sign is free), as on the GPU."""
    amax = xp.abs(x).max(axis=axis, initial=0.0)
    if scaling == "max":
        return amax
    ex = xp.frexp(xp.where(xp.isfinite(amax), amax, 0.0))[1]
    # Squares of entries far below a row's largest underflow to zero, as the bound may: not a trap to raise
    # under np.errstate(under="raise"), which A @ B does not raise either (a hunt).
    with np.errstate(under="ignore"):
        root = xp.sqrt((xp.ldexp(x, -(ex[:, None] if axis == 1 else ex[None, :])) ** 2).sum(axis=axis)) * NORM_SAFETY
    over = ex + xp.frexp(root)[1] > 1024  # root < 2√k: only the exponent can pass the range
    # each branch's exponent only where it is kept: 2^(e-1024) for a row in range had underflowed, then been dropped
    bound = xp.where(over, -xp.ldexp(root, xp.where(over, ex - 1024, 0)), xp.ldexp(root, xp.where(over, 0, ex)))
    return xp.where(xp.isfinite(amax), bound, amax)


def exponents(xp: Any, amax: Any, bits: int) -> tuple[Any, Any]:
    """(e, bad): 2^e takes a row (column) whose statistic (largest magnitude or norm bound) is
    ``amax`` into [2^(bits-1), 2^bits); ``bad`` marks rows with an Inf or NaN (their results are NaN)."""
    bad = ~xp.isfinite(amax)
    ex = xp.frexp(xp.where(bad, 0.0, xp.abs(amax)))[1] + xp.where(amax < 0, 1024, 0)  # see statistic
    return xp.where((amax != 0) & ~bad, bits - ex, 0).astype(np.int32), bad


def scaled_integers(xp: Any, x: Any, e: Any, bad: Any, axis: int) -> Any:
    """rint(x·2^e) along rows (axis 1: e per row) or columns (axis 0), as int64 (exact: the
    results are integers below 2^62); rows with an Inf or NaN become zeros."""
    e, bad = (e[:, None], bad[:, None]) if axis == 1 else (e[None, :], bad[None, :])
    return xp.where(bad, 0.0, xp.rint(xp.ldexp(x, e))).astype(np.int64)


def residues(xp: Any, x: Any, moduli: tuple[int, ...]) -> Any:
    """Symmetric residues of int64 ``x`` modulo each p, stacked: int8 in [-⌊p/2⌋, ⌈p/2⌉ - 1]."""
    return xp.stack([((x + p // 2) % p - p // 2).astype(np.int8) for p in moduli])


def modular_products(xp: Any, ra: Any, rbt: Any) -> Any:
    """int32 products ra[j] @ rbt[j]ᵀ, exact.  A float64 product stands in for the int8 GEMM:
    every partial sum is an integer of magnitude ≤ k·128² < 2^53, so any summation order is
    exact; the chunking keeps it below 2^31, as on the GPU.  One modulus at a time, so the
    float64 copies take one modulus's worth of memory."""
    return xp.stack([(x.astype(np.float64) @ y.astype(np.float64).T).astype(np.int32) for x, y in zip(ra, rbt)])


def crt_accumulate(xp: Any, products: Any, crt: Crt) -> list:
    """The accumulators [S, T_0, T_1, T_2] (see :class:`Crt`) over every modulus's product."""
    acc = [xp.zeros(products.shape[1:], dtype=np.float64) for _ in range(1 + LIMBS)]
    for j, c in enumerate(products):
        p = crt.moduli[j]
        t = c.astype(np.float64) * crt.inverses[j]  # |t| < 2^39: exact
        w = t - p * xp.rint(t * (1.0 / p))  # c_j·y_j mod p_j in [-p/2, p/2], exactly
        w = xp.where(w >= p - p // 2, w - p, w)  # canonical (p = 256: +128 is -128), whatever c_j's representative
        acc[0] += w * (1.0 / p)
        for limb in range(LIMBS):
            acc[1 + limb] += w * crt.q_limbs[j][limb]
    return acc


def crt_finish(xp: Any, acc: list, crt: Crt, shift: Any) -> Any:
    """The products A'B' times 2^shift (an integer array broadcast against them; the unscaling)."""
    s, *limbs = acc
    r = xp.rint(s)  # the multiple of M to take off; |A'B'| ≤ usable(M) keeps s - r within 1/2 - 2^-41
    limbs = [t - r * m for t, m in zip(limbs, crt.m_limbs)]
    value = limbs[0]
    for t in limbs[1:]:
        value = value * float(2**crt.limb_bits) + t  # the two roundings of the reconstruction
    return xp.ldexp(value, shift + crt.shift)


# --- the whole product ----------------------------------------------------------------------------
def gemm(xp: Any, A: Any, B: Any, C: Any, alpha: float = 1.0, beta: float = 0.0, *, count: int | None = None,
         bits: int | None = None, k_chunk: int = K_CHUNK, scaling: str = "max") -> None:
    """``C = alpha·A@B + beta·C`` in place, by the scheme, with the steps above (the CPU path).
    float32 matrices go through the same steps in float64 (their elements convert exactly); C is
    rounded to float32 after alpha and beta once per K_CHUNK of k, as the GPU passes do.

    Args:
        count: number of moduli; None chooses the fewest that keep ``bits`` bits (None: the
            target for C's dtype, :func:`default_bits`).
        k_chunk: longest inner dimension of one exact int8 product (tests make it small).
        scaling: "max" or "norm" (see the module's docstring).
    """
    m, k = A.shape
    if k == 0 or m == 0 or B.shape[1] == 0:
        C[...] = 0.0 if beta == 0 else beta * C
        return
    if not 1 <= k_chunk <= K_CHUNK:
        raise ValueError(f"k_chunk must be between 1 and {K_CHUNK}, not {k_chunk}")
    bits = default_bits(C.dtype) if bits is None else bits
    A, B = A.astype(np.float64, copy=False), B.astype(np.float64, copy=False)
    for start in range(0, k, k_chunk):
        stop = min(k, start + k_chunk)
        plan = make_plan(stop - start, count, bits, scaling)
        _gemm_chunk(xp, A[:, start:stop], B[start:stop], C, alpha, beta if start == 0 else 1.0, plan)


def _gemm_chunk(xp: Any, A: Any, B: Any, C: Any, alpha: float, beta: float, plan: OzakiPlan) -> None:
    ea, bad_a = exponents(xp, statistic(xp, A, 1, plan.scaling), plan.bits_a)
    eb, bad_b = exponents(xp, statistic(xp, B, 0, plan.scaling), plan.bits_b)
    ia = scaled_integers(xp, A, ea, bad_a, axis=1)
    ibt = scaled_integers(xp, B, eb, bad_b, axis=0).T
    products = modular_products(xp, residues(xp, ia, plan.moduli), residues(xp, ibt, plan.moduli))
    acc = crt_accumulate(xp, products, plan.crt)
    value = crt_finish(xp, acc, plan.crt, -(ea[:, None] + eb[None, :]))
    value = xp.where(bad_a[:, None] | bad_b[None, :], xp.nan, value)
    C[...] = alpha * value if beta == 0 else alpha * value + beta * C.astype(np.float64)
