#!/usr/bin/env python3
"""How long ⟨27,27,27;12167⟩ (grey333 ⊗ grey333 ⊗ grey333, 3.8 MB of equations) takes to read and to verify.

    python3 benchmarks/large_read.py [--against DIR] [--rounds 2]

Writes the scheme with `bilinear product` into a temporary folder, then times, in separate processes,
``load_program`` of it and ``bilinear verify`` of it: with this checkout's code and, with ``--against``,
with another checkout's (``git worktree add DIR REV``), the two in turn each round so that a busy machine
slows both alike.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READ = "from pathlib import Path; from bilinear.frontend.loader import load_program; load_program(Path({path!r}))"


def with_code(code: Path) -> dict[str, str]:
    """The environment with ``code``'s bilinear first on the path."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(code), os.environ.get("PYTHONPATH")))))


def timed(code: Path, folder: str, *command: str) -> float:
    """Seconds ``command`` (python3's arguments) takes with ``code``'s bilinear.  It runs in ``folder``:
    Python puts the working folder before PYTHONPATH, and a checkout's root holds its own bilinear."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *command], env=with_code(code), check=True, stdout=subprocess.DEVNULL, cwd=folder)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout to time in turn with this one")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        nine, twenty_seven = Path(folder, "p9.bl"), Path(folder, "p27.bl")
        for first, written in (("grey333", nine), (str(nine), twenty_seven)):
            subprocess.run([sys.executable, "-m", "bilinear", "product", first, "grey333", "-o", str(written)],
                           env=with_code(ROOT), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder)
        codes = [ROOT, *([args.against.resolve()] if args.against else [])]
        for round_ in range(1, args.rounds + 1):
            for code in codes:
                read = timed(code, folder, "-c", READ.format(path=str(twenty_seven)))
                verify = timed(code, folder, "-m", "bilinear", "verify", str(twenty_seven))
                print(f"round {round_}  {code}:  read {read:5.1f} s   verify {verify:5.1f} s", flush=True)


if __name__ == "__main__":
    main()
