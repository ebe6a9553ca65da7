"""The Python API: load, verify and compile schemes."""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from .diagnostics import BilinearError, Diagnostic
from .frontend.importers import AlternativeBasis
from .ir import Algorithm, Program, Schedule
from .ir.algorithm import check_built_types
from .lower.plan import DTYPES, LEAVES, Lowered, Options, lower, verification
from .lower.options import check_ozaki_options, plain_dtype
from .reading import as_path, read, true_or_false  # noqa: F401 - true_or_false: matmul_api's, from here
from .verify import Report
from .verify.ring_modular import GIVEN_WITH_MOD, ModularScheme
from .verify.rings import check_inexact


def _program(path: Path, algorithm: Algorithm) -> Program:
    return Program(str(path), (algorithm,), (), (algorithm.name,))


def as_program(source: Program | Algorithm | Schedule) -> Program:
    """A loaded program, or one algorithm (``load(...).main`` of a scheme, optimize's result) as a
    program of its own; a schedule alone is refused: it needs its algorithm."""
    if isinstance(source, Schedule):
        raise ValueError(f"schedule {source.name} needs its algorithm: pass the program it came from "
                         "(bilinear.load(path)), not its .main")
    if isinstance(source, Algorithm):
        return _program(Path(source.span.path if source.span else "<algorithm>"), _checked(source))
    return source


def _checked(algorithm: Algorithm) -> Algorithm:
    """An algorithm built in Python checked as its file would have been (a product named in C but
    defined nowhere had verified; swapped factors ended in a KeyError)."""
    from .frontend.check import build_algorithm
    from .frontend.raw import RawAlgorithm

    check_built_types(algorithm)
    fields = (algorithm.name, algorithm.shape, algorithm.declared_rank, algorithm.sums, algorithm.products,
              algorithm.outputs)
    build_algorithm(RawAlgorithm(*fields, algorithm.span))  # raises what it finds
    return algorithm


def _no_reading_options(source: object, **options) -> None:
    """Refuse options for reading a file given with something already read (they were ignored)."""
    given = [name for name, value in options.items() if value not in (None, False)]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ValueError(f"{' and '.join(given)} {verb} to reading a file; a loaded {type(source).__name__} is read already")


def program_of(source: str | Path | Program | Algorithm, **reading) -> Program:
    """``source`` as compile, lower_program and inplace take it: a file or shipped name read with :func:`load`'s
    ``reading`` options (``key=`` of an archive, ...), or a loaded Program or one Algorithm, which they would not
    change (refused)."""
    if isinstance(source, (Program, Algorithm, Schedule)):
        _no_reading_options(source, **reading)
        return as_program(source)
    return load(source, **reading)


def load(
    path: str | Path,
    format: str | None = None,
    shape: str | None = None,
    *,
    key: str | None = None,
    allow_pickle: bool = False,
    modulus: int | None = None,
) -> Program:
    """Load a .bl file (with what it uses) or an exact catalogue scheme.

    Args:
        path: the file, or a shipped scheme's name (``"strassen"``, ``"msmes"``)
            where no file of that name is in the working folder.
        format: ``"bl"`` or a catalogue format such as ``"fast-matmul"``;
            detected from the file when omitted.
        shape: ``"m,k,n"`` for catalogue files whose shape cannot be inferred.
        key: which scheme of an AlphaTensor archive, e.g. ``"3,3,3"``.
        allow_pickle: let AlphaTensor's pickled entries load (runs code
            stored in the file; only for files you trust).
        modulus: p when the scheme is claimed only modulo p and its file
            name does not say so (read as a ModularScheme).

    Raises:
        ValueError: ``path`` is not a path (None, a number, ...).
        BilinearError: with located diagnostics when the file is malformed,
            and for approximate schemes and schemes valid only modulo p,
            which are not algorithms that can be compiled; :func:`verify`
            reports on those.
    """
    return load_noted(path, format, shape, key=key, allow_pickle=allow_pickle, modulus=modulus)[0]


def load_noted(path: str | Path, format: str | None = None, shape: str | None = None, *, key: str | None = None,
               allow_pickle: bool = False, modulus: int | None = None) -> tuple[Program, tuple[Diagnostic, ...]]:
    """:func:`load`'s program, and the notes :func:`verify` gives it: what the file claims beyond
    an algorithm over Q (an alternative basis; a scheme claimed modulo p that holds over Q), so
    that ``compile``'s report says what ``verify``'s says."""
    path = as_path(path)
    loaded = read(path, format, shape, key, allow_pickle, modulus)
    if isinstance(loaded, Program):  # a shipped definition found by its name is the one named
        return (loaded.narrowed(path.definition) if getattr(path, "definition", None) else loaded), ()
    notes = ()
    if isinstance(loaded, AlternativeBasis):
        notes = (Diagnostic(loaded.note, loaded.algorithm.span, severity="note"),)
        loaded = loaded.algorithm
    if isinstance(loaded, ModularScheme):
        check = check_inexact(loaded)
        why = f" ({loaded.reason})" if loaded.reason else ""  # (the Kauers and Mathematica readers give none)
        if check.ok:  # claimed modulo p (by --mod or its name), but it holds over Q: exact
            notes = (Diagnostic(f"{loaded.name} is claimed modulo {loaded.modulus}{why} and holds over Q (and so "
                                f"modulo {loaded.modulus})", loaded.span, severity="note"),)
            loaded = loaded.algorithm
        elif check.modular_errors:  # not even modulo p (a denominator p divides): "valid only modulo p" was false
            first = check.modular_errors[0]
            given = loaded.reason.startswith(GIVEN_WITH_MOD)
            if check.exact_over_q and not given:  # the file's claim (its name's): the scheme itself is exact
                notes = (Diagnostic(f"{loaded.name} is claimed modulo {loaded.modulus}{why}, where it has "
                                    f"no value ({first.message}); it holds over Q, and is read as the exact algorithm "
                                    "it is", loaded.span, severity="note"),)
                loaded = loaded.algorithm
            else:
                hint = ("it holds over Q: without --mod it is read as the exact algorithm it is",) if check.exact_over_q else ()
                raise BilinearError(Diagnostic(
                    f"{loaded.name} does not hold modulo {loaded.modulus}: {first.message}", first.span or loaded.span,
                    notes=(*hint, "`bilinear verify` with the same options lists every problem")))
    if not isinstance(loaded, Algorithm):
        raise BilinearError(Diagnostic(f"{loaded.not_exact_because}, so it cannot be loaded as an exact algorithm or "
                                       "compiled", loaded.span,
                                       notes=("`bilinear verify FILE` (Python: bilinear.verify) proves what it does hold",)))
    return _program(path, loaded), notes


def with_notes(report: Report, notes: tuple[Diagnostic, ...]) -> Report:
    """``report`` with ``notes`` first among its one entry's warnings."""
    if not notes:
        return report
    (entry,) = report.entries
    return replace(report, entries=(replace(entry, warnings=(*notes, *entry.warnings)),))


def verify(
    path_or_program: str | Path | Program | Algorithm,
    format: str | None = None,
    shape: str | None = None,
    *,
    key: str | None = None,
    allow_pickle: bool = False,
    modulus: int | None = None,
) -> Report:
    """Verify every definition of a file (or a loaded program, or one algorithm); see :class:`Report`.

    Catalogue schemes that are exact only in a limit or modulo p get an
    ``ApproximateReport`` or ``ModularReport`` entry, which says what holds
    and is never ``ok`` unless the scheme is exact over Q.  The options are
    those of :func:`load`.  Their classes, for ``isinstance``, are imported as
    ``from bilinear.verify.rings import ApproximateReport, ModularReport``
    (``bilinear.verify`` is this function, not the package, as an attribute).
    """
    if isinstance(path_or_program, (Program, Algorithm, Schedule)):
        _no_reading_options(path_or_program, format=format, shape=shape, key=key, allow_pickle=allow_pickle,
                            modulus=modulus)
        return verification(as_program(path_or_program))
    path = as_path(path_or_program)
    loaded = read(path, format, shape, key, allow_pickle, modulus)
    if isinstance(loaded, Program):
        return verification(loaded)
    if isinstance(loaded, Algorithm):
        return verification(_program(path, loaded))
    if isinstance(loaded, AlternativeBasis):
        note = Diagnostic(loaded.note, loaded.algorithm.span, severity="note")
        return with_notes(verification(_program(path, loaded.algorithm)), (note,))
    return Report(str(path), (check_inexact(loaded),))


def lower_program(
    source: str | Path | Program | Algorithm,
    *,
    dtype: str = "float64",
    levels: int = 1,
    leaf: str = "cublas",
    fuse: bool = True,
    cutoff: int = 1,
    per_level: tuple[str, ...] | None = None,
    breadth: int = 0,
    workspace_limit: int | None = None,
    launch: str = "serial",
    moduli: int | None = None,
    scaling: str = "max",
    format: str | None = None,
    shape: str | None = None,
    key: str | None = None,
    allow_pickle: bool = False,
    modulus: int | None = None,
) -> Lowered:
    """Verify and lower a program (or a file) to its launch plan; see :func:`compile`."""
    dtype, levels, per_level = _plain_options(dtype, levels, per_level)
    check_ozaki_options(leaf, moduli, scaling)
    program = program_of(source, format=format, shape=shape, key=key, allow_pickle=allow_pickle, modulus=modulus)
    options = Options(dtype=dtype, levels=levels, leaf=leaf, fuse=fuse, cutoff=cutoff, breadth=breadth,
                      workspace_limit=workspace_limit, launch=launch, moduli=moduli, scaling=scaling)
    return lower(program, options, per_level)


def _plain_options(dtype, levels, per_level) -> tuple:
    """A NumPy dtype as its name (:func:`plain_dtype`), a NumPy integer as an int, per_level as a
    tuple: the values Options holds.  Anything else is left for Options to refuse."""
    dtype = plain_dtype(dtype)
    if isinstance(levels, np.integer):
        levels = int(levels)
    if per_level is not None:
        names = tuple(per_level) if isinstance(per_level, Iterable) and not isinstance(per_level, (str, Mapping)) else None
        # an iterator read once, here; () had been taken as not given
        if not names or not all(isinstance(name, str) for name in names):
            raise ValueError(f"per_level takes one definition name per level, such as ('msmes', 'strassen'), not "
                             f"{reprlib.repr(per_level)}")
        per_level = names
    return dtype, levels, per_level


def _check_automatic(leaf: str, *, breadth: int, per_level, workspace_limit: int | None, launch: str,
                     moduli: int | None, scaling: str, fuse: bool, cutoff: int) -> None:
    """Refuse, for levels="auto", the options that fix how many levels run (breadth, per_level,
    workspace_limit, which it would drop) and bad values of the ones it keeps, before any call."""
    given = [name for name, value, default in (("breadth", breadth, 0), ("per_level", per_level, None),
                                                ("workspace_limit", workspace_limit, None)) if value != default]
    if given:
        raise ValueError(f"levels='auto' chooses the levels per shape, so {' and '.join(given)} cannot be given; "
                         "give a number of levels to use them")
    if launch == "batched":  # it batches breadth-first leaves, and "auto" runs none
        raise ValueError("levels='auto' runs no breadth-first levels, so launch='batched' has nothing to batch; use "
                         "'serial' or 'streams'")
    check_ozaki_options(leaf, moduli, scaling)  # "auto" chooses between cublas and fused leaves: neither takes them
    kept = "cublas" if leaf == "auto" else leaf
    Options(levels=1, leaf=kept, launch=launch, moduli=moduli, scaling=scaling, fuse=fuse, cutoff=cutoff)


def compile(
    source: str | Path | Program | Algorithm,
    *,
    dtype: str = "float64",
    levels: int | str = 1,
    leaf: str = "cublas",
    backend: str | None = None,
    fuse: bool = True,
    cutoff: int = 1,
    per_level: tuple[str, ...] | None = None,
    breadth: int = 0,
    workspace_limit: int | None = None,
    launch: str = "serial",
    moduli: int | None = None,
    scaling: str = "max",
    format: str | None = None,
    shape: str | None = None,
    key: str | None = None,
    allow_pickle: bool = False,
    modulus: int | None = None,
):
    """Verify, lower and load a scheme; returns a callable ``f(A, B, out=None, alpha=1, beta=0)``.

    Args:
        source: a .bl path, a shipped scheme's name (``"msmes"``), a loaded
            :class:`~bilinear.ir.Program` or one Algorithm (optimize's result); its last
            definition (an algorithm or a schedule) is compiled.
        dtype: ``"float32"`` or ``"float64"``.
        levels: levels of recursion (0 runs the leaf alone), or ``"auto"``: the
            performance model picks levels (and the leaf, with ``leaf="auto"``)
            for each shape from ceilings measured on this device; ``breadth``,
            ``per_level`` and ``workspace_limit`` fix levels, so "auto" refuses them.
        leaf: ``"cublas"`` (library GEMMs on block views), ``"fused"`` (the
            generated product kernel, which forms operand sums and adds into
            several targets), ``"ozaki"`` (FP64 products on the INT8 tensor
            cores, see ``moduli``), or ``"auto"`` with ``levels="auto"``.
        backend: ``"cupy"``, ``"numpy"``, or None for CuPy when a GPU is there.
        fuse: fuse consecutive element-wise stages into one kernel.
        cutoff: stop recursing where a block would be smaller than this.
        per_level: one definition name per level, outermost first, to use a
            different algorithm or schedule at each level.
        breadth: how many of the innermost levels run breadth-first: each
            operand is split into every product's operand sum in one pass, the
            leaf GEMMs run from workspace, and one pass merges them into C.
            A and B are never written.
        workspace_limit: bytes of workspace a call may use; a call whose
            breadth-first workspace would pass it runs fewer levels
            breadth-first (the rest depth-first), and where even the
            depth-first one would, its ozaki leaves run in tiles of C
            that fit. None: no limit.
        launch: how leaf products are issued: ``"serial"``, ``"streams"``
            (a stage's independent GEMMs, or all breadth-first leaves, on
            concurrent streams) or ``"batched"`` (breadth-first leaves as one
            strided-batched GEMM).
        moduli: with ``leaf="ozaki"``, the number of moduli of the INT8
            emulation (None: enough for FP64's 53 bits, or FP32's 24). Fewer
            keep fewer bits, and so the error grows (Strassen, 30x30 normal data:
            2 moduli 6e-2, 8 moduli 5e-9); a call is refused only where they
            keep none at the leaves' inner dimension.
        scaling: with ``leaf="ozaki"``, rows of A and columns of B scaled to
            integers by their largest magnitude (``"max"``, the documented
            error bound) or their 2-norm (``"norm"``: about two bits more at
            k = 16384 on random data with the same moduli).
        format, shape, key, allow_pickle, modulus: how a file is read, as
            :func:`load` takes them (``key="3,3,3"`` picks a scheme of an
            AlphaTensor archive); refused with a loaded program.

    Raises:
        BilinearError: the scheme does not verify, or ``per_level`` names a definition the program
            does not have, or as many definitions as there are not levels.
        ValueError: bad options.
    """
    from .runtime.auto import AutoProduct
    from .runtime.compiled import CompiledProduct, make_backend

    dtype, levels, per_level = _plain_options(dtype, levels, per_level)
    if not isinstance(dtype, str) or dtype not in DTYPES:  # before the scheme is read: a bad option says so at once
        raise ValueError(f"dtype must be float32 or float64, not {reprlib.repr(dtype)}")
    if leaf not in (*LEAVES, "auto"):
        raise ValueError(f"leaf must be one of {', '.join(LEAVES)} or auto, not {leaf!r}")
    program = program_of(source, format=format, shape=shape, key=key, allow_pickle=allow_pickle, modulus=modulus)
    chosen_backend = make_backend(backend)
    if isinstance(levels, str) and levels == "auto":
        _check_automatic(leaf, breadth=breadth, per_level=per_level, workspace_limit=workspace_limit, launch=launch,
                         moduli=moduli, scaling=scaling, fuse=fuse, cutoff=cutoff)
        leaves = ("cublas", "fused") if leaf == "auto" else (leaf,)

        def lowered_for(level_count: int, leaf_kind: str) -> Lowered:
            return lower_program(program, dtype=dtype, levels=level_count, leaf=leaf_kind, fuse=fuse, cutoff=cutoff,
                                 launch=launch, moduli=moduli, scaling=scaling)

        name = lowered_for(0, leaves[0]).name  # proves the scheme now, not at the first call (levels are chosen per shape)
        automatic = AutoProduct(lowered_for, chosen_backend, dtype, leaves, name=name)
        automatic.one_level  # what every call needs: a leaf kind none lowers is refused here, not at each call
        return automatic
    if not isinstance(levels, int) or isinstance(levels, bool):
        raise ValueError(f"levels must be a whole number or 'auto', not {levels!r}")  # noqa: TRY004 - documented as ValueError
    lowered = lower_program(program, dtype=dtype, levels=levels, leaf=leaf, fuse=fuse, cutoff=cutoff, per_level=per_level,
                            breadth=breadth, workspace_limit=workspace_limit, launch=launch, moduli=moduli,
                            scaling=scaling)
    return CompiledProduct(lowered, chosen_backend)
