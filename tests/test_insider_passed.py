"""Within MOD's polish (insider_memo.by_pattern) an insider audit whose every (primary, side)
pair passed a publication audit of an earlier pattern that suppresses its component counts
the respondents and attacks none (docs/design.md, D-117): every audit's disclosures equal a
fresh audit's, on seeded patterns, their growths, their neighbours and the all-suppressed
pattern."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from protect_helpers import mixed_problem

from argusqt.model.status import is_suppressed
from argusqt.protection.audit import insider
from argusqt.protection.audit.insider_memo import by_pattern
from argusqt.protection.audit.insider_repair import repair_insiders
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.suppress.heuristic import solve_heuristic

SEEDS = range(8)


def _sequence(p, seed):
    """HEUR's pattern without singleton cells (respondents alone in a cell often break it),
    its insider repair, growths, neighbours with cells published, every cell suppressed."""
    sup = is_suppressed(solve_heuristic(p).status) | p.primary
    rng = np.random.default_rng(1000 + seed)
    out = [sup]
    verdict = publication_audit(p, sup, intervals=False)
    if verdict.outsider.ok and not verdict.ok:
        out.append(repair_insiders(p, sup, verdict))
    for base in list(out):
        out.append(base | (rng.random(p.n_cells) < 0.1))
        fewer = base.copy()
        fewer[rng.choice(np.flatnonzero(base & ~p.primary), 2)] = False
        out += [fewer, base]
    out.append(np.ones(p.n_cells, dtype=bool))
    return out


def _found(outcome) -> list:
    return [(d.cell, d.respondent, d.lower, d.upper, d.known) for d in outcome.disclosures]


def _run(monkeypatch, seed):
    """(settled audits, disclosures seen) over one problem's sequence."""
    problem = mixed_problem(seed)
    settled = []
    plain = insider._insider_audit

    def counted(*args, **kw):
        settled.append(kw.get("settled", False))
        return plain(*args, **kw)

    seen = 0
    patterns = _sequence(problem, seed)
    monkeypatch.setattr(insider, "_insider_audit", counted)
    with by_pattern(problem):
        for sup in patterns:
            verdict = publication_audit(problem, sup, intervals=True)
            fresh = plain(copy.deepcopy(problem), sup)
            assert verdict.insider is not None
            assert _found(verdict.insider) == _found(fresh)
            assert verdict.insider.attackers == fresh.attackers
            seen += len(fresh.disclosures)
    monkeypatch.setattr(insider, "_insider_audit", plain)
    return sum(settled), seen


@pytest.mark.parametrize("seed", SEEDS)
def test_a_settled_audit_finds_what_a_fresh_audit_finds(monkeypatch, seed):
    _run(monkeypatch, seed)


def test_some_audits_are_settled_and_some_patterns_disclose(monkeypatch):
    settled = seen = 0
    for seed in SEEDS:
        s, d = _run(monkeypatch, seed)
        settled, seen = settled + s, seen + d
    assert settled > 0
    assert seen > 0


def test_outside_the_polish_nothing_is_settled(monkeypatch):
    problem = mixed_problem(2)
    calls = []
    plain = insider._insider_audit
    monkeypatch.setattr(
        insider,
        "_insider_audit",
        lambda *a, **kw: calls.append(kw.get("settled")) or plain(*a, **kw),
    )
    for sup in _sequence(problem, 2):
        publication_audit(problem, sup, intervals=True)
    assert calls and not any(calls)


def test_passes_are_recorded_only_where_the_outsider_passed(monkeypatch):
    problem = mixed_problem(2)
    with by_pattern(problem):
        kept = insider.passed_pairs(problem)
        assert kept is not None
        for sup in _sequence(problem, 2):
            before = len(kept.kept)
            verdict = publication_audit(problem, sup, intervals=True)
            if not verdict.outsider.ok:
                assert len(kept.kept) == before
    assert insider.passed_pairs(problem) is None
