"""Matrix views and their layout: the one place that knows what a kernel can read.

A *view* is a 2-D NumPy or CuPy array, row-major with unit column stride and
any row stride of at least one row (a C-contiguous matrix, or a block sliced
out of one: ``big[i:j, k:l]``).  Everything the runtime asks of a view's
layout is answered here: where its bytes are, whether two views share memory,
its leading dimension (for cuBLAS, for the generated kernels, for TSM2), and
whether its rows start on the boundaries a vectorised load needs.

Three checks of a whole view exist on purpose, one per kind of caller, each
with the message its users see: :func:`is_row_major` is what a compiled
product accepts (it slices blocks out of its operands, so each needs a real
row stride), :func:`leading_dimension` what a TSM2 call accepts (empty and
single-row matrices may have any stride, as CuPy reports them), and
:func:`kernel_leading_dimension` what a fused product launch accepts (a CuPy
view of the stage's dtype and shape, a pitch that fits the kernel's int).
The TSM2 model's ``access_bytes`` stays in ``bilinear.lower.tsm2_params``:
lowering chooses kernel parameters with it and may not import the runtime.
"""

from __future__ import annotations

import sys

from typing import Any

import numpy as np

View = Any  # a 2-D numpy.ndarray or cupy.ndarray, possibly a slice of a larger one

FORTRAN_HINT = " It is column-major (Fortran order): pass cupy.ascontiguousarray(...) or use cuBLAS."
# out receives the product: a contiguous copy would, and out would stay as it was
OUT_HINT = " It is column-major (Fortran order): the product is written into out, so give a row-major one."


# --- where a view's bytes are -------------------------------------------------------------------


def address(view: View) -> int:
    """The address of a view's first element (device or host)."""
    # (a NumPy array's .data is a new memoryview each time: asked first, it cost every call microseconds)
    return view.__array_interface__["data"][0] if isinstance(view, np.ndarray) else view.data.ptr


def memory_span(view: View, start: int | None = None) -> tuple[int, int]:
    """The byte range a row-major matrix view touches (empty for an empty view); ``start``: its
    :func:`address`, where the caller has it."""
    start = address(view) if start is None else start
    if view.size == 0:
        return start, start
    return start, start + (view.shape[0] - 1) * view.strides[0] + view.shape[1] * view.itemsize


def spans_meet(x: View, y: View, at: tuple[int | None, int | None] = (None, None)) -> bool:
    """Whether two views' byte ranges intersect (conservative: column blocks of one matrix meet);
    ``at``: their addresses, where the caller has them."""
    (x0, x1), (y0, y1) = memory_span(x, at[0]), memory_span(y, at[1])
    return x0 < y1 and y0 < x1


def overlaps(x: View, y: View) -> bool:
    """Whether two views share bytes of some element: exactly for row-major views with one row
    stride (``big[:, :4]`` and ``big[:, 4:]`` do not), NumPy's answer for other NumPy arrays, and
    by byte ranges for other device views."""
    if x.size == 0 or y.size == 0:
        return False
    both_host = isinstance(x, np.ndarray) and isinstance(y, np.ndarray)  # (asked by hasattr, each built a dict)
    if not (is_row_major(x) and is_row_major(y)):
        return bool(np.shares_memory(x, y)) if both_host else spans_meet(x, y)
    at = address(x), address(y)
    if not spans_meet(x, y, at):
        return False
    if x.shape[0] == y.shape[0] == 1:  # two single rows are two runs of bytes that meet
        return True
    strides = {view.strides[0] for view in (x, y) if view.shape[0] > 1}  # each at least its row's width
    if len(strides) > 1:  # row strides that differ: NumPy's answer, or on the device the byte ranges
        return bool(np.shares_memory(x, y)) if both_host else True
    stride = strides.pop()
    return rows_meet(at[1] - at[0], stride, (x.shape[0], x.shape[1] * x.itemsize),
                     (y.shape[0], y.shape[1] * y.itemsize))


def rows_meet(offset: int, stride: int, x: tuple[int, int], y: tuple[int, int]) -> bool:
    """Whether x's rows [i·stride, i·stride + width) (i < rows) meet y's, which start ``offset``
    bytes later: some t = i - j with offset - x_width < t·stride < offset + y_width."""
    (x_rows, x_width), (y_rows, y_width) = x, y
    t = max((offset - x_width) // stride + 1, 1 - y_rows)
    return t <= x_rows - 1 and t * stride < offset + y_width


def check_out_apart(out: View, A: View, B: View) -> None:
    """Refuse an ``out`` that shares memory with an operand (the product would read what it wrote)."""
    if overlaps(out, A) or overlaps(out, B):
        raise ValueError("out must not overlap A or B")


def is_masked(array: Any) -> bool:
    """Whether ``array`` is a NumPy masked array."""
    # numpy.ma only where something imported it (no masked array exists otherwise): importing it
    # costs a first call milliseconds, which skewed the distributed balancer's first measurement
    masked = sys.modules.get("numpy.ma")
    return masked is not None and isinstance(array, masked.MaskedArray)


def masked_refusal(name: str) -> str:
    """Why a masked ``name`` (A, B or out) is refused, and what to pass instead."""
    how = "np.asarray(out) (the product goes into its data)" if name == "out" else \
        f"{name}.filled(0) (masked entries as 0) or np.asarray({name}) (its data as stored)"
    return f"{name} is a masked array, and bilinear multiplies plain matrices: pass {how}"


def check_unmasked(array: Any, name: str) -> None:
    """Refuse a NumPy masked array: its data would be multiplied as if no entry were masked, and
    NumPy's own product of masked arrays is no matrix product (the result came out silently wrong)."""
    if is_masked(array):
        raise ValueError(masked_refusal(name))


def on_host(array: Any, xp: Any) -> bool:
    """Whether ``array`` is a NumPy (host) array where the product runs on ``xp``, CuPy."""
    return isinstance(array, np.ndarray) and xp is not np and not isinstance(array, xp.ndarray)


def on_host_refusal(name: str, module: str) -> str:
    fix = (f"the product is written into out, so give a {module} array" if name == "out" else
           f"pass {module}.asarray({name}), or compile with backend='numpy'")
    return f"{name} is a NumPy array (host memory), but this product runs on {module}: {fix}"


DLPACK_CPU = 1  # kDLCPU, DLPack's DLDeviceType for host memory
# what importing a DLPack object raises: NumPy's "Unsupported dtype in DLTensor" (a bfloat16) is a RuntimeError
DLPACK_ERRORS = (BufferError, TypeError, ValueError, RuntimeError)


def from_dlpack(array: Any, name: str, xp: Any) -> Any:
    """An object seen only through DLPack as an ``xp`` array (the same memory), or a ValueError that
    names it: device memory given to NumPy, or what ``xp`` cannot import."""
    device = array.__dlpack_device__()[0] if hasattr(array, "__dlpack_device__") else DLPACK_CPU
    if xp is np and device != DLPACK_CPU:
        raise ValueError(f"{name} is in device memory (DLPack device type {device}), but this product runs on numpy: "
                         f"compile with backend='cupy', or copy {name} to the host")
    try:
        return xp.from_dlpack(array)
    except DLPACK_ERRORS as error:
        if type(error).__module__.startswith(("cupy", "cupy_backends")):  # CUDARuntimeError: the device's, not the argument's
            raise
        raise ValueError(f"{name} cannot be read through DLPack by {xp.__name__}: {error}") from None


def check_on_device(array: Any, name: str, xp: Any) -> None:
    """Refuse a NumPy (host) array given to a product on the GPU (``xp`` CuPy): CuPy's DLPack import
    had raised "CPU arrays cannot be directly imported to CuPy"."""
    if on_host(array, xp):
        raise ValueError(on_host_refusal(name, xp.__name__))


def check_current_device(array: Any, name: str, xp: Any) -> None:
    """Refuse a CuPy array on another GPU than the current one: kernels and cuBLAS run on the current
    device, and given another's memory they fail, or leave the device's context unusable."""
    device = getattr(getattr(array, "device", None), "id", None)
    if xp.__name__ == "cupy" and device is not None and device != (current := xp.cuda.runtime.getDevice()):  # checked path
        raise ValueError(f"{name} is on GPU {device}, but the current device is GPU {current}: call it under "
                         f"`with cupy.cuda.Device({device}):`")


def check_writable(array: Any, name: str, why: str = "bilinear writes the product into it") -> None:
    """Refuse a read-only NumPy array that a call would write (NumPy's own error came after the work)."""
    if isinstance(array, np.ndarray) and not array.flags.writeable:
        raise ValueError(f"{name} is read-only; {why}")


def fingerprint(view: View) -> tuple:
    """A view's address, strides and shape: all a kernel reads of it (a cache key for prepared launches)."""
    return (address(view), view.strides, view.shape)


# --- strides --------------------------------------------------------------------------------------


def with_line_strides(view: View, xp: Any) -> View:
    """A one-row or one-column matrix as a view of the same memory with a C-contiguous matrix's
    stride along its axis of length 1: NumPy and CuPy give ``v[None, :]`` a row stride of 0 and
    ``v[:, None]`` a column stride of 0 (``ascontiguousarray`` keeps them), which
    :func:`is_row_major` would refuse and a kernel would read as the leading dimension."""
    rows, cols = view.shape
    if view.size == 0 or (rows != 1 and cols != 1):
        return view
    strides = (view.strides[0] if rows > 1 else cols * view.itemsize, view.strides[1] if cols > 1 else view.itemsize)
    return view if strides == view.strides else xp.lib.stride_tricks.as_strided(view, strides=strides)


def is_row_major(view: View) -> bool:
    """Unit column stride and a row stride of at least one row, in whole elements: a C-contiguous matrix
    or a row-slice of one (an empty matrix is, whatever strides NumPy gives it)."""
    if view.size == 0:
        return True
    row_stride, column_stride = view.strides
    return (column_stride == view.itemsize and row_stride % view.itemsize == 0
            and row_stride >= view.shape[1] * view.itemsize)


def layout_refusal(view: View, name: str, module: str) -> str:
    """Why ``view`` is not row-major (:func:`is_row_major`), in steps of elements, with the copy that is
    (for ``out``, which receives the product, not a copy: what to give instead)."""
    rows, cols = (stride // view.itemsize for stride in view.strides)
    if any(stride % view.itemsize for stride in view.strides):
        row_bytes, col_bytes = view.strides
        why = (f"{name} steps {row_bytes} bytes a row and {col_bytes} a column, not whole {view.itemsize}-byte elements "
               "(a field of a structured array, or a view as another dtype)")
    # np.broadcast_to: one element, row or column read again and again (along a dimension longer than 1:
    # x[::2][None, :] has a row stride of 0 and one row)
    elif any(step == 0 and extent > 1 for step, extent in zip((rows, cols), view.shape)):
        why = f"{name} steps {rows} element{'s' * (abs(rows) != 1)} a row and {cols} a column (a broadcast view)"
    elif cols != 1:
        layout = "transposed or Fortran-ordered" if abs(rows) == 1 else "a column slice with a step"
        why = f"{name} steps {rows} element{'s' * (abs(rows) != 1)} a row and {cols} a column ({layout})"
    elif rows < 0:
        why = f"{name} steps back {-rows} elements a row (a negative row stride)"
    else:
        why = f"{name} steps {rows} elements a row, less than its {view.shape[1]} columns"
    alias = "np" if module == "numpy" else module
    fix = (f"pass {alias}.ascontiguousarray({name})" if name != "out" else
           "the product is written into out, so give a row-major one (a contiguous copy would receive it instead)")
    return (f"{name} must be row-major with unit column stride (a C-contiguous matrix or a row slice of one); {why}: "
            + fix)


def is_contiguous(view: View) -> bool:
    """One dense row-major block of memory (C order): what a collective sends as one buffer."""
    return bool(view.flags.c_contiguous)


def row_stride(view: View) -> int:
    """The row stride in elements, as the view reports it."""
    return view.strides[0] // view.itemsize


def has_unit_column_stride(view: View) -> bool:
    """Consecutive elements of a row are adjacent (trivially so for a single column)."""
    return view.shape[1] <= 1 or view.strides[1] == view.itemsize


def row_pitch(view: View) -> int | None:
    """The row stride in elements where it is usable: a positive whole number of elements, at
    least the row length; the row length (at least 1) for a view of at most one row, whose
    row stride is never read; None for any other stride."""
    rows, cols = view.shape
    if rows <= 1:
        return max(cols, 1)
    stride, item = view.strides[0], view.itemsize
    if stride <= 0 or stride % item or stride // item < cols:
        return None
    return stride // item


def blas_leading_dimension(view: View) -> int:
    """The leading dimension cuBLAS wants: the row stride, at least the row length."""
    return max(row_stride(view), view.shape[1], 1)


def leading_dimension(view: View, name: str) -> int:
    """The row pitch in elements of a row-major matrix; ValueError for any other layout."""
    rows, cols = view.shape
    if rows == 0 or cols == 0:  # nothing is read or written: CuPy reports zero strides for these
        return max(cols, 1)
    if not has_unit_column_stride(view):
        fortran = rows <= 1 or view.strides[0] == view.itemsize
        raise ValueError(
            f"{name} must be row-major with unit stride along its rows; got strides {view.strides} "
            f"for shape {view.shape} and {view.itemsize}-byte elements.{(OUT_HINT if name == 'out' else FORTRAN_HINT) if fortran else ''}"
        )
    pitch = row_pitch(view)
    if pitch is None:
        raise ValueError(f"{name} has an unusable row stride {view.strides[0]} bytes for shape {view.shape}")
    return pitch


def kernel_leading_dimension(view: View, rows: int, cols: int, dtype: str, what: str) -> int:
    """The row stride in elements of a CuPy view a generated kernel reads as ``rows × cols`` of
    ``dtype``; rejects anything the kernel cannot read (its pitch is a 32-bit int)."""
    import cupy

    if not isinstance(view, cupy.ndarray):
        raise TypeError(f"{what} must be a CuPy array, not {type(view).__name__}")
    if view.dtype != np.dtype(dtype):
        raise ValueError(f"{what} is {view.dtype}, the stage was built for {dtype}")
    if view.shape != (rows, cols):
        raise ValueError(f"{what} has shape {view.shape}, expected {(rows, cols)}")
    if not has_unit_column_stride(view):
        raise ValueError(f"{what} must have unit column stride (got {view.strides[1] // view.itemsize} elements)")
    pitch = row_pitch(view)
    if pitch is None or pitch >= 2**31:
        raise ValueError(f"{what} has an unusable row stride of {view.strides[0]} bytes")
    return pitch


# --- alignment ------------------------------------------------------------------------------------


def rows_aligned(pointer: int, ld: int, elements: int, itemsize: int) -> bool:
    """Every row starts on a multiple of ``elements`` elements: a kernel may move it in pieces of that many."""
    return pointer % (elements * itemsize) == 0 and ld % elements == 0


def vector_aligned(view: View, elements: int) -> bool:
    """:func:`rows_aligned` for a view, at its own address and row stride."""
    return rows_aligned(address(view), row_stride(view), elements, view.itemsize)


def dtype_shown(dtype: Any) -> str:
    """``dtype`` as a refusal names it: a float of the other byte order says so ('>f8' alone had
    read as a contradiction beside "compiled for float64")."""
    dtype = np.dtype(dtype)
    native = dtype.newbyteorder("=")
    return f"{dtype.str} ({native} in the other byte order)" if not dtype.isnative and native.kind == "f" else str(dtype)


def convert_hint(name: str, dtype: Any, wanted: str | None = None) -> str:
    """How to pass ``name`` of ``dtype`` where ``wanted`` (float64 if None or unknown) is taken."""
    if np.dtype(dtype).kind == "c":  # a cast to a real type would drop the imaginary part
        return ": complex products are not supported; multiply the real and imaginary parts as real matrices"
    wanted = wanted or (str(np.dtype(dtype).newbyteorder("=")) if np.dtype(dtype).kind == "f" else "float64")
    wanted = wanted if wanted in ("float32", "float64") else "float64"
    if name == "out":  # it receives the product: a converted copy would, and out would stay as it was
        return f": the product is written into out, so give a {wanted} array (a converted copy would receive it instead)"
    return f": pass {name}.astype(np.{wanted})"
