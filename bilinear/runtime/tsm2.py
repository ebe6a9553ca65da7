"""Running the TSM2R / TSM2L kernels through CuPy.

``tsm2_matmul(A, B, out=None, alpha=1.0, beta=0.0)`` computes
``out = alpha · A @ B + beta · out`` on row-major CuPy matrices with one TSM2
kernel.  Kernels are rendered from ``templates/tsm2*.cu.j2``, compiled once
with NVRTC (exact IEEE arithmetic: no ``--use_fast_math``; FMA contraction,
as in cuBLAS) and cached by the hash of their source and the GPU's
architecture; CuPy also keeps the binary on disk.  Nothing is allocated on
the device except ``out`` when it is not given.

Layouts: every matrix must have unit stride along its rows (C order, or a
row-major view with a leading dimension: ``big[:, :k]``).  A column-major
(Fortran-ordered) matrix is the transpose of a row-major one; pass
``cupy.ascontiguousarray(x)`` (``bilinear.matmul`` refuses such matrices on CuPy with
that hint, before any kernel is chosen).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

import numpy as np

from ..lower import tsm2 as model
from ..lower.tsm2 import Alignment, LSpec, Params, RSpec
from .cuda import LOCK, OPTIONS, compiled_function, device_info
from .views import address, check_current_device, check_out_apart, leading_dimension

_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}


def _cupy():
    try:
        import cupy
    except ImportError as error:  # pragma: no cover - exercised only without CuPy
        raise RuntimeError("the TSM2 kernels need CuPy and a CUDA GPU") from error
    return cupy


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


def _device_matrix(x: Any, name: str):
    """``x`` as a 2-D CuPy array (zero-copy for CUDA-array-interface / DLPack objects)."""
    cupy = _cupy()
    if isinstance(x, np.ndarray):
        raise ValueError(f"{name} is in host memory and the product runs on the GPU: move {name} there first "
                         "(cupy.asarray; a torch tensor's .cuda())")  # (matmul reads a CPU tensor as NumPy)
    if not isinstance(x, cupy.ndarray):
        try:
            x = cupy.asarray(x) if hasattr(x, "__cuda_array_interface__") else cupy.from_dlpack(x)
        except Exception as error:
            raise ValueError(f"{name} is not a GPU array CuPy can view ({type(x).__name__})") from error
    if x.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D), not {x.ndim}-D with shape {x.shape}")
    check_current_device(x, name, cupy)
    return x


@dataclass(frozen=True)
class Call:
    """A validated call: shapes, dtype, pitches and alignment (what picks and launches a kernel)."""

    m: int
    k: int
    n: int
    dtype: str
    lda: int
    ldb: int
    ldc: int
    align: Alignment


def validate(A, B, out=None, beta: float = 0.0):
    """Check the operands; returns ``(A, B, out, Call)`` (``out`` may still be None)."""
    A, B = _device_matrix(A, "A"), _device_matrix(B, "B")
    if A.dtype not in _DTYPES or B.dtype != A.dtype:
        raise ValueError(f"A and B must both be float32 or both float64; got {A.dtype} and {B.dtype}")
    (m, k), (k_b, n) = A.shape, B.shape
    if k != k_b:
        raise ValueError(f"inner dimensions differ: A is {m}×{k}, B is {k_b}×{n}")
    lda, ldb = leading_dimension(A, "A"), leading_dimension(B, "B")
    if out is None:
        if beta != 0:
            raise ValueError("beta ≠ 0 needs out= (the C to accumulate into)")
        ldc, c_align = n, 16
    else:
        out = _device_matrix(out, "out")
        if out.shape != (m, n) or out.dtype != A.dtype:
            raise ValueError(f"out must be a {m}×{n} {A.dtype} matrix; got {out.shape} {out.dtype}")
        ldc = leading_dimension(out, "out")
        check_out_apart(out, A, B)
        c_align = model.access_bytes(address(out), ldc, A.itemsize)
    es = A.itemsize
    align = Alignment(model.access_bytes(address(A), lda, es), model.access_bytes(address(B), ldb, es), c_align)
    return A, B, out, Call(m, k, n, _DTYPES[A.dtype], lda, ldb, ldc, align)


# ---------------------------------------------------------------------------------------------
# Compilation and its cache
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Compiled:
    """One compiled kernel and the facts its launch needs."""

    function: Any  # cupy.RawKernel
    spec: RSpec | LSpec
    source_hash: str
    blocks_per_sm: int  # from the CUDA occupancy calculator
    num_regs: int
    local_bytes: int  # spills (should be 0)


_compiled: dict[tuple, Compiled] = {}  # with the occupancy facts a launch needs


def _arch(device_id: int) -> str:
    return device_info(device_id).arch


def compile_spec(spec: RSpec | LSpec, device_id: int | None = None) -> Compiled:
    """Compile (or fetch) the kernel for ``spec`` on a device; key: source hash and arch."""
    cupy = _cupy()
    device_id = cupy.cuda.Device().id if device_id is None else device_id
    source = model.render_spec(spec)
    digest = hashlib.sha256(source.encode()).hexdigest()
    key = (digest, _arch(device_id), device_id)
    with LOCK:
        hit = _compiled.get(key)
    if hit is not None:
        return hit
    function = compiled_function(source, f"{spec.kind}_kernel", OPTIONS, spec.smem_bytes, device_id)
    with cupy.cuda.Device(device_id):
        blocks = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            function.kernel.ptr, spec.threads, spec.smem_bytes
        )
    compiled = Compiled(function, spec, digest, blocks, function.num_regs, function.local_size_bytes)
    with LOCK:
        return _compiled.setdefault(key, compiled)


def precompile(specs: Iterable[RSpec | LSpec], workers: int = 8) -> list[Compiled]:
    """Compile many kernels at once (NVRTC releases the GIL); returns them in order."""
    cupy = _cupy()
    device_id = cupy.cuda.Device().id
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda spec: compile_spec(spec, device_id), specs))


@cache
def device_model(device_id: int = 0) -> model.Device:
    """The model's view of a GPU, from :func:`~bilinear.runtime.cuda.device_info` (model
    constants, and anything the device does not report, keep their defaults)."""
    info, defaults = device_info(device_id), model.H100

    def known(value, default):
        return default if value is None else value

    return replace(
        defaults,
        name=info.name,
        sms=info.sms,
        clock_hz=known(info.clock_hz, defaults.clock_hz),
        regs_per_sm=known(info.registers_per_sm, defaults.regs_per_sm),
        smem_per_sm=known(info.shared_per_sm, defaults.smem_per_sm),
        smem_per_block=known(info.shared_per_block, defaults.smem_per_block),
        max_threads_per_sm=known(info.max_threads_per_sm, defaults.max_threads_per_sm),
        max_blocks_per_sm=known(info.max_blocks_per_sm, defaults.max_blocks_per_sm),
    )


# ---------------------------------------------------------------------------------------------
# Launch
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Launch:
    """A kernel with its grid for one call shape: launching it costs one Python call."""

    compiled: Compiled
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    scalar: type
    params: Params

    def __call__(self, A, B, C, call: Call, alpha: float, beta: float) -> None:
        self.bound(call)(A, B, C, alpha, beta)

    def bound(self, call: Call):
        """The launch with ``call``'s sizes and pitches fixed: ``run(A, B, C, alpha, beta)``
        (matmul's prepared calls keep it, so a repeated call converts only its scalars)."""
        spec, function, grid, block, scalar = self.compiled.spec, self.compiled.function, self.grid, self.block, self.scalar
        m, lda, ldb, ldc = (np.int64(v) for v in (call.m, call.lda, call.ldb, call.ldc))
        sizes = (m, np.int64(call.k), lda, ldb, ldc) if spec.kind == "tsm2r" else (m, lda, ldb, ldc)

        def run(A, B, C, alpha: float, beta: float) -> None:
            function(grid, block, (A, B, C, *sizes, scalar(alpha), scalar(beta)), shared_mem=spec.smem_bytes)

        return run


# CUDA's limit on a grid's y dimension, where TSM2R puts its column tiles
MAX_GRID_Y = 65535


def tsm2r_grid(m: int, n: int, rows: int, n_tile: int) -> tuple[int, int, int]:
    """TSM2R's grid: a block per ``rows`` rows of C (x) and per ``n_tile`` of its columns (y).

    Raises:
        ValueError: where the column tiles pass CUDA's grid limit (the launch would fail)."""
    column_tiles = -(-n // n_tile)
    if column_tiles > MAX_GRID_Y:
        raise ValueError(f"TSM2R covers at most {MAX_GRID_Y} tiles of {n_tile} columns (n ≤ {MAX_GRID_Y * n_tile}); "
                         f"got n={n}: it is for skinny products, use a GEMM")
    return (-(-m // rows), column_tiles, 1)


def choose_kind(m: int, k: int, n: int) -> str:
    return model.family(m, k, n)


@lru_cache(maxsize=4096)
def plan(call: Call, kind: str | None = None, params: Params | None = None, device_id: int = 0) -> Launch:
    """The kernel and grid for a call (model parameters unless ``params`` are given)."""
    kind = kind or choose_kind(call.m, call.k, call.n)
    if kind not in model.KINDS:
        raise ValueError(f"kernel must be one of {model.KINDS}, not {kind!r}")
    if kind == "tsm2l" and (call.k > model.TSM2L_MAX_K or call.n > model.TSM2L_MAX_N):
        raise ValueError(f"TSM2L needs k, n ≤ {model.TSM2L_MAX_K}; got k={call.k}, n={call.n} (use tsm2r)")
    device = device_model(device_id)
    if params is None:
        params = model.model_params(kind, call.m, call.k, call.n, call.dtype, device, call.align)
    else:
        params = model.fit_params(params, kind, call.dtype, call.k, call.n, call.align)
    spec = model.spec_for(params, call.dtype, call.k, call.n, call.align)
    compiled = compile_spec(spec, device_id)
    if compiled.blocks_per_sm == 0:
        raise RuntimeError(f"{kind} with {params.short()} does not fit on this GPU ({spec.smem_bytes} B shared)")
    if kind == "tsm2r":
        grid = tsm2r_grid(call.m, call.n, spec.rows, spec.n_tile)
    else:
        tiles = -(-call.m // spec.rows)
        grid = (min(tiles, device.sms * compiled.blocks_per_sm) if spec.persistent else tiles, 1, 1)
    scalar = np.float32 if call.dtype == "float32" else np.float64
    return Launch(compiled, grid, (spec.threads, 1, 1), scalar, params)


def tsm2_matmul(
    A, B, out=None, alpha: float = 1.0, beta: float = 0.0, kernel: str | None = None, params: Params | None = None
):
    """``out = alpha · A @ B + beta · out`` with a TSM2 kernel.

    Args:
        A: m×k row-major float32/float64 CuPy matrix (a view with a row pitch is fine).
        B: k×n row-major matrix of the same dtype.
        out: m×n row-major result; allocated when None (then beta must be 0).
        alpha, beta: the BLAS scalars; with beta = 0, ``out`` is not read.
        kernel: ``"tsm2r"`` or ``"tsm2l"``; by default TSM2L when k ≤ 32, else TSM2R.
        params: kernel parameters; by default the model's choice for this shape.

    Returns:
        ``out``.

    Raises:
        ValueError: bad shapes, dtypes or layouts (column-major inputs included), or
            out overlapping an input.
    """
    A, B, out, call = validate(A, B, out, beta)
    return run_validated(A, B, out, call, alpha, beta, kernel, params)


def run_validated(A, B, out, call: Call, alpha: float, beta: float, kernel: str | None = None,
                  params: Params | None = None):
    """:func:`tsm2_matmul` on operands :func:`validate` already checked (``matmul`` validates once)."""
    cupy = _cupy()
    if out is None:
        out = cupy.empty((call.m, call.n), dtype=A.dtype)
    if call.m == 0 or call.n == 0:
        return out
    if call.k == 0:  # an empty sum: out = beta · out
        if beta == 0:
            out.fill(0)
        else:
            out *= beta
        return out
    launch = plan(call, kernel, params, cupy.cuda.Device().id)
    launch(A, B, out, call, alpha, beta)
    return out


def paper_parameters(launch: Launch, call: Call) -> dict:
    """The paper's t1, t2, t3 and tcf of a launch."""
    spec = launch.compiled.spec
    if spec.kind == "tsm2r":
        return {
            "t1": spec.k_tile,
            "t2": spec.n_tile,
            "t3": spec.rows_per_thread * spec.k_tile // spec.k_groups,
            "tcf": 1,
        }
    tiles = -(-call.m // spec.rows)
    return {
        "t1": call.k,
        "t2": call.n,
        "t3": spec.rows_per_thread * call.k,
        "tcf": spec.rows_per_thread * math.ceil(tiles / launch.grid[0]),
    }
