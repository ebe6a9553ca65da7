"""PLinOpt schemes (jgdumas/plinopt ``data``): ``NAME_L``, ``NAME_R``, ``NAME_P`` as ``.sms`` or ``.slp``.

``_L`` is the A side (one row per product), ``_R`` the B side and ``_P`` the
output map (one row per C block); any one of the three paths finds the
other two, in the same form (three ``.sms`` matrices, or three ``.slp``
programs; a program is checked against its ``.sms`` matrix when both are
there).  The shape is in the name (``4x4x4_48_…``) or inferred.

**Programs** are read as written: their assignments become named sums
(``L_z33`` over A blocks, ``R_…`` over B blocks, ``P_…`` over products;
``L2_o54`` for a variable's second assignment), the products' factors and the
outputs read them, and assignments no output needs are left out.  So what is
counted, optimized and compiled is the published program, not its expansion
(``bilinear optimize`` starts from it, and never returns a dearer side).
Alternative-basis programs are read as their matrices.

**Alternative basis** (``NAME-ALT_*`` with ``NAME-CoB_*``; ``_ALT``, ``16ALT`` too): the ALT matrices
act on changed bases, and the CoB matrices are the basis changes: the A side
is ALT_L·CoB_L, the B side ALT_R·CoB_R and the output map CoB_P·ALT_P.  The
scheme is read with the basis changes as named sums (``A_X1 = …`` over A
blocks, products over those, ``M_X1 = …`` over products, C blocks over
those), so what is verified, counted and compiled is the scheme as
published, basis changes included, and :class:`AlternativeBasis` says so.

Files that are not matrix-multiplication schemes — polynomial products
(``2o2o4_…``), products by a transpose (``2x2T_…``), field
multiplications (``F32``, ``F243``) — are refused with the reason, and
coefficients written with a number standing for √3 or √−1 (as the files'
comments say) are checked modulo the polynomial that number satisfies.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ...ir import Algorithm, Form, Output, Product, Shape, Sum
from ...verify.rings import ModularScheme
from .common import check_side, fail, identifier, infer_shape, modulus_in_name, rank_mismatch, shape_mismatch, whole_file
from .sparse import Sparse, Steps, read_slp, read_sms

_PARTS = {"L": "A side", "R": "B side", "P": "output map"}
_NAME = re.compile(r"^(?P<stem>.+)_(?P<part>[LRP])\.(?P<suffix>(?i:sms|slp))$")  # .SMS too, as detection takes it
_SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+)_(?:(\d+)_)?")  # PLinOpt's names: MxKxN_R_text
_BASIS_ROLE = re.compile(r"(?<![A-Za-z])(ALT|CoB)$")
_PLACEHOLDER = re.compile(r"(\d+) is a plac\w* ?holder for (?:sqrt\((\d+)\)|a square root of -(1))")
# How `bilinear export --to plinopt` begins each file's comment (writers.to_plinopt), before it quotes
# the source's header: what the quote says of placeholders is the source's, not the file's (an export
# holds over Q).  Read as a claim, "2 is a placeholder for sqrt(7)" there made strassen unreadable.
EXPORTED_COMMENT = re.compile(r"(?:Left|Right|Post) matrix \([^)]*\) of \w+; source: ")


@dataclass(frozen=True)
class AlternativeBasis:
    """A scheme published in an alternative basis: the algorithm (basis changes as named sums) and their sizes."""

    algorithm: Algorithm
    inner: tuple[int, int, int]  # the changed bases' dimensions on the A, B and C sides

    @property
    def name(self) -> str:
        return self.algorithm.name

    @property
    def note(self) -> str:
        a, b, c = self.inner
        return (
            f"{self.name} is an alternative-basis scheme: its products act on A, B and C in changed bases of "
            f"{a}, {b} and {c} elements; the basis changes are verified with it, as the named sums A_X*, B_X* and M_X*"
        )


def _paths(path: Path, shape: Shape | None = None) -> tuple[dict[str, Path], str]:
    match = _NAME.match(path.name)
    if match is None:
        fail(f"{path.name} is not a plinopt scheme file: a scheme is three files NAME_L, NAME_R and NAME_P (.sms or .slp)", None)
    stem, suffix = match["stem"], match["suffix"]
    _refuse_other_products(stem, path, shape)
    paths = {part: path.with_name(f"{stem}_{part}.{suffix}") for part in _PARTS}
    missing = [p.name for p in paths.values() if not p.exists()]
    if missing:
        fail(
            f"cannot find {' and '.join(missing)} beside {path.name}: a plinopt scheme needs its "
            "_L (A side), _R (B side) and _P (output map) matrices",
            None,
        )
    return paths, stem


def _refuse_other_products(stem: str, path: Path, shape: Shape | None) -> None:
    """Names that say the file is another product; a name that says nothing needs ``--shape``."""
    if re.match(r"^\d+o\d+o\d+_", stem):
        fail(f"{path.name} is a polynomial multiplication scheme (degrees MoKoN), not a matrix product", whole_file(path))
    if re.match(r"^\d+x\d+T_", stem):
        fail(f"{path.name} is a scheme for a product by a transpose (A·Aᵀ), not a general matrix product", whole_file(path))
    if shape is None and not re.match(r"^\d+x\d+x\d+_", stem):
        fail(
            f"{path.name} is not named as a matrix-multiplication scheme MxKxN_rank_text_[LRP]; "
            "plinopt's data also holds other linear maps (give --shape m,k,n to read it as one)",
            whole_file(path),
        )


def _matrix(path: Path) -> Sparse:
    matrix = read_slp(path) if path.suffix.lower() == ".slp" else read_sms(path)
    if path.suffix.lower() == ".slp":
        sibling = path.with_suffix(".sms" if path.suffix == ".slp" else ".SMS")
        if sibling.exists():
            _same(matrix, read_sms(sibling), path, sibling)
    return matrix


def _same(program: Sparse, matrix: Sparse, path: Path, sibling: Path) -> None:
    """A program computes its published matrix (what PLinOpt's SLPchecker asserts)."""
    if program.rows != matrix.rows:
        fail(f"{path.name} computes {program.rows} outputs; {sibling.name} has {matrix.rows} rows", program.header)
    keys = sorted(set(program.entries) | set(matrix.entries))
    for key in keys:
        if program.entries.get(key, 0) != matrix.entries.get(key, 0):
            i, j = key
            fail(
                f"{path.name} computes {program.entries.get(key, 0)} for entry ({i + 1},{j + 1}); "
                f"{sibling.name} has {matrix.entries.get(key, 0)}",
                program.spans.get(key, program.header),
            )


def _modulus(matrices: list[Sparse]) -> tuple[int, str]:
    """p when a comment says a number stands for √d or √−1: the scheme holds modulo number² − d,
    less the factors it shares with the coefficients' denominators, which have no inverse there
    (1013² − 3 = 2·513083, and the scheme halves: it is checked modulo 513083)."""
    for matrix in matrices:
        for comment in matrix.comments:
            quoted = EXPORTED_COMMENT.match(comment)
            match = _PLACEHOLDER.search(comment[: quoted.end()] if quoted else comment)
            if match:
                number, root, minus = match.groups()
                value = int(number) ** 2 + 1 if minus else int(number) ** 2 - int(root)
                said = f"{number}² + 1 = {value}" if minus else f"{number}² − {root} = {value}"
                if value < 2:
                    fail(f"the comment '{match.group(0)}' leaves no modulus to check the scheme in ({said})", matrix.header)
                modulus = value
                denominators = math.lcm(*(c.denominator for m in matrices for c in m.entries.values()))
                while (common := math.gcd(modulus, denominators)) > 1:
                    modulus //= common
                if modulus < 2:
                    fail(f"the comment '{match.group(0)}' leaves no modulus to check the scheme in ({said}, and the "
                         "coefficients' denominators divide it)", matrix.header)
                what = "√-1" if minus else f"√{root}"
                return modulus, f"the file writes {number} for {what}; {number}² ≡ {'-1' if minus else root} modulo {modulus}"
    return 0, ""


def read_plinopt(path: Path, shape: Shape | None = None) -> Algorithm | AlternativeBasis | ModularScheme:
    """A plinopt scheme from any one of its three paths; alternative-basis schemes with their CoB matrices."""
    paths, stem = _paths(path, shape)
    if basis_role(stem) == "CoB":
        scheme = _partners(paths, stem)
        if missing := [p.name for p in scheme.values() if not p.exists()]:
            fail(f"{path.name} is a change of basis; the scheme it belongs to, {' and '.join(missing)}, is missing "
                 "beside it", None)
        return read_plinopt(scheme["L"], shape)
    left, right, post = (_matrix(paths[part]) for part in "LRP")
    rank = left.rows
    named = _SHAPE.match(paths["L"].name)
    if named and named.group(4):  # first: a short _L is its own fault, not that of the _R and _P beside it
        rank_mismatch(int(named.group(4)), rank, f"the name '{paths['L'].name}'", left.header)
    for matrix, part, count, what in ((right, "R", right.rows, "rows"), (post, "P", post.cols, "columns")):
        if count != rank:
            fail(f"{paths[part].name} has {count} {what}; {paths['L'].name} has {rank} rows, one per product", matrix.header)
    named = check_side(Shape(*(int(g) for g in named.groups()[:3])), f"the name {paths['L'].name}", left.header) if named else None
    changes = None
    if basis_role(stem) == "ALT":
        changes = _basis_changes(paths, stem, left, right, post)
        sizes = (changes[0].cols, changes[1].cols, changes[2].rows)
    else:
        sizes = (left.cols, right.cols, post.rows)
    found = infer_shape(*sizes)
    if shape is None:
        shape = named or found
    if shape is None:
        fail(f"cannot infer the shape from {sizes[0]}, {sizes[1]} and {sizes[2]} columns and rows; give --shape m,k,n", left.header)
    if named is not None:
        shape_mismatch(named, shape, f"the file name {paths['L'].name}", left.header)
    sided = changes or (left, right, post)  # the matrices the sizes came from, to locate an error in its own file
    for size, operand, where, matrix in zip(sizes, "ABC", ("L", "R", "P"), sided):
        if size != len(shape.blocks(operand)):
            named = Path(matrix.header.path).name if matrix.header else paths[where].name  # a CoB file for -ALT
            fail(f"{named} gives {size} {operand} blocks; {shape} needs {len(shape.blocks(operand))}", matrix.header)
    name = identifier(stem, "plinopt")
    if changes is None and left.steps and right.steps and post.steps:
        algorithm = _from_programs(name, shape, (left, right, post), paths)
    elif changes is None:
        algorithm = _algorithm(name, shape, left, right, post, paths)
    else:
        algorithm = _alternative(name, shape, (left, right, post), changes, paths)
    modulus, reason = _modulus([left, right, post, *(changes or ())])
    if not modulus and (modulus := modulus_in_name(paths["L"])):
        reason = f"the name {stem} says so"
    if modulus:
        return ModularScheme(algorithm, modulus, reason)
    return AlternativeBasis(algorithm, (left.cols, right.cols, post.rows)) if changes else algorithm


def plinopt_files(path: Path, shape: Shape | None = None) -> tuple[Path, ...]:
    """Every file :func:`read_plinopt` reads for ``path``'s scheme, ``path`` first: its _L, _R and _P
    matrices, the .sms beside each .slp (a program is checked against it), and an alternative
    basis's scheme (-ALT) with its changes (-CoB)."""
    paths, stem = _paths(path, shape)
    matrices = list(paths.values())
    if basis_role(stem):
        matrices += _partners(paths, stem).values()
    checked = [p.with_suffix(".sms" if p.suffix == ".slp" else ".SMS") for p in matrices if p.suffix.lower() == ".slp"]
    return tuple(dict.fromkeys([path, *matrices, *(p for p in checked if p.exists())]))


def basis_role(stem: str) -> str | None:
    """What a stem names: ``ALT``, a scheme in an alternative basis; ``CoB``, its change of basis; None, a
    plain scheme.  PLinOpt's data has ended such names in ``-ALT``, ``_ALT`` and ``-16ALT`` (ALT or CoB
    standing apart from a word before it: ``COBALT`` is a plain name)."""
    match = _BASIS_ROLE.search(stem)
    return match.group(1) if match else None


def _partners(paths: dict[str, Path], stem: str) -> dict[str, Path]:
    """The ALT files of a CoB stem's parts, or the CoB files of an ALT stem's."""
    role = basis_role(stem)
    other = stem[: -len(role)] + ("CoB" if role == "ALT" else "ALT")
    return {part: p.with_name(other + p.name[len(stem):]) for part, p in paths.items()}


def _basis_changes(paths: dict[str, Path], stem: str, left: Sparse, right: Sparse, post: Sparse) -> tuple[Sparse, Sparse, Sparse]:
    cob_paths = _partners(paths, stem)
    missing = [p.name for p in cob_paths.values() if not p.exists()]
    if missing:
        fail(
            f"{paths['L'].name} is in an alternative basis, and its basis changes {', '.join(missing)} are missing: "
            "without them the scheme is not a matrix product",
            left.header,
        )
    cob = tuple(_matrix(cob_paths[part]) for part in "LRP")
    for alt, change, part, alt_size, change_size in (
        (left, cob[0], "L", left.cols, cob[0].rows),
        (right, cob[1], "R", right.cols, cob[1].rows),
        (post, cob[2], "P", post.rows, cob[2].cols),
    ):
        if alt_size != change_size:
            fail(
                f"{paths[part].name} works in a basis of {alt_size} elements, but {cob_paths[part].name} "
                f"changes a basis of {change_size}",
                change.header,
            )
    return cob


def _by_row(matrix: Sparse) -> dict[int, dict[int, Fraction]]:
    rows: dict[int, dict[int, Fraction]] = {}
    for (i, j), c in matrix.entries.items():
        if c:
            rows.setdefault(i, {})[j] = c
    return rows


def _products(left: Sparse, right: Sparse, a_names: list[str], b_names: list[str], paths: dict[str, Path]) -> list[Product]:
    lefts, rights = _by_row(left), _by_row(right)
    _refuse_zero_factors(left, right, lefts, rights, paths)
    return [Product(f"M{r + 1}", _row_form(left, lefts, r, a_names), _row_form(right, rights, r, b_names), left.row_span(r))
            for r in range(left.rows)]


def _row_form(matrix: Sparse, rows: dict[int, dict[int, Fraction]], i: int, names: list[str]) -> Form:
    """Row ``i`` of ``matrix`` as a form over ``names``, each term located where its file wrote it."""
    entries = {j: c for j, c in rows.get(i, {}).items() if names[j] is not None}  # None: a zero element
    return Form.of({names[j]: c for j, c in entries.items()}, ((names[j], matrix.spans[(i, j)]) for j in entries
                                                              if (i, j) in matrix.spans))


def _refuse_zero_factors(left: Sparse, right: Sparse, lefts: dict, rights: dict, paths: dict[str, Path]) -> None:
    for r in range(left.rows):
        for matrix, part, rows in ((left, "L", lefts), (right, "R", rights)):
            if not rows.get(r):
                fail(f"product {r + 1} has a zero factor: row {r + 1} of {paths[part].name} is empty", matrix.header)


def _outputs(post: Sparse, shape: Shape, names: list[str]) -> tuple[Output, ...]:
    rows = _by_row(post)
    return tuple(
        Output(block, _row_form(post, rows, i, names), post.row_span(i)) for i, block in enumerate(shape.blocks("C"))
    )


def _algorithm(name: str, shape: Shape, left: Sparse, right: Sparse, post: Sparse, paths: dict[str, Path]) -> Algorithm:
    products = _products(left, right, list(shape.blocks("A")), list(shape.blocks("B")), paths)
    outputs = _outputs(post, shape, [p.name for p in products])
    return Algorithm(name, shape, (), tuple(products), outputs, len(products), left.header, tabular=True)


def _alternative(name: str, shape: Shape, alt: tuple[Sparse, ...], cob: tuple[Sparse, ...], paths: dict[str, Path]) -> Algorithm:
    left, right, post = alt
    a_sums = [Sum(f"A_X{x + 1}", f, cob[0].row_span(x)) for x, f in _forms(cob[0], list(shape.blocks("A")))]
    b_sums = [Sum(f"B_X{x + 1}", f, cob[1].row_span(x)) for x, f in _forms(cob[1], list(shape.blocks("B")))]
    a_names = [f"A_X{x + 1}" for x in range(cob[0].rows)]
    b_names = [f"B_X{x + 1}" for x in range(cob[1].rows)]
    for sums, matrix, names in ((a_sums, cob[0], a_names), (b_sums, cob[1], b_names)):
        if len(sums) != matrix.rows:
            empty = next(x for x in range(matrix.rows) if names[x] not in {s.name for s in sums})
            fail(f"row {empty + 1} of the basis change is empty: that basis element is zero", matrix.header)
    products = _products(left, right, a_names, b_names, paths)
    post_forms = _forms(post, [p.name for p in products])
    m_sums = [Sum(f"M_X{y + 1}", f, post.row_span(y)) for y, f in post_forms]
    # an empty row of P is a zero basis element: C takes nothing from it (it had been named, undefined)
    m_names = {y: f"M_X{y + 1}" for y, _ in post_forms}
    outputs = _outputs(cob[2], shape, [m_names.get(y) for y in range(post.rows)])
    sums = tuple(a_sums + b_sums + m_sums)
    return Algorithm(name, shape, sums, tuple(products), outputs, len(products), left.header, tabular=False)


def _forms(matrix: Sparse, names: list[str]) -> list[tuple[int, Form]]:
    rows = _by_row(matrix)
    return [(i, Form.of({names[j]: c for j, c in rows[i].items()})) for i in range(matrix.rows) if i in rows]


def _from_programs(name: str, shape: Shape, matrices: tuple[Sparse, Sparse, Sparse], paths: dict[str, Path]) -> Algorithm:
    """The scheme as its three straight-line programs compute it (their matrices checked by the
    caller).  Built from the programs alone: the products the matrices give, built first and then
    replaced, had taken 8 of the 30 s that PLinOpt's ⟨32,32,32;15096⟩ took to load."""
    left, right, post = matrices
    _refuse_zero_factors(left, right, _by_row(left), _by_row(right), paths)
    names = [f"M{r + 1}" for r in range(left.rows)]
    inputs = (list(shape.blocks("A")), list(shape.blocks("B")), names)
    (a_sums, lefts), (b_sums, rights), (m_sums, posts) = (
        _program(matrix.steps, part, blocks) for matrix, part, blocks in zip(matrices, "LRP", inputs)
    )
    products = tuple(Product(product, a, b, left.row_span(r)) for r, (product, a, b) in enumerate(zip(names, lefts, rights)))
    outputs = tuple(Output(block, form, post.row_span(i)) for i, (block, form) in enumerate(zip(shape.blocks("C"), posts)))
    return Algorithm(name, shape, tuple(a_sums + b_sums + m_sums), products, outputs, len(products), left.header,
                     tabular=False)


def _program(steps: Steps, part: str, inputs: list[str]) -> tuple[list[Sum], list[Form]]:
    """The assignments the outputs need, as named sums, and the outputs as forms; an output that
    other assignments read is a named sum too, and its row reads it."""

    def named(key) -> str:
        if isinstance(key, int):
            return inputs[key]
        variable, version = key
        return f"{part}{version if version > 1 else ''}_{variable}"

    def form(terms: dict) -> Form:
        return Form.of({named(key): c for key, c in terms.items()})

    reads = {assigned: terms for assigned, terms, _ in steps.assignments}
    needed, pending = set(), list(steps.outputs)
    while pending:
        assigned = pending.pop()
        if assigned not in needed:
            needed.add(assigned)
            pending += [key for key in reads[assigned] if not isinstance(key, int)]
    read = {key for assigned in needed for key in reads[assigned]}
    rows = set(steps.outputs)
    sums = [
        Sum(named(assigned), form(terms), span)
        for assigned, terms, span in steps.assignments
        if assigned in needed and (assigned not in rows or assigned in read)
    ]
    return sums, [Form.of({named(row): 1}) if row in read else form(reads[row]) for row in steps.outputs]
