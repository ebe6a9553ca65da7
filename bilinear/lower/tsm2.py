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

The module is the public face of three rooms: :mod:`.tsm2_params` (device, alignment,
parameters, tile layouts), :mod:`.tsm2_kernel` (specs and rendering) and :mod:`.tsm2_model`
(the performance model and the parameter choice).
"""

from __future__ import annotations

from .tsm2_kernel import LSpec, RSpec, l_spec, r_spec, render_spec, spec_for
from .tsm2_model import (
    Prediction,
    bytes_moved,
    candidates,
    family,
    fit_params,
    model_params,
    occupancy,
    predict,
    ranked,
    t2_threshold,
)
from .tsm2_params import (
    BANK_BYTES,
    H100,
    KINDS,
    SCALARS,
    TEMPLATES,
    TSM2L_MAX_K,
    TSM2L_MAX_N,
    Alignment,
    Device,
    Params,
    TileLayout,
    access_bytes,
    tile_layout,
    wavefronts,
)

__all__ = [
    "BANK_BYTES", "H100", "KINDS", "SCALARS", "TEMPLATES", "TSM2L_MAX_K", "TSM2L_MAX_N", "Alignment", "Device", "LSpec",
    "Params", "Prediction", "RSpec", "TileLayout", "access_bytes", "bytes_moved", "candidates", "family", "fit_params",
    "l_spec", "model_params", "occupancy", "predict", "r_spec", "ranked", "render_spec", "spec_for", "t2_threshold",
    "tile_layout", "wavefronts",
]
