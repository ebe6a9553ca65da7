"""Which statements of one concurrent stage conflict, found in time that grows with the conflicts.

Assumes: the statements of one stage that is not ``ordered``.
Ensures: :func:`stage_conflicts` lists each conflicting pair once, in the order of a scan over all
pairs (earlier statement first, then the later one), with the statement to blame (the one that
writes) and why.  Two statements conflict when one writes a buffer the other reads (apart from the
block an accumulation adds into), or both write a buffer and not both accumulate into it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Statement


@dataclass(frozen=True)
class Conflict:
    culprit: Statement
    other: Statement
    reason: str


@dataclass(frozen=True)
class _Access:
    """The buffers a statement writes and reads, built once per statement: rebuilding them for
    every pair of a stage made a stage of a few thousand products take minutes."""

    statement: Statement
    writes: frozenset[str]
    reads: frozenset[str]  # apart from the target it accumulates into
    accumulates: bool

    @classmethod
    def of(cls, statement: Statement) -> _Access:
        writes, accumulates = statement.writes(), statement.is_accumulation()
        reads = statement.reads() - writes if accumulates else statement.reads()
        return cls(statement, writes, reads, accumulates)


def stage_conflicts(statements: tuple[Statement, ...] | list[Statement]) -> list[Conflict]:
    accesses = [_Access.of(statement) for statement in statements]
    return [_conflict(accesses[first], accesses[second]) for first, second in _sharing_pairs(accesses)]


def _sharing_pairs(accesses: list[_Access]) -> list[tuple[int, int]]:
    """Index pairs (earlier, later) of the statements that conflict, found through the buffers they
    share: pairs that only read a buffer, or only accumulate into it, are never formed, so every
    pair formed is a conflict."""
    readers: dict[str, list[int]] = {}
    writers: dict[str, list[int]] = {}
    setters: dict[str, list[int]] = {}  # writers that do not accumulate
    for index, access in enumerate(accesses):
        for buffer in access.reads:
            readers.setdefault(buffer, []).append(index)
        for buffer in access.writes:
            writers.setdefault(buffer, []).append(index)
            if not access.accumulates:
                setters.setdefault(buffer, []).append(index)
    pairs = []
    for index, access in enumerate(accesses):
        partners: set[int] = set()
        for buffer in access.writes:
            partners.update(readers.get(buffer, ()))
            # two accumulations into one block commute; a set does not commute with any write
            partners.update((setters if access.accumulates else writers).get(buffer, ()))
        for buffer in access.reads:
            partners.update(writers.get(buffer, ()))
        pairs.extend((index, later) for later in sorted(partners) if later > index)
    return pairs


def _conflict(first: _Access, second: _Access) -> Conflict:
    """Why two statements of one stage that share a buffer cannot run concurrently."""
    for writer, reader in ((first, second), (second, first)):
        overlap = writer.writes & reader.reads
        if overlap:
            return Conflict(writer.statement, reader.statement, f"it writes {', '.join(sorted(overlap))}, which the other reads")
    both = first.writes & second.writes
    return Conflict(second.statement, first.statement, f"both write {', '.join(sorted(both))}")
