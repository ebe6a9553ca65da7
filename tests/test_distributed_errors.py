"""How `bilinear run/bench --gpus` under mpiexec ends on an error: a failure every rank meets is said
once, by rank 0, and every rank exits with the tool's own status; one rank's own is said with the
rank.  Each job is a few ranks of small products on the NumPy backend."""

from __future__ import annotations

import pytest
from conftest import ROOT
from helpers.mpi import needs_mpi, run_mpmd, run_ranks

STRASSEN = str(ROOT / "algorithms/strassen.bl")
RUN = ("-m", "bilinear.cli", "run")
ON_THREE = ("--gpus", "3", "--backend", "numpy")


def _wrong_strassen(folder):
    """strassen.bl with one sign of C12 flipped: it fails verification."""
    wrong = folder / "wrong.bl"
    wrong.write_text((ROOT / "algorithms/strassen.bl").read_text().replace("C12 = M3 + M5", "C12 = M3 - M5"))
    return wrong


@needs_mpi
@pytest.mark.parametrize("case", ["wrong scheme", "missing --local", "too many steps", "too large"])
def test_a_failure_every_rank_meets_after_the_comparison_is_said_once_and_every_rank_exits_1(tmp_path, case):
    """Each rank had printed the same error and ended the job itself: the error came once per rank
    (or fewer, where the first to end the job killed the others), and mpiexec exited 9 at times."""
    missing = tmp_path / "missing.bl"
    args, said = {
        "wrong scheme": ((str(_wrong_strassen(tmp_path)), "-n", "16"), "error: C12 is wrong"),
        "missing --local": ((STRASSEN, "-n", "16", "--local", str(missing)),
                            f"bilinear: error: cannot read {missing}: No such file or directory\n"),
        "too many steps": ((STRASSEN, "-n", "16", "--steps", "50"),
                           "bilinear: at most 4 breadth-first steps of strassen are planned, not 50: 7^5 = 16807 "
                           "global products would pass the 4096 a plan is built with\n"),
        "too large": ((STRASSEN, "-n", "10000000"), "choose smaller sizes (-n, -m, -k)\n"),
    }[case]
    done = run_ranks(3, *RUN, *args, *ON_THREE, timeout=120, env={"BILINEAR_DIST_TIMEOUT": "60"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.count(said) == 1, done.stderr
    assert done.stderr.count("bilinear:") == 1, done.stderr
    assert "BAD TERMINATION" not in done.stdout + done.stderr


@needs_mpi
def test_a_local_file_one_rank_cannot_read_is_said_once_with_the_rank(tmp_path):
    """--local is each rank's own path: where one rank's is missing, the job says which rank and
    why, once, and every rank exits 1."""
    missing = tmp_path / "missing.bl"
    common = (*RUN, STRASSEN, "-n", "16", "--gpus", "2", "--backend", "numpy", "--local")
    done = run_mpmd((*common, STRASSEN), (*common, str(missing)), timeout=120, env={"BILINEAR_DIST_TIMEOUT": "60"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == (f"bilinear: rank 1 could not build its product: cannot read {missing}: "
                           "No such file or directory\n")


@needs_mpi
@pytest.mark.parametrize("ranks", [1, 3])
@pytest.mark.parametrize("value", ["abc", "-1"])
def test_a_bad_timeout_is_one_line_and_exit_1(ranks, value):
    """_guarded's handler asked world(), which read the variable again: two tracebacks per rank."""
    done = run_ranks(ranks, *RUN, STRASSEN, "-n", "16", "--gpus", str(ranks), "--backend", "numpy", timeout=120,
                     env={"BILINEAR_DIST_TIMEOUT": value})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == f"bilinear: BILINEAR_DIST_TIMEOUT must be a number of seconds above 0, not {value!r}\n"


#: The command line after it, on a rank whose BILINEAR_DIST_TIMEOUT is abc (the others' is unset).
WITH_BAD_TIMEOUT = ("-c", "import os, sys; os.environ['BILINEAR_DIST_TIMEOUT'] = 'abc'; "
                          "from bilinear.cli import main; sys.exit(main(sys.argv[1:]))")


@needs_mpi
def test_a_timeout_bad_on_one_rank_alone_is_named_at_once():
    """The rank with the bad value is refused by the comparison of the ranks' command lines, not
    left to exit alone while the others wait out MPI's start-up."""
    run = ("run", STRASSEN, "-n", "16", "--gpus", "2", "--backend", "numpy")
    done = run_mpmd(("-m", "bilinear.cli", *run), (*WITH_BAD_TIMEOUT, *run), timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == ("bilinear: the ranks were started with different options: BILINEAR_DIST_TIMEOUT differs "
                           "between rank 0 and rank 1; start every rank with the same command line and "
                           "BILINEAR_DIST_TIMEOUT\n")


SLOW_RANK_0 = """
import os, time, numpy as np, bilinear.distributed as dist
from bilinear.distributed import measure
p = dist.compile("{root}/algorithms/strassen.bl", backend="numpy", output="{output}")
calls, {name} = [], measure.{name}
def slow(*args, **kwargs):  # rank 0's serial work takes longer than BILINEAR_DIST_TIMEOUT
    calls.append(1)
    if p.comm.rank == 0 and len(calls) == {slow_call}:
        time.sleep(60)
    return {name}(*args, **kwargs)
measure.{name} = slow
try:
    measure.measure(p, 16, 16, 16, "float64", repeat=1)
except dist.DistributedError as error:
    os.write(1, f"rank {{p.comm.rank}} stopped: {{error}}\\n".encode())  # one write: atomic on the shared pipe
    p.comm.abort("ending the job")
"""


@needs_mpi
@pytest.mark.parametrize("name, slow_call, output, said", [
    # the check of C, against a float64 reference rank 0 computes alone
    ("_squared_error", 1, "replicated", "rank 1 stopped: rank 1: waiting for rank 0's check of the product did not complete within "
                          "5 s: rank 0 alone compares the product with a float64 reference, and had not finished; "
                          "raise the limit for sizes this large (BILINEAR_DIST_TIMEOUT sets the limit)\n"),
    # the timing of one device's product (rank 0's 2nd timing: the 1st is the distributed product's)
    ("time_device", 2, "replicated", "rank 1 stopped: rank 1: waiting for rank 0's timing of one device's product did not complete "
                       "within 5 s: rank 0 alone times it, and had not finished; raise the limit for sizes this large "
                       "(BILINEAR_DIST_TIMEOUT sets the limit)\n"),
    # under block2d every rank checks its own block: rank 1 waits for rank 0's, not for rank 0 alone
    ("_squared_error", 1, "block2d", "rank 1 stopped: rank 1: waiting for the other ranks' checks of their blocks did "
                                     "not complete within 5 s: another rank had not finished comparing its block with a "
                                     "float64 reference, or stopped answering; raise the limit for sizes this large "
                                     "(BILINEAR_DIST_TIMEOUT sets the limit)\n"),
])
def test_ranks_waiting_for_rank_0s_own_work_say_so_when_it_takes_too_long(name, slow_call, output, said):
    """The other ranks had blamed a dead or unanswering rank while rank 0 was still at work."""
    done = run_ranks(2, "-c", SLOW_RANK_0.format(root=ROOT, name=name, slow_call=slow_call, output=output), timeout=120,
                     env={"BILINEAR_DIST_TIMEOUT": "5"})
    assert done.returncode != 0
    assert said in done.stdout, done.stdout + done.stderr


#: run --gpus, where every rank's share of the product fails alike (as running out of memory would).
FAILS_EVERYWHERE = ("-c", "import sys\nfrom bilinear.distributed.execute import RankProgram\n"
                          "def out_of_memory(self, *args):\n    raise MemoryError('no room for the operand sums')\n"
                          "RankProgram.run = out_of_memory\nfrom bilinear.cli import main\nsys.exit(main(sys.argv[1:]))")


@needs_mpi
def test_a_failure_the_ranks_exchanged_is_said_once_and_every_rank_exits_1():
    """The ranks exchange whether their share failed, and each raised the same error: each had said
    it and ended the job."""
    done = run_ranks(3, *FAILS_EVERYWHERE, "run", STRASSEN, "-n", "16", *ON_THREE, timeout=120,
                     env={"BILINEAR_DIST_TIMEOUT": "60"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == "bilinear: " + "; ".join(f"rank {rank} failed: MemoryError: no room for the operand sums"
                                                   for rank in range(3)) + "\n"


SLOW_SHARE = """
import os, time, numpy as np, bilinear.distributed as dist
from bilinear.distributed.execute import RankProgram
p = dist.compile("{root}/algorithms/strassen.bl", backend="numpy", comm=dist.comm.make_comm("numpy", timeout=0.5))
run = RankProgram.run
def slow(self, *args):  # rank 0's share takes longer than the limit
    if p.comm.rank == 0:
        time.sleep(3)
    return run(self, *args)
RankProgram.run = slow
try:
    p(np.ones((16, 16)), np.ones((16, 16)))
except dist.DistributedError as error:
    os.write(1, f"rank {{p.comm.rank}} stopped: {{error}}\\n".encode())  # one write: atomic on the shared pipe
    p.comm.abort("ending the job")
"""


@needs_mpi
def test_ranks_waiting_for_another_ranks_share_say_so_with_the_limit_as_given():
    """Rank 1 blamed a dead rank while rank 0 was still at its share, and a limit of 0.5 s read "within 0 s"."""
    done = run_ranks(2, "-c", SLOW_SHARE.format(root=ROOT), timeout=120)
    assert done.returncode != 0
    assert ("rank 1 stopped: rank 1: waiting for the other ranks' shares of the product did not complete within 0.5 s: "
            "another rank had not finished its share, or stopped answering; raise the limit for sizes this large "
            "(BILINEAR_DIST_TIMEOUT sets the limit)\n") in done.stdout, done.stdout + done.stderr
