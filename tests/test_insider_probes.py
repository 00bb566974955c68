"""OPT's insider probes of the root's fractional points (docs/design.md, D-108): they choose
which respondents are separated, never which cuts hold, so "proven optimal" stays the floor
model's enumerated optimum and the printed bound stays below it."""

from __future__ import annotations

import numpy as np
import pytest
from lower_bound_attacker import attack
from test_insider_floors import _cheapest_by_enumeration, _small_survey

import argusqt
from argusqt.model.status import is_secondary
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.suppress import optimal, scip_plugins


@pytest.mark.parametrize(("probes", "level"), [(0, 0.5), (4, 0.5), (4, 1e-6)])
@pytest.mark.parametrize("seed", [5, 9, 11])
def test_opt_proves_the_enumerated_optimum_with_probes(monkeypatch, seed, probes, level):
    """With or without probes OPT proves the cost enumeration finds, its bound is not above
    it, and its pattern passes the independent attacker."""
    solve = optimal.solve_optimal
    made: list[int] = []
    real_probe = scip_plugins._CapacityHandler._probe

    def probe(self, x):  # type: ignore[no-untyped-def]
        made.append(1)
        return real_probe(self, x)

    def with_probes(problem, params=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        given = params.as_dict() if hasattr(params, "as_dict") else dict(params or {})
        extra = {"insider_probes": probes, "probe_level": level, "guided": False}
        return solve(problem, {**given, **extra}, *args, **kwargs)

    monkeypatch.setattr(optimal, "solve_optimal", with_probes)
    monkeypatch.setattr(scip_plugins._CapacityHandler, "_probe", probe)
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
    best = _cheapest_by_enumeration(p.table, cost)
    assert p.result.optimal
    assert got == pytest.approx(best, abs=1e-6)
    if p.result.lower_bound is not None:
        assert p.result.lower_bound <= best + 1e-6
    assert attack(p.table) == []
    assert len(made) <= probes


def test_a_probe_adds_the_respondents_the_audit_finds_to_the_known():
    """A probe audits the point rounded at its level and keeps each finding's respondent,
    with the primary it broke, in the pool the fractional rounds separate; one probe less."""
    hdlr = scip_plugins._CapacityHandler.__new__(scip_plugins._CapacityHandler)
    seen: list[np.ndarray] = []

    def insiders(mask, stop):  # type: ignore[no-untyped-def]
        seen.append(mask)
        return [(3, np.array([1, 2]))]

    class _Sep:
        def full_point(self, x):  # type: ignore[no-untyped-def]
            return x

    class _Run:
        stop = None

    pool: dict = {}

    def insider_sep(known, floor):  # type: ignore[no-untyped-def]
        return pool.setdefault(known.tobytes(), (None, set()))

    hdlr.insiders, hdlr.sep, hdlr.run = insiders, _Sep(), _Run()
    hdlr.insider_probes, hdlr.probe_level, hdlr.n_probes = 2, 0.5, 0
    hdlr._insider_sep = insider_sep  # type: ignore[method-assign]
    hdlr._probe(np.array([0.2, 0.6, 1.0, 0.5]))
    assert seen[0].tolist() == [False, True, True, False]
    assert [cells for _, cells in pool.values()] == [{3}]
    assert (hdlr.insider_probes, hdlr.n_probes) == (1, 1)
