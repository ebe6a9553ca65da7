"""What a schedule's temporaries require of the block shapes: the report's "requires" lines."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import operand_of

KIND_WORDS = {"A": "an A-side value", "B": "a B-side value", "C": "a C value (products)"}
# The dimensions of one block of each operand: A's are (M/m)×(K/k), and so on.
BLOCK_DIMS = {"A": ("M", "K"), "B": ("K", "N"), "C": ("M", "N")}


@dataclass(frozen=True)
class ShapeCondition:
    """Two block dimensions that must be equal (``have`` = ``need``, each one of M, K, N divided
    by the algorithm's m, k, n) because temporary ``temp``, shaped like ``like`` blocks, holds a
    value of ``kind`` (with ``read``: is read, holding zero, into a buffer shaped like ``kind`` blocks):
    the report's "requires" line, which the runtimes check before a call."""

    have: str
    need: str
    temp: str
    like: str
    kind: str
    read: bool = False

    def __str__(self) -> str:
        return self.described()

    def described(self, shape=None) -> str:
        """"K/k = N/n (...)", or with ``shape``'s block counts for m, k, n ("K/2 = N/2 (...)"): where
        m, k, n also name a call's own sizes (the C library's header), letters would be read as those."""
        counts = {"M": "m", "K": "k", "N": "n"} if shape is None else {"M": shape.m, "K": shape.k, "N": shape.n}
        buffer = f"{self.temp}" if operand_of(self.temp) else f"temporary {self.temp}, shaped like {self.like},"
        what = f"is read into a buffer shaped like {self.kind}" if self.read else f"holds {KIND_WORDS[self.kind]}"
        return f"{self.have}/{counts[self.have]} = {self.need}/{counts[self.need]} ({buffer} {what})"

    def holds(self, blocks: tuple[int, int, int]) -> bool:
        """Whether blocks of ``blocks`` = (M/m, K/k, N/n) rows and columns meet it."""
        return blocks["MKN".index(self.have)] == blocks["MKN".index(self.need)]
