"""MOD's polish judges each pattern once (publication.remembered_verdicts, D-101): a pattern
audited again gets the verdict it had, never another pattern's, and a run with the memo
publishes what a run without it publishes, which the independent attacker cannot break."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from lower_bound_attacker import attack
from test_floor_gather import _patterns
from test_insider_floors import secondary_cost_of

from argusqt.protection.audit import publication
from argusqt.protection.audit.publication import publication_audit, remembered_verdicts
from argusqt.protection.suppress import modular


def _said(verdict) -> list:
    return sorted(
        (d.cell, d.reason, round(d.lower, 6), round(d.upper, 6), d.known_cells, d.floors)
        for d in verdict.disclosures
    )


def _fresh(problem, sup):
    """The verdict without any memo."""
    token = publication._MEMO.set(None)
    try:
        return publication_audit(problem, sup)
    finally:
        publication._MEMO.reset(token)


@pytest.mark.parametrize("seed", [2, 6, 9])
def test_a_pattern_judged_again_gets_its_own_verdict(monkeypatch, seed):
    problem, patterns = _patterns(monkeypatch, seed, "MOD")
    fresh = [_fresh(problem, sup) for sup in patterns]
    assert any(not v.ok for v in fresh)  # failing patterns among them: none may pass
    with remembered_verdicts(problem) as memo:
        for sup, want in zip(patterns, fresh, strict=True):
            first = publication_audit(problem, sup)
            # a caller's changes to its copy stay out of the memo
            first.disclosures.append(publication.Disclosure(0, "midpoint", 0.0, 0.0))
            again = publication_audit(problem, sup.copy())
            assert _said(again) == _said(want)
            assert again.ok == want.ok
        assert memo.hits == len(patterns)
        # one cell more or less is another pattern: judged afresh
        free = np.flatnonzero(~problem.primary)
        for sup in patterns:
            other = sup.copy()
            other[free[0]] = not other[free[0]]
            assert _said(publication_audit(problem, other)) == _said(_fresh(problem, other))
    # outside the block nothing is remembered
    assert publication._MEMO.get() is None


def test_another_problem_is_never_served(monkeypatch):
    problem, patterns = _patterns(monkeypatch, 2, "MOD")
    twin, _ = _patterns(monkeypatch, 2, "MOD")
    with remembered_verdicts(problem) as memo:
        publication_audit(problem, patterns[1])
        publication_audit(twin, patterns[1])
        assert memo.hits == 0


@pytest.mark.parametrize("seed", range(6))
def test_mod_publishes_the_same_with_and_without_the_memo(monkeypatch, seed):
    memos = []

    @contextlib.contextmanager
    def counted(problem):
        with remembered_verdicts(problem) as memo:
            memos.append(memo)
            yield memo

    with monkeypatch.context() as m:
        m.setattr(modular, "remembered_verdicts", counted)
        cost, table = secondary_cost_of(seed, "MOD")
    assert memos  # the polish ran under the memo
    with monkeypatch.context() as m:
        m.setattr(modular, "remembered_verdicts", lambda problem: contextlib.nullcontext())
        plain_cost, plain = secondary_cost_of(seed, "MOD")
    np.testing.assert_array_equal(np.asarray(table.status), np.asarray(plain.status))
    assert cost == plain_cost
    assert attack(table) == []
