"""The ozaki leaf in the C++ library: which passes it holds, and the tables its host code reads.

The Python runtime chooses, per chunk of the inner dimension k (at most ``K_CHUNK``), the number
of moduli (:func:`bilinear.runtime.ozaki.moduli_for`, unless ``--moduli`` fixed it) and the bits
of A's and B's integers (:func:`bilinear.runtime.ozaki.scale_bits`), in exact integer
arithmetic over products of up to 20 moduli.  Both are step functions of k, non-increasing
bits and non-decreasing moduli, so the library gets them as tables of steps computed here,
with the very functions the runtime calls: the C++ never redoes the arithmetic.  Every count a
table can choose brings its own passes (``templates/ozaki.cu.j2``, in a namespace of its own).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable

from ..diagnostics import counted, listed
from ..ir import Algorithm
from ..verify.stability import stability
from . import ozaki_scheme as ozaki
from .options import Options
from .plan import Lowered, gemm_shapes, leaf_shapes, level_dims
from .ozaki_passes import BT_LANES, KERNELS, SPAN_ALIGN, THREADS, TILE, VALUES, KernelSource

#: The passes of the plain scheme (the kernels but the residue Strassen level's), in the order the host's
#: table of function pointers holds them.
PASSES = tuple(name for name in KERNELS if not name.endswith("_s1"))
IO = {"float64": "double", "float32": "float"}


@dataclass(frozen=True)
class Step:
    """Where a step function of k holds ``value``: every k up to ``k_last`` past the step before."""

    k_last: int
    value: tuple[int, ...]


@dataclass(frozen=True)
class OzakiCount:
    """The passes for ``count`` moduli: their namespace, their kernels' prefix, and the bits of
    A's and B's integers as steps of k (a chunk longer than the last step's ``k_last`` has too
    few moduli: only where ``--moduli`` fixed the count)."""

    count: int
    namespace: str
    bits: tuple[Step, ...]

    @property
    def prefix(self) -> str:
        return f"{self.namespace}_"

    @property
    def k_last(self) -> int:
        return self.bits[-1].k_last

    def kernel(self, name: str) -> str:
        return f"{self.namespace}::{self.prefix}{name}"


@dataclass(frozen=True)
class OzakiCode:
    """The ozaki leaf as one dtype of the library runs it: the counts a chunk of k may take, each
    up to its ``k_last`` (the fewest moduli that keep ``bits`` bits: the first count whose
    ``k_last`` reaches the chunk), and the runtime's constants of the passes and the int8 GEMMs."""

    counts: tuple[OzakiCount, ...]
    io: str
    bits: int
    scaling: str
    fixed: bool  # --moduli gave the count (else it follows k)
    k_chunk: int = ozaki.K_CHUNK
    k_align: int = ozaki.K_ALIGN
    mn_align: int = ozaki.MN_ALIGN
    strip: int = ozaki.COLUMN_STRIP
    values: int = VALUES
    bt_lanes: int = BT_LANES
    threads: int = THREADS
    tile: int = TILE
    span_align: int = SPAN_ALIGN

    @property
    def passes(self) -> tuple[str, ...]:
        return PASSES

    @property
    def k_last(self) -> int:
        """The longest chunk of k some count takes (``k_chunk`` unless a fixed count is too few)."""
        return self.counts[-1].k_last

    @property
    def k_limited(self) -> bool:
        """Whether a chunk of k can be too long for the count (--moduli fixed too few): status 5000."""
        return self.k_last < self.k_chunk

    def sources(self) -> list[str]:
        """The CUDA passes of every count, each in its namespace."""
        return [KernelSource.of(c.count, self.io, c.prefix, c.namespace, residue_strassen=False).render()
                for c in self.counts]


def steps(function: Callable[[int], tuple[int, ...]], last: int) -> tuple[Step, ...]:
    """The steps of a monotone step function of k over 1..``last``, by bisection; where it raises
    ValueError (from some k on: too few moduli), the steps end before."""

    def value(k: int) -> tuple[int, ...] | None:
        try:
            return function(k)
        except ValueError:
            return None

    found, k = [], 1
    while k <= last and (current := value(k)) is not None:
        low, high = k, last  # value(low) == current; find the last k that keeps it
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if value(middle) == current else (low, middle - 1)
        found.append(Step(low, current))
        k = low + 1
    return tuple(found)


@lru_cache(maxsize=64)
def ozaki_code(options: Options, name: str) -> OzakiCode | None:
    """The ozaki leaf of ``options`` for the library ``name`` (None for other leaves); remembered, as the
    manifest asks it again for every plan and size."""
    if options.leaf != "ozaki":
        return None
    bits = ozaki.default_bits(options.dtype)
    if options.moduli is not None:
        chosen = (Step(ozaki.K_CHUNK, (options.moduli,)),)
    else:  # every count some chunk of k needs, up to the longest chunk it is the fewest for
        chosen = steps(lambda k: (ozaki.moduli_for(bits, k),), ozaki.K_CHUNK)
    held = []
    for choice in chosen:
        count = choice.value[0]
        table = steps(lambda k, count=count: ozaki.scale_bits(count, k, options.scaling), choice.k_last)
        held.append(OzakiCount(count, f"{name}_{options.dtype}_oz{count}", table))
    return OzakiCode(tuple(held), IO[options.dtype], bits, options.scaling, options.moduli is not None)


def moduli_refusal(lowered: Lowered, M: int, K: int, N: int) -> str | None:
    """Why the ozaki leaves of an M×K×N product cannot run: --moduli fixed a count that keeps no
    correct bit for a chunk of some leaf GEMM's inner dimension (:func:`ozaki.scale_bits` refuses
    it; the library's status 5000), or whose error bound the levels that run can grow past the
    largest C can be (:func:`growth_refusal`); None where they can, and where the count follows k."""
    code = ozaki_code(lowered.options, lowered.name)
    if code is None or not code.fixed:
        return None
    longest = max((min(k, code.k_chunk) for m, k, n in gemm_shapes(lowered, M, K, N) if min(m, k, n) > 0),
                  default=0)  # (a strip past a breadth-first grid may be empty: no GEMM runs on it, as oz_plan has it)
    if longest <= code.k_last:
        return growth_refusal(lowered, longest, M, K, N)
    count, norm, needed = lowered.options.moduli, code.scaling == "norm", ozaki.fewest_moduli(longest, code.scaling)
    instead = _instead(needed, MAX_SCALING) if norm else _instead(needed)
    return (f"{ozaki.too_few(count)} for an inner dimension of {longest}{' with norm scaling' if norm else ''} "
            f"({'it keeps' if count == 1 else f'{count} keep'} no correct bit past {code.k_last}): {instead}")


def growth_refusal(lowered: Lowered, longest: int, M: int, K: int, N: int) -> str | None:
    """Why the fixed moduli of an M×K×N product's leaves, whose longest chunk of k is ``longest``, keep no
    correct bit of C: the levels that run can grow the leaves' error bound (:func:`ozaki.error_bound`,
    at most ``longest``'s) past the largest C can be (two Strassen levels over one modulus's leaves of
    k = 8 returned an error 2.6 times max|C|); None where they cannot."""
    levels, growth = level_growth(lowered, M, K, N)
    count, scaling = lowered.options.moduli, lowered.options.scaling
    if longest == 0 or growth == 1 or ozaki.error_bound(count, longest, scaling) * growth < 1:
        return None
    return _too_few(lowered, levels, growth, longest, f"leaves of inner dimension {longest}")


def _too_few(lowered: Lowered, levels: int, growth: Fraction, k: int, leaves: str, at: str = "", then: str = "") -> str:
    """What :func:`growth_refusal` and :func:`compile_refusal` say: the bound at ``k`` grows past C's size."""
    count, scaling = lowered.options.moduli, lowered.options.scaling
    instead = _instead(ozaki.fewest_moduli(k, scaling, float(growth)), FEWER_LEVELS)
    their = "its" if count == 1 else "their"
    return (f"{ozaki.too_few(count)} for {counted(levels, 'level')} over {leaves}: {their} error bound, "
            f"{ozaki.error_bound(count, k, scaling):.2g} of the scale{at}, can grow {float(growth):.3g} times through the "
            f"levels, past the largest C can be{then}; {instead}")


# the other advice, in both spellings too (it had named "use max scaling" and "fewer levels" in neither)
MAX_SCALING = 'use max scaling (--scaling max, scaling="max")'
FEWER_LEVELS = "fewer levels (a lower --levels, levels=)"


def _instead(needed: int, *others: str) -> str:
    """What to ask for instead of too few moduli: ``needed`` or more, ``others``, or a count that follows k;
    in the command line's words beside the API's, as the refusal reaches both (``bilinear run --moduli``
    and ``compile(moduli=)``; "none" alone had been the API's None, which --moduli does not take)."""
    return ", ".join((f"give {needed} or more (--moduli {needed}, moduli={needed})", *others,
                      "or none to have them chosen from k (leave --moduli out, moduli=None)"))


def level_growth(lowered: Lowered, M: int, K: int, N: int) -> tuple[int, Fraction]:
    """(levels, growth): the levels an M×K×N product runs, depth- then breadth-first (those on any of its
    leaf shapes), and how much they can grow its leaf products' max-norm error into C's (:func:`growth_of`)."""
    breadth, cutoff = lowered.breadth, max(lowered.options.cutoff, 1)
    runs = breadth is not None and any(min(breadth.leaf_dims(*dims)) >= cutoff for dims in leaf_shapes(lowered, M, K, N))
    return growth_of(lowered, sum(1 for _ in level_dims(lowered, M, K, N)), runs)


def growth_of(lowered: Lowered, depth: int, breadth: bool) -> tuple[int, Fraction]:
    """(levels, growth) where the first ``depth`` depth-first levels run, and the breadth-first ones where
    ``breadth``: how much they can grow the leaf products' max-norm error into C's, over the classical
    product's: e_max / k a level (:mod:`bilinear.verify.stability`; Strassen 6, classical 1)."""
    growth = math.prod((_depth_growth(plan.algorithm) for plan in lowered.levels[:depth]), start=Fraction(1))
    if not breadth or lowered.breadth is None:
        return depth, growth
    return depth + lowered.options.breadth, growth * lowered.breadth.decomposition.max_norm_growth


def k_limits(lowered: Lowered) -> tuple[tuple[int, int], ...] | None:
    """The library's check of fixed moduli: the longest chunk of k its leaves may take where d depth-first
    levels run, at [d][0], and its breadth-first ones too, at [d][1]: the table's ``k_last``, or where the
    levels grow the error bound, the longest k whose bound, so grown, stays below the largest C can be (0:
    none), as :func:`moduli_refusal` refuses; None where no entry falls below a chunk (and where the count
    follows k)."""
    code = ozaki_code(lowered.options, lowered.name)
    if code is None or not code.fixed:
        return None
    limits = tuple(tuple(_k_limit(lowered, code, depth, breadth) for breadth in (False, True))
                   for depth in range(len(lowered.levels) + 1))
    return limits if min(min(row) for row in limits) < code.k_chunk else None


def _k_limit(lowered: Lowered, code: OzakiCode, depth: int, breadth: bool) -> int:
    _, growth = growth_of(lowered, depth, breadth)
    count, scaling = lowered.options.moduli, lowered.options.scaling
    low, high = 0, code.k_last  # the bound grows with k: the largest k that keeps it, by bisection
    while low < high and growth != 1:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if ozaki.error_bound(count, middle, scaling) * growth < 1 else (low, middle - 1)
    return high


def k_limit_text(lowered: Lowered) -> str | None:
    """The longest leaves' k ``lowered``'s library (a workspace limit's fallbacks too) runs with fixed moduli,
    by the levels a call runs: "15", or "4079 where no level runs, 127 where 1 runs and 3 where 2 run" (a
    range where those levels grow the bound unlike); None where it checks none."""
    code = ozaki_code(lowered.options, lowered.name)
    if not any(k_limits(plan) for plan in lowered.with_fallbacks()):
        return None
    held: dict[int, set[int]] = {}  # by the levels that run
    for plan in lowered.with_fallbacks():
        for depth in range(len(plan.levels) + 1):
            for breadth in (False, True)[: 1 + (plan.breadth is not None)]:
                held.setdefault(growth_of(plan, depth, breadth)[0], set()).add(_k_limit(plan, code, depth, breadth))
    if len({k for ks in held.values() for k in ks}) == 1:
        return str(held[0].pop())
    said = [f"{min(ks)}{'' if len(ks) == 1 else f' to {max(ks)}'} where {'no level' if levels == 0 else levels} "
            f"{'runs' if levels < 2 else 'run'}" for levels, ks in sorted(held.items())]
    return listed(said)


def compile_refusal(lowered: Lowered) -> str | None:
    """Why ``lowered``'s library would return 5000 at every call that runs all its levels: its fixed moduli
    keep no correct bit of C there at any k (their bound at k = 1, so grown, reaches the largest C can be)."""
    limits = k_limits(lowered)
    breadth = lowered.breadth is not None
    if limits is None or limits[-1][breadth] > 0:
        return None
    levels, growth = growth_of(lowered, len(lowered.levels), breadth)
    return _too_few(lowered, levels, growth, 1, "leaves of any inner dimension", " even at k = 1",
                    ", so every call that runs them would return 5000")


def accuracy_note(moduli: int | None, functions: dict[str, str]) -> str | None:
    """Where a fixed --moduli keeps fewer bits than a library function's dtype has (``functions``: each
    dtype's function): both take the same count, and 7, chosen for float32, had left the float64 function
    at float32's accuracy without a word."""
    if moduli is None:
        return None
    parts = []
    for dtype, function in functions.items():
        bits = ozaki.default_bits(dtype)
        first = bisect_left(range(1, ozaki.K_CHUNK + 1), True, key=lambda k: ozaki.moduli_for(bits, k) > moduli) + 1
        if first <= ozaki.K_CHUNK:
            where = "at every one" if first == 1 else f"from a leaf inner dimension (a chunk of k) of {first}"
            parts.append((dtype, bits, function, where))
    said = [f"{dtype}'s {bits} bits of A's and B's elements in {function}'s leaves {where}" if i == 0 else
            f"{dtype}'s {bits} in {function}'s {where}" for i, (dtype, bits, function, where) in enumerate(parts)]
    return (f"--moduli {moduli} keeps fewer than " + ", and fewer than ".join(said) + f": {'their' if len(said) > 1 else 'its'} "
            f"results are less accurate than the type (`bilinear run --leaf ozaki --moduli {moduli}` measures it); "
            "leave --moduli out to have each call choose enough") if said else None


@lru_cache(maxsize=64)
def _depth_growth(algorithm: Algorithm) -> Fraction:
    return stability(algorithm).e_max / algorithm.shape.k


def library_bytes(lowered: Lowered, code: OzakiCode, M: int, K: int, N: int, budget: int | None = None) -> int | None:
    """The ozaki workspace the library's M×K×N call holds: the largest chunk's layout over every
    GEMM its leaves make, each in tiles of C that fit ``budget`` bytes (all of C without one,
    :func:`ozaki.tile_for_budget`); None where some GEMM does not fit even one element of C (the
    C++ ``oz_plan``)."""
    need = 0
    for m, k, n in gemm_shapes(lowered, M, K, N):
        chunk = min(k, code.k_chunk)
        count = next((c.count for c in code.counts if chunk <= c.k_last), None)
        if min(m, k, n) <= 0 or count is None:
            continue
        try:
            rows, cols = ozaki.tile_for_budget(m, chunk, n, count, budget, code.scaling)
        except ValueError:  # not even one element of C at a time
            return None
        need = max(need, ozaki.workspace_bytes(rows, chunk, cols, count, scaling=code.scaling))
    return need
