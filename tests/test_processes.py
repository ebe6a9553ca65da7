"""Work spread over processes (bilinear.processes): in order, and in this process when workers
cannot start."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import warnings
from types import SimpleNamespace

import pytest
from conftest import ROOT

from bilinear import processes


def _square(value: int) -> int:
    return value * value


def test_mapped_keeps_the_order_of_the_jobs():
    assert processes.mapped(_square, list(range(7)), workers=3) == [value * value for value in range(7)]


def test_mapped_runs_here_with_a_warning_when_workers_cannot_start(monkeypatch):
    def refused(*args, **kwargs):
        raise OSError("no /dev/shm")

    monkeypatch.setattr(processes.multiprocessing, "get_context", lambda method: SimpleNamespace(Pipe=refused, get_start_method=lambda: "fork"))
    with pytest.warns(UserWarning, match=r"parallel work failed \(no /dev/shm\); running it in one process"):
        assert processes.mapped(_square, [2, 3], workers=2) == [4, 9]


def test_mapped_starts_no_process_for_one_job(monkeypatch):
    monkeypatch.setattr(processes, "_pooled", None)  # calling it would fail
    assert processes.mapped(_square, [5]) == [25]


def _refuse_three(value: int) -> int:
    if value == 3:
        raise OSError(f"job {value} failed")
    return value


def test_an_error_in_a_job_is_raised_as_it_is_not_taken_for_workers_that_cannot_start():
    """An OSError raised by a job is the job's: it reaches the caller once, with no warning that the
    workers failed and no second run of every job in this process."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(OSError, match="job 3 failed"):
            processes.mapped(_refuse_three, [1, 2, 3, 4], workers=2)


STOPPED = """
import os, signal, sys, threading, time
from bilinear import cli
from bilinear.processes import mapped

def slow(x):
    time.sleep(3)
    return x

start = time.time()
signal.signal(signal.SIGTERM, cli._terminated)
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()  # the parent alone, as `kill PID`
try:
    mapped(slow, list(range(8)), workers=2)
except cli.Terminated:
    print(f"stopped after {time.time() - start:.1f} s", flush=True)
"""


def test_a_stopped_parent_stops_its_workers_at_once():
    """SIGTERM raised Terminated in the parent, and leaving the pool waited for the running jobs (a
    whole optimize run, 208 s); before the handler, the workers were left running (a review)."""
    import time

    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", STOPPED], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("stopped after 1."), done.stdout + done.stderr
    assert time.monotonic() - started < 8  # the jobs alone take 12 s; the workers did not keep it alive


KILLED = """
import os, sys, time
from bilinear.processes import mapped

def slow(x):
    os.write(1, f"{os.getpid()}\\n".encode())  # the worker's pid, for the test to watch (one write: two workers)
    time.sleep(60)
    return x

mapped(slow, [0, 1], workers=2)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie has ended: only its parent has not collected it
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a parent's death is signalled to its children on Linux")
def test_workers_end_when_their_caller_is_killed():
    """SIGKILL gives the caller no chance to end its workers: they ran their jobs to the end (a whole
    optimize chain) with nobody to read the result (a review)."""
    import time

    parent = subprocess.Popen([sys.executable, "-c", KILLED], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    workers = [int(parent.stdout.readline()) for _ in range(2)]
    parent.kill()
    parent.wait(10)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [pid for pid in workers if _alive(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive


@pytest.mark.skipif(not hasattr(signal, "SIGPIPE"), reason="SIGPIPE is POSIX's")
def test_an_interrupted_pool_ends_with_the_interrupt_and_no_traceback():
    """Interrupted, one optimize run in five died of SIGPIPE (exit 141: the pool's threads wrote to the
    pipes of the ended workers), and others printed the pool threads' tracebacks (a CLI hunt).  Each run
    is interrupted at another moment of its jobs."""
    outcomes = []
    # (2000 jobs a pool: with a few, the interrupt often lands while a pool starts); forked workers, then spawned
    runs = [(delay, "default") for delay in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85)]
    for delay, method in runs + [(delay, "spawn") for delay in (0.3, 0.6, 0.9, 1.2)]:
        run = subprocess.run([sys.executable, str(ROOT / "tests" / "helpers" / "interrupted_pool.py"), str(delay), "2000",
                              *([method] if method != "default" else [])],
                             capture_output=True, text=True, timeout=60, cwd=ROOT)
        outcomes.append((delay, method, run.returncode, run.stderr))
    assert outcomes == [(delay, method, 130, "") for delay, method, *_ in outcomes]


@pytest.fixture
def collected(monkeypatch):
    """The multiprocessing finalizers the garbage collector runs (their weak reference died), as a list."""
    from multiprocessing import util

    ran, call = [], util.Finalize.__call__

    def recorded(self, wr=None, **kwargs):
        if wr is not None:
            ran.append(self._callback.__name__)
        return call(self, wr, **kwargs)

    monkeypatch.setattr(util.Finalize, "__call__", recorded)
    return ran


def test_mapped_leaves_no_worker_behind(collected):
    """Nor a worker's finalizer for the garbage collector: a Ctrl-C that landed in one was dropped
    ("Exception ignored"), and the run went on (2 of about 60 interrupted runs of 3 jobs)."""
    processes.mapped(_square, list(range(20)), workers=3)
    assert multiprocessing.active_children() == [] and collected == []


def test_an_interrupted_caller_ends_its_workers_and_raises_the_interrupt(monkeypatch, collected):
    """Ctrl-C while the caller waits for results: the interrupt is raised, and no worker outlives it."""
    waits, wait = [], processes.multiprocessing.connection.wait

    def interrupted(objects, timeout=None):
        if waits:  # (joining a worker waits too)
            return wait(objects, timeout)
        waits.append(objects)
        raise KeyboardInterrupt

    monkeypatch.setattr(processes.multiprocessing.connection, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        processes.mapped(_square, list(range(20)), workers=3)
    assert len(waits) == 1 and multiprocessing.active_children() == [] and collected == []


def _killed_in_a_worker(value: int) -> int:
    if multiprocessing.parent_process() is not None:
        os.kill(os.getpid(), signal.SIGKILL)
    return value


def test_a_lost_worker_runs_the_jobs_here_with_a_warning():
    with pytest.warns(UserWarning, match=r"parallel work failed \(a worker process ended during job [01]\); "
                                         r"running it in one process"):
        assert processes.mapped(_killed_in_a_worker, [1, 2, 3], workers=2) == [1, 2, 3]
    assert multiprocessing.active_children() == []


def _unpicklable(value: int):
    return lambda: value


def test_a_result_that_cannot_be_sent_back_is_an_error_of_its_job():
    with pytest.raises(TypeError, match=r"a job's result could not be sent back \(AttributeError: Can't pickle local object"):
        processes.mapped(_unpicklable, [1, 2], workers=2)


def test_a_worker_whose_caller_is_gone_ends():
    """A worker forked just before Ctrl-C, before the caller listed it, is not ended by the caller:
    it ends when the caller closes its end of the pipe (its own copy of that end closed at start)."""
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    worker = context.Process(target=processes._serve, args=(_square, theirs, ours))
    worker.start()
    theirs.close()
    ours.send((3,))
    assert ours.recv() == (False, 9)
    ours.close()
    worker.join(10)
    assert worker.exitcode == 0


def _refused(value: int) -> int:
    from bilinear.diagnostics import BilinearError, Diagnostic

    raise BilinearError(Diagnostic(f"job {value} refused"))


class _Rebuilt(Exception):
    def __init__(self, first: int, second: int):
        super().__init__(f"{first} and {second}")


def _unrebuildable(value: int) -> int:
    raise _Rebuilt(value, value + 1)


def test_a_jobs_error_that_unpickles_differently_still_reaches_the_caller():
    """BilinearError was rebuilt from its message in the caller and became AttributeError; an error whose
    class cannot be rebuilt from its pickle replaced the job's (a review)."""
    from bilinear.diagnostics import BilinearError

    with pytest.raises(BilinearError, match="job 1 refused") as caught:
        processes.mapped(_refused, [1, 2], workers=2)
    assert caught.value.diagnostics[0].message == "job 1 refused"
    with pytest.raises(TypeError, match=r"a job's error could not be sent back: _Rebuilt\('1 and 2'\)"):
        processes.mapped(_unrebuildable, [1, 2], workers=2)


LOST_AT_START = """
import os, signal, warnings
from bilinear import processes

def dead(function, connection, parents_end):
    os._exit(0)

def square(value):
    return value * value

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # as the command line sets it
processes._serve = dead  # forked: every worker ends before it reads a job
start = processes.multiprocessing.context.ForkProcess.start
def started(self):
    start(self)
    self.join()  # dead before the first job is handed to it
processes.multiprocessing.context.ForkProcess.start = started
with warnings.catch_warnings(record=True) as said:
    warnings.simplefilter("always")
    print(processes.mapped(square, [1, 2, 3], workers=2, context="fork"), [str(w.message) for w in said])
"""


def test_a_worker_lost_before_its_first_job_falls_back_and_does_not_kill_the_caller():
    """With SIGPIPE at its default (the command line's), handing a job to a worker already gone killed the
    caller silently, exit 141, instead of the fallback (a review)."""
    done = subprocess.run([sys.executable, "-c", LOST_AT_START], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("[1, 4, 9] ['parallel work failed (") and "running it in one process" in done.stdout


SPAWN_MASK = """
import signal
from bilinear import processes

masks = []
start = processes.multiprocessing.context.SpawnProcess.start
def started(self):
    start(self)
    masks.append(sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
processes.multiprocessing.context.SpawnProcess.start = started
print(processes.mapped(abs, [-1, -2, -3], workers=3, context="spawn"), masks == [sorted({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})] * 3)
"""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX's")
def test_spawned_workers_start_with_ctrl_c_held():
    """The first spawn started multiprocessing's resource tracker, which unblocked SIGINT and SIGTERM:
    the other workers started with Ctrl-C deliverable, and printed tracebacks from their imports (a review)."""
    done = subprocess.run([sys.executable, "-c", SPAWN_MASK], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout == "[1, 2, 3] True\n", done.stdout + done.stderr


MARK = ["as imported"]  # changed by the test below: a forked worker sees the change, a spawned one does not


def _mark(_: int) -> str:
    return MARK[0]


def test_workers_are_spawned_where_other_threads_run():
    """A fork while another thread runs (rich's spinner, around `optimize`) copies whatever lock that thread
    holds, and Python 3.12 warns that the child may deadlock: the workers are spawned then."""
    MARK[0] = "changed here"
    try:
        assert processes.mapped(_mark, [1, 2], workers=2) == ["changed here"] * 2  # no other thread: forked
        stop = threading.Event()
        spinner = threading.Thread(target=stop.wait)
        spinner.start()
        try:
            assert processes.mapped(_mark, [1, 2], workers=2) == ["as imported"] * 2
        finally:
            stop.set()
            spinner.join()
    finally:
        MARK[0] = "as imported"


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX's")
def test_the_workers_objects_are_dropped_with_ctrl_c_held(monkeypatch):
    """Freed as the pool returned, a worker's objects ran multiprocessing's weak set callback, and a Ctrl-C
    that landed in it was dropped ("Exception ignored"): the run went on (about 1 in 35 interrupted 3-job pools
    under a timer's SIGINT).  They are dropped with Ctrl-C held, so it comes after them."""
    import weakref

    held, end = [], processes._end

    def ended(workers, stop):
        for worker in workers:
            weakref.finalize(worker, lambda: held.append(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        end(workers, stop)

    monkeypatch.setattr(processes, "_end", ended)
    assert processes.mapped(_square, [1, 2, 3], workers=2) == [1, 4, 9]
    assert held == [True, True]


def test_the_command_line_says_a_parallel_failure_as_a_note(monkeypatch, capsys, tmp_path):
    """It printed Python's warning: the module's path and line, "UserWarning:", and the source line."""
    from bilinear.cli import main

    def no_shared_memory(*args):
        raise OSError("no /dev/shm")

    monkeypatch.setattr(processes, "_pooled", no_shared_memory)
    monkeypatch.setattr(processes.os, "cpu_count", lambda: 2)
    assert main(["optimize", "strassen", "--seeds", "2", "-o", str(tmp_path / "s.bl")]) == 0
    err = capsys.readouterr().err
    assert "note: parallel work failed (no /dev/shm); running it in one process\n" in err
    assert "UserWarning" not in err and "processes.py" not in err


def test_only_bilinears_own_warnings_become_notes(capsys):
    """Every UserWarning became a note, another library's too (CuPy's): theirs keep Python's form."""
    from bilinear import cli

    shown = []
    show = cli._said_as_a_note(lambda *args: shown.append(args[2]))
    show("from us", UserWarning, str(cli._PACKAGE / "processes.py"), 3)
    show("from elsewhere", UserWarning, "/elsewhere/module.py", 7)
    assert capsys.readouterr().err == "note: from us\n" and shown == ["/elsewhere/module.py"]
