"""Work spread over processes, for jobs that share nothing: candidate kernels compiled for
tuning, the optimizer's three sides and its polishing chains."""

from __future__ import annotations

import concurrent.futures.process
import multiprocessing
import os
import signal
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool


def mapped(function, jobs: list, workers: int | None = None, context: str | None = None) -> list:
    """``function`` over ``jobs``, in order, in up to ``workers`` processes (default: one per core)
    started by the ``context`` method (default: the platform's); in this process when one would do,
    or, with a warning, when workers cannot start here.  An error a job raises is raised here as it
    is.  ``function`` must be a module's top-level function and the jobs picklable."""
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers > 1:
        try:
            outcomes = _pooled(function, jobs, workers, context)
        except (OSError, BrokenProcessPool) as error:  # no /dev/shm, a sandbox without fork, a killed worker
            warnings.warn(f"parallel work failed ({error}); running it in one process", stacklevel=2)
        else:
            for failed, value in outcomes:
                if failed:
                    raise value
            return [value for _, value in outcomes]
    return [function(job) for job in jobs]


def _pooled(function, jobs: list, workers: int, context: str | None) -> list:
    """Every job's outcome from a pool of ``workers`` processes.  Stopped (Ctrl-C, SIGTERM), the
    workers are ended at once: leaving the pool would wait for the jobs they run (a whole optimize
    run), and without that they were left running."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(context), initializer=_default_termination)
    try:
        outcomes = list(pool.map(_outcome, [function] * len(jobs), jobs))
    except BaseException as error:
        if isinstance(error, Exception):
            pool.shutdown(cancel_futures=True)
        else:
            _end_at_once(pool)
        raise
    pool.shutdown()
    return outcomes


def _end_at_once(pool: ProcessPoolExecutor) -> None:
    """End a stopped pool's workers and wait for its threads, whose errors at that point are dropped:
    they go on writing to the pipes of the ended workers (with SIGPIPE's default, which the command line
    sets so that ``| head`` ends quietly, one interrupted run in five died of it, exit 141, instead of
    returning 130), and Python 3.11's manager thread sets the futures ``map`` cancelled as broken
    (InvalidStateError tracebacks).  Left to the interpreter's exit, they raced it with tracebacks."""
    if hasattr(signal, "SIGPIPE") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python's own default: a write error, not a death
    manager, report = getattr(pool, "_executor_manager_thread", None), threading.excepthook
    threading.excepthook = lambda args: None if args.thread is manager else report(args)
    try:
        # the pool's workers, and any a starting pool had forked but not listed yet: left alive, they held the
        # caller's stdout open (a hung run in CI left two reading their call pipe)
        listed = list((getattr(pool, "_processes", None) or {}).values())  # (no public way to end them)
        for process in {*listed, *multiprocessing.active_children()}:
            process.terminate()
        if (calls := getattr(pool, "_call_queue", None)) is not None:
            # its feeder thread can be blocked writing to the ended workers' pipe (seen in CI): not joined at exit
            calls.cancel_join_thread()
        # (a thread map was starting when the interrupt came is not joined: "cannot join thread before it is started")
        pool.shutdown(wait=manager is not None and manager.ident is not None, cancel_futures=True)
    except (RuntimeError, OSError):  # the teardown racing the interrupt (Python 3.11): the interrupt is what is raised
        pass
    finally:
        threading.excepthook = report
        if manager is not None:  # the interpreter's exit must not wake it through a pipe the ending closed (EBADF)
            concurrent.futures.process._threads_wakeups.pop(manager, None)


def _default_termination() -> None:
    """A worker ends on SIGTERM (the pool's own way to stop it), whatever handler the command line
    set in the process it was forked from."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _outcome(function, job) -> tuple[bool, object]:
    """(False, the job's result) or (True, the error it raised): a job's own error comes back as a
    value, so that only the pool's failures reach the handler above."""
    try:
        return False, function(job)
    except Exception as error:  # noqa: BLE001 — handed back to the caller, who raises it
        return True, error
