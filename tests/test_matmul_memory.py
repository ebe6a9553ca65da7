"""What ``bilinear.matmul`` keeps on the device after a fast scheme's call (fake products on the CPU;
tests/test_matmul_gpu.py runs the real ones)."""

from __future__ import annotations

import threading

import pytest

from bilinear import matmul_api as api
from bilinear.runtime import graph_cache


class _Leaf:
    budget = None


class _Product:
    """A compiled product as matmul's fast path sees it: a lock, an executor whose leaf takes a
    budget, a call, and a workspace it can let go."""

    def __init__(self, events: list):
        self._calling = threading.RLock()
        self.events = events
        self.executor = self
        self.leaf = _Leaf()

    def leaf_budget(self, room):
        self.leaf.budget = room
        return True

    def __call__(self, A, B, out, alpha, beta):
        self.events.append(("direct", self.leaf.budget))

    def release_workspace(self):
        self.events.append(("released", self.leaf.budget))


@pytest.fixture
def product(monkeypatch):
    events: list = []
    monkeypatch.setattr(api, "_LAST_FAST", [None])
    monkeypatch.setattr(api, "_FAST", {})
    monkeypatch.setattr(graph_cache, "run", lambda product, *args: events.append(("graph cache", product.leaf.budget)))
    monkeypatch.setattr(graph_cache, "drop", lambda product: events.append(("graphs dropped", None)))
    return _Product(events)


def test_all_of_c_at_once_keeps_its_workspace_and_goes_through_the_graph_cache(product):
    for _ in range(3):
        api._run_fast(product, "A", "B", "C", 1.0, 0.0, None)
    assert product.events == [("graph cache", None)] * 3


def test_tiles_of_c_give_the_workspace_back_after_each_call(product):
    """In tiles of C the ozaki leaf takes what is free on the device; kept, it left the caller nothing
    (on the H100, after matmul at FP64 24576, allocating 4.5 GiB failed with 80 GB in use)."""
    budget = 3 << 30
    for _ in range(3):
        api._run_fast(product, "A", "B", "C", 1.0, 0.0, budget)
    assert product.events == [("graphs dropped", None), ("direct", budget), ("released", budget)] * 3


def test_a_repeated_call_in_tiles_takes_what_is_free_then(product, monkeypatch):
    """Its workspace went back to the pool, where the caller may have taken it since: a repeated call
    sizes its tiles anew, or gives way to cuBLAS where not even a tile fits (with its first call's
    budget it ran out of memory)."""
    free = [(True, 2 << 30), (True, None), (False, 5)]
    monkeypatch.setattr(api, "_fits", lambda product, A, B: free.pop(0))
    monkeypatch.setattr(api, "_gpu_backend", lambda: type("Gpu", (), {"gemm": lambda self, *args: product.events.append(("cuBLAS", None))})())
    run = api._remembered_fast(product, 3 << 30)
    for _ in range(3):
        run("A", "B", "C", 1.0, 0.0)
    assert product.events == [("graphs dropped", None), ("direct", 2 << 30), ("released", 2 << 30),
                              ("graph cache", None), ("cuBLAS", None)]


def test_a_repeated_call_of_all_of_c_keeps_its_budget(product, monkeypatch):
    monkeypatch.setattr(api, "_fits", lambda product, A, B: pytest.fail("all of C at once: its workspace is held"))
    run = api._remembered_fast(product, None)
    run("A", "B", "C", 1.0, 0.0)
    assert product.events == [("graph cache", None)]
