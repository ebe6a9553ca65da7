"""Where the matrices live: replicated, on rank 0, or in 2D blocks over a process grid.

The 2D block layout is what a ScaLAPACK or cuBLASMp user holds: the ranks
form a ``rows × cols`` grid (the most square one), rank r sits at
``(r // cols, r % cols)``, and holds the block of rows
``[p·M/rows, (p+1)·M/rows)`` and columns ``[q·N/cols, (q+1)·N/cols)`` of
each matrix (integer division, so blocks differ by at most one row or
column).  Each rank passes its own block, C-contiguous.

A product over 2D blocks gathers A and B (each owner broadcasts its block)
and sends each rank's C block back by one reduction per owner, so during
the call every rank holds A, B and a partial C: the workspace that
``DistributedProduct.workspace_bytes`` reports.
"""

from __future__ import annotations

import math
from typing import Any

from .comm import Comm, DistributedError


def process_grid(ranks: int) -> tuple[int, int]:
    """The most square ``rows × cols = ranks`` grid (rows ≤ cols)."""
    rows = max(a for a in range(1, math.isqrt(ranks) + 1) if ranks % a == 0)
    return rows, ranks // rows


def block_of(rank: int, ranks: int, rows: int, cols: int) -> tuple[slice, slice]:
    """Rank ``rank``'s block of a ``rows × cols`` matrix in the 2D block layout."""
    grid_rows, grid_cols = process_grid(ranks)
    p, q = divmod(rank, grid_cols)
    return (
        slice(p * rows // grid_rows, (p + 1) * rows // grid_rows),
        slice(q * cols // grid_cols, (q + 1) * cols // grid_cols),
    )


def block_shape(rank: int, ranks: int, rows: int, cols: int) -> tuple[int, int]:
    r, c = block_of(rank, ranks, rows, cols)
    return r.stop - r.start, c.stop - c.start


def global_shape(shapes: list[tuple[int, int]], ranks: int) -> tuple[int, int]:
    """The matrix whose 2D blocks have these shapes (rank order); raises if they do not fit the layout."""
    grid_rows, grid_cols = process_grid(ranks)
    rows = sum(shapes[p * grid_cols][0] for p in range(grid_rows))
    cols = sum(shapes[q][1] for q in range(grid_cols))
    expected = [block_shape(r, ranks, rows, cols) for r in range(ranks)]
    if list(map(tuple, shapes)) != expected:
        raise DistributedError(
            f"the ranks' blocks {shapes} are not the {grid_rows}x{grid_cols} 2D block layout of a {rows}x{cols} "
            f"matrix, which has blocks {expected}"
        )
    return rows, cols


def gather(comm: Comm, mine: Any, rows: int, cols: int, dtype: str) -> Any:
    """The whole matrix on every rank, from each rank's block (one broadcast per owner)."""
    xp = comm.xp
    whole = xp.empty((rows, cols), dtype=dtype)
    for owner in range(comm.size):
        r, c = block_of(owner, comm.size, rows, cols)
        piece = (
            xp.ascontiguousarray(mine)
            if owner == comm.rank
            else xp.empty((r.stop - r.start, c.stop - c.start), dtype=dtype)
        )
        comm.bcast(piece, owner)
        whole[r, c] = piece
    return whole


def scatter_sum(comm: Comm, partial: Any, out: Any) -> None:
    """Each rank's ``out`` block becomes the sum over ranks of that block of ``partial`` (one reduction per owner)."""
    xp = comm.xp
    rows, cols = partial.shape
    for owner in range(comm.size):
        r, c = block_of(owner, comm.size, rows, cols)
        piece = xp.ascontiguousarray(partial[r, c])
        comm.reduce(piece, owner)
        if owner == comm.rank:
            out[...] = piece
