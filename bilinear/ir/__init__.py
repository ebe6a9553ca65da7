"""The intermediate representation of algorithms and schedules.

Every node is a frozen dataclass with tuple fields, validated in
``__post_init__`` and changed with :func:`dataclasses.replace`.  Nodes that come
from source text keep a :class:`Span` so diagnostics can point at it.

Blocks are named as in the papers: ``A11`` is row 1, column 1 of A's grid of
blocks (1-based); where an index exceeds 9 the name is ``A[10,3]``.

The parts: :mod:`.names` (spans, block names, shapes), :mod:`.form` (linear
forms), :mod:`.algorithm`, :mod:`.schedule` and :mod:`.program`.  Everything is
imported from ``bilinear.ir`` itself.
"""

from .algorithm import Algorithm, Output, Product, Sum
from .form import Form, format_coefficient, written_coefficient
from .names import MAX_SHAPE_VOLUME, OPERANDS, Shape, Span, block_name, operand_of, parse_block, shape_too_large
from .program import Definition, Program
from .schedule import PROPERTIES, Multiply, Schedule, Stage, Statement, Temporary, Update, net_effect

__all__ = [
    "MAX_SHAPE_VOLUME",
    "OPERANDS",
    "PROPERTIES",
    "Algorithm",
    "Definition",
    "Form",
    "Multiply",
    "Output",
    "Product",
    "Program",
    "Schedule",
    "Shape",
    "Span",
    "Stage",
    "Statement",
    "Sum",
    "Temporary",
    "Update",
    "block_name",
    "format_coefficient",
    "net_effect",
    "written_coefficient",
    "operand_of",
    "parse_block",
    "shape_too_large",
]
