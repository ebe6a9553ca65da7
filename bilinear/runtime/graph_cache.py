"""Repeated calls of a fast scheme replayed as CUDA graphs: ``bilinear.matmul``'s host time.

A direct call of a breadth-first product spends 1.2-2.3 ms of host time issuing its launches.
At n = 4096 that is most of the GPU's 2.5 ms: on the H100 matmul measured 0.977 of cuBLAS in
float32 with the scheme that, replayed as a graph, measured 1.143 (``benchmarks/head_to_head.py``).

The first call of a key runs the product directly.  The second runs it directly too (so kernels
are compiled and the workspace sized for this shape: a capture then allocates nothing) and then
captures it; later calls replay the graph.  A key is the product, the three arrays' device,
addresses, shapes, strides and dtypes, alpha and beta.  A replay reads whatever those addresses
hold when it runs, which is the arrays of the call that matched the key, so no caller's array is
held.  A graph holds the workspace it writes; graphs whose workspace is no longer their product's
(it ran at another shape since, and allocated anew) are dropped after each direct call, so graphs
keep no memory beyond what the products themselves hold; :func:`drop` forgets a product's graphs
(``bilinear.matmul`` does, when it lets that product's workspace go).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

#: Graphs kept (least recently replayed go first), and keys seen once.
LIMIT = 16
_graphs: OrderedDict[tuple, Any] = OrderedDict()
_seen: OrderedDict[tuple, None] = OrderedDict()
# The caches are changed by every matmul thread: one at a time (a scan for stale graphs met another
# thread's insertion as "OrderedDict mutated during iteration"); only while they change.
_changing = threading.Lock()


def _capture(product: Any, A: Any, B: Any, out: Any, alpha: float, beta: float) -> Any:
    from .graphs import CapturedProduct

    return CapturedProduct(product, A, B, out, alpha, beta, warm=False)


def _key(product: Any, arrays: tuple, alpha: float, beta: float) -> tuple:
    layout = tuple((x.data.device_id, x.data.ptr, x.shape, x.strides, x.dtype.str) for x in arrays)
    return (id(product), layout, float(alpha), float(beta))


def run(product: Any, A: Any, B: Any, out: Any, alpha: float, beta: float,
        capture: Callable[..., Any] = _capture) -> None:
    """``out = alpha·A@B + beta·out`` by ``product``: directly the first two times for these arrays,
    by a replay of its graph from then on."""
    key = _key(product, (A, B, out), alpha, beta)
    with _changing:
        graph = _graphs.get(key)
        replay = graph is not None and graph.holds_current_workspace()
        if replay:
            _graphs.move_to_end(key)
    if replay:  # the calls and captures themselves outside the lock: other threads' products run meanwhile
        graph()
        return
    product(A, B, out=out, alpha=alpha, beta=beta)
    with _changing:
        # A direct call at another shape may have replaced workspace that graphs still hold: let it go now.
        for stale in [k for k, g in _graphs.items() if not g.holds_current_workspace()]:
            del _graphs[stale]
        if graph is None and key not in _seen:
            _remember(_seen, key, None)
            return
        _seen.pop(key, None)
    captured = capture(product, A, B, out, alpha, beta)
    with _changing:
        _remember(_graphs, key, captured)


def _remember(cache: OrderedDict, key: tuple, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > LIMIT:
        cache.popitem(last=False)


def drop(product: Any) -> None:
    """Forget the product's graphs (and the workspace they hold) and the keys seen for it."""
    with _changing:
        for cache in (_graphs, _seen):
            for key in [key for key in cache if key[0] == id(product)]:
                del cache[key]


def forget() -> None:
    """Drop every graph (tests; a changed dispatch table)."""
    with _changing:
        _graphs.clear()
        _seen.clear()
