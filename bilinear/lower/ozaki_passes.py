"""The Ozaki scheme's CUDA passes as ``templates/ozaki.cu.j2`` renders them, and how its int8 GEMMs
are tiled: what the runtime (:mod:`bilinear.runtime.ozaki_cuda`) and the C++ library
(:mod:`bilinear.lower.ozaki_host`) launch alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ozaki_scheme as ozaki
from .ozaki_scheme import round_up
from .render import render

THREADS = 256
VALUES = 16  # k values per thread in the residue passes (one int4 store per modulus)
# Threads per column of B in the transposed residue passes: 8·16 and 32·4 bytes, a whole 128-byte
# line of the transposed row per store instruction (narrower runs measured 2x and 4x the copy model).
BT_LANES = 8
BT_S1_LANES = 32
KERNELS = ("oz_stat_rows", "oz_amax_cols", "oz_sumsq_cols", "oz_norm_cols", "oz_residues_a", "oz_residues_bt",
           "oz_reconstruct", "oz_residues_a_s1", "oz_residues_bt_s1", "oz_reconstruct_s1")

# One call per modulus, in near-equal tiles of at most about 8192 rows and columns, k whole.  At
# 16384, N = 14 (results/issue13/ozaki_run3): per modulus in 8192-tiles 106.9 ms, one batched call
# over all moduli 110-112, batched in tiles 120, per modulus whole 154.  k in tiles cost a pass of
# beta = 1 over every P_j; k whole ran 1.325x DGEMM at 10000×9000×11000 against 1.034 with k cut
# at 8192 (rows at 8192 + 1808), 1.387 against 1.176 at 12288³ (results/issue13/session23).
TILE = 8192
SPAN_ALIGN = 256  # rows and columns of a tile but the last: whole 256-wide thread-block tiles


def tile_spans(extent: int, tile: int, align: int) -> list[tuple[int, int]]:
    """(start, size) of ⌈extent/tile⌉ spans (or fewer) covering 0..extent, near-equal, each at
    most about ``tile`` and a multiple of ``align`` (at most ``tile``) but the last: 10000 rows
    are 5120 + 4880, not 8192 + 1808, whose thin second call ran far below cuBLAS's int8 rate."""
    step = round_up(-(-extent // -(-extent // tile)), min(align, tile))
    return [(start, min(step, extent - start)) for start in range(0, extent, step)]


@dataclass(frozen=True)
class KernelSource:
    """What ``templates/ozaki.cu.j2`` needs for N moduli (literals exact: repr round-trips)."""

    count: int
    values: int
    bt_lanes: int
    bt_s1_lanes: int
    moduli: tuple[dict, ...]
    m_limbs: tuple[str, ...]
    limb_scale: str
    shift: int
    norm_safety: str
    io: str = "double"  # A, B and C's element type: "double", or "float" for float32 products
    # For a C++ library holding the passes of several counts: the kernels' names start with
    # ``prefix`` and the rest sits in ``namespace`` (neither for the runtime's own modules); the
    # library runs no Strassen level on the residues and leaves its kernels out.
    prefix: str = ""
    namespace: str = ""
    residue_strassen: bool = True

    @classmethod
    def of(cls, count: int, io: str = "double", prefix: str = "", namespace: str = "",
           residue_strassen: bool = True) -> KernelSource:
        crt = ozaki.crt_constants(count)
        assert crt.moduli[0] == 256 and all(p % 2 for p in crt.moduli[1:])  # the kernels test j == 0 for p = 256
        moduli = tuple(
            {"p": repr(float(p)), "inv": repr(1.0 / p), "half": p // 2, "y": repr(float(y)),
             "c31": repr(float(_symmetric(2**31 % p, p))), "q": tuple(repr(q) for q in limbs)}
            for p, y, limbs in zip(crt.moduli, crt.inverses, crt.q_limbs)
        )
        return cls(count, VALUES, BT_LANES, BT_S1_LANES, moduli, tuple(repr(m) for m in crt.m_limbs), repr(float(2**crt.limb_bits)), crt.shift,
                   repr(ozaki.NORM_SAFETY), io, prefix, namespace, residue_strassen)

    def render(self) -> str:
        return render("ozaki.cu.j2", **{name: getattr(self, name) for name in self.__dataclass_fields__})


def _symmetric(r: int, p: int) -> int:
    """r mod p in [-⌊p/2⌋, ⌈p/2⌉ - 1]."""
    return (r + p // 2) % p - p // 2
