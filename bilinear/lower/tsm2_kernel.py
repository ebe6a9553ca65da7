"""TSM2R and TSM2L kernel specs: everything a template needs, and the rendering
(see :mod:`bilinear.lower.tsm2`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .render import render
from .tsm2_params import (
    SCALARS,
    TEMPLATES,
    TSM2L_MAX_K,
    TSM2L_MAX_N,
    Alignment,
    Params,
    TileLayout,
    _chunk_bytes,
    tile_layout,
)


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
    threads = params.threads  # 32 · row_warps · k_groups, at most 1024 (Params checks)
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
