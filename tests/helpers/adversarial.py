"""Generated hostile inputs for the adversarial suite (issue 12), and how each outcome is judged.

Every case is seeded, so a failure reproduces from its category and number.  A case ends in
one of: accepted (and then checked numerically), refused with a message (BilinearError,
ValueError, argparse's usage error), or a finding: a traceback (any other exception), a hang
(more than LIMIT seconds) or a wrong accept (a product that ran and is wrong, or inputs changed
that should not be).
"""

from __future__ import annotations

import contextlib
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
ALGORITHMS = ROOT / "algorithms"
LIMIT = 20  # seconds: longer is a hang


class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int = LIMIT):
    """Raise Hang in the main thread after ``seconds`` (SIGALRM; the CI runs on Linux)."""

    def expired(signum, frame):
        raise Hang(f"over {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Tally:
    """Outcomes of one category."""

    name: str
    accepted: int = 0
    refused: int = 0
    tracebacks: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def cases(self) -> int:
        return self.accepted + self.refused + len(self.tracebacks) + len(self.hangs)

    def line(self) -> str:
        return (
            f"{self.name:10s} {self.cases:5d} cases: {self.accepted:4d} accepted, {self.refused:4d} refused; "
            f"{len(self.tracebacks)} tracebacks, {len(self.hangs)} hangs over {LIMIT} s, "
            f"{len(self.wrong)} wrong accepts ({self.seconds:.1f} s)"
        )

    def run(self, label: str, case) -> None:
        """Run ``case()`` (returns True when accepted) under the time limit and record how it ended."""
        from bilinear.diagnostics import BilinearError

        start = time.perf_counter()
        try:
            with time_limit():
                accepted = case()
        except Hang:
            self.hangs.append(label)
        except WrongAccept as error:
            self.wrong.append(f"{label}: {error}")
            self.accepted += 1
        except (BilinearError, ValueError) as error:
            if str(error).strip():
                self.refused += 1
            else:  # a refusal that says nothing is no refusal a user can act on
                self.tracebacks.append(f"{label}: {type(error).__name__} without a message")
        except Exception as error:  # noqa: BLE001 - that is the finding
            self.tracebacks.append(f"{label}: {type(error).__name__}: {str(error)[:200]}")
        else:
            if accepted:
                self.accepted += 1
            else:
                self.refused += 1
        finally:
            self.seconds += time.perf_counter() - start


class WrongAccept(Exception):
    """A product that ran and is wrong, or inputs changed that must not."""


# --- checking a product that was accepted ------------------------------------------------------


def check_product(product, rng: random.Random) -> None:
    """Multiply random matrices; raise WrongAccept if C is off or A, B changed against the promise."""
    from bilinear.measure import float64_reference, random_inputs

    M, K, N = (rng.choice([1, 2, 3, 5, 8, 9, 16, 17]) for _ in range(3))
    alpha = rng.choice([1.0, -2.0, 0.5])
    overwrites = product.lowered.levels and product.lowered.levels[0].schedule.overwrites_c
    beta = 0.0 if overwrites else rng.choice([0.0, 1.0, 0.25])
    A, B, C = random_inputs(np, M, K, N, product.dtype, seed=rng.randrange(1000))
    A0, B0 = A.copy(), B.copy()
    expected = float64_reference(A, B, C, alpha, beta)
    product(A, B, out=C, alpha=alpha, beta=beta)  # the call under test: its ValueError is a refusal
    try:
        _judge(product, (M, K, N), alpha, (A, B, C), (A0, B0), expected)
    except WrongAccept:
        raise
    except Exception as error:  # noqa: BLE001 - the checking failed, not the call: it must not pass as a refusal
        raise WrongAccept(f"{M}x{K}x{N}: the accepted product could not be checked ({type(error).__name__}: {error})") from error


def _judge(product, dims: tuple[int, int, int], alpha: float, arrays: tuple, originals: tuple, expected) -> None:
    """Raise WrongAccept if C is off or A, B changed against the promise."""
    from bilinear.lower.plan import level_dims
    from bilinear.measure import error_bound, relative_error
    from bilinear.verify.stability import stability

    (M, K, N), (A, B, C), (A0, B0) = dims, arrays, originals
    ran = [plan for _, plan, _ in level_dims(product.lowered, M, K, N)]
    growth = max((stability(p.algorithm).growth_factor / (p.algorithm.shape.m * p.algorithm.shape.k * p.algorithm.shape.n)
                  for p in ran), default=1.0)
    error = relative_error(C, expected, A0, B0)
    bound = error_bound(product.dtype, K, growth, len(ran)) * max(abs(alpha), 1.0) * 4
    if not np.isfinite(error) or error > bound:
        raise WrongAccept(f"{M}x{K}x{N} relative error {error:.2e} over {bound:.2e}")
    restores = all(p.schedule.restores or not p.schedule.inplace for level in product.lowered.levels
                   for p in (level, level.accumulate_fallback) if p is not None)
    if restores:
        eps = np.finfo(product.dtype).eps
        for name, now, before in (("A", A, A0), ("B", B, B0)):
            drift = np.abs(now.astype(np.float64) - before).max(initial=0.0)
            if drift > 64 * len(ran) * eps * max(np.abs(before).max(initial=0.0), 1.0):
                raise WrongAccept(f"{name} changed by {drift:.2e} though the schedule restores it")


# --- .bl text ------------------------------------------------------------------------------------------

NUMBERS = ["1", "2", "3", "1/3", "-1", "7/2", "1" + "0" * 400, "1/1" + "0" * 400, "1" + "0" * 2000, "0", "0.5"]
SHAPES = ["<2,2,2", "<1,1,1", "<1,2,3", "<3,3,3", "<1000,1000,1000", "<64,64,65", "<0,2,2", "<2,2,2;0", "<100000,1,1"]


def _block(rng: random.Random, operand: str, rows: int, cols: int) -> str:
    i, j = rng.randint(1, rows + (rng.random() < 0.05)), rng.randint(1, cols)
    return f"{operand}{i}{j}" if i <= 9 and j <= 9 else f"{operand}[{i},{j}]"


def _sum(rng: random.Random, operand: str, rows: int, cols: int) -> str:
    terms = [f"{rng.choice(NUMBERS)}*{_block(rng, operand, rows, cols)}" if rng.random() < 0.3
             else _block(rng, operand, rows, cols) for _ in range(rng.randint(1, 3))]
    return "(" + " + ".join(terms) + ")"


def random_algorithm(rng: random.Random) -> str:
    """An algorithm text, usually small and wrong, sometimes huge, with odd coefficients."""
    m, k, n = (rng.randint(1, 3) for _ in range(3))
    rank = rng.randint(1, 9)
    lines = [f"algorithm a <{m},{k},{n};{rank}>:" if rng.random() < 0.9 else f"algorithm a {rng.choice(SHAPES)};{rank}>:"]
    lines += [f"  M{r} = {_sum(rng, 'A', m, k)} * {_sum(rng, 'B', k, n)}" for r in range(1, rank + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            used = rng.sample(range(1, rank + 1), rng.randint(1, rank))
            lines.append(f"  C{i}{j} = " + " + ".join(f"{rng.choice(NUMBERS[:6])}*M{r}" for r in used))
    return "\n".join(lines) + "\n"


def naive_algorithm(m: int, k: int, n: int, scale: str = "1") -> str:
    """The classical ⟨m,k,n⟩ product (correct), each product scaled by ``scale`` and back."""
    lines = [f"algorithm naive <{m},{k},{n};{m * k * n}>:"]
    outputs: dict[tuple[int, int], list[str]] = {}
    r = 0
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            for l in range(1, k + 1):
                r += 1
                lines.append(f"  M{r} = {scale}*A{i}{l} * B{l}{j}")
                outputs.setdefault((i, j), []).append(f"M{r}/{scale}")
    lines += [f"  C{i}{j} = " + " + ".join(terms) for (i, j), terms in outputs.items()]
    return "\n".join(lines) + "\n"


SCHEDULE_EDITS = [
    ("inplace, restore", "inplace"),  # destroys its inputs
    ("schedule msmes", "schedule strassen_cublas"),  # a generated default's name
    ("schedule rsmm", "schedule winograd_cublas"),
    ("stage restore2:", "stage restore2:  B22 += B22;"),
    ("stage pre:", "stage pre:  A11 += A11;"),
    ("stage p1:  C22 = X * Y", "stage p1:  C22 += X * Y"),  # an overwrite schedule reading C
    ("stage s1:  X = A21 + A22", "stage s1:  X = A21 + A22 + C11 - C11"),
    ("A21 * B12 -> +C22", "A21 * B12 -> +C22;  A22 -= A22"),  # mixes a product stage with an update
    ("temp X: A", "temp X: C"),
    (": overwrite", ": accumulate"),
    (": overwrite", ": overwrite, inplace"),
    ("-> +C21 -C22", "-> +C21 -C22 +C21"),
]


def edited_schedule(rng: random.Random) -> tuple[str, str]:
    """A shipped schedule file with one to three hostile edits; (file name, text)."""
    path = rng.choice([ALGORITHMS / "msmes.bl", ALGORITHMS / "rsmm.bl"])
    text = path.read_text(encoding="utf-8")
    for old, new in rng.sample(SCHEDULE_EDITS, rng.randint(1, 3)):
        text = text.replace(old, new, 1)
    return path.name, text


def hostile_use(rng: random.Random, folder: Path) -> str:
    """A file that ``use``s something it should not read (or cannot)."""
    target = rng.choice(["/dev/zero", "/dev/null", "/etc/passwd", "/proc/self/environ", "secret", "link.bl", "loop.bl",
                         "fifo.bl", "dir.bl", "missing.bl", "self.bl", "", "strassen.bl"])
    return f'use "{target}"\n\nalgorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n'


def prepare_folder(folder: Path) -> None:
    """The files hostile_use refers to."""
    import os

    (folder / "secret").write_text("root:x:0:0:do-not-print-me\n", encoding="utf-8")
    if not (folder / "link.bl").exists():
        (folder / "link.bl").symlink_to(folder / "secret")
        (folder / "loop.bl").symlink_to(folder / "loop.bl")
        os.mkfifo(folder / "fifo.bl")
        (folder / "dir.bl").mkdir()
        (folder / "self.bl").write_text('use "self.bl"\n', encoding="utf-8")
