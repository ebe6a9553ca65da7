"""New algorithms from verified ones: the six ⟨m,k,n⟩ permutations and Kronecker products.

Both work on the expanded coefficients (named sums multiplied out), with
block names never commuted, so the results hold for matrix blocks:

- transposition, ⟨m,k,n⟩ → ⟨n,k,m⟩ from (AB)ᵀ = BᵀAᵀ: product r becomes
  (v_rᵀ over A blocks) · (u_rᵀ over B blocks), its weight w_rᵀ;
- the cyclic symmetry of the matrix-multiplication tensor, ⟨m,k,n⟩ → ⟨k,n,m⟩:
  U → V, V → Wᵀ, W → Uᵀ (Σ a_il b_lj c_ij is invariant under (a, b, cᵀ) →
  (b, cᵀ, a));
- the Kronecker product ⟨m₁m₂, k₁k₂, n₁n₂; R₁R₂⟩: block (i₁,i₂) of the
  product's grid is ((i₁−1)·m₂ + i₂); factors and weights multiply.

Every result is returned unverified; callers (the CLI, the tests) verify it.
"""

from __future__ import annotations

from fractions import Fraction

from .collector import cycles_uncollected
from .ir import Algorithm, Form, Output, Product, Shape, block_name, parse_block
from .ir.names import check_definition_name, derived_name
from .verify.expand import expansion_of

# Target orders of (m, k, n), and the steps that reach them: C = cyclic, T = transpose.
PERMUTATIONS = {"mkn": "", "knm": "C", "nmk": "CC", "nkm": "T", "mnk": "CT", "kmn": "TC"}


def _coefficients(algorithm: Algorithm) -> list[tuple[dict, dict, dict]]:
    """Per product: {(i, j): coef} of u_r over A, v_r over B, w_r over C."""
    expansion = expansion_of(algorithm)

    def grid(form: Form) -> dict[tuple[int, int], Fraction]:
        return {parse_block(name)[1:]: coef for name, coef in form.terms}

    return [(grid(u), grid(v), grid(w)) for (u, v), w in zip(expansion.factors, expansion.weights)]


def _transposed(entries: dict) -> dict:
    return {(j, i): coef for (i, j), coef in entries.items()}


def _build(name: str, shape: Shape, products: list[tuple[dict, dict, dict]]) -> Algorithm:
    built, outputs = [], {}
    for r, (u, v, w) in enumerate(products, start=1):
        label = f"M{r}"
        left = Form.of({block_name("A", i, j): c for (i, j), c in u.items()})
        right = Form.of({block_name("B", i, j): c for (i, j), c in v.items()})
        built.append(Product(label, left, right))
        for (i, j), c in w.items():
            outputs.setdefault(block_name("C", i, j), {})[label] = c
    ordered = [Output(block, Form.of(outputs.get(block, {}))) for block in shape.blocks("C")]
    return Algorithm(name, shape, (), tuple(built), tuple(ordered), declared_rank=len(built))


def permute(algorithm: Algorithm, order: str, name: str | None = None) -> Algorithm:
    """The algorithm for the permuted shape ``order`` (one of PERMUTATIONS, e.g. ``"nkm"``), without
    the products no output uses (:func:`unused_products`)."""
    if order not in PERMUTATIONS:
        raise ValueError(f"the target order must be one of {', '.join(PERMUTATIONS)}, not {order!r}")
    check_definition_name(name)
    shape = (algorithm.shape.m, algorithm.shape.k, algorithm.shape.n)
    # a product no output uses has a zero W column, which a permutation makes a zero factor: dropped
    products = [(u, v, w) for u, v, w in _coefficients(algorithm) if w]
    for step in PERMUTATIONS[order]:
        m, k, n = shape
        if step == "T":
            shape = (n, k, m)
            products = [(_transposed(v), _transposed(u), _transposed(w)) for u, v, w in products]
        else:
            shape = (k, n, m)
            products = [(v, _transposed(w), _transposed(u)) for u, v, w in products]
    return _build(name or derived_name(f"{algorithm.name}_{order}"), Shape(*shape), products)


def unused_products(algorithm: Algorithm) -> list[str]:
    """The products whose W column is zero: no C block uses them."""
    return [product.name for product, (_, _, w) in zip(algorithm.products, _coefficients(algorithm)) if not w]


def unused_note(algorithm: Algorithm, left_out: str) -> str | None:
    """"note: M8, which no output uses, is <left_out>" for the products of :func:`unused_products`
    (None where there are none): what a command that leaves them out says of them."""
    dropped = unused_products(algorithm)
    if not dropped:
        return None
    return f"note: {', '.join(dropped)}, which no output uses, {'is' if len(dropped) == 1 else 'are'} {left_out}"


def nested(outer: tuple[int, int], inner: tuple[int, int], grid: tuple[int, int]) -> tuple[int, int]:
    """Block ``inner`` (row, column; 1-based) of outer block ``outer``, split into a ``grid`` of rows and
    columns, as a block of the product shape."""
    return (outer[0] - 1) * grid[0] + inner[0], (outer[1] - 1) * grid[1] + inner[1]


@cycles_uncollected()
def kronecker(first: Algorithm, second: Algorithm, name: str | None = None) -> Algorithm:
    """The ⟨m₁m₂, k₁k₂, n₁n₂; R₁R₂⟩ product scheme: ``first`` on the outer blocks, ``second`` inside
    (without the products of :func:`unused_products`, which no output of the product uses either)."""
    check_definition_name(name)
    outer, inner = first.shape, second.shape
    shape = Shape(outer.m * inner.m, outer.k * inner.k, outer.n * inner.n)  # refused here when too large, before any work
    grids = {"A": (inner.m, inner.k), "B": (inner.k, inner.n), "C": (inner.m, inner.n)}

    def combine(a: dict, b: dict, operand: str) -> dict:
        return {nested(outer, inner, grids[operand]): c1 * c2 for outer, c1 in a.items() for inner, c2 in b.items()}

    products = [  # without a product no output uses (a zero W column, of either factor's): as permute drops it
        (combine(u1, u2, "A"), combine(v1, v2, "B"), combine(w1, w2, "C"))
        for u1, v1, w1 in _coefficients(first)
        for u2, v2, w2 in _coefficients(second)
        if w1 and w2
    ]
    return _build(name or derived_name(f"{first.name}_x_{second.name}"), shape, products)
