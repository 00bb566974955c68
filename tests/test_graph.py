"""Connected components without scipy.sparse.csgraph for small graphs (process start, issue 15)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components as scipy_components

from argusqt.protection.lp import graph


def _graph(n: int, edges: list[tuple[int, int]]) -> sp.csr_matrix:
    rows = np.array([e[0] for e in edges], dtype=np.int64)
    cols = np.array([e[1] for e in edges], dtype=np.int64)
    return sp.csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(n, n))


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 60).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)))
        )
    )
)
def test_same_components_and_numbering_as_scipy(case):
    n, edges = case
    g = _graph(n, edges)
    count, labels = graph.connected_components(g)
    ref_count, ref_labels = scipy_components(g, directed=False)
    assert count == ref_count
    np.testing.assert_array_equal(labels, ref_labels)


@pytest.mark.parametrize("n", [2, 1000, 4999])
def test_long_path_and_isolated_vertices(n):
    edges = [(i + 1, i) for i in range(n // 2)]  # a path, then isolated vertices
    count, labels = graph.connected_components(_graph(n, edges))
    assert count == 1 + (n - n // 2 - 1)
    assert (labels[: n // 2 + 1] == 0).all()


def test_large_graphs_use_scipy(monkeypatch):
    monkeypatch.setattr(graph, "SMALL_GRAPH", 3)
    count, labels = graph.connected_components(_graph(5, [(0, 4), (1, 2)]))
    assert count == 3
    np.testing.assert_array_equal(labels, [0, 1, 1, 2, 0])


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)))
        )
    ),
    st.booleans(),
)
def test_edge_components_number_as_scipy_small_and_large(case, large):
    """The edge-list entry (no sparse matrix for small graphs, scipy's above SMALL_GRAPH)
    gives scipy's components and numbering."""
    n, edges = case
    rows = np.array([e[0] for e in edges], dtype=np.int64)
    cols = np.array([e[1] for e in edges], dtype=np.int64)
    old = graph.SMALL_GRAPH
    graph.SMALL_GRAPH = 0 if large else old
    try:
        count, labels = graph.edge_components(n, rows, cols)
    finally:
        graph.SMALL_GRAPH = old
    ref_count, ref_labels = scipy_components(_graph(n, edges), directed=False)
    assert count == ref_count
    np.testing.assert_array_equal(labels, ref_labels)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 60).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0))))
            if n
            else st.just([]),
        )
    )
)
def test_numbering_is_np_unique_exactly(case):
    """The roots' numbering (D-86) gives np.unique's count and inverse: values, dtype, shape."""
    n, edges = case
    rows = np.array([e[0] for e in edges], dtype=np.int64)
    cols = np.array([e[1] for e in edges], dtype=np.int64)
    count, labels = graph._propagate(n, rows, cols)
    label = np.arange(n, dtype=np.int64)
    if n:  # the fixed point, recomputed: each vertex's smallest vertex of its component
        _, ref = scipy_components(_graph(n, edges), directed=False)
        label = np.array([np.flatnonzero(ref == ref[v])[0] for v in range(n)], dtype=np.int64)
    roots, inverse = np.unique(label, return_inverse=True)
    assert count == roots.size
    assert labels.dtype == np.int32 and labels.shape == (n,)
    np.testing.assert_array_equal(labels, inverse.astype(np.int32).reshape(n))
