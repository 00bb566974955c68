"""The publication verdict: outsider audit (and insider audit) on one pattern."""

from __future__ import annotations

import numpy as np
from protect_helpers import cell_id, problem_2d

from argusqt.protect.methods import run_method
from argusqt.protect.publication import publication_audit
from argusqt.rules.status import is_suppressed

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
