"""The numbers a product's call and queries take: alpha and beta as BLAS takes them, and sizes."""

from __future__ import annotations

import decimal
import functools
import math
import numbers
from typing import Any

import numpy as np

from ..diagnostics import brief


def real_scalar(value: Any, name: str, dtype: Any = None) -> float:
    """``value`` as a float when it is a real number (Python, NumPy, Fraction or Decimal; 0-d arrays
    too), finite in ``dtype`` where one is given (1e39 is inf in float32), and then as ``dtype``
    holds it, as BLAS takes it: a beta of 1e-46 is 0 in float32, so C is not read.

    Raises:
        ValueError: for complex numbers, None, strings, arrays with elements and the like; for a
            number past ``dtype``'s range.
    """
    # NumPy registers timedelta64 as an Integral; NumPy's own arithmetic refuses it against floats.  (A
    # Python float or int, the usual alpha and beta, skips the ABC checks: they cost each call microseconds.)
    if type(value) not in (float, int) and (isinstance(value, (bool, np.bool_, np.timedelta64)) or not isinstance(
            value, (numbers.Real, decimal.Decimal, np.ndarray))):
        raise ValueError(f"{name} must be a real number, not {type(value).__name__} {value!r}")  # noqa: TRY004 - documented
    if isinstance(value, np.ndarray) and (value.ndim != 0 or value.dtype.kind not in "iuf"):
        raise ValueError(f"{name} must be a real number, not an array of shape {value.shape} ({value.dtype})")
    try:
        number = float(value)
    except OverflowError:  # an integer or Fraction past the float range
        number = math.inf
    except ValueError:  # Decimal's sNaN
        number = math.nan
    if math.isinf(number) and _finite(value):  # 10**400, Decimal('1e400'): finite, yet inf as a float
        raise ValueError(f"{name} must be within float64's range (its largest is {np.finfo(np.float64).max!s}), "
                         f"not {_shown(value)}")
    if not math.isfinite(number):  # inf or NaN makes every element of the result NaN
        raise ValueError(f"{name} must be a finite number, not {_shown(value)}")
    if dtype is not None and abs(number) >= rounds_to_inf(dtype):
        raise ValueError(f"{name} = {number:g} is past {np.dtype(dtype).name}'s range (its largest is "
                         f"{np.finfo(dtype).max!s}): the product would be inf or NaN")
    return number if dtype is None else float(np.dtype(dtype).type(number))


@functools.cache
def rounds_to_inf(dtype: Any) -> float:
    """The least magnitude that rounds to inf in ``dtype``: its largest and half an ulp (float32's
    largest written as 3.4028235e38 rounds down to it; float64's bound is inf itself)."""
    largest = np.finfo(dtype).max
    return float(largest) + float(largest - np.nextafter(largest, np.zeros_like(largest))) / 2


def _finite(value: Any) -> bool:
    """Whether a real number is finite in itself (a Decimal or long double past float64's range is)."""
    if isinstance(value, numbers.Rational):
        return True
    if isinstance(value, decimal.Decimal):
        return value.is_finite()
    return bool(np.isfinite(value)) if isinstance(value, (np.ndarray, np.floating)) else math.isfinite(value)


def _shown(value: Any) -> str:
    """A number for a message: an integer past the float range by its size, anything else its text cut
    short (Fraction(10**5000)'s text is past Python's digit limit)."""
    if isinstance(value, (int, np.integer)):
        return f"an integer of {int(value).bit_length()} bits"
    try:
        return brief(str(value))
    except ValueError:
        return f"a {type(value).__name__} past the float range"


def check_sizes(M: Any, K: Any, N: Any) -> tuple[int, int, int]:
    """M, K and N as Python integers (NumPy's wrapped in int64: 2**31 cubed gave 4.6e18 bytes).

    Raises:
        ValueError: unless they are whole numbers of at least 0 (-4 had given 0 bytes).
    """
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in (M, K, N)):
        raise ValueError(f"M, K and N must be whole numbers of at least 0, not {M!r}, {K!r}, {N!r}")
    return int(M), int(K), int(N)


def check_inner_dimensions(A: Any, B: Any) -> None:
    """Raise ValueError unless A's columns are B's rows."""
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A is {A.shape[0]}x{A.shape[1]} and B is {B.shape[0]}x{B.shape[1]}: inner dimensions differ")
