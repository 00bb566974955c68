"""The floor model of D-91 (fl18): a respondent's floor is exactly what it knows — its own
published (weighted) contribution, only when nobody's share can be negative."""

from __future__ import annotations

import numpy as np
import pandas as pd
from test_insider_floors import ONE_PARTNER

import argusqt
from argusqt.model.rulespec import PRule, SafetyRules
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import NEGATIVE_NOTE


def _problem(data: pd.DataFrame, rules: object = "P(30,1)", **kw):
    table = argusqt.protect(
        data, explanatory=["nace"], response="turnover", rules=rules, method="HEUR",
        progress=False, **kw,
    )[0].table  # fmt: skip
    return table, CSPProblem.from_table(table)


def _cell(table, code: str) -> int:
    return next(c for c in range(table.n_cells) if table.cell_codes(c) == (code,))


def _a_and_b(table) -> np.ndarray:
    sup = np.zeros(table.n_cells, dtype=bool)
    sup[[_cell(table, "A"), _cell(table, "B")]] = True
    return sup


def test_negative_data_gives_no_floors_and_a_safe_pattern_passes():
    """One negative record in the file: nobody knows the others' part of a cell is ≥ 0, so
    a contribution bounds nothing (|x| would refuse A+B, which the outsider accepts)."""
    data = pd.concat([ONE_PARTNER, pd.DataFrame([("D", -3.0)], columns=["nace", "turnover"])])
    table, problem = _problem(data)
    assert problem.floors is not None and problem.floors.count == 0
    assert problem.floors.note == NEGATIVE_NOTE
    verdict = publication_audit(problem, _a_and_b(table))
    assert verdict.ok, verdict.summary()
    assert "learns nothing from its own contribution" in verdict.summary()
    assert "Not checked" not in verdict.summary()


def test_non_negative_data_keeps_the_floor_and_refuses():
    table, problem = _problem(ONE_PARTNER)
    assert problem.floors is not None and not problem.floors.note
    verdict = publication_audit(problem, _a_and_b(table))
    assert verdict.outsider.ok and not verdict.ok


def _weighted() -> pd.DataFrame:
    # B = 41 as in ONE_PARTNER but no record contributes more than 2 × 4.5 = 9 to it
    rows = [("A", v, 1.0) for v in (90, 5, 5)]
    rows += [("B", v, 2.0) for v in (4.0, 4.0, 4.0, 4.0, 4.5)]
    rows += [("C", 100.0, 1.0)] * 10 + [("D", 50.0, 1.0)] * 10
    return pd.DataFrame(rows, columns=["nace", "turnover", "w"])


def test_a_weighted_record_bounds_a_cell_by_its_own_contribution_not_its_fine_cells():
    """The fine cell's sum (41) would fix B and refuse A+B; each record knows w·x ≤ 9."""
    table, problem = _problem(_weighted(), weight="w")
    fl = problem.floors
    assert fl is not None
    b = _cell(table, "B")
    assert fl.amount.toarray()[:, b].max() == 9.0
    verdict = publication_audit(problem, _a_and_b(table))
    assert verdict.ok, verdict.summary()
    assert "Respondents sharing a suppressed cell checked too" in verdict.summary()


def test_the_floor_is_in_the_published_response_whatever_the_shadow():
    """The shadow ranks contributors; the respondent's floor is its share of the response."""
    data = ONE_PARTNER.assign(staff=np.where(ONE_PARTNER["turnover"] == 25, 1.0, 50.0))
    table, problem = _problem(data, shadow="staff")
    fl = problem.floors
    assert fl is not None
    b = _cell(table, "B")
    assert fl.amount.toarray()[:, b].max() == 25.0


def test_a_holding_floor_is_its_sum_of_the_response_in_the_cell():
    data = ONE_PARTNER.assign(
        firm=np.arange(len(ONE_PARTNER)), staff=np.where(ONE_PARTNER["nace"] == "B", 1.0, 9.0)
    )
    # the two records of 8 in B belong to one holding: it knows B ≥ 16
    data.loc[(data["nace"] == "B") & (data["turnover"] == 8), "firm"] = 1000
    rules = SafetyRules(p_individual=[PRule(30, 100, 1)], p_holding=[PRule(30, 100, 1)])
    table, problem = _problem(data, rules, holding="firm", shadow="staff")
    assert table.spec.use_holdings
    fl = problem.floors
    assert fl is not None
    amounts = fl.amount.toarray()[:, _cell(table, "B")]
    assert sorted(amounts[amounts > 0].tolist()) == [16.0, 25.0]
