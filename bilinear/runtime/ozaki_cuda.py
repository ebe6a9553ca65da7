"""The Ozaki scheme II on the GPU: fused CUDA passes around cuBLAS's int8 tensor-core GEMM.

Per product (one chunk of the inner dimension, every modulus at once; the steps and why they are
exact are in :mod:`bilinear.runtime.ozaki`, the kernels in ``templates/ozaki.cu.j2``):

1. ``oz_stat_rows`` / ``oz_amax_cols``: the largest magnitude of every row of A and column of B
   (one read of A and of B; with "norm" scaling also their 2-norms: ``oz_stat_rows`` reads its
   row again from L2, ``oz_sumsq_cols`` and ``oz_norm_cols`` read B once more);
2. ``oz_residues_a`` / ``oz_residues_bt``: scale, round and reduce modulo every p_j in one read of A
   and of B, writing int8 residues K-contiguous (B's transposed), so the int8 GEMMs run in the "TN"
   layout cuBLAS's IMMA kernels want;
3. int8 GEMMs over the moduli (int32 results, exact; :mod:`bilinear.runtime.int8_gemm`):
   one cuBLAS call per modulus in near-equal tiles of rows and columns, k whole (the fastest of
   the variants measured on the H100; ``batched`` = True makes one strided-batched call over the
   moduli, ``tile`` = 0 whole calls, ``k_tile`` tiles of k that add up);
4. ``oz_reconstruct``: CRT, unscaling, alpha and beta in one read of the int32 products and C.

With ``residue_levels=1`` steps 2-4 become ``oz_residues_a_s1`` / ``oz_residues_bt_s1`` (the 7
Strassen operands of each side, residues of the quarters combined modulo p_j), 7 half-size int8
GEMMs per modulus, and ``oz_reconstruct_s1`` (the four quarters of C from the 7 products): 7/8
of the int8 work for 7/4 of the residue and product traffic, and the same result bit for bit.

Memory is one workspace buffer, grown to the largest product since its product last ran at
another shape (:class:`OzakiLeaf` lets it go then; a captured graph holds the one it writes, and
the int8 GEMMs go through :mod:`bilinear.runtime.cublas_capture` while a stream captures); its size is
:func:`bilinear.runtime.ozaki.workspace_bytes`: N int8 copies of A and Bᵀ plus N int32 products
(24 GiB at n = 16384, N = 16; 7/4 of that with a residue level); under a budget
(:class:`OzakiLeaf`), one tile of C's.  Time, with N moduli: N·2mnk int8
operations at cuBLAS's int8 rate, plus ≈ (8 + 8 + N·(2 + 8) + 8) bytes of traffic per element of a
square float64 product (A and B read twice, residues and products written and read, C written):
at n = 16384, N = 15, ≈ 118 + 12 ms against DGEMM's 161 (benchmarks/OZAKI_NOTES.md).

The passes issue no conversion instructions in their per-modulus work (F2I, I2F and FRND run at
a quarter of the FP64 rate): integers are rounded and extracted with the 1.5·2^52 addition, the
moduli loops are unrolled (per-modulus constants become immediates, every plane's load issues
together), and the reconstruction takes 4 columns per thread with 16-byte loads.  float32
products read and write floats and compute in double, with 24 bits as the default target.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ..lower.ozaki_passes import BT_LANES, BT_S1_LANES, KERNELS, THREADS, TILE, VALUES, KernelSource
from . import cublas_capture, int8_gemm, ozaki
from .ozaki import round_up
from .cuda import compiled_function, current_device, device_info

#: A Strassen level on the residues by default from this size (every dimension; None: only where
#: asked).  It won at 16384 while k was cut in 8192-tiles (session 19, N = 14: 107.9 against 122.0
#: ms) and lost at 8192 and 4096; with k whole the plain leaf won at 16384 too (N = 16: 116.6
#: against 122.3 ms, in 24 GiB against 42; results/issue13/session23/ozaki16384).
RESIDUE_STRASSEN_FROM: int | None = None


class CudaOzaki:
    """Ozaki-scheme GEMMs on the current CuPy device; keeps its workspace between calls."""

    #: A list: every pass appends (name, a CUDA event recorded after it) and every chunk starts with
    #: ("start", event), so the time of a pass is the time between its event and the one before
    #: (benchmarks/ozaki.py --breakdown).  None: no events.
    timing: list | None = None
    #: A cuBLAS handle of its own, for a runner whose calls overlap another's on a second stream (one handle's
    #: workspace is not to be shared by concurrent calls; benchmarks/ozaki_pipeline_probe.py); None: CuPy's.
    handle: int | None = None

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy
        self.workspace = None  # a cupy uint8 buffer, grown to the largest leaf since the last release
        # True: one strided-batched int8 GEMM over the moduli; False: one call per modulus (measured faster)
        self.batched = False
        # int8 GEMMs in tiles of at most this many rows and columns (0: whole; k beyond K_CHUNK is
        # still split, for exactness)
        self.tile = TILE
        self.k_tile: int | None = int8_gemm.K_TILE  # tiles of k at most this long (None: ``tile``; 0: whole)
        self._kernels: dict[tuple[int, str, int], dict[str, Any]] = {}  # (moduli, dtype, device): loaded on one

    @cached_property
    def _cublas(self):
        try:
            from cupy_backends.cuda.libs import cublas
        except ImportError:  # older CuPy layouts
            from cupy.cuda import cublas
        return cublas

    def kernels(self, count: int, dtype: Any = np.float64) -> dict[str, Any]:
        """The compiled passes for ``count`` moduli and A, B, C of ``dtype`` (rendered once each)."""
        key = (count, np.dtype(dtype).name, current_device())
        if key not in self._kernels:
            source = KernelSource.of(count, "float" if key[1] == "float32" else "double").render()
            self._kernels[key] = {name: compiled_function(source, name) for name in KERNELS}
        return self._kernels[key]

    @property
    def workspace_bytes(self) -> int:
        return 0 if self.workspace is None else self.workspace.nbytes

    def free_bytes(self) -> int:
        """Device bytes a new workspace may take: free memory, the pool's free blocks and the
        workspace held now (it is freed before a larger one is made)."""
        free = self.cupy.cuda.runtime.memGetInfo()[0]
        return free + self.cupy.get_default_memory_pool().free_bytes() + self.workspace_bytes

    def _buffer(self, nbytes: int):
        """The workspace, grown where too small; never shrunk within a product's call (its leaves of
        several sizes share it, and a graph's capture must free nothing it writes)."""
        if self.workspace is None or self.workspace.nbytes < nbytes:
            self.workspace = None  # free the old one first
            self.workspace = self.cupy.empty(nbytes, dtype=np.uint8)
        return self.workspace

    # --- the product ---------------------------------------------------------------------------
    def gemm(self, A, B, C, alpha: float = 1.0, beta: float = 0.0, *, count: int | None = None,
             bits: int | None = None, k_chunk: int = ozaki.K_CHUNK, scaling: str = "max",
             residue_levels: int = 0) -> None:
        """``C = alpha·A@B + beta·C`` on row-major float64 (or float32) views (unit column stride).

        ``residue_levels=1`` runs one Strassen level on the int8 residues (7 int8 GEMMs of half
        size per modulus instead of 8, exact modulo p_j: the same result bit for bit)."""
        m, k = A.shape
        n = B.shape[1]
        if residue_levels not in (0, 1):
            raise ValueError(f"residue_levels must be 0 or 1, not {residue_levels!r}")
        if m == 0 or n == 0:
            return
        if k == 0 or alpha == 0:
            C[...] = 0.0 if beta == 0 else beta * C
            return
        bits = ozaki.default_bits(C.dtype) if bits is None else bits
        for start in range(0, k, k_chunk):
            stop = min(k, start + k_chunk)
            plan = ozaki.make_plan(stop - start, count, bits, scaling)
            chunk = (A[:, start:stop], B[start:stop], C, alpha, beta if start == 0 else 1.0, plan)
            (self._strassen if residue_levels else self._plain)(*chunk)

    def _mark(self, name: str) -> None:
        if self.timing is not None:
            event = self.cupy.cuda.Event()
            event.record()
            self.timing.append((name, event))

    def _statistics(self, A, B, plan: ozaki.OzakiPlan, buffer, at: dict[str, int]) -> None:
        """The scale statistic (largest magnitude or norm bound) of A's rows and B's columns."""
        m, k = A.shape
        n = B.shape[1]
        kernels, base = self.kernels(plan.count, A.dtype), buffer.data.ptr
        stat_a, stat_b, partial = (np.uint64(base + at[name]) for name in ("amax_a", "amax_b", "partial"))
        lda, ldb = np.int64(_ld(A)), np.int64(_ld(B))
        norm = plan.scaling == "norm"
        self._mark("start")
        kernels["oz_stat_rows"]((m,), (THREADS,), (A, lda, np.int32(k), np.int32(norm), stat_a))
        self._mark("stats A")
        buffer[at["amax_b"] : at["amax_b"] + 8 * n].fill(0)
        strip, strips, columns = ozaki.COLUMN_STRIP, -(-k // ozaki.COLUMN_STRIP), (n + THREADS - 1) // THREADS
        kernels["oz_amax_cols"]((columns, strips), (THREADS,), (B, ldb, np.int32(k), np.int32(n), np.int32(strip), stat_b))
        if norm:
            kernels["oz_sumsq_cols"]((columns, strips), (THREADS,),
                                     (B, ldb, np.int32(k), np.int32(n), np.int32(strip), stat_b, partial))
            kernels["oz_norm_cols"]((columns,), (THREADS,), (partial, np.int32(strips), np.int32(n), stat_b))
        self._mark("stats B")

    def _plain(self, A, B, C, alpha: float, beta: float, plan: ozaki.OzakiPlan) -> None:
        m, k = A.shape
        n = B.shape[1]
        m4, n4, kp = round_up(m, ozaki.MN_ALIGN), round_up(n, ozaki.MN_ALIGN), round_up(k, ozaki.K_ALIGN)
        kernels = self.kernels(plan.count, A.dtype)
        at = ozaki.workspace_layout(m, k, n, plan.count, scaling=plan.scaling)
        buffer = self._buffer(at["total"])
        base = buffer.data.ptr
        ptr = {name: np.uint64(base + offset) for name, offset in at.items()}  # kernel pointer arguments
        amax_a, amax_b = ptr["amax_a"], ptr["amax_b"]
        lda, ldb, ldc = _ld(A), _ld(B), _ld(C)
        grid = device_info().sms * 8
        self._statistics(A, B, plan, buffer, at)
        blocks_a = min(-(-m4 * (kp // VALUES) // THREADS), grid)
        blocks_b = min(-(-n4 * round_up(kp // VALUES, BT_LANES) // THREADS), grid)  # BT_LANES k groups per column
        blocks_c = min(-(-m * (n4 // 4) // THREADS), grid)  # a thread per 4 columns of a row
        kernels["oz_residues_a"]((blocks_a,), (THREADS,), (
            A, np.int64(lda), np.int32(m), np.int32(k), np.int32(m4), np.int32(kp), amax_a,
            np.int32(plan.bits_a), ptr["ra"]))
        self._mark("residues A")
        kernels["oz_residues_bt"]((blocks_b,), (THREADS,), (
            B, np.int64(ldb), np.int32(k), np.int32(n), np.int32(n4), np.int32(kp), amax_b,
            np.int32(plan.bits_b), ptr["rb"]))
        self._mark("residues B")
        self._int8_gemms(base + at["ra"], base + at["rb"], base + at["products"], m4, n4, kp, plan.count)
        self._mark("int8 GEMMs")
        kernels["oz_reconstruct"]((blocks_c,), (THREADS,), (
            ptr["products"], np.int32(m4), np.int32(n4), np.int32(m), np.int32(n), amax_a, amax_b,
            np.int32(plan.bits_a), np.int32(plan.bits_b), C, np.int64(ldc), np.float64(alpha), np.float64(beta)))
        self._mark("reconstruct")

    def _strassen(self, A, B, C, alpha: float, beta: float, plan: ozaki.OzakiPlan) -> None:
        """One Strassen level on the residues: 7 operands of A and of Bᵀ per modulus (half the
        padded sizes), 7 half-size int8 GEMMs per modulus, the quarters' CRT."""
        m, k = A.shape
        n = B.shape[1]
        mh, nh, kh = round_up(m, 8) // 2, round_up(n, 8) // 2, round_up(k, 32) // 2
        kernels = self.kernels(plan.count, A.dtype)
        at = ozaki.workspace_layout(m, k, n, plan.count, scaling=plan.scaling, residue_levels=1)
        buffer = self._buffer(at["total"])
        base = buffer.data.ptr
        ptr = {name: np.uint64(base + offset) for name, offset in at.items()}
        grid = device_info().sms * 8
        self._statistics(A, B, plan, buffer, at)
        kernels["oz_residues_a_s1"]((min(-(-mh * kh // 4 // THREADS), grid),), (THREADS,), (
            A, np.int64(_ld(A)), np.int32(m), np.int32(k), np.int32(mh), np.int32(kh), ptr["amax_a"],
            np.int32(plan.bits_a), ptr["ra"]))
        self._mark("residues A")
        slots = round_up(kh // 4, BT_S1_LANES)  # BT_S1_LANES threads per column take consecutive 4-groups of k
        kernels["oz_residues_bt_s1"]((min(-(-nh * slots // THREADS), grid),), (THREADS,), (
            B, np.int64(_ld(B)), np.int32(k), np.int32(n), np.int32(nh), np.int32(kh), ptr["amax_b"],
            np.int32(plan.bits_b), ptr["rb"]))
        self._mark("residues B")
        for o in range(7):  # product o of every modulus: operands 7 planes apart
            self._int8_gemms(base + at["ra"] + o * mh * kh, base + at["rb"] + o * nh * kh,
                             base + at["products"] + 4 * o * mh * nh, mh, nh, kh, plan.count,
                             strides=(7 * mh * kh, 7 * nh * kh, 7 * mh * nh))
        self._mark("int8 GEMMs")
        kernels["oz_reconstruct_s1"]((min(-(-mh * nh // THREADS), grid),), (THREADS,), (
            ptr["products"], np.int32(mh), np.int32(nh), np.int32(m), np.int32(n), ptr["amax_a"], ptr["amax_b"],
            np.int32(plan.bits_a), np.int32(plan.bits_b), C, np.int64(_ld(C)), np.float64(alpha), np.float64(beta)))
        self._mark("reconstruct")

    def _int8_gemms(self, ra: int, rb: int, products: int, m4: int, n4: int, kp: int, batch: int,
                    strides: tuple[int, int, int] | None = None) -> None:
        """P_j = A'_j·B'_jᵀ for ``batch`` moduli (:func:`bilinear.runtime.int8_gemm.issue`), through
        CuPy's cuBLAS wrapper, or the C API while the stream captures a graph."""
        handle = self.handle or self.cupy.cuda.device.get_cublas_handle()
        stream = self.cupy.cuda.get_current_stream()
        if stream.is_capturing():  # CuPy's wrappers refuse a capturing stream; cuBLAS itself captures
            cublas_capture.prepare(handle, stream.ptr)
            gemm = cublas_capture.gemm_strided_ex
        else:
            cublas = self._cublas
            cublas.setStream(handle, stream.ptr)
            cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
            gemm = cublas.gemmStridedBatchedEx
        int8_gemm.issue(gemm, handle, ra, rb, products, m4, n4, kp, batch, strides or (m4 * kp, n4 * kp, m4 * n4),
                        batched=self.batched, tile=self.tile, k_tile=self.k_tile)


def _ld(view) -> int:
    return max(view.strides[0] // view.itemsize, view.shape[1], 1)


# --- the leaf kind -------------------------------------------------------------------------------
class OzakiLeaf:
    """The ``ozaki`` leaf kind's GEMM (see :data:`bilinear.lower.options.LEAF_KINDS`): on the
    CuPy backend the CUDA passes with cuBLAS's int8 GEMM, on the NumPy backend
    :func:`bilinear.runtime.ozaki.gemm`.  A Strassen level on the int8 residues (GPU; the same
    result bit for bit) runs where ``residue_levels`` asks for it (or, with RESIDUE_STRASSEN_FROM
    set, where every dimension is at least that), and its workspace fits the budget (without one:
    the device's free memory).  With a budget the rest fits it by tiles of C
    (:func:`bilinear.runtime.ozaki.tile_for_budget`)."""

    def __init__(self, backend: Any, count: int | None = None, bits: int = ozaki.DEFAULT_BITS, budget: int | None = None,
                 scaling: str = ozaki.DEFAULT_SCALING, residue_levels: int | None = None):
        self.xp, self.count, self.bits, self.budget, self.scaling = backend.xp, count, bits, budget, scaling
        self.residue_levels = residue_levels  # None: by size
        self.cuda = CudaOzaki() if backend.name == "cupy" else None

    def moduli(self, k: int) -> int:
        return self.count if self.count is not None else ozaki.moduli_for(self.bits, min(k, ozaki.K_CHUNK))

    def _setup(self, m: int, k: int, n: int) -> tuple[tuple[int, int], int]:
        """(tile of C, residue levels) for an m×k×n leaf: residue Strassen where asked (or large) and
        its workspace fits, else tiles of C whose workspace fits the budget (all of C without one)."""
        count, levels = self.moduli(k), self.residue_levels
        if levels is None:
            levels = int(RESIDUE_STRASSEN_FROM is not None and min(m, k, n) >= RESIDUE_STRASSEN_FROM)
        if levels:
            room = self.budget if self.budget is not None else self.cuda.free_bytes()
            if ozaki.workspace_bytes(m, k, n, count, scaling=self.scaling, residue_levels=levels) <= room:
                return (m, n), levels
        return ozaki.tile_for_budget(m, k, n, count, self.budget, self.scaling), 0

    def __call__(self, a: Any, b: Any, c: Any, alpha: float, beta: float) -> None:
        m, k = a.shape
        n = b.shape[1]
        if self.cuda is None:
            ozaki.gemm(self.xp, a, b, c, alpha, beta, count=self.count, bits=self.bits, scaling=self.scaling)
            return
        (rows, cols), levels = self._setup(m, k, n) if m and k and n else ((max(m, 1), max(n, 1)), 0)
        for i in range(0, m, rows):  # each tile of C a product of its own: the same bits as the whole
            for j in range(0, n, cols):
                self.cuda.gemm(a[i : i + rows], b[:, j : j + cols], c[i : i + rows, j : j + cols], alpha, beta,
                               count=self.count, bits=self.bits, scaling=self.scaling, residue_levels=levels)

    def reserve(self, m: int, k: int, n: int) -> None:
        """Allocate now the workspace an m×k×n leaf takes (it grows, as its calls grow it)."""
        if self.cuda is not None and min(m, k, n) > 0:
            self.cuda._buffer(self.workspace_bytes(m, k, n))

    def buffers(self) -> tuple:
        """The device buffer its calls write (a captured graph holds it)."""
        return () if self.cuda is None or self.cuda.workspace is None else (self.cuda.workspace,)

    def release(self) -> None:
        """Drop the workspace kept from the last call (the next call allocates it anew)."""
        if self.cuda is not None:
            self.cuda.workspace = None

    def workspace_bytes(self, m: int, k: int, n: int) -> int:
        """Device bytes for an m×k×n leaf (0 on the CPU: NumPy's temporaries are host memory)."""
        if self.cuda is None or k == 0:
            return 0
        (rows, cols), levels = self._setup(m, k, n)
        return ozaki.workspace_bytes(rows, k, cols, self.moduli(k), scaling=self.scaling, residue_levels=levels)


def leaf_gemm(backend: Any, options: Any) -> OzakiLeaf:
    """The leaf-kind table's factory: the ozaki GEMM for ``backend`` with ``options.moduli`` and ``options.scaling``."""
    return OzakiLeaf(backend, count=options.moduli, bits=ozaki.default_bits(options.dtype), scaling=options.scaling)
