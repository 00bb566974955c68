"""Insider audits remembered by pattern within `insider_memo.by_pattern` (D-107): MOD's polish
audits the modular pattern with the search's seeds, then its publication audits it again
with others. The moves a caller hands in only spare LPs, so the outcome met before has the
disclosures a fresh audit with the new moves finds; outside the block, or for another
problem, the moves stay in the key."""

from __future__ import annotations

import copy

import pytest
from test_insider_memo import _fresh, _problem

from argusqt.protection.audit import insider
from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.audit.insider_memo import by_pattern, moves_in_key


def _found(out) -> list:
    return sorted((d.cell, d.respondent, d.lower, d.upper, d.known) for d in out.disclosures)


@pytest.fixture
def runs(monkeypatch):
    """How often the audit itself ran."""
    seen: list[int] = []
    audit = insider._insider_audit

    def counting(problem, suppressed, **kw):
        seen.append(1)
        return audit(problem, suppressed, **kw)

    monkeypatch.setattr(insider, "_insider_audit", counting)
    return seen


@pytest.mark.parametrize("seed", range(6))
def test_other_moves_meet_the_same_disclosures_and_are_served_within_the_block(runs, seed):
    p, mask = _problem(seed)
    seeds = list(_fresh(p, mask).moves)
    assert seeds, "the audit found moves to hand in"
    # the premise: a fresh audit with or without the moves discloses the same
    with_moves = _fresh(p, mask, moves=seeds)
    assert _found(with_moves) == _found(_fresh(p, mask))
    runs.clear()
    q = copy.deepcopy(p)  # a problem of its own: nothing remembered for it yet
    with by_pattern(q):
        first = insider_audit(q, mask)
        again = insider_audit(q, mask, moves=seeds)
        assert len(runs) == 1 and _found(again) == _found(with_moves) == _found(first)
        assert not moves_in_key(q) and moves_in_key(p)  # another problem keeps its moves
    assert moves_in_key(q)
    insider_audit(q, mask, moves=seeds[:1])  # outside the block: the moves are in the key
    assert len(runs) == 2
    insider_audit(q, mask)  # and what the block kept serves only the block
    assert len(runs) == 3
