"""MOD's subtables search under the floor model (docs/design.md, D-91, mod18b): a pattern a
respondent sharing cells narrows is cut off inside the subtable's branch-and-cut, so the
final insider repair has less to add."""

from __future__ import annotations

import pytest
from lower_bound_attacker import attack
from test_insider_floors import secondary_cost_of

from argusqt.protection.suppress import modular


def _mod(monkeypatch, floors: bool):
    monkeypatch.setattr(modular, "SUBTABLE_FLOORS", floors)
    return secondary_cost_of(29, "MOD")


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
