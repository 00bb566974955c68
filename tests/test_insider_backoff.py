"""OPT's known insiders wait after misses at fractional points (docs/design.md, D-95): a
path choice only, so "proven optimal" stays the floor model's enumerated optimum."""

from __future__ import annotations

import pytest
from lower_bound_attacker import attack
from test_insider_floors import _cheapest_by_enumeration, opt_on_survey

from argusqt.protection.suppress.scip_plugins import _CapacityHandler


@pytest.mark.parametrize("backoff", [0, 8])
@pytest.mark.parametrize("seed", [5, 9, 11])
def test_opt_proves_the_enumerated_optimum_with_and_without_the_wait(monkeypatch, seed, backoff):
    """Every round or after misses, OPT proves the cost enumeration finds, and its
    pattern passes the independent attacker."""
    p, cost, got = opt_on_survey(seed, monkeypatch, insider_backoff=backoff)
    assert p.result.optimal
    assert got == pytest.approx(_cheapest_by_enumeration(p.table, cost), abs=1e-6)
    assert attack(p.table) == []


def test_a_known_insider_waits_twice_as_long_after_each_miss_up_to_the_cap():
    """The schedule is counted in rounds: 2, 4, 8, 8 after misses, the next round after a cut."""
    hdlr = _CapacityHandler.__new__(_CapacityHandler)
    hdlr.insider_backoff, hdlr.insider_wait, hdlr.frac_rounds = 8, {}, 0
    due = []
    for r in range(1, 40):
        hdlr.frac_rounds = r
        if hdlr._insider_due(b"k"):
            due.append(r)
            hdlr._insider_after(b"k", cut=r == 23)
    assert due == [1, 3, 7, 15, 23, 24, 26, 30, 38]
    hdlr.insider_backoff = 0
    assert hdlr._insider_due(b"k")
