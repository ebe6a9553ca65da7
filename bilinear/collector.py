"""Python's cyclic garbage collector, paused while bilinear builds or walks a large scheme.

The IR is acyclic: frozen dataclasses of tuples, strings and Fractions, freed by their reference counts
alone.  The collector finds nothing in it, yet each of its full passes walks every object alive, and
building a scheme of 10^4 products allocates enough to set off dozens of them, each over all that came
before.  Measured on <27,27,27;12167>: parsing its 3.8 MB of equations 34 s with the collector, 16 s
without; building it as grey333's product with <9,9,9;529>, 2.4 s and 1.1 s.  Compiling AlphaTensor's
<11,11,11;896>, 19.1 s, and 12.2 s with it paused while the scheme is lowered and its library written.
(Verifying gains nothing measurable: left as it was.)"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def cycles_uncollected():
    """The collector off while the block (or the function it decorates) runs, then as the caller had it:
    a caller that turned it off keeps it off.  The cycles made meanwhile (a caught exception's traceback)
    are collected once it is back on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
