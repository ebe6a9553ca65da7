"""Names of blocks and shapes: source spans, ``A12``/``A[10,3]``, and ⟨m,k,n⟩."""

from __future__ import annotations

import re
from dataclasses import dataclass

OPERANDS = ("A", "B", "C")


@dataclass(frozen=True)
class Span:
    """A region of a source file: 1-based line and column, end exclusive."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    @classmethod
    def whole_file(cls, path) -> Span:
        """Where a diagnostic about a whole file points: its first character.  A reader that knows no
        line for a product or a block (a flattened table, JSON) places it here."""
        return cls(str(path), 1, 1, 1, 2)

    @property
    def is_whole_file(self) -> bool:
        return (self.line, self.column, self.end_line, self.end_column) == (1, 1, 1, 2)


_BLOCK_SHORT = re.compile(r"^([ABC])([1-9])([1-9])$")
_BLOCK_LONG = re.compile(r"^([ABC])\[(\d+),(\d+)\]$")


def block_name(operand: str, row: int, col: int) -> str:
    """The canonical name of a block: ``A12``, or ``A[10,3]`` past 9."""
    if row <= 9 and col <= 9:
        return f"{operand}{row}{col}"
    return f"{operand}[{row},{col}]"


def parse_block(name: str) -> tuple[str, int, int] | None:
    """``(operand, row, col)`` for a block name, ``None`` for any other name."""
    match = _BLOCK_SHORT.match(name) or _BLOCK_LONG.match(name)
    if not match:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3))


#: Words of the .bl language a definition may not be named (its grammar reads them as keywords).
KEYWORDS = frozenset({"algorithm", "table", "schedule", "for", "stage", "temp", "use"})

#: The longest name a .bl file may hold: the reader refuses a longer one, so the tool writes none (the checks
#: quote a name in every message about it, and a 5000-character one had made each message as long).
LONGEST_NAME = 255

#: A .bl name, which is also a C identifier (the grammar's NAME); use it with ``fullmatch``.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def definition_name_problem(name: object) -> str | None:
    """Why ``name`` may not name an algorithm or schedule the tool writes (``--name``, ``name=``), or None:
    an ASCII letter or _, then letters, digits or _; not a keyword or a block name.  The grammar reads
    those after ``algorithm`` or ``schedule`` (a file may use them), but everywhere else they read as
    the keyword or the block, so a written file does not choose them; nor one the reader would refuse
    as too long."""
    if isinstance(name, str) and len(name) > LONGEST_NAME:
        return f"must have at most {LONGEST_NAME} characters (a .bl name's most), not {len(name)}"
    if isinstance(name, str) and IDENTIFIER.fullmatch(name) and name not in KEYWORDS \
            and parse_block(name) is None:
        return None
    return (f"must be an identifier in .bl (an ASCII letter or _, then letters, digits or _; not a keyword or a block "
            f"name like A11), not {name!r}")


def check_definition_name(name: object) -> None:
    """Refuse a ``name=`` argument (None: the default name) that cannot name a definition in .bl."""
    if name is not None and (problem := definition_name_problem(name)):
        raise ValueError(f"name {problem}")


def derived_name(name: str) -> str:
    """A default name made of others' (``strassen_x_winograd``, ``grey234_inplace``), where a .bl file
    can hold it.

    Raises:
        ValueError: for one past :data:`LONGEST_NAME`, saying to give a name.
    """
    if len(name) > LONGEST_NAME:
        raise ValueError(f"the default name, {name[:40]}…, would have {len(name)} characters, more than the "
                         f"{LONGEST_NAME} a .bl name may have: give one (--name, name=)")
    return name


def operand_of(name: str) -> str | None:
    """``'A'``, ``'B'`` or ``'C'`` for a block name, else ``None``."""
    parsed = parse_block(name)
    return parsed[0] if parsed else None


@dataclass(frozen=True)
class Shape:
    """⟨m,k,n⟩: A is split into m×k blocks, B into k×n, C into m×n."""

    m: int
    k: int
    n: int

    def __post_init__(self) -> None:
        if min(self.m, self.k, self.n) < 1:
            raise ValueError(f"shape ⟨{self.m},{self.k},{self.n}⟩ has a dimension below 1")
        if problem := shape_too_large(self.m, self.k, self.n):
            raise ValueError(problem)

    def grid(self, operand: str) -> tuple[int, int]:
        """Rows and columns of blocks of one operand."""
        return {"A": (self.m, self.k), "B": (self.k, self.n), "C": (self.m, self.n)}[operand]

    def blocks(self, operand: str) -> tuple[str, ...]:
        """The operand's block names in row-major order."""
        rows, cols = self.grid(operand)
        return tuple(block_name(operand, i, j) for i in range(1, rows + 1) for j in range(1, cols + 1))

    def contains(self, name: str) -> bool:
        parsed = parse_block(name)
        if parsed is None:
            return False
        operand, row, col = parsed
        rows, cols = self.grid(operand)
        return 1 <= row <= rows and 1 <= col <= cols

    def __str__(self) -> str:
        return f"⟨{self.m},{self.k},{self.n}⟩"

    def signature(self, rank: int) -> str:
        """``<m,k,n;R>``, as a header writes it, for a scheme of ``rank`` products."""
        return f"<{self.m},{self.k},{self.n};{rank}>"


# The largest m·k·n (classical products) accepted: ⟨64,64,64⟩.  Every check is at least linear
# in it, and a ⟨1000,1000,1000⟩ header of three lines would otherwise run for minutes.
MAX_SHAPE_VOLUME = 1 << 18


def shape_too_large(m: int, k: int, n: int) -> str | None:
    """Why ⟨m,k,n⟩ is too large to check, or None."""
    if m * k * n > MAX_SHAPE_VOLUME:
        return (
            f"shape ⟨{m},{k},{n}⟩ is too large: {m * k * n} classical products, and at most "
            f"{MAX_SHAPE_VOLUME} (⟨64,64,64⟩) are supported"
        )
    return None
