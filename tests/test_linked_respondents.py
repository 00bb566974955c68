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


def test_floors_of_tables_together_keep_each_attacker_to_its_own_tables_cells():
    """floors_over (D-91, fl19): a table's respondents attack only its own primaries; that is
    kept as each attacker's table, not as an exempt entry per cell of the other tables
    (attackers × cells: 190 MB on the enterprise set)."""
    from argusqt.protection.core.respondents import Floors, beside, floors_over

    # table 1 cells 0..2 → joint 0, 1, 2; table 2 cells 0..2 → joint 0, 3, 4 (0 common)
    alone = np.zeros(3, dtype=bool)
    f1 = Floors(_rows([[0, 1], [0, 2]], 3), _rows([[1], []], 3), alone)
    f2 = Floors(_rows([[0, 1, 2]], 3), _rows([[2]], 3), alone)
    local = [np.array([0, 1, 2]), np.array([0, 3, 4])]
    out = floors_over([f1, f2], local, 5)
    assert out is not None and out.count == 3
    assert out.exempt.nnz == 2  # the tables' own exemptions only
    barred = out.barred(np.arange(3), np.arange(5))
    assert barred.tolist() == [
        [False, True, False, True, True],  # table 1's rows: table 2's own cells 3, 4 barred
        [False, False, False, True, True],
        [False, True, True, False, True],  # table 2's row: its exempt cell 2 → joint 4
    ]
    # the same attackers over more cells, over some cells, side by side keep their tables
    wide = out.padded(7)
    assert wide.barred(np.arange(3), np.arange(5)).tolist() == barred.tolist()
    assert wide.barred(np.arange(3), np.array([5, 6])).all()  # virtual cells: no table's
    part = out.columns(np.array([3, 4]))
    assert part.barred(np.arange(3), np.arange(2)).tolist() == barred[:, 3:].tolist()
    both = beside([out.columns(np.array([0, 1])), part], "")
    assert both.barred(np.arange(3), np.arange(4)).tolist() == barred[:, [0, 1, 3, 4]].tolist()
