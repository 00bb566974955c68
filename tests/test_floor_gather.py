"""The floor audit's per-component blocks gathered from CSC arrays (floor_gather, D-101) are
the blocks scipy's slicing gave, entry for entry, so the audit solves the same LPs: the
gathered audit against the scipy path on seeded tables and patterns."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from test_insider_floors import secondary_cost_of

import argusqt.protection.core.problem as problem_module
from argusqt.model.status import is_suppressed
from argusqt.protection.audit import insider_floor
from argusqt.protection.audit.floor_gather import Columns, attacker_block, barred_of
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import Floors


def _matrix(rng: np.random.Generator, n_rows: int, n_cols: int) -> sp.csr_matrix:
    """Sparse, with explicit zeros, negative values and 1.0 markers mixed in."""
    dense = rng.choice([0.0, 0.0, 0.0, 1.0, -2.0, 3.5, 7.25], size=(n_rows, n_cols))
    m = sp.csr_matrix(dense)
    # explicit zeros kept in the structure (scipy's eliminate_zeros drops them)
    extra = rng.integers(0, n_rows * n_cols, size=3)
    m = m.tolil()
    for k in extra.tolist():
        r, c = divmod(k, n_cols)
        if m[r, c] == 0:
            m[r, c] = 1e-300  # set, then zeroed below: an explicit zero entry
    m = m.tocsr()
    m.data[m.data == 1e-300] = 0.0
    return m


def _scipy_entries(m: sp.csr_matrix, cells: np.ndarray):
    sub = m.tocsr()[:, cells].tocsr()
    sub.eliminate_zeros()
    rows = np.repeat(np.arange(sub.shape[0]), np.diff(sub.indptr))
    return rows, sub.indices.astype(np.int64), sub.data


def _scipy_block(eff: Columns, fixed: Columns, cells: np.ndarray):
    """The expressions attacker_block replaced (insider_floor._Attackers before D-101)."""
    e = sp.csc_matrix((eff.data, eff.indices, eff.indptr), shape=eff.shape).tocsr()
    f = sp.csc_matrix((fixed.data, fixed.indices, fixed.indptr), shape=fixed.shape).tocsr()
    f.eliminate_zeros()
    sub = e[:, cells].tocsr()
    sub.eliminate_zeros()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    sub = sub[rows].tocsr()
    fx = f[rows][:, cells].toarray() > 0
    return rows, sub.indptr, sub.indices.astype(np.int64), sub.data, fx


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6))
def test_the_gathered_blocks_are_scipys(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 12)), int(rng.integers(1, 15))
    m = _matrix(rng, n_rows, n_cols)
    cells = np.flatnonzero(rng.random(n_cols) < 0.6).astype(np.int64)
    cols = Columns(m)
    for got, want in zip(cols.entries(cells), _scipy_entries(m, cells), strict=True):
        np.testing.assert_array_equal(got, want)
    rows = np.flatnonzero(rng.random(n_rows) < 0.7).astype(np.int64)
    np.testing.assert_array_equal(cols.dense(rows, cells), m.tocsr()[rows][:, cells].toarray() > 0)
    marks = sp.csr_matrix((np.abs(m.toarray()) > 2).astype(float))
    got = attacker_block(cols, Columns(marks), cells)
    want = _scipy_block(cols, Columns(marks), cells)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    # Floors.barred, with and without the tables judged together
    table_of = rng.integers(0, 2, n_rows)
    cells_of = rng.random((2, n_cols)) < 0.5
    for fl in (
        Floors(amount=m, exempt=marks, alone=np.zeros(n_cols, dtype=bool)),
        Floors(m, marks, np.zeros(n_cols, dtype=bool), table_of=table_of, cells_of=cells_of),
    ):
        np.testing.assert_array_equal(barred_of(fl)(rows, cells), fl.barred(rows, cells))


def _patterns(monkeypatch, seed: int, method: str) -> tuple[CSPProblem, list[np.ndarray]]:
    """A seeded survey's problem, the method's pattern under the older insider model (which
    respondents sharing cells often narrow, D-91) and patterns around it."""
    with monkeypatch.context() as m:
        m.setattr(problem_module, "floors_of", lambda table: None)
        _, table = secondary_cost_of(seed, method)
    problem = CSPProblem.from_table(table)
    sup = np.asarray(is_suppressed(np.asarray(table.status))) | problem.primary
    rng = np.random.default_rng(seed)
    out = [sup]
    for _ in range(3):
        other = sup.copy()
        flip = rng.integers(0, problem.n_cells, 3)
        other[flip] = ~other[flip]
        out.append(other | problem.primary)
    return problem, out


def _digest(outcome) -> list:
    return [
        (d.cell, d.direction, d.row, d.reach, d.known, d.floors) for d in outcome.disclosures
    ] + [outcome.n_lps, outcome.pairs_left, outcome.attackers]


class _ScipyRows:
    """The component's relations as the LP had them before D-101: scipy's slices."""

    @staticmethod
    def of(rel, cells, rows):
        m = sp.csc_matrix(rel[rows][:, cells])
        m.n_rows = m.shape[0]
        return m


@pytest.mark.parametrize("seed", [2, 5, 6, 9])  # seeds whose patterns some respondent narrows
def test_the_gathered_audit_is_the_scipy_audit(monkeypatch, seed):
    """Every disclosure (cell, side, attacker, reach, its cells) and every LP count the same
    as with scipy's slicing, on each method's pattern and patterns next to it."""
    found = 0
    for method in ("MOD", "OPT"):
        problem, patterns = _patterns(monkeypatch, seed, method)
        assert problem.floors is not None
        for sup in patterns:
            gathered = floor_audit_of(problem, sup)
            with monkeypatch.context() as m:
                m.setattr(insider_floor, "attacker_block", _scipy_block)
                m.setattr(insider_floor, "barred_of", lambda fl: fl.barred)
                m.setattr(insider_floor, "RowBlock", _ScipyRows)
                plain = floor_audit_of(problem, sup)
            assert _digest(gathered) == _digest(plain)
            found += len(plain.disclosures)
    assert found > 0  # patterns some respondent narrows are among them


def floor_audit_of(problem: CSPProblem, sup: np.ndarray):
    return insider_floor.floor_audit(problem, sup, problem.floors)
