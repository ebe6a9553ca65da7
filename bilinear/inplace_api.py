"""``bilinear.inplace``: a program of an algorithm and an in-place schedule derived for it
(:mod:`bilinear.schedule.inplace`), ranked by what compile's passes move; ``bilinear.compile`` runs it
with no workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .diagnostics import BilinearError, brief
from .ir import Algorithm, Program, Schedule
from .lower.options import Options, check_count

DEFAULT_TRIES = 64
DEFAULT_STEPS = 256


def moved(schedule: Schedule, algorithm: Algorithm) -> tuple[int, int]:
    """Blocks a schedule's compiled passes (cuBLAS leaves, fused) move at one level for C += A·B, then
    where C starts at zero: the rank of a derived candidate."""
    from .lower.levels import compiled_counts

    counts = compiled_counts(schedule, algorithm, Options())
    if counts.counts is None:  # products of sums, which cuBLAS leaves do not run (an AttributeError had said so)
        raise ValueError(f"schedule {schedule.name}: {counts.refused}")
    return (sum(counts.counts.elementwise_blocks_moved.values()),
            sum((counts.from_zero or counts.counts).elementwise_blocks_moved.values()))


def inplace(source: str | Path | Program | Algorithm, *, tries: int = DEFAULT_TRIES, steps: int = DEFAULT_STEPS,
            seed: int = 0, name: str | None = None, cost: Callable[[Schedule], object] | None = None,
            format: str | None = None, shape: str | None = None, key: str | None = None, allow_pickle: bool = False,
            modulus: int | None = None) -> Program:
    """``source``'s algorithm (a path, a shipped name, a loaded program's main algorithm, or one
    Algorithm) with an in-place schedule derived for it: C += A·B with no workspace, A and B
    restored; the cheapest by ``cost`` (default, or ``cost=moved``: :func:`moved`) of the written order of its products,
    ``tries - 1`` shuffled ones and ``steps`` steps of a local search from the cheapest (``seed``); or
    each order once, and no search, where the products have no more than ``tries`` orders.
    Pass the result to :func:`bilinear.compile`.  ``format``, ``shape``, ``key``, ``allow_pickle`` and ``modulus``:
    how a file is read, as :func:`bilinear.load` takes them.

    Raises:
        ValueError: for tries below 1, steps below 0, a name that is the algorithm's, or a cost of NaN.
        TypeError: where ``cost`` is no function, or returns values that do not compare with ``<``.
        BilinearError: where ``source`` is not an exact algorithm that verifies.
    """
    from .api import program_of
    from .ir.names import definition_name_problem, derived_name
    from .schedule.inplace import inplace_schedule, refuse_algorithms_name
    from .verify import verify_schedule
    from .verify.algorithm import verify_algorithm

    program = program_of(source, format=format, shape=shape, key=key, allow_pickle=allow_pickle, modulus=modulus)
    main = program.main
    algorithm = main if isinstance(main, Algorithm) else program.algorithm(main.algorithm)
    if errors := verify_algorithm(algorithm):
        raise BilinearError(*errors)
    name = derived_name(f"{algorithm.name}_inplace") if name is None else name
    if problem := definition_name_problem(name):
        raise ValueError(f"name {brief(repr(name))}: {problem}")  # (cut: a 5000-character name was quoted whole)
    refuse_algorithms_name(name, algorithm)  # before the search
    tries, steps, seed = (check_count(value, label, least)  # NumPy's integers too, as compile takes them
                          for label, value, least in (("tries", tries, 1), ("steps", steps, 0), ("seed", seed, 0)))
    if cost is not None and not callable(cost):  # (a falsy one, 0, had been taken for no cost at all)
        raise TypeError(f"cost must be a function of a Schedule, not {cost!r}")
    if cost is moved:  # the default named: it takes the algorithm too, which the search does not pass
        cost = None
    ranked = _compared(cost) if cost is not None else (lambda candidate: moved(candidate, algorithm))
    schedule = inplace_schedule(algorithm, ranked, tries, seed, name, steps)
    if (check := verify_schedule(schedule, algorithm)).errors:  # a bug in the derivation: never returned
        raise BilinearError(*check.errors)
    return Program(program.path, (algorithm,), (schedule,), (algorithm.name, schedule.name), program.uses)


def _compared(cost: Callable[[Schedule], object]) -> Callable[[Schedule], object]:
    """``cost``, refusing values that do not compare with ``<`` with the first it returned: the
    search's own comparison would raise Python's TypeError from inside it, naming no cost."""
    first: list[object] = []

    def checked(schedule: Schedule) -> object:
        value = cost(schedule)
        against = first[0] if first else value
        try:
            bool(value < against), bool(against < value)  # the search takes each as a truth value
        except (TypeError, ValueError):  # (NumPy arrays: "the truth value of an array ... is ambiguous")
            then = f"{against!r}, then {value!r}" if first else repr(value)
            raise TypeError("cost must return values that compare with <, as numbers or tuples of numbers do; "
                            f"it returned {then}") from None
        if _holds_nan(value):  # it compares false with everything: the search would keep whichever came first
            raise ValueError(f"cost returned {value!r}, which orders with nothing (NaN)")
        first[:] = first or [value]
        return value

    return checked


def _holds_nan(value: object) -> bool:
    """Whether a cost is NaN, or a tuple holding one (a tuple's own comparison skips an element that
    is the same object)."""
    if isinstance(value, tuple):
        return any(_holds_nan(item) for item in value)
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return False
