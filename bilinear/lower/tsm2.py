"""TSM2R and TSM2L: tall-and-skinny GEMM kernels, their parameter model and specs.

After Rivera, Chen, Xiong, Zhang, Song and Tao, *TSM2X: High-performance
tall-and-skinny matrix-matrix multiplication on GPUs* (2021), adapted to
row-major operands and to Hopper.

- **TSM2R**: ``C (m×n) = A (m×k) · B (k×n)`` with m, k large and n ≤ ~32.
- **TSM2L**: the same with k (and n) small and m huge.

The paper's kernels give each thread one row of a column-major A, so that a
warp's loads of A are coalesced.  A row-major A breaks that (a warp would
touch 32 lines per load), so here a block first copies a tile of A with
coalesced 16-byte ``cp.async`` copies into shared memory, several tiles ahead
(the paper's prefetching, as an S-stage pipeline that holds bytes in flight
without registers), and each thread then reads its own rows back from shared
memory — through an XOR swizzle (or an odd row pitch) that keeps those reads
free of bank conflicts.  The compute is the paper's outer product: a thread
keeps ``rows_per_thread × t2`` accumulators and multiplies each element of A
it reads by a row of B that every thread of the warp reads at once (a
shared-memory broadcast, conflict-free by construction).

The paper's parameters map onto these kernels as follows:

- ``t1`` (rows of the B tile): TSM2R's k elements per pipeline stage
  (``k_tile``); TSM2L's whole k.
- ``t2`` (columns of C per thread): ``n_tile``, n itself whenever the product
  is memory bound (n ≤ t2_threshold, always so for n ≤ 32 on an H100).
- ``t3`` (elements of A a thread fetches per step): ``rows_per_thread ·
  k_tile / k_groups`` (TSM2R) or ``rows_per_thread · k`` (TSM2L).
- ``tcf`` (TSM2L's thread-count factor, rows per thread over the whole
  launch): ``rows_per_thread × tiles per block``; a *persistent* launch runs
  one resident wave that loops over row tiles (tcf large), a plain launch one
  tile per block (tcf = rows_per_thread).

Everything a template needs is computed here into frozen dataclasses; the
templates only arrange it.  Nothing in this module needs a GPU.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import cache

from .render import render

SCALARS = {"float32": ("float", 4), "float64": ("double", 8)}
KINDS = ("tsm2r", "tsm2l")
TEMPLATES = {"tsm2r": "tsm2r.cu.j2", "tsm2l": "tsm2l.cu.j2"}

# TSM2L keeps a whole row of A and of C per thread in registers; beyond this it is the wrong kernel.
TSM2L_MAX_K = 64
TSM2L_MAX_N = 64
BANK_BYTES = 128  # 32 banks of 4 bytes: one shared-memory wavefront


# ---------------------------------------------------------------------------------------------
# The device and the per-call facts the kernels depend on
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    """What the model needs to know about a GPU.  Defaults: the lent H100 SXM.

    ``copy_bw`` is the measured device-to-device copy rate (bytes read plus
    written per second); ``mem_latency_s`` is the Little's-law latency the
    paper obtains by offline profiling; ``l2_bw`` is the rate at which blocks
    re-read the (L2-resident) B.  The last three are model constants, not
    datasheet facts.
    """

    name: str = "H100 SXM (model defaults)"
    sms: int = 132
    clock_hz: float = 1.755e9
    regs_per_sm: int = 65536
    smem_per_sm: int = 228 * 1024
    smem_per_block: int = 227 * 1024
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    copy_bw: float = 2.95e12
    mem_latency_s: float = 900e-9
    l2_bw: float = 7.0e12
    launch_s: float = 3e-6

    def fma_per_clock(self, elem_bytes: int) -> int:
        """FFMA (DFMA) lanes per SM per clock: 128 FP32, 64 FP64 on Hopper."""
        return 128 if elem_bytes == 4 else 64


H100 = Device()


@dataclass(frozen=True)
class Alignment:
    """The widest access (bytes, 4..16) each operand allows: base pointer and row pitch."""

    a: int = 16
    b: int = 16
    c: int = 16


def access_bytes(pointer: int, ld_elems: int, elem_bytes: int) -> int:
    """Largest of 16, 8, 4 (never below one element) dividing the pointer and the row pitch."""
    for width in (16, 8, 4):
        if width >= elem_bytes and pointer % width == 0 and (ld_elems * elem_bytes) % width == 0:
            return width
    return elem_bytes


def _chunk_bytes(limit: int, row_bytes: int, elem_bytes: int) -> int:
    """Largest of 16, 8, 4 (≥ one element) within ``limit`` that divides ``row_bytes``."""
    for width in (16, 8, 4):
        if elem_bytes <= width <= limit and row_bytes % width == 0:
            return width
    return elem_bytes


# ---------------------------------------------------------------------------------------------
# Tunable parameters
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    """The tunable parameters of one TSM2 kernel (see the module docstring for the paper's names).

    Attributes:
        kind: ``"tsm2r"`` or ``"tsm2l"``.
        row_warps: warps along the rows of a tile (TSM2R); TSM2L uses ``threads``.
        k_groups: TSM2R: warps that split each k tile between them (reduced at the end).
        rows_per_thread: rows of C each thread accumulates.
        stages: depth of the ``cp.async`` pipeline (tiles in flight + 1).
        k_tile_bytes: TSM2R: bytes of one A row per stage (t1 · element size).
        n_tile: columns of C per thread (t2); ``None`` means all n.
        threads: TSM2L: threads per block (TSM2R: derived, 32 · row_warps · k_groups).
        persistent: TSM2L: one resident wave loops over all row tiles.
    """

    kind: str
    row_warps: int = 1
    k_groups: int = 1
    rows_per_thread: int = 1
    stages: int = 3
    k_tile_bytes: int = 128
    n_tile: int | None = None
    threads: int = 256
    persistent: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {self.kind!r}")
        for name in ("row_warps", "k_groups", "rows_per_thread", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive")
        if self.stages < 2:
            raise ValueError("the pipeline needs at least 2 stages")
        if self.kind == "tsm2r":  # derived, so that records of TSM2R parameters say what ran
            object.__setattr__(self, "threads", 32 * self.row_warps * self.k_groups)
            object.__setattr__(self, "persistent", False)

    def short(self) -> dict:
        """The fields that matter for this kind (what tables record)."""
        if self.kind == "tsm2r":
            keys = ("row_warps", "k_groups", "rows_per_thread", "stages", "k_tile_bytes", "n_tile")
        else:
            keys = ("threads", "rows_per_thread", "stages", "persistent")
        return {"kind": self.kind, **{key: getattr(self, key) for key in keys}}

    def as_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict) -> Params:
        return Params(**data)


# ---------------------------------------------------------------------------------------------
# Shared-memory tiles
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TileLayout:
    """A tile of ``rows`` rows × ``chunks`` chunks of ``chunk`` elements in shared memory.

    Chunks are the unit of the cooperative copy (one ``cp.async`` or one
    vector access).  Each thread later reads (or writes) whole chunks of its
    own row while its warp's neighbours touch the same chunk of the next rows;
    chunk ``c`` of row ``r`` is stored at unit ``r·row_units + (c ^ ((r >>
    swz_shift) & swz_mask))``.  With a power-of-two chunk count the XOR
    swizzle spreads those neighbours over all banks; otherwise the row pitch
    is made odd (one pad chunk), which does the same.
    """

    rows: int
    chunks: int
    chunk: int
    chunk_bytes: int
    row_units: int
    swz_shift: int
    swz_mask: int

    @property
    def elems(self) -> int:
        return self.rows * self.row_units * self.chunk

    def unit(self, row: int, chunk: int) -> int:
        """Where chunk ``chunk`` of row ``row`` lives, in chunks from the tile's start."""
        return row * self.row_units + (chunk ^ ((row >> self.swz_shift) & self.swz_mask))


def tile_layout(rows: int, chunks: int, chunk_bytes: int, elem_bytes: int) -> TileLayout:
    """The conflict-free layout for reads of one chunk per row by consecutive rows."""
    lanes = BANK_BYTES // chunk_bytes  # lanes served by one wavefront at this width
    if chunks & (chunks - 1) == 0:  # power of two: XOR swizzle, no padding
        if chunks >= lanes:
            shift, mask = 0, lanes - 1
        else:
            shift, mask = int(math.log2(lanes // chunks)), chunks - 1
        row_units = chunks
    else:  # odd pitch: consecutive rows start in different banks
        shift, mask = 0, 0
        row_units = chunks if chunks % 2 else chunks + 1
    return TileLayout(rows, chunks, chunk_bytes // elem_bytes, chunk_bytes, row_units, shift, mask)


def wavefronts(layout: TileLayout, chunk: int, first_row: int = 0) -> int:
    """Shared-memory wavefronts for a warp reading ``chunk`` of 32 consecutive rows (1 = conflict-free
    per phase).  Used by the tests to prove the layouts conflict-free."""
    lanes = BANK_BYTES // layout.chunk_bytes
    worst = 1
    for phase in range(0, 32, lanes):
        slots: dict[int, set[int]] = {}
        for lane in range(phase, phase + lanes):
            unit = layout.unit(first_row + lane, chunk)
            slots.setdefault(unit % lanes, set()).add(unit)
        worst = max(worst, max(len(units) for units in slots.values()))
    return worst


# ---------------------------------------------------------------------------------------------
# Kernel specs: everything a template needs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RSpec:
    """A TSM2R kernel (large A × tall-and-skinny B), as the template needs it."""

    kind: str
    scalar: str
    elem_bytes: int
    n: int
    n_tile: int
    threads: int
    row_warps: int
    k_groups: int
    rows_per_thread: int
    rows: int
    stages: int
    k_tile: int
    a: TileLayout
    a_copies: int  # cp.async copies of A per thread per stage
    chunks_per_group: int  # A chunks of a row each k group reads per stage
    chunk_unroll: int  # how many of those the compiler may interleave
    b_chunk: int  # elements per cp.async copy of B
    b_chunks_per_row: int
    b_units: int  # B copies per stage (the block shares them out)
    b_vec: int  # elements per broadcast read of B
    c_vec: int  # elements per store of C
    a_prefetch: str  # L2 prefetch qualifier of A's copies
    smem_bytes: int
    red_elems: int  # partial sums of the k groups, reduced at the end
    regs_estimate: int

    @property
    def template(self) -> str:
        return TEMPLATES[self.kind]


@dataclass(frozen=True)
class LSpec:
    """A TSM2L kernel (tall-and-skinny A × small B), as the template needs it."""

    kind: str
    scalar: str
    elem_bytes: int
    k: int
    n: int
    threads: int
    rows_per_thread: int
    rows: int
    stages: int
    a: TileLayout
    a_copies: int
    chunk_unroll: int
    c: TileLayout
    c_copies: int
    b_in_registers: bool
    b_vec: int
    a_prefetch: str
    persistent: bool
    smem_bytes: int
    regs_estimate: int

    @property
    def template(self) -> str:
        return TEMPLATES[self.kind]


def _vec(width_elems: int, elem_bytes: int) -> int:
    """Widest read (≤ 16 bytes) of a row of ``width_elems`` elements in shared memory."""
    for vec in (16 // elem_bytes, 8 // elem_bytes, 1):
        if vec >= 1 and width_elems % vec == 0:
            return vec
    return 1


_A_REGISTERS = 16  # registers of A chunks a thread may hold at once (beyond, occupancy falls)


def _chunk_unroll(chunks: int, rows_per_thread: int, chunk: int, elem_bytes: int) -> int:
    """The largest power-of-two unroll of the chunk loop (dividing ``chunks``) within the A budget."""
    unroll = 1
    while chunks % (2 * unroll) == 0 and 2 * unroll * rows_per_thread * chunk * elem_bytes // 4 <= _A_REGISTERS:
        unroll *= 2
    return unroll


def _scalar(dtype: str) -> tuple[str, int]:
    if dtype not in SCALARS:
        raise ValueError(f"TSM2 kernels support float32 and float64, not {dtype}")
    return SCALARS[dtype]


def r_spec(params: Params, dtype: str, n: int, align: Alignment = Alignment()) -> RSpec:
    """The TSM2R kernel for ``params``, n columns and the operands' alignment."""
    scalar, es = _scalar(dtype)
    if params.kind != "tsm2r":
        raise ValueError("r_spec needs TSM2R parameters")
    n_tile = min(params.n_tile or n, n)
    k_tile = params.k_tile_bytes // es
    a_chunk_bytes = _chunk_bytes(align.a, params.k_tile_bytes, es)
    chunks = params.k_tile_bytes // a_chunk_bytes
    if chunks % params.k_groups:
        raise ValueError(f"k_groups={params.k_groups} must divide the {chunks} chunks of a k tile")
    rows = 32 * params.row_warps * params.rows_per_thread
    threads = 32 * params.row_warps * params.k_groups
    if threads > 1024:
        raise ValueError(f"{threads} threads per block exceed 1024")
    a = tile_layout(rows, chunks, a_chunk_bytes, es)
    # B's column tile starts at a multiple of n_tile, so a chunk must divide n_tile (and n, for the tail).
    b_chunk_bytes = _chunk_bytes(align.b, math.gcd(n_tile, n) * es, es)
    b_chunks_per_row = n_tile * es // b_chunk_bytes
    c_vec = _chunk_bytes(align.c, math.gcd(n_tile, n) * es, es) // es
    stage_elems = a.elems + k_tile * n_tile
    red_elems = (params.k_groups - 1) * n_tile * rows
    smem = max(params.stages * stage_elems, red_elems) * es
    unroll = _chunk_unroll(chunks // params.k_groups, params.rows_per_thread, a.chunk, es)
    regs = _regs_r(params, es, n_tile, a.chunk, unroll)
    return RSpec(
        kind="tsm2r",
        scalar=scalar,
        elem_bytes=es,
        n=n,
        n_tile=n_tile,
        threads=threads,
        row_warps=params.row_warps,
        k_groups=params.k_groups,
        rows_per_thread=params.rows_per_thread,
        rows=rows,
        stages=params.stages,
        k_tile=k_tile,
        a=a,
        a_copies=rows * chunks // threads,
        chunks_per_group=chunks // params.k_groups,
        chunk_unroll=unroll,
        b_chunk=b_chunk_bytes // es,
        b_chunks_per_row=b_chunks_per_row,
        b_units=k_tile * b_chunks_per_row,
        b_vec=_vec(n_tile, es),
        c_vec=c_vec,
        a_prefetch=".L2::256B" if a_chunk_bytes == 16 else ".L2::128B",
        smem_bytes=smem,
        red_elems=red_elems,
        regs_estimate=regs,
    )


def l_spec(params: Params, dtype: str, k: int, n: int, align: Alignment = Alignment()) -> LSpec:
    """The TSM2L kernel for ``params``, the small dimensions k and n and the operands' alignment."""
    scalar, es = _scalar(dtype)
    if params.kind != "tsm2l":
        raise ValueError("l_spec needs TSM2L parameters")
    if not (1 <= k <= TSM2L_MAX_K and 1 <= n <= TSM2L_MAX_N):
        raise ValueError(f"TSM2L handles k ≤ {TSM2L_MAX_K} and n ≤ {TSM2L_MAX_N}; got k={k}, n={n}")
    if params.threads % 32 or params.threads > 1024:
        raise ValueError("threads must be a multiple of 32, at most 1024")
    rows = params.threads * params.rows_per_thread
    a_chunk_bytes = _chunk_bytes(align.a, k * es, es)
    c_chunk_bytes = _chunk_bytes(align.c, n * es, es)
    a = tile_layout(rows, k * es // a_chunk_bytes, a_chunk_bytes, es)
    c = tile_layout(rows, n * es // c_chunk_bytes, c_chunk_bytes, es)
    # A thread can hold all of B when it costs no more registers than its accumulators would.
    b_in_registers = k * n * es <= 256
    b_elems = 0 if b_in_registers else k * n
    # B in registers is indexed by the chunk: that loop must unroll fully.
    unroll = a.chunks if b_in_registers else _chunk_unroll(a.chunks, params.rows_per_thread, a.chunk, es)
    smem = (params.stages * a.elems + c.elems + b_elems) * es
    return LSpec(
        kind="tsm2l",
        scalar=scalar,
        elem_bytes=es,
        k=k,
        n=n,
        threads=params.threads,
        rows_per_thread=params.rows_per_thread,
        rows=rows,
        stages=params.stages,
        a=a,
        a_copies=params.rows_per_thread * a.chunks,
        chunk_unroll=unroll,
        c=c,
        c_copies=params.rows_per_thread * c.chunks,
        b_in_registers=b_in_registers,
        b_vec=_vec(n, es),
        a_prefetch=".L2::256B" if a_chunk_bytes == 16 else ".L2::128B",
        persistent=params.persistent,
        smem_bytes=smem,
        regs_estimate=_regs_l(params, es, k, n, a.chunk, b_in_registers, unroll),
    )


def spec_for(params: Params, dtype: str, k: int, n: int, align: Alignment = Alignment()) -> RSpec | LSpec:
    return r_spec(params, dtype, n, align) if params.kind == "tsm2r" else l_spec(params, dtype, k, n, align)


def render_spec(spec: RSpec | LSpec) -> str:
    """The CUDA source of one kernel (``extern "C"`` ``tsm2r_kernel`` or ``tsm2l_kernel``)."""
    return render(spec.template, s=spec)


# ---------------------------------------------------------------------------------------------
# The model (paper section 3.1.8, adapted)
# ---------------------------------------------------------------------------------------------

_REG_OVERHEAD = 40  # addresses, loop counters, pipeline bookkeeping (the paper's constant C)


def _regs_r(params: Params, es: int, n_tile: int, a_chunk: int, unroll: int) -> int:
    """Registers per thread (the paper's (3·t2 + 2·t3)·w + C, recounted for this kernel):
    accumulators, the A chunks of an unrolled step, B vectors the compiler hoists, overhead."""
    w = es // 4
    r = params.rows_per_thread
    return min(255, (r * n_tile + unroll * r * a_chunk + a_chunk * n_tile // 4) * w + _REG_OVERHEAD)


def _regs_l(params: Params, es: int, k: int, n: int, a_chunk: int, b_in_registers: bool, unroll: int) -> int:
    w = es // 4
    r = params.rows_per_thread
    b = k * n if b_in_registers else a_chunk * n // 4
    return min(255, (r * n + unroll * r * a_chunk + b) * w + _REG_OVERHEAD)


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
        n_tile = _n_tile(n)
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


def _n_tile(n: int) -> int:
    """t2: all of n while the product stays memory bound and the accumulators fit (paper, Algorithm 5)."""
    return n if n <= 64 else 32


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
