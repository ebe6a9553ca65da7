"""The fused product kernel's tunable shape (:class:`TileConfig`): which configurations can
build a kernel, the shared-memory ring they need, and the defaults used where nothing was tuned.
"""

from __future__ import annotations

from dataclasses import dataclass

from .product_spec import DTYPES, ProductStageSpec


# --- tile configurations ------------------------------------------------------


@dataclass(frozen=True)
class TileConfig:
    """The tunable shape of the kernel.

    ``bm×bn`` is the C tile of a block, ``bk`` the depth of one pipeline stage,
    ``warps_m×warps_n`` the warps that split the C tile, ``stages`` the depth of
    the cp.async ring, ``k_step`` the k of one tensor-core instruction (8 or 16
    for FP64 ``mma.sync``; 1 for FFMA) and ``min_blocks`` the second argument of
    ``__launch_bounds__`` (the blocks per SM the register allocator must allow).
    ``frag_buffers`` is 1 (load a k-step's fragments, then use them) or 2 (load step s+1's
    while step s computes, with the ring's barrier before a slot's last step).
    """

    bm: int
    bn: int
    bk: int
    warps_m: int
    warps_n: int
    stages: int
    k_step: int
    min_blocks: int = 1
    frag_buffers: int = 1

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def warp_m(self) -> int:
        return self.bm // self.warps_m

    @property
    def warp_n(self) -> int:
        return self.bn // self.warps_n

    def label(self) -> str:
        return (
            f"{self.bm}x{self.bn}x{self.bk} w{self.warps_m}x{self.warps_n} s{self.stages} "
            f"k{self.k_step} b{self.min_blocks} f{self.frag_buffers}"
        )

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict) -> TileConfig:
        return cls(**{name: int(data[name]) for name in cls.__dataclass_fields__ if name in data})


#: What no CUDA GPU gives one block more of: threads, and shared memory (Hopper's 227 KiB, opted in).
MOST_THREADS = 1024
MOST_SHARED_PER_BLOCK = 232448


def config_problems(config: TileConfig, dtype: str) -> list[str]:
    """Why ``config`` cannot build a kernel for ``dtype`` (empty when it can)."""
    if min(getattr(config, name) for name in config.__dataclass_fields__) < 1:  # (the checks below divide by them)
        return ["every tile size and count is at least 1"]
    problems = []
    if config.threads > MOST_THREADS:
        problems.append(f"{config.threads} threads per block; a block has at most {MOST_THREADS}")
    if (shared := shared_bytes(config, dtype)[-1]) > MOST_SHARED_PER_BLOCK:
        problems.append(f"{shared} bytes of shared memory per block; a block has at most {MOST_SHARED_PER_BLOCK}")
    if config.bm % config.warps_m or config.bn % config.warps_n:
        problems.append("the warps do not split the C tile evenly")
    if config.stages < 2:
        problems.append("cp.async needs at least 2 pipeline stages")
    if config.frag_buffers not in (1, 2):
        problems.append("fragments are single- or double-buffered")
    elif config.frag_buffers == 2 and config.k_step and (config.bk // config.k_step) % 2:
        problems.append("double-buffered fragments need an even number of k-steps per slot")
    if dtype == "float64":
        if config.k_step not in (4, 8, 16):
            problems.append("FP64 mma.sync has k = 4, 8 or 16")
        elif config.bk % config.k_step:
            problems.append(f"bk={config.bk} is not a multiple of the mma k={config.k_step}")
        if config.warp_m % 16 or config.warp_n % 8:
            problems.append("a warp tile must be a whole number of 16x8 mma tiles")
    else:
        if config.k_step != 1:
            problems.append("FFMA has k_step 1")
        if config.warp_m // 4 not in (4, 8) or config.warp_m % 4:
            problems.append("a float32 warp tile has 16 or 32 rows (4 lane rows x 4 or 8)")
        if config.warp_n // 8 not in (4, 8) or config.warp_n % 8:
            problems.append("a float32 warp tile has 32 or 64 columns (8 lane columns x 4 or 8)")
    for vec in vectors(dtype):
        for side, rows, cols in _copied_tiles(config, dtype, vec):
            if _plan_problem(rows, cols, vec, config.threads):
                problems.append(f"the threads do not cover the {side} tile ({rows}x{cols}) in pieces of {vec}")
    return problems


def vectors(dtype: str) -> tuple[int, int]:
    """Elements per piece of a tile copy: 16-byte pieces where aligned, one element where not."""
    return (16 // DTYPES[dtype][1], 1)


def _copied_tiles(config: TileConfig, dtype: str, vec: int) -> list[tuple[str, int, int]]:
    # The float32 A tile is always copied an element at a time: it is transposed on the way.
    a_vec_ok = dtype == "float64" or vec == 1
    tiles = [("B", config.bk, config.bn)]
    if a_vec_ok:
        tiles.insert(0, ("A", config.bm, config.bk))
    return tiles


def _plan_problem(rows: int, cols: int, vec: int, threads: int) -> bool:
    if cols % vec:
        return True
    per_row = cols // vec
    if per_row > threads or threads % per_row:
        return True
    row_step = threads // per_row
    return rows % row_step != 0


#: Configurations used when nothing is cached for the GPU: the tuner's winners on the lent
#: H100 (benchmarks/PRODUCT_NOTES.md).  The FP64 one: 128x128 C tile, 8 warps of 32x64,
#: mma m16n8k4, double-buffered fragments; 244 registers, 112 KiB of shared memory.
DEFAULTS: dict[tuple[str, str], TileConfig] = {
    ("float64", "single"): TileConfig(128, 128, 16, 4, 2, 3, 4, 1, 2),
    ("float64", "sum"): TileConfig(128, 64, 16, 4, 2, 3, 8, 1, 1),
    ("float32", "single"): TileConfig(64, 128, 16, 2, 2, 3, 1, 1, 1),
    ("float32", "sum"): TileConfig(128, 64, 16, 4, 2, 3, 1, 2, 1),
}


def variant(spec: ProductStageSpec) -> str:
    """``"sum"`` when some operand adds several views (register-staged loads), else ``"single"``."""
    return "sum" if any(len(p.left) > 1 or len(p.right) > 1 for p in spec.products) else "single"



def default_config(spec: ProductStageSpec) -> TileConfig:
    """The configuration a spec renders with where no tuned one is known (generated artifacts)."""
    return DEFAULTS[(spec.dtype, variant(spec))]


def shared_bytes(config: TileConfig, dtype: str) -> tuple[int, int, int, int, int]:
    """(lda_s, ldb_s, a_stage, b_stage, total bytes) of the shared-memory ring.

    FP64 keeps A as [bm][bk+4] and B as [bk][bn+4]: with a row length of 4 mod
    16 doubles the mma fragment loads (lanes g=0..7 × t=0..3) hit 16 distinct
    8-byte bank pairs per half-warp.  FP32 keeps A transposed, [bk][bm+4], so a
    thread's rows are one float4; B is [bk][bn] (float4 reads are conflict-free).
    """
    size = DTYPES[dtype][1]
    if dtype == "float64":
        lda_s, ldb_s = config.bk + 4, config.bn + 4
        a_stage, b_stage = config.bm * lda_s, config.bk * ldb_s
    else:
        lda_s, ldb_s = config.bm + 4, config.bn
        a_stage, b_stage = config.bk * lda_s, config.bk * ldb_s
    return lda_s, ldb_s, a_stage, b_stage, (a_stage + b_stage) * config.stages * size


