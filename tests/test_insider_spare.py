"""The insider repair publishes again the cells it added needlessly (docs/design.md, D-91,
mod18): a respondent sharing cells is repaired move by move, and a later move often
carries an earlier pair too."""

from __future__ import annotations

import pytest
from lower_bound_attacker import attack
from test_insider_floors import secondary_cost_of

from argusqt.protection.audit import insider_repair


def _cost(monkeypatch, spare: bool):
    monkeypatch.setattr(insider_repair, "SPARE", spare)
    return secondary_cost_of(24, "GH")


@pytest.mark.parametrize("spare", [False, True])
def test_the_repaired_pattern_withstands_the_independent_attacker(monkeypatch, spare):
    _, table = _cost(monkeypatch, spare)
    assert attack(table) == []


def test_the_cells_the_greedy_repair_added_needlessly_are_published_again(monkeypatch):
    """Seed 24 with GH: the greedy repair pays 1,810.0, the spared one 1,366.4 (-25 %)."""
    greedy, _ = _cost(monkeypatch, False)
    spared, _ = _cost(monkeypatch, True)
    assert spared < 0.9 * greedy


@pytest.mark.parametrize("seed", range(8))
def test_spares_shortcuts_keep_the_pattern_with_fewer_witness_lps(monkeypatch, seed):
    """D-105: a cell proven needed without an LP, the pairs that failed before solved first:
    the same pattern as spare's plain loop, never more witness LPs."""
    import numpy as np
    from protect_helpers import mixed_problem

    from argusqt.model.status import is_suppressed
    from argusqt.protection.audit.insider_repair import RepairWork, make_publishable
    from argusqt.protection.suppress.heuristic import solve_heuristic

    p = mixed_problem(seed)
    sup = is_suppressed(solve_heuristic(p).status) | p.primary
    fast, slow = RepairWork(), RepairWork()
    got, _, _ = make_publishable(p, sup, intervals=False, work=fast)
    monkeypatch.setattr(insider_repair, "SPARE_SHORTCUTS", False)
    want, _, _ = make_publishable(p, sup, intervals=False, work=slow)
    assert np.array_equal(got, want)
    assert fast.spare <= slow.spare
