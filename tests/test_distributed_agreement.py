"""A distributed call's arguments are agreed on before anything is written: a mistake on one rank
is one error on every rank, never a silently wrong C, a clobbered out, or a rank left waiting.

One mpiexec job of two ranks runs every case (each job costs seconds of start-up on CI's two
cores); rank 0 prints what each case did.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import ROOT
from helpers.mpi import needs_mpi, run_ranks

# One write per line, its newline included: print's separate writes of text and newline let the
# two ranks' lines run into each other.
SAY = "import sys\ndef say(line):\n    sys.stdout.write(line + '\\n')\n    sys.stdout.flush()\n"

CASES = SAY + r"""
import time, numpy as np, bilinear.distributed as dist
from bilinear.distributed.comm import DistributedError

ALG = "{root}/algorithms/"
rank = dist.compile(ALG + "winograd.bl", backend="numpy").comm.rank
rng = np.random.default_rng(0)
A0, B0, C0 = rng.standard_normal((16, 12)), rng.standard_normal((12, 10)), rng.standard_normal((16, 10))


def case(name, call, out=None):
    before = None if out is None else out.copy()
    started = time.monotonic()
    try:
        call()
        outcome = "ran"
    except DistributedError as error:
        outcome = "refused: " + str(error).split(": rank 0")[0]
    kept = "" if before is None else (" out kept" if np.array_equal(out, before) else " out changed")
    if rank == 0:
        say(f"{{name}} -> {{outcome}}{{kept}} ({{time.monotonic() - started:.0f}} s)")


root = dist.compile(ALG + "winograd.bl", backend="numpy", inputs="root", output="root")
mine = (A0.copy(), B0.copy()) if rank == 0 else (None, None)
case("alpha differs under root inputs", lambda: root(*mine, alpha=2.0 if rank else 1.0))

whole = dist.compile(ALG + "winograd.bl", backend="numpy")
A = A0.copy()
case("out is A", lambda: whole(A, B0, out=A[:, :10]), out=A)

weighted = dist.compile(ALG + "winograd.bl", backend="numpy", weights=[1, 2] if rank == 0 else [1, 2.1])
case("weights differ", lambda: weighted(A0, B0))

stepped = dist.compile(ALG + "winograd.bl", backend="numpy", steps=1 if rank == 0 else 2)
case("steps differ", lambda: stepped(A0, B0))

C = C0.copy()
bad = C if rank == 0 else np.zeros((17, 10))
case("out of the wrong shape on rank 1", lambda: whole(A0, B0, out=bad, beta=2.0), out=C)

mixed = (A0.copy(), B0.astype(np.float32)) if rank == 0 else (None, None)
case("B float32 under root inputs", lambda: root(*mixed))

C = C0.copy()
given = C if rank == 1 else None
case("beta with out on rank 1 only", lambda: whole(A0, B0, out=given, beta=1.0))

case("alpha NaN", lambda: whole(A0, B0, alpha=float("nan")))
C = C0.copy()
case("beta NaN", lambda: whole(A0, B0, out=C, beta=float("nan")), out=C)  # it ran: NaN everywhere
C = C0.copy()
case("beta a string on rank 1", lambda: whole(A0, B0, out=C, beta="2" if rank else 2.0), out=C)  # rank 1 waited
from fractions import Fraction
C = C0.copy()
case("beta a Fraction", lambda: whole(A0, B0, out=C, beta=Fraction(1, 2)))  # a TypeError on rank 0; rank 1 waited
if rank == 0:
    say(f"beta a Fraction computed {{'right' if np.allclose(C, A0 @ B0 + C0 / 2) else 'wrong'}}")
wide = np.zeros((16, 12), dtype=[(f"field{{i}}", "f8") for i in range(30)])
case("a structured dtype on rank 1", lambda: whole(wide if rank else A0, B0))  # too long to send: rank 0 waited
vector = rng.standard_normal(12)
case("a column vector view", lambda: whole(A0, vector[:, None]))  # "must be row-major (C-contiguous ...)"

C = C0.copy()
case("Fortran-ordered A", lambda: whole(np.asfortranarray(A0), B0, out=C, beta=2.0), out=C)
listed = (A0.tolist(), B0.copy()) if rank == 0 else (None, None)
case("a list for A on rank 0", lambda: root(*listed))

single = dist.compile(ALG + "winograd.bl", backend="numpy", inputs="root", output="root",
                      dtype="float32" if rank == 0 else "float64")  # rank 1 forgot dtype=
small = (A0.astype(np.float32), B0.astype(np.float32)) if rank == 0 else (None, None)
case("products compiled for two dtypes", lambda: single(*small))

C = C0.copy()
if rank == 0:
    C.flags.writeable = False
case("read-only out on rank 0", lambda: whole(A0, B0, out=C))

in_place = dist.compile(ALG + "strassen.bl", backend="numpy", local="msmes", levels=1)
masked = np.ma.masked_array(A0, mask=A0 > 0) if rank == 1 else A0
C = C0.copy()
case("a masked A on rank 1", lambda: in_place(masked, B0, out=C, beta=2.0), out=C)
vector = np.ma.masked_array(B0[:, 0], mask=B0[:, 0] > 0)
case("a masked column vector B on rank 1", lambda: whole(A0, vector[:, None] if rank == 1 else B0[:, :1].copy()))
C = C0.copy()
case("a masked out on rank 0", lambda: whole(A0, B0, out=np.ma.masked_array(C, mask=C > 0) if rank == 0 else C,
                                            beta=2.0), out=C)

failing = dist.compile(ALG + "winograd.bl", backend="numpy")
def fail(*args, **kwargs):
    raise RuntimeError("≠" * 400)
if rank == 1:
    failing.local.product.__class__ = type("Failing", (type(failing.local.product),), {{"__call__": fail}})
case("a long non-ASCII failure on rank 1", lambda: failing(A0, B0))

numpy_weights = dist.compile(ALG + "winograd.bl", backend="numpy", weights=[np.float32(1), np.float64(2.5)])
case("NumPy weights", lambda: numpy_weights(A0, B0))
try:  # an OverflowError from float(10**400)
    dist.compile(ALG + "winograd.bl", backend="numpy", weights=[10**400, 1])
except ValueError as error:
    if rank == 0:
        say(f"a weight past the floats refused: {{str(error)[:38]}}")

deeper = dist.compile(ALG + "winograd.bl", backend="numpy", levels=2 if rank else 1)
case("local levels differ", lambda: deeper(A0, B0))
blocked = dist.compile(ALG + "winograd.bl", backend="numpy", inputs="block2d", output="block2d")
case("whole matrices under block2d inputs", lambda: blocked(A0, B0))
case("inner dimensions differ", lambda: whole(A0, B0.T.copy()))

from bilinear.distributed.measure import measure
case("repeat differs", lambda: measure(whole, 16, 12, 10, "float64", repeat=3 if rank == 0 else 1))
# rank 0 read rank 1's chain digest as call arguments: "A a, B 9, e, out 7, alpha 4.0" (an audit)
case("a chain on rank 1, a product on rank 0", lambda: whole(A0, B0) if rank == 0 else dist.chain([A0, B0], whole))
# each rank multiplied its own A, and C was wrong by 2-3 (relative) on every rank, without a word (an audit)
case("replicated A differs on rank 1", lambda: whole(A0 if rank == 0 else A0 + 1, B0))
# the sampled entries' sum was compared: a transposed square A has the same (a hunt), and C was wrong by 214
S = np.arange(144.0).reshape(12, 12)
case("replicated A transposed on rank 1", lambda: whole(S if rank == 0 else np.ascontiguousarray(S.T), B0))
# rank 0's C was added on every rank
C = C0.copy()
case("replicated out differs on rank 1", lambda: whole(A0, B0, out=C if rank == 0 else C + 1, beta=1.0), out=C)
say(f"rank {{rank}} finished")
"""


@needs_mpi
def test_every_rank_refuses_what_any_rank_got_wrong_before_writing_anything():
    done = run_ranks(2, "-c", CASES.format(root=ROOT), timeout=240, env={"BILINEAR_DIST_TIMEOUT": "60"})
    assert done.returncode == 0, done.stdout + done.stderr
    said = dict(line.split(" -> ") for line in done.stdout.splitlines() if " -> " in line)
    outcomes = {name: text.rsplit(" (", 1)[0] for name, text in said.items()}
    # cut to fit the exchange, said on every rank (it had failed to send, and rank 0 waited)
    failure = outcomes.pop("a long non-ASCII failure on rank 1")
    assert outcomes.pop("a structured dtype on rank 1").startswith(
        "refused: A and B must have one dtype on every rank that holds them, not [('field0', '<f8'), ")
    assert "beta a Fraction computed right" in done.stdout
    assert failure.startswith("refused: rank 1 failed: RuntimeError: ≠≠≠") and set(failure[38:]) == {"≠"}
    assert outcomes == {
        # rank 1's alpha had been applied to its products alone: C off by 13
        "alpha differs under root inputs": "refused: the ranks were called with different alphas or betas",
        "out is A": "refused: out must not overlap A or B out kept",  # it was written and read back wrong
        # each rank ran its own plan: C off by 12 to 138; the refusal named alphas and betas too
        "weights differ": "refused: the ranks hold products compiled differently: their weights differ",
        "steps differ": "refused: the ranks hold products compiled differently: their decompositions differ",
        "a chain on rank 1, a product on rank 0": "refused: the ranks made different calls (rank 0 a product, rank 1 "
                                                  "a chain); every rank makes the same call",
        "replicated A differs on rank 1": "refused: the ranks were given different A or B (replicated inputs are the "
                                          "same matrices on every rank)",
        "replicated A transposed on rank 1": "refused: the ranks were given different A or B (replicated inputs are "
                                             "the same matrices on every rank)",
        "replicated out differs on rank 1": "refused: the ranks were given different out with beta ≠ 0 (a replicated "
                                            "C is the same matrix on every rank) out kept",
        # rank 1 raised at once and rank 0 waited for the timeout
        "out of the wrong shape on rank 1": "refused: rank 1: out is float64 (17, 10), not float64 (16, 10) out kept",
        "B float32 under root inputs": "refused: A and B must have one dtype on every rank that holds them, not "
                                       "float32, float64",  # a raw MPI error on one rank, a wait on the other
        "beta with out on rank 1 only": "refused: rank 0: beta ≠ 0 needs out (the C to accumulate into) on every "
                                        "rank that gets C",  # β·C was dropped
        # "malformed node or string" on every rank; then it ran (NaN everywhere); now refused alike
        "alpha NaN": "refused: alpha must be a finite number, not nan",  # refused by the local products, now before
        "beta NaN": "refused: beta must be a finite number, not nan out kept",
        "beta a string on rank 1": "refused: beta must be a real number, not str '2' out kept",
        "beta a Fraction": "ran",
        "a column vector view": "ran",
        # C was scaled by beta before the local product refused the layout
        # it named no array and no rank, and gave no fix (an audit)
        "Fortran-ordered A": "refused: rank 0: A is not a row-major matrix (C-contiguous, or row slices of one): pass "
                             "np.ascontiguousarray(A) (cupy.ascontiguousarray on the GPU) out kept",
        # rank 0 raised an AttributeError and rank 1 waited for the timeout
        "a list for A on rank 0": "refused: A, B and out must be 2-D arrays on every rank that passes them",
        # rank 1 raised and rank 0 waited for the timeout (also below)
        # the hint: dist.matmul on a rank with no A (root inputs) took float64 where the others' A was float32
        "products compiled for two dtypes": "refused: the ranks hold products compiled differently: their dtypes "
                                            "differ (bilinear.distributed.matmul takes A's dtype, or dtype= on a "
                                            "rank that passes no A, else float64)",
        "read-only out on rank 0": "refused: out is read-only on a rank; the product is written into it",
        # under an in-place local, rank 1's operand sums took np.ma's arithmetic: C off by about 10
        "a masked A on rank 1": "refused: rank 1: A is a masked array, and bilinear multiplies plain matrices: "
                                "pass A.filled(0) (masked entries as 0) or np.asarray(A) (its data as stored) out kept",
        # giving it the one-device product's strides made it a plain array: it ran, the masked entries used
        "a masked column vector B on rank 1": "refused: rank 1: B is a masked array, and bilinear multiplies plain "
                                              "matrices: pass B.filled(0) (masked entries as 0) or np.asarray(B) (its "
                                              "data as stored)",
        # refused only inside rank 0's run, after out had been scaled by beta
        "a masked out on rank 0": "refused: rank 0: out is a masked array, and bilinear multiplies plain matrices: "
                                  "pass np.asarray(out) (the product goes into its data) out kept",
        # "A is 16x24 and B is 12x20": matrices the caller never had, and no listing of what each rank passed
        "whole matrices under block2d inputs": "refused: the ranks' blocks of A make a 16x24 matrix and their blocks "
                                               "of B a 12x20 one: inner dimensions differ (under block2d inputs each "
                                               "rank passes its own block of A and of B)",
        "inner dimensions differ": "refused: A is 16x12 and B is 10x12: inner dimensions differ",
        # it ran, each rank with its own local levels (and its own error bound in run and bench)
        "local levels differ": "refused: the ranks hold products compiled differently: their local products differ",
        "NumPy weights": "ran",  # "weights must be 2 positive numbers" of np.float32(1)
        # the collectives fell out of step: "SyntaxError: invalid syntax" from another collective's bytes
        "repeat differs": "refused: the ranks asked for different runs (sizes, dtype, repetitions or seed); start "
                          "every rank with the same options",
    }
    assert all(int(text.rsplit("(", 1)[1].split()[0]) < 30 for text in said.values())  # no one waited for a timeout
    assert "rank 1 finished" in done.stdout and "rank 0 finished" in done.stdout
    assert "a weight past the floats refused: weights must be 2 positive numbers" in done.stdout


CHAIN = SAY + r"""
import numpy as np, bilinear.distributed as dist
from bilinear.distributed.chain import chain
rng = np.random.default_rng(2)
shapes = [(40, 24), (24, 56), (56, 8), (8, 48), (48, 32)]
matrices = [rng.standard_normal(shape) for shape in shapes]
product = dist.compile("{root}/algorithms/winograd.bl", backend="numpy")
result, plan = chain(matrices, product)
assert np.allclose(result, np.linalg.multi_dot(matrices), rtol=1e-10, atol=1e-10)
blocked = dist.compile("{root}/algorithms/winograd.bl", backend="numpy", inputs="block2d", output="block2d")
try:
    chain(matrices, blocked)
    say(f"rank {{product.comm.rank}} ran the block2d chain")
except ValueError as error:
    say(f"rank {{product.comm.rank}} refused: {{error}}")
from bilinear.distributed.comm import DistributedError
try:  # rank 1 passes two more matrices: rank 0 had returned a wrong product, rank 1 waited
    chain(matrices[:3] if product.comm.rank == 0 else matrices + matrices[-2:][::-1], product)
    say(f"rank {{product.comm.rank}} ran chains that differ")
except DistributedError as error:
    say(f"rank {{product.comm.rank}} refused chains: {{error}}")
try:  # each rank its own entries, shapes alike: the waves had mixed them into no rank's product (an audit)
    own = np.random.default_rng(10 + product.comm.rank)
    chain([own.standard_normal(shape) for shape in shapes[:4]], product)
    say(f"rank {{product.comm.rank}} ran chains of other entries")
except DistributedError as error:
    say(f"rank {{product.comm.rank}} refused other entries: {{error}}")
try:  # each rank its own model (ChainModel.fitted from its own timings): rank 0 had planned a wave over every
    # rank and rank 1 the same wave side by side, and their exchanges crossed (a traceback, a garbled error; a hunt)
    model = dist.ChainModel(speedup=1000.0) if product.comm.rank == 0 else dist.ChainModel(speedup=1e-3)
    chain([rng.standard_normal(shape) for shape in ((40, 2), (2, 40), (40, 2), (2, 40))], product, model)
    say(f"rank {{product.comm.rank}} ran chains of other models")
except DistributedError as error:
    say(f"rank {{product.comm.rank}} refused other models: {{error}}")
import time
started = time.monotonic()
try:  # a transposed view: the rank that multiplies it had raised, the other waited for the timeout; then both
    # raised mid-chain, naming an intermediate product's B; now both refuse it before any wave, by its place
    chain([rng.standard_normal((100, 2)).T, rng.standard_normal((100, 2)), rng.standard_normal((2, 100)),
           rng.standard_normal((100, 2))], product)
    say(f"rank {{product.comm.rank}} ran a chain with a transposed view")
except ValueError as error:
    say(f"rank {{product.comm.rank}} refused a transposed view after {{time.monotonic() - started:.0f}} s: {{error}}")
started = time.monotonic()
real = product.local.product
def fails(*args, **kwargs):  # 400 characters of "≠" are 1,200 bytes: more than the exchange takes
    raise RuntimeError("≠" * 400)
product.local.product = fails if product.comm.rank == 1 else real
try:
    chain([rng.standard_normal((2, 100)), rng.standard_normal((100, 2)), rng.standard_normal((2, 100)),
           rng.standard_normal((100, 2))], product)  # side by side, one product a rank
    say(f"rank {{product.comm.rank}} ran a chain whose product fails")
except DistributedError as error:
    say(f"rank {{product.comm.rank}} refused a long failure after {{time.monotonic() - started:.0f}} s: {{error}}")
product.local.product = real
first_two = matrices[0] @ matrices[1]
for name, matrices, other in (("a generator", (m for m in matrices[:2]), product), ("lists", [[[1.0]], [[2.0]]], product),
                              ("a vector", [matrices[0], np.ones(24)], product),
                              ("a one-device product", matrices[:2], product.local.product)):
    try:
        result, _ = chain(matrices, other)
        say(f"rank {{product.comm.rank}} ran {{name}}: {{'ok' if np.allclose(result, first_two) else 'WRONG'}}")
    except (ValueError, TypeError) as error:
        say(f"rank {{product.comm.rank}} refused {{name}}: {{type(error).__name__}}: {{error}}")
"""


@needs_mpi
def test_a_chain_multiplies_on_every_rank_and_refuses_a_product_that_is_not_replicated():
    """A block2d product took the chain's whole matrices as blocks: 64 times the product on 4 ranks."""
    done = run_ranks(2, "-c", CHAIN.format(root=ROOT), timeout=240, env={"BILINEAR_DIST_TIMEOUT": "60"})
    assert done.returncode == 0, done.stdout + done.stderr
    refusals = [line for line in done.stdout.splitlines() if "refused: chain needs a product with replicated inputs "
                "and output, not inputs='block2d' and output='block2d'" in line]
    assert len(refusals) == 2
    differ = [line for line in done.stdout.splitlines() if "refused chains: the ranks were called with different chains" in line]
    assert len(differ) == 2, done.stdout
    entries = [line for line in done.stdout.splitlines() if "refused other entries: the ranks were called with "
               "different chains (their number, shapes, dtypes, layouts or entries of matrices differ)" in line]
    assert len(entries) == 2, done.stdout
    models = [line for line in done.stdout.splitlines() if line.endswith(
        "refused other models: the ranks planned the chain with different models (ChainModel); every rank passes "
        "the same one")]
    assert len(models) == 2, done.stdout
    failed = [line for line in done.stdout.splitlines() if "refused a transposed view after" in line]
    assert len(failed) == 2 and all(line.endswith("s: matrix 0 of the chain is not row-major (C-contiguous, or row "
                                                  "slices of one): pass np.ascontiguousarray(it)")
                                    for line in failed), done.stdout
    assert all(int(line.split(" after ")[1].split(" s")[0]) < 30 for line in failed)  # nobody waited for the timeout
    long = [line for line in done.stdout.splitlines() if "refused a long failure after" in line]
    assert len(long) == 2 and all("a product of the chain failed on rank 1: RuntimeError: ≠≠≠" in line
                                  for line in long), done.stdout
    assert all(int(line.split(" after ")[1].split(" s")[0]) < 30 for line in long)
    for name, message in (("a generator", "ran a generator: ok"),
                          ("lists", "refused lists: ValueError: matrix 0 of the chain is not a matrix (2-D array): list"),
                          ("a vector", "refused a vector: ValueError: matrix 1 of the chain is not a matrix (2-D array): "
                                       "an array of shape (24,)"),
                          ("a one-device product", "refused a one-device product: TypeError: chain needs a distributed "
                                                   "product (bilinear.distributed.compile), not CompiledProduct")):
        assert done.stdout.count(message) == 2, (name, done.stdout)



def test_a_ranks_facts_fit_the_exchange_whatever_the_rank_count():
    """The options went whole into the 512-byte exchange: one weight per rank overflowed it past a
    dozen ranks (dynamic balance sets them), and every call would have failed."""

    from bilinear.distributed.agree import facts
    from bilinear.distributed.comm import _encode

    A = np.zeros((8, 8))
    options = {"decompositions": ("winograd^5", 16807), "layouts": ("replicated", "replicated"), "balances": "dynamic",
               "bands": None, "weights": tuple(1.0 / (r + 3) for r in range(4096)), "dtypes": "float64"}
    _encode(facts(A, A.copy(), None, 1.0, 0.0, options))  # raised "a value to agree on is too long"
    changed = {**options, "weights": options["weights"][:-1] + (0.5,)}
    assert facts(A, A, None, 1.0, 0.0, options)[8] != facts(A, A, None, 1.0, 0.0, changed)[8]
    # the longest texts a rank may send: refusals of alpha and beta, three structured dtypes
    wide = np.zeros((8, 8), dtype=[(f"field{i}", "f8") for i in range(30)])
    _encode(facts(wide, wide.copy(), wide.copy(), "≠" * 300, [1.0] * 300, options))


def test_host_arrays_for_a_product_on_the_gpu_are_refused_on_every_rank():
    """NumPy arrays given to dist.compile's default (CuPy) product failed on every rank in CuPy's DLPack
    import ("CPU arrays cannot be directly imported to CuPy", on 2 H100s); a rank's facts now say which
    of its arrays are in host memory, and every rank refuses them alike (a stand-in for CuPy here)."""
    import types

    from bilinear.distributed.agree import facts, judge
    from bilinear.distributed.comm import DistributedError

    class DeviceArray:
        pass

    cupy = types.SimpleNamespace(__name__="cupy", ndarray=DeviceArray)
    A = np.ones((4, 4))
    on_host = facts(A, A, None, 1.0, 0.0, {}, xp=cupy)
    assert on_host[14] == "A,B@cupy" and facts(A, A, None, 1.0, 0.0, {})[14] == ""
    with pytest.raises(DistributedError, match=re.escape(
            "rank 1: A is a NumPy array (host memory), but this product runs on cupy: pass cupy.asarray(A), or compile "
            "with backend='numpy'")):
        judge([facts(A, A, None, 1.0, 0.0, {}), on_host], "replicated", "replicated", "float64")


@pytest.mark.parametrize("inputs", ["root", "block2d"])
def test_a_replicated_out_that_differs_between_ranks_is_refused_under_every_input_layout(inputs):
    """Only replicated inputs compared the ranks' out: under root or block2d inputs rank 1 got A·B plus
    rank 0's C instead of its own, without a word (an audit)."""
    from bilinear.distributed.agree import facts, judge
    from bilinear.distributed.comm import DistributedError

    A = np.arange(16.0).reshape(4, 4)  # root: rank 0's whole A and B; block2d: each of 4 ranks' block of 8x8 ones
    blocks, ranks, size = (True, 4, 8) if inputs == "block2d" else (False, 2, 4)
    mine = [facts(A if rank == 0 or blocks else None, A if rank == 0 or blocks else None, np.full((size, size), float(rank)),
                  1.0, 1.0, {}, blocks=blocks, out_sample=True) for rank in range(ranks)]
    with pytest.raises(DistributedError, match="the ranks were given different out with beta ≠ 0"):
        judge(mine, inputs, "replicated", "float64")


def test_a_column_major_out_on_a_rank_is_not_told_to_pass_a_copy():
    """The ranks' layout refusal told out, as A, to pass np.ascontiguousarray(out): the product would
    go into the copy (the one-device refusal says what to give instead)."""
    from bilinear.distributed.agree import facts, judge
    from bilinear.distributed.comm import DistributedError

    A = np.ones((4, 4))
    mine = [facts(A, A, np.zeros((4, 4), order="F"), 1.0, 0.0, {}) for _ in range(2)]
    with pytest.raises(DistributedError) as refused:
        judge(mine, "replicated", "replicated", "float64")
    assert "rank 0: out is not a row-major matrix" in str(refused.value)
    assert "the product is written into out, so give a row-major one" in str(refused.value)
    assert "ascontiguousarray(out)" not in str(refused.value)


def test_the_alike_blocks_of_constant_matrices_are_not_taken_for_whole_matrices():
    """Under block2d inputs every rank's block of an all-ones A is all ones: rank 0 had warned that
    every rank passed the same blocks.  Alike blocks that are not one value each are still told of."""
    from bilinear.distributed.agree import facts, same_blocks

    ones, varied = np.ones((4, 4)), np.arange(16.0).reshape(4, 4)
    sparse = np.zeros((40, 40))
    sparse[1, 1] = 1.0  # off the sampled entries: one value as far as the sample shows, not throughout

    def alike(A, B):
        return same_blocks([facts(A, B, None, 1.0, 0.0, {}, blocks=True) for _ in range(4)])

    assert not alike(ones, 2 * ones)
    assert not alike(np.zeros((4, 4)), ones)
    assert alike(varied, varied)
    assert alike(ones, varied)  # A's blocks alike by right, B's not
    assert alike(sparse, sparse)



def test_complex_matrices_are_sampled_without_a_complex_warning():
    """Complex A and B printed NumPy's ComplexWarning ("Casting complex values to real discards the
    imaginary part") on every rank before the refusal of their dtype (a hunt on 2 ranks); their samples
    had dropped the imaginary parts, so matrices differing there compared alike."""
    import warnings

    from bilinear.distributed.agree import _one_value, sample_of

    ones = np.ones((3, 4), complex)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sample_of(ones) != sample_of(ones + 1j) and sample_of(ones) == sample_of(ones.copy())
        assert _one_value(ones) and not _one_value(np.array([[1, 1j]]))
        # inf and -inf summed warned on every chain call; an object matrix of 10**400 raised OverflowError (a review)
        assert sample_of(np.array([[np.inf, -np.inf]])) != sample_of(np.array([[-np.inf, np.inf]]))
        assert sample_of(np.array([[10**400]], dtype=object)) == "none"


def test_a_sample_tells_a_matrix_from_its_transpose_and_takes_minus_zero_for_zero():
    """The sampled entries' sum was compared: a square matrix and its transpose agreed (a hunt)."""
    from bilinear.distributed.agree import sample_of

    square = np.arange(144.0).reshape(12, 12)
    assert sample_of(square) != sample_of(np.ascontiguousarray(square.T))
    assert sample_of(square) == sample_of(square.copy()) and len(sample_of(square)) <= 60  # the exchange's texts
    assert sample_of(-np.zeros((3, 3))) == sample_of(np.zeros((3, 3)))
    assert sample_of(np.arange(4, dtype=np.float32).reshape(2, 2)) != sample_of(np.arange(4.0).reshape(2, 2))
