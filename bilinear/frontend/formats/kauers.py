"""Kauers and flips ``.exp`` files (mkauers/matrix-multiplication, jakobmoosbauer/flips).

One product per line, ``(Σ a)*(Σ b)*(Σ c)`` with rational coefficients,
scale factors (``(3*(9*a11 - a12))``, ``(...)/3``) and single entries without
parentheses (``c15``), parsed by the lark grammar ``trilinear.lark``.  Trace
convention: a term c_ki feeds C_ik.  The shape is the three-digit token of
the file or folder name (``333``, ``224``), else the largest indices;
``modp`` in the name marks a scheme valid only modulo p (``mod0``: over Q).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

from ...ir import Algorithm, Form, Output, Product, Shape, Span, block_name
from ...verify.rings import ModularScheme
from ..loader import read_source, source_lines
from .common import fail, identifier, modulus_in_name, named_so, rank_mismatch, shape_mismatch, whole_file
from .trilinear import TrilinearProduct, parse_product


def name_facts(path: Path) -> tuple[Shape | None, int | None, str]:
    """(shape, product count, where they came from) from a ``333``-style token of the file's name
    and a number right after it (``k…-333-23-mod0.exp``, flips' ``223-11-mod0.exp``).  Not of its
    folder's: run_333/ may hold any scheme (Strassen there had been read as ⟨3,3,3⟩), and a correct
    scheme's largest indices are its shape anyway."""
    tokens = re.split(r"[-_.]", path.name)
    at = [i for i, t in enumerate(tokens) if re.fullmatch(r"[1-9]{3}", t)]
    if len({tokens[i] for i in at}) != 1:
        return None, None, ""
    after = tokens[at[0] + 1] if len(at) == 1 and at[0] + 1 < len(tokens) else ""
    # not ten digits: a Kauers name may put its ten-hex-digit hash there (378-ffdb2d875f), all decimal at times
    rank = int(after) if re.fullmatch(r"[0-9]{1,9}", after) else None
    return Shape(*(int(d) for d in tokens[at[0]])), rank, f"the name '{path.name}'"


def read_kauers(path: Path, shape: Shape | None = None) -> Algorithm | ModularScheme:
    """A ``.exp`` scheme; a ModularScheme when its name marks it valid modulo p."""
    products = []
    for number, line in enumerate(source_lines(read_source(path, text_of="Kauers text")), start=1):
        if line.strip() and not line.strip().startswith("#"):
            products.append(parse_product(line, number, path))
    if not products:
        fail(f"{path.name} holds no products: expected one '(a..)*(b..)*(c..)' line per product", whole_file(path))
    modulus = modulus_in_name(path)
    named, named_rank, origin = name_facts(path)
    rank_mismatch(named_rank, len(products), origin, whole_file(path))
    if shape is not None:
        if named is not None:
            shape_mismatch(named, shape, origin, whole_file(path))
        origin = "the shape given"
    elif named is not None:
        shape = named
    else:
        shape, origin = _inferred_shape(products), "the largest indices"
    _check_indices(products, shape, origin)
    algorithm = _algorithm(products, shape, path)
    return ModularScheme(algorithm, modulus, named_so(path)) if modulus else algorithm


#: The two entry indices each dimension of ⟨m,k,n⟩ runs over, as (letter, place in the entry's key):
#: a is m×k, b is k×n, c (transposed) is n×m.
_DIMENSIONS = {"m": (("a", 1), ("c", 2)), "k": (("a", 2), ("b", 1)), "n": (("b", 2), ("c", 1))}
_PLACES = {1: "first", 2: "second"}


def _inferred_shape(products: list[TrilinearProduct]) -> Shape:
    """⟨m,k,n⟩ from the largest indices, where the two sides over each dimension agree.  The larger
    had been taken: a stray a36 in a ⟨2,5,7⟩ scheme made it ⟨3,6,7⟩, and only C blocks were blamed."""
    entries = [key for product in products for key in product.entry_spans]

    def side_end(letter: str, place: int) -> tuple[int, tuple, int]:
        """(largest index, the first entry holding it, its place) over one side of a dimension."""
        top = max((key for key in entries if key[0] == letter), key=lambda key: key[place])
        return top[place], top, place

    largest, stray, lacks = [], None, []  # the entry past the other side, and what that side lacks
    for dimension, sides in _DIMENSIONS.items():
        (low, short, place), (high, long, _) = sorted((side_end(*side) for side in sides), key=lambda end: end[0])
        largest.append(high)
        if low < high and stray in (None, long):
            stray = long
            lacks.append((f"{dimension} ≥ {high}", f"{short[0]} entry", f"a {_PLACES[place]} index past {low}"))
    if stray is not None:
        span = next(product.entry_spans[stray] for product in products if stray in product.entry_spans)
        says = " and ".join(claim for claim, _, _ in lacks)
        missing = " and ".join(f"no {entry} {'has ' if n == 0 else ''}{index}" for n, (_, entry, index) in enumerate(lacks))
        fail(f"{''.join(map(str, stray))} says {says}, but {missing}", span)
    return Shape(*largest)


def _check_indices(products: list[TrilinearProduct], shape: Shape, origin: str) -> None:
    grids = {"a": shape.grid("A"), "b": shape.grid("B"), "c": shape.grid("C")[::-1]}
    for product in products:
        for (letter, i, j), span in product.entry_spans.items():
            rows, cols = grids[letter]
            if not (i <= rows and j <= cols):
                what = {"a": "A", "b": "B", "c": "Cᵀ (c-indices are transposed)"}[letter]
                fail(f"{letter}{i}{j} is outside {shape} (from {origin}): {what} has {rows}x{cols} entries", span)


def _algorithm(products: list[TrilinearProduct], shape: Shape, path: Path) -> Algorithm:
    outputs: dict[str, dict[str, Fraction]] = {block: {} for block in shape.blocks("C")}
    first_use: dict[str, Span] = {}  # a C block's diagnostics point at its first c-entry
    term_spans: dict[str, list[tuple[str, Span]]] = {block: [] for block in shape.blocks("C")}  # and a fix at its own
    built = []
    for r, product in enumerate(products):
        a, b, c = product.factors
        name = f"M{r + 1}"
        left = Form.of({block_name("A", i, j): v for (i, j), v in a.items()})
        right = Form.of({block_name("B", i, j): v for (i, j), v in b.items()})
        built.append(Product(name, left, right, product.span))
        for (k, i), value in c.items():  # trace convention: c_ki is C_ik
            outputs[block_name("C", i, k)][name] = value
            first_use.setdefault(block_name("C", i, k), product.entry_spans[("c", k, i)])
            term_spans[block_name("C", i, k)].append((name, product.entry_spans[("c", k, i)]))
    return Algorithm(
        identifier(path.name.removesuffix(".exp"), "kauers"),
        shape,
        (),
        tuple(built),
        tuple(Output(block, Form.of(terms, term_spans[block]), first_use.get(block)) for block, terms in outputs.items()),
        len(built),
        whole_file(path),
        tabular=True,
    )


def looks_like_kauers(text: str) -> bool:
    """The first line that is not a comment is a product of a-, b- and c-entries."""
    for line in source_lines(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return all(re.search(rf"\b{letter}[1-9][0-9]", stripped) for letter in "abc") and "{" not in stripped
    return False
