"""The distributed engine: one process per GPU, mpi4py for start-up and control, NCCL for device data.

Processes are started by ``mpiexec``/``srun``; mpi4py gives the rank, the
size and host-side control (agreeing on shapes, the NCCL unique id,
timeouts).  Device arrays move through NCCL (CuPy's ``cupy.cuda.nccl``);
NumPy arrays (the CPU backend, which is how CI runs the same plans) move
through MPI's buffer interface.  Nothing is pickled but small host values.

No collective waits forever: each is issued without blocking and polled
against a deadline.  A rank that stops answering (it died, or diverged)
makes the others raise :class:`DistributedError` with one message and
end the job (:func:`end_job`), which ``mpiexec`` turns into the end of every rank.
"""

from __future__ import annotations

import os
import sys
import time
from abc import ABC, abstractmethod
from typing import Any, Callable, NoReturn, TextIO

DEFAULT_TIMEOUT = 300.0  # seconds a collective waits for the other ranks; BILINEAR_DIST_TIMEOUT sets it


def default_timeout() -> float:
    """BILINEAR_DIST_TIMEOUT, read when a communicator is made (a bad value had failed every
    import of the package, ``bilinear plan`` too)."""
    text = os.environ.get("BILINEAR_DIST_TIMEOUT")
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise DistributedError(f"BILINEAR_DIST_TIMEOUT must be a number of seconds above 0, not {text!r}")
    return seconds


def start_timeout() -> float:
    """BILINEAR_DIST_TIMEOUT, or the default where it is bad: the deadline for starting MPI and
    comparing the ranks' command lines, which then refuse a bad value on every rank alike
    (``ranks.same_command``; a rank that refused it alone had left the others in MPI_Init)."""
    try:
        return default_timeout()
    except DistributedError:
        return DEFAULT_TIMEOUT


class DistributedError(RuntimeError):
    """A distributed product could not run: the same message on every rank that can still say it."""


class AgreedError(DistributedError):
    """A DistributedError every rank raises alike, from what the ranks exchanged: none need end the
    others, and one may say it for all (each rank of ``run --gpus`` had said it and ended the job)."""


def mpi_module():
    """mpi4py's MPI, or DistributedError saying what to install."""
    from .start import started_mpi

    try:
        MPI = started_mpi(start_timeout())
    except ImportError as error:  # pragma: no cover - depends on the install
        raise DistributedError(
            "the distributed product needs mpi4py and an MPI runtime: pip install 'bilinear[dist]'"
        ) from error
    return MPI


def say(message: str, stream: TextIO | None = None) -> None:
    """``message`` and its newline in one write (stdout by default): every rank of a job may say the
    same thing, and print's two writes (stderr writes through) ran one rank's line into another's."""
    stream = stream or sys.stdout
    stream.write(message + "\n")
    stream.flush()


def end_job(message: str, stream: TextIO | None = None, status: int = 1) -> NoReturn:
    """Say ``message`` on ``stream`` (stdout by default), then end this rank (with ``status``) and with it the job.

    Not ``MPI_Abort``: its kill overtook the output still in the launcher's pipes and lost the
    message in 2 of 12 jobs.  A process that exits lets the launcher read its pipes to the end,
    and ``mpiexec`` ends every rank when one exits without finalising MPI, as it does for one
    that dies."""
    say(message, stream)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


#: Why a collective did not complete, where the ranks were not waiting on one rank's own work.
STOPPED = "another rank died or stopped answering"
#: What agree() waits for, and why it may not come, unless told.
AGREEING = ("agreeing on the call", STOPPED)
#: The command lines' comparison (`run` and `bench` over ranks), which a rank whose own argparse refused joins too.
COMMAND_LINES = ("comparing command lines", STOPPED)
#: Whether a step every rank took alone (reading FILE) failed on any.
OUTCOMES = ("comparing the ranks' outcomes of a step", STOPPED)
#: What the ranks wait for after their own share: the others' (a large or uneven share is still at work).
SHARING = ("waiting for the other ranks' shares of the product", "another rank had not finished its share, or stopped "
           "answering; raise the limit for sizes this large")


def _wait(test: Callable[[], bool], timeout: float, what: str, rank: int, cause: str = STOPPED) -> None:
    """Poll ``test`` until it holds, or raise after ``timeout`` seconds, saying ``cause``."""
    deadline = time.monotonic() + timeout
    pause = 1e-5
    while not test():
        if time.monotonic() > deadline:
            raise DistributedError(
                f"rank {rank}: {what} did not complete within {timeout:g} s: {cause} "
                "(BILINEAR_DIST_TIMEOUT sets the limit)"
            )
        time.sleep(pause)
        pause = min(pause * 2, 1e-3)


class Comm(ABC):
    """Collectives over one array module's buffers, each bounded by ``timeout`` seconds."""

    xp: Any

    def __init__(self, mpi_comm: Any, timeout: float | None):
        self.mpi = mpi_comm
        self.rank = mpi_comm.Get_rank()
        self.size = mpi_comm.Get_size()
        self.timeout = default_timeout() if timeout is None else timeout

    def agree(self, value: Any, waiting: tuple[str, str] = AGREEING) -> list:
        """Every rank's small host ``value`` (shapes, options), gathered on every rank; ``waiting`` is
        what the ranks are waiting for and why it may not come, as a timeout says them.  Its first text
        names the step, which every rank sends too: ranks at different steps are refused alike
        (AgreedError), where they had read each other's values (a script's product call beside `bilinear
        run --gpus` comparing command lines: "IndexError: tuple index out of range" in the script)."""
        width = _STEP_BYTES + _WIDTH
        gathered = bytearray(width * self.size)
        request = self.mpi.Iallgather(waiting[0].encode()[:_STEP_BYTES].ljust(_STEP_BYTES, b"\0") + _encode(value),
                                      gathered)
        _wait(request.Test, self.timeout, waiting[0], self.rank, waiting[1])
        said = [bytes(gathered[r * width : (r + 1) * width]) for r in range(self.size)]
        steps = [part[:_STEP_BYTES].rstrip(b"\0").decode(errors="replace") for part in said]
        if len(set(steps)) > 1:
            listing = ", ".join(f"rank {rank} {step}" for rank, step in enumerate(steps))
            raise AgreedError(f"the ranks are at different steps of the job ({listing}): start every rank with the "
                              "same program, command line or script")
        return [_decode(part[_STEP_BYTES:]) for part in said]

    def barrier(self) -> None:
        request = self.mpi.Ibarrier()
        _wait(request.Test, self.timeout, "a barrier", self.rank)

    def max(self, value: float, waiting: tuple[str, str] = AGREEING) -> float:
        """The largest of every rank's ``value`` (``waiting`` as :meth:`agree` takes it)."""
        return max(float(v) for v in self.agree(float(value), waiting))

    def abort(self, message: str) -> NoReturn:
        """End every rank of the job (after printing ``message`` once, here)."""
        end_job(message)

    @abstractmethod
    def bcast(self, buffer: Any, root: int) -> None:
        """``buffer`` (contiguous) on every rank becomes root's."""

    @abstractmethod
    def reduce(self, buffer: Any, root: int) -> None:
        """root's ``buffer`` (contiguous) becomes the sum of every rank's."""

    @abstractmethod
    def allreduce(self, buffer: Any) -> None:
        """Every rank's ``buffer`` (contiguous) becomes the sum of every rank's."""


_WIDTH = 512  # bytes per rank in agree(): small host values only
_STEP_BYTES = 64  # and before them, the step they are exchanged at (agree's ``waiting`` text)


def short(message: str, budget: int = 400) -> str:
    """``message`` cut to fit ``budget`` bytes as the exchange writes it (its repr in UTF-8): 400
    characters of "≠" are 1,200 bytes, and the failing rank had failed again on sending them."""
    while len(repr(message).encode()) > budget:
        message = message[: len(message) * 3 // 4]
    return message


def _encode(value: Any) -> bytes:
    text = repr(value).encode()
    if len(text) > _WIDTH:
        raise DistributedError(f"a value to agree on is too long ({len(text)} bytes)")
    return text.ljust(_WIDTH, b"\0")


def _decode(data: bytes) -> Any:
    """A value :func:`_encode` wrote: a literal, with ``nan`` and ``inf`` (repr's, which literal_eval
    refuses: a NaN error had ended the job on "malformed node or string") read as floats."""
    import ast

    tree = ast.parse(data.rstrip(b"\0").decode(), mode="eval")
    for node in ast.walk(tree):
        for field, child in ast.iter_fields(node):
            if isinstance(child, ast.Name) and child.id in ("nan", "inf"):
                setattr(node, field, ast.Constant(float(child.id)))
            elif isinstance(child, list):
                child[:] = [ast.Constant(float(c.id)) if isinstance(c, ast.Name) and c.id in ("nan", "inf") else c
                            for c in child]
    return ast.literal_eval(tree)


class MPIComm(Comm):
    """NumPy buffers through MPI (the CPU backend; what CI runs under ``mpiexec``)."""

    def __init__(self, mpi_comm: Any = None, timeout: float | None = None):
        import numpy

        MPI = mpi_module()
        super().__init__(mpi_comm or MPI.COMM_WORLD, timeout)
        self.xp = numpy
        self._sum = MPI.SUM
        self._in_place = MPI.IN_PLACE

    def _run(self, request: Any, what: str) -> None:
        _wait(request.Test, self.timeout, what, self.rank)

    def bcast(self, buffer: Any, root: int) -> None:
        self._run(self.mpi.Ibcast(buffer, root=root), "a broadcast")

    def reduce(self, buffer: Any, root: int) -> None:
        send = self._in_place if self.rank == root else buffer
        self._run(self.mpi.Ireduce(send, buffer, op=self._sum, root=root), "a reduction")

    def allreduce(self, buffer: Any) -> None:
        self._run(self.mpi.Iallreduce(self._in_place, buffer, op=self._sum), "an all-reduce")


class NCCLComm(Comm):
    """CuPy buffers through NCCL, one GPU per rank (within a node, the node-local rank's GPU)."""

    def __init__(self, mpi_comm: Any = None, timeout: float | None = None):
        import cupy
        from cupy.cuda import nccl

        MPI = mpi_module()
        super().__init__(mpi_comm or MPI.COMM_WORLD, timeout)
        if not nccl.available:
            raise DistributedError("CuPy was built without NCCL support; install nvidia-nccl-cu13")
        # one GPU per process: the rank among the processes of this node picks it, so nodes may hold any number
        local_rank = self.mpi.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
        cupy.cuda.Device(local_rank % cupy.cuda.runtime.getDeviceCount()).use()
        self.xp = cupy
        self._nccl = nccl
        uid = nccl.get_unique_id() if self.rank == 0 else None
        uid = self.mpi.bcast(uid, root=0)  # a tuple of bytes: host control data
        self.comm = nccl.NcclCommunicator(self.size, uid, self.rank)
        self.stream = cupy.cuda.get_current_stream()

    def _types(self, buffer: Any) -> tuple[int, int]:
        kinds = {"float64": self._nccl.NCCL_FLOAT64, "float32": self._nccl.NCCL_FLOAT32}
        return buffer.size, kinds[str(buffer.dtype)]

    def _finish(self, what: str) -> None:
        event = self.xp.cuda.Event(disable_timing=True)
        event.record(self.stream)

        def done() -> bool:
            self.comm.check_async_error()
            return event.done

        try:
            _wait(done, self.timeout, what, self.rank)
        except DistributedError:
            self.comm.abort()
            raise

    def bcast(self, buffer: Any, root: int) -> None:
        count, kind = self._types(buffer)
        self.comm.bcast(buffer.data.ptr, count, kind, root, self.stream.ptr)
        self._finish("a broadcast")

    def reduce(self, buffer: Any, root: int) -> None:
        count, kind = self._types(buffer)
        self.comm.reduce(buffer.data.ptr, buffer.data.ptr, count, kind, self._nccl.NCCL_SUM, root, self.stream.ptr)
        self._finish("a reduction")

    def allreduce(self, buffer: Any) -> None:
        count, kind = self._types(buffer)
        self.comm.allReduce(buffer.data.ptr, buffer.data.ptr, count, kind, self._nccl.NCCL_SUM, self.stream.ptr)
        self._finish("an all-reduce")


def given_comm(comm: Comm | None, backend: str) -> Comm:
    """``comm``, or the backend's over ``MPI.COMM_WORLD`` where None (an mpi4py communicator had been
    taken, and failed at the first call)."""
    if comm is None:
        return make_comm(backend)
    if not isinstance(comm, Comm):
        raise TypeError(f"comm must be a Comm of bilinear.distributed (None: MPI.COMM_WORLD's), not {type(comm).__name__}")
    return comm


def make_comm(backend: str, timeout: float | None = None) -> Comm:
    """``'numpy'`` (MPI transport) or ``'cupy'`` (NCCL) over ``MPI.COMM_WORLD``."""
    if backend == "numpy":
        return MPIComm(timeout=timeout)
    if backend == "cupy":
        from ..runtime.compiled import CUPY_NEEDED
        from ..runtime.cupy_backend import cupy_available

        if not cupy_available():  # NCCLComm's import had said "No module named 'cupy'"
            raise ValueError(CUPY_NEEDED)
        return NCCLComm(timeout=timeout)
    raise ValueError(f"backend must be 'cupy' or 'numpy', not {backend!r}")
