"""OPT's optional start from MOD's audited pattern (docs/design.md, D-97): a start only, so
"proven optimal" stays the floor model's enumerated optimum and the pattern passes."""

from __future__ import annotations

import numpy as np
import pytest
from lower_bound_attacker import attack
from test_insider_floors import _cheapest_by_enumeration, _small_survey

import argusqt
from argusqt.model.status import is_secondary
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.suppress import optimal


@pytest.mark.parametrize("seed", [5, 9, 11])
def test_opt_from_mods_pattern_proves_the_enumerated_optimum(monkeypatch, seed):
    """With MOD's pattern as a second start, OPT proves the cost enumeration finds, and its
    pattern passes the independent attacker."""
    solve = optimal.solve_optimal
    called: list[int] = []
    mod_pattern = optimal._mod_pattern

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        called.append(1)
        return mod_pattern(*args, **kwargs)

    def with_mod(problem, params=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        given = params.as_dict() if hasattr(params, "as_dict") else dict(params or {})
        return solve(problem, {**given, "mod_start": True}, *args, **kwargs)

    monkeypatch.setattr(optimal, "solve_optimal", with_mod)
    monkeypatch.setattr(optimal, "_mod_pattern", counted)
    p = argusqt.protect(
        _small_survey(seed),
        explanatory=["act", "reg"],
        response="turnover",
        rules="P(15,1)",
        method="OPT",
        progress=False,
    )[0]
    cost = np.asarray(CSPProblem.from_table(p.table).cost, dtype=float)
    got = float(cost[is_secondary(np.asarray(p.table.status))].sum())
    assert called
    assert p.result.optimal
    assert got == pytest.approx(_cheapest_by_enumeration(p.table, cost), abs=1e-6)
    assert attack(p.table) == []
