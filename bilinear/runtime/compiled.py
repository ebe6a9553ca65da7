"""A compiled product: the callable ``bilinear.compile`` returns."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..lower.host import restores_inputs, writes_inputs
from ..lower.ozaki_host import moduli_refusal
from ..lower.plan import Lowered, broken_condition, call_workspace_bytes, leaf_dims
from ..lower.options import is_byte_count
from ..lower.scales import alpha_refusal
from .arguments import check_inner_dimensions, check_sizes, real_scalar
from .backend import Backend, NotPickled
from .executor import Executor
from .views import (check_current_device, check_on_device, check_out_apart, check_unmasked, check_writable, convert_hint,
                    dtype_shown, from_dlpack, is_row_major, layout_refusal, overlaps, with_line_strides)


BACKENDS = ("cupy", "numpy")


CUPY_NEEDED = "the cupy backend needs CuPy and a CUDA GPU; on the CPU use the numpy backend (--backend numpy, backend='numpy')"


def make_backend(name: str | None) -> Backend:
    """``'cupy'``, ``'numpy'``, or ``None`` for CuPy when a GPU is there and NumPy otherwise."""
    from .cupy_backend import CupyBackend, cupy_available
    from .numpy_backend import NumpyBackend

    if name is None:
        name = "cupy" if cupy_available() else "numpy"
    if name == "numpy":
        return NumpyBackend()
    if name == "cupy":
        if not cupy_available():
            raise ValueError(CUPY_NEEDED)
        return CupyBackend()
    raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {name!r}")


class CompiledProduct(NotPickled):
    """``C = alpha·A@B + beta·C`` with a lowered scheme on one backend.

    In-place schedules (``inplace``) overwrite A and B while they run and,
    with ``restore``, put them back; in floating point the restored values can
    differ from the originals in the last bits.
    """

    def __init__(self, lowered: Lowered, backend: Backend):
        self.lowered = lowered
        self.backend = backend
        # Calls run one at a time: an executor keeps alpha and its workspace between the stages of a
        # call, so two threads' calls would mix them.  Held by each call, and by what changes a call's
        # state from outside (a graph's capture sets up its workspace under it).
        self.calling = threading.RLock()
        self._last_stream = None  # the stream the last call (or replay) was issued on: see _ordered()
        self._last_device = None  # and the device it ran on
        self.executor = Executor(lowered, backend)
        # With a workspace limit, the same product with fewer breadth-first levels, most first.
        self.executors = [self.executor]
        while self.executors[-1].lowered.fewer_breadth is not None:
            self.executors.append(Executor(self.executors[-1].lowered.fewer_breadth, backend))
        for executor in self.executors:  # every plan refused before any kernel is built
            if executor.lowered.breadth is not None:
                backend.check_breadth(executor.lowered.breadth)
        for executor in self.executors:
            backend.prepare(executor.lowered.kernels())
        # what every call checks against, fixed with the executors (each call walked every level's statements)
        self._writes_inputs = any(writes_inputs(executor.lowered) for executor in self.executors)
        self._restores_inputs = all(restores_inputs(executor.lowered) for executor in self.executors)
        self._array_dtype = np.dtype(lowered.options.dtype)

    def executor_for(self, M: int, K: int, N: int) -> Executor:
        """The executor a call runs: the most breadth-first levels whose workspace fits the limit;
        where none fits, the depth-first one with its Ozaki leaves in tiles of C that fit.

        Raises:
            ValueError: when even the depth-first product needs more workspace than the limit.
        """
        limit = self.lowered.options.workspace_limit
        if limit is None:
            return self.executor
        with self.calling:  # it sets the Ozaki leaves' budgets, which another thread's running call reads
            for executor in self.executors:
                executor.leaf_budget(None)
                if executor.workspace_bytes(M, K, N) <= limit:
                    return executor
            last = self.executors[-1]
            if self._fits_in_tiles(last, M, K, N, limit):
                return last
        needed = last.workspace_bytes(M, K, N)
        leaves_take = needed > call_workspace_bytes(last.lowered, M, K, N)  # (on NumPy the Ozaki leaves take none)
        tiled = " (its Ozaki leaves one element of C at a time too)" if last.leaf_takes_budget and leaves_take else ""
        levels = last.lowered.levels
        holding = list(dict.fromkeys(plan.algorithm.name for plan in levels if not plan.schedule.inplace))
        instead = (f"in-place schedules for {', '.join(holding)} too" if any(plan.schedule.inplace for plan in levels)
                   else "an in-place schedule such as msmes")  # (msmes,grey333 had been told to use msmes)
        raise ValueError(
            f"a {M}x{K} @ {K}x{N} product with {self.lowered.name} needs {needed} bytes of workspace even depth-first, "
            f"more than the limit of {limit}{tiled}; raise the limit or use {instead}"
        )

    def tile_budget(self, M: int, K: int, N: int, limit: int) -> int | None:
        """The bytes its Ozaki leaves get where a product without a workspace limit of its own fits
        ``limit`` with them in tiles of C (``bilinear.matmul`` gives it what is free on the device),
        its calls keeping that budget; None where it does not fit.  A product without Ozaki leaves
        has nothing to tile: 0 where its workspace fits ``limit`` (its leaves get no bytes of it).

        Raises:
            ValueError: for sizes that are not whole numbers of at least 0, or a limit that is not a
                number of bytes.
        """
        M, K, N = check_sizes(M, K, N)
        if not is_byte_count(limit):
            raise ValueError(f"limit must be a number of bytes from 0 to 2^63 - 1, not {limit!r}")
        if not self.executor.leaf_takes_budget:
            return 0 if self.executor.workspace_bytes(M, K, N) <= limit else None
        with self.calling:  # it sets the leaf's budget (kept), which a running call reads
            return self.executor.leaf.budget if self._fits_in_tiles(self.executor, M, K, N, limit) else None

    @contextmanager
    def leaf_budget(self, budget: int | None) -> Iterator[None]:
        """Hold the product's calls (another thread's wait) with its Ozaki leaves in ``budget`` bytes
        (None: all of C at once); the budget stays after (``bilinear.matmul`` sets the room it found
        free before each call: one product serves every shape).

        Raises:
            ValueError: for a budget that is neither None nor a number of bytes.
        """
        if budget is not None and not is_byte_count(budget):
            raise ValueError(f"budget must be None or a number of bytes from 0 to 2^63 - 1, not {budget!r}")
        with self.calling:
            self.executor.leaf_budget(budget)
            yield

    @staticmethod
    def _fits_in_tiles(executor: Executor, M: int, K: int, N: int, limit: int) -> bool:
        """Whether ``executor`` fits ``limit`` with its leaf in the room the rest leaves (the Ozaki
        leaf in tiles of C); it keeps that budget if so."""
        room = limit - call_workspace_bytes(executor.lowered, M, K, N)
        if room < 0 or not executor.leaf_budget(room):
            return False
        try:
            if executor.workspace_bytes(M, K, N) <= limit:
                return True
        except ValueError:  # not even one element of C at a time
            pass
        executor.leaf_budget(None)
        return False

    @staticmethod
    def _overwriting(executor: Executor) -> str | None:
        """The schedule that computes C = A*B over C at ``executor``'s top level (so a call it runs
        takes beta = 0 only, at every size), or None."""
        levels = executor.lowered.levels
        return levels[0].schedule.name if levels and levels[0].schedule.overwrites_c else None

    @property
    def overwrites_c(self) -> bool:
        """Whether the top level's schedule computes C = A*B over C (so beta must be 0); under a
        workspace limit, of the plan with every breadth-first level (a call checks the plan it runs)."""
        return self._overwriting(self.executor) is not None

    @property
    def writes_inputs(self) -> bool:
        """Whether some level a call may run overwrites blocks of A and B (an in-place schedule; under
        a workspace limit, the plans with fewer breadth-first levels count too)."""
        return self._writes_inputs

    @property
    def restores_inputs(self) -> bool:
        """Whether every in-place schedule it runs restores A and B (one that declares no `restore`
        runs at the top level only, and leaves them changed)."""
        return self._restores_inputs

    @property
    def dtype(self) -> str:
        return self.lowered.options.dtype

    def __repr__(self) -> str:
        o = self.lowered.options
        return f"<bilinear {self.lowered.name}: {o.levels} level(s), {o.leaf} leaves, {o.dtype}, {self.backend.name}>"

    def workspace_bytes(self, M: int, K: int, N: int) -> int:
        """Bytes of workspace an M×K×N call holds.

        Raises:
            ValueError: for sizes that are not whole numbers of at least 0 (-4 had been 0, 8.5 928.0),
                and, under a ``workspace_limit``, for sizes no plan within it serves (a call there is
                refused; the message gives the bytes needed).
        """
        M, K, N = check_sizes(M, K, N)
        return self.executor_for(M, K, N).workspace_bytes(M, K, N)

    def release_workspace(self) -> None:
        """Drop the workspace kept from the last call (the next call allocates it again); a
        captured graph keeps its own."""
        with self.calling:  # not under another thread's call
            self._release_kept()

    def _release_kept(self) -> None:
        for executor in self.executors:
            executor.workspace = {}
            executor.release_leaf()

    def held_workspace_bytes(self) -> int:
        """Device bytes of workspace kept from the last calls (what :meth:`release_workspace` frees)."""
        total = 0
        for executor in self.executors:
            total += sum(view.nbytes for view in executor.workspace.values())
            total += executor.breadth.held_bytes if executor.breadth is not None else 0
            total += sum(buffer.nbytes for buffer in executor.leaf_buffers())
        return total

    def breadth_levels(self, M: int, K: int, N: int) -> int:
        """How many levels an M×K×N call runs breadth-first (fewer than asked where the limit says so).

        Raises:
            ValueError: for sizes that are not whole numbers of at least 0, as workspace_bytes.
        """
        M, K, N = check_sizes(M, K, N)
        executor = self.executor_for(M, K, N)
        return executor.lowered.options.breadth if executor.breadth and executor.breadth.runs(
            *leaf_dims(executor.lowered, M, K, N)) else 0

    def leaf_dims(self, M: int, K: int, N: int) -> tuple[int, int, int]:
        """The dimensions of the leaf products an M×K×N call runs: below its depth-first levels and,
        where they run, its breadth-first ones.

        Raises:
            ValueError: for sizes that are not whole numbers of at least 0, as workspace_bytes.
        """
        M, K, N = check_sizes(M, K, N)
        executor = self.executor_for(M, K, N)
        m, k, n = leaf_dims(executor.lowered, M, K, N)
        if self.breadth_levels(M, K, N):
            grid = executor.lowered.breadth.decomposition
            m, k, n = m // grid.rows, k // grid.inner, n // grid.cols
        return m, k, n

    def __call__(self, A: Any, B: Any, out: Any = None, alpha: float = 1.0, beta: float = 0.0) -> Any:
        """Multiply; returns ``out`` (allocated when not given).

        Raises:
            ValueError: for arrays of the wrong kind, dtype, shape or layout, and for sizes whose
                blocks break a shape condition of the schedule (the report's "requires").
        """
        alpha, beta = real_scalar(alpha, "alpha", self.dtype), real_scalar(beta, "beta", self.dtype)
        A, B = self._as_array(A, "A"), self._as_array(B, "B")
        check_inner_dimensions(A, B)
        given = out if isinstance(out, self.backend.xp.ndarray) else None  # returned as it came, not a restrided view
        if out is None:
            if beta != 0:  # there is no C to accumulate into (bilinear.matmul refuses it alike)
                raise ValueError("beta ≠ 0 needs out= (the C to accumulate into)")
            out = self.backend.xp.zeros((A.shape[0], B.shape[1]), dtype=self.dtype)
        else:
            out = self._as_array(out, "out")
            if out.shape != (A.shape[0], B.shape[1]):
                raise ValueError(f"out is {out.shape[0]}x{out.shape[1]} but A@B is {A.shape[0]}x{B.shape[1]}")
            check_out_apart(out, A, B)
        multiplies = alpha != 0 and 0 not in (A.shape[0], A.shape[1], B.shape[1])  # else C = beta·C, no workspace
        # under a workspace limit the plan that runs depends on the size
        executor = self.executor_for(A.shape[0], A.shape[1], B.shape[1]) if multiplies else self.executor
        self.refuse_at_every_size(A, B, beta, executor)
        # alpha·A@B is an empty sum, or (as BLAS has it) not computed at all: out = beta·out, and a
        # NaN or Inf in A or B reaches nothing
        if not multiplies:
            self.backend.scale(out, beta)  # in place: a temporary would be freed while a graph captures it
            return out if given is None else given
        dims = A.shape[0], A.shape[1], B.shape[1]
        if why := (broken_condition(executor.lowered, *dims) or moduli_refusal(executor.lowered, *dims)
                   or alpha_refusal(executor.largest_leaf_scale, self.dtype, alpha)):
            raise ValueError(why)  # before anything is written
        with self.calling:
            # again under the lock: it sets the Ozaki leaf's budget for this size, which another
            # thread's call or query may have changed since
            executor = self.executor_for(A.shape[0], A.shape[1], B.shape[1])
            self._hold_within_limit(executor, A.shape[0], A.shape[1], B.shape[1])
            self._ordered()
            executor.run(A, B, out, alpha=alpha, beta=beta)
        return out if given is None else given

    def launch_graph(self, graph: Any, device: int) -> None:
        """Replay a graph of this product captured on GPU ``device`` on the current stream, ordered
        as a call is.

        Raises:
            ValueError: under another current device (a graph runs on the GPU it was captured on)."""
        with self.calling:
            graph.launch(self._ordered(device))

    def _ordered(self, captured_on: int | None = None) -> Any:
        """The current stream (None on the CPU), made to follow every earlier call's work: the calls
        and replays share the workspace, and one issued on another stream than the last (``with
        stream:``) would overlap it.  Called under the product's lock, with the work issued before
        it is let go: another thread could otherwise order itself in between.  A call on another
        GPU than the last lets go what the calls kept: it is the other GPU's memory, and that
        GPU's stream orders nothing here.  ``captured_on``: a graph's GPU, which must be the current."""
        device = self.backend.device()  # (once per call: a replay's host time is what graphs save)
        if captured_on is not None and device != captured_on:
            raise ValueError(f"this graph was captured on GPU {captured_on}, but the current device is GPU {device}: "
                             f"replay it under `with cupy.cuda.Device({captured_on}):`")
        if device != self._last_device:
            self._release_kept()
            self._last_stream, self._last_device = None, device
        self._last_stream = self.backend.ordered_after(self._last_stream)
        return self._last_stream

    def refuse_at_every_size(self, A: Any, B: Any, beta: float, executor: Executor | None = None) -> None:
        """What no call may ask of ``executor``'s plan (default: the plan without a workspace limit's
        fallbacks), whether or not its size runs a level (levels="auto" had taken them at the sizes
        where it chose the library alone).  Under a workspace limit, beta follows the plan the size
        runs: a limit never reached keeps beta where every level runs breadth-first.

        Raises:
            ValueError: beta ≠ 0 where the plan overwrites C; A and B overlapping where a plan writes them.
        """
        if beta != 0 and (overwriting := self._overwriting(executor or self.executor)):
            raise ValueError(
                f"{overwriting} computes C = A*B and overwrites C, so beta must be 0 "
                f"(got {beta}); use an accumulating schedule such as msmes for beta != 0"
                + self._fallback_note(executor, A.shape[0], A.shape[1], B.shape[1])
            )
        if self.writes_inputs and overlaps(A, B):
            raise ValueError(
                f"{self.lowered.name} is in place (it overwrites A and B while it runs), so A and B must not be the "
                "same array or overlap; pass a copy of one of them"
            )

    def _fallback_note(self, executor: Executor | None, M: int, K: int, N: int) -> str:
        """Why beta is refused at this size where it is taken at others: the workspace limit runs a
        plan with fewer breadth-first levels ("" for the plan with every one)."""
        if executor is None or executor is self.executor or self._overwriting(self.executor):
            return ""  # (the plan with every level refuses beta too: --breadth 1 under rsmm's top level)
        options = executor.lowered.options
        return (f" (at {M}x{K}x{N} the workspace limit of {options.workspace_limit} bytes runs {options.breadth} of "
                f"{self.lowered.name}'s {options.levels} levels breadth-first, and the top level, depth-first, "
                "overwrites C; with every level breadth-first, as at sizes whose workspace fits, beta is taken)")

    def capture(self, A: Any, B: Any, out: Any, alpha: float = 1.0, beta: float = 0.0):
        """This product on these arrays as a CUDA graph (:class:`~bilinear.runtime.graphs.CapturedProduct`):
        call the result to replay every launch at once, with one graph launch of host time.

        Raises:
            ValueError: as a call with these arguments would, and on the NumPy backend.
        """
        from .graphs import CapturedProduct

        A, B, out = self._as_array(A, "A"), self._as_array(B, "B"), self._as_array(out, "out")
        return CapturedProduct(self, A, B, out, real_scalar(alpha, "alpha", self.dtype),
                               real_scalar(beta, "beta", self.dtype))

    def _hold_within_limit(self, executor: Executor, M: int, K: int, N: int) -> None:
        """Under a workspace limit, let go what the plans a call does not run kept, and the running
        plan's own buffers where growing them to this call's sizes would pass the limit (they are
        grown, not replaced, across shapes: ones of another shape's layout add up)."""
        limit = self.lowered.options.workspace_limit
        if limit is None:
            return
        for other in self.executors:
            if other is not executor:
                other.workspace = {}
                other.release_leaf()
        held = self.held_workspace_bytes()
        if not executor.last_ran(M, K, N) and held + executor.workspace_bytes(M, K, N) > limit:
            executor.workspace = {}
            executor.release_leaf()

    def _as_array(self, array: Any, name: str) -> Any:
        xp = self.backend.xp
        check_unmasked(array, name)
        check_on_device(array, name, xp)
        if not isinstance(array, xp.ndarray):
            if not hasattr(array, "__dlpack__"):
                raise ValueError(f"{name} must be a {xp.__name__} array or support DLPack, not {type(array).__name__}")
            array = from_dlpack(array, name, xp)
        if isinstance(array, np.ndarray) and type(array) is not np.ndarray:
            # a subclass's operators are not the element-wise ones the runtime means (np.matrix's *
            # is a product, its max() takes no initial=): the same memory as a plain array
            array = np.asarray(array)
        if array.ndim != 2:
            raise ValueError(f"{name} must be a matrix (2-D), not {array.ndim}-D")
        check_current_device(array, name, xp)
        if array.dtype != self._array_dtype:
            raise ValueError(f"{name} is {dtype_shown(array.dtype)} but this product was compiled for {self.dtype}"
                             + convert_hint(name, array.dtype, self.dtype))
        given, array = array, with_line_strides(array, xp)
        if not is_row_major(array):
            raise ValueError(layout_refusal(given, name, xp.__name__))  # the strides as given, not as lined up
        if name == "out":
            check_writable(array, name)
        elif self.writes_inputs:
            check_writable(array, name, f"{self.lowered.name} is in place (it overwrites A and B while it runs)")
        return array
