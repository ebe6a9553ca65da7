"""The arguments of :func:`bilinear.optimize.optimize`, checked as the command line checks its
options: the Python call had failed deep inside (``starts=0``: an IndexError; a Program: an
AttributeError) or run with ``seeds=-5`` and an unknown side ``{"Q": 3}`` without a word."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .ir import Algorithm
from .ir.algorithm import check_built_types
from .ir.names import check_definition_name
from .optimize_sides import borrowed

# Search counts (seeds, starts, rounds) past this are typing mistakes: each costs at least milliseconds.
MOST_TRIES = 10**6
# Parallel searches start one process each.
MOST_CHAINS = 4096


def check_arguments(algorithm: Any, seeds: Any, polish: Any, chains: Any, also: Any, starts: Any,
                    name: Any = None) -> tuple:
    """The sides of each program of ``also`` that compute ``algorithm``'s (``borrowed``; a generator is
    read once); TypeError or ValueError, with the reason, for what ``optimize`` cannot take."""
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"optimize takes one Algorithm (bilinear.load(path).main, or .algorithm(name)), not "
                        f"{type(algorithm).__name__}")
    check_built_types(algorithm)
    check_definition_name(name)
    _count("seeds", seeds, 0, MOST_TRIES)
    _count("polish", polish, 0, MOST_TRIES)
    _count("chains", chains, 1, MOST_CHAINS)
    if isinstance(starts, Mapping):
        unknown = sorted(set(map(str, starts)) - {"A", "B", "C"})
        if unknown:
            raise ValueError(f"starts names the sides A, B and C, not {', '.join(unknown)}")
        for side, count in starts.items():
            _count(f"starts[{side!r}]", count, 1, MOST_TRIES)
    else:
        _count("starts", starts, 1, MOST_TRIES)
    if isinstance(also, Algorithm):
        raise TypeError("also takes a sequence of Algorithms, not one Algorithm: pass [it]")
    others = tuple(also) if not isinstance(also, (str, bytes)) else (also,)
    for other in others:
        if not isinstance(other, Algorithm):
            raise TypeError(f"also takes Algorithms (other programs of the scheme, loaded), not {type(other).__name__}")
    candidates = tuple(borrowed(algorithm, other) for other in others)
    for other, sides in zip(others, candidates):  # it had been dropped without a word (the CLI refused it)
        if all(side is None for side in sides):
            raise ValueError(f"also: {other.name} computes none of {algorithm.name}'s sides (left factors, right "
                             "factors, outputs, its products taken in order); give a program of the same scheme")
    return candidates


def _count(name: str, value: Any, least: int, most: int) -> None:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be a whole number, not {type(value).__name__} {value!r}")
    if not least <= int(value) <= most:
        raise ValueError(f"{name} must be between {least} and {most}, not {value}")
