"""matmul's graph cache on the CPU: when a fast scheme runs directly, when it is captured, when a
graph is replayed or dropped (fake arrays, products and graphs; the real capture is a GPU test)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bilinear.runtime import graph_cache


def _array(ptr: int, shape=(4, 4)):
    return SimpleNamespace(data=SimpleNamespace(device_id=0, ptr=ptr), shape=shape, strides=(32, 8),
                           dtype=SimpleNamespace(str="<f8"))


class _Product:
    def __init__(self):
        self.direct = 0

    def __call__(self, A, B, out, alpha, beta):
        self.direct += 1


class _Graph:
    def __init__(self):
        self.replays, self.current = 0, True

    def holds_current_workspace(self):
        return self.current

    def __call__(self):
        self.replays += 1


@pytest.fixture
def captured(monkeypatch):
    graph_cache.forget()
    graphs = []

    def capture(product, A, B, out, alpha, beta):
        graphs.append(_Graph())
        return graphs[-1]

    yield graphs, capture
    graph_cache.forget()


def test_two_direct_calls_then_one_capture_then_replays(captured):
    graphs, capture = captured
    product, arrays = _Product(), (_array(1000), _array(2000), _array(3000))
    for _ in range(5):
        graph_cache.run(product, *arrays, 1.0, 0.0, capture=capture)
    assert product.direct == 2 and len(graphs) == 1 and graphs[0].replays == 3


def test_other_addresses_shapes_or_scalars_are_other_keys(captured):
    graphs, capture = captured
    product = _Product()
    calls = [((_array(1000), _array(2000), _array(3000)), 1.0, 0.0),
             ((_array(1000), _array(2000), _array(3008)), 1.0, 0.0),  # another out
             ((_array(1000, (4, 3)), _array(2000), _array(3000)), 1.0, 0.0),  # another shape
             ((_array(1000), _array(2000), _array(3000)), 2.0, 0.0),  # another alpha
             ((_array(1000), _array(2000), _array(3000)), 1.0, 1.0)]  # another beta
    for arrays, alpha, beta in calls:
        graph_cache.run(product, *arrays, alpha, beta, capture=capture)
    assert product.direct == 5 and graphs == []
    for arrays, alpha, beta in calls:
        graph_cache.run(product, *arrays, alpha, beta, capture=capture)
    assert product.direct == 10 and len(graphs) == 5


def test_a_graph_whose_workspace_went_stale_is_recaptured_and_others_dropped(captured):
    graphs, capture = captured
    product = _Product()
    first, second = (_array(1000), _array(2000), _array(3000)), (_array(5000), _array(6000), _array(7000))
    for arrays in (first, first, second, second):
        graph_cache.run(product, *arrays, 1.0, 0.0, capture=capture)
    assert len(graphs) == 2 and len(graph_cache._graphs) == 2
    graphs[0].current = graphs[1].current = False  # the product ran at another shape since
    graph_cache.run(product, *first, 1.0, 0.0, capture=capture)  # directly, then captured anew
    assert product.direct == 5 and graphs[0].replays == 0 and len(graphs) == 3
    assert list(graph_cache._graphs.values()) == [graphs[2]]  # the stale second graph let go of its workspace
    graph_cache.run(product, *first, 1.0, 0.0, capture=capture)
    assert graphs[2].replays == 1


def test_the_cache_keeps_at_most_limit_graphs(captured, monkeypatch):
    graphs, capture = captured
    monkeypatch.setattr(graph_cache, "LIMIT", 3)
    product = _Product()
    for index in range(5):
        arrays = (_array(1000 + index * 8), _array(2000), _array(3000))
        for _ in range(2):
            graph_cache.run(product, *arrays, 1.0, 0.0, capture=capture)
    assert len(graphs) == 5 and list(graph_cache._graphs.values()) == graphs[2:]


def test_stale_graphs_go_as_soon_as_their_product_runs_directly(captured):
    """A graph that holds workspace its product no longer uses goes at the product's next direct
    call, not only at the next capture: a user who moved on to another shape gets it back."""
    graphs, capture = captured
    product = _Product()
    first, second = (_array(1000), _array(2000), _array(3000)), (_array(5000), _array(6000), _array(7000))
    for arrays in (first, first):
        graph_cache.run(product, *arrays, 1.0, 0.0, capture=capture)
    graphs[0].current = False  # the direct call below runs at another shape and allocates anew
    graph_cache.run(product, *second, 1.0, 0.0, capture=capture)
    assert graph_cache._graphs == {} and len(graphs) == 1


def test_dropping_a_product_forgets_its_graphs_and_keys_only(captured):
    graphs, capture = captured
    mine, other = _Product(), _Product()
    arrays = (_array(1000), _array(2000), _array(3000))
    for product in (mine, mine, other, other, mine):
        graph_cache.run(product, *arrays, 1.0, 0.0, capture=capture)
    graph_cache.run(other, *(_array(8), _array(16), _array(24)), 1.0, 0.0, capture=capture)  # seen once
    graph_cache.drop(other)
    assert list(graph_cache._graphs.values()) == [graphs[0]] and graph_cache._seen == {}
    graph_cache.run(mine, *arrays, 1.0, 0.0, capture=capture)
    assert graphs[0].replays == 2
