"""The respondents of linked tables over their joint cells (docs/design.md, D-51): one
respondent is one attacker, never split in two that each "recompute" the other's cells."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from argusqt.protection.core.respondents import Respondents, joined


def _rows(rows: list[list[int]], n: int) -> sp.csr_matrix:
    r = [i for i, cells in enumerate(rows) for _ in cells]
    c = [x for cells in rows for x in cells]
    return sp.csr_matrix((np.ones(len(c)), (r, c)), shape=(len(rows), n))


def _sets(m: sp.csr_matrix) -> set[frozenset[int]]:
    m = sp.csr_matrix(m)
    return {frozenset(m.indices[m.indptr[i] : m.indptr[i + 1]].tolist()) for i in range(m.shape[0])}


def test_a_respondent_alone_in_a_common_cell_is_one_row():
    # table 1 cells 0..2 → joint 0, 1, 2; table 2 cells 0..2 → joint 0, 3, 4 (0 common)
    t1 = Respondents(_rows([[0, 1]], 3), _rows([[0, 1, 2]], 3), "record")
    t2 = Respondents(_rows([[0, 2]], 3), _rows([[0, 2]], 3), "record")
    local = [np.array([0, 1, 2]), np.array([0, 3, 4])]
    out = joined([t1, t2], local, 5)
    assert out.count == 1
    assert _sets(out.known) == {frozenset({0, 1, 4})}
    assert _sets(out.exempt) == {frozenset({0, 1, 2, 4})}


def test_rows_with_the_same_holding_id_merge_and_others_stay_apart():
    t1 = Respondents(_rows([[1], [2]], 3), _rows([[1], [2]], 3), "holding", ids=np.array([7, 9]))
    t2 = Respondents(_rows([[1]], 3), _rows([[1]], 3), "holding", ids=np.array([9]))
    local = [np.array([0, 1, 2]), np.array([0, 3, 4])]
    out = joined([t1, t2], local, 5)
    assert out.unit == "holding"
    assert _sets(out.known) == {frozenset({1}), frozenset({2, 3})}  # holding 9 knows both


def test_without_ids_respondents_of_different_cells_stay_apart():
    t1 = Respondents(_rows([[1]], 3), _rows([[1]], 3), "record")
    t2 = Respondents(_rows([[1]], 3), _rows([[1]], 3), "record")
    out = joined([t1, t2], [np.array([0, 1, 2]), np.array([0, 3, 4])], 5)
    assert _sets(out.known) == {frozenset({1}), frozenset({3})}


def test_a_record_level_table_in_the_set_does_not_split_a_holding():
    """Review of D-51: one table without ids (record level) turned merging by id off for
    every table, so a holding alone in cells of two holding tables with no common cell
    became two weaker attackers."""
    t1 = Respondents(_rows([[1], [2]], 3), _rows([[1], [2]], 3), "holding", ids=np.array([7, 9]))
    t2 = Respondents(_rows([[1]], 3), _rows([[1]], 3), "holding", ids=np.array([9]))
    t3 = Respondents(_rows([[2]], 3), _rows([[2]], 3), "record")  # no ids
    local = [np.array([0, 1, 2]), np.array([0, 3, 4]), np.array([0, 5, 6])]
    out = joined([t1, t2, t3], local, 7)
    assert frozenset({2, 3}) in _sets(out.known)  # holding 9: one attacker knowing both
    assert frozenset({6}) in _sets(out.known)  # the record stays its own attacker
    assert out.count == 3
