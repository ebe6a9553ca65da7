"""What ``bilinear.matmul`` keeps on the device after a fast scheme's call (fake products on the CPU;
tests/test_matmul_gpu.py runs the real ones)."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pytest

import bilinear
from bilinear import matmul_api as api
from bilinear.matmul_api import Room
from bilinear.runtime import graph_cache

GIB = 1 << 30
A, B = SimpleNamespace(shape=(64, 32)), SimpleNamespace(shape=(32, 16))


class _Product:
    """A compiled product as matmul's fast path sees it: a lock, an executor whose leaf takes a
    budget and which remembers its last shape, a workspace it holds after a call until let go."""

    def __init__(self, events: list, workspace: int = GIB):
        self._calling = threading.RLock()
        self.events = events
        self.executor = self
        self.leaf = SimpleNamespace(budget=None)
        self.workspace, self.held, self.last = workspace, 0, None

    @contextmanager
    def leaf_budget(self, budget):
        with self._calling:
            self.leaf.budget = budget
            yield

    def last_ran(self, M, K, N):
        return self.last == (M, K, N)

    def held_workspace_bytes(self):
        return self.held

    def workspace_bytes(self, M, K, N):
        return self.workspace

    def tile_budget(self, M, K, N, limit):
        if limit < self.workspace // 8:  # a tile of C of an eighth
            return None
        self.leaf.budget = limit - 100  # what the rest of the call leaves the leaf
        return self.leaf.budget

    def __call__(self, A, B, out, alpha, beta):
        self.events.append(("direct", self.leaf.budget))
        self.held, self.last = self.leaf.budget or self.workspace, (A.shape[0], A.shape[1], B.shape[1])

    def release_workspace(self):
        self.events.append(("released", self.leaf.budget))
        self.held = 0


@pytest.fixture
def product(monkeypatch):
    events: list = []
    monkeypatch.setattr(api, "_LAST_FAST", {})
    monkeypatch.setattr(api, "_FAST", {})
    monkeypatch.setattr(api, "_device", lambda backend: 0)  # one GPU

    def run(product, A, B, out, alpha, beta):
        product(A, B, out, alpha, beta)
        events[-1] = ("graph cache", product.leaf.budget)

    monkeypatch.setattr(graph_cache, "run", run)
    monkeypatch.setattr(graph_cache, "drop", lambda product: events.append(("graphs dropped", None)))
    monkeypatch.setattr(api, "_gpu_backend", lambda: SimpleNamespace(gemm=lambda *args: events.append(("cuBLAS", None))))
    return _Product(events)


def _free(monkeypatch, product, *free: int) -> None:
    """What each call finds free on the device (its own held workspace counts as free)."""
    left = list(free)
    monkeypatch.setattr(api, "_free_bytes", lambda p: left.pop(0) + p.held_workspace_bytes())


def test_room_keeps_a_workspace_only_where_as_much_stays_free_beside_it(product, monkeypatch):
    _free(monkeypatch, product, 2 * GIB, 2 * GIB - 1, GIB // 2, GIB // 9)
    assert api._fits(product, A, B) == Room(True, None, keep=True)
    assert api._fits(product, A, B) == Room(True, None, keep=False)  # FP64 24576 took 58 of 61 GB
    assert api._fits(product, A, B) == Room(True, GIB // 2 - 100)  # tiles: what tile_budget gave the leaf
    assert api._fits(product, A, B) == Room(False)


def test_a_kept_workspace_goes_through_the_graph_cache(product):
    for _ in range(3):
        api._run_fast(product, A, B, "C", 1.0, 0.0, Room(True, None, keep=True))
    assert product.events == [("graph cache", None)] * 3 and product.held == GIB


@pytest.mark.parametrize("budget", [None, 3 * GIB], ids=["all of C", "tiles of C"])
def test_a_workspace_not_kept_goes_back_after_each_call(product, budget):
    """Kept, it left the caller nothing: after matmul at FP64 24576 on the H100 (all of C at once,
    58 GB) allocating 4.5 GiB failed with 82.1 GB in use."""
    for _ in range(3):
        api._run_fast(product, A, B, "C", 1.0, 0.0, Room(True, budget))
    assert product.events == [("graphs dropped", None), ("direct", budget), ("released", budget)] * 3
    assert product.held == 0


def test_a_repeated_call_not_kept_takes_the_room_free_then(product, monkeypatch):
    """Its workspace went back to the pool, where the caller may have taken it since: a repeated call
    fits anew, in tiles or with cuBLAS where not even a tile fits (with its first call's budget it
    ran out of memory)."""
    _free(monkeypatch, product, GIB // 2, 4 * GIB, GIB // 9, GIB // 9)
    run = api._remembered_fast(product, Room(True, 3 * GIB))
    for _ in range(4):
        run(A, B, "C", 1.0, 0.0)
    assert product.events == [("graphs dropped", None), ("direct", GIB // 2 - 100), ("released", GIB // 2 - 100),
                              ("graph cache", None),  # all of C, and as much free beside it: kept
                              # its own workspace counts as free: all of C again, not kept
                              ("graphs dropped", None), ("direct", None), ("released", None),
                              ("cuBLAS", None)]


def test_a_repeated_call_kept_fits_anew_once_its_workspace_is_gone(product, monkeypatch):
    """While it holds this shape's workspace it runs as its first call did; once another scheme, another
    shape or a call in tiles let it go, the free memory decides again (it had allocated all of C's
    workspace, wherever the caller had taken that memory)."""
    run = api._remembered_fast(product, Room(True, None, keep=True))
    api._run_fast(product, A, B, "C", 1.0, 0.0, Room(True, None, keep=True))
    monkeypatch.setattr(api, "_free_bytes", lambda p: pytest.fail("its workspace is held: nothing to decide"))
    run(A, B, "C", 1.0, 0.0)
    product.release_workspace()
    _free(monkeypatch, product, GIB // 2)
    run(A, B, "C", 1.0, 0.0)
    assert product.events == [("graph cache", None)] * 2 + [("released", None), ("graphs dropped", None),
                                                             ("direct", GIB // 2 - 100), ("released", GIB // 2 - 100)]


def test_a_fast_product_on_one_gpu_leaves_the_others_workspace_alone(product, monkeypatch):
    """matmul keeps one fast scheme's memory per GPU: a call on GPU 1 let go the workspace GPU 0's
    product held (each call on two GPUs in turn then allocated it again)."""
    other_events: list = []
    on_gpu_0, same_gpu = _Product(other_events), _Product(other_events)
    monkeypatch.setattr(api, "_FAST", {("msmes", 0): on_gpu_0, ("winograd", 1): same_gpu, ("strassen", 1): product})
    monkeypatch.setattr(api, "_device", lambda backend: 1)
    api._keep_workspace_of(product)
    assert other_events == [("released", None)]  # same_gpu's alone
    assert api._LAST_FAST == {1: product}


@pytest.mark.parametrize("out, said", [
    (np.zeros((3, 3), ">f8"), ">f8 (float64 in the other byte order)"),
    (np.zeros((3, 3), np.float32), "float32"),
    (np.zeros((3, 4)), "3x4 float64"),
    ([[0.0] * 3] * 3, "a list"),
])
def test_a_numpy_matmul_out_that_does_not_fit_says_what_it_is(out, said):
    """A big-endian 3x3 float64 out was refused as "out must be a 3x3 float64 NumPy matrix" (a hunt)."""
    A, B = np.ones((3, 3)), np.ones((3, 3))
    with pytest.raises(ValueError) as caught:
        bilinear.matmul(A, B, out=out)
    assert str(caught.value).startswith(f"out must be a 3x3 float64 NumPy matrix, not {said}"), caught.value
