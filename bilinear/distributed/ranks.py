"""What the ranks of a distributed job agree on before anything runs: how many there are (from the
launcher's environment, or MPI's world), and that every rank was started with the same command line."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def launched_ranks() -> tuple[int, int]:
    """(ranks, this rank) as the launcher's environment says (MPICH's PMI, Open MPI's, Slurm's srun),
    without starting MPI; (1, 0) outside a job."""
    mpich = "PMI_FD" in os.environ or "PMI_PORT" in os.environ  # a live PMI connection, not a stale PMI_SIZE
    launchers = (("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),) + ((("PMI_SIZE", "PMI_RANK"),) if mpich else ())
    # srun's step (a batch script itself has SLURM_NTASKS and SLURM_PROCID, but runs as one task)
    launchers += (("SLURM_STEP_NUM_TASKS", "SLURM_PROCID"),)
    for size, rank in launchers:
        if os.environ.get(size, "").isdigit():
            given = os.environ.get(rank, "0")
            return int(os.environ[size]), int(given) if given.isdigit() else 0
    return 1, 0


class SameOnEveryRank(ValueError):
    """A refusal every rank reaches alike (from the arguments and the job's size alone): each rank
    returns 1 and rank 0 says why, so no rank need end the others (MPICH then killed them, and
    mpiexec exited 9 or 1 by which rank ended first)."""


#: What ranks may be given differently: paths (where a node keeps FILE; what each file holds is
#: compared as the decomposition's digest), and --json's, which rank 0 alone writes (whether it is
#: given is compared).
RANK_OWN_OPTIONS = frozenset({"file", "files", "local", "json"})
#: The environment variable the ranks compare beside their options (bad on one rank, it had ended that
#: rank alone).
TIMEOUT = "BILINEAR_DIST_TIMEOUT"
#: What argparse keeps beside the options: the command, its handler, whether --levels was given.
NOT_OPTIONS = frozenset({"command", "handler", "levels_given"})


#: What a rank whose command line argparse refused tells the others, as its command.
REFUSED = "a command line it refused (its own message says why)"


def refused_on_this_rank(argv: list[str], message: str | None = None) -> None:
    """After argparse refused this rank's command line: say ``message`` (its usage and why; None: the
    caller says why), here, or once for the job where every rank refused it alike (rank 0 says it: a
    typo on an 8-rank job's command line printed eight usages).  Where the job's ranks run or bench,
    they compare command lines before anything else, so this rank takes part with :data:`REFUSED` for
    a command: the others stop at once instead of waiting in MPI_Init for it."""
    from .comm import COMMAND_LINES, MPIComm, start_timeout

    alike = False
    command = next((word for word in argv if not word.startswith("-")), None)
    if command in ("run", "bench") and launched_ranks()[0] > 1:
        try:
            rank, size = world()
            if size > 1:
                mine = (REFUSED, hashlib.sha256((message or "").encode()).hexdigest()[:12])
                everyone = MPIComm(timeout=start_timeout()).agree(mine, COMMAND_LINES)
                alike = rank > 0 and all(tuple(theirs) == mine for theirs in everyone)
        except Exception:  # noqa: BLE001 - argparse's message is the one to see; the others end on their own
            pass
    if message is not None and not alike:
        try:
            sys.stderr.write(message)
            sys.stderr.flush()
        except OSError:  # nowhere to say it: the usage error's status stands
            pass


def read_on_every_rank(read: Callable[[], T], path: Path) -> T:
    """``read()`` (FILE's program) on every rank, as :func:`alike_on_every_rank` runs a step."""
    return alike_on_every_rank(read, f"could not read its FILE, {path}")


def alike_on_every_rank(step: Callable[[], T], failed: str) -> T:
    """``step()`` (one with no collective in it) on every rank, then refused alike where it failed on
    any: the same failure everywhere is said once, by rank 0; one rank's own is said as "rank R
    ``failed``: why".  A failure each rank had met and ended the job with had been printed once per
    rank (or once, where the first to end the job killed the others first, and mpiexec exited 9),
    and one rank's had left the others waiting for it to end them."""
    from ..diagnostics import BilinearError, render
    from ..lower.options import OptionError
    from .comm import OUTCOMES, MPIComm, short

    failure: Exception | None = None
    try:
        value = step()
    except (BilinearError, ValueError, OSError) as error:
        failure = error
    if world()[1] == 1:
        if failure is not None:
            raise failure
        return value
    said = "" if failure is None else (
        "\n".join(render(d) for d in failure.diagnostics) if isinstance(failure, BilinearError) else str(failure))
    digest = hashlib.sha256(said.encode()).hexdigest()[:12] if said else ""
    everyone = MPIComm().agree((digest, short(failed, 150), short(said, 300)), OUTCOMES)
    if not any(d for d, _, _ in everyone):
        return value
    if len({d for d, _, _ in everyone}) == 1:  # alike: rank 0 says its own whole message
        if isinstance(failure, OptionError):
            raise failure  # a usage error, as argparse says it (rank 0; the others return 2)
        raise SameOnEveryRank(said)
    raise SameOnEveryRank("; ".join(f"rank {rank} {what}: {why.removeprefix('error: ')}"  # ("rank 0 refused --json:
                                    for rank, (d, what, why) in enumerate(everyone) if d))  # error: cannot write ...")


def same_command(args) -> None:
    """Refuse, on every rank alike, a job whose ranks were started with different options (a
    hand-built MPMD line, ``mpiexec -n 1 bilinear run ... : -n 1 bilinear run ... --alpha 2``): an
    option refused on one rank alone had left the others waiting out BILINEAR_DIST_TIMEOUT."""
    from .comm import COMMAND_LINES, MPIComm, start_timeout

    if world()[1] == 1:
        _check_timeout()
        return
    compared = {name: getattr(args, name) for name in set(vars(args)) - RANK_OWN_OPTIONS - NOT_OPTIONS}
    # a path is each rank's own to give, but whether one is given is not (on some ranks only, --json was lost
    # and --local refused alone, without a word, as the others waited), nor how many FILEs bench times
    for name in {"json", "local"} & set(vars(args)):
        compared[name] = getattr(args, name) is not None
    if "files" in vars(args):
        compared["files"] = len(args.files or ())
    compared[TIMEOUT] = os.environ.get(TIMEOUT)  # each rank's own environment: bad on one, it is refused here
    names = sorted(compared)
    digests = "".join(hashlib.sha256(repr(compared[name]).encode()).hexdigest()[:6] for name in names)
    everyone = MPIComm(timeout=start_timeout()).agree((args.command, digests), COMMAND_LINES)
    if len({command for command, _ in everyone}) > 1:
        listing = ", ".join(f"rank {rank} {command}" for rank, (command, _) in enumerate(everyone))
        raise SameOnEveryRank(f"the ranks were started with different commands: {listing}; "
                              "start every rank with the same command line")
    differ = [option_flag(name) for i, name in enumerate(names) if len({d[6 * i : 6 * i + 6] for _, d in everyone}) > 1]
    if differ:
        ranks = [rank for rank, (_, d) in enumerate(everyone) if d != everyone[0][1]]
        others = f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {', '.join(map(str, ranks))}"
        raise SameOnEveryRank(
            f"the ranks were started with different options: {', '.join(differ)} "
            f"{'differs' if len(differ) == 1 else 'differ'} between rank 0 and {others}; "
            f"start every rank with the same command line{f' and {TIMEOUT}' if TIMEOUT in differ else ''}")
    _check_timeout()


def _check_timeout() -> None:
    """Refuse a bad BILINEAR_DIST_TIMEOUT, the same on every rank once compared."""
    from .comm import DistributedError, default_timeout

    try:
        default_timeout()
    except DistributedError as error:
        raise SameOnEveryRank(str(error)) from None


#: Options whose flag is not their name with dashes (tests hold this table to the parsers).
FLAGS = {TIMEOUT: TIMEOUT, "fuse": "--no-fuse", "input_format": "--from", "n": "-n", "m": "-m", "k": "-k", "files": "FILE"}


def option_flag(dest: str) -> str:
    """The flag a user types for the option argparse keeps as ``dest``."""
    return FLAGS.get(dest, "--" + dest.replace("_", "-"))


def mpi_started() -> bool:
    """Whether this process has started MPI (without starting it, or importing mpi4py)."""
    MPI = sys.modules.get("mpi4py.MPI")
    return MPI is not None and MPI.Is_initialized()


def world() -> tuple[int, int]:
    """(this rank, the job's ranks) of MPI.COMM_WORLD; (0, 1) without mpi4py: there is no job to end."""
    from .comm import start_timeout
    from .start import started_mpi

    try:
        MPI = started_mpi(start_timeout())
    except ImportError:
        return 0, 1
    return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
