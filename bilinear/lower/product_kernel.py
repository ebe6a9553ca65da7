"""Everything the product templates need for one stage under one tile configuration
(:class:`ProductKernel`: tile plans, padded strides, the literal each target is scaled by,
which targets need atomics, the by-value parameter struct), and the rendering; the templates
``product_f64.cu.j2`` (FP64 tensor cores, ``mma.sync``) and ``product_f32.cu.j2`` (FFMA) only
arrange it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .product_spec import DTYPES, PARAM_LIMIT, ProductStageSpec, SpecTerm, describe
from .product_tiles import TileConfig, config_problems, shared_bytes, vectors
from .render import render


# --- what the template needs --------------------------------------------------


@dataclass(frozen=True)
class CopyPlan:
    """How a block's threads cover a rows×cols tile in pieces of ``vec`` elements:
    thread ``t`` copies pieces ``(t / per_row + i·row_step, (t % per_row)·vec)`` for ``i < items``."""

    vec: int
    per_row: int
    row_step: int
    items: int


def copy_plan(rows: int, cols: int, vec: int, threads: int) -> CopyPlan:
    per_row = cols // vec
    row_step = threads // per_row
    return CopyPlan(vec, per_row, row_step, rows // row_step)


@dataclass(frozen=True)
class ParamField:
    """One member of the by-value ``Params`` struct (and of its NumPy twin)."""

    name: str
    ctype: str
    numpy: str
    shape: tuple[int, ...] = ()

    @property
    def dims(self) -> str:
        return "".join(f"[{n}]" for n in self.shape)


@dataclass(frozen=True)
class Source:
    """One view read into an operand sum, with its coefficient as a C literal."""

    slot: int
    coef: str


@dataclass(frozen=True)
class Target:
    """One C view the product is added into: ``C += alpha * scale * acc``."""

    slot: int
    scale: str
    atomic: bool


@dataclass(frozen=True)
class ProductCase:
    """Everything one product of the stage needs, by product index."""

    index: int
    signature: int
    left: tuple[Source, ...]
    right: tuple[Source, ...]
    targets: tuple[Target, ...]
    text: str


@dataclass(frozen=True)
class Signature:
    """A main loop instantiation: how many views each operand sums."""

    index: int
    n_left: int
    n_right: int


@dataclass(frozen=True)
class ProductKernel:
    """Everything a product template arranges; computed by :func:`plan_kernel`."""

    name: str
    dtype: str
    ctype: str
    config: TileConfig
    threads: int
    warp_m: int
    warp_n: int
    frag_m: int  # FP64: 16-row mma tiles per warp; FP32: rows per thread
    frag_n: int  # FP64: 8-column mma tiles per warp; FP32: columns per thread
    lda_s: int
    ldb_s: int
    a_stage: int
    b_stage: int
    smem_bytes: int
    group_m: int
    a_plans: dict
    b_plans: dict
    batch: int
    n_a: int
    n_b: int
    n_c: int
    n_products: int
    signatures: tuple[Signature, ...]
    cases: tuple[ProductCase, ...]
    max_targets: int
    fields: tuple[ParamField, ...]
    params_bytes: int
    vec_sides: str  # which operand sides the vector-copy flag looks at
    vec: int  # elements per 16-byte piece
    template: str = field(default="")


GROUP_M = 8  # tile rows walked together so concurrent blocks share A and B panels in L2


def c_literal(value: Fraction) -> str:
    """The double nearest ``value`` as a C literal (round-trips exactly)."""
    return repr(float(value))


def _normalize(terms: Sequence[SpecTerm]) -> tuple[Fraction, tuple[Source, ...]]:
    """Factor the first coefficient out of an operand sum.

    A single view then needs no arithmetic at all (its coefficient moves into
    the epilogue), and ±1 sums become exact additions.
    """
    factor = terms[0].coef
    return factor, tuple(Source(t.slot, c_literal(t.coef / factor)) for t in terms)


def kernel_coefficients(spec: ProductStageSpec) -> Iterable[Fraction]:
    """Every coefficient the kernel of ``spec`` multiplies by, as :func:`_cases` writes them: each
    operand sum over its first coefficient, and the targets times those two."""
    for product in spec.products:
        left, right = product.left[0].coef, product.right[0].coef
        yield from (t.coef / left for t in product.left)
        yield from (t.coef / right for t in product.right)
        yield from (t.coef * left * right for t in product.targets)


def shared_targets(spec: ProductStageSpec) -> frozenset[int]:
    """C slots that two products of the launch add into: those need atomics."""
    counts: dict[int, int] = {}
    for product in spec.products:
        for target in product.targets:
            counts[target.slot] = counts.get(target.slot, 0) + 1
    return frozenset(slot for slot, count in counts.items() if count > 1)


def _cases(spec: ProductStageSpec) -> tuple[tuple[Signature, ...], tuple[ProductCase, ...]]:
    atomic = shared_targets(spec)
    signatures: dict[tuple[int, int], Signature] = {}
    cases = []
    for index, product in enumerate(spec.products):
        key = (len(product.left), len(product.right))
        signature = signatures.setdefault(key, Signature(len(signatures), *key))
        left_factor, left = _normalize(product.left)
        right_factor, right = _normalize(product.right)
        targets = tuple(
            Target(t.slot, c_literal(t.coef * left_factor * right_factor), t.slot in atomic) for t in product.targets
        )
        cases.append(ProductCase(index, signature.index, left, right, targets, describe(product)))
    return tuple(signatures.values()), tuple(cases)


def param_fields(dtype: str, batch: int, n_a: int, n_b: int, n_c: int) -> tuple[ParamField, ...]:
    """The by-value parameter struct: 8-byte members first, so C and NumPy agree on padding."""
    ctype = DTYPES[dtype][0]
    return (
        ParamField("a", f"const {ctype}*", "u8", (batch, n_a)),
        ParamField("b", f"const {ctype}*", "u8", (batch, n_b)),
        ParamField("c", f"{ctype}*", "u8", (batch, n_c)),
        ParamField("alpha", "double", "f8"),
        ParamField("lda", "int", "i4", (batch, n_a)),
        ParamField("ldb", "int", "i4", (batch, n_b)),
        ParamField("ldc", "int", "i4", (batch, n_c)),
        ParamField("m", "int", "i4"),
        ParamField("n", "int", "i4"),
        ParamField("k", "int", "i4"),
        ParamField("nbatch", "int", "i4"),
        ParamField("vec_ab", "int", "i4"),
        ParamField("vec_c", "int", "i4"),
    )


def params_dtype(fields: Iterable[ParamField]) -> np.dtype:
    """The NumPy structured dtype laid out exactly like the kernel's ``Params``."""
    return np.dtype([(f.name, f.numpy, f.shape) if f.shape else (f.name, f.numpy) for f in fields], align=True)


def max_batch(dtype: str, n_a: int, n_b: int, n_c: int, limit: int = PARAM_LIMIT) -> int:
    """The most batch entries whose pointers fit in one launch's parameters."""
    low, high = 1, 1
    while params_dtype(param_fields(dtype, high * 2, n_a, n_b, n_c)).itemsize <= limit:
        high *= 2
    high *= 2
    while low + 1 < high:
        mid = (low + high) // 2
        if params_dtype(param_fields(dtype, mid, n_a, n_b, n_c)).itemsize <= limit:
            low = mid
        else:
            high = mid
    return low


#: CUDA's limit on a grid's second dimension, which holds a launch's batch entries × products
GRID_Y_LIMIT = 65535


def launch_batch(spec: ProductStageSpec) -> int:
    """The most of ``spec``'s batch entries one launch computes: their pointers fit its parameters, and
    their blocks (one row of the grid per entry and product) fit the grid."""
    fits = min(max_batch(spec.dtype, spec.n_a, spec.n_b, spec.n_c), GRID_Y_LIMIT // len(spec.products))
    return min(spec.batch, fits)


def template_for(dtype: str) -> str:
    return {"float64": "product_f64.cu.j2", "float32": "product_f32.cu.j2"}[dtype]


def plan_kernel(spec: ProductStageSpec, config: TileConfig) -> ProductKernel:
    """Compute everything the template needs; raises ``ValueError`` for an unusable config."""
    problems = config_problems(config, spec.dtype)
    if problems:
        raise ValueError(f"tile config {config.label()} cannot build a {spec.dtype} kernel: " + "; ".join(problems))
    fields = param_fields(spec.dtype, spec.batch, spec.n_a, spec.n_b, spec.n_c)
    params_bytes = params_dtype(fields).itemsize
    if params_bytes > PARAM_LIMIT:
        raise ValueError(
            f"{spec.batch} batch entries need {params_bytes} bytes of kernel parameters (limit {PARAM_LIMIT}); "
            f"launch at most {max_batch(spec.dtype, spec.n_a, spec.n_b, spec.n_c)} at a time"
        )
    if (rows := spec.batch * len(spec.products)) > GRID_Y_LIMIT:
        raise ValueError(f"{spec.batch} batch entries of {len(spec.products)} products need {rows} rows of blocks "
                         f"(CUDA's limit {GRID_Y_LIMIT}); " + (f"launch at most {GRID_Y_LIMIT // len(spec.products)} at a "
                         "time" if len(spec.products) <= GRID_Y_LIMIT else "split the stage"))
    lda_s, ldb_s, a_stage, b_stage, smem = shared_bytes(config, spec.dtype)
    signatures, cases = _cases(spec)
    vec, one = vectors(spec.dtype)
    threads = config.threads
    if spec.dtype == "float64":
        frag_m, frag_n = config.warp_m // 16, config.warp_n // 8
        a_plans = {
            vec: copy_plan(config.bm, config.bk, vec, threads),
            one: copy_plan(config.bm, config.bk, one, threads),
        }
        vec_sides = "ab"
    else:
        frag_m, frag_n = config.warp_m // 4, config.warp_n // 8
        a_plans = {one: copy_plan(config.bm, config.bk, one, threads)}
        vec_sides = "b"
    b_plans = {v: copy_plan(config.bk, config.bn, v, threads) for v in (vec, one)}
    return ProductKernel(
        name=spec.name,
        dtype=spec.dtype,
        ctype=DTYPES[spec.dtype][0],
        config=config,
        threads=threads,
        warp_m=config.warp_m,
        warp_n=config.warp_n,
        frag_m=frag_m,
        frag_n=frag_n,
        lda_s=lda_s,
        ldb_s=ldb_s,
        a_stage=a_stage,
        b_stage=b_stage,
        smem_bytes=smem,
        group_m=GROUP_M,
        a_plans=a_plans,
        b_plans=b_plans,
        batch=spec.batch,
        n_a=spec.n_a,
        n_b=spec.n_b,
        n_c=spec.n_c,
        n_products=len(spec.products),
        signatures=signatures,
        cases=cases,
        max_targets=max(len(c.targets) for c in cases),
        fields=fields,
        params_bytes=params_bytes,
        vec_sides=vec_sides,
        vec=vec,
        template=template_for(spec.dtype),
    )


def render_product_stage(spec: ProductStageSpec, config: TileConfig) -> str:
    """Full CUDA source of the stage's kernel ``spec.name``: NVRTC- and nvcc-compilable, no includes."""
    kernel = plan_kernel(spec, config)
    return render(kernel.template, k=kernel)


def render_product_stages(stages: Sequence[tuple[ProductStageSpec, TileConfig]]) -> str:
    """Several stages in one translation unit, each in a namespace named after its kernel."""
    return render("product_stages.cu.j2", stages=[(spec.name, render_product_stage(spec, config)) for spec, config in stages])


