"""Repeated small products issued with the least host work: ``bilinear.matmul``'s prepared calls.

A product that takes microseconds on the GPU is bound by the host.  On the H100 ``cupy.matmul``
spent 22-33 µs of host time per call and ``bilinear.matmul``'s checked path 36-91 µs
(``benchmarks/host_overhead.py``), so matmul lost to cuBLAS on exactly the products where its
TSM2 kernels are fastest.  Once a call *signature* (the operands' types, shapes, strides, dtypes
and the 16-byte alignment of their addresses) has passed the checked path, what a call of it needs
is kept: the backend's cuBLAS call, or the TSM2 launch with its validated
:class:`~bilinear.runtime.tsm2.Call`.  A later call of that signature checks only what the
signature does not fix (``out`` apart from A and B, plain real scalars, ``beta == 0`` without
``out``) and issues one cuBLAS call or one kernel launch; anything else goes back to the checked
path, which raises the usual errors.
"""

from __future__ import annotations

from typing import Any, Callable

from .arguments import rounds_to_inf
from .views import memory_span

#: Signatures kept; past this the oldest go (a program of ever-new shapes stays bounded).
LIMIT = 1024
_prepared: dict[tuple, Callable] = {}
#: The array types a signature is taken of, each with how to find an array's (device, address)
#: (CuPy's ndarray, once matmul has seen one: kernels and cuBLAS handles are per device).
array_types: dict[type, Callable[[Any], tuple[int, int]]] = {}


def _one_device() -> int:
    return -1


#: The device work is issued to now (matmul sets CuPy's): a call prepared there runs only there,
#: its operands on another device being refused by the checked path.
current_device: Callable[[], int] = _one_device


def signature(A: Any, B: Any, out: Any) -> tuple | None:
    """What decides a call's kernel and validity apart from addresses; None for anything but
    arrays of a known type (those always take the checked path)."""
    kind = type(A)
    locate = array_types.get(kind)
    if locate is None or type(B) is not kind or (out is not None and type(out) is not kind):
        return None
    # each operand's device: a launch and its cuBLAS handle are bound to one
    (device, a), (b_device, b) = locate(A), locate(B)
    key = (current_device(), device, A.shape, A.strides, A.dtype, a % 16, b_device, B.shape, B.strides, B.dtype, b % 16)
    if out is None:
        return key
    out_device, o = locate(out)
    return key + (out_device, out.shape, out.strides, out.dtype, o % 16)


def issue(A: Any, B: Any, out: Any, alpha: Any, beta: Any):
    """``out`` after a prepared call of this signature, or None when there is none (or this call
    needs the checked path)."""
    if type(alpha) not in (int, float) or type(beta) not in (int, float) or alpha == 0:
        return None  # alpha = 0 reads neither A nor B: the checked path says so
    key = signature(A, B, out)
    call = _prepared.get(key) if key is not None else None
    return None if call is None else call(A, B, out, alpha, beta)


def remember(A: Any, B: Any, out: Any, run: Callable[[Any, Any, Any, float, float], None], empty: Callable[[], Any]) -> None:
    """Keep ``run(A, B, out, alpha, beta)`` for calls with this call's signature, which the
    checked path has just validated; ``empty()`` makes an ``out`` for calls without one."""
    key = signature(A, B, out)
    if key is None or 0 in A.shape or 0 in B.shape:
        return
    if len(_prepared) >= LIMIT:
        del _prepared[next(iter(_prepared))]
    a_extent, b_extent = _extent(A), _extent(B)
    out_extent = None if out is None else _extent(out)
    locate = array_types[type(A)]
    past = rounds_to_inf(A.dtype)  # the checked path's range (real_scalar)
    held = A.dtype.type  # and its scalars as the dtype holds them (beta = 1e-46 is float32's 0)

    def call(A, B, out, alpha, beta):
        if not (abs(alpha) < past and abs(beta) < past):
            return None  # NaN, inf, or past the dtype's range (1e39 in float32): the checked path refuses it
        try:
            alpha, beta = float(held(alpha)), float(held(beta))
        except OverflowError:  # an integer past float64's range (its bound is inf): the checked path refuses it
            return None
        if alpha == 0:
            return None  # 1e-46 is float32's 0: the checked path reads neither A nor B
        if out is None:
            if beta != 0:
                return None  # the checked path says why out is needed
            out = empty()
        else:  # the signature fixes every extent; only the addresses are new
            o, a, b = locate(out)[1], locate(A)[1], locate(B)[1]
            if (o < a + a_extent and a < o + out_extent) or (o < b + b_extent and b < o + out_extent):
                return None
        run(A, B, out, alpha, beta)
        return out

    _prepared[key] = call


def forget() -> None:
    """Drop every prepared call (tests; a changed dispatch table)."""
    _prepared.clear()


def _extent(view: Any) -> int:
    start, stop = memory_span(view)
    return stop - start
