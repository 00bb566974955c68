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


def _scipy_block(eff: Columns, cells: np.ndarray):
    """The expressions attacker_block replaced (insider_floor._Attackers before D-101)."""
    e = sp.csc_matrix((eff.data, eff.indices, eff.indptr), shape=eff.shape).tocsr()
    sub = e[:, cells].tocsr()
    sub.eliminate_zeros()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    sub = sub[rows].tocsr()
    return rows, sub.indptr, sub.indices.astype(np.int64), sub.data


def _scipy_fixed(fixed: Columns, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The rows × cells array `Columns.marks` and `_Attackers.mine` read from (before D-120)."""
    f = sp.csc_matrix((fixed.data, fixed.indices, fixed.indptr), shape=fixed.shape).tocsr()
    f.eliminate_zeros()
    return f[rows][:, cells].toarray() > 0


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
    got = attacker_block(cols, cells)
    want = _scipy_block(cols, cells)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    # the fixed marks at the block's entries, without the rows × cells array (D-120)
    b_rows, b_ptr, b_col = got[0], got[1], got[2]
    b_row = np.repeat(np.arange(b_rows.size), np.diff(b_ptr))
    fx = _scipy_fixed(Columns(marks), b_rows, cells)
    np.testing.assert_array_equal(
        Columns(marks).marks(cells, b_rows[b_row] * cells.size + b_col), fx[b_row, b_col]
    )
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


@pytest.mark.parametrize("seed", [2, 5])
def test_the_attackers_columns_are_the_arrays_columns(monkeypatch, seed):
    """`_Attackers.mine(j)` (and so `members`) and the entries' fixed marks, gathered per
    cell (D-120), are the columns and entries of the rows × cells arrays built before, on
    seeded surveys' audits (no cell made up alone there: the random test has them)."""
    seen = 0
    plain = insider_floor._Attackers.__init__

    def check(self, lp, eff, fixed, barred, hi, values):
        nonlocal seen
        plain(self, lp, eff, fixed, barred, hi, values)
        rows, cells = self._rows, self.cells
        mine = (barred(rows, cells) | _scipy_fixed(fixed, rows, cells))[self._order]
        fx = _scipy_fixed(fixed, self.row, cells)  # by rank: self.row is rows[order]
        np.testing.assert_array_equal(self.ent_fixed, fx[self.ent_row, self.ent_col])
        for j in range(cells.size):
            np.testing.assert_array_equal(self.mine(j), mine[:, j])
        seen += 1

    for method in ("MOD", "OPT"):
        problem, patterns = _patterns(monkeypatch, seed, method)
        with monkeypatch.context() as m:
            m.setattr(insider_floor._Attackers, "__init__", check)
            for sup in patterns:
                floor_audit_of(problem, sup)
    assert seen > 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6))
def test_the_attackers_fixed_marks_and_columns(seed):
    """On random attackers with cells made up alone and exemptions: `_Attackers.mine(j)`
    and `ent_fixed`, gathered per cell (D-120), are the old rows × cells arrays' own."""
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 12)), int(rng.integers(1, 15))
    eff = _matrix(rng, n_rows, n_cols)
    eff.data = np.abs(eff.data)
    alone = sp.csr_matrix((np.abs(eff.toarray()) > 0) & (rng.random((n_rows, n_cols)) < 0.4))
    exempt = sp.csr_matrix(rng.random((n_rows, n_cols)) < 0.2)
    cells = np.flatnonzero(rng.random(n_cols) < 0.7).astype(np.int64)
    if not cells.size:
        return
    e_cols, f_cols = Columns(eff), Columns(alone.astype(float))
    rows = attacker_block(e_cols, cells)[0]
    if not rows.size:
        return
    fl = Floors(amount=eff, exempt=exempt, alone=np.zeros(n_cols, dtype=bool))

    class _Block:
        pass

    lp = _Block()
    lp.cells = cells
    values = np.full(n_cols, 10.0)
    att = insider_floor._Attackers(lp, e_cols, f_cols, barred_of(fl), values, values)
    fx = _scipy_fixed(f_cols, att.row, cells)  # by rank
    np.testing.assert_array_equal(att.ent_fixed, fx[att.ent_row, att.ent_col])
    mine = fl.barred(att.row, cells) | fx
    for j in range(cells.size):
        np.testing.assert_array_equal(att.mine(j), mine[:, j])
