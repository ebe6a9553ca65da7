"""FP64 products on integer units: the Ozaki scheme II (Ozaki, Uchino, Imamura 2025).

A double-precision product C = alpha·A@B + beta·C becomes N exact int8 products (float32 too:
the same steps with a 24-bit target, :func:`default_bits`, C rounded to float32 per chunk of k):

1. **Scale to integers.**  Row i of A is multiplied by 2^ea_i, column j of B by 2^eb_j
   (powers of two: exact), chosen so that its largest magnitude lands in [2^(bA-1), 2^bA),
   and rounded to the nearest integer: A' = rint(diag(2^ea) A), B' = rint(B diag(2^eb)),
   |A'| ≤ 2^bA, |B'| ≤ 2^bB.  Rounding is the only error of the scheme: each element moves by at
   most half a unit, 2^-bA relative to its row's largest element (2^-bB for B's columns).
2. **Residues.**  For pairwise coprime moduli p_1..p_N ≤ 256, the symmetric residues
   A'_j = A' mod p_j and B'_j = B' mod p_j lie in [-128, 127]: int8.
3. **N int8 products** C'_j = A'_j B'_j with int32 accumulation, exact while k·128² < 2^31
   (:data:`K_CHUNK`; longer inner dimensions are split into chunks that add into C).
4. **CRT.**  With M = Π p_j, A'B' ≡ C'_j (mod p_j) for every j determines A'B' mod M, and it *is*
   A'B' when |A'B'| < M/2.  Every entry is bounded by k·2^(bA+bB), so the scheme is exact for
   ``k·2^(bA+bB) ≤ M/2 - M·2^-40`` (:func:`usable`: the margin keeps the rounding in step 4 away
   from ties); with N moduli, bA + bB ≈ ⌊log2(M/(2k))⌋ (:func:`scale_bits`), and conversely the
   accuracy target ``bits`` (bA, bB ≥ bits) needs about log2 M ≥ 2·bits + log2 k + 1
   (:func:`moduli_for`).  Reconstruction (:func:`crt_accumulate`, :func:`crt_finish`) is
   accurate to about two roundings of the result.
5. **Unscale**: C'·2^-(ea_i + eb_j), then alpha and beta.

``scaling="norm"`` scales by the rows' and columns' 2-norms instead (the Cauchy–Schwarz bound
|A'_i:·B'_:j| ≤ ‖A'_i:‖‖B'_:j‖ ≤ (2^bA + √k/2)(2^bB + √k/2) ≤ M/2 - M·2^-40 replaces
k·max·max): bA + bB ≈ ⌊log2(M/2)⌋, precision 2^-bA relative to ‖A_i:‖ ≤ √k·max|A_i:|.  Never
more than one bit worse than "max", and on random data about log2(√k·max/‖·‖) bits better per
side (2 bits at k = 16384): the same accuracy with about half a modulus fewer.

So the result's error is the rounding of step 1: |ΔC_ij| ≤ 2^-bA·max|A_i:|·Σ_h|B_hj| +
2^-bB·Σ_h|A_ih|·max|B_:j| (plus two roundings of C_ij), against DGEMM's ≈ k·u·Σ_h|A_ih||B_hj|
worst case; on random data both are random walks (∝ √k·2^-b here, ∝ k·u for DGEMM's sums).

This module holds the scheme's arithmetic: the moduli, the bits of the scaled integers, the CRT
constants and the workspace layout.  Lowering takes it from here (the C++ library's tables and
passes, :mod:`bilinear.lower.ozaki_host`), and so does the runtime, whose steps on arrays and CPU
product are :mod:`bilinear.runtime.ozaki`, its GPU passes :mod:`bilinear.runtime.ozaki_cuda`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from .options import OZAKI_SCALINGS

#: Products of two int8 residues are at most 128·128 in magnitude, and int32 accumulators hold
#: up to 2^31 - 1, so an int8 product with inner dimension up to this is exact.
K_CHUNK = (2**31 - 1) // (128 * 128)
#: Scaled integers stay at most 2^62: they convert exactly to int64, and the CUDA residue step
#: (x = h·2^31 + l, then h·(2^31 mod p) + l reduced once in double precision) holds below 2^63.
MAX_BITS = 62
#: The default accuracy target: every element kept to 53 bits relative to its row's (column's)
#: largest element, as if A and B were stored in fixed point with a double's precision.
DEFAULT_BITS = 53
FLOAT32_BITS = 24  #: the same for float32 (every step as for float64, C rounded once at the end)
MAX_MODULI = 20
SCALINGS = OZAKI_SCALINGS  #: rows of A and columns of B scaled to integers by their largest magnitude or 2-norm
#: "max" is the scheme as stated above (its error bound is the documented one); the leaf's default.
DEFAULT_SCALING = "max"
#: The computed 2-norm, times this, bounds the true one (its rounding is at most k·2^-53 ≤ 2^-36).
NORM_SAFETY = 1.0 + 2.0**-30
#: Rows of B one thread scans for its column's largest magnitude (and sum of squares) on the GPU.
COLUMN_STRIP = 64
#: The lowest limb of the CRT constants has this weight and two more limbs sit above it (see Crt).
LIMBS = 3


def default_bits(dtype: Any) -> int:
    """The accuracy target for products of ``dtype``: a float64's 53 bits or a float32's 24."""
    return FLOAT32_BITS if np.dtype(dtype) == np.float32 else DEFAULT_BITS


def _coprime_moduli(limit: int, count: int) -> tuple[int, ...]:
    """The largest pairwise coprime integers ≤ limit, greedily from the top (256, 255, 253, ...):
    large moduli give the most bits of M per int8 GEMM."""
    chosen: list[int] = []
    for p in range(limit, 1, -1):
        if all(math.gcd(p, q) == 1 for q in chosen):
            chosen.append(p)
            if len(chosen) == count:
                break
    return tuple(chosen)


MODULI = _coprime_moduli(256, MAX_MODULI)


def modulus_product(count: int) -> int:
    """M = p_1···p_N for the first ``count`` moduli."""
    return math.prod(MODULI[:count])


def usable(M: int) -> int:
    """The largest |A'B'| the reconstruction takes: M/2 less a margin of M·2^-40 (and 1), so that
    |X/M| ≤ 1/2 - 2^-40.  The computed S of :func:`crt_finish` is within 2^-44 of X/M plus an
    integer (at most 20 terms w_j·fl(1/p_j), |w_j| ≤ 128, each off by ≤ 2^-52 with its own rounding,
    and as many roundings of partial sums below 11, each ≤ 2^-50), so rint(S) is that integer."""
    return M // 2 - (M >> 40) - 1


def too_few(count: int) -> str:
    """The refusals' subject: "1 modulus is too few", "2 moduli are too few"."""
    return "1 modulus is too few" if count == 1 else f"{count} moduli are too few"


def scale_bits(count: int, k: int, scaling: str = "max") -> tuple[int, int]:
    """(bA, bB): the most bits the scaled integers may have with ``count`` moduli and inner
    dimension ``k``, split evenly (bA takes the odd bit), with U = :func:`usable` (≈ M/2): with
    "max" scaling k·2^(bA+bB) ≤ U, each ≤ 62; with "norm" scaling (2^bA + √k/2)(2^bB + √k/2) ≤ U
    (rounding adds at most √k/2 to a norm below 2^bA), each ≤ 61 (every element is below its
    row's norm).

    Raises:
        ValueError: when M is too small for bA + bB ≥ 3, or with "norm" for 2^b ≥ 2√k: one bit each
            bounds the error by 2^-1 + 2^-1 of max|A_i:|·Σ|B_:j| (and Σ|A_i:|·max|B_:j|), which
            bound |C_ij| themselves: C = 0 would meet it, so no bit of the result is sure.
    """
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {', '.join(SCALINGS)}, not {scaling!r}")
    bound = usable(modulus_product(count))
    total = (bound // k if scaling == "max" else bound).bit_length() - 1  # largest t with k·2^t ≤ U (2^t ≤ U)
    if scaling == "norm":
        root = math.isqrt(k - 1) + 1  # ⌈√k⌉
        while total >= 2 and (2 ** (total - total // 2 + 1) + root) * (2 ** (total // 2 + 1) + root) > 4 * bound:
            total -= 1
    if total < 3:  # (1, 1): an error bound as large as C itself
        raise ValueError(f"{too_few(count)} for an inner dimension of {k}")
    cap = MAX_BITS if scaling == "max" else MAX_BITS - 1
    bits = min(cap, total - total // 2), min(cap, total // 2)
    if scaling == "norm" and 2 ** min(bits) < 2 * math.sqrt(k):  # a typical element, norm/√k, rounds to 0
        raise ValueError(f"{too_few(count)} for an inner dimension of {k} with norm scaling; give more or use max")
    return bits


def moduli_for(bits: int, k: int) -> int:
    """The fewest moduli that keep ``bits`` bits of every element (bA, bB ≥ bits) at inner
    dimension ``k`` with "max" scaling (so with "norm" too): about log2 M ≥ 2·bits + log2 k + 1.

    Raises:
        ValueError: for a target beyond 62 bits or one that needs more than MAX_MODULI moduli.
    """
    if not 1 <= bits <= MAX_BITS:
        raise ValueError(f"the accuracy target must be between 1 and {MAX_BITS} bits, not {bits}")
    for count in range(1, MAX_MODULI + 1):
        if usable(modulus_product(count)) >= k << (2 * bits):
            return count
    raise ValueError(f"{bits} bits at inner dimension {k} need more than {MAX_MODULI} moduli")


def error_bound(count: int, k: int, scaling: str = "max") -> float:
    """The error bound of one product at inner dimension ``k`` over k·max|A|·max|B| (the largest |C| can
    be): 2^-bA + 2^-bB with "max" scaling, √k times that with "norm" (a unit of 2^-b of a row's 2-norm,
    at most √k·max); the reconstruction's two roundings of C aside.

    Raises:
        ValueError: as :func:`scale_bits`.
    """
    bits_a, bits_b = scale_bits(count, k, scaling)
    return (2.0**-bits_a + 2.0**-bits_b) * (math.sqrt(k) if scaling == "norm" else 1.0)


def fewest_moduli(k: int, scaling: str = "max", growth: float = 1.0) -> int:
    """The fewest moduli :func:`scale_bits` takes at inner dimension ``k`` (at most MAX_MODULI); where
    levels above the products can grow their error ``growth`` times (more than 1), the fewest whose
    :func:`error_bound`, so grown, stays below 1."""
    for count in range(1, MAX_MODULI):
        try:
            if error_bound(count, k, scaling) * growth < 1 or growth == 1:  # (error_bound raises as scale_bits)
                return count
        except ValueError:
            continue
    return MAX_MODULI


@dataclass(frozen=True)
class Crt:
    """Constants of the CRT reconstruction for the first N moduli.

    X = Σ_j w_j·Q_j − r·M with w_j = (c_j·y_j mod p_j), Q_j = M/p_j, y_j = Q_j^-1 mod p_j and
    r = rint(Σ_j w_j/p_j) is the symmetric representative of A'B' mod M.  Q_j and M (up to ~160
    bits) are cut into three limbs of ``limb_bits`` bits on one grid of powers of two (weights
    2^(shift+2L), 2^(shift+L), 2^shift; bits below 2^shift are dropped, an error below
    M·2^-100).  Per limb, T_t = Σ_j w_j·Q_jt − r·M_t is a sum of integers each below
    2^(53 - log2(Σ p_j/2 + N/2 + 1)) in magnitude, so every partial sum is an integer below
    2^53: exact in double precision, in any order.  The only roundings are then in
    (T_0·2^L + T_1)·2^L + T_2: two, relative to the result.
    """

    moduli: tuple[int, ...]
    inverses: tuple[int, ...]
    limb_bits: int
    shift: int
    q_limbs: tuple[tuple[float, ...], ...]  # [modulus][limb], highest limb first
    m_limbs: tuple[float, ...]

    @property
    def count(self) -> int:
        return len(self.moduli)


@lru_cache(maxsize=None)
def crt_constants(count: int) -> Crt:
    moduli = MODULI[:count]
    M = math.prod(moduli)
    inverses = tuple(pow(M // p, -1, p) for p in moduli)
    # |w_j| ≤ p_j/2 and |r| ≤ N/2 + 1: the sum of magnitudes times a limb stays below 2^53.
    weight = sum(p // 2 for p in moduli) + count // 2 + 1
    limb_bits = 53 - weight.bit_length()
    shift = max(0, M.bit_length() - LIMBS * limb_bits)

    def limbs(x: int) -> tuple[float, ...]:
        mask = (1 << limb_bits) - 1
        return tuple(float((x >> (shift + t * limb_bits)) & mask) for t in reversed(range(LIMBS)))

    return Crt(moduli, inverses, limb_bits, shift, tuple(limbs(M // p) for p in moduli), limbs(M))


@dataclass(frozen=True)
class OzakiPlan:
    """What one product (one chunk of the inner dimension) runs with."""

    k: int
    count: int
    bits_a: int
    bits_b: int
    scaling: str = "max"

    @property
    def crt(self) -> Crt:
        return crt_constants(self.count)

    @property
    def moduli(self) -> tuple[int, ...]:
        return MODULI[: self.count]


def make_plan(k: int, count: int | None = None, bits: int = DEFAULT_BITS, scaling: str = "max") -> OzakiPlan:
    """The plan for inner dimension ``k``: ``count`` moduli, or the fewest that keep ``bits`` bits
    (of the worst case, "max" scaling: "norm" is never more than a bit worse)."""
    count = moduli_for(bits, k) if count is None else count
    if not 1 <= count <= MAX_MODULI:
        raise ValueError(f"the number of moduli must be between 1 and {MAX_MODULI}, not {count}")
    return OzakiPlan(k, count, *scale_bits(count, k, scaling), scaling)


#: The int8 GEMMs' k is padded (zero residues) to a multiple of K_ALIGN, m and n to MN_ALIGN: at
#: 10000×9000×11000, k to 16 ran 0.788× DGEMM, to 128 1.062; m, n to 128 within noise of 4
#: (benchmarks/results/issue13/session22/ozaki_{k,mn}_align.txt).
K_ALIGN, MN_ALIGN = 128, 4


def round_up(x: int, to: int) -> int:
    return -(-x // to) * to


def workspace_layout(m: int, k: int, n: int, count: int, *, scaling: str = "max",
                     residue_levels: int = 0) -> dict[str, int]:
    """Byte offsets (256-byte aligned) of the parts of one product's GPU workspace, and its "total".

    Per modulus: int8 residues of A (m×k) and of Bᵀ (n×k), and the int32 product (m×n), with m and
    n padded to MN_ALIGN and k to K_ALIGN (cuBLAS's int8 tensor-core kernels want aligned
    dimensions); the largest magnitude (or norm bound) of every row of A and column of B (8 bytes
    each); with "norm" scaling, B's columns' sums of squares per strip of COLUMN_STRIP rows.  With a
    Strassen level on the residues (``residue_levels=1``): 7 operands of half size for A and Bᵀ and 7
    half-size products per modulus (m, n padded to 8, k to 32): 7/4 of the residues and products of
    the plain scheme.  At m = k = n = 16384 and N = 16: 8 GiB of residues and 16 GiB of products.
    """
    if residue_levels:
        mh, nh, kh = round_up(m, 8) // 2, round_up(n, 8) // 2, round_up(min(k, K_CHUNK), 32) // 2
        ra, rb, products = 7 * count * mh * kh, 7 * count * nh * kh, 4 * 7 * count * mh * nh
    else:
        m4, n4, kp = round_up(m, MN_ALIGN), round_up(n, MN_ALIGN), round_up(min(k, K_CHUNK), K_ALIGN)
        ra, rb, products = count * m4 * kp, count * n4 * kp, 4 * count * m4 * n4
    parts = {"amax_a": 8 * m, "amax_b": 8 * n, "ra": ra, "rb": rb, "products": products,
             "partial": 8 * n * -(-min(k, K_CHUNK) // COLUMN_STRIP) if scaling == "norm" else 0}
    offsets, at = {}, 0
    for name, size in parts.items():
        offsets[name] = at
        at += round_up(size, 256)
    offsets["total"] = at
    return offsets


def workspace_bytes(m: int, k: int, n: int, count: int, *, scaling: str = "max", residue_levels: int = 0) -> int:
    """Device bytes beyond A, B and C one product takes on the GPU (see :func:`workspace_layout`)."""
    return workspace_layout(m, k, n, count, scaling=scaling, residue_levels=residue_levels)["total"]


def _largest(top: int, fits: Callable[[int], bool]) -> int:
    """The largest x in 1..top with fits(x), fits being monotone (0 where fits(1) is False)."""
    low, high = 0, top
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _even(extent: int, most: int) -> int:
    """The size of the fewest near-equal pieces of ``extent``, none above ``most``."""
    pieces = -(-extent // most)
    return -(-extent // pieces)


def tile_for_budget(m: int, k: int, n: int, count: int, budget: int | None, scaling: str = "max") -> tuple[int, int]:
    """The rows and columns of the tiles of C an m×k×n product runs in, every modulus at once, so
    that one tile's workspace fits ``budget`` bytes: all of C where it fits (or without a budget);
    else bands of rows, the fewest that fit (B's residues whole, A's a band's); else tiles of about
    equal sides.  A tile is a product of A's rows by B's columns scaled by their own statistics over
    each chunk of k, the whole product's, so C is the same bit for bit; what a tile costs is B's (A's)
    residues formed again per band.

    Raises:
        ValueError: when even a 1×1 tile does not fit.
    """
    def fits(rows: int, cols: int) -> bool:
        return workspace_bytes(rows, k, cols, count, scaling=scaling) <= budget

    if budget is None or fits(m, n):
        return m, n
    if rows := _largest(m, lambda r: fits(r, n)):
        return _even(m, rows), n
    if side := _largest(max(m, n), lambda s: fits(min(s, m), min(s, n))):
        return _even(m, min(side, m)), _even(n, min(side, n))
    raise ValueError(f"an ozaki product of {m}x{k}x{n} needs {workspace_bytes(1, k, 1, count, scaling=scaling)} bytes of "
                     f"workspace even one element of C at a time; the budget is {budget}")
