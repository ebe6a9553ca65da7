"""``bilinear.matmul``: the product by the kernel that measured fastest for the shape.

TSM2R/TSM2L for tall-and-skinny products, a fast scheme compiled through
:func:`bilinear.api.compile` (replayed as CUDA graphs where it keeps its workspace,
:mod:`bilinear.runtime.graph_cache`)
where the dispatch table (:mod:`bilinear.dispatch`) measured one faster, cuBLAS elsewhere;
NumPy matrices on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .api import compile, true_or_false
from .runtime import prepared_calls
from .runtime.views import DLPACK_CPU, DLPACK_ERRORS


_RECURSIVE: dict[tuple[str, str, str, int, int | None], object] = {}


def _in_place_product(dtype: str, backend: str, levels: int = 1, scheme: str = "msmes"):
    """An in-place schedule (no workspace; overwrites A and B and restores them): msmes, or msmes2
    (msmes's two levels as one schedule), compiled once per level count."""
    key = (scheme, dtype, backend, levels, _device(backend))  # a product per GPU: it keeps workspace on one
    if key not in _RECURSIVE:
        from .dispatch import table_path
        from .dispatch_checks import check_row_scheme
        from .paths import algorithms_dir

        product = compile(algorithms_dir() / f"{scheme}.bl", dtype=dtype, levels=levels, backend=backend)
        check_row_scheme("inplace", scheme, product, table_path())
        _RECURSIVE[key] = product
    return _RECURSIVE[key]


def matmul(A, B, out=None, alpha: float = 1.0, beta: float = 0.0, *, inplace: bool = False):
    """``out = alpha·A@B + beta·out``, by the kernel that measured fastest for the shape.

    A drop-in product: A and B are never changed, not even while it runs,
    unless ``inplace=True``.  On CuPy matrices, tall-and-skinny products go to
    the TSM2R/TSM2L kernels, large ones to the fast scheme (breadth-first
    Winograd and the like, with workspace) that measured faster than cuBLAS at
    the nearest measured shape (within about 1.4× overall: the three dimensions'
    ratios multiply to at most √2, whatever the volume; TSM2 shapes
    within 2× below the measured ones in each large dimension), and the rest
    to cuBLAS; the choices come from
    ``bilinear/data/dispatch.json`` (or the table ``$BILINEAR_DISPATCH_TABLE``
    names), measured on the GPU by
    ``python benchmarks/tsm2.py --table ...`` and
    ``python benchmarks/dispatch_grid.py --table ...``, and are taken only on
    the GPUs the table holds for (the one it was measured on and those its
    check held on, :mod:`bilinear.dispatch`): elsewhere every product goes to
    cuBLAS.  The fast choice may be
    the ozaki leaf: the product on the int8 tensor cores (Ozaki scheme II,
    :mod:`bilinear.runtime.ozaki`), every element of A and B kept to 53 bits
    (float64) or 24 (float32) relative to its row's (column's) largest, so its
    error is bounded relative to those, not to each element as cuBLAS's is; a
    row of A (column of B) that holds an Inf or NaN gives NaN in its whole row
    (column) of the result, where cuBLAS may give ±Inf; where its workspace for all
    of the result at once is not free on the device, it runs in tiles of the
    result that fit (the same bits).  Another fast scheme whose
    workspace is not free on the device gives way to cuBLAS, and so does one
    that computes C = A*B over C (rsmm) in a call with beta ≠ 0.  A fast scheme
    keeps its workspace between calls where as much stays free beside it, and
    from the third call on the same arrays (and alpha, beta) replays as one
    CUDA graph (:mod:`bilinear.runtime.graph_cache`), without the host time of
    its launches; only the one run last keeps it (running another lets it go).
    Where less would stay free, or in tiles of the result, it runs directly
    and gives its workspace back to CuPy's pool after each call, for the
    caller's next allocation.  NumPy matrices, and DLPack objects in host memory (a torch CPU
    tensor), are multiplied on the CPU.

    Args:
        inplace: allow the in-place MSMES schedule (no extra memory) where the
            table measured it faster than cuBLAS (``dispatch.in_place_choice``: MSMES, or msmes2, its
            two levels as one schedule;
            with NumPy matrices: always, where A, B and out are row-major and
            A and B writable);
            elsewhere the product is as without it.
            It overwrites A and B while it runs and restores them only up to
            rounding, since (a+b)-b need not equal a: measured on the H100 at
            levels 1-3 on random normal data, to ≤ 1.4e-15 (float64) and
            ≤ 7.5e-7 (float32) normwise; other data can lose more (uniform
            [0, 1) on the CPU: 3.3e-15 and 1.9e-6 at three levels,
            ``benchmarks/restoration.py --data uniform``), and each
            call adds its own, so inputs reused over many calls drift.  An Inf
            or NaN in A or B, or a block sum that overflows, can leave NaN or
            Inf in finite entries of the other blocks it was added to.  Calls
            that share A or B must not run at once: each overwrites them while
            it runs.
            Where A and B share memory (``matmul(X, X, inplace=True)``) the
            product runs without it, as for read-only inputs.  With beta ≠ 0
            it mixes C's blocks through a change of basis, so C's own error
            is normwise, about ε·‖beta·out‖, and an Inf or NaN in ``out``
            reaches the entries it is mixed with as NaN (README, "Python API").

    Raises:
        ValueError: for arrays of the wrong kind, dtype, shape or layout, and
            for alpha or beta that are not real numbers.
    """
    inplace = true_or_false(inplace, "inplace")  # "False" had run MSMES
    # A prepared call never runs MSMES: with inplace, only where the table keeps it out
    done = None if inplace and _may_run_in_place(A, B) else prepared_calls.issue(A, B, out, alpha, beta)
    if done is not None:
        return done
    from .runtime.arguments import real_scalar

    A, B, out = (_on_host(x, name) for x, name in ((A, "A"), (B, "B"), (out, "out")))
    dtype = _float_dtype(A)
    alpha, beta = real_scalar(alpha, "alpha", dtype), real_scalar(beta, "beta", dtype)
    if isinstance(A, np.ndarray) and isinstance(B, np.ndarray):
        return _host_matmul(A, B, out, alpha, beta, inplace)
    from .runtime.cupy_backend import cupy_available

    if not cupy_available():
        raise ValueError(
            f"A and B are {type(A).__name__} and {type(B).__name__}: bilinear.matmul takes CuPy matrices (with CuPy "
            "and a GPU) or NumPy matrices (on the CPU)"
        )
    import cupy

    from .dispatch import dispatch, in_place_choice
    from .runtime import tsm2
    from .runtime.cuda import current_device
    from .runtime.views import overlaps

    prepared_calls.array_types[cupy.ndarray] = _locate_gpu_array
    prepared_calls.current_device = current_device
    given = out
    A, B, out, call = tsm2.validate(A, B, out, beta)
    if dtype is None:  # came through DLPack (a torch tensor's dtype is not NumPy's): its range now
        alpha, beta = real_scalar(alpha, "alpha", A.dtype), real_scalar(beta, "beta", A.dtype)
    if alpha == 0:  # as BLAS: A and B are not read (a TSM2 kernel's 0·NaN would be NaN)
        if out is None:  # validate refused beta ≠ 0 without out
            return cupy.zeros((call.m, call.n), dtype=A.dtype)
        out[...] = beta * out if beta else 0
        return out
    gpu_name = _gpu_name()
    choice = dispatch(call.m, call.k, call.n, str(A.dtype), device=gpu_name)
    if choice.kernel in ("tsm2r", "tsm2l"):
        result = tsm2.run_validated(A, B, out, call, alpha, beta, choice.kernel, choice.params)
        if call.k:
            launch = tsm2.plan(call, choice.kernel, choice.params, cupy.cuda.Device().id)
            prepared_calls.remember(A, B, given, launch.bound(call), lambda: cupy.empty((call.m, call.n), dtype=A.dtype))
        return result
    if out is None:
        out = cupy.empty((call.m, call.n), dtype=A.dtype)
    # MSMES overwrites A while it reads B: where they share memory, the product without it
    in_place = (in_place_choice(call.m, call.k, call.n, str(A.dtype), device=gpu_name)
                if inplace and not overlaps(A, B) else None)
    if in_place is not None:
        scheme, levels = in_place
        return _in_place_product(str(A.dtype), "cupy", levels, scheme)(A, B, out=out, alpha=alpha, beta=beta)
    # The fast scheme takes row-major operands only (compiled only when they are).
    fast = choice.kernel == "recursive" and choice.config is not None and all(x.flags.c_contiguous for x in (A, B, out))
    product = _fast_product(choice.config) if fast else None
    room = _fits(product, A, B) if product is not None and _takes(product, beta) else Room(False)
    if room.fits:
        _run_fast(product, A, B, out, alpha, beta, room)
        if call.k:  # the checked path validated this signature: later calls skip the checks
            run = _remembered_fast(product, room)
            prepared_calls.remember(A, B, given, run, lambda: cupy.empty((call.m, call.n), dtype=A.dtype))
        return out
    gpu = _gpu_backend()
    gpu.gemm(A, B, out, alpha, beta)  # row-major views: validate checked them
    if choice.kernel == "cublas" and call.k:  # (not MSMES: it returned above)
        from .runtime.views import blas_leading_dimension as ld

        run = gpu.bound_gemm(call.m, call.k, call.n, ld(A), ld(B), ld(out), A.dtype)  # as gemm just called it
        prepared_calls.remember(A, B, given, run, lambda: cupy.empty((call.m, call.n), dtype=A.dtype))
    return out




def _on_host(x, name: str):
    """x as a NumPy array (the same memory) where it is a DLPack object in host memory, such as a
    torch CPU tensor: matmul multiplies those on the CPU, as a compiled product does."""
    if x is None or isinstance(x, np.ndarray) or not hasattr(x, "__dlpack_device__"):
        return x
    if x.__dlpack_device__()[0] != DLPACK_CPU:
        return x
    try:
        return np.from_dlpack(x)
    except DLPACK_ERRORS as error:  # a dtype NumPy has not (bfloat16)
        raise ValueError(f"{name} is in host memory but NumPy cannot read it through DLPack: {error}") from None


def _may_run_in_place(A, B) -> bool:
    """Whether ``matmul(A, B, inplace=True)`` may run MSMES: always on NumPy (and for anything the
    checked path must look at), on the GPU where the table measured MSMES faster at this shape."""
    from .dispatch import in_place_choice

    shape_a, shape_b = getattr(A, "shape", ()), getattr(B, "shape", ())
    # (a torch tensor too: in host memory it is NumPy's to multiply, and the GPU's name had needed CuPy)
    if type(A).__module__.partition(".")[0] != "cupy" or len(shape_a) != 2 or len(shape_b) != 2:
        return True
    return in_place_choice(shape_a[0], shape_a[1], shape_b[1], str(A.dtype), device=_gpu_name()) is not None


def _gpu_name() -> str:
    """The current GPU's name, as the dispatch table names the GPUs it holds for."""
    from .runtime.cuda import current_device, device_info

    return device_info(current_device()).name


def _locate_gpu_array(x) -> tuple[int, int]:
    memory = x.data
    return memory.device_id, memory.ptr


_FAST: dict[tuple[str, int, int, str, str, str, int | None], object] = {}
_LAST_FAST: dict[int | None, object] = {}  # per GPU, the fast product matmul ran last there: the one whose workspace it keeps
_GPU: list = []  # the CuPy backend matmul issues cuBLAS calls through, made on first use


def _gpu_backend():
    if not _GPU:
        from .runtime.compiled import make_backend

        _GPU.append(make_backend("cupy"))
    return _GPU[0]


def _device(backend: str) -> int | None:
    """The GPU work is issued to (None for the numpy backend)."""
    if backend != "cupy":
        return None
    from .runtime.cuda import current_device

    return current_device()


def _fast_product(config):
    """The non-perturbing fast scheme the dispatch table measured fastest, compiled once."""
    key = (config.scheme, config.levels, config.breadth, config.dtype, config.launch, config.leaf, _device("cupy"))
    if key not in _FAST:
        from .dispatch import table_path
        from .dispatch_checks import check_row_scheme
        from .paths import algorithms_dir

        product = compile(algorithms_dir() / f"{config.scheme}.bl", dtype=config.dtype, levels=config.levels,
                          breadth=config.breadth, launch=config.launch, leaf=config.leaf, backend="cupy")
        check_row_scheme("recursive", config.scheme, product, table_path())
        _FAST[key] = product
    return _FAST[key]


@dataclass(frozen=True)
class Room:
    """Where a fast product's call fits on the device: at all (else cuBLAS, which needs no workspace);
    the ``budget`` its ozaki leaves run in (None: all of C at once, else tiles of C in that many
    bytes); whether it may ``keep`` its workspace (and its graphs) after the call."""

    fits: bool
    budget: int | None = None
    keep: bool = False


def _run_fast(product, A, B, out, alpha: float, beta: float, room: Room) -> None:
    """The fast product, directly or as a replay (:mod:`bilinear.runtime.graph_cache`), its ozaki
    leaves within the room's budget, set under the product's lock: one product serves every shape,
    and another shape's call may have set another.

    A product that may not keep its workspace runs directly, with no graph to hold it, and gives it
    back to CuPy's pool after the call, where the caller's next allocation finds it.  Mostly that is
    a product of hundreds of ms, whose 1-2 ms of host time run while the GPU works."""
    from .runtime import graph_cache

    _keep_workspace_of(product)
    with product.leaf_budget(room.budget):
        if room.keep:
            graph_cache.run(product, A, B, out, alpha, beta)
            return
        graph_cache.drop(product)  # graphs of earlier calls hold workspace too
        product(A, B, out=out, alpha=alpha, beta=beta)
        product.release_workspace()


def _remembered_fast(product, room: Room):
    """The call a validated signature repeats: the fast product in its first call's room while it
    still holds the workspace of this shape, else in the room free then (its workspace went back to
    the pool, where the caller may have taken it since, or another shape or scheme let it go), or
    cuBLAS where nothing fits then."""

    def run(A, B, out, alpha: float, beta: float) -> None:
        if not _takes(product, beta):  # the signature was prepared by a call with beta = 0
            _gpu_backend().gemm(A, B, out, alpha, beta)
            return
        now = room if room.keep and _holds_workspace_for(product, A, B) else _fits(product, A, B)
        if now.fits:
            _run_fast(product, A, B, out, alpha, beta, now)
        else:
            _gpu_backend().gemm(A, B, out, alpha, beta)

    return run


def _takes(product, beta: float) -> bool:
    """Whether the fast product can run a call with this beta: one that computes C = A*B over C (rsmm)
    takes beta = 0 only, so a call with beta ≠ 0 goes to cuBLAS (it had raised the product's refusal)."""
    return beta == 0 or not product.overwrites_c


def _holds_workspace_for(product, A, B) -> bool:
    """Whether the product's last call was at this shape and it still holds that call's workspace."""
    return product.executor.last_ran(A.shape[0], A.shape[1], B.shape[1]) and product.held_workspace_bytes() > 0


def _keep_workspace_of(product) -> None:
    """The other fast products let their workspace go (and their graphs, which hold it): matmul
    keeps one scheme's memory, the one it runs now, not every scheme's it ever ran (before, the
    H100's grid check held 75 GB after twenty shapes, and its next allocation failed).  On each GPU
    apart: the others' memory is not this one's."""
    from .runtime import graph_cache

    device = _device("cupy")
    if _LAST_FAST.get(device) is product:
        return
    for key, other in _FAST.items():
        if other is not product and key[-1] == device:
            graph_cache.drop(other)
            other.release_workspace()
    _LAST_FAST[device] = product


def _fits(product, A, B) -> Room:
    """The room a fast product's call has once the other fast schemes let their workspace go.

    Its workspace for all of C at once where that is free, else its ozaki leaves in tiles of C that
    fit what is (the room :meth:`tile_budget` gave them).  It keeps the workspace only where as
    much stays free beside it: after matmul at FP64 24576 on the H100 it held 58 GB, nearly all that
    had been free, and the caller's next 4.5 GiB allocation failed; in tiles it holds what was free."""
    _keep_workspace_of(product)
    M, K, N = A.shape[0], A.shape[1], B.shape[1]
    free = _free_bytes(product)
    with product.leaf_budget(None):
        needed = product.workspace_bytes(M, K, N)
        if needed <= free:
            return Room(True, None, keep=2 * needed <= free)
        budget = product.tile_budget(M, K, N, free)
        return Room(False) if budget is None else Room(True, budget)


def _free_bytes(product) -> int:
    """Device bytes a fast product's workspace may take: free on the device or in CuPy's pool, and its own, reused."""
    import cupy

    return cupy.cuda.Device().mem_info[0] + cupy.get_default_memory_pool().free_bytes() + product.held_workspace_bytes()


def _float_dtype(A: Any):
    """A's dtype where it is one matmul takes, for the range of alpha and beta (the checks after
    refuse the others)."""
    dtype = getattr(A, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) and dtype in (np.float32, np.float64) else None


def _host_matmul(A: np.ndarray, B: np.ndarray, out, alpha: float, beta: float, inplace: bool) -> np.ndarray:
    """matmul on NumPy matrices: NumPy's product, or MSMES on the NumPy backend with ``inplace``."""
    from .runtime.views import (check_out_apart, check_unmasked, check_writable, convert_hint, dtype_shown, is_row_major,
                                overlaps, with_line_strides)

    for name, array in (("A", A), ("B", B), ("out", out)):
        check_unmasked(array, name)
    for name, array in (("A", A), ("B", B)):
        if array.ndim != 2 or array.dtype not in (np.float32, np.float64):
            raise ValueError(f"{name} must be a float32 or float64 matrix, not {array.ndim}-D {dtype_shown(array.dtype)}"
                             + (convert_hint(name, array.dtype) if array.ndim == 2 else ""))
    if A.dtype != B.dtype or A.shape[1] != B.shape[0]:
        raise ValueError(f"A is {A.shape} {A.dtype} and B is {B.shape} {B.dtype}: dtypes or inner dimensions differ")
    if out is None:
        if beta != 0:
            raise ValueError("beta ≠ 0 needs out= (the C to accumulate into)")
        out = np.zeros((A.shape[0], B.shape[1]), dtype=A.dtype)
    elif not isinstance(out, np.ndarray) or out.shape != (A.shape[0], B.shape[1]) or out.dtype != A.dtype:
        given = (f"a {type(out).__name__}" if not isinstance(out, np.ndarray) else dtype_shown(out.dtype)
                 if out.shape == (A.shape[0], B.shape[1]) else f"{'x'.join(map(str, out.shape))} {dtype_shown(out.dtype)}")
        raise ValueError(f"out must be a {A.shape[0]}x{B.shape[1]} {A.dtype} NumPy matrix, not {given}")
    else:
        check_writable(out, "out")
        check_out_apart(out, A, B)
    # MSMES slices blocks out of each, and overwrites A and B while it runs (x[None, :] is row-major to
    # the product, which gives a line its stride first)
    if inplace and all(is_row_major(with_line_strides(x, np)) for x in (A, B, out)) \
            and A.flags.writeable and B.flags.writeable and not overlaps(A, B):
        return _in_place_product(str(A.dtype), "numpy")(A, B, out=out, alpha=alpha, beta=beta)
    if alpha == 0:  # as BLAS: A and B are not read, so a NaN in them reaches nothing
        out[...] = beta * out if beta else 0
        return out
    product = A @ B
    out[...] = alpha * product + beta * out if beta else alpha * product
    return out
