"""Per-level hybrids from several files: ``--levels-schemes strassen.bl,grey333.bl``.

:func:`bilinear.lower.plan.lower` takes one definition name per level of one
program; this module merges the programs of several files into one, so each
level can run the main definition of its own file.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from pathlib import Path

from .diagnostics import BilinearError, Diagnostic
from .ir import Program, Span
from .frontend.loader import find_scheme


def merge(programs: list[Program]) -> Program:
    """One program holding every definition of ``programs``; a name defined twice must mean one thing."""
    seen: dict[str, object] = {}
    algorithms, schedules = [], []
    for program in programs:
        for definition, into in [(a, algorithms) for a in program.algorithms] + [(s, schedules) for s in program.schedules]:
            known = seen.get(definition.name)
            if known is None:
                seen[definition.name] = definition
                into.append(definition)
            elif not same_definition(known, definition):
                where = [each.span.path if each.span else "another scheme of the hybrid" for each in (known, definition)]
                raise BilinearError(Diagnostic(f"{definition.name} is defined differently in {where[0]} and in {where[1]}"))
    own = tuple(dict.fromkeys(name for program in programs for name in program.own))
    uses = tuple(dict.fromkeys(file for program in programs for file in program.uses))
    return Program(programs[0].path, tuple(algorithms), tuple(schedules), own, uses)


def same_definition(one, other) -> bool:
    """Whether two definitions are one, wherever each was read (their locations aside)."""
    return _unlocated(one) == _unlocated(other)


def _unlocated(value):
    """``value`` with every location dropped, at any depth (products, outputs, stages and statements
    carry their own spans): two files holding one definition are alike."""
    if isinstance(value, Span):
        return None
    if isinstance(value, tuple):
        return tuple(_unlocated(item) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _unlocated(getattr(value, f.name)) for f in fields(value) if f.init and f.compare})
    return value


def hybrid(specification: str, load) -> tuple[Program, tuple[str, ...]]:
    """The merged program and the definition each level runs, outermost first.

    ``specification`` is a comma-separated list of files (or shipped names, as
    ``verify`` accepts them); ``load`` reads one into a Program.
    """
    programs = [load(path) for path in level_files(specification)]
    return merge(programs), tuple(program.main.name for program in programs)


def level_names(specification: str) -> list[str]:
    """The files or shipped names ``--levels-schemes`` gives, outermost level first, as written
    (spaces around the commas dropped)."""
    names = [part.strip() for part in specification.split(",")]
    if not all(names):
        raise ValueError(f"--levels-schemes takes one file or shipped name per level, comma-separated, not {specification!r}")
    return names


def level_files(specification: str) -> list[Path]:
    """The files ``--levels-schemes`` names (shipped names resolved)."""
    return [find_scheme(name) for name in level_names(specification)]
