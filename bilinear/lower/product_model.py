"""The tuning model of the fused product kernel: occupancy from a compiled kernel's resources,
the many-core paper's pruning, ptxas reports, and the candidate tile configurations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .product_spec import DTYPES
from .product_tiles import MOST_SHARED_PER_BLOCK, TileConfig, config_problems, shared_bytes


# --- occupancy: the tuner's pruning -----------------------------------------


@dataclass(frozen=True)
class DeviceLimits:
    """Per-SM limits of the occupancy calculation (defaults: H100, compute capability 9.0)."""

    sms: int = 132
    max_warps: int = 64
    max_blocks: int = 32
    registers: int = 65536
    max_registers_per_thread: int = 255
    register_unit: int = 256  # registers are allocated per warp in units of 256
    shared: int = 233472  # 228 KiB per SM
    shared_per_block: int = MOST_SHARED_PER_BLOCK  # 227 KiB opt-in per block
    shared_reserved: int = 1024  # the runtime keeps 1 KiB per block


@dataclass(frozen=True)
class Resources:
    """A compiled kernel's resource report (ptxas -v, or CuPy's function attributes)."""

    registers: int
    spill_bytes: int = 0
    static_shared: int = 0


@dataclass(frozen=True)
class Occupancy:
    blocks: int
    warps: int
    limiter: str


def occupancy(config: TileConfig, dtype: str, resources: Resources, limits: DeviceLimits = DeviceLimits()) -> Occupancy:
    """Blocks and warps per SM, and which resource stops there."""
    warps = config.threads // 32
    regs_per_warp = -(-resources.registers * 32 // limits.register_unit) * limits.register_unit
    smem = shared_bytes(config, dtype)[4] + resources.static_shared
    bounds = {
        "warps": limits.max_warps // warps,
        "blocks": limits.max_blocks,
        "registers": limits.registers // (regs_per_warp * warps) if regs_per_warp else limits.max_blocks,
        "shared memory": (limits.shared // (smem + limits.shared_reserved)) if smem <= limits.shared_per_block else 0,
    }
    limiter = min(bounds, key=bounds.get)
    blocks = bounds[limiter]
    return Occupancy(blocks, blocks * warps, limiter)


@dataclass(frozen=True)
class Candidate:
    config: TileConfig
    resources: Resources
    occupancy: Occupancy
    l2_bytes_per_flop: float
    verdict: str  # "keep", or why it was pruned


def l2_bytes_per_flop(config: TileConfig, dtype: str) -> float:
    """Operand bytes a block loads per flop it does: (bm + bn)·size / (2·bm·bn)."""
    return DTYPES[dtype][1] * (config.bm + config.bn) / (2 * config.bm * config.bn)


def prune(
    measured: Sequence[tuple[TileConfig, Resources]],
    dtype: str,
    limits: DeviceLimits = DeviceLimits(),
    min_warps: int = 8,
    keep: int = 6,
) -> list[Candidate]:
    """Judge every compiled candidate; the first ``keep`` with verdict "keep" are worth timing.

    Pruned: register spills (local memory in the main loop), no block fits on
    an SM, or fewer than ``min_warps`` warps per SM (two per scheduler: one
    warp's shared loads and barrier waits need another to cover them).  The
    survivors are ranked by the L2 traffic of their resident tiles (the
    many-core paper's rule: bigger tiles at full occupancy first), then by warps.
    """
    judged = []
    for config, resources in measured:
        occ = occupancy(config, dtype, resources, limits)
        intensity = l2_bytes_per_flop(config, dtype)
        if resources.spill_bytes:
            verdict = f"spills {resources.spill_bytes} bytes"
        elif resources.registers > limits.max_registers_per_thread:
            verdict = f"{resources.registers} registers per thread"
        elif occ.blocks == 0:
            verdict = f"no block fits ({occ.limiter})"
        elif occ.warps < min_warps:
            verdict = f"{occ.warps} warps per SM ({occ.limiter} limit)"
        else:
            verdict = "keep"
        judged.append(Candidate(config, resources, occ, intensity, verdict))
    kept = sorted((c for c in judged if c.verdict == "keep"), key=lambda c: (c.l2_bytes_per_flop, -c.occupancy.warps))
    for extra in kept[keep:]:
        judged[judged.index(extra)] = Candidate(
            extra.config, extra.resources, extra.occupancy, extra.l2_bytes_per_flop, "ranked below the timed set"
        )
    order = {id(c): i for i, c in enumerate(kept[:keep])}
    return sorted(judged, key=lambda c: order.get(id(c), len(order)))


_PTXAS_FUNCTION = re.compile(r"Compiling entry function '(\w+)'|Function properties for (\w+)")
_PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"Used (\d+) registers")
_PTXAS_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas(report: str) -> dict[str, Resources]:
    """Per-kernel :class:`Resources` from ``ptxas -v`` output (nvcc ``-Xptxas -v``)."""
    found: dict[str, dict] = {}
    current = None
    for line in report.splitlines():
        match = _PTXAS_FUNCTION.search(line)
        if match:
            current = match.group(1) or match.group(2)
            found.setdefault(current, {"registers": 0, "spill_bytes": 0, "static_shared": 0})
            continue
        if current is None:
            continue
        spill = _PTXAS_SPILL.search(line)
        if spill:
            found[current]["spill_bytes"] = int(spill.group(2)) + int(spill.group(3))
        used = _PTXAS_USED.search(line)
        if used:
            found[current]["registers"] = int(used.group(1))
            smem = _PTXAS_SMEM.search(line)
            if smem:
                found[current]["static_shared"] = int(smem.group(1))
    return {name: Resources(**values) for name, values in found.items()}


# --- candidate sets -----------------------------------------------------------


def candidate_configs(dtype: str) -> list[TileConfig]:
    """The tuner's search space: every config here builds (see :func:`config_problems`).

    FP64 keeps to C tiles of 128×128 and 128×64 (smaller ones need more L2 bandwidth than
    the chip has at full DMMA rate; larger ones do not fit the register file): warps of
    64×32 or 32×64 (8 per block) or 32×32 (16, or 8 in a half-size block).
    """
    if dtype == "float64":
        shapes = [  # bm, bn, warps_m, warps_n, min_blocks (the register cap: 255 for one block, 128 for two)
            (128, 128, 4, 4, 1), (128, 128, 2, 4, 1), (128, 128, 4, 2, 1),
            (128, 64, 4, 2, 1), (128, 64, 4, 2, 2), (64, 128, 2, 4, 1), (64, 128, 2, 4, 2),
        ]  # fmt: skip
        configs = [
            TileConfig(bm, bn, bk, wm, wn, stages, k_step, min_blocks, frag_buffers)
            for bm, bn, wm, wn, min_blocks in shapes
            for bk in (16, 32)
            for stages in (3, 4)
            for k_step in (4, 8, 16)
            for frag_buffers in (1, 2)
        ]
    else:
        shapes = [(128, 128, 4, 2), (128, 128, 4, 4), (128, 64, 4, 2), (64, 128, 2, 2), (128, 256, 4, 4)]
        configs = [
            TileConfig(bm, bn, bk, wm, wn, stages, 1, min_blocks, frag_buffers)
            for bm, bn, wm, wn in shapes
            for bk in (8, 16)
            for stages in (3, 4)
            # two blocks of 8 warps cap registers at 128: also try one block with room to spare
            for min_blocks in sorted({max(1, 16 // (wm * wn)), 1})
            for frag_buffers in (1, 2)
        ]
    return [
        c
        for c in configs
        if not config_problems(c, dtype) and shared_bytes(c, dtype)[4] <= DeviceLimits().shared_per_block
    ]
