"""Running Python under ``mpiexec`` (MPICH from the test extra) for the distributed tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MPIEXEC = shutil.which("mpiexec", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="needs mpiexec (pip install '.[test]' brings MPICH)")


def run_ranks(
    ranks: int, *args: str, timeout: float = 120, env: dict | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """``python ARGS`` on ``ranks`` ranks (in folder ``cwd``); its status and output."""
    return subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=os.environ | (env or {}), cwd=cwd)
