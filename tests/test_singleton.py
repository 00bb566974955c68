"""Singleton virtual cells (argusqt/docs/methods.md §5)."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import cell_id, flat_codelist, problem_from_table, table_from_leaves

from argusqt.model.status import is_suppressed
from argusqt.protection.audit.outsider import audit
from argusqt.protection.run import run_method
from argusqt.protection.suppress.singleton import (
    add_singleton_cells,
    drop_virtual,
    singleton_groups,
)

E14 = [[52, 15, 62, 17], [24, 18, 31, 8]]  # rows A, B × X1..X4
E14_FREQ = [[4, 1, 6, 3], [5, 4, 7, 2]]


def _e14(c14_freq: int = 3):
    dims = [flat_codelist("row", 2), flat_codelist("col", 4)]
    freq = np.array(E14_FREQ, dtype=float)
    freq[0, 3] = c14_freq
    table = table_from_leaves(dims, np.array(E14, dtype=float), freq)
    c12 = table.cell_index((1, 2))
    c14 = table.cell_index((1, 4))
    p = problem_from_table(table, np.array([c12, c14]), np.array([1.5, 1.7]))
    return p, c12, c14


def test_e14_table_and_relations():
    p, c12, c14 = _e14()
    assert p.values[cell_id(p, 0, 0)] == 227
    assert p.values[cell_id(p, 1, 0)] == 146
    assert p.relations.shape[0] == 8  # c00, c10, c20 rows + c0j = c1j + c2j (j = 0..4)
    assert np.allclose(p.relations @ p.values, 0)


def test_e14_singleton_multiple_adds_virtual_cell():
    p, c12, c14 = _e14()
    ext, nv = add_singleton_cells(p, options="SM")
    assert nv == 1
    v = p.n_cells
    assert ext.n_cells == p.n_cells + 1
    assert ext.values[v] == 32
    assert ext.status[v] == 3 and ext.primary[v]
    assert ext.cost[v] == 1
    assert ext.lpl[v] == 0
    assert ext.upl[v] == pytest.approx(1.0)  # max(0.0032, 10^0)
    last = ext.relations.tocsr()[-1].toarray().ravel()
    expect = np.zeros(ext.n_cells)
    expect[[c12, c14]] = 1.0
    expect[v] = -1.0
    assert np.array_equal(last, expect)  # v = c12 + c14
    assert np.allclose(ext.relations @ ext.values, 0)
    # SS does not apply (only one singleton); SM with two decimals → UPL 0.01
    assert add_singleton_cells(p, options="SS")[1] == 0
    p.decimals = 2
    assert add_singleton_cells(p, options=["SM"])[0].upl[v] == pytest.approx(0.01)


def test_singleton_singleton_and_min_frequency():
    p, c12, c14 = _e14(c14_freq=1)
    assert add_singleton_cells(p, options="SM")[1] == 0
    ext, nv = add_singleton_cells(p, options="SS")
    assert nv == 1 and ext.values[-1] == 32
    # MF: 1 + 1 records < 3
    assert len(singleton_groups(p, None, "MF", minfreq=3)) == 1
    assert len(singleton_groups(p, None, "MF", minfreq=2)) == 0
    with pytest.raises(ValueError, match="unknown singleton option"):
        add_singleton_cells(p, options="XX")


def test_e14_pattern_has_third_suppression_in_row_a():
    from argusqt.protection.suppress.heuristic import solve_heuristic

    p, c12, c14 = _e14()
    row_a = [cell_id(p, 1, j) for j in range(5)]
    plain = solve_heuristic(p, {})  # no singleton option, no insider audit
    sup_plain = is_suppressed(plain.status)
    with_sm = run_method(p, "HEUR", {"singleton_singleton": False, "singleton_multiple": True})
    sup = is_suppressed(with_sm.status)
    assert with_sm.status.shape == (p.n_cells,)  # virtual cell dropped
    assert sup[row_a].sum() >= 3
    assert sup_plain[row_a].sum() == 2  # the cheap rectangle through row B is enough otherwise
    assert with_sm.audit.ok and audit(p, sup).ok
    # the singleton (c12's respondent) cannot recompute c14 exactly from row A
    known = sup.copy()
    known[c12] = False  # the respondent knows c12
    assert not audit(p, known, cells=[c14]).exact[c14]
    assert any("virtual singleton" in line for line in with_sm.log)
    # without the option the insider audit finds c14 and the repair adds the third cell:
    # run_method's repair (HEUR without its polish) or the polish's own publishable step
    no_ss = {"singleton_singleton": False, "singleton_multiple": False}
    off = run_method(p, "HEUR", no_ss | {"polish": 0})
    assert is_suppressed(off.status)[row_a].sum() >= 3
    assert any("in addition" in line for line in off.log) and off.verdict.ok
    polished = run_method(p, "HEUR", no_ss)
    assert is_suppressed(polished.status)[row_a].sum() >= 3 and polished.verdict.ok
    assert any("polish: heuristic pattern" in line for line in polished.log)


def test_drop_virtual_trims_arrays():
    p, c12, c14 = _e14()
    ext, nv = add_singleton_cells(p, options="SM")
    res = run_method(p, "HEUR", {"singleton_multiple": True})
    assert res.audit.lower.shape == (p.n_cells,)
    from argusqt.protection.suppress.heuristic import solve_heuristic

    raw = solve_heuristic(ext, {})
    assert raw.status.shape == (ext.n_cells,)
    assert drop_virtual(raw, p.n_cells).status.shape == (p.n_cells,)
