"""The publication verdict: outsider audit (and insider audit) on one pattern."""

from __future__ import annotations

import numpy as np
from protect_helpers import cell_id, problem_2d

from argusqt.model.status import is_suppressed
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.run import run_method

EX1 = [[895, 137], [753, 973], [569, 486], [540, 793]]


def _mask(problem, cells):
    m = np.zeros(problem.n_cells, dtype=bool)
    m[[cell_id(problem, *c) for c in cells]] = True
    return m


def test_outsider_failure_named_with_interval():
    p = problem_2d(EX1, [(1, 1)], 50.0)
    sup = _mask(p, [(1, 1), (1, 2)])  # the column total gives (1, 1) away
    verdict = publication_audit(p, sup)
    assert not verdict.ok
    c = cell_id(p, 1, 1)
    assert verdict.failing_cells.tolist() == [c]
    assert verdict.reasons(c) == ["outsider"]
    d = verdict.disclosures[0]
    assert d.lower == d.upper == 895
    assert "AUDIT FAILED" in verdict.summary() and "outsider" in verdict.summary()


def test_protected_pattern_passes_and_run_method_keeps_the_verdict():
    p = problem_2d(EX1, [(1, 1)], 50.0)
    sup = _mask(p, [(1, 1), (1, 2), (2, 1), (2, 2)])
    verdict = publication_audit(p, sup)
    assert verdict.ok, verdict.summary()
    assert verdict.outsider.lower[cell_id(p, 1, 1)] <= 845
    res = run_method(p, "HEUR", {})
    assert res.verdict is not None and res.verdict.ok
    again = publication_audit(p, is_suppressed(res.status))
    assert again.ok


# argusqt/docs/methods.md §5 / manual §2.10: row A = 52, 15, 62, 17 with c12 = 15 a singleton
E14 = [[52, 15, 62, 17], [24, 18, 31, 8]]
E14_FREQ = [[4, 1, 6, 3], [5, 4, 7, 2]]


def _e14():
    from protect_helpers import flat_codelist, problem_from_table, table_from_leaves

    dims = [flat_codelist("row", 2), flat_codelist("col", 4)]
    table = table_from_leaves(dims, np.array(E14, float), np.array(E14_FREQ, float))
    c12, c14 = table.cell_index((1, 2)), table.cell_index((1, 4))
    p = problem_from_table(table, np.array([c12, c14]), np.array([1.5, 1.7]))
    return p, c12, c14


def test_singleton_respondent_recomputes_its_neighbour():
    p, c12, c14 = _e14()
    sup = _mask(p, [(1, 2), (1, 4), (2, 2), (2, 4)])  # a rectangle: outsider-safe
    verdict = publication_audit(p, sup)
    assert verdict.outsider.ok
    assert not verdict.ok
    assert verdict.failing_cells.tolist() == [c14]
    assert verdict.reasons(c14) == ["insider"]
    d = [x for x in verdict.disclosures if x.reason == "insider"][0]
    assert d.lower == d.upper == 17  # 146 − 52 − 15 − 62
    assert d.known_cells == (c12,)
    assert verdict.insiders_checked == 1
    # a third suppression in row A protects c14 against the respondent of c12
    sup3 = sup | _mask(p, [(1, 3), (2, 3)])
    assert publication_audit(p, sup3).ok
