"""Products no output uses, left out before optimizing.

A product whose weights are all zero is verified and never computed (``verify`` warns of it, and
counts it apart); the scheme without it computes the same C with one product fewer, so the
optimized program leaves it out, with the named sums only it used, and declares the smaller rank.

Assumes: a checked algorithm.  Ensures: the same outputs (expanded), over the products that remain,
in their order and with their names.
"""

from __future__ import annotations

from dataclasses import replace

from .compose import unused_products
from .ir import Algorithm
from .verify import used_names
from .verify.counts import side_of
from .verify.expand import expansion_of


def live(algorithm: Algorithm) -> Algorithm:
    """``algorithm`` without the products no output uses (:func:`bilinear.compose.unused_products`)
    and the named sums left unused; itself where every product is used.  Where a sum or an output
    still names a dropped product (its weights there cancel), the outputs are written expanded over
    the products and the sums over products go."""
    dead = set(unused_products(algorithm))
    if not dead:
        return algorithm
    products = tuple(product for product in algorithm.products if product.name not in dead)
    sums, outputs = algorithm.sums, algorithm.outputs
    if any(dead & set(entry.form.names()) for entry in (*sums, *outputs)):
        expansion = expansion_of(algorithm)
        sums = tuple(entry for entry in sums if side_of(expansion, entry.form, entry.name) != "C")
        outputs = tuple(replace(output, form=expansion.outputs[output.block]) for output in outputs)
    trimmed = replace(algorithm, sums=sums, products=products, outputs=outputs, declared_rank=len(products))
    used = used_names(trimmed)
    return replace(trimmed, sums=tuple(entry for entry in sums if entry.name in used))


def dropped(source: Algorithm, result: Algorithm) -> list[str]:
    """The products of ``source`` that ``result`` (its optimized program) leaves out, in order."""
    kept = {product.name for product in result.products}
    return [product.name for product in source.products if product.name not in kept]
