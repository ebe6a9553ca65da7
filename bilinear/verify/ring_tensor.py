"""The Brent equations as one exact dense integer tensor (for GF(p), Q(i) and the catalogue tally): Σ_r u·v·w against the classical tensor.

What :mod:`bilinear.verify.rings` checks GF(p) and Q(i) schemes with, and
:func:`wrong_over_q`, the check over Q for schemes with thousands of
products (the catalogue tally's), which
:func:`~bilinear.verify.algorithm.verify_algorithm` answers with readable
diagnostics at a higher cost.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..ir import Algorithm, Shape, block_name
from .expand import Expansion

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


def wrong_over_q(algorithm: Algorithm) -> tuple[str, ...]:
    """The C blocks whose Brent equations fail over Q, by the exact integer tensor check.

    The same equations :func:`~bilinear.verify.algorithm.verify_algorithm`
    checks with readable diagnostics, as one tensor product: what the
    catalogue tally uses for schemes with thousands of products.
    """
    (u, v, w), scale = scaled_tables(algorithm)
    computed = brent_tensor(u, v, w)
    expected = classical_tensor(algorithm.shape) * scale
    blocks = block_indices(algorithm.shape)[2]
    return tuple(block_name("C", *blocks[c]) for c in range(len(blocks)) if (computed[:, :, c] != expected[:, :, c]).any())


def _sparse_tables(algorithm: Algorithm) -> list[list[tuple[int, int, Fraction]]]:
    """U, V, W as (row, product, coefficient) triples: straight from the forms when the algorithm
    has no named sums (thousands of products read in a moment), through the expansion otherwise."""
    shape = algorithm.shape
    index = [{b: i for i, b in enumerate(shape.blocks(op))} for op in "ABC"]
    if algorithm.sums:
        return [
            [(i, r, c) for i, row in enumerate(table) for r, c in enumerate(row) if c]
            for table in Expansion(algorithm).tables()
        ]
    position = {p.name: r for r, p in enumerate(algorithm.products)}
    u = [(index[0][name], r, c) for r, p in enumerate(algorithm.products) for name, c in p.left.terms]
    v = [(index[1][name], r, c) for r, p in enumerate(algorithm.products) for name, c in p.right.terms]
    w = [(index[2][o.block], position[name], c) for o in algorithm.outputs for name, c in o.form.terms]
    return [u, v, w]


def scaled_tables(algorithm: Algorithm) -> tuple[list[np.ndarray], int]:
    """U, V, W as integer arrays times their common denominators, and the product of those."""
    sizes = [len(algorithm.shape.blocks(op)) for op in "ABC"]
    tables, scale = [], 1
    for size, triples in zip(sizes, _sparse_tables(algorithm)):
        denominator = math.lcm(1, *(c.denominator for _, _, c in triples))
        table = np.zeros((size, algorithm.rank), dtype=object)
        for i, r, c in triples:
            table[i, r] = c.numerator * (denominator // c.denominator)
        tables.append(table)
        scale *= denominator
    return tables, scale
