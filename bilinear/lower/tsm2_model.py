"""The TSM2 parameter model (the paper's section 3.1.8, adapted) and the choice of parameters
(see :mod:`bilinear.lower.tsm2`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

from .tsm2_kernel import LSpec, RSpec, _scalar, spec_for
from .tsm2_params import H100, TSM2L_MAX_N, Alignment, Device, Params, _chunk_bytes


# ---------------------------------------------------------------------------------------------
# The model (paper section 3.1.8, adapted)
# ---------------------------------------------------------------------------------------------

def occupancy(device: Device, threads: int, regs: int, smem: int) -> int:
    """Resident blocks per SM (the paper's MaxOccup_SM, in blocks): threads, registers, shared memory."""
    if regs > 255 or smem > device.smem_per_block:
        return 0
    regs_per_warp = -(-regs // 8) * 8 * 32
    warps = threads // 32
    by_regs = (device.regs_per_sm // regs_per_warp) // warps
    by_smem = device.smem_per_sm // (smem + 1024)  # 1 KB per block is reserved by the runtime
    return min(device.max_blocks_per_sm, device.max_threads_per_sm // threads, by_regs, by_smem)


@dataclass(frozen=True)
class Prediction:
    """The model's estimate for one spec and shape, with the paper's parameters."""

    seconds: float
    bound: str
    blocks: int
    blocks_per_sm: int
    util_mem: float
    balance: float
    t1: int
    t2: int
    t3: int
    tcf: int

    def gbs(self, bytes_moved: int) -> float:
        return bytes_moved / self.seconds / 1e9


def bytes_moved(m: int, k: int, n: int, dtype: str, beta: float = 0.0) -> int:
    """A, B and C each read (C also written) once: the issue's accounting."""
    es = _scalar(dtype)[1]
    return (m * k + k * n + m * n * (2 if beta else 1)) * es


def t2_threshold(device: Device, elem_bytes: int) -> float:
    """Paper: n above this makes the product compute bound (PeakPerf / PeakBand × element bytes)."""
    flops = 2 * device.fma_per_clock(elem_bytes) * device.clock_hz * device.sms
    return flops / device.copy_bw * elem_bytes


def _balance(work: int, slots: int) -> float:
    """Fraction of the machine busy when ``work`` equal pieces are dealt to ``slots`` lanes."""
    if work <= 0:
        return 1.0
    return (work / slots) / math.ceil(work / slots)


def _util_mem(device: Device, inflight_per_sm: float) -> float:
    """Little's law: bytes in flight per SM over those the memory needs to stay busy."""
    needed = device.copy_bw * device.mem_latency_s / device.sms
    return min(1.0, inflight_per_sm / needed)


def predict(spec: RSpec | LSpec, m: int, k: int, n: int, device: Device = H100) -> Prediction:
    return _predict_r(spec, m, k, n, device) if spec.kind == "tsm2r" else _predict_l(spec, m, k, n, device)


def _issue_efficiency(warps_per_sm: int) -> float:
    """Latency hiding: one warp issues about every third cycle on this mix of shared-memory loads
    and dependent FMAs, so a scheduler needs three warps to stay busy (twelve per SM)."""
    return min(1.0, warps_per_sm / 12)


def _predict_r(spec: RSpec, m: int, k: int, n: int, device: Device) -> Prediction:
    es = spec.elem_bytes
    occ = occupancy(device, spec.threads, spec.regs_estimate, spec.smem_bytes)
    col_tiles = -(-n // spec.n_tile)
    blocks = -(-m // spec.rows) * col_tiles
    t3 = spec.rows_per_thread * spec.k_tile // spec.k_groups
    if occ == 0:
        return Prediction(math.inf, "resources", blocks, 0, 0.0, 0.0, spec.k_tile, spec.n_tile, t3, 1)
    resident = min(occ, -(-blocks // device.sms))
    balance = _balance(blocks, device.sms)
    eff = _issue_efficiency(resident * spec.threads // 32)
    stage_bytes = spec.rows * spec.k_tile * es
    util = _util_mem(device, resident * (spec.stages - 1) * stage_bytes)
    k_stages = -(-k // spec.k_tile)
    warp_stages = blocks * spec.threads / 32 * k_stages  # (warp, stage) pairs
    fma = warp_stages * spec.chunks_per_group * spec.a.chunk * spec.rows_per_thread * spec.n_tile
    lds = warp_stages * spec.chunks_per_group * (spec.rows_per_thread + spec.a.chunk * spec.n_tile // spec.b_vec)
    other = warp_stages * (spec.a_copies * 6 + 20)  # copies with their address arithmetic, barrier, loop
    rate = device.sms * device.clock_hz * balance
    terms = {
        # A from DRAM, plus B re-read from L2 by every block
        "memory": bytes_moved(m, k, n, f"float{8 * es}") * col_tiles / (device.copy_bw * util * balance)
        + blocks * k * spec.n_tile * es / device.l2_bw,
        "fma": fma / (rate * device.fma_per_clock(es) / 32 * eff),
        "smem": lds / rate,
        "issue": (fma + lds + other) / (rate * 4 * eff),
    }
    bound = max(terms, key=terms.get)
    seconds = terms[bound] + device.launch_s
    return Prediction(seconds, bound, blocks, resident, util, balance, spec.k_tile, spec.n_tile, t3, 1)


def _predict_l(spec: LSpec, m: int, k: int, n: int, device: Device) -> Prediction:
    es = spec.elem_bytes
    occ = occupancy(device, spec.threads, spec.regs_estimate, spec.smem_bytes)
    tiles = -(-m // spec.rows)
    t3 = spec.rows_per_thread * k
    if occ == 0:
        return Prediction(math.inf, "resources", tiles, 0, 0.0, 0.0, k, n, t3, spec.rows_per_thread)
    blocks = min(tiles, device.sms * occ) if spec.persistent else tiles
    resident = min(occ, -(-blocks // device.sms))
    balance = _balance(tiles, device.sms * resident)
    eff = _issue_efficiency(resident * spec.threads // 32)
    tcf = spec.rows_per_thread * -(-tiles // blocks)
    util = _util_mem(device, resident * (spec.stages - 1) * spec.rows * k * es)
    warp_tiles = tiles * spec.threads / 32
    fma = warp_tiles * spec.rows_per_thread * k * n
    b_reads = 0 if spec.b_in_registers else k * n // spec.b_vec
    lds = warp_tiles * (spec.rows_per_thread * spec.a.chunks + b_reads + 2 * spec.c_copies)
    other = warp_tiles * (spec.a_copies * 6 + spec.c_copies * 8 + 40)
    rate = device.sms * device.clock_hz * balance
    terms = {
        "memory": bytes_moved(m, k, n, f"float{8 * es}") / (device.copy_bw * util * balance),
        "fma": fma / (rate * device.fma_per_clock(es) / 32 * eff),
        "smem": lds / rate,
        "issue": (fma + lds + other) / (rate * 4 * eff),
    }
    # Two barriers and a pipeline turn per tile that resident blocks do not hide from each other.
    per_tile = 800 / device.clock_hz / resident
    bound = max(terms, key=terms.get)
    seconds = terms[bound] + -(-tiles // (device.sms * resident)) * per_tile + device.launch_s
    return Prediction(seconds, bound, blocks, resident, util, balance, k, n, t3, tcf)


# ---------------------------------------------------------------------------------------------
# Choosing parameters
# ---------------------------------------------------------------------------------------------


def family(m: int, k: int, n: int) -> str:
    """Which TSM2 kernel suits a shape: TSM2L when the inner dimension is small, else TSM2R."""
    return "tsm2l" if k <= 32 and n <= TSM2L_MAX_N else "tsm2r"


def candidates(kind: str, dtype: str, k: int, n: int) -> tuple[Params, ...]:
    """The search space the model ranks (and the benchmark samples)."""
    es = _scalar(dtype)[1]
    w = es // 4
    out = []
    if kind == "tsm2r":
        n_tile = _n_tile(n, w)
        for k_tile_bytes in (128, 256):
            chunks = k_tile_bytes // 16
            for row_warps in (1, 2, 4):
                for k_groups in (1, 2, 4, 8, 16):
                    for r in (1, 2, 4):
                        if k_groups > chunks or 32 * row_warps * k_groups > 1024 or r * n_tile * w > 64:
                            continue
                        for stages in (3, 4, 6):
                            out.append(Params("tsm2r", row_warps, k_groups, r, stages, k_tile_bytes, n_tile))
    else:
        for threads in (128, 256, 512):
            for r in (1, 2, 4, 8, 16):
                if r * n * w > 64 or r * k * w > 64:
                    continue
                for stages in (2, 3, 4):
                    for persistent in (True, False):
                        out.append(
                            Params("tsm2l", rows_per_thread=r, stages=stages, threads=threads, persistent=persistent)
                        )
    return tuple(out)


def _n_tile(n: int, words: int) -> int:
    """t2: all of n while the product stays memory bound and the accumulators fit (paper, Algorithm 5):
    64 four-byte words a thread, so 32 columns of float64 (n_tile = n up to 64 had left float64's
    33 to 64 columns no configuration at all)."""
    most = 64 // words
    return n if n <= most else min(32, most)


_TIE = 0.03  # predictions this close are the same to the model


@cache
def ranked(
    kind: str, m: int, k: int, n: int, dtype: str, device: Device = H100, align: Alignment = Alignment()
) -> tuple[tuple[Params, Prediction], ...]:
    """Every candidate with its prediction, best first.

    Predictions within 3 % of each other count as equal; among those the model prefers
    more resident warps per SM (more latency hidden than the model can see), then less
    shared memory.
    """
    scored = []
    for params in candidates(kind, dtype, k, n):
        try:
            spec = spec_for(params, dtype, k, n, align)
        except ValueError:
            continue
        prediction = predict(spec, m, k, n, device)
        if math.isfinite(prediction.seconds):
            scored.append((params, spec, prediction))
    if not scored:
        return ()
    fastest = min(prediction.seconds for _, _, prediction in scored)

    def cost(item):
        params, spec, prediction = item
        band = math.floor(math.log(prediction.seconds / fastest) / math.log1p(_TIE))
        warps = prediction.blocks_per_sm * spec.threads // 32
        return (band, -warps, spec.smem_bytes, params.stages)

    scored.sort(key=cost)
    return tuple((params, prediction) for params, _, prediction in scored)


def model_params(
    kind: str, m: int, k: int, n: int, dtype: str, device: Device = H100, align: Alignment = Alignment()
) -> Params:
    """The model's choice for a shape (what runs when no measured choice is given)."""
    best = ranked(kind, m, k, n, dtype, device, align)
    if not best:
        raise ValueError(f"no {kind} configuration fits m={m}, k={k}, n={n}, {dtype}")
    return best[0][0]


def fit_params(params: Params, kind: str, dtype: str, k: int, n: int, align: Alignment) -> Params:
    """``params`` adjusted to a call whose alignment or n forbids them (fewer k groups, smaller n tile)."""
    if params.kind != kind:
        raise ValueError(f"parameters are for {params.kind}, the call needs {kind}")
    if kind == "tsm2r":
        es = _scalar(dtype)[1]
        chunks = params.k_tile_bytes // _chunk_bytes(align.a, params.k_tile_bytes, es)
        groups = params.k_groups
        while chunks % groups:
            groups //= 2
        n_tile = min(params.n_tile or n, n) if params.n_tile else None
        return replace(params, k_groups=groups, n_tile=n_tile)
    return params
