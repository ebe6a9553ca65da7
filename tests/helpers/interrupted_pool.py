"""A process that keeps bilinear.processes.mapped busy with ARGV[2] quick jobs a pool (workers started by
ARGV[3], the platform's method by default), with SIGPIPE at its default as the command line sets it,
interrupts itself after ARGV[1] seconds and exits 130 as the command line does: tests/test_processes.py
runs it to see an interrupted pool end cleanly (few jobs a pool: the interrupt often comes while a pool
starts).  The interrupt comes from a timer signal, not a thread: beside another thread the pool spawns its
workers, and the forked pool, the command line's, would go untried."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys

from bilinear.processes import mapped


def job(value: int) -> int:
    return value


if __name__ == "__main__":
    # a run that hangs says where, all threads' stacks on stderr, before the test's 60 s timeout kills it silently
    # (one of 12 runs hung once in CI, at 0.3 s on a loaded machine, with nothing to show)
    faulthandler.dump_traceback_later(45, exit=True)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Ctrl-C as a terminal's session has it: a shell's background job (CI started with `&`) starts with it
    # ignored, and Python then leaves it so; the interrupt below went nowhere and every run hung
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGALRM, lambda signum, frame: os.kill(os.getpid(), signal.SIGINT))  # as Ctrl-C sends it
    signal.setitimer(signal.ITIMER_REAL, float(sys.argv[1]))
    method = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        while True:
            mapped(job, list(range(int(sys.argv[2]))), workers=2, context=method)
    except KeyboardInterrupt:
        sys.exit(130)
