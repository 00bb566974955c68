"""The outsider audit's components met again are replayed (outsider_memo, D-114): audits
sharing one memo give every bound, verdict and LP count the audits without it give, on
seeded patterns and their neighbours, exact and pass/fail, with other targets and hints."""

from __future__ import annotations

import numpy as np
import pytest
from test_floor_gather import _patterns
from test_floor_memo import _around

from argusqt.protection.audit import outsider_memo
from argusqt.protection.audit.outsider import audit, variable_components
from argusqt.protection.audit.outsider_memo import OutsiderMemo, remembered_components
from argusqt.protection.audit.publication import remembered_verdicts


def _same(a, b) -> None:
    for name in ("lower", "upper", "audited", "passed", "exact"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert a.n_lps == b.n_lps


def _neighbours(problem, patterns, seed):
    """The patterns, others a few cells away (secondaries published: some fail), and the
    same patterns again."""
    return _around(problem, patterns, seed, most=3)


def _hints(problem, sup, rng):
    """Attacker moves of some components (null-space vectors of their relations, scaled to
    stay inside the bounds) and one invalid move: the audit checks each."""
    rel = problem.relations_small.tocsr().toarray()
    values = np.asarray(problem.values, dtype=float)
    room = np.minimum(values - problem.lower, problem.upper - values)
    out = []
    for comp in variable_components(problem.relations_small, sup):
        if comp.rows.size == 0 or rng.random() < 0.4:
            continue
        a = rel[np.ix_(comp.rows, comp.cells)]
        _, s, vt = np.linalg.svd(a)
        null = vt[int((s > 1e-9).sum()) :]
        if null.shape[0] == 0:
            continue
        d = null[0]
        d[np.abs(d) < 1e-12] = 0.0
        big = np.abs(d).max()
        if big == 0:
            continue
        scale = float(np.min(room[comp.cells][d != 0] / np.abs(d[d != 0]))) * rng.uniform(0.3, 1)
        out.append((comp.cells, d * scale))
    out.append((np.array([0, 1]), np.array([1.0, 1.0])))  # relations broken: ignored
    return out


@pytest.mark.parametrize("seed", [2, 5, 6, 9])
def test_a_shared_memo_gives_what_each_audit_gives(monkeypatch, seed):
    problem, patterns = _patterns(monkeypatch, seed, "MOD")
    rng = np.random.default_rng(seed)
    with remembered_components(problem) as memo:
        for sup in _neighbours(problem, patterns, seed):
            hints = _hints(problem, sup, rng)
            some = problem.primary & (rng.random(problem.n_cells) < 0.5)
            for kw in (
                {"intervals": True},
                {"intervals": False},
                {"intervals": False, "hints": hints},
                {"intervals": False, "cells": some},
                {"intervals": True, "cells": some},
                {"intervals": False, "hints": hints, "cells": some},
            ):
                got = audit(problem, sup, **kw)
                token = outsider_memo.COMPONENTS.set(None)  # a fresh audit, no memo
                try:
                    plain = audit(problem, sup, **kw)
                finally:
                    outsider_memo.COMPONENTS.reset(token)
                _same(got, plain)
    assert memo.hits > 0
    assert any(not audit(problem, sup, intervals=True).ok for sup in _neighbours(
        problem, patterns, seed))  # fmt: skip


def test_published_intervals_and_other_problems_are_attacked_afresh(monkeypatch):
    problem, patterns = _patterns(monkeypatch, 2, "MOD")
    twin, _ = _patterns(monkeypatch, 2, "MOD")
    values = np.asarray(problem.values, dtype=float)
    sup = patterns[0]
    with remembered_components(problem) as memo:
        audit(problem, sup)
        hits = memo.hits
        lower = np.where(sup, values - 0.5 * (values - problem.lower), values)
        upper = np.where(sup, values + 0.5 * (problem.upper - values), values)
        audit(problem, sup, lower=lower, upper=upper)
        audit(twin, sup)
        assert memo.hits == hits  # neither served
        audit(problem, sup)
        assert memo.hits > hits


def test_the_polish_block_holds_one_memo_of_its_problem(monkeypatch):
    problem, patterns = _patterns(monkeypatch, 2, "MOD")
    assert outsider_memo.COMPONENTS.get() is None
    with remembered_verdicts(problem):
        memo = outsider_memo.COMPONENTS.get()
        assert isinstance(memo, OutsiderMemo) and memo.problem is problem
    assert outsider_memo.COMPONENTS.get() is None


def test_the_memo_is_bounded_by_a_count(monkeypatch):
    monkeypatch.setattr(outsider_memo, "MAX_COMPONENTS", 3)
    problem, patterns = _patterns(monkeypatch, 2, "MOD")
    with remembered_components(problem) as memo:
        for sup in patterns:
            audit(problem, sup)
        assert len(memo.seen) <= 3
