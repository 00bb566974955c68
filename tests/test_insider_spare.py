"""The insider repair publishes again the cells it added needlessly (docs/design.md, D-91,
mod18): a respondent sharing cells is repaired move by move, and a later move often
carries an earlier pair too."""

from __future__ import annotations

import numpy as np
import pytest
from lower_bound_attacker import attack
from test_insider_floors import _random_data

import argusqt
from argusqt.protection.audit import insider_repair


def _cost(monkeypatch, spare: bool):
    monkeypatch.setattr(insider_repair, "SPARE", spare)
    p = argusqt.protect(
        _random_data(24), explanatory=["act", "reg"], response="turnover",
        rules="P(15,1)|FREQ(3,20)", method="GH", progress=False,
    )[0]  # fmt: skip
    status = np.asarray(p.table.status)
    secondary = np.isin(status, [11, 12])
    return float(np.asarray(p.table.cost)[secondary].sum()), p.table


@pytest.mark.parametrize("spare", [False, True])
def test_the_repaired_pattern_withstands_the_independent_attacker(monkeypatch, spare):
    _, table = _cost(monkeypatch, spare)
    assert attack(table) == []


def test_the_cells_the_greedy_repair_added_needlessly_are_published_again(monkeypatch):
    """Seed 24 with GH: the greedy repair pays 1,810.0, the spared one 1,366.4 (-25 %)."""
    greedy, _ = _cost(monkeypatch, False)
    spared, _ = _cost(monkeypatch, True)
    assert spared < 0.9 * greedy
