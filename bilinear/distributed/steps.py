"""Which decomposition a distributed product uses: breadth-first steps of its scheme, as many as
serve every rank and stay within reach, or classical 2D tiles."""

from __future__ import annotations

import numbers

from ..ir import Program, Schedule
from ..lower.decompose import Decomposition, breadth_first, tiles_2d
from ..lower.options import OptionError, check_count


# The most global products a plan is built with: the plan and its exact proof grow with them
# (Winograd's 7⁴ = 2401 are built in 0.2 s and proven in 0.9 s; 7⁵ = 16807 take 3.8 s and 14 s, on 8 ranks).
MAX_GLOBAL_PRODUCTS = 4096
#: Two products a step pass MAX_GLOBAL_PRODUCTS after this many steps; one product a step gains
#: nothing from a second step.
MAX_STEPS = MAX_GLOBAL_PRODUCTS.bit_length() - 1


def default_steps(rank: int, ranks: int) -> int:
    """The fewest breadth-first steps that give every rank at least one product, or, where those
    would make more than MAX_GLOBAL_PRODUCTS, the most steps within it (products are then cut
    into row bands among the ranks)."""
    steps, products = 1, rank
    while 1 < rank and products < ranks and products * rank <= MAX_GLOBAL_PRODUCTS:  # one product: bands
        steps, products = steps + 1, products * rank
    return steps


def algorithm_of(program: Program):
    """The algorithm a program's main definition multiplies by (a schedule's, or itself)."""
    main = program.main
    return program.algorithm(main.algorithm) if isinstance(main, Schedule) else main


def decomposition_for(program: Program, ranks: int, kind: str = "bfs", steps: int | None = None) -> Decomposition:
    """``'bfs'``: breadth-first steps of the program's algorithm; ``'2d'``: classical 2D tiles."""
    ranks = check_count(ranks, "ranks", 1)
    if kind == "2d":
        if steps is not None:  # it had been ignored
            raise OptionError("--steps (steps=) sets the breadth-first (bfs) decomposition's steps; the 2d decomposition has none")
        return tiles_2d(ranks)
    if kind != "bfs":
        raise ValueError(f"decomposition must be 'bfs' or '2d', not {kind!r}")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1):
        raise ValueError(f"steps must be a whole number of at least 1 (or None: the fewest that serve every rank), "
                         f"not {steps!r}")  # 0 had meant the default
    steps = None if steps is None else int(steps)  # NumPy's integers too, as compile's levels
    algorithm = algorithm_of(program)
    steps = steps or default_steps(algorithm.rank, ranks)
    reach = steps_within(algorithm.rank)
    if steps > reach:  # 7^100000 is neither computed nor written
        following = algorithm.rank ** (reach + 1)
        why = (f"{algorithm.rank}^{reach + 1} = {following} global products would pass the {MAX_GLOBAL_PRODUCTS} a plan "
               f"is built with" if following > MAX_GLOBAL_PRODUCTS else f"a plan is built with at most {MAX_STEPS} steps")
        raise ValueError(f"at most {reach} breadth-first steps of {algorithm.name} are planned, not {steps}: {why}")
    return breadth_first(algorithm, steps)


def steps_within(rank: int) -> int:
    """The most breadth-first steps of a scheme of ``rank`` products whose global products stay within
    MAX_GLOBAL_PRODUCTS (and MAX_STEPS)."""
    steps = 0
    while steps < MAX_STEPS and rank ** (steps + 1) <= MAX_GLOBAL_PRODUCTS:
        steps += 1
    return steps


def check_in_range(decomposition: Decomposition, dtype: str) -> None:
    """Refuse a decomposition whose coefficients ``dtype`` cannot hold: the operand sums and the
    reduction multiply by them (a Kronecker power's, in range one by one, maybe not together; 2^130
    had been cast to inf in float32, and the job ended on an internal error)."""
    from ..lower.levels import check_range

    coefficients = (coef for p in decomposition.products for side in (p.u, p.v, p.w) for _, coef in side)
    check_range(coefficients, dtype, f"{decomposition.name}'s global products multiply by", None)
