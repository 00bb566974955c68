"""Connected components of an undirected sparse graph, without importing scipy.sparse.csgraph
for small graphs.

Why not always scipy's `connected_components`: importing `scipy.sparse.csgraph` imports
`scipy.sparse.linalg` and `scipy.linalg` (its Laplacian module), a large share of a batch
process's start against HiGHS or SCIP (issue 15, goal 4: `argusqt batch` within 2 × the
τ-Argus engine's time; docs/design.md, D-16).
Small graphs (every table a batch file usually holds) get a vectorised min-label
propagation with pointer jumping; large ones, where the import is paid back many times,
scipy's traversal. Both number the components in the order of their smallest vertex.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: above this many vertices scipy's traversal (imported on first use) does the work
SMALL_GRAPH = 5_000


def connected_components(graph: Any) -> tuple[int, np.ndarray]:
    """(number of components, label per vertex) of the undirected graph `graph` (square
    sparse matrix; an entry i, j links i and j whatever its value, as scipy's)."""
    n = int(graph.shape[0])
    if n > SMALL_GRAPH:
        from scipy.sparse.csgraph import connected_components as scipy_components

        count, labels = scipy_components(graph, directed=False)
        return int(count), np.asarray(labels, dtype=np.int32)
    coo = graph.tocoo()
    return _propagate(n, np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64))


def edge_components(n: int, rows: np.ndarray, cols: np.ndarray) -> tuple[int, np.ndarray]:
    """`connected_components` of the graph on `n` vertices with edges rows[k]–cols[k], without
    building a sparse matrix for a small graph (scipy's constructor and `tocoo` cost more
    than the propagation on the blocks of a small table; docs/design.md, D-47)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    if n > SMALL_GRAPH:
        import scipy.sparse as sp  # lazy: only large graphs (the callers have it loaded)

        graph = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
        return connected_components(graph)
    return _propagate(n, rows, cols)


def _propagate(n: int, rows: np.ndarray, cols: np.ndarray) -> tuple[int, np.ndarray]:
    """Every vertex takes the smallest vertex id of its component.

    Each round moves the smaller label of every edge to both ends, then jumps pointers
    (a label is a vertex id of the same component, so label[label] is one too). At the
    fixed point both ends of every edge carry the same label, the smallest of the
    component. Rounds grow with the log of the component's diameter, not the diameter.
    """
    label = np.arange(n, dtype=np.int64)
    if rows.size:
        while True:
            low = np.minimum(label[rows], label[cols])
            new = label.copy()
            np.minimum.at(new, rows, low)
            np.minimum.at(new, cols, low)
            while True:  # pointer jumping
                jumped = new[new]
                if np.array_equal(jumped, new):
                    break
                new = jumped
            if np.array_equal(new, label):
                break
            label = new
    return _numbered(label)


def _numbered(label: np.ndarray) -> tuple[int, np.ndarray]:
    """`np.unique(label, return_inverse=True)`'s count and inverse without its sort: at the
    fixed point the labels are exactly the roots (label[v] == v), ascending by vertex id."""
    n = label.size
    roots = np.flatnonzero(label == np.arange(n, dtype=np.int64))
    number = np.empty(n, dtype=np.int32)
    number[roots] = np.arange(roots.size, dtype=np.int32)
    return int(roots.size), number[label]
