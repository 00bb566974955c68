"""MOD's subtables search under the floor model (docs/design.md, D-91, mod18b): a pattern a
respondent sharing cells narrows is cut off inside the subtable's branch-and-cut, so the
final insider repair has less to add."""

from __future__ import annotations

import numpy as np
import pytest
from lower_bound_attacker import attack
from test_insider_floors import _random_data

import argusqt
from argusqt.protection.suppress import modular


def _mod(monkeypatch, floors: bool):
    monkeypatch.setattr(modular, "SUBTABLE_FLOORS", floors)
    p = argusqt.protect(
        _random_data(29), explanatory=["act", "reg"], response="turnover",
        rules="P(15,1)|FREQ(3,20)", method="MOD", progress=False,
    )[0]  # fmt: skip
    status = np.asarray(p.table.status)
    secondary = np.isin(status, [11, 12])
    return float(np.asarray(p.table.cost)[secondary].sum()), p.table


@pytest.mark.parametrize("floors", [False, True])
def test_both_patterns_withstand_the_independent_attacker(monkeypatch, floors):
    _, table = _mod(monkeypatch, floors)
    assert attack(table) == []


def test_the_subtables_floors_give_a_cheaper_pattern_than_the_repair(monkeypatch):
    """Seed 29: the repair of the outsider-only subtable pattern pays 2,687.9, the subtable
    searched under the floors 1,998.8 (-26 %)."""
    repaired, _ = _mod(monkeypatch, False)
    searched, _ = _mod(monkeypatch, True)
    assert searched < 0.85 * repaired
