"""``bilinear plan``, and ``bilinear run/bench --gpus P`` under ``mpiexec -n P``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..cli_args import (add_input_options, asks_for_reading_option, dimension, load_input, load_input_noting,
                        note_unused_definitions, positive)
from ..diagnostics import BilinearError, diagnostics_of, render
from ..lower.options import OptionError
from .comm import AgreedError, end_job, say
from .describe import PLAN_SCHEMA_VERSION, describe_plan, plan_as_data
from .steps import MAX_GLOBAL_PRODUCTS
from .plan import INPUT_LAYOUTS, OUTPUT_LAYOUTS
from .ranks import (SameOnEveryRank, alike_on_every_rank, launched_ranks, read_on_every_rank, same_command, world)

MAX_RANKS = 4096  # a plan lists every rank's work; past this it is no longer something to read or prove


def _rank_count(text: str) -> int:
    """An argparse type: a number of ranks, 1 to MAX_RANKS."""
    ranks = positive(text)
    if ranks > MAX_RANKS:
        raise argparse.ArgumentTypeError(f"at most {MAX_RANKS} ranks are planned, not {ranks}")
    return ranks


def add_distribution_options(parser: argparse.ArgumentParser, planning: bool = False) -> None:
    """Options shared by ``plan`` (``planning``), ``run --gpus`` and ``bench --gpus``."""
    parser.add_argument(
        "--gpus",
        type=_rank_count,
        default=None,
        metavar="P",
        help="ranks to plan for (default 2)" if planning else
        "ranks (one GPU each) to spread the product over; run under `mpiexec -n P`",
    )
    parser.add_argument(
        "--decomposition",
        choices=("bfs", "2d"),
        default="bfs",
        help="global decomposition: breadth-first steps of FILE's algorithm (default), or classical 2D tiles",
    )
    parser.add_argument(
        "--steps",
        type=positive,
        default=None,
        metavar="S",
        help=f"breadth-first steps (default: the fewest that give every rank a product, within {MAX_GLOBAL_PRODUCTS} "
             "products; past that, products are cut into row bands among the ranks)",
    )
    parser.add_argument(
        "--local",
        type=Path,
        default=None,
        metavar="FILE",
        # plan takes it only to say that it does not use it
        help=argparse.SUPPRESS if planning else "what each rank multiplies its products with (default FILE, at --levels levels)",
    )
    parser.add_argument(
        "--inputs", choices=INPUT_LAYOUTS, default="replicated", help="where A and B are (default replicated)"
    )
    parser.add_argument(
        "--output", choices=OUTPUT_LAYOUTS, default="replicated", help="where C goes (default replicated)"
    )


def check_single_device(args) -> int | None:
    """Refuse the distribution options on a one-device run (``run``/``bench`` without --gpus), which
    would not use them; under mpiexec, 1 where another rank was started with other options (rank 0
    says so), else None."""
    given = [option for option, value, default in (
        ("--decomposition", args.decomposition, "bfs"), ("--steps", args.steps, None), ("--local", args.local, None),
        ("--inputs", args.inputs, "replicated"), ("--output", args.output, "replicated")) if value != default]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise OptionError(f"{', '.join(given)} {verb} only with --gpus P (a distributed run under mpiexec); "
                          "without --gpus the product runs on one device")
    ranks, rank = launched_ranks()
    if ranks > 1:
        # Compare options with the other ranks as a --gpus rank does first: a rank started with --gpus
        # beside this one waits in MPI_Init for every rank, and this one had never started MPI (without
        # mpi4py there is no such rank, and same_command returns at once).
        try:
            same_command(args)
        except SameOnEveryRank as error:
            if rank == 0:
                say(f"bilinear: {error}", sys.stderr)
            return 1
    if ranks > 1 and rank == 0:  # `mpiexec -n 2 bilinear run ...` ran two separate runs without a word
        print(f"bilinear {args.command}: note: started as {ranks} MPI ranks without --gpus: each rank runs its own "
              f"one-device {args.command}; add --gpus {ranks} for one product over them", file=sys.stderr)
    return None


def add_plan_parser(commands) -> None:
    plan = commands.add_parser(
        "plan",
        help="print and verify the distributed plan of a scheme over P GPUs",
        description="Decompose an M×K by K×N product over P ranks with FILE's algorithm (breadth-first steps, "
        "products that do not divide evenly cut into row bands, odd sizes peeled), print which rank forms which "
        "operand sums, multiplies which products and adds into which C blocks, and prove C = A·B for the plan "
        "symbolically (P is --gpus, 2 unless given). Exits 1 if the proof fails. Needs no GPU and no MPI.",
    )
    add_input_options(plan)
    plan.add_argument("-n", type=dimension, default=32768, metavar="N",
                      help="matrix size (M = K = N unless -m/-k are given; default 32768)")
    plan.add_argument("-m", type=dimension, default=None, metavar="M", help="rows of A and C")
    plan.add_argument("-k", type=dimension, default=None, metavar="K", help="columns of A, rows of B")
    plan.add_argument("--dtype", choices=("float32", "float64"), default="float64", help="for byte counts")
    plan.add_argument("--format", choices=("text", "json"), default="text")
    add_distribution_options(plan, planning=True)
    plan.set_defaults(handler=plan_command)


def _note_unplanned(program, decomposition: str) -> None:
    """The products no output uses, which breadth-first steps leave out (as transform and inplace
    say of theirs): the header's count had been the plan's alone, without a word."""
    from ..compose import unused_note
    from .steps import algorithm_of

    if decomposition == "bfs" and (note := unused_note(algorithm_of(program), "not planned")):
        print(note, file=sys.stderr)


def plan_command(args) -> int:
    from .api import decomposition_for, local_roles
    from .steps import check_in_range
    from ..lower.plan import verified
    from .check import verify_plan
    from .plan import make_plan

    if args.local is not None:
        raise OptionError("plan lays out the products over the ranks; --local (what each rank multiplies its products "
                         "with) applies to run and bench")
    ranks = args.gpus or 2
    if ranks < 1:
        raise ValueError(f"--gpus must be at least 1, not {ranks}")
    try:
        program = load_input_noting(args)
        note_unused_definitions(args.command, args.file, program)
        verified(program)  # a wrong scheme's located errors, before a plan of it fails its proof
        decomposition = decomposition_for(program, ranks, args.decomposition, args.steps)
        _note_unplanned(program, args.decomposition)
        check_in_range(decomposition, args.dtype)  # as run refuses it (a Kronecker power's coefficients multiply)
        shape = (args.m or args.n, args.k or args.n, args.n)
        plan = make_plan(decomposition, shape, ranks, inputs=args.inputs, output=args.output)
    except (BilinearError, ValueError) as error:
        if args.format != "json" or isinstance(error, OptionError):
            raise
        diagnostics = diagnostics_of(error)  # a JSON reader gets JSON whatever happened, as verify's does
        print(json.dumps({"schema_version": PLAN_SCHEMA_VERSION, "verified": False, "problems": [],
                          "errors": [d.to_json() for d in diagnostics]}, indent=1))
        for diagnostic in diagnostics:
            print(render(diagnostic), file=sys.stderr)
        return 1
    roles = local_roles(program)  # run's default: FILE's own definition is each rank's local product
    check = verify_plan(plan)
    itemsize = 8 if args.dtype == "float64" else 4
    if args.format == "json":
        print(json.dumps(plan_as_data(plan, itemsize, roles) | {
            "verified": check.ok, "problems": list(check.problems), "errors": [], "band_classes": check.band_classes,
            "terms": check.terms}, indent=1))
    else:
        print("\n".join(describe_plan(plan, itemsize, roles)))
        verdict = "C = A·B holds exactly" if check.ok else "FAILS: " + "; ".join(check.problems)
        # (the terms the result must hold, per band class: "tensor terms compared" had read as every term summed)
        print(f"proof: {verdict} ({check.band_classes} band class(es), each compared entry by entry with the "
              f"classical product: {check.terms} terms in all)")
    return 0 if check.ok else 1


def _prepared(args, path, sizes: list[tuple[int, int, int]], levels: int, leaf: str, dtype: str):
    """The distributed product of FILE (``path`` where bench names it) for runs of ``sizes``, built on
    every rank: a refusal any rank meets is said once, and every rank returns (:func:`alike_on_every_rank`)."""
    from .comm import make_comm

    advice = _size_advice(args)
    backend = alike_on_every_rank(lambda: _fitting_backend(args, sizes, dtype, advice), "refused the run")
    comm = make_comm(backend)  # outside the steps: NCCL's set-up is itself collective
    program = _noted_input(args, path)
    product = alike_on_every_rank(lambda: _product(args, program, levels, leaf, dtype, comm),
                                  "could not build its product")
    _check_device(product, sizes, dtype, advice)
    return product


def _product(args, source, levels: int, leaf: str, dtype: str, comm):
    """The distributed product of ``source`` (a file, or a Program read with the input options) over ``comm``."""
    from .api import compile

    return compile(
        source,
        decomposition=args.decomposition,
        steps=args.steps,
        local=_local(args.local, args.command),
        levels=levels,
        leaf=leaf,
        dtype=dtype,
        backend=args.backend,  # resolved as the comm was (make_backend)
        inputs=args.inputs,
        output=args.output,
        comm=comm,
    )


def _local(path: Path | None, command: str):
    """--local's program, read without the reading options (FILE's: where it needs them, the error says
    how to give it one), rank 0 saying which of its definitions it leaves out, as of FILE."""
    from dataclasses import replace

    from ..api import load

    if path is None:
        return None
    try:
        program = load(path)
    except BilinearError as error:
        if not asks_for_reading_option(error):
            raise  # a missing or malformed file: reading options would not help
        note = ("--local is read without the reading options (--from, --shape, --key and --allow-pickle are FILE's): "
                f"write the scheme it should use as a .bl file first (bilinear import {path} ... -o local.bl)")
        raise BilinearError(*(replace(d, notes=(*d.notes, note)) for d in error.diagnostics)) from None
    if world()[0] == 0:
        note_unused_definitions(command, path, program, choosable=False)
    return program


def _size_advice(args) -> str:
    """What a refusal for memory asks to choose smaller: bench has -n alone (it had been told -m and -k too)."""
    return "a smaller -n" if args.command == "bench" else "smaller sizes (-n, -m, -k)"


def _fitting_backend(args, sizes: list[tuple[int, int, int]], dtype: str, advice: str) -> str:
    """--backend's name, once the sizes' arrays are known to fit it: refused before anything is
    lowered or allocated (the ranks of a CPU job share the host's memory; a GPU rank has its device's)."""
    from ..runtime.compiled import make_backend
    from ..runtime.run import check_fits

    backend = make_backend(args.backend)
    for M, K, N in sizes if backend.name == "numpy" else ():  # a GPU rank's, once its plan is known: device_refusal
        check_fits(backend, M, K, N, dtype, ranks=world()[1], advice=advice)
    return backend.name


def _check_device(product, sizes: list[tuple[int, int, int]], dtype: str, advice: str) -> None:
    from .measure import device_refusal

    if why := device_refusal(product, sizes, dtype, advice):
        raise SameOnEveryRank(why)


#: Options of a one-device product that the distributed one does not take (option, attribute, default).
ONE_DEVICE_OPTIONS = (("--alpha", "alpha", 1.0), ("--beta", "beta", 0.0), ("--cutoff", "cutoff", 1),
                      ("--breadth", "breadth", 0), ("--no-fuse", "fuse", True), ("--launch", "launch", "serial"),
                      ("--workspace-limit", "workspace_limit", None), ("--levels-schemes", "levels_schemes", None),
                      ("--moduli", "moduli", None), ("--scaling", "scaling", None), ("--plot", "plot", None),
                      ("--breakdown", "breakdown", False), ("--configs", "configs", None))


def _check_options(args) -> None:
    """Refuse what a distributed run would drop (it had run without them and exited 0)."""
    given = [option for option, name, default in ONE_DEVICE_OPTIONS if getattr(args, name, default) != default]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise OptionError(f"{', '.join(given)} {verb} only to a one-device run; the distributed product takes "
                              "--levels, --leaf, --dtype and --local for what each rank multiplies")


def _check_local_levels(args, levels: int, leaf: str) -> None:
    """Refuse --leaf and --local where compile would (--levels 0), as a usage error: compile's
    ValueError would come only once every rank had read FILE and made its comm, and exit 1."""
    from .api import local_levels_refusal

    if why := local_levels_refusal(levels, leaf, args.local is not None, cli=True):
        raise OptionError(why)


def _check_world(args) -> None:
    from .comm import mpi_module

    mpi_module()  # without mpi4py, say what to install rather than how to start the job
    if (size := world()[1]) != args.gpus:
        raise SameOnEveryRank(f"--gpus {args.gpus} but this job has {size} rank(s): "
                              f"start it with `mpiexec -n {args.gpus} bilinear ...`")


def _guarded(args, body) -> int:
    """Run ``body`` on this rank once every rank has the same options; a failure on any rank ends
    every rank (the others would wait for it)."""

    try:
        same_command(args)
        return body()
    except OptionError:  # from the options alone, so alike on every rank: rank 0 says it as argparse would
        if world()[0] == 0:
            raise
        return 2
    except (SameOnEveryRank, AgreedError) as error:  # alike on every rank: rank 0 says it
        if world()[0] == 0:
            say(f"bilinear: {error}", sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - any failure must end the job, or the other ranks wait for this one
        if isinstance(error, BilinearError):
            message = "\n".join(render(d) for d in error.diagnostics)
        else:
            known = isinstance(error, (RuntimeError, ValueError))
            message = str(error) if known else f"{type(error).__name__}: {error}"
        if world()[1] > 1:
            end_job(f"bilinear: {message}", sys.stderr)
        say(f"bilinear: {message}", sys.stderr)
        return 1
    except BaseException as stopped:  # Ctrl-C or SIGTERM (bilinear.cli's Terminated) on this rank alone
        if isinstance(stopped, (SystemExit, GeneratorExit)) or world()[1] == 1:
            raise
        # finalising MPI (as a normal return does) left the other ranks waiting out BILINEAR_DIST_TIMEOUT
        if isinstance(stopped, KeyboardInterrupt):
            end_job("bilinear: interrupted", sys.stderr, 130)
        # bilinear.cli's Terminated says which signal (SIGTERM, SIGHUP)
        end_job(getattr(stopped, "said", "bilinear: terminated"), sys.stderr, getattr(stopped, "status", 143))


def _noted_input(args, path=None):
    """FILE's program, rank 0 saying what verify notes of it and which of its definitions the run leaves
    out, as a one-device run does."""
    program, notes = read_on_every_rank(lambda: load_input(args, path, noted=True), path or args.file)
    if world()[0] == 0:
        for note in notes:
            print(render(note), file=sys.stderr)
        note_unused_definitions(args.command, path or args.file, program)
    return program


def run_command(args) -> int:
    """``bilinear run FILE -n N --gpus P``: one checked, timed product over every rank."""
    from .measure import measure

    def body() -> int:
        _check_options(args)
        _check_local_levels(args, args.levels, args.leaf)
        _check_world(args)
        product = _prepared(args, None, [(args.m or args.n, args.k or args.n, args.n)], args.levels, args.leaf,
                            args.dtype)
        result = measure(
            product, args.m or args.n, args.k or args.n, args.n, args.dtype, repeat=args.repeat, seed=args.seed
        )
        if product.comm.rank == 0:
            print(result.describe())
        return 0 if result.within_bound else 1

    return _guarded(args, body)


def bench_command(args) -> int:
    """``bilinear bench FILE -n N ... --gpus P``: the speed-up table over one GPU's GEMM."""
    from .measure import measure

    def body() -> int:
        if len(args.files) != 1 or len(args.levels) != 1 or len(args.leaf) != 1 or len(args.dtype) != 1:
            raise OptionError(
                "bench --gpus times one scheme, level count, leaf and dtype at a time (several -n are fine)"
            )
        if not args.levels[0].isdigit():
            raise OptionError(f"bench --gpus needs a whole number of local levels, not {args.levels[0]!r}")
        _check_options(args)
        _check_local_levels(args, int(args.levels[0]), args.leaf[0])
        _check_world(args)
        from ..bench_outputs import STDOUT, check_results_target, write_results
        from ..output import json_ready

        if args.json is not None:  # rank 0 writes it: refuse before the timings, not after, and on every rank (rank
            # 0 alone had ended the job while the others waited: MPICH killed them, exit 9)
            alike_on_every_rank(lambda: world()[0] == 0 and check_results_target(args.json, "--json"), "refused --json")
        product = _prepared(args, args.files[0], [(n, n, n) for n in args.n], int(args.levels[0]), args.leaf[0],
                            args.dtype[0])
        results, passed = [], True
        lines = sys.stderr if args.json == STDOUT else sys.stdout  # --json -: the JSON alone is stdout
        sizes = list(dict.fromkeys(args.n))  # -n 16 16: two rows that could not be told apart
        if len(sizes) < len(args.n) and product.comm.rank == 0:
            repeated = dict.fromkeys(n for i, n in enumerate(args.n) if n in args.n[:i])
            print(f"listed more than once, timed once: {', '.join(f'n={n}' for n in repeated)}", file=lines, flush=True)
        for n in sizes:
            result = measure(product, n, n, n, args.dtype[0], repeat=args.repeat)
            results.append(result.as_dict() | {"configurations": len(sizes)})  # fewer rows: a run cut short
            passed = passed and result.within_bound  # as run --gpus judges (a bound of 8e17 had passed)
            # each row as it exists, as bench on one GPU writes them: a run cut short keeps its rows
            if product.comm.rank == 0 and args.json and args.json != STDOUT:
                write_results(args.json, json.dumps(json_ready(results), indent=1))
            if product.comm.rank == 0:
                print(result.describe(), file=lines, flush=True)
        if product.comm.rank == 0 and args.json == STDOUT:
            write_results(args.json, json.dumps(json_ready(results), indent=1))
        return 0 if passed else 1

    return _guarded(args, body)
