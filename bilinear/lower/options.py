"""How to lower: the options, and the tables the command line takes its choices from."""

from __future__ import annotations

import numbers
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class LeafKind:
    """How the products at the bottom of the recursion are computed.

    ``sums``: the leaf forms operand sums and adds into several targets itself (the generated
    product kernel); otherwise it multiplies single views into one target, as a library GEMM
    does, and the "single target" pass rewrites schedules for it.  ``gemm``: for single-view
    leaves, ``"module:factory"`` with ``factory(backend, options)`` returning the runtime's
    ``gemm(a, b, c, alpha, beta)``; None is the backend's own GEMM (cuBLAS, or NumPy).
    """

    dtypes: tuple[str, ...]
    sums: bool
    gemm: str | None
    help: str


#: Leaf kinds by name: a new kind is one entry here plus the module its ``gemm`` names.
#: ``bilinear --help`` lists exactly these, and DTYPES.
LEAF_KINDS = {
    "cublas": LeafKind(DTYPES, False, None, "cuBLAS GEMMs on block views"),
    "fused": LeafKind(DTYPES, True, None, "the generated product kernel (forms operand sums, adds into several targets)"),
    "ozaki": LeafKind(DTYPES, False, "bilinear.runtime.ozaki_cuda:leaf_gemm",
                      "FP64 (or FP32) on the int8 tensor cores by the Ozaki scheme II (cuBLAS int8 GEMMs, exact CRT)"),
}
LEAVES = tuple(LEAF_KINDS)
#: How ozaki leaves scale rows of A and columns of B to integers: by their largest magnitude (the
#: scheme's documented error bound) or their 2-norm (about two bits more at k = 16384 on random data
#: with the same moduli; bilinear/runtime/ozaki.py says why).
OZAKI_SCALINGS = ("max", "norm")
# How a stage's leaf products are issued (the OpenCL K-G-I report's launch classes):
# "serial" one GEMM after another on one stream; "streams" the independent GEMMs of a stage
# (all of them for breadth-first leaves) spread over concurrent streams; "batched" the
# breadth-first leaves as one strided-batched GEMM (one kernel, homogeneous work), depth-first
# stages as with "streams".  Element-wise stages are always one kernel with a work group per
# block shape (heterogeneous groups); they already run at the copy bandwidth.
LAUNCHES = ("serial", "streams", "batched")

# With fused leaves, an algorithm's default schedule carries its operand sums down to the
# fused kernel, and over several such levels the leaf products multiply and so do their
# sums' lengths.  NVRTC's time for one kernel grows faster than linearly with its distinct
# (left terms, right terms) pairs (one pipeline each: nvcc takes 76 s on winograd's 14), so a
# level carries sums down only while the products below fit one launch and their pairs stay
# few; above, its sums are formed in temporaries, with single-target products, so every
# branch below launches the same kernels.  (grey333 carried down three levels needed 28
# kernels holding 1,901 pipelines, 95 in one; now 8 holding 48.  `benchmarks/host_costs.py`
# prints both counts for every shipped configuration.)
LAUNCH_PRODUCTS = 512
LAUNCH_SUM_SHAPES = 12
# Distinct fused product kernels one lowering may generate.  An in-place schedule's leaves add
# into more C blocks at every level, so its kernels about double per level: msmes has 21 at
# three levels (nvcc: 220 s on two cores), 93 at five, 765 at eight (a 215 MB .cu), and at 32
# levels the lowering ran out of memory.  Past this count it is refused, naming the way out.
MAX_FUSED_KERNELS = 128
# ... and the C views one fused product adds into, which double per level as well (msmes: 64 at five
# levels; no shipped scheme needs more than 64): checked as the tree is built, so a deep tree
# stops where its products outgrow this rather than after the whole tree.
MAX_PRODUCT_TARGETS = 256
# A library past this many kernels is said to take minutes to build: nvcc -O1 builds about 2.6 a second on two
# shared cores (AlphaTensor's <4,4,4;49> depth-first, 112 kernels in 1.1 MB of CUDA: 43 s), and a catalogue
# scheme of a few hundred products has a kernel per stage (grey333 squared, <9,9,9;529>: 1,128 in 14 MB, not
# built in ten minutes; breadth-first, 6).
MANY_KERNELS = 256
# Breadth-first levels run the Kronecker power of their algorithms as one batch: R^B products whose
# split and merge kernels grow with it (strassen at five levels, 16,807 products, lowers in about
# 12 s; grey333 at four, 279,841, ran for minutes into gigabytes).  Past this many, refused.
MAX_BREADTH_PRODUCTS = 20000
# The split and merge kernels are unrolled: their terms (every product's operand sums and every C
# block's sum of products) are what NVRTC and nvcc take the time of.  NVRTC through the CuPy backend on
# the lent H100's host (benchmarks/results/issue13/session53/nvrtc_breadth_probe.txt): winograd at two
# levels, 588 terms, 0.5 s; strassen at three, 5,184, 16 s; grey333 at two, 7,704, 46 s; strassen at
# four (msmes2 at two), 62,208, 137 s; winograd at four, 115,248, not done in 5 minutes.  nvcc -O3 on
# two shared cores here: strassen at four 357 s, grey333 at three (390,608) not done in 25 minutes.
# Past this many, kernels are not built (the NumPy backend, which builds none, runs them).
MAX_BREADTH_TERMS = 70000
# Each level divides a dimension by at least 2, so no real matrix reaches 32 levels; a larger
# count is a typo (and lowering 10^5 levels would take minutes).
MAX_LEVELS = 32
# A block dimension the C library holds (an int, as cuBLAS's); a larger cutoff had wrapped round.
MAX_CUTOFF = 2**31 - 1


class TooLarge(ValueError):
    """A lowering past MAX_FUSED_KERNELS or MAX_PRODUCT_TARGETS: fewer levels would lower (so
    ``levels="auto"`` stops below it)."""


class OptionError(ValueError):
    """A lowering option out of range or contradicting another: a ValueError to the API, a usage
    error (status 2, with the usage line) on the command line."""


@dataclass(frozen=True)
class Options:
    """How to lower: element type, levels of recursion, leaf kind, element-wise fusion."""

    dtype: str = "float64"
    levels: int = 1
    leaf: str = "cublas"
    fuse: bool = True
    cutoff: int = 1  # stop recursing when a block would have a dimension below this
    moduli: int | None = None  # ozaki leaves: number of moduli (None: enough for 53 bits, 24 in float32; runtime/ozaki.py)
    scaling: str = "max"  # ozaki leaves: one of OZAKI_SCALINGS
    # The innermost ``breadth`` of the levels run breadth-first (bilinear.lower.breadth): one
    # split per operand, the leaf GEMMs, one merge; the levels above recurse depth-first.
    breadth: int = 0
    workspace_limit: int | None = None  # bytes breadth-first levels may hold; fewer levels run beyond it
    launch: str = "serial"  # how leaf products are issued: one of LAUNCHES

    @classmethod
    def from_args(cls, args) -> Options:
        """The options a command line asked for (``--dtype``, ``--levels``, ``--leaf``, ``--no-fuse``,
        ``--cutoff``); the one place a CLI namespace becomes Options."""
        defaults = cls()
        asked = {name: getattr(args, name, getattr(defaults, name)) for name in cls.__dataclass_fields__}
        given = asked["scaling"] is not None  # the command line's default is None, so `--scaling max` counts too
        asked["scaling"] = asked["scaling"] or defaults.scaling
        check_ozaki_options(asked["leaf"], asked["moduli"], asked["scaling"], scaling_given=given)
        return cls(**asked)

    def __post_init__(self) -> None:
        for name in ("levels", "cutoff", "breadth", "moduli", "workspace_limit"):  # NumPy's integers too
            value = getattr(self, name)
            if not isinstance(value, (int, str, type(None))) and hasattr(value, "__index__"):
                try:
                    object.__setattr__(self, name, operator.index(value))
                except TypeError:  # an array of several (it has __index__ too): refused below as no whole number
                    pass
        if isinstance(self.fuse, np.bool_):  # NumPy's
            object.__setattr__(self, "fuse", bool(self.fuse))
        if not isinstance(self.fuse, bool):
            raise OptionError(f"fuse must be True or False, not {self.fuse!r}")  # "no" had meant True
        if self.dtype not in DTYPES:
            raise OptionError(f"dtype must be float32 or float64, not {self.dtype!r}")
        if self.leaf not in LEAVES:
            auto = "; leaf='auto' chooses with levels='auto'" if self.leaf == "auto" else ""
            raise OptionError(f"leaf must be one of {', '.join(LEAVES)}, not {self.leaf!r}{auto}")
        if self.dtype not in LEAF_KINDS[self.leaf].dtypes:
            raise OptionError(
                f"the {self.leaf} leaf computes {' and '.join(LEAF_KINDS[self.leaf].dtypes)} products, not "
                f"{self.dtype} ({LEAF_KINDS[self.leaf].help}); use the cublas or fused leaf for {self.dtype}"
            )
        if self.moduli is not None and (isinstance(self.moduli, bool) or not isinstance(self.moduli, int)
                                        or not 1 <= self.moduli <= 20):
            raise OptionError(f"moduli must be a whole number from 1 to 20, not {self.moduli!r}")
        if self.scaling not in OZAKI_SCALINGS:
            raise OptionError(f"scaling must be one of {', '.join(OZAKI_SCALINGS)}, not {self.scaling!r}")
        if isinstance(self.levels, bool) or not isinstance(self.levels, int):
            raise OptionError(f"levels must be a whole number, not {self.levels!r}")  # noqa: TRY004 - documented
        if not 0 <= self.levels <= MAX_LEVELS:
            raise OptionError(
                f"levels must be between 0 and {MAX_LEVELS}, not {self.levels}: each level of a scheme of more "
                f"than one block at least halves a dimension, so {MAX_LEVELS} levels already need matrices of "
                f"2^{MAX_LEVELS} rows or columns"
            )
        if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
            raise OptionError(f"cutoff must be a whole number, not {self.cutoff!r}")  # noqa: TRY004 - documented
        if not 1 <= self.cutoff <= MAX_CUTOFF:
            raise OptionError(f"cutoff must be between 1 and {MAX_CUTOFF} (2^31 - 1), not {self.cutoff}")
        self._check_breadth()

    def _check_breadth(self) -> None:
        if self.launch not in LAUNCHES:
            raise OptionError(f"launch must be one of {', '.join(LAUNCHES)}, not {self.launch!r}")
        if isinstance(self.breadth, bool) or not isinstance(self.breadth, int):
            raise OptionError(f"breadth must be a whole number, not {self.breadth!r}")  # noqa: TRY004 - documented
        if not 0 <= self.breadth <= self.levels:
            raise OptionError(
                f"breadth must be between 0 and the {self.levels} level(s) asked for, not {self.breadth}: it counts "
                "the innermost levels that run breadth-first"
            )
        if self.launch == "batched" and not self.breadth:
            raise OptionError("batched launches (--launch batched, launch='batched') make breadth-first leaves one batched "
                              "GEMM, and there are no breadth-first levels: ask for some (--breadth, breadth=), or "
                              "streams (--launch streams) for a stage's GEMMs")
        if self.breadth and LEAF_KINDS[self.leaf].sums:
            raise OptionError(
                f"breadth-first levels multiply single operands at their leaves, which the {self.leaf} leaf does not; "
                "use cublas leaves (--leaf cublas, leaf='cublas'; or another single-view leaf such as ozaki) with "
                "breadth-first levels"
            )
        kind = LEAF_KINDS[self.leaf]
        if self.launch != "serial" and (kind.sums or kind.gemm is not None):  # it had been ignored without a word
            how = "on concurrent streams" if self.launch == "streams" else "as one strided-batched GEMM"
            why = ("runs each stage's products as one kernel" if kind.sums else
                   "runs its leaves one after another (they share one workspace)")
            raise OptionError(f"--launch {self.launch} (launch={self.launch!r}) issues cuBLAS leaves {how}; the "
                              f"{self.leaf} leaf {why}: leave --launch out, or use cublas leaves")
        if self.workspace_limit is not None and not is_byte_count(self.workspace_limit):
            raise OptionError(f"workspace_limit must be a number of bytes from 0 to 2^63 - 1, not {self.workspace_limit!r}")


#: The most bytes a limit or budget may hold: the generated library keeps them in a long long.
MAX_BYTES = 2**63 - 1


def check_count(value: Any, name: str, least: int) -> int:
    """``value`` as an int where it is a whole number (NumPy's too, not a bool) of at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ValueError(f"{name} must be a whole number of at least {least}, not {value!r}")
    return int(value)


def is_byte_count(value: Any) -> bool:
    """Whether ``value`` is a whole number of bytes (NumPy's too), from 0 to MAX_BYTES (not a bool,
    not a float)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= value <= MAX_BYTES


def check_ozaki_options(leaf: str, moduli: int | None, scaling: str, scaling_given: bool | None = None) -> None:
    """Refuse moduli or scaling asked for with a leaf they do not apply to (they had been ignored
    without a word).  Not in :class:`Options` itself: lowering gives its levels other leaves.
    ``scaling_given``: whether scaling was asked for (default: whether it is not the default, "max")."""
    scaled = scaling != "max" if scaling_given is None else scaling_given
    asked = [name for name, given in (("moduli", moduli is not None), ("scaling", scaled)) if given]
    if asked and leaf != "ozaki":
        them = "them" if len(asked) > 1 else "it"
        raise OptionError(f"{' and '.join(asked)} set the ozaki leaf's emulation, and the {leaf} leaf has none: ask for "
                         f"the ozaki leaf (--leaf ozaki, leaf='ozaki') or leave {them} out")


def plain_dtype(dtype: Any) -> Any:
    """A NumPy dtype (``np.float64``, ``np.dtype("f4")``, "f8", "double") as its name; anything else
    as given, for Options to refuse as written."""
    if isinstance(dtype, str) and dtype in DTYPES:  # matmul's call: no NumPy parse on its host time
        return dtype
    if dtype is not None and not isinstance(dtype, (np.ndarray, np.generic)):  # np.float64(2.0) is no type
        try:
            name = np.dtype(dtype).name
        except Exception:  # noqa: BLE001 - NumPy's parser raises TypeError, ValueError, even SyntaxError
            name = None
        if name and (name in DTYPES or not isinstance(dtype, str)):  # a string kept as written in the refusal
            return name
    return dtype
