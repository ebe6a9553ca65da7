"""Definitions as written, before name resolution: what the parser hands to :mod:`bilinear.frontend.check`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ..ir import Output, Product, Shape, Span, Stage, Sum, Temporary


@dataclass(frozen=True)
class Use:
    """A ``use "file.bl"`` line."""

    path: str
    span: Span


@dataclass(frozen=True)
class RawAlgorithm:
    """An algorithm as written, before names are resolved (see check.py)."""

    name: str
    shape: Shape
    rank: int | None
    sums: tuple[Sum, ...]
    products: tuple[Product, ...]
    outputs: tuple[Output, ...]
    span: Span


@dataclass(frozen=True)
class RawTable:
    """U, V, W sections as written: (letter, rows, span); rows are (numbers, span)."""

    name: str
    shape: Shape
    rank: int | None
    sections: tuple[tuple[str, tuple, Span], ...]
    span: Span


@dataclass(frozen=True)
class RawSchedule:
    name: str
    algorithm: str
    properties: tuple[tuple[str, Span], ...]
    temporaries: tuple[Temporary, ...]
    stages: tuple[Stage, ...]
    span: Span


RawDefinition = Union[RawAlgorithm, RawTable, RawSchedule]
