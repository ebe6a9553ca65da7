"""Bilinear schemes as coefficient matrices, their symmetries, and an independent Brent check.

A :class:`Scheme` of shape ⟨m,k,n⟩ holds, per product r, the m×k matrix U[r]
of A-block coefficients of its left factor, the k×n matrix V[r] of its right
factor, and the m×n matrix W[r] of its coefficient in each C block.  It is
correct when Σ_r U[r][i,j]·V[r][j',l]·W[r][i',l'] = δ(i,i')δ(j,j')δ(l,l').

:func:`matmul_errors` checks that with NumPy, sharing no code with
``bilinear.verify``, so it can judge the verifier.  The transforms map
correct schemes to correct schemes:

- the de Groote action: for invertible P (m×m), Q (k×k), R (n×n), compute
  A·B = P⁻¹ (P A Q⁻¹)(Q B R⁻¹) R, i.e. U → Pᵀ U Q⁻ᵀ, V → Qᵀ V R⁻ᵀ, W → P⁻¹ W R;
- transposition ⟨m,k,n⟩ → ⟨n,k,m⟩ from (AB)ᵀ = BᵀAᵀ: U → Vᵀ, V → Uᵀ, W → Wᵀ;
- the cyclic symmetry of the matmul tensor ⟨m,k,n⟩ → ⟨k,n,m⟩: U → V, V → Wᵀ, W → Uᵀ;
- the Kronecker product of two schemes, ⟨m₁m₂, k₁k₂, n₁n₂; R₁R₂⟩;
- reordering products and rescaling one (U·a, V·b, W/(ab)).

Blocks stay non-commuting throughout: every identity above holds for block
matrices, which is what the verifier proves.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from bilinear.ir import Algorithm, block_name
from bilinear.verify.expand import Expansion


# Strassen in fast-matmul's coefficient format: U, V and W (rows: the A, B and C blocks, row-major;
# columns: the 7 products), separated by '#' lines.
STRASSEN_UVW = """\
1 0 1 0 1 -1 0
0 0 0 0 1 0 1
0 1 0 0 0 1 0
1 1 0 1 0 0 -1
#
1 1 0 -1 0 1 0
0 0 1 0 0 1 0
0 0 0 1 0 0 1
1 0 -1 0 1 0 1
#
1 0 0 1 -1 0 1
0 0 1 0 1 0 0
0 1 0 1 0 0 0
1 -1 1 0 0 1 0
"""


def fractions(array) -> np.ndarray:
    return np.vectorize(Fraction, otypes=[object])(np.asarray(array, dtype=object))


@dataclass(frozen=True)
class Scheme:
    shape: tuple[int, int, int]
    U: tuple[np.ndarray, ...]
    V: tuple[np.ndarray, ...]
    W: tuple[np.ndarray, ...]

    @property
    def rank(self) -> int:
        return len(self.U)

    def products(self):
        return zip(self.U, self.V, self.W)


def from_algorithm(algorithm: Algorithm) -> Scheme:
    """An algorithm's coefficient matrices (named sums expanded)."""
    m, k, n = algorithm.shape.m, algorithm.shape.k, algorithm.shape.n
    U, V, W = (np.array(table, dtype=object) for table in Expansion(algorithm).tables())
    columns = range(algorithm.rank)
    return Scheme(
        (m, k, n),
        tuple(U[:, r].reshape(m, k) for r in columns),
        tuple(V[:, r].reshape(k, n) for r in columns),
        tuple(W[:, r].reshape(m, n) for r in columns),
    )


# --- the oracle ---------------------------------------------------------------------


def _stack(matrices) -> np.ndarray:
    array = np.array(matrices, dtype=object)
    if all(Fraction(x).denominator == 1 for x in array.flat):
        return array.astype(np.int64)
    return array


def matmul_errors(scheme: Scheme) -> set[str]:
    """The C blocks whose Brent equations fail (empty when the scheme is correct)."""
    m, k, n = scheme.shape
    if scheme.rank == 0:
        return {block_name("C", i + 1, l + 1) for i in range(m) for l in range(n)}
    tensor = np.einsum("rij,rab,rcd->ijabcd", _stack(scheme.U), _stack(scheme.V), _stack(scheme.W))
    wrong = set()
    for i in range(m):
        for l in range(n):
            want = np.zeros((m, k, k, n), dtype=object)
            for j in range(k):
                want[i, j, j, l] = 1
            if np.any(tensor[:, :, :, :, i, l] != want):
                wrong.add(block_name("C", i + 1, l + 1))
    return wrong


# --- transforms -------------------------------------------------------------------------


def de_groote(scheme: Scheme, P, P_inv, Q, Q_inv, R, R_inv) -> Scheme:
    for matrix, inverse in ((P, P_inv), (Q, Q_inv), (R, R_inv)):
        assert np.array_equal(matrix.dot(inverse), np.eye(len(matrix), dtype=object))
    return Scheme(
        scheme.shape,
        tuple(P.T.dot(u).dot(Q_inv.T) for u in scheme.U),
        tuple(Q.T.dot(v).dot(R_inv.T) for v in scheme.V),
        tuple(P_inv.dot(w).dot(R) for w in scheme.W),
    )


def transpose(scheme: Scheme) -> Scheme:
    m, k, n = scheme.shape
    return Scheme((n, k, m), tuple(v.T for v in scheme.V), tuple(u.T for u in scheme.U), tuple(w.T for w in scheme.W))


def cyclic(scheme: Scheme) -> Scheme:
    m, k, n = scheme.shape
    return Scheme((k, n, m), scheme.V, tuple(w.T for w in scheme.W), tuple(u.T for u in scheme.U))


def kron(first: Scheme, second: Scheme) -> Scheme:
    shape = tuple(a * b for a, b in zip(first.shape, second.shape))
    pairs = [(p, q) for p in first.products() for q in second.products()]
    return Scheme(
        shape,
        tuple(np.kron(p[0], q[0]) for p, q in pairs),
        tuple(np.kron(p[1], q[1]) for p, q in pairs),
        tuple(np.kron(p[2], q[2]) for p, q in pairs),
    )


def permute(scheme: Scheme, order) -> Scheme:
    return Scheme(scheme.shape, *(tuple(table[r] for r in order) for table in (scheme.U, scheme.V, scheme.W)))


def rescale(scheme: Scheme, r: int, a: Fraction, b: Fraction) -> Scheme:
    U, V, W = list(scheme.U), list(scheme.V), list(scheme.W)
    U[r], V[r], W[r] = U[r] * a, V[r] * b, W[r] / (a * b)
    return Scheme(scheme.shape, tuple(U), tuple(V), tuple(W))


def unimodular(size: int, operations) -> tuple[np.ndarray, np.ndarray]:
    """A unimodular integer matrix and its inverse from (i, j, c) elementary row operations (i ≠ j)."""
    matrix, inverse = np.eye(size, dtype=object), np.eye(size, dtype=object)
    for i, j, c in operations:
        if i % size == j % size:
            continue
        i, j = i % size, j % size
        step, undo = np.eye(size, dtype=object), np.eye(size, dtype=object)
        step[i, j], undo[i, j] = c, -c
        matrix, inverse = step.dot(matrix), inverse.dot(undo)
    return matrix, inverse


# --- corruptions ---------------------------------------------------------------------------


def with_entry(scheme: Scheme, table: str, r: int, row: int, col: int, value) -> Scheme:
    tables = {"U": list(scheme.U), "V": list(scheme.V), "W": list(scheme.W)}
    changed = tables[table][r].copy()
    changed[row, col] = Fraction(value)
    tables[table][r] = changed
    return Scheme(scheme.shape, tuple(tables["U"]), tuple(tables["V"]), tuple(tables["W"]))


def without_product(scheme: Scheme, r: int) -> Scheme:
    keep = [i for i in range(scheme.rank) if i != r]
    return permute(scheme, keep)


# --- writing .bl text ----------------------------------------------------------------------


def number(value) -> str:
    """``3`` or ``-3/2``, as the verifier prints coefficients."""
    value = Fraction(value)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _linear(coefficients) -> str:
    """``3/2*A11 - A12`` from (name, coefficient) pairs; zeros skipped."""
    parts = []
    for name, coef in coefficients:
        coef = Fraction(coef)
        if coef == 0:
            continue
        size = abs(coef)
        text = name if size == 1 else f"{number(size)}*{name}"
        parts.append(("-" if coef < 0 else "+", text))
    if not parts:
        return "0"
    first_sign, first = parts[0]
    return ("-" if first_sign == "-" else "") + first + "".join(f" {sign} {text}" for sign, text in parts[1:])


def _blocks(operand: str, matrix: np.ndarray):
    rows, cols = matrix.shape
    return [(block_name(operand, i + 1, j + 1), matrix[i, j]) for i in range(rows) for j in range(cols)]


def to_equations(scheme: Scheme, name: str, declare_rank: bool = True) -> str:
    m, k, n = scheme.shape
    rank = f";{scheme.rank}" if declare_rank else ""
    lines = [f"algorithm {name} <{m},{k},{n}{rank}>:"]
    for r, (u, v, _) in enumerate(scheme.products(), start=1):
        lines.append(f"  M{r} = ({_linear(_blocks('A', u))}) * ({_linear(_blocks('B', v))})")
    for i in range(m):
        for l in range(n):
            terms = [(f"M{r}", w[i, l]) for r, w in enumerate(scheme.W, start=1)]
            lines.append(f"  {block_name('C', i + 1, l + 1)} = {_linear(terms)}")
    return "\n".join(lines) + "\n"


def to_table(scheme: Scheme, name: str, declare_rank: bool = True) -> str:
    m, k, n = scheme.shape
    rank = f";{scheme.rank}" if declare_rank else ""
    lines = [f"table {name} <{m},{k},{n}{rank}>:"]
    for letter, matrices in (("U", scheme.U), ("V", scheme.V), ("W", scheme.W)):
        lines.append(f"  {letter}:")
        rows, cols = matrices[0].shape
        for i in range(rows):
            for j in range(cols):
                lines.append("    " + " ".join(number(x[i, j]) for x in matrices))
    return "\n".join(lines) + "\n"
