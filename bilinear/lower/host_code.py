"""What the C++ host layer's template arranges (:mod:`bilinear.lower.host` computes it): plain
dataclasses holding the C++ expression of every view, the slot arrays of fused launches, the
element-wise launches, the problem-node and flattened-table functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ozaki_host import OzakiCode

#: Every temporary of the library's workspace starts on a multiple of this many elements (vector
#: loads need 16-byte rows; a 256-byte start for float64).  The manifest counts the same.
TEMP_ALIGN = 32


@dataclass(frozen=True)
class FusedCall:
    """A launch of one fused kernel: its views by slot, as C++ expressions, and α's factor."""

    kernel: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    c: tuple[str, ...]
    scale: str


@dataclass(frozen=True)
class GemmCall:
    """``c = alpha·coef·a·b + beta·c`` on one target (library leaves)."""

    a: str
    b: str
    c: str
    coef: str
    beta: str


@dataclass(frozen=True)
class Leaf:
    """Leaf products with their dimensions: zero the overwritten targets, then one fused call
    or a GEMM per target."""

    dims: tuple[str, str, str]
    zero: tuple[str, ...]  # target views set to zero first (overwriting products, fused kernels)
    fused: FusedCall | None
    gemms: tuple[GemmCall, ...]


@dataclass(frozen=True)
class EwGroup:
    rows: str
    cols: str
    slots: tuple[int, ...]


@dataclass(frozen=True)
class EwCall:
    kernel: str
    views: tuple[str, ...]
    groups: tuple[EwGroup, ...]
    width: int


@dataclass(frozen=True)
class ChildCall:
    function: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    c: tuple[str, ...]


@dataclass(frozen=True)
class ProductOp:
    """A product stage of a node: flattened, recursing into children, or a leaf launch."""

    flat: str | None  # the flat function, called with the concatenated views of the statements
    flat_views: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    children: tuple[ChildCall, ...]
    recurse_check: str  # C++ condition (block dimensions bm, bk, bn) under which the children split
    leaf: Leaf | None


@dataclass(frozen=True)
class NodeCode:
    name: str
    level: int
    n_views: tuple[int, int, int]
    flat: str | None  # the node flattens: call this flat function with its own views
    recurse_check: str  # C++ condition under which the node splits
    grid: tuple[int, int, int]
    zero_targets: bool
    peels: tuple[Leaf, ...]  # the "m" and "n" strips, before the schedule
    buffers: tuple[tuple[str, str], ...]  # (variable, view expression)
    ops: tuple[EwCall | ProductOp, ...]
    peel_k: Leaf | None
    leaf: Leaf  # when it does not split


@dataclass(frozen=True)
class FlatCase:
    stop: int
    launches: tuple[Leaf, ...]


@dataclass(frozen=True)
class FlatCode:
    name: str
    start: int
    zero: tuple[str, ...]
    cases: tuple[FlatCase, ...]


@dataclass(frozen=True)
class KernelCode:
    """A fused kernel as the host launches it (constants live in its namespace)."""

    name: str
    n: tuple[int, int, int]
    smem: int
    vec: int
    vec_sides: str


@dataclass(frozen=True)
class Condition:
    """A shape condition of the schedule at ``level`` (0-based) as C++ over its block dimensions."""

    level: int
    check: str  # e.g. "bk == bn"
    text: str  # as the report states it


@dataclass(frozen=True)
class Temp:
    level: int
    rows: str  # in the level's block dimensions: "bm", "bk" or "bn"
    cols: str
    # At the first level, whether it is the overwriting schedule's (True) or the accumulating one's
    # (False): only one of them runs there in a call.  None below.
    top: bool | None = None


@dataclass(frozen=True)
class BreadthCode:
    """The breadth-first levels as the host runs them in place of each leaf GEMM whose blocks of
    the grid are at least the cutoff: split A and B into the workspace, the rank leaf GEMMs (one
    strided-batched call when ``batched``), merge into C; strips past the grid as plain GEMMs."""

    split_a: str
    split_b: str
    merge: str
    grid: tuple[int, int, int]  # A's rows, the inner dimension, B's columns (row-major)
    rank: int
    batched: bool
    gemm_batched: str  # cublasDgemmStridedBatched or its float32 twin


@dataclass(frozen=True)
class HostDtype:
    """Everything one ``<name>_Xgemm`` needs."""

    function: str
    namespace: str
    dtype: str
    ctype: str
    gemm: str
    geam: str
    width: int
    levels: tuple[tuple[int, int, int], ...]  # each level's algorithm shape
    cutoff: int
    const_inputs: bool
    restores_inputs: bool  # every in-place schedule it runs declares `restore`
    top_overwrites: str | None  # node run when the first level overwrites C
    top_accumulates: str
    top_from_zero: bool  # it overwrites only with beta = 0 (an accumulating schedule's from-zero plan)
    nodes: tuple[NodeCode, ...]
    flats: tuple[FlatCode, ...]
    kernels: tuple[KernelCode, ...]
    temps: tuple[Temp, ...]
    conditions: tuple[Condition, ...] = ()  # checked before anything runs (status 3000 + level)
    temp_align: int = TEMP_ALIGN  # elements each temporary's start is rounded to
    breadth: BreadthCode | None = None  # the innermost levels, run breadth-first at the leaves
    direct_leaf: bool = False  # no depth-first level and library GEMM leaves: the call is one leaf GEMM
    # With --workspace-limit: the same product with fewer breadth-first levels, most first (each in a
    # namespace of its own); a call runs the first plan whose workspace fits ``workspace_limit`` bytes.
    fallbacks: tuple[HostDtype, ...] = ()
    workspace_limit: int | None = None
    ozaki: OzakiCode | None = None  # the ozaki leaf's passes and tables, where the leaf is ozaki
    # Fixed moduli: the longest chunk of k a leaf may take, by the depth-first levels a call runs and whether
    # its breadth-first ones do (ozaki_host.k_limits; longer: 5000), and the same said of every plan, in words
    oz_limits: tuple[tuple[int, int], ...] | None = None
    oz_limit_text: str | None = None
    # The largest coefficient a leaf multiplies alpha by, where above 1 (bilinear.lower.scales.alpha_scale):
    # a call whose |alpha| times it is past the type's range returns -5 before anything runs
    alpha_scale: float | None = None

    @property
    def members(self) -> tuple[HostDtype, ...]:
        """This plan and its fallbacks, in the order a call tries them."""
        return (self, *self.fallbacks)

    @property
    def any_conditions(self) -> tuple[Condition, ...]:
        """The shape conditions some plan a call may run checks (3000 + level where one breaks)."""
        return tuple(dict.fromkeys(c for plan in self.members for c in plan.conditions))

    @property
    def largest_alpha_scale(self) -> float | None:
        """The largest alpha_scale of the plans a call may run (the header's word on -5)."""
        return max((plan.alpha_scale for plan in self.members if plan.alpha_scale is not None), default=None)

    @property
    def fallback_overwrites(self) -> bool:
        """Whether a fallback plan (not this one) computes C = A*B over C, refusing beta where it runs."""
        return any(plan.top_overwrites and not plan.top_from_zero for plan in self.fallbacks)
