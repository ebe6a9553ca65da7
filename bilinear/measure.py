"""Measuring a product honestly: inputs, errors, restoration, timing and allocations.

- inputs are random normal (never zeros, which hide unwritten outputs);
- the error is ‖C − C_ref‖ / (|α|‖A‖‖B‖ + |β|‖C‖), against a float64 reference that is exact before its
  last roundings for float64 inputs (so the library's own float64 error shows);
- restoration of in-place inputs is measured (max ulps and relative error),
  not claimed: (a+b)−b need not equal a in floating point;
- device time comes from CUDA events after a warm-up, median of repeats;
- extra device memory is every allocation CuPy's pool is asked for during
  the call, from a memory hook.
"""

from __future__ import annotations

import contextlib
import math
from fractions import Fraction
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24}


def random_inputs(xp: Any, M: int, K: int, N: int, dtype: str, seed: int = 0):
    """A (M×K), B (K×N) and C (M×N), standard normal, reproducible from ``seed``.

    NumPy arrays come from NumPy's generator; device arrays from the device's own (CuPy's
    RandomState), since three 8 GiB matrices at n = 32768 take the host half a minute.
    """
    shapes = ((M, K), (K, N), (M, N))
    if xp is np:
        rng = np.random.default_rng(seed)
        return tuple(rng.standard_normal(shape).astype(dtype, copy=False) for shape in shapes)
    device = xp.random.RandomState(seed)
    return tuple(device.standard_normal(shape, dtype=dtype) for shape in shapes)


def _xp(array: Any):
    return np if isinstance(array, np.ndarray) else __import__("cupy")


#: Rows of a matrix the error and restoration checks take at a time, in elements: their float64
#: temporaries stay at 128 MiB where a whole 32768² matrix is 8 GiB.
BLOCK_ELEMENTS = 1 << 24


def _row_blocks(matrix: Any):
    """Index pairs of blocks of about BLOCK_ELEMENTS elements covering the matrix: whole rows, or parts
    of one row where a row is longer (a 1×20,000,000 A's float64 temporaries had been whole rows)."""
    rows, columns = matrix.shape
    step = max(1, BLOCK_ELEMENTS // max(1, columns))
    width = min(max(1, columns), BLOCK_ELEMENTS)
    return ((slice(start, start + step), slice(left, left + width))
            for start in range(0, rows, step) for left in range(0, max(1, columns), width))


def check_bytes(M: int, K: int, N: int) -> int:
    """Bytes the error and restoration checks' float64 temporaries take at once: about eight of one
    block (:func:`restoration`'s)."""
    return 8 * 8 * min(BLOCK_ELEMENTS, max(M * K, K * N, M * N))


def _norm(matrix: Any, minus: Any = None) -> float:
    """‖matrix − minus‖_F in float64 (‖matrix‖_F without ``minus``), a block of rows at a time.

    Two passes: the largest magnitude, then the squares of the entries divided by it (as LAPACK's
    dnrm2 scales): the squares of an α = 1e-200 or 1e200 product's entries would underflow to 0 or
    overflow.  A NaN anywhere makes it NaN, else an Inf makes it Inf."""
    xp = _xp(matrix)

    def blocks():
        for rows in _row_blocks(matrix):
            part = matrix[rows].astype(xp.float64, copy=False)
            yield part if minus is None else part - minus[rows]

    maxima = [float(xp.abs(part).max()) for part in blocks() if part.size]  # NaN where a block holds one
    largest = math.nan if any(math.isnan(m) for m in maxima) else max(maxima, default=0.0)
    if largest == 0 or not math.isfinite(largest):
        return largest
    return largest * math.sqrt(sum(float(xp.sum(xp.square(part / largest))) for part in blocks() if part.size))


def error_scale(A: Any, B: Any, alpha: float = 1.0, beta: float = 0.0, C: Any = None) -> Fraction | float:
    """|α|·‖A‖_F ‖B‖_F + |β|·‖C‖_F (C as it was before the call): the denominator of
    :func:`relative_error`, the size of what ``α·A@B + β·C`` sums, so the error is relative to it
    whatever α and β scale.  Exact (a Fraction of the float64 norms) where they are finite: α = 1e305
    times the norms of 64×64 normal matrices passes float64's range, and the error had read 0."""
    terms = [(abs(alpha), _norm(A), _norm(B))] + ([(abs(beta), _norm(C))] if beta and C is not None else [])
    if not all(math.isfinite(factor) for term in terms for factor in term):
        return sum(math.prod(term) for term in terms)
    return sum(math.prod(map(Fraction, term)) for term in terms)


def _over(value: float, scale: Fraction | float) -> float:
    """``value / scale`` as a float, where ``scale`` may pass float64's range (:func:`error_scale`)."""
    if not scale or not math.isfinite(value):
        return value
    if isinstance(scale, float) and not math.isfinite(scale):  # an Inf or NaN in the data: as float division
        return value / scale
    try:
        return float(Fraction(value) / Fraction(scale))
    except OverflowError:  # far past 1: a C that is all wrong, of a tiny scale
        return math.inf


def relative_error(C: Any, reference: Any, A: Any, B: Any, scale: float | None = None) -> float:
    """‖C − C_ref‖_F / (‖A‖_F ‖B‖_F) in float64, on whichever device the arrays live.

    ``scale`` is ``error_scale(A, B)`` taken earlier, for a caller whose in-place product has
    since perturbed A and B (within rounding) and who keeps no copies of them.  At n = 32768 in
    float64 every matrix is 8 GiB, so the difference is formed a block of rows at a time.
    """
    scale = error_scale(A, B) if scale is None else scale
    return _over(_norm(C, reference), scale)


def float64_reference(A: Any, B: Any, C: Any, alpha: float, beta: float) -> Any:
    """``alpha·A@B + beta·C`` in float64 on the arrays' device, the product A@B exact before one
    rounding per term summed (:func:`exact_product`) where A and B are float64, so the library's own
    float64 error is measured too; narrower inputs are multiplied in float64, whose error is far
    below theirs."""
    xp = _xp(A)
    if A.dtype == xp.float64 and B.dtype == xp.float64:
        exact = exact_product(A, B)
    else:
        exact = A.astype(xp.float64) @ B.astype(xp.float64)
    if alpha != 1:
        exact *= alpha
    if beta != 0:
        exact += beta * C.astype(xp.float64, copy=False)
    return exact


#: Most slices a float64 operand is cut into (about 19 bits each at K = 16384); a remainder past them
#: joins the last, and its products are rounded: only rows or columns spanning more than about 57
#: bits below their largest element (never random normal data) are then not exact.
MOST_SLICES = 4


def _slices(X: Any, axis: int, K: int) -> list:
    """X as a sum of slices (Ozaki, Ogita, Oishi and Rump's error-free splitting): each slice keeps the
    top 54 − β bits below its row's (axis=1) or column's (axis=0) largest remaining magnitude, with
    2β ≥ 55 + log2 K, so any slice of A times any slice of B sums its K products exactly in float64."""
    xp = _xp(X)
    beta = math.ceil((55 + math.ceil(math.log2(max(K, 2)))) / 2)
    slices, rest = [], X
    while len(slices) < MOST_SLICES - 1:
        largest = xp.abs(rest).max(axis=axis, keepdims=True)
        _, exponent = xp.frexp(largest)  # 2^exponent > largest
        sigma = xp.where(largest > 0, xp.ldexp(xp.ones_like(largest), exponent + beta), 0.0)
        top = (rest + sigma) - sigma
        slices.append(top)
        rest = rest - top
        if not rest.any():
            return slices
    return [*slices, rest]


def _tile(rows: int, K: int) -> int:
    """Rows of A (columns of B) :func:`exact_product` splits at a time: about BLOCK_ELEMENTS elements."""
    return max(1, min(rows, BLOCK_ELEMENTS // K, -(-rows // 8)))


def reference_bytes(M: int, K: int, N: int, dtype: str) -> int:
    """Bytes :func:`float64_reference` holds beside its result: float64 copies of narrower A and B,
    or, for float64 ones, a tile of A's slices and one of B's with :func:`_slices`' working copies."""
    if not (M and K and N):
        return 0
    if dtype != "float64":
        return 8 * (M * K + K * N)
    return 8 * (MOST_SLICES + 3) * K * (_tile(M, K) + _tile(N, K))


def exact_product(A: Any, B: Any) -> Any:
    """A@B for float64 A and B: every product of slices (:func:`_slices`) is exact, and their sum,
    smallest first, is rounded about once per entry, so its error is about u·‖A‖‖B‖ where a float64
    GEMM's grows with √K times that (an entry that cancels to far below its terms may be off by more
    than u of itself: 2^-76 for 2^-76 + 2^-104).  It takes one GEMM per pair of slices (9 to 16 for
    normal data: 16 at K = 1024 and 16384), over tiles of about BLOCK_ELEMENTS rows and columns so the
    slices' memory stays bounded beside matrices of 8 GiB.  Inputs past 2^900 in magnitude or not
    finite are multiplied plainly (the splitting would overflow)."""
    xp = _xp(A)
    (M, K), N = A.shape, B.shape[1]
    out = xp.zeros((M, N), dtype=xp.float64)
    if not (M and N and K):
        return out
    extremes = (float(A.max()), -float(A.min()), float(B.max()), -float(B.min()))  # NaN where one holds a NaN
    if not all(value <= 2.0**900 for value in extremes):
        return xp.matmul(A, B, out=out)
    rows, columns = _tile(M, K), _tile(N, K)
    for c in range(0, N, columns):
        b_slices = _slices(B[:, c : c + columns], 0, K)
        for r in range(0, M, rows):
            a_slices = _slices(A[r : r + rows], 1, K)
            pairs = sorted(((i, j) for i in range(len(a_slices)) for j in range(len(b_slices))), key=sum, reverse=True)
            tile = out[r : r + rows, c : c + columns]
            for i, j in pairs:  # the smallest terms first, so the sum rounds about once
                tile += a_slices[i] @ b_slices[j]
    return out


def error_bound(dtype: str, K: int, growth_ratio: float, levels: int = 1) -> float:
    """The bound ``bilinear run`` checks: 8·u·√K·ρ^L.

    u is the unit roundoff, K the inner dimension, ρ the algorithm's growth
    factor over the classical one's (Strassen 14.83/8 ≈ 1.85, Winograd 2.23)
    and L the levels.  For the classical product the normwise error of
    random normal data is well under u·√K; each level of a fast algorithm
    can amplify it by at most about ρ.  Levels of different schemes (a
    hybrid) amplify it by the product of their ρ: ``bilinear run`` and
    ``bench`` pass that product as ``growth_ratio``, with ``levels`` left at 1
    (the tests and benchmarks pass one scheme's ρ and its L).
    """
    return 8 * UNIT_ROUNDOFF[dtype] * math.sqrt(max(K, 1)) * growth_ratio**levels


def zero_error(reference: Any, scale: float) -> float:
    """The relative error a C of zeros would have, ‖C_ref‖/scale (at most about 1; 1 where the scale
    is 0): a bound at or past it passes any product of the right size."""
    return _over(_norm(reference), scale) if scale else 1.0


def within_bound(error: float, bound: float, trivial: float = 1.0) -> bool:
    """Whether a run's relative error passes its bound: finite and at most the bound, and the bound
    below ``trivial``, the error of a C of zeros (:func:`zero_error`; a growth factor of 1.8e16 gave
    a bound of 90 and an 18 % error passed, and a float32 bound of 4e-2 passed C = 0 at K = 1000)."""
    return bool(np.isfinite(error)) and error <= bound < trivial


def bound_verdict(error: float, bound: float, trivial: float, growth: float) -> str:
    """What a run's report says after its error and bound: nothing where the error passes.  ``growth``
    is the bound's ρ^L (ρ_1·…·ρ_L): where 8·u·√K alone (bound / growth) passes a C of zeros, a long K is why, not
    the scheme (float32 from K ≈ 2·10⁶, where C = 0's error, about 1/√K, falls below it)."""
    if bound >= trivial:
        why = ("the scheme's error growth is too large" if bound / growth < trivial else
               f"8·u·√K alone, {bound / growth:.1e}, passes it at this K, before any error growth")
        return f"   NOT CHECKED: the bound passes even a C of zeros (its error would be {trivial:.1e}; {why})"
    return "" if within_bound(error, bound, trivial) else "   EXCEEDS THE BOUND"


def growth_in(bound: float, dtype: str, K: int) -> float:
    """The ρ^L (ρ_1·…·ρ_L) of a bound :func:`error_bound` gave at ``dtype`` and ``K``."""
    return bound / error_bound(dtype, K, 1.0)


@dataclass(frozen=True)
class Restoration:
    """Element-wise: the largest error in ulps of the original element, and relative to it;
    normwise: the largest error relative to the largest original element."""

    max_ulps: float
    max_relative: float
    normwise: float = 0.0

    @property
    def exact(self) -> bool:
        return self.max_ulps == 0


def _ulp(xp: Any, values: Any) -> Any:
    """The spacing of floating-point numbers at each value (CuPy has no ``spacing``)."""
    info = np.finfo(values.dtype)
    _, exponent = xp.frexp(values.astype(xp.float64))
    spacing = xp.ldexp(xp.ones(values.shape, dtype=xp.float64), exponent - (info.nmant + 1))
    return xp.where(values == 0, float(info.smallest_subnormal), xp.maximum(spacing, float(info.smallest_subnormal)))


def restoration(after: Any, before: Any) -> Restoration:
    """How far an overwritten-and-restored input is from its original (same device), a block of
    rows at a time (its float64 temporaries would be five whole matrices)."""
    xp = _xp(after)
    if after.size == 0:
        return Restoration(0.0, 0.0)
    ulps = relative = difference_max = largest = 0.0
    for rows in _row_blocks(before):
        original = before[rows]
        difference = xp.abs(after[rows].astype(xp.float64) - original.astype(xp.float64))
        magnitude = xp.maximum(xp.abs(original.astype(xp.float64)), float(np.finfo(before.dtype).tiny))
        ulps = _worst(ulps, float((difference / _ulp(xp, original)).max()))
        relative = _worst(relative, float((difference / magnitude).max()))
        difference_max = _worst(difference_max, float(difference.max()))
        largest = _worst(largest, float(magnitude.max()))
    return Restoration(ulps, relative, difference_max / largest)


def _worst(so_far: float, block: float) -> float:
    """The larger, NaN winning (as an array's max would: a NaN anywhere is the answer)."""
    return block if math.isnan(block) or block > so_far else so_far


class AllocationCounter:
    """Counts bytes requested from CuPy's memory pool while active (a CuPy MemoryHook)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.allocations = 0

    @contextlib.contextmanager
    def counting(self):
        import cupy

        counter = self

        class _Hook(cupy.cuda.MemoryHook):
            name = "bilinear-allocation-counter"

            def malloc_preprocess(self, device_id, size, mem_size):
                counter.bytes += mem_size
                counter.allocations += 1

        with _Hook():
            yield self


def extra_bytes(call: Callable[[], None], xp: Any) -> int | None:
    """Device bytes ``call`` requests from CuPy's pool (None on the CPU): the work queued
    before it is finished first, and its own before counting stops."""
    if xp is np:
        call()
        return None
    counter = AllocationCounter()
    xp.cuda.get_current_stream().synchronize()
    with counter.counting():
        call()
        xp.cuda.get_current_stream().synchronize()
    return counter.bytes


def time_interleaved(calls: list[Callable[[], None]], xp: Any, repeat: int = 5, warmup: int = 1) -> list[list[float]]:
    """The one timer: seconds of each call per round, the calls interleaved round-robin (so a
    drifting clock hits them alike), from CUDA events (wall clock on the CPU), after ``warmup``
    calls of each."""
    for call in calls:
        for _ in range(warmup):
            call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for index, call in enumerate(calls):
            if xp is np:
                start = time.perf_counter()
                call()
                times[index].append(time.perf_counter() - start)
                continue
            start, stop = xp.cuda.Event(), xp.cuda.Event()
            start.record()
            call()
            stop.record()
            stop.synchronize()
            times[index].append(xp.cuda.get_elapsed_time(start, stop) / 1e3)
    return times


def time_device(call: Callable[[], None], xp: Any, repeat: int = 5, warmup: int = 1) -> list[float]:
    """Seconds per call (:func:`time_interleaved` of one call)."""
    return time_interleaved([call], xp, repeat, warmup)[0]


def figures_text(value: float, decimals: int) -> str:
    """``value`` to ``decimals`` places, and below one to three figures: a CPU's times, rates and
    bytes had all printed as 0.0."""
    return f"{value:.{decimals}f}" if value >= 1 else f"{value:.3g}"


def ratio_text(value: float) -> str:
    """A speed ratio to three decimals, and below a tenth to three figures: 0.00014, not 0.000."""
    return f"{value:.3f}" if value >= 0.1 else f"{value:.3g}"


def median(values: list[float]) -> float:
    return statistics.median(values)
