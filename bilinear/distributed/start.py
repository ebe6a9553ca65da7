"""Starting MPI, with a deadline.

MPI_Init waits, in C, for every rank of the job.  A rank that ends without starting MPI (the other
command of a hand-built MPMD line, ``bilinear plan``, or one that failed before it) had left the
others there for good: the GIL is held, so no Python timer runs, and SIGTERM's handler is Python's
(``bilinear.cli``), so ``timeout`` and ``mpiexec`` could not end them either.  While MPI starts, a
watchdog process ends this one after BILINEAR_DIST_TIMEOUT seconds, saying why, and SIGTERM ends it
at once.
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import threading
from typing import Any

#: The watchdog: ends its parent (SIGTERM) at the deadline, unless the parent ended first.
WATCHDOG = """
import os, signal, sys, time
parent, seconds, message = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    if os.getppid() != parent:  # the rank ended (this process was handed to another parent): nothing to end
        sys.exit(0)
    time.sleep(min(0.2, max(deadline - time.monotonic(), 0)))
sys.stderr.write(message + "\\n")
sys.stderr.flush()
os.kill(parent, signal.SIGTERM)
"""


def started_mpi(seconds: float) -> Any:
    """mpi4py's MPI, started here if it was not, ending this process where that takes over ``seconds``
    (BILINEAR_DIST_TIMEOUT's); ImportError without mpi4py."""
    if "mpi4py.MPI" in sys.modules:  # started by the caller (``from mpi4py import MPI``), or here before
        MPI = sys.modules["mpi4py.MPI"]
        if MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
            _end_the_job_on_uncaught_exceptions()
        return MPI
    importlib.import_module("mpi4py")  # ImportError before any watchdog
    message = (f"bilinear: MPI did not start within {seconds:g} s (BILINEAR_DIST_TIMEOUT): another rank of this job "
               "ended without starting MPI, or has not started yet (its own message, if any, says why), or MPI takes "
               "longer than that to start here (a larger BILINEAR_DIST_TIMEOUT gives it time)")
    watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), str(seconds), message])
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL) if main else None
    try:
        MPI = importlib.import_module("mpi4py.MPI")  # MPI_Init_thread, as mpi4py starts it by default
        if MPI.COMM_WORLD.Get_size() > 1:
            _end_the_job_on_uncaught_exceptions()
        return MPI
    finally:
        watchdog.kill()
        watchdog.wait()
        if main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _end_the_job_on_uncaught_exceptions() -> None:
    """An exception nothing catches ends every rank, after its traceback, as ``python -m mpi4py``
    does: a script of the Python API that raised on one rank had ended that rank alone (MPI counts
    its exit as clean), and the others had waited out BILINEAR_DIST_TIMEOUT in its next product."""
    previous = sys.excepthook
    if getattr(previous, "ends_the_job", False):
        return

    def hook(kind, value, traceback) -> None:
        previous(kind, value, traceback)
        # Not MPI_Abort: its kill overtook the traceback in the launcher's pipes (CI lost it once);
        # an exit without finalising ends every rank as well (comm.end_job)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    hook.ends_the_job = True  # type: ignore[attr-defined]
    sys.excepthook = hook
