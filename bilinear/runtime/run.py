"""One checked run of a compiled product: what ``bilinear run`` prints."""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..lower.decompose import growth_ratio
from ..lower.host import levels_write_inputs, restore_growth_after
from ..lower.notes import runs_its_fallback
from ..lower.plan import level_dims
from ..measure import (
    UNIT_ROUNDOFF,
    Restoration,
    bound_verdict,
    check_bytes,
    error_bound,
    error_scale,
    extra_bytes,
    float64_reference,
    median,
    random_inputs,
    reference_bytes,
    ratio_text,
    relative_error,
    restoration,
    time_device,
    within_bound,
    zero_error,
)
from ..schedule.default import is_default_name
from .compiled import CompiledProduct


@dataclass(frozen=True)
class RunResult:
    name: str
    dims: tuple[int, int, int]
    backend: str
    error: float
    reference_error: float  # the reference library's own error against the float64 product
    bound: float
    seconds: float
    reference_seconds: float
    extra_bytes: int | None  # None where it cannot be measured (the CPU)
    restored_a: Restoration
    restored_b: Restoration
    # A's and B's worst-case normwise restoration error after the levels that ran (restore_bounds)
    restore_bounds: tuple[float, float]
    levels_run: int = 0  # levels of recursion this size reached (the bound's L)
    levels_requested: int = 0
    growth: float = 1.0  # the bound's growth: the product of the ratios ρ of the levels that ran
    breadth_run: int = 0  # how many of levels_run ran breadth-first
    breadth_requested: int = 0
    inputs_restored: bool = True  # False for an in-place schedule that declares no restore
    inputs_written: bool = True  # False where no level that ran writes A or B (nothing to restore)
    multiplied: bool = True  # False for alpha = 0 or an empty product: no level runs whatever the size
    trivial: float = 1.0  # the error a C of zeros would have: a bound at or past it checks nothing
    weight: float = 0.0  # |β|·‖C‖ / (|α|·‖A‖‖B‖): an error in A·B shows 1 + weight times smaller in the output's
    # where weight > 1: α·A·B's relative error computed alone (β = 0), and the error a C of zeros would have there
    alone: tuple[float, float] | None = None
    # a hybrid's schemes that ran, outermost first, the breadth-first ones so named (empty for one scheme)
    schemes_run: tuple[str, ...] = ()

    @property
    def within_bound(self) -> bool:
        return within_bound(self.error, self.bound, self.trivial) and (self.alone is None or within_bound(
            self.alone[0], self.bound, self.alone[1]))

    def _alone_line(self) -> list[str]:
        """Where β·C outweighs the product, A·B's own check: the error above is the whole output's,
        against |α|‖A‖‖B‖ + |β|‖C‖ (as the reference BLAS tests weigh it), and shows an error in A·B
        1 + weight times smaller (β = 1e14 passed a 2 % error in A·B)."""
        if self.alone is None:
            return []
        error, trivial = self.alone
        return [f"  A·B alone       relative error {error:.3e}   (with β = 0: above, |β|·‖C‖ is {self.weight:.1e} times "
                "|α|·‖A‖‖B‖ and hides an error in A·B that much)" + bound_verdict(error, self.bound, trivial, self.growth)]

    def _restoration_past(self) -> tuple[str, ...]:
        """The inputs whose restoration lost more than C's own bound (normwise): an exact restore can
        still cancel large multiples in floating point.  The product's bound holds its additions'
        rounding, the ones A and B pass through, so a sound restore stays far inside it."""
        if not (self.inputs_restored and self.inputs_written):
            return ()
        return tuple(name for name, restored in (("A", self.restored_a), ("B", self.restored_b))
                     if not restored.normwise <= self.bound)  # NaN is past it too

    def _worst_case_line(self) -> list[str]:
        """Where a restoration is past C's bound, whether rounding can be why: within the worst case
        of its schedules' roundings, the chain of in-place updates loses that much (a derived
        schedule of PLinOpt's DPS, 1.6e-13 against C's 1.1e-13); past it, something else does."""
        past = self._restoration_past()
        if not past:
            return []
        restored = {"A": self.restored_a, "B": self.restored_b}
        bounds = dict(zip("AB", self.restore_bounds))
        beyond = [name for name in past if not restored[name].normwise <= bounds[name]]
        worst = ", ".join(f"{name} {bounds[name]:.2e}" for name in past)
        if beyond:
            return [f"  ({' and '.join(beyond)} past the worst case of the schedules' roundings too ({worst}): "
                    "rounding is not why)"]
        return [f"  (within the worst case of the schedules' roundings ({worst}): their chain of in-place updates "
                "loses this much, as its arithmetic allows)"]

    @property
    def restored_within_bound(self) -> bool:
        return not self._restoration_past()

    @property
    def passes(self) -> bool:
        """What `bilinear run` exits 0 on: C within its bound, and A and B restored within it."""
        return self.within_bound and self.restored_within_bound

    def describe(self) -> str:
        M, K, N = self.dims
        lines = [
            f"{self.name}: {M}x{K} @ {K}x{N} on {self.backend}",
            (
                f"  levels run      {self.levels_run}"
                + ("" if self.levels_run == self.levels_requested else f" of the {self.levels_requested} requested ("
                   + ("the blocks got too small)" if self.multiplied else "alpha = 0 or an empty product: nothing is "
                      "multiplied)"))
                + (f", the innermost {self.breadth_run} breadth-first" if self.breadth_run else "")
                + (f" ({self.breadth_run} of the {self.breadth_requested} breadth-first levels asked for: the workspace "
                   "limit runs the others depth-first)"
                   if self.levels_run == self.levels_requested and self.breadth_run < self.breadth_requested else "")
                + (f"; ran {', then '.join(self.schemes_run)}" if self.schemes_run else "")
            ),
            f"  relative error  {self.error:.3e}   (reference library: {self.reference_error:.3e}; bound {self.bound:.3e})"
            + bound_verdict(self.error, self.bound, self.trivial, self.growth),
            *self._alone_line(),
            (
                f"  time            {self.seconds * 1e3:.3f} ms   (reference library: {self.reference_seconds * 1e3:.3f} ms, "
                f"ratio {ratio_text(self.reference_seconds / self.seconds)})"
            ),
            "  extra device bytes " + ("n/a on the CPU" if self.extra_bytes is None else str(self.extra_bytes)),
        ]
        if not self.inputs_written:  # first: a schedule that declares no restore but did not run only read them
            lines.append("  A and B        only read (no level that ran writes them)")
            return "\n".join(lines)
        if not self.inputs_restored:
            lines.append("  A and B        left as the schedule leaves them (it declares no restore)")
            return "\n".join(lines)
        lines.append(
            f"  A restored to   {self.restored_a.max_ulps:.0f} ulp max (relative {self.restored_a.max_relative:.2e}, "
            f"normwise {self.restored_a.normwise:.2e}); B to {self.restored_b.max_ulps:.0f} ulp "
            f"(relative {self.restored_b.max_relative:.2e}, normwise {self.restored_b.normwise:.2e})"
            + "".join(f"   {name} EXCEEDS THE BOUND" for name in self._restoration_past())
        )
        lines += self._worst_case_line()
        if not (self.restored_a.exact and self.restored_b.exact):
            lines.append("  (in-place schedules restore A and B up to rounding: (a+b)-b need not equal a)")
        return "\n".join(lines)


def memory_needed(M: int, K: int, N: int, dtype: str) -> int:
    """Bytes a checked run holds at once: A, B and their copies, C, the result, the library's
    result and a timing copy of C, and the float64 reference; then, one after the other, what
    computing the reference takes and the checks' temporaries (a 1×20,000,000 float32 A had been
    estimated at a quarter of the 1.4 GB the run took)."""
    itemsize = np.dtype(dtype).itemsize
    held = itemsize * (2 * M * K + 2 * K * N + 4 * M * N) + 8 * M * N
    return held + max(reference_bytes(M, K, N, dtype), check_bytes(M, K, N))


def _memory_available(backend) -> int:
    if backend.name == "cupy":
        return int(backend.xp.cuda.Device().mem_info[1])
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume a generous 64 GiB
        return 64 << 30


def check_fits(backend, M: int, K: int, N: int, dtype: str, ranks: int = 1,
               advice: str = "smaller sizes (-n, -m, -k)") -> None:
    """Refuse a run that cannot fit the backend's memory, before anything is allocated; ``ranks``
    processes that share it (distributed ranks on one host's CPU) each hold a run's arrays.
    ``advice`` names what to choose smaller where the sizes came from: bench has -n alone, or a
    --configs file.

    Raises:
        ValueError: with the sizes and the memory they need.
    """
    needed, available = ranks * memory_needed(M, K, N, dtype), _memory_available(backend)
    if needed > available:
        where = "device" if backend.name == "cupy" else "host"
        shared = f" ({ranks} ranks, each with its own copies)" if ranks > 1 else ""
        raise ValueError(
            f"a {M}x{K} @ {K}x{N} {dtype} run needs about {_gib(needed)} GiB{shared}, more than the "
            f"{available / 2**30:.1f} GiB of {where} memory; choose {advice}"
        )


def _gib(nbytes: int) -> str:
    """Bytes in GiB, one decimal; in powers of ten past a million GiB (-n 10**30 printed 55 digits)."""
    gib = nbytes / 2**30
    return f"{gib:.1f}" if gib < 1e6 else f"{gib:.1e}"


def plans_run(product: CompiledProduct, M: int, K: int, N: int) -> list:
    """The plans of the depth-first levels an M×K×N product actually recurses through, outermost first
    (fewer than compiled where the blocks got too small): what ``restore_bounds`` composes."""
    return [plan for _, plan, _ in level_dims(product.executor_for(M, K, N).lowered, M, K, N)]


def schemes_run(product: CompiledProduct, M: int, K: int, N: int) -> tuple[str, ...]:
    """The schedules and algorithms an M×K×N call ran, outermost first, where it ran more than one (a
    hybrid's; rsmm's level above Winograd's breadth-first ones too); breadth-first levels below a level
    that did not split still run (strassen,grey333,strassen at n = 4 runs strassen twice)."""
    lowered = product.executor_for(M, K, N).lowered
    breadth = [name for name, _ in lowered.breadth.schemes] if lowered.breadth else []
    if len({_named(plan) for plan in lowered.levels} | set(breadth)) < 2:
        return ()
    plans = plans_run(product, M, K, N)  # a level under one that only adds into C runs its fallback (rsmm's)
    ran = [_named(plan.accumulate_fallback if level and runs_its_fallback(plan, plans[level - 1]) else plan)
           for level, plan in enumerate(plans)]
    return (*ran, *(f"{name} breadth-first" for name in breadth[:product.breadth_levels(M, K, N)]))


def _named(plan) -> str:
    """A level as --levels-schemes named it: its schedule (msmes), or its algorithm where the schedule is
    the one derived from it."""
    return plan.algorithm.name if is_default_name(plan.schedule) else plan.schedule.name


def levels_run(product: CompiledProduct, M: int, K: int, N: int) -> int:
    """How many levels an M×K×N product recurses through (depth- and breadth-first): fewer than
    asked for where the blocks got too small."""
    return len(plans_run(product, M, K, N)) + product.breadth_levels(M, K, N)


def _growth(plans: list, breadth_ratios: tuple[float, ...] = ()) -> float:
    """The error growth of the levels that ran over the classical algorithm's: the product of each
    level's ratio ρ = γ/(m·k·n) (depth-first plans, and the breadth-first levels' own ratios).  γ and
    m·k·n are both multiplicative under the Kronecker product of schemes, so L levels of one scheme
    grow the bound by ρ^L and a hybrid's by ρ_1·…·ρ_L (its worst ρ to the L-th power had judged
    msmes,grey333 by 6.35 for 4.67)."""
    return math.prod([*(growth_ratio(plan.algorithm) for plan in plans), *breadth_ratios])


def growth_run(product: CompiledProduct, M: int, K: int, N: int) -> float:
    """The error growth ρ_1·…·ρ_L of the levels an M×K×N call runs (depth- and breadth-first): the
    bound's whole growth, ``error_bound``'s growth_ratio."""
    breadth = product.breadth_levels(M, K, N)
    ratios = product.executor_for(M, K, N).lowered.breadth.decomposition.growth_ratios if breadth else ()
    return _growth(plans_run(product, M, K, N), ratios)


def restore_bounds(levels: list, dtype: str) -> tuple[float, float]:
    """A's and B's worst-case normwise restoration error after these levels ran (first order in u:
    γ = u·G/(1 − u·G), inf where u·G reaches 1)."""
    u = UNIT_ROUNDOFF[dtype]
    growths = (restore_growth_after(levels, operand) for operand in "AB")
    return tuple(u * g / (1 - u * g) if u * g < 1 else math.inf for g in growths)


def _reference(product: CompiledProduct, A, B, C, out, alpha: float, beta: float):
    """A call of the library's own product (cuBLAS through CuPy, or NumPy) into ``out``."""
    xp = product.backend.xp

    def call():
        xp.matmul(A, B, out=out)
        if alpha != 1 or beta != 0:
            out[...] = alpha * out + beta * C

    return call


def _largest(X) -> float:
    """max |x| by two reductions: abs(X) would be one more matrix, which n = 32768 cannot hold."""
    return max(float(X.max()), -float(X.min())) if X.size else 0.0


def _check_in_range(A, B, C, alpha: float, beta: float, dtype: str) -> None:
    """Refuse alpha and beta whose product with this run's data may pass ``dtype``'s range (it would
    come out as inf or NaN) or fall below its normal range: either reads as an accuracy failure
    (bounded by |α|·k·max|A|·max|B| + |β|·max|C|)."""
    bound = abs(alpha) * A.shape[1] * _largest(A) * _largest(B) + abs(beta) * _largest(C)
    described = f"(|alpha|·k·max|A|·max|B| + |beta|·max|C| = {bound:.3g})"
    if bound > float(np.finfo(dtype).max):
        raise ValueError(f"alpha {alpha:.9g} and beta {beta:.9g} may carry this run's product past {dtype}'s range "
                         f"{described}; choose smaller ones")
    # below tiny/eps the spacing of the subnormals passes eps relative to the result, and a correct
    # product reads as past its error bound
    if 0 < bound < (floor := float(np.finfo(dtype).tiny / np.finfo(dtype).eps)):
        raise ValueError(f"alpha {alpha:.9g} and beta {beta:.9g} may bring this run's product below {floor:.3g}, "
                         f"{dtype}'s smallest normal number over its epsilon {described}, where the spacing of the "
                         "numbers near it is coarser than the error bound assumes; choose larger ones")


def _product_alone(product: CompiledProduct, A: Any, B: Any, alpha: float, out: Any, scale: float | Fraction) -> tuple[float, float]:
    """α·A·B's relative error computed alone (β = 0) into ``out``, and the error a C of zeros would have."""
    exact = float64_reference(A, B, None, alpha, 0.0)
    product(A, B, out=out, alpha=alpha)
    return relative_error(out, exact, A, B, scale), zero_error(exact, scale)


def run_once(
    product: CompiledProduct, M: int, K: int, N: int, alpha: float = 1.0, beta: float = 0.0, repeat: int = 5, seed: int = 0
) -> RunResult:
    """Check one product of random normal matrices against a float64 reference, then time it.

    At most seven matrices are held (A, B, C, the originals of A and B, the exact product, one
    output), so n = 32768 in float64 (8 GiB each) fits an 80 GB device beside a product with no
    workspace.
    """
    xp = product.backend.xp
    A, B, C = random_inputs(xp, M, K, N, product.dtype, seed)
    _check_in_range(A, B, C, alpha, beta, product.dtype)
    originalA, originalB = A.copy(), B.copy()
    scale = error_scale(A, B, alpha, beta, C)
    product_scale = error_scale(A, B, alpha)
    weight = float(scale / product_scale) - 1 if product_scale else 0.0
    exact = float64_reference(A, B, C, alpha, beta)

    out = C.copy()
    product.release_workspace()  # so this call shows what the product holds at this size
    extra = extra_bytes(lambda: product(A, B, out=out, alpha=alpha, beta=beta), xp)
    error = relative_error(out, exact, A, B, scale)
    restored_a, restored_b = restoration(A, originalA), restoration(B, originalB)
    # the library multiplies the originals: a restoring schedule gives them back only up to rounding
    A[...], B[...] = originalA, originalB
    del originalA, originalB

    reference = C.copy()
    reference_call = _reference(product, A, B, C, reference, alpha, beta)
    reference_call()
    reference_error = relative_error(reference, exact, A, B, scale)
    trivial = zero_error(exact, scale)
    del exact
    multiplies = alpha != 0 and 0 not in (M, K, N)
    # β·C outweighs the product: A·B judged on its own too, into the library's output (timed again below)
    alone = _product_alone(product, A, B, alpha, reference, product_scale) if multiplies and weight > 1 else None

    # Each timed call adds beta·out to what the last one left: out may overflow (with a beta of 1e300)
    # after the first call, which alone is checked; NumPy's warnings about it say nothing here.
    with np.errstate(over="ignore", invalid="ignore"):
        ours = time_device(lambda: product(A, B, out=out, alpha=alpha, beta=beta), xp, repeat=repeat)
        theirs = time_device(reference_call, xp, repeat=repeat)
    # alpha = 0 (or an empty product) multiplies nothing: no level runs, and no workspace is asked for
    ran = plans_run(product, M, K, N) if multiplies else []
    breadth = product.breadth_levels(M, K, N) if multiplies else 0
    growth = growth_run(product, M, K, N) if multiplies else 1.0
    return RunResult(
        name=repr(product),
        dims=(M, K, N),
        backend=product.backend.name,
        error=error,
        reference_error=reference_error,
        bound=error_bound(product.dtype, K, growth),  # growth holds every level that ran
        trivial=trivial,
        alone=alone,
        weight=weight,
        seconds=median(ours),
        reference_seconds=median(theirs),
        extra_bytes=extra,
        restored_a=restored_a,
        restored_b=restored_b,
        restore_bounds=restore_bounds(ran, product.dtype),
        levels_run=len(ran) + breadth,
        breadth_run=breadth,
        breadth_requested=product.lowered.options.breadth,
        levels_requested=product.lowered.options.levels,
        growth=growth,
        inputs_restored=product.restores_inputs,
        inputs_written=levels_write_inputs(ran),  # the levels that ran (none at n = 1; strassen,msmes's first at n = 3)
        multiplied=multiplies,
        schemes_run=schemes_run(product, M, K, N) if multiplies else (),
    )
