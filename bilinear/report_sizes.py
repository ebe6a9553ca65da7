"""Sizes as the reports say them: the part of an n×n×n product a level splits, bytes of blocks at a
level, byte and flop counts in units that show them, and durations as notes estimate them."""

from __future__ import annotations

from .ir import Shape

_ITEMSIZE = {"float32": 4, "float64": 8}


def split_part(shape: Shape, n: int) -> list[int]:
    """The M×K×N part of an n×n×n product one level of ``shape`` splits (the rest is peeled): what
    the figures at n count."""
    return [n - n % shape.m, n - n % shape.k, n - n % shape.n]


def at_n(n: int, part: list[int]) -> str:
    """``n=8192``, and the part a level splits where the shape does not divide n."""
    return f"n={n}" if part == [n, n, n] else f"n={n} (its {'×'.join(map(str, part))} part; the rest is peeled)"


def level_bytes(shape: Shape, blocks: dict[str, int], n: int = 8192, dtype: str = "float64") -> int:
    """Bytes of ``blocks`` (a count of A, B and C blocks) at one level of an n×n×n product."""
    size = {"A": (n // shape.m) * (n // shape.k), "B": (n // shape.k) * (n // shape.n), "C": (n // shape.m) * (n // shape.n)}
    return sum(count * size[like] * _ITEMSIZE[dtype] for like, count in blocks.items())


def bytes_text(count: int) -> str:  # 2.62 GiB, 512 bytes
    for unit, size in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.2f} {unit}"
    return f"{count} bytes"


def flops_text(count: float) -> str:  # 30.79 TFLOP, 585.16 MFLOP, 0 FLOP
    for unit, size in (("EFLOP", 1e18), ("PFLOP", 1e15), ("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6), ("kFLOP", 1e3)):
        if count >= size:
            return f"{count / size:.2f} {unit}"
    return f"{count:g} FLOP"


def duration_text(seconds: float) -> str:
    """45 s, 14 min, 3.2 h, 12 days."""
    if seconds < 119.5:  # what rounds to 120 s is said as 2 min
        return f"{seconds:.0f} s"
    if seconds < 7170:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h" if seconds < 3 * 86400 else f"{seconds / 86400:.0f} days"
