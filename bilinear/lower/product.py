"""The fused product kernel of one product stage: its spec, tile configuration,
rendering, and the occupancy pruning its tuner starts from.

A product stage is a set of products ``M_p = (Σ u·A_slot)(Σ v·B_slot)``, each
added with signs into one or more C blocks, for ``batch`` independent
sub-problems (recursion branches) at once.  :func:`render_product_stage` turns a
:class:`ProductStageSpec` and a :class:`TileConfig` into CUDA source; every
number the kernel needs (tile plans, padded strides, the literal each target
is scaled by, which targets need atomics, the layout of the by-value parameter
struct) is computed here into a :class:`ProductKernel`, and the templates
``product_f64.cu.j2`` (FP64 tensor cores, ``mma.sync``) and
``product_f32.cu.j2`` (FFMA) only arrange it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .render import render, template_hash

DTYPES = {"float64": ("double", 8), "float32": ("float", 4)}

#: Bytes of by-value kernel parameters a launch may carry (Volta+ with CUDA >= 12.1).
PARAM_LIMIT = 32764
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# --- the contract with the scheduler -----------------------------------------


@dataclass(frozen=True)
class SpecTerm:
    """``coef * view[slot]``."""

    slot: int
    coef: Fraction

    def __post_init__(self) -> None:
        object.__setattr__(self, "coef", Fraction(self.coef))
        if self.slot < 0:
            raise ValueError(f"slot {self.slot} is negative")
        if self.coef == 0:
            raise ValueError(f"slot {self.slot} has a zero coefficient")


def _check_terms(what: str, terms: tuple[SpecTerm, ...]) -> None:
    if not terms:
        raise ValueError(f"a fused product needs at least one {what} term")
    slots = [t.slot for t in terms]
    if len(slots) != len(set(slots)):
        raise ValueError(f"{what} terms name slot(s) {sorted(s for s in set(slots) if slots.count(s) > 1)} twice")


@dataclass(frozen=True)
class FusedProduct:
    """``targets[t] += alpha * coef_t * (Σ left) @ (Σ right)``."""

    left: tuple[SpecTerm, ...]
    right: tuple[SpecTerm, ...]
    targets: tuple[SpecTerm, ...]

    def __post_init__(self) -> None:
        for what in ("left", "right", "targets"):
            object.__setattr__(self, what, tuple(getattr(self, what)))
            _check_terms(what, getattr(self, what))


@dataclass(frozen=True)
class ProductStageSpec:
    """One launch: every product of a stage for ``batch`` independent sub-problems.

    Each batch entry supplies ``n_a`` A-side views (M×K), ``n_b`` B-side views
    (K×N) and ``n_c`` C-side views (M×N); product terms name them by slot.
    """

    name: str
    dtype: str
    products: tuple[FusedProduct, ...]
    n_a: int
    n_b: int
    n_c: int
    batch: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "products", tuple(self.products))
        if not _IDENTIFIER.match(self.name):
            raise ValueError(f"kernel name {self.name!r} is not a C identifier")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {sorted(DTYPES)}")
        if not self.products:
            raise ValueError("a product stage needs at least one product")
        if self.batch < 1:
            raise ValueError(f"batch must be at least 1, not {self.batch}")
        for index, product in enumerate(self.products):
            for side, count in (("left", self.n_a), ("right", self.n_b), ("targets", self.n_c)):
                bad = [t.slot for t in getattr(product, side) if t.slot >= count]
                if bad:
                    raise ValueError(f"product {index} {side} names slot(s) {bad} but there are only {count}")



def reference_update(spec: ProductStageSpec, entry, alpha: float, xp) -> list:
    """What one batch entry of ``spec`` adds to each of its C views, in float64: the kernel's
    contract ``C_t += alpha·coef_t·(Σ u·A)(Σ v·B)``, computed plainly to check it against.

    ``entry`` is (A views, B views, C views) of NumPy or CuPy arrays (``xp`` is their module).
    """
    a_views, b_views, c_views = entry
    deltas = [xp.zeros(c.shape) for c in c_views]
    for product in spec.products:
        left = sum(float(t.coef) * a_views[t.slot].astype(np.float64) for t in product.left)
        right = sum(float(t.coef) * b_views[t.slot].astype(np.float64) for t in product.right)
        value = left @ right
        for t in product.targets:
            deltas[t.slot] += alpha * float(t.coef) * value
    return deltas


def gemm_spec(dtype: str, name: str | None = None) -> ProductStageSpec:
    """The plain GEMM ``C += alpha·A·B`` as a product stage."""
    one = Fraction(1)
    product = FusedProduct((SpecTerm(0, one),), (SpecTerm(0, one),), (SpecTerm(0, one),))
    return ProductStageSpec(name or f"gemm_{dtype}", dtype, (product,), 1, 1, 1, 1)


# --- tile configurations ------------------------------------------------------


@dataclass(frozen=True)
class TileConfig:
    """The tunable shape of the kernel.

    ``bm×bn`` is the C tile of a block, ``bk`` the depth of one pipeline stage,
    ``warps_m×warps_n`` the warps that split the C tile, ``stages`` the depth of
    the cp.async ring, ``k_step`` the k of one tensor-core instruction (8 or 16
    for FP64 ``mma.sync``; 1 for FFMA) and ``min_blocks`` the second argument of
    ``__launch_bounds__`` (the blocks per SM the register allocator must allow).
    ``frag_buffers`` is 1 (load a k-step's fragments, then use them) or 2 (load step s+1's
    while step s computes, with the ring's barrier before a slot's last step).
    """

    bm: int
    bn: int
    bk: int
    warps_m: int
    warps_n: int
    stages: int
    k_step: int
    min_blocks: int = 1
    frag_buffers: int = 1

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def warp_m(self) -> int:
        return self.bm // self.warps_m

    @property
    def warp_n(self) -> int:
        return self.bn // self.warps_n

    def label(self) -> str:
        return (
            f"{self.bm}x{self.bn}x{self.bk} w{self.warps_m}x{self.warps_n} s{self.stages} "
            f"k{self.k_step} b{self.min_blocks} f{self.frag_buffers}"
        )

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict) -> TileConfig:
        return cls(**{name: int(data[name]) for name in cls.__dataclass_fields__ if name in data})


def config_problems(config: TileConfig, dtype: str) -> list[str]:
    """Why ``config`` cannot build a kernel for ``dtype`` (empty when it can)."""
    problems = []
    if config.bm % config.warps_m or config.bn % config.warps_n:
        problems.append("the warps do not split the C tile evenly")
    if config.stages < 2:
        problems.append("cp.async needs at least 2 pipeline stages")
    if config.frag_buffers not in (1, 2):
        problems.append("fragments are single- or double-buffered")
    elif config.frag_buffers == 2 and config.k_step and (config.bk // config.k_step) % 2:
        problems.append("double-buffered fragments need an even number of k-steps per slot")
    if dtype == "float64":
        if config.k_step not in (4, 8, 16):
            problems.append("FP64 mma.sync has k = 4, 8 or 16")
        elif config.bk % config.k_step:
            problems.append(f"bk={config.bk} is not a multiple of the mma k={config.k_step}")
        if config.warp_m % 16 or config.warp_n % 8:
            problems.append("a warp tile must be a whole number of 16x8 mma tiles")
    else:
        if config.k_step != 1:
            problems.append("FFMA has k_step 1")
        if config.warp_m // 4 not in (4, 8) or config.warp_m % 4:
            problems.append("a float32 warp tile has 16 or 32 rows (4 lane rows x 4 or 8)")
        if config.warp_n // 8 not in (4, 8) or config.warp_n % 8:
            problems.append("a float32 warp tile has 32 or 64 columns (8 lane columns x 4 or 8)")
    for vec in vectors(dtype):
        for side, rows, cols in _copied_tiles(config, dtype, vec):
            if _plan_problem(rows, cols, vec, config.threads):
                problems.append(f"the threads do not cover the {side} tile ({rows}x{cols}) in pieces of {vec}")
    return problems


def vectors(dtype: str) -> tuple[int, int]:
    """Elements per piece of a tile copy: 16-byte pieces where aligned, one element where not."""
    return (16 // DTYPES[dtype][1], 1)


def _copied_tiles(config: TileConfig, dtype: str, vec: int) -> list[tuple[str, int, int]]:
    # The float32 A tile is always copied an element at a time: it is transposed on the way.
    a_vec_ok = dtype == "float64" or vec == 1
    tiles = [("B", config.bk, config.bn)]
    if a_vec_ok:
        tiles.insert(0, ("A", config.bm, config.bk))
    return tiles


def _plan_problem(rows: int, cols: int, vec: int, threads: int) -> bool:
    if cols % vec:
        return True
    per_row = cols // vec
    if per_row > threads or threads % per_row:
        return True
    row_step = threads // per_row
    return rows % row_step != 0


#: Configurations used when nothing is cached for the GPU: the tuner's winners on the lent
#: H100 (benchmarks/PRODUCT_NOTES.md).  The FP64 one: 128x128 C tile, 8 warps of 32x64,
#: mma m16n8k4, double-buffered fragments; 244 registers, 112 KiB of shared memory.
DEFAULTS: dict[tuple[str, str], TileConfig] = {
    ("float64", "single"): TileConfig(128, 128, 16, 4, 2, 3, 4, 1, 2),
    ("float64", "sum"): TileConfig(128, 64, 16, 4, 2, 3, 8, 1, 1),
    ("float32", "single"): TileConfig(64, 128, 16, 2, 2, 3, 1, 1, 1),
    ("float32", "sum"): TileConfig(128, 64, 16, 4, 2, 3, 1, 2, 1),
}


def variant(spec: ProductStageSpec) -> str:
    """``"sum"`` when some operand adds several views (register-staged loads), else ``"single"``."""
    return "sum" if any(len(p.left) > 1 or len(p.right) > 1 for p in spec.products) else "single"



def default_config(spec: ProductStageSpec) -> TileConfig:
    """The configuration a spec renders with where no tuned one is known (generated artifacts)."""
    return DEFAULTS[(spec.dtype, variant(spec))]


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


def shared_targets(spec: ProductStageSpec) -> frozenset[int]:
    """C slots that two products of the launch add into: those need atomics."""
    counts: dict[int, int] = {}
    for product in spec.products:
        for target in product.targets:
            counts[target.slot] = counts.get(target.slot, 0) + 1
    return frozenset(slot for slot, count in counts.items() if count > 1)


def describe(product: FusedProduct) -> str:
    """``(+1*A[0] +1*A[1]) * (...) -> +1*C[0]``: one product of a spec, by slot."""
    def side(letter: str, terms: Sequence[SpecTerm]) -> str:
        return " ".join(f"{'+' if t.coef > 0 else '-'}{abs(t.coef)}*{letter}[{t.slot}]" for t in terms)

    return f"({side('A', product.left)}) * ({side('B', product.right)}) -> {side('C', product.targets)}"


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


def template_for(dtype: str) -> str:
    return {"float64": "product_f64.cu.j2", "float32": "product_f32.cu.j2"}[dtype]


def shared_bytes(config: TileConfig, dtype: str) -> tuple[int, int, int, int, int]:
    """(lda_s, ldb_s, a_stage, b_stage, total bytes) of the shared-memory ring.

    FP64 keeps A as [bm][bk+4] and B as [bk][bn+4]: with a row length of 4 mod
    16 doubles the mma fragment loads (lanes g=0..7 × t=0..3) hit 16 distinct
    8-byte bank pairs per half-warp.  FP32 keeps A transposed, [bk][bm+4], so a
    thread's rows are one float4; B is [bk][bn] (float4 reads are conflict-free).
    """
    size = DTYPES[dtype][1]
    if dtype == "float64":
        lda_s, ldb_s = config.bk + 4, config.bn + 4
        a_stage, b_stage = config.bm * lda_s, config.bk * ldb_s
    else:
        lda_s, ldb_s = config.bm + 4, config.bn
        a_stage, b_stage = config.bk * lda_s, config.bk * ldb_s
    return lda_s, ldb_s, a_stage, b_stage, (a_stage + b_stage) * config.stages * size


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


def source_hash(dtype: str) -> str:
    """Hash of the templates a ``dtype`` kernel is rendered from (compiled-kernel cache keys)."""
    return template_hash(template_for(dtype)) + template_hash("product_common.cu.j2")


# --- occupancy: the tuner's pruning -----------------------------------------


@dataclass(frozen=True)
class DeviceLimits:
    """Per-SM limits of the occupancy calculation (defaults: H100, compute capability 9.0)."""

    sms: int = 132
    max_warps: int = 64
    max_blocks: int = 32
    registers: int = 65536
    max_registers_per_thread: int = 255
    register_unit: int = 256  # registers are allocated per warp in units of 256
    shared: int = 233472  # 228 KiB per SM
    shared_per_block: int = 232448  # 227 KiB opt-in per block
    shared_reserved: int = 1024  # the runtime keeps 1 KiB per block


@dataclass(frozen=True)
class Resources:
    """A compiled kernel's resource report (ptxas -v, or CuPy's function attributes)."""

    registers: int
    spill_bytes: int = 0
    static_shared: int = 0


@dataclass(frozen=True)
class Occupancy:
    blocks: int
    warps: int
    limiter: str


def occupancy(config: TileConfig, dtype: str, resources: Resources, limits: DeviceLimits = DeviceLimits()) -> Occupancy:
    """Blocks and warps per SM, and which resource stops there."""
    warps = config.threads // 32
    regs_per_warp = -(-resources.registers * 32 // limits.register_unit) * limits.register_unit
    smem = shared_bytes(config, dtype)[4] + resources.static_shared
    bounds = {
        "warps": limits.max_warps // warps,
        "blocks": limits.max_blocks,
        "registers": limits.registers // (regs_per_warp * warps) if regs_per_warp else limits.max_blocks,
        "shared memory": (limits.shared // (smem + limits.shared_reserved)) if smem <= limits.shared_per_block else 0,
    }
    limiter = min(bounds, key=bounds.get)
    blocks = bounds[limiter]
    return Occupancy(blocks, blocks * warps, limiter)


@dataclass(frozen=True)
class Candidate:
    config: TileConfig
    resources: Resources
    occupancy: Occupancy
    l2_bytes_per_flop: float
    verdict: str  # "keep", or why it was pruned


def l2_bytes_per_flop(config: TileConfig, dtype: str) -> float:
    """Operand bytes a block loads per flop it does: (bm + bn)·size / (2·bm·bn)."""
    return DTYPES[dtype][1] * (config.bm + config.bn) / (2 * config.bm * config.bn)


def prune(
    measured: Sequence[tuple[TileConfig, Resources]],
    dtype: str,
    limits: DeviceLimits = DeviceLimits(),
    min_warps: int = 8,
    keep: int = 6,
) -> list[Candidate]:
    """Judge every compiled candidate; the first ``keep`` with verdict "keep" are worth timing.

    Pruned: register spills (local memory in the main loop), no block fits on
    an SM, or fewer than ``min_warps`` warps per SM (two per scheduler: one
    warp's shared loads and barrier waits need another to cover them).  The
    survivors are ranked by the L2 traffic of their resident tiles (the
    many-core paper's rule: bigger tiles at full occupancy first), then by warps.
    """
    judged = []
    for config, resources in measured:
        occ = occupancy(config, dtype, resources, limits)
        intensity = l2_bytes_per_flop(config, dtype)
        if resources.spill_bytes:
            verdict = f"spills {resources.spill_bytes} bytes"
        elif resources.registers > limits.max_registers_per_thread:
            verdict = f"{resources.registers} registers per thread"
        elif occ.blocks == 0:
            verdict = f"no block fits ({occ.limiter})"
        elif occ.warps < min_warps:
            verdict = f"{occ.warps} warps per SM ({occ.limiter} limit)"
        else:
            verdict = "keep"
        judged.append(Candidate(config, resources, occ, intensity, verdict))
    kept = sorted((c for c in judged if c.verdict == "keep"), key=lambda c: (c.l2_bytes_per_flop, -c.occupancy.warps))
    for extra in kept[keep:]:
        judged[judged.index(extra)] = Candidate(
            extra.config, extra.resources, extra.occupancy, extra.l2_bytes_per_flop, "ranked below the timed set"
        )
    order = {id(c): i for i, c in enumerate(kept[:keep])}
    return sorted(judged, key=lambda c: order.get(id(c), len(order)))


_PTXAS_FUNCTION = re.compile(r"Compiling entry function '(\w+)'|Function properties for (\w+)")
_PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"Used (\d+) registers")
_PTXAS_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas(report: str) -> dict[str, Resources]:
    """Per-kernel :class:`Resources` from ``ptxas -v`` output (nvcc ``-Xptxas -v``)."""
    found: dict[str, dict] = {}
    current = None
    for line in report.splitlines():
        match = _PTXAS_FUNCTION.search(line)
        if match:
            current = match.group(1) or match.group(2)
            found.setdefault(current, {"registers": 0, "spill_bytes": 0, "static_shared": 0})
            continue
        if current is None:
            continue
        spill = _PTXAS_SPILL.search(line)
        if spill:
            found[current]["spill_bytes"] = int(spill.group(2)) + int(spill.group(3))
        used = _PTXAS_USED.search(line)
        if used:
            found[current]["registers"] = int(used.group(1))
            smem = _PTXAS_SMEM.search(line)
            if smem:
                found[current]["static_shared"] = int(smem.group(1))
    return {name: Resources(**values) for name, values in found.items()}


# --- candidate sets -----------------------------------------------------------


def candidate_configs(dtype: str) -> list[TileConfig]:
    """The tuner's search space: every config here builds (see :func:`config_problems`).

    FP64 keeps to C tiles of 128×128 and 128×64 (smaller ones need more L2 bandwidth than
    the chip has at full DMMA rate; larger ones do not fit the register file): warps of
    64×32 or 32×64 (8 per block) or 32×32 (16, or 8 in a half-size block).
    """
    if dtype == "float64":
        shapes = [  # bm, bn, warps_m, warps_n, min_blocks (the register cap: 255 for one block, 128 for two)
            (128, 128, 4, 4, 1), (128, 128, 2, 4, 1), (128, 128, 4, 2, 1),
            (128, 64, 4, 2, 1), (128, 64, 4, 2, 2), (64, 128, 2, 4, 1), (64, 128, 2, 4, 2),
        ]  # fmt: skip
        configs = [
            TileConfig(bm, bn, bk, wm, wn, stages, k_step, min_blocks, frag_buffers)
            for bm, bn, wm, wn, min_blocks in shapes
            for bk in (16, 32)
            for stages in (3, 4)
            for k_step in (4, 8, 16)
            for frag_buffers in (1, 2)
        ]
    else:
        shapes = [(128, 128, 4, 2), (128, 128, 4, 4), (128, 64, 4, 2), (64, 128, 2, 2), (128, 256, 4, 4)]
        configs = [
            TileConfig(bm, bn, bk, wm, wn, stages, 1, min_blocks, frag_buffers)
            for bm, bn, wm, wn in shapes
            for bk in (8, 16)
            for stages in (3, 4)
            # two blocks of 8 warps cap registers at 128: also try one block with room to spare
            for min_blocks in sorted({max(1, 16 // (wm * wn)), 1})
            for frag_buffers in (1, 2)
        ]
    return [
        c
        for c in configs
        if not config_problems(c, dtype) and shared_bytes(c, dtype)[4] <= DeviceLimits().shared_per_block
    ]
