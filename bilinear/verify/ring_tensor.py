"""The Brent equations as one exact dense integer tensor, for the rings other than Q: Σ_r u·v·w against the classical tensor.

What :mod:`bilinear.verify.rings` checks GF(p) residues and Q(i)'s real and
imaginary parts with (small schemes: the whole tensor is held).  Over Q
there is one check, :mod:`bilinear.verify.tensor`, for every size.
"""

from __future__ import annotations

import numpy as np

from ..ir import Shape

SHOWN_TERMS = 4  # how many wrong terms of one C block a diagnostic names


def block_indices(shape: Shape) -> tuple[list, list, list]:
    """(row, col) of every A, B and C block, row-major, 1-based."""
    return (
        [(i, j) for i in range(1, shape.m + 1) for j in range(1, shape.k + 1)],
        [(i, j) for i in range(1, shape.k + 1) for j in range(1, shape.n + 1)],
        [(i, j) for i in range(1, shape.m + 1) for j in range(1, shape.n + 1)],
    )


def classical_tensor(shape: Shape) -> np.ndarray:
    tensor = np.zeros((shape.m * shape.k, shape.k * shape.n, shape.m * shape.n), dtype=object)
    for i in range(shape.m):
        for l in range(shape.k):
            for j in range(shape.n):
                tensor[i * shape.k + l, l * shape.n + j, i * shape.n + j] = 1
    return tensor


def brent_tensor(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Σ_r u[a,r]·v[b,r]·w[c,r] for integer tables, exactly.

    Float64 BLAS where every partial sum is an integer below 2⁵² (exact
    there), int64 where none can overflow, Python integers otherwise; one A
    block at a time, so memory stays at (B blocks × products).
    """
    bound = max(1, *(int(np.abs(t).max()) if t.size else 1 for t in (u, v, w)))
    worst = bound**3 * max(1, u.shape[1])
    dtype = np.float64 if worst < 2**52 else np.int64 if worst < 2**62 else object
    u, v, w = (t.astype(dtype) for t in (u, v, w))
    wt = np.ascontiguousarray(w.T)
    out = np.empty((u.shape[0], v.shape[0], w.shape[0]), dtype=dtype)
    for a in range(u.shape[0]):
        out[a] = (v * u[a]) @ wt
    return out.astype(np.int64) if dtype is np.float64 else out
