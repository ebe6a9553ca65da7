"""The Brent equations over sparse integer arrays: exact, and near-linear in nonzeros.

An algorithm's tensor Σ_r u_r ⊗ v_r ⊗ w_r has, per product, as many
nonzeros as nnz(u_r)·nnz(v_r)·nnz(w_r); this module enumerates exactly
those with NumPy, never a dense ⟨mk × kn × mn⟩ array or a per-term Python
object, and sums them exactly.  Each column is scaled to integers by the
least common multiple of its denominators and every product's term by a
common denominator L, so all arithmetic is on integers: int64 when a bound
on the sum of absolute values proves it cannot overflow, Python integers
(NumPy object arrays) otherwise.

Assumes: factors u_r over A blocks, v_r over B blocks, w_r over C blocks as
:class:`~bilinear.ir.Form` (named sums expanded; see verify.expand).
Ensures: :func:`residual_entries` returns exactly the nonzero entries of
(computed tensor − classical tensor) as Fractions, keyed by block names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from ..ir import Form, Shape

_INT64_SAFE = 2**62


class _Side:
    """One of U, V, W as flat COO arrays, columns scaled to integers."""

    def __init__(self, columns: Sequence[Form], position: dict[str, int]):
        import numpy as np
        rows, numerators, counts, denominators = [], [], [], []
        for form in columns:
            scale = math.lcm(*(c.denominator for _, c in form.terms)) if form.terms else 1
            denominators.append(scale)
            counts.append(len(form.terms))
            for name, coef in form.terms:
                rows.append(position[name])
                numerators.append(coef.numerator * (scale // coef.denominator))
        self.rows = np.asarray(rows, dtype=np.int64)
        self.numerators = numerators  # Python ints: exact whatever their size
        self.counts = np.asarray(counts, dtype=np.int64)
        self.starts = np.concatenate(([0], np.cumsum(self.counts)[:-1])).astype(np.int64)
        self.denominators = denominators
        self.abs_sums = [0] * len(columns)
        for r, (start, count) in enumerate(zip(self.starts.tolist(), self.counts.tolist())):
            self.abs_sums[r] = sum(abs(x) for x in numerators[start : start + count])


def _positions(shape: Shape, operand: str) -> dict[str, int]:
    return {name: index for index, name in enumerate(shape.blocks(operand))}


def _triples(u: _Side, v: _Side, w: _Side) -> tuple:  # four int64 arrays
    """Per nonzero of every u_r ⊗ v_r ⊗ w_r: its product and its entries' indices in u, v, w."""
    import numpy as np
    sizes = u.counts * v.counts * w.counts
    total = int(sizes.sum())
    product = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    cv, cw = v.counts[product], w.counts[product]
    iu = u.starts[product] + local // (cv * cw)
    iv = v.starts[product] + (local // cw) % cv
    iw = w.starts[product] + local % cw
    return product, iu, iv, iw


def residual_entries(
    shape: Shape, left: Sequence[Form], right: Sequence[Form], outputs: Sequence[Form]
) -> dict[tuple[str, str, str], Fraction]:
    """Nonzero entries of Σ_r u_r ⊗ v_r ⊗ w_r minus the classical ⟨m,k,n⟩ tensor.

    Keys are (A block, B block, C block); ``outputs[r]`` is w_r, the r-th
    product's weight in every C block.
    """
    import numpy as np
    blocks = {operand: shape.blocks(operand) for operand in "ABC"}
    u = _Side(left, _positions(shape, "A"))
    v = _Side(right, _positions(shape, "B"))
    w = _Side(outputs, _positions(shape, "C"))
    per_product = [du * dv * dw for du, dv, dw in zip(u.denominators, v.denominators, w.denominators)]
    common = math.lcm(*per_product) if per_product else 1
    factors = [common // d for d in per_product]
    bound = sum(a * b * c * f for a, b, c, f in zip(u.abs_sums, v.abs_sums, w.abs_sums, factors)) + common * (
        shape.m * shape.k * shape.n
    )
    dtype = np.int64 if bound < _INT64_SAFE else object
    product, iu, iv, iw = _triples(u, v, w)

    def entries(dtype):
        return (
            np.asarray(u.numerators, dtype=dtype)[iu]
            * np.asarray(v.numerators, dtype=dtype)[iv]
            * np.asarray(w.numerators, dtype=dtype)[iw]
            * np.asarray(factors, dtype=dtype)[product]
        )

    try:
        values = entries(dtype)
    except OverflowError:  # a numerator past int64 that the bound did not see: exact Python integers
        dtype = object
        values = entries(dtype)
    nb, nc = len(blocks["B"]), len(blocks["C"])
    keys = (u.rows[iu] * nb + v.rows[iv]) * nc + w.rows[iw]
    classical_keys, classical_values = _classical(shape, common, dtype)
    keys = np.concatenate((keys, classical_keys))
    values = np.concatenate((values, classical_values))
    return {
        (blocks["A"][key // (nb * nc)], blocks["B"][key // nc % nb], blocks["C"][key % nc]): Fraction(int(value), common)
        for key, value in _sum_by_key(keys, values)
    }


def _classical(shape: Shape, common: int, dtype) -> tuple:  # keys, values
    """Keys of A[i,l]·B[l,j] in C[i,j], with value −L (the classical tensor, negated and scaled)."""
    import numpy as np
    m, k, n = shape.m, shape.k, shape.n
    i, l, j = (axis.ravel() for axis in np.meshgrid(np.arange(m), np.arange(k), np.arange(n), indexing="ij"))
    keys = ((i * k + l) * (k * n) + (l * n + j)) * (m * n) + (i * n + j)
    return keys.astype(np.int64), np.full(keys.size, -common, dtype=dtype)


def _sum_by_key(keys, values) -> list[tuple[int, object]]:
    """(key, Σ values) for every key whose sum is nonzero."""
    import numpy as np
    if keys.size == 0:
        return []
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    sums = np.add.reduceat(values, starts)
    nonzero = np.flatnonzero(sums != 0)
    return list(zip(keys[starts[nonzero]].tolist(), sums[nonzero].tolist()))

