"""``bilinear inplace``: a schedule that needs no workspace, derived from any algorithm
(:mod:`bilinear.schedule.inplace`), verified as written before it is written, with what its
compiled passes move beside the default schedule's."""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from functools import partial

from .cli_args import add_input_options, bl_name, positive, tries
from .cli_outputs import add_bl_output_options, check_bl_output
from .cli_sources import chosen_algorithm, copied_header
from .compose_cli import STYLE_HELP
from .diagnostics import BilinearError, Diagnostic, counted
from .import_cli import sums_multiplied_out
from .inplace_api import DEFAULT_STEPS, DEFAULT_TRIES, inplace
from .inplace_api import moved as blocks_moved
from .lower.options import Options
from .optimize_arguments import MOST_TRIES
from .report_sizes import duration_text
from .schedule_product_cli import write_verified

SHOWN_AT = 8192  # the size the traffic is said at, as verify says it


def add_parser(commands) -> None:
    command = commands.add_parser(
        "inplace", help="derive a schedule that needs no workspace (A and B overwritten, then restored), verified, as .bl",
        description="Write a schedule of FILE's algorithm that computes C += A·B with no workspace at all: each "
        "product's operand sums are formed in the A and B blocks themselves, which later statements put back "
        "(restore), and C's targets are left to compile's change of basis, as msmes does for Strassen. The "
        "products' order decides the element-wise traffic: the written order and --tries - 1 shuffled ones are "
        "derived, then --steps steps of a local search from the cheapest, and the order whose compiled passes "
        "(cuBLAS leaves, fused) move the fewest blocks is kept. The algorithm and the schedule are written "
        "together and verified (every block of A and B restored) before they are written; `bilinear run` or "
        "`bilinear compile` the file then, as any schedule (e.g. bilinear inplace grey333 -o grey333_inplace.bl).",
    )
    add_input_options(command)
    add_bl_output_options(command)
    command.add_argument("--tries", type=partial(positive, least=1, most=MOST_TRIES), default=DEFAULT_TRIES,
                         help=f"product orders derived: the written one and TRIES - 1 shuffled ones (default {DEFAULT_TRIES}); "
                         "every order once, and no search, where there are no more than TRIES")
    command.add_argument("--steps", type=tries, default=DEFAULT_STEPS,
                         help=f"then steps of a local search from the cheapest order: a product moved or two swapped, "
                         f"kept when no dearer (default {DEFAULT_STEPS}; 0: none)")
    command.add_argument("--seed", type=partial(positive, least=0), default=0,
                         help="seed of the shuffled orders and the search's steps (default 0: the same schedule every time)")
    command.add_argument("--style", choices=("equations", "table"), default="equations", help=STYLE_HELP)
    command.add_argument("--name", type=bl_name, default=None,
                         help="name of the schedule (default: the algorithm's name with _inplace)")
    command.add_argument("--algorithm", default=None, help="which algorithm of FILE (default: its last definition)")
    command.set_defaults(handler=derive)


def derive(args) -> int:
    from rich.console import Console

    from .cli_args import load_input_noting, note_schedule_not_carried
    from .compose import unused_note
    from .ir.names import derived_name
    from .schedule.inplace import every_order, product_count

    check_bl_output(args, args.file)
    program = load_input_noting(args)
    source = chosen_algorithm(args, program)
    if args.algorithm is None:
        note_schedule_not_carried(program, source, "inplace derives a schedule of", " other than the one derived")
    name = args.name or derived_name(f"{source.name}_inplace")
    if name == source.name:
        # (the algorithm's name is the file's: a refusal of what it holds, status 1, as README's rule has it)
        raise BilinearError(Diagnostic(f"--name {name} is the algorithm's name; give the schedule another"))
    if note := unused_note(source, "not computed"):
        print(note, file=sys.stderr)
    plural = {True: "s", False: ""}
    count = product_count(source)
    every = every_order(source, args.tries)  # fewer orders than --tries: each once, and no search
    orders = math.factorial(count) if every else args.tries + args.steps
    order_word, step_word = f"order{plural[args.tries > 1]}", f"step{plural[args.steps != 1]}"
    print(f"deriving an in-place schedule of {source.name}: {counted(count, 'product')}, "
          + ((f"each of their {orders} orders" if orders > 1 else "its one order") if every else
             f"{args.tries} {order_word}, then {args.steps} {step_word} of a local search"), file=sys.stderr)
    if count >= LARGE_SCHEME:  # the first order is derived before anything can be timed (_Ranked)
        print(f"note: deriving one order of {count} products takes minutes (3220 took 15 min on 2 cores), and "
              f"{orders} {'are' if orders > 1 else 'is'} asked for (--tries and --steps set how many)", file=sys.stderr)
    seeded = not every and (args.tries > 1 or args.steps > 0)  # whether the seed draws anything
    if unused := _unused_search_note(args, every, orders, source.name, seeded):
        print(unused, file=sys.stderr)
    with Console(stderr=True).status(f"deriving {name}"):  # a spinner where stderr is a terminal
        ranked = _Ranked(source, orders - 1)
        schedule = inplace(source, tries=args.tries, steps=args.steps, seed=args.seed, name=name, cost=ranked).main
    chosen = ((f"the cheapest of all {orders} product orders" if orders > 1 else "in its one product order") if every
              else f"the cheapest of {args.tries} product {order_word} and {args.steps} local search {step_word}")
    header = (*copied_header(args.file, program, source, writes=name),
              f"{name}: an in-place schedule of {source.name} derived by `bilinear inplace` (no workspace; A and B "
              f"restored), {chosen}{f' (seed {args.seed})' if seeded else ''}.")
    if written := write_verified(source, schedule, header, args.style, args.output, args.force):
        return written
    if args.style == "table" and (note := sums_multiplied_out(source, "the table", "--style equations keeps them")):
        print(note, file=sys.stderr)  # as import says it (the file's comment alone had)
    with Console(stderr=True).status("counting the default schedule's traffic"):
        print(_traffic_note(schedule, source), file=sys.stderr)
    return 0


def _unused_search_note(args, every: bool, orders: int, name: str, seeded: bool) -> str | None:
    """The search options given that change nothing (none is taken without a word): --steps and
    --seed where every order is derived, --seed where one order is taken unsearched."""
    given = [f"{flag} {value}" for flag, value, default in (("--steps", args.steps, DEFAULT_STEPS),
                                                           ("--seed", args.seed, 0))
             if value != default and (every or flag == "--seed")]
    if not given or seeded:
        return None
    verb = "changes" if len(given) == 1 else "change"
    why = ((f"each of {name}'s {orders} product orders is derived" if orders > 1 else f"{name} has one product order")
           if every else
           f"with --tries {args.tries} and --steps {args.steps} no order is drawn or searched")
    return f"note: {' and '.join(given)} {verb} nothing: {why}" + (", so none is drawn or searched" if every else "")


# Products from which deriving one order takes minutes (its time grows about as the cube: ⟨11,11,11;896⟩ took
# 13 s an order, ⟨12,18,24;3220⟩ 15 min, on 2 cores): said before the first, which is not timed
LARGE_SCHEME = 1500


class _Ranked:
    """The search's cost (:func:`bilinear.inplace_api.moved`), which says after the second candidate
    how long the others will take where that is long (⟨11,11,11;896⟩: 13 s a candidate).  The first
    is not timed: it pays for imports and first compilations (40 ms of Strassen's, 5 ms each after)."""

    SAY_AFTER = 20.0  # seconds of search left past which the estimate is printed

    def __init__(self, algorithm, others: int) -> None:
        self.algorithm, self.others = algorithm, others  # others: the candidates ranked after the first
        self.ranked = 0
        self.last = time.perf_counter()

    def __call__(self, schedule) -> tuple[int, int]:
        blocks = blocks_moved(schedule, self.algorithm)
        self.ranked += 1
        if self.ranked <= 2:
            now, began = time.perf_counter(), self.last
            self.last = now
            if self.ranked == 2 and (left := (now - began) * (self.others - 1)) > self.SAY_AFTER:
                print(f"note: a candidate order takes {now - began:.1f} s; the other {self.others - 1} will take about "
                      f"{duration_text(left)} (--tries and --steps set how many)", file=sys.stderr)
        return blocks


def _traffic_note(schedule, algorithm) -> str:
    """What the derived schedule's compiled passes move, beside the default schedule's and its workspace."""
    from .lower.levels import compiled_counts
    from .report_sizes import at_n, bytes_text, level_bytes, split_part
    from .schedule.default import default_schedule

    def traffic(candidate) -> str:
        counts = compiled_counts(candidate, algorithm, Options())
        zero = counts.from_zero or counts.counts
        return (f"{bytes_text(level_bytes(algorithm.shape, counts.counts.elementwise_blocks_moved, SHOWN_AT))} for "
                f"C += A·B, {bytes_text(level_bytes(algorithm.shape, zero.elementwise_blocks_moved, SHOWN_AT))} where C "
                "starts at zero")

    default = default_schedule(algorithm)
    workspace = Counter(temporary.like for temporary in default.temporaries)
    return (f"element-wise traffic per level at {at_n(SHOWN_AT, split_part(algorithm.shape, SHOWN_AT))} float64, compiled (cublas leaves, fused passes): "
            f"{traffic(schedule)}, no workspace; the default schedule: {traffic(default)}, with "
            f"{bytes_text(level_bytes(algorithm.shape, workspace, SHOWN_AT))} of workspace")
