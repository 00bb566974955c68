"""The attacker LP blocks gathered from CSR arrays equal scipy's slicing and stacking
(docs/design.md, D-47): same components, same block and coverage matrices in the same entry
order, same reduced costs to the bit, so OPT's cuts and patterns do not change."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import random_1h2d, random_2d, random_3d
from scipy.sparse.csgraph import connected_components as scipy_components

from argusqt.protection.lp.components import RowBlock, variable_components
from argusqt.protection.lp.separation import Separator, _sweep_matrix


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    kind = seed % 3
    if kind == 0:
        return random_2d(rng, 3 + seed % 5, 4 + seed % 4)
    if kind == 1:
        return random_1h2d(rng, [2, 2 + seed % 2], 3 + seed % 3)
    return random_3d(rng, [2, 2], [2], 2 + seed % 2)


def _reference_components(rel: sp.csr_matrix, var: np.ndarray) -> list[tuple[list, list]]:
    """Components of variable cells by scipy's csgraph on the cell-relation graph."""
    var_idx = np.flatnonzero(var)
    sub = rel.tocsc()[:, var_idx].tocsr()
    sub.eliminate_zeros()
    active = np.flatnonzero(np.diff(sub.indptr) > 0)
    inc = sp.csr_matrix((np.ones(sub[active].nnz), sub[active].indices, sub[active].indptr))
    inc.resize((active.size, var_idx.size))
    graph = (
        sp.bmat([[None, inc.T], [inc, None]]) if active.size else sp.csr_matrix((var_idx.size,) * 2)
    )
    _, labels = scipy_components(graph, directed=False)
    out = []
    for k in range(int(labels.max()) + 1):
        cells = var_idx[labels[: var_idx.size] == k]
        if cells.size:
            out.append((cells.tolist(), active[labels[var_idx.size :] == k].tolist()))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_variable_components_equal_scipy_csgraph(seed, share):
    problem = _problem(seed)
    var = np.random.default_rng(seed + 1).random(problem.n_cells) < share
    got = [(c.cells.tolist(), c.rows.tolist()) for c in variable_components(problem.relations, var)]
    assert got == (_reference_components(problem.relations.tocsr(), var) if var.any() else [])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000))
def test_block_arrays_and_reduced_costs_equal_scipy_to_the_bit(seed):
    problem = _problem(seed)
    rng = np.random.default_rng(seed)
    rel = sp.csr_matrix(problem.relations, dtype=float)
    rel.eliminate_zeros()
    cells = np.flatnonzero(rng.random(problem.n_cells) < 0.6)
    rows = np.flatnonzero(rng.random(rel.shape[0]) < 0.7)
    if cells.size == 0 or rows.size == 0:
        return
    blk = RowBlock.of(rel, cells, rows)
    ref = sp.csc_matrix(rel[rows][:, cells])
    assert (blk.n_rows, blk.n_cols) == ref.shape
    np.testing.assert_array_equal(blk.indptr, ref.indptr)
    np.testing.assert_array_equal(blk.indices, ref.indices)
    assert blk.data.tobytes() == ref.data.tobytes()
    # the coverage LP's matrix [[M, 0], [±E, −I]] as scipy stacks and converts it
    nt = min(cells.size, 1 + seed % 5)
    pos = np.sort(rng.choice(cells.size, size=nt, replace=False))
    for sense in (1.0, -1.0):
        link = sp.csr_matrix(
            (
                np.concatenate([np.full(nt, sense), np.full(nt, -1.0)]),
                (np.tile(np.arange(nt), 2), np.concatenate([pos, cells.size + np.arange(nt)])),
            ),
            shape=(nt, cells.size + nt),
        )
        a_blk = rel[rows][:, cells]
        big = sp.vstack([sp.hstack([a_blk, sp.csr_matrix((rows.size, nt))]), link])
        ref_big = sp.csc_matrix(big)
        indptr, indices, data = _sweep_matrix(blk, pos, sense)
        np.testing.assert_array_equal(indptr, ref_big.indptr)
        np.testing.assert_array_equal(indices, ref_big.indices)
        assert data.tobytes() == ref_big.data.tobytes()
    pi = rng.normal(size=rows.size) * 10.0 ** rng.integers(-3, 6, size=rows.size)
    ref_d = -np.asarray(rel[rows].T.tocsr() @ pi, dtype=float).ravel()
    assert blk.reduced(pi, problem.n_cells).tobytes() == ref_d.tobytes()


@pytest.mark.parametrize("seed", range(6))
def test_every_block_the_separator_solves_equals_scipys_slicing(seed, monkeypatch):
    """At 0/1 and fractional points each block LP the separator loads is scipy's
    `M[rows][:, cells]` with its entries in scipy's order."""
    problem = _problem(seed)
    seen = []
    original = RowBlock.of.__func__

    def recording(cls, rel, cells, rows):
        blk = original(cls, rel, cells, rows)
        seen.append((rel, cells.copy(), rows.copy(), blk))
        return blk

    monkeypatch.setattr(RowBlock, "of", classmethod(recording))
    sep = Separator(problem)
    rng = np.random.default_rng(seed)
    for _ in range(8):
        x = np.where(rng.random(problem.n_cells) < 0.5, rng.choice([1.0, 0.4], problem.n_cells), 0)
        sep.separate(x)
    assert seen
    for rel, cells, rows, blk in seen:
        ref = sp.csc_matrix(rel[rows][:, cells])
        np.testing.assert_array_equal(blk.indptr, ref.indptr)
        np.testing.assert_array_equal(blk.indices, ref.indices)
        assert blk.data.tobytes() == ref.data.tobytes()


def test_block_of_relations_as_the_audit_holds_them_equals_scipy():
    """The outsider audit slices `problem.relations.tocsr()` as it is (any dtype, explicit
    zeros kept): the block's CSC arrays are those of scipy's slicing and conversion."""
    rel = sp.csr_matrix(
        (
            np.array([1, -1, 0, 1, 1, -1, 1], dtype=np.int8),
            np.array([0, 2, 3, 1, 3, 4, 2]),
            np.array([0, 3, 6, 7]),
        ),
        shape=(3, 5),
    )
    cells, rows = np.array([0, 2, 3, 4]), np.array([0, 1, 2])
    blk = RowBlock.of(rel, cells, rows)
    ref = sp.csc_matrix(rel[rows][:, cells])
    np.testing.assert_array_equal(blk.indptr, ref.indptr)
    np.testing.assert_array_equal(blk.indices, ref.indices)
    np.testing.assert_array_equal(blk.data, ref.data)
    assert blk.data.size == 6  # the explicit zero (row 0, cell 3) stays, as in scipy's
