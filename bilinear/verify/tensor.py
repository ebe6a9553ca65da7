"""The Brent equations over Q, exactly: the one check behind ``bilinear verify``, the
schedule simulation (verify.lazy) and the catalogue tally.

An algorithm's tensor Σ_r u_r ⊗ v_r ⊗ w_r has, per product, as many terms
as nnz(u_r)·nnz(v_r)·nnz(w_r).  Their exact count T decides how the
residual (computed tensor − classical tensor) is found:

- ``"terms"`` (T up to :data:`TERMS_LIMIT`): every term enumerated with NumPy
  and summed by key; time near-linear in T, memory about 75 bytes a term.
- ``"blocks"`` (beyond): one A block a at a time, its slice of the tensor is
  V·diag(u_a)·Wᵀ over the products that read a — one matrix product, or one
  for a run of small slices — compared with the classical slice and dropped;
  memory is the dense V and W (products × blocks) and the slices of one call,
  whatever T (PLinOpt's ⟨32,32,32;15096⟩ has 7.7·10¹⁰ terms).

Both are exact.  Each column is scaled to integers by the least common
multiple of its denominators and every product by a common denominator L,
so all arithmetic is on integers: in the terms strategy int64 where a bound
on the sum of absolute values proves it cannot overflow; in the blocks
strategy float64 BLAS where a bound on every partial sum of a slice
(Σ_r |u_ar|·max|v_r|·max|w_r| + L, in Python integers) proves each an
integer below 2⁵² (exact in float64, whatever order BLAS adds in), int64
below 2⁶²; Python integers (NumPy object arrays) otherwise.

Assumes: factors u_r over A blocks, v_r over B blocks, w_r over C blocks as
:class:`~bilinear.ir.Form` (named sums expanded; see verify.expand).
Ensures: :func:`residual_entries` returns exactly the nonzero entries of
(computed tensor − classical tensor) as Fractions, keyed by block names,
whichever strategy ran; :func:`residual_summary` counts them per C block and
holds a few of each.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..ir import Form, Shape

# Past this many terms the term-by-term arrays (~75 bytes a term, measured) would pass ~150 MB: go by blocks.
TERMS_LIMIT = 1 << 21
STRATEGIES = ("terms", "blocks")
_INT64_SAFE = 2**62
_FLOAT_EXACT = 2**52  # every integer of magnitude up to 2⁵³ is exact in float64


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
        self.size = len(position)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.numerators = numerators  # Python ints: exact whatever their size
        self.counts = np.asarray(counts, dtype=np.int64)
        self.starts = np.concatenate(([0], np.cumsum(self.counts)[:-1])).astype(np.int64)
        self.products = np.repeat(np.arange(len(columns), dtype=np.int64), self.counts)
        self.denominators = denominators
        spans = list(zip(self.starts.tolist(), self.counts.tolist()))
        self.abs_sums = [sum(abs(x) for x in numerators[s : s + c]) for s, c in spans]
        self.peaks = [max((abs(x) for x in numerators[s : s + c]), default=0) for s, c in spans]

    def dense(self):
        """The (products × blocks) table in the narrowest exact type: float64, int64 or object."""
        import numpy as np
        peak = max(self.peaks, default=0)
        dtype = np.float64 if peak < _FLOAT_EXACT else np.int64 if peak < _INT64_SAFE else object
        table = np.zeros((len(self.counts), self.size), dtype=dtype)
        table[self.products, self.rows] = np.asarray(self.numerators, dtype=dtype)
        return table


def _positions(shape: Shape, operand: str) -> dict[str, int]:
    return {name: index for index, name in enumerate(shape.blocks(operand))}


def term_count(left: Sequence[Form], right: Sequence[Form], outputs: Sequence[Form]) -> int:
    """Σ_r nnz(u_r)·nnz(v_r)·nnz(w_r): the nonzero terms of the algorithm's tensor, before cancellation."""
    return sum(len(u.terms) * len(v.terms) * len(w.terms) for u, v, w in zip(left, right, outputs))


def choose_strategy(terms: int) -> str:
    """``"terms"`` while the term-by-term arrays stay small, ``"blocks"`` past :data:`TERMS_LIMIT`."""
    return "terms" if terms <= TERMS_LIMIT else "blocks"


def residual_entries(
    shape: Shape,
    left: Sequence[Form],
    right: Sequence[Form],
    outputs: Sequence[Form],
    strategy: str | None = None,
) -> dict[tuple[str, str, str], Fraction]:
    """Nonzero entries of Σ_r u_r ⊗ v_r ⊗ w_r minus the classical ⟨m,k,n⟩ tensor.

    Keys are (A block, B block, C block); ``outputs[r]`` is w_r, the r-th
    product's weight in every C block.  ``strategy`` (one of STRATEGIES)
    forces how; by default :func:`choose_strategy` picks it from the term count.
    """
    blocks = {operand: shape.blocks(operand) for operand in "ABC"}
    common, chunks = _residual_chunks(shape, left, right, outputs, strategy)
    return {
        (blocks["A"][a], blocks["B"][b], blocks["C"][c]): Fraction(int(value), common)
        for chunk in chunks for a, b, c, value in zip(*(column.tolist() for column in chunk))
    }


@dataclass(frozen=True)
class ResidualSummary:
    """The residual counted per wrong C block (row-major), with the first ``keep`` entries of each
    ((A block, B block) → value), and every entry where there are at most ``whole`` (else None)."""

    counts: dict[str, int]
    first: dict[str, dict[tuple[str, str], Fraction]]
    every: dict[tuple[str, str, str], Fraction] | None


def residual_summary(shape: Shape, left: Sequence[Form], right: Sequence[Form], outputs: Sequence[Form],
                     keep: int, whole: int) -> ResidualSummary:
    """:func:`residual_entries` in bounded memory: a dense wrong scheme's residual has (mk)(kn)(mn)
    entries (16.7 million at ⟨16,16,16⟩, gigabytes as Fractions, and minutes to describe)."""
    import numpy as np
    blocks = {operand: shape.blocks(operand) for operand in "ABC"}
    common, chunks = _residual_chunks(shape, left, right, outputs, None)
    counts = np.zeros(len(blocks["C"]), dtype=np.int64)
    first: dict[int, dict[tuple[str, str], Fraction]] = {}
    every: dict[tuple[str, str, str], Fraction] | None = {}
    for a, b, c, values in chunks:
        counts += np.bincount(c, minlength=len(blocks["C"]))
        if every is not None and counts.sum() <= whole:
            every.update(((blocks["A"][i], blocks["B"][j], blocks["C"][o]), Fraction(int(x), common))
                         for i, j, o, x in zip(a.tolist(), b.tolist(), c.tolist(), values.tolist()))
        else:
            every = None
        for block in (o for o in np.unique(c).tolist() if len(first.get(o, ())) < keep):  # full ones cost nothing
            held = first.setdefault(block, {})
            for index in np.flatnonzero(c == block)[: keep - len(held)].tolist():
                held[blocks["A"][int(a[index])], blocks["B"][int(b[index])]] = Fraction(int(values[index]), common)
    wrong = np.flatnonzero(counts).tolist()
    return ResidualSummary({blocks["C"][c]: int(counts[c]) for c in wrong}, {blocks["C"][c]: first[c] for c in wrong},
                           every)


def _residual_chunks(shape: Shape, left, right, outputs, strategy: str | None) -> tuple[int, Iterator[tuple]]:
    """The common denominator L and the residual's nonzero entries as chunks of four arrays (A, B
    and C block indices, values times L)."""
    strategy = strategy or choose_strategy(term_count(left, right, outputs))
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    u = _Side(left, _positions(shape, "A"))
    v = _Side(right, _positions(shape, "B"))
    w = _Side(outputs, _positions(shape, "C"))
    per_product = [du * dv * dw for du, dv, dw in zip(u.denominators, v.denominators, w.denominators)]
    common = math.lcm(*per_product) if per_product else 1
    factors = [common // d for d in per_product]
    found = _by_terms if strategy == "terms" else _by_blocks
    return common, found(shape, u, v, w, factors, common)


# --- term by term ------------------------------------------------------------------------


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


def _by_terms(shape: Shape, u: _Side, v: _Side, w: _Side, factors: list[int], common: int) -> Iterator[tuple]:
    """(A, B, C block index, scaled value) of every nonzero residual entry, every term enumerated."""
    import numpy as np
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
    nb, nc = v.size, w.size
    keys = (u.rows[iu] * nb + v.rows[iv]) * nc + w.rows[iw]
    classical_keys, classical_values = _classical(shape, common, dtype)
    keys, values = _sum_by_key(np.concatenate((keys, classical_keys)), np.concatenate((values, classical_values)))
    if keys.size:
        yield keys // (nb * nc), keys // nc % nb, keys % nc, values


def _classical(shape: Shape, common: int, dtype) -> tuple:  # keys, values
    """Keys of A[i,l]·B[l,j] in C[i,j], with value −L (the classical tensor, negated and scaled)."""
    import numpy as np
    m, k, n = shape.m, shape.k, shape.n
    i, l, j = (axis.ravel() for axis in np.meshgrid(np.arange(m), np.arange(k), np.arange(n), indexing="ij"))
    keys = ((i * k + l) * (k * n) + (l * n + j)) * (m * n) + (i * n + j)
    return keys.astype(np.int64), np.full(keys.size, -common, dtype=dtype)


def _sum_by_key(keys, values) -> tuple:  # keys, sums
    """Every key whose values sum to nonzero, and that sum."""
    import numpy as np
    if keys.size == 0:
        return keys, values
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    sums = np.add.reduceat(values, starts)
    nonzero = np.flatnonzero(sums != 0)
    return keys[starts[nonzero]], sums[nonzero]


# --- one A block at a time -------------------------------------------------------------------

# Multiply-adds below which one BLAS call takes several A blocks: on a busy machine each call can
# wait ~10 ms for its threads, which made 121 small slices (⟨11,11,11;896⟩) take 1.7 s instead of 0.05.
CALL_WORK = 1 << 27


def _by_blocks(shape: Shape, u: _Side, v: _Side, w: _Side, factors: list[int], common: int) -> Iterator[tuple]:
    """(A, B, C block index, scaled value) of every nonzero residual entry, one A block's slice at a time.

    The slice of A block a is Σ_r u'_ar·v_r·w_rᵀ with u'_ar = u_ar times the
    product's factor to L: (rows of Vᵀ the block's products pick, each times
    u'_ar)ᵀ @ (the same rows of Wᵀ).  Small slices share a call (stacked over
    the union of their products); each call's number type is the one the
    bound in the module docstring allows for all of its slices.
    """
    vt, wt = v.dense(), w.dense()  # rows are products: a slice picks rows
    per_block = _block_products(u, factors, [pv * pw for pv, pw in zip(v.peaks, w.peaks)], common)
    for group in _groups(per_block, v.size * w.size):
        yield from _group_residual(shape, group, per_block, vt, wt, common)


def _block_products(u: _Side, factors: list[int], peaks: list[int], common: int) -> list[tuple[list, list, int]]:
    """Per A block: the products that read it, its u'_ar in each, and the bound on its slice's partial sums.

    A product whose v_r or w_r is zero adds nothing and is left out, so every
    value a slice meets is within its bound.
    """
    import numpy as np
    order = np.argsort(u.rows, kind="stable").tolist()  # u's entries grouped by A block
    edges = np.searchsorted(u.rows[order], np.arange(u.size + 1)).tolist()
    product = u.products.tolist()
    per_block = []
    for a in range(u.size):
        kept = [e for e in order[edges[a] : edges[a + 1]] if peaks[product[e]]]
        used = [product[e] for e in kept]
        scaled = [u.numerators[e] * factors[r] for e, r in zip(kept, used)]
        per_block.append((used, scaled, sum(abs(x) * peaks[r] for x, r in zip(scaled, used)) + common))
    return per_block


def _groups(per_block: list[tuple[list, list, int]], slice_size: int) -> Iterator[list[int]]:
    """Runs of consecutive A blocks whose stacked product stays within CALL_WORK (one block at least)."""
    group: list[int] = []
    union: set[int] = set()
    for a, (used, _, _) in enumerate(per_block):
        merged = union | set(used)
        if group and (len(group) + 1) * len(merged) * slice_size > CALL_WORK:
            yield group
            group, merged = [], set(used)
        group.append(a)
        union = merged
    if group:
        yield group


def _group_residual(shape: Shape, group: list[int], per_block, vt, wt, common: int) -> Iterator[tuple]:
    """The nonzero residual entries of a run of A blocks, from one matrix product."""
    import numpy as np
    products = sorted(set().union(*(per_block[a][0] for a in group)))
    bound = max(per_block[a][2] for a in group)
    dtype = np.float64 if bound < _FLOAT_EXACT else np.int64 if bound < _INT64_SAFE else object
    column = {r: j for j, r in enumerate(products)}
    weights = np.zeros((len(group), len(products)), dtype=dtype)  # u'_ar of each block of the run
    for g, a in enumerate(group):
        used, scaled, _ = per_block[a]
        weights[g, [column[r] for r in used]] = np.asarray(scaled, dtype=dtype)
    v_rows, w_rows = _exactly(vt[products], dtype), _exactly(wt[products], dtype)
    nb, nc = vt.shape[1], wt.shape[1]
    left = (weights[:, :, None] * v_rows[None, :, :]).transpose(0, 2, 1).reshape(len(group) * nb, len(products))
    got = (left @ w_rows).reshape(len(group), nb, nc)
    n, columns = shape.n, np.arange(shape.n)
    for g, a in enumerate(group):
        i, l = divmod(a, shape.k)
        got[g, l * n + columns, i * n + columns] -= common  # the classical slice: A[i,l]·B[l,j] in C[i,j]
        b, c = np.nonzero(got[g])
        if b.size:
            yield np.full(b.size, a, dtype=np.int64), b, c, got[g, b, c]


def _exactly(table, dtype):
    """``table`` in ``dtype``: exact, as every entry is an integer within the bound (float64 only below 2⁵²);
    float64 and int64 storage reach Python integers through int64."""
    import numpy as np
    if dtype is object:
        return table if table.dtype == object else table.astype(np.int64).astype(object)
    return table.astype(dtype, copy=False)
