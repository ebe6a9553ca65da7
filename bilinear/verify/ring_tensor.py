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
    checks with readable diagnostics, one A block at a time: the slice of
    Σ_r u·v·w for A block a is V·diag(u_a)·Wᵀ over the products that use a
    (a matrix product), compared with the classical slice and dropped, so
    memory stays at one (B blocks × C blocks) slice and the work scales with
    the products each A block meets.  Each slice is computed in float64
    BLAS only where a bound on its partial sums, Σ_r |u_ar|·max|v_r|·max|w_r|
    plus the scale (in Python integers), proves every one an integer below
    2⁵² (exact in float64, whatever order BLAS adds in), in int64 below 2⁶²,
    in Python integers otherwise.  What the catalogue tally
    uses for schemes with thousands of products (PLinOpt's ⟨32,32,32;15096⟩).
    """
    (u, v, w), scale = _integer_tables(algorithm)
    vt, wt = np.ascontiguousarray(v.T), np.ascontiguousarray(w.T)  # rows are products: a slice picks rows
    ints = all(t.dtype == np.int64 for t in (u, v, w))
    floats = [t.astype(np.float64) for t in (u, vt, wt)] if ints and scale < _FLOAT_EXACT else None
    peaks = np.abs(vt).max(axis=1, initial=0).astype(object) * np.abs(wt).max(axis=1, initial=0).astype(object)
    k, n = algorithm.shape.k, algorithm.shape.n
    wrong = np.zeros(w.shape[0], dtype=bool)
    columns = np.arange(n)
    for a in range(u.shape[0]):
        used = np.flatnonzero(u[a])
        bound = int(np.abs(u[a, used]).astype(object) @ peaks[used]) if used.size else 0
        if floats is not None and bound + scale < _FLOAT_EXACT:
            got = (floats[1][used] * floats[0][a, used, None]).T @ floats[2][used]
        else:
            dtype = np.int64 if ints and bound + scale < 2**62 else object
            got = (vt[used].astype(dtype) * u[a, used, None].astype(dtype)).T @ wt[used].astype(dtype)
        i, l = divmod(a, k)
        got[l * n + columns, i * n + columns] -= scale  # the classical slice: A[i,l]·B[l,j] in C[i,j]
        wrong |= (got != 0).any(axis=0)
    blocks = block_indices(algorithm.shape)[2]
    return tuple(block_name("C", *blocks[c]) for c in np.flatnonzero(wrong).tolist())


_FLOAT_EXACT = 2**52  # every integer of magnitude up to 2⁵³ is exact in float64


def _integer_tables(algorithm: Algorithm) -> tuple[list[np.ndarray], int]:
    """U, V, W times their common denominators as dense int64 arrays (object where an entry needs more), and the scale."""
    sizes = [len(algorithm.shape.blocks(op)) for op in "ABC"]
    tables, scale = [], 1
    for size, triples in zip(sizes, _sparse_tables(algorithm)):
        denominator = math.lcm(1, *(c.denominator for _, _, c in triples))
        values = [c.numerator * (denominator // c.denominator) for _, _, c in triples]
        dtype = np.int64 if all(abs(x) < 2**62 for x in values) else object
        table = np.zeros((size, algorithm.rank), dtype=dtype)
        if triples:
            rows, products = (np.fromiter((t[j] for t in triples), dtype=np.int64, count=len(triples)) for j in (0, 1))
            np.add.at(table, (rows, products), np.asarray(values, dtype=dtype))
        tables.append(table)
        scale *= denominator
    return tables, scale


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
