"""MOD skips a subtable's floors search when the first search proved its pattern optimal and
that pattern passes the floor check (D-104): the same statuses and cost as the search, and
a skip that ignored the check would change patterns (it would hide what respondents narrow)."""

from __future__ import annotations

import numpy as np
import pytest
from lower_bound_attacker import attack
from test_insider_floors import secondary_cost_of

from argusqt.protection.suppress import modular

SEEDS = [0, 1, 2, 3, 4, 5, 29]


def _skips(monkeypatch) -> list[int]:
    """The floors searches that ran (one entry each), for comparing with and without the skip."""
    out: list[int] = []
    real = modular._solve

    def counted(*a, **kw):
        if a[9] is not None:  # the floors' search (its insider check)
            out.append(0)
        return real(*a, **kw)

    monkeypatch.setattr(modular, "_solve", counted)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_the_skip_keeps_statuses_and_cost(monkeypatch, seed):
    cost, table = secondary_cost_of(seed, "MOD")
    assert attack(table) == []
    monkeypatch.setattr(modular, "SKIP_PROVEN_FLOORS", False)
    plain_cost, plain = secondary_cost_of(seed, "MOD")
    np.testing.assert_array_equal(np.asarray(table.status), np.asarray(plain.status))
    assert cost == plain_cost


def test_the_skip_spares_searches(monkeypatch):
    searches = _skips(monkeypatch)
    for seed in SEEDS:
        secondary_cost_of(seed, "MOD")
    with_skip = len(searches)
    monkeypatch.setattr(modular, "SKIP_PROVEN_FLOORS", False)
    for seed in SEEDS:
        secondary_cost_of(seed, "MOD")
    assert with_skip < len(searches) - with_skip


def test_a_skip_without_the_check_would_change_patterns(monkeypatch):
    """The mutation: the first check of each subtable passes whatever it finds. Some seed's
    pattern then differs, so the check is what makes the skip exact."""
    right = {s: np.asarray(secondary_cost_of(s, "MOD")[1].status) for s in SEEDS}
    real = modular._floor_check

    def lenient(*a, **kw):
        check = real(*a, **kw)
        calls = [0]

        def first_passes(mask, stop):
            calls[0] += 1
            return [] if calls[0] == 1 else check(mask, stop)

        return first_passes

    monkeypatch.setattr(modular, "_floor_check", lenient)
    wrong = {s: np.asarray(secondary_cost_of(s, "MOD")[1].status) for s in SEEDS}
    assert any(not np.array_equal(right[s], wrong[s]) for s in SEEDS)
