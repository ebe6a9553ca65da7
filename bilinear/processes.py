"""Work spread over processes, for jobs that share nothing: candidate kernels compiled for
tuning, the optimizer's three sides and its polishing chains."""

from __future__ import annotations

import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor


def mapped(function, jobs: list, workers: int | None = None, context: str | None = None) -> list:
    """``function`` over ``jobs``, in order, in up to ``workers`` processes (default: one per core)
    started by the ``context`` method (default: the platform's); in this process when one would do,
    or, with a warning, when workers cannot start here.  ``function`` must be a module's top-level
    function and the jobs picklable."""
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers > 1:
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(context)) as pool:
                return list(pool.map(function, jobs))
        except (OSError, RuntimeError) as error:  # no /dev/shm, a sandbox without fork, a killed worker
            warnings.warn(f"parallel work failed ({error}); running it in one process", stacklevel=2)
    return [function(job) for job in jobs]
