"""What the ranks agree on before a distributed call touches anything.

Each rank's facts (shapes, dtypes, layouts, scalars, the options its product was compiled
with, whether its ``out`` overlaps its A or B, which are masked arrays) are gathered on every rank in one exchange, and
every rank judges all of them alike.  So a mistake on one rank is one error on every rank, and
never a rank that raised while the others wait for it at the next collective, nor a call that
runs with one rank's alpha, weights or steps and another's.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..runtime.arguments import real_scalar
from ..runtime.views import is_masked, is_row_major, masked_refusal, on_host, on_host_refusal, overlaps, with_line_strides
from .comm import AgreedError, DistributedError, short
from .layout import block_shape, global_shape


_TEXT_BYTES = 60  # each text a rank sends: its facts must fit the exchange's 512 bytes


def _scalar(value: Any, name: str) -> str:
    """A scalar as exact text every rank can compare, or why the one-device product refuses it
    (not a finite real number), which every rank then says."""
    try:
        return real_scalar(value, name).hex()
    except ValueError as error:
        return short(str(error), _TEXT_BYTES)


def line_strided(x: Any, xp: Any) -> Any:
    """A one-row or one-column matrix with the strides the one-device product gives it
    (``v[:, None]`` has a column stride of 0); anything else as it came, to be judged (a masked
    array too: restrided, it would lose its mask)."""
    if is_masked(x) or not is_matrix(x):
        return x
    return with_line_strides(x, np if isinstance(x, np.ndarray) else xp)


def is_matrix(x: Any) -> bool:
    """An array of this rank's array module, 2-D (a list or a 1-D array is not)."""
    return hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "strides") and len(x.shape) == 2


def facts(A: Any, B: Any, out: Any, alpha: Any, beta: Any, options: dict[str, Any], blocks: bool = False,
          out_sample: bool = False, xp: Any = np) -> tuple:
    """This rank's side of the call, small enough to gather on every rank (``options``, what its
    product was compiled with by name, as a digest each: one weight per rank would not fit the
    exchange's 512 bytes past a dozen ranks; with ``blocks``, a sample of A and B each and whether
    both are one value throughout, and with ``out_sample`` of out, which :func:`same_blocks` and
    :func:`judge` compare; which arrays are in host memory where the product runs on ``xp``, CuPy)."""
    options = tuple(f"{name}={hashlib.sha256(repr(value).encode()).hexdigest()[:6]}" for name, value in options.items())

    def shape(x):
        return None if x is None else tuple(x.shape) if is_matrix(x) else short(f"not a matrix: {type(x).__name__}", _TEXT_BYTES)

    def dtype(x):  # a structured dtype's text runs to hundreds of bytes
        return None if x is None or not is_matrix(x) else short(str(x.dtype), _TEXT_BYTES)

    views = [x for x in (A, B, out) if x is not None]
    # which are masked arrays: under an in-place local schedule np.ma's arithmetic formed the operand sums
    masked = ",".join(name for name, x in (("A", A), ("B", B), ("out", out)) if is_masked(x))
    writable = out is None or bool(getattr(getattr(out, "flags", None), "writeable", True))  # a read-only NumPy out
    host = ",".join(name for name, x in (("A", A), ("B", B), ("out", out)) if on_host(x, xp))
    host = f"{host}@{xp.__name__}" if host else ""
    if not all(is_matrix(x) for x in views):  # said on every rank below, not raised here while the others wait
        return (shape(A), shape(B), dtype(A), dtype(B), shape(out), dtype(out), _scalar(alpha, "alpha"), _scalar(beta, "beta"),
                options, "", True, writable, masked, None, host)
    # which are not row-major, to name in the refusal
    scattered = ",".join(name for name, x in (("A", A), ("B", B), ("out", out)) if x is not None and not is_row_major(x))
    apart = out is None or not any(x is not None and overlaps(out, x) for x in (A, B)) if not scattered else True
    sampled = None
    if (blocks and A is not None and B is not None or out_sample) and not masked:  # out's under any input layout
        held = blocks and A is not None and B is not None
        sampled = (sample_of(A) if held else None, sample_of(B) if held else None,
                   sample_of(out) if out_sample and out is not None else None,
                   held and _one_value(A) and _one_value(B))
    return (shape(A), shape(B), dtype(A), dtype(B), shape(out), dtype(out), _scalar(alpha, "alpha"), _scalar(beta, "beta"), options,
            scattered, apart, writable, masked, sampled, host)


def _spread(x: Any) -> Any:
    """At most 17×17 of a matrix's entries, spread over it."""
    rows, cols = x.shape
    return x[:: max(1, rows // 16), :: max(1, cols // 16)]


def sample_of(x: Any) -> str:
    """A digest of :func:`_spread`'s entries ("none" where they are no numbers: a structured or object dtype,
    which is refused after the exchange; raising here left the others waiting).  The entries, not their sum,
    which a transposed square matrix shares (a hunt: C was wrong without a word); -0.0 counts as 0.0."""
    spread = _spread(x)
    kind = getattr(getattr(spread, "dtype", None), "kind", "O")
    if kind not in "biufc":
        return "none"
    entries = spread.get() if hasattr(spread, "get") and not isinstance(spread, np.ndarray) else np.asarray(spread)
    entries = np.ascontiguousarray(entries) + entries.dtype.type(0)  # CuPy's sample on the host; -0.0 + 0 is 0.0
    return hashlib.blake2b(repr(entries.shape).encode() + entries.tobytes(), digest_size=12).hexdigest()


def _one_value(x: Any) -> bool:
    """Whether every entry of a matrix is the same (all ones, all zeros; vacuously where it has none).
    The whole matrix is read only where its spread sample is one value; min and max, not ``x == v``,
    which would allocate a mask the size of the matrix."""
    if 0 in x.shape:
        return True
    try:
        return all(complex(part.min()) == complex(part.max()) for part in (_spread(x), x))  # NaN: never one value
    except (TypeError, ValueError):
        return False


def same_blocks(everyone: list[tuple]) -> bool:
    """Whether every rank passed blocks of A and B alike in shape and sample: whole matrices passed
    on every rank, most likely (on a square grid of ranks they fit the block2d layout).  Where each
    block of A and of B is one value throughout, they are alike by right (the blocks of a constant
    matrix), and whole constant matrices passed on every rank cannot be told from them: not said."""
    first = everyone[0]
    return (len(everyone) > 1 and first[13] is not None and not first[13][3]
            and all(v[:2] == first[:2] and v[13] == first[13] for v in everyone))


def different_calls(everyone: list) -> str | None:
    """Where some ranks called a product and others dist.chain (its digest, a string, where a call's facts,
    a tuple, were expected): the two exchanges had been read as each other's."""
    calls = ["a chain" if isinstance(said, str) else "a product" for said in everyone]
    if len(set(calls)) == 1:
        return None
    listing = ", ".join(f"rank {rank} {call}" for rank, call in enumerate(calls))
    return f"the ranks made different calls ({listing}); every rank makes the same call"


def judge(everyone: list[tuple], inputs: str, output: str, compiled_for: str | None) -> tuple[int, int, int, str]:
    """The global M, K, N and dtype, or the first problem with any rank's facts (raised on every rank)."""
    if problem := different_calls(everyone):
        raise AgreedError(problem)
    problem = _problem(everyone, inputs, compiled_for)
    if problem is None:
        dims = _dims(everyone, inputs)
        problem = dims if isinstance(dims, str) else _out_problem(everyone, output, dims[0], dims[2], dims[3])
        problem = problem or _replicated_problem(everyone, inputs)
        if problem is None:
            return dims
    listing = "; ".join(f"rank {r}: A {v[0]}, B {v[1]}, {v[2]}, out {v[4]}, alpha {_shown(v[6])}, beta {_shown(v[7])}"
                        for r, v in enumerate(everyone))
    raise AgreedError(f"{problem}: {listing}")


def _replicated_problem(everyone: list[tuple], inputs: str) -> str | None:
    """Replicated A and B (and a C that beta adds in) that differ between ranks, by their samples: each
    rank had multiplied its own, and C was wrong on every rank without a word."""
    samples = [v[13] for v in everyone]
    if any(sample is None for sample in samples):
        return None
    if inputs == "replicated" and any(sample[:2] != samples[0][:2] for sample in samples):
        return "the ranks were given different A or B (replicated inputs are the same matrices on every rank)"
    if any(sample[2] != samples[0][2] for sample in samples):  # a replicated C beta adds in, whatever the inputs
        return "the ranks were given different out with beta ≠ 0 (a replicated C is the same matrix on every rank)"
    return None


def _number(text: str) -> float | None:
    try:
        return float.fromhex(text)
    except ValueError:
        return None


def _shown(text: str) -> str:
    number = _number(text)
    return "refused" if number is None else repr(number)  # the refusal is the message's own first words


def _problem(everyone: list[tuple], inputs: str, compiled_for: str | None) -> str | None:
    holders = everyone if inputs != "root" else everyone[:1]
    if refused := next((text for v in everyone for text in v[6:8] if _number(text) is None), None):
        return refused  # as the one-device product says it
    if any(v[0] is None or v[1] is None for v in holders):
        return "a rank that must hold A and B was given None"
    if any(v[6:8] != everyone[0][6:8] for v in everyone):
        return "the ranks were called with different alphas or betas"
    if differ := [mine.split("=")[0] for rank in everyone for mine, first in zip(rank[8], everyone[0][8]) if mine != first]:
        hint = (" (bilinear.distributed.matmul takes A's dtype, or dtype= on a rank that passes no A, else float64)"
                if "dtypes" in differ else "")
        return f"the ranks hold products compiled differently: their {', '.join(dict.fromkeys(differ))} differ{hint}"
    if inputs != "block2d" and any(v[:2] != holders[0][:2] for v in holders):
        return "the ranks were called with different arguments"
    if any(isinstance(shape, str) for v in everyone for shape in (v[0], v[1], v[4])):
        return "A, B and out must be 2-D arrays on every rank that passes them"
    if host := next(((rank, v[14]) for rank, v in enumerate(everyone) if v[14]), None):
        rank, (names, module) = host[0], host[1].split("@")
        return f"rank {rank}: {on_host_refusal(names.split(',')[0], module)}"
    if masked := next(((rank, v[12]) for rank, v in enumerate(everyone) if v[12]), None):
        rank, names = masked
        return f"rank {rank}: {masked_refusal(names.split(',')[0])}"
    if scattered := next(((rank, v[9]) for rank, v in enumerate(everyone) if v[9]), None):
        rank, name = scattered[0], scattered[1].split(",")[0]
        fix = ("the product is written into out, so give a row-major one" if name == "out" else
               f"pass np.ascontiguousarray({name}) (cupy.ascontiguousarray on the GPU)")  # a copy of out would get it
        return f"rank {rank}: {name} is not a row-major matrix (C-contiguous, or row slices of one): {fix}"
    if any(not v[10] for v in everyone):
        return "out must not overlap A or B"
    if any(not v[11] for v in everyone):
        return "out is read-only on a rank; the product is written into it"
    dtypes = {v[2] for v in holders} | {v[3] for v in holders}
    if len(dtypes) != 1:
        return f"A and B must have one dtype on every rank that holds them, not {', '.join(sorted(dtypes))}"
    if compiled_for is not None and dtypes != {compiled_for}:
        return f"A and B are {dtypes.pop()} but this product was compiled for {compiled_for}"
    return None


def _dims(everyone: list[tuple], inputs: str) -> tuple[int, int, int, str] | str:
    """The global M, K, N and dtype, or what is wrong with the shapes."""
    if inputs != "block2d":
        (M, K), (K2, N) = everyone[0][0], everyone[0][1]
        return (M, K, N, everyone[0][2]) if K == K2 else f"A is {M}x{K} and B is {K2}x{N}: inner dimensions differ"
    try:
        (M, K), (K2, N) = (global_shape([v[0] for v in everyone], len(everyone)),
                           global_shape([v[1] for v in everyone], len(everyone)))
    except DistributedError as error:
        return str(error)
    if K != K2:  # whole matrices passed on every rank, most likely (on a square grid they fit: see same_blocks)
        return (f"the ranks' blocks of A make a {M}x{K} matrix and their blocks of B a {K2}x{N} one: inner "
                "dimensions differ (under block2d inputs each rank passes its own block of A and of B)")
    return M, K, N, everyone[0][2]


def _out_problem(everyone: list[tuple], output: str, M: int, N: int, dtype: str) -> str | None:
    """Every rank's out against what the layout gives it; with beta ≠ 0, every rank that gets C
    must pass the C to accumulate into (one that did not had its β·C dropped)."""
    ranks = len(everyone)
    for rank, v in enumerate(everyone):
        shape = {"replicated": (M, N), "root": (M, N) if rank == 0 else None,
                 "block2d": block_shape(rank, ranks, M, N)}[output]
        if shape is None:
            continue
        if v[4] is not None and (v[4] != shape or v[5] != dtype):
            return f"rank {rank}: out is {v[5]} {v[4]}, not {dtype} {shape}"
        if v[4] is None and _number(v[7]) != 0:
            return f"rank {rank}: beta ≠ 0 needs out (the C to accumulate into) on every rank that gets C"
    return None
