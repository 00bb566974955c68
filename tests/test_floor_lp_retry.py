"""A floor attacker's LP that HiGHS's warm primal simplex calls infeasible is solved again
from scratch with dual simplex: its zero move is always feasible, so "infeasible" there is
the solver's trouble, not the table's (HEUR on b31808 stopped with "not additive", s19)."""

from __future__ import annotations

import numpy as np
from test_insider_floors import ONE_PARTNER

import argusqt
from argusqt.model.status import is_suppressed
from argusqt.protection.audit import insider_floor
from argusqt.protection.audit.insider_floor import floor_audit
from argusqt.protection.core.problem import CSPProblem

# A (90 + 5 + 5) primary under P(30,1); B (25 + 8 + 8) its cheapest partner, made up by one
# record of 25 that knows B ≥ 25
DATA = ONE_PARTNER


def _pairs(out) -> set[tuple[int, int, int]]:
    return {(d.cell, d.direction, d.row) for d in out.disclosures}


def test_a_warm_solve_that_fails_is_tried_cold_and_gives_the_same_verdict(monkeypatch):
    table = argusqt.protect(
        DATA, explanatory=["nace"], response="turnover", rules="P(30,1)", method="HEUR",
        progress=False,
    )[0].table  # fmt: skip
    problem = CSPProblem.from_table(table)
    a = next(c for c in range(table.n_cells) if table.cell_codes(c) == ("A",))
    b = next(c for c in range(table.n_cells) if table.cell_codes(c) == ("B",))
    weak = np.zeros(table.n_cells, dtype=bool)
    weak[[a, b]] = True  # the respondent of 25 narrows A
    for sup in (weak, is_suppressed(table.status)):
        expected = floor_audit(problem, sup, problem.floors)
        calls = []

        def failing(h, calls=calls):  # every warm and from-scratch primal solve gives up
            calls.append(1)
            return "infeasible", None, float("nan")

        with monkeypatch.context() as m:
            m.setattr(insider_floor, "solve", failing)
            again = floor_audit(problem, sup, problem.floors)
        assert _pairs(again) == _pairs(expected)
        assert again.pairs_left == expected.pairs_left
        assert calls or not expected.n_lps  # the failing solver was asked, then the cold one
    assert _pairs(floor_audit(problem, weak, problem.floors))  # the weak pattern is caught
