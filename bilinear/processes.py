"""Work spread over processes, for jobs that share nothing: candidate kernels compiled for
tuning, the optimizer's three sides and its polishing chains.

The pool is this module's own: a pipe to each worker, one job in flight on each, and no thread in
the calling process.  ``concurrent.futures``' pool, stopped by Ctrl-C, raced its manager and feeder
threads (Python 3.11): tracebacks, deaths by SIGPIPE, and one interrupted run in a few hundred in CI
hung with its workers alive."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import multiprocessing.resource_tracker
import os
import signal
import sys
import threading
import warnings
from multiprocessing.reduction import ForkingPickler

# what stops a command (its handlers raise in the main thread): held back while workers start
_STOPS = {signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])}


@contextlib.contextmanager
def stops_held():
    """Ctrl-C, SIGTERM and SIGHUP held back while the block runs, then raised again: for work that must
    not stop half done (renames that replace files together, an in-place product's restore).  Their
    handlers, not a signal mask: a mask holds one thread's signals, and the process's other threads
    took them.  In a thread other than the main one, nothing to hold: handlers run in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    before = {}
    for number in _STOPS:
        if signal.getsignal(number) not in (signal.SIG_IGN, None):  # ignored stays ignored; None: set outside Python
            before[number] = signal.signal(number, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(caught):
            signal.raise_signal(number)


def mapped(function, jobs: list, workers: int | None = None, context: str | None = None) -> list:
    """``function`` over ``jobs``, in order, in up to ``workers`` processes (default: one per core)
    started by the ``context`` method (default: the platform's); in this process when one would do,
    or, with a warning, when workers cannot start here or one is lost.  An error a job raises is
    raised here as it is.  ``function`` must be a module's top-level function and the jobs picklable."""
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers > 1:
        try:
            outcomes = _pooled(function, jobs, workers, multiprocessing.get_context(context or _safe_default()))
        except OSError as error:  # no /dev/shm, a sandbox without fork, a killed worker
            warnings.warn(f"parallel work failed ({error}); running it in one process", stacklevel=2)
        else:
            for failed, value in outcomes:
                if failed:
                    raise value
            return [value for _, value in outcomes]
    return [function(job) for job in jobs]


def _safe_default() -> str | None:
    """The platform's start method, but spawn where it forks and another thread runs (rich's spinner
    around ``optimize``): a fork copies whatever lock that thread holds, unheld in the child, and Python
    3.12 warns that the worker may deadlock."""
    if threading.active_count() > 1 and multiprocessing.get_start_method() == "fork":
        return "spawn"
    return None


def _pooled(function, jobs: list, workers: int, methods) -> list:
    """Every job's outcome from ``workers`` processes.  However this ends (done, a lost worker,
    Ctrl-C, SIGTERM), the workers end with it: leaving them would keep a stopped
    command's output open, and waiting for them would wait for the jobs they run (a whole optimize
    run)."""
    links: list[tuple[object, object, object]] = []  # (process, our end, its end), listed before it starts
    if methods.get_start_method() != "fork":
        # multiprocessing's resource tracker, started by the first spawn, unblocks Ctrl-C and SIGTERM as it
        # starts: started before they are held, the workers after the first had started with them deliverable
        multiprocessing.resource_tracker.ensure_running()
    try:
        with _pipe_errors_raised():
            with _stops_held():  # a worker starts with them held, until it ignores Ctrl-C
                _start(function, workers, methods, links)
            outcomes = _dispatched(jobs, [link[1] for link in links])
    except BaseException:
        _end([link[0] for link in links], stop=True)
        raise
    finally:
        _close_pipes(links)  # a worker forked by a start that Ctrl-C cut short (no pid kept to end it) reads EOF and ends
    _end([link[0] for link in links], stop=False)
    # No name here holds a worker's objects but links: dropped with Ctrl-C held, their finalizers (multiprocessing's
    # weak set of processes, a connection's __del__) run where a Ctrl-C cannot land in them and be lost.
    with _stops_held():
        links.clear()
    return outcomes


def _start(function, workers: int, methods, links: list) -> None:
    """``workers`` processes serving ``function``, each listed in ``links`` before it starts."""
    for _ in range(workers):
        ours, theirs = methods.Pipe()
        links.append((methods.Process(target=_serve, args=(function, theirs, ours)), ours, theirs))
        links[-1][0].start()
        theirs.close()


def _close_pipes(links: list) -> None:
    for _, ours, theirs in links:
        ours.close()
        theirs.close()


def _dispatched(jobs: list, connections: list) -> list:
    """Each job's outcome, the jobs handed out one at a time to whichever worker is free."""
    outcomes, waiting, running = [None] * len(jobs), iter(enumerate(jobs)), {}
    for connection in connections:
        _hand_next(connection, waiting, running)
    while running:
        for connection in multiprocessing.connection.wait(list(running)):
            index = running.pop(connection)
            try:
                outcomes[index] = connection.recv()
            except EOFError:
                raise ConnectionAbortedError(f"a worker process ended during job {index}") from None
            _hand_next(connection, waiting, running)
    return outcomes


def _hand_next(connection, waiting, running: dict) -> None:
    """The next job to the worker at ``connection`` (in a tuple: a job may be anything), or, with
    none left, its signal to end (an empty tuple)."""
    for index, job in waiting:  # (the first left, if any)
        connection.send((job,))
        running[connection] = index
        return
    connection.send(())


def _end(processes: list, stop: bool) -> None:
    """Wait for the workers; ``stop``: end them first.  One still alive after a few seconds is killed.
    Each is closed here: left to the garbage collector, its finalizer ran at some later moment, and
    a Ctrl-C that landed in it was dropped ("Exception ignored"), the command going on as if never
    interrupted."""
    started = [process for process in processes if process.pid is not None]
    if stop:
        for process in started:
            process.terminate()
    for process in started:
        process.join(5)
        if process.exitcode is None:
            process.kill()
            process.join()
        process.close()


@contextlib.contextmanager
def _pipe_errors_raised():
    """SIGPIPE ignored while the pool runs (in the main thread, where a handler may be set): the command
    line sets its default, which killed the caller without a word (exit 141) where a job was handed to a
    worker already gone; ignored, the write raises, and the jobs run here instead."""
    if not hasattr(signal, "SIGPIPE") or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGPIPE, before)


@contextlib.contextmanager
def _stops_held():
    """Ctrl-C and SIGTERM held back from this thread while workers start (where the platform can)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _serve(function, connection, parents_end) -> None:
    """A worker: each job it is sent, done, its outcome sent back, until told to end or its caller
    is gone.  It ignores Ctrl-C (which a terminal sends to the whole group): its caller ends it, with
    SIGTERM at its default whatever handler the command line set in the process it was forked from."""
    parents_end.close()  # a fork's copy: left open, this worker would never see its caller go
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) != signal.SIG_IGN:  # under nohup: kept ignored
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    _end_with_caller()
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    try:
        while message := connection.recv():
            _send_back(connection, _outcome(function, *message))
    except (EOFError, OSError):  # its caller is gone
        pass


def _end_with_caller() -> None:
    """SIGTERM to this worker when its caller dies (Linux).  The pipe tells a worker only between jobs:
    a caller killed by SIGKILL left its workers running their jobs (a whole optimize chain) to the end."""
    if not sys.platform.startswith("linux"):
        return
    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):  # no libc to ask: the pipe still ends it
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    caller = multiprocessing.parent_process()
    if caller is not None and os.getppid() != caller.pid:  # it died before the request was made
        os._exit(0)


def _outcome(function, job) -> tuple[bool, object]:
    """(False, the job's result) or (True, the error it raised): a job's own error comes back as a
    value, so that only the pool's failures reach the handler above."""
    try:
        return False, function(job)
    except Exception as error:  # noqa: BLE001 — handed back to the caller, who raises it
        return True, error


def _send_back(connection, outcome: tuple[bool, object]) -> None:
    """``outcome`` to the caller, or, where it does not come back as it went (it cannot be pickled, or
    its class cannot be rebuilt from its pickle: BilinearError had become AttributeError in the caller),
    an error that says so."""
    try:
        data = ForkingPickler.dumps(outcome)
        ForkingPickler.loads(data)  # as the caller will
    except Exception as error:  # noqa: BLE001 — any pickling failure
        failed, value = outcome
        what = f"error could not be sent back: {value!r}" if failed else "result could not be sent back"
        data = ForkingPickler.dumps((True, TypeError(f"a job's {what} ({type(error).__name__}: {error})")))
    connection.send_bytes(data)  # recv() in the caller unpickles it
