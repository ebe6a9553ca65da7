"""TSM2R and TSM2L: the device facts, per-call alignment, tunable parameters and shared-memory
tile layouts the kernels depend on (see :mod:`bilinear.lower.tsm2`)."""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass

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
        for name in ("row_warps", "k_groups", "rows_per_thread", "stages", "k_tile_bytes", "threads", "n_tile"):
            value = getattr(self, name)  # from a hand-edited table: 1.5 failed inside CuPy's launch
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))  # (a NumPy integer of a shape's size too)
            elif not (name == "n_tile" and value is None):
                raise ValueError(f"{name} must be a whole number, not {value!r}")
        if not isinstance(self.persistent, bool):
            raise ValueError(f"persistent must be true or false, not {self.persistent!r}")
        for name in ("row_warps", "k_groups", "rows_per_thread", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive")
        if self.stages < 2:
            raise ValueError("the pipeline needs at least 2 stages")
        if self.k_tile_bytes < 16 or self.k_tile_bytes % 16:  # whole 16-byte cp.async chunks (-16 ran, wrongly)
            raise ValueError(f"k_tile_bytes must be a positive multiple of 16, not {self.k_tile_bytes}")
        if self.n_tile is not None and self.n_tile < 1:
            raise ValueError(f"n_tile must be positive (or None for all of n), not {self.n_tile}")
        if self.kind == "tsm2l" and (self.threads % 32 or self.threads > 1024):  # whole warps, one block's most
            raise ValueError(f"threads must be a multiple of 32 from 32 to 1024, not {self.threads}")
        if self.kind == "tsm2r":  # derived, so that records of TSM2R parameters say what ran
            object.__setattr__(self, "threads", 32 * self.row_warps * self.k_groups)
            object.__setattr__(self, "persistent", False)
            if self.threads > 1024:  # (a table's row_warps of 16 had failed only at the launch)
                raise ValueError(f"row_warps × k_groups must be at most 32 (32 threads each, 1024 a block), not "
                                 f"{self.row_warps} × {self.k_groups}")

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


