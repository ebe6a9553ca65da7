"""Running Python under ``mpiexec`` (MPICH from the test extra) for the distributed tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MPIEXEC = shutil.which("mpiexec", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
# Open MPI's mpiexec refuses to start as root (as tests run in many containers, the lent GPU
# machines' among them) unless both are set; MPICH's ignores them.
AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="needs mpiexec (pip install '.[test]' brings MPICH)")


def run_ranks(
    ranks: int, *args: str, timeout: float = 120, env: dict | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """``python ARGS`` on ``ranks`` ranks (in folder ``cwd``); its status and output."""
    return subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=os.environ | AS_ROOT | (env or {}), cwd=cwd)


def run_mpmd(*commands: tuple[str, ...], timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """One job of one rank per command (``mpiexec -n 1 python A : -n 1 python B``), as a hand-built
    MPMD line starts ranks with different options; its status and output."""
    line = [MPIEXEC]
    for args in commands:
        line += [*(() if len(line) == 1 else (":",)), "-n", "1", sys.executable, *args]
    return subprocess.run(line, capture_output=True, text=True, timeout=timeout, env=os.environ | (env or {}))
