"""The insider audit runs once per problem, pattern and inputs (docs/design.md, D-57): a
repeated audit answers as a fresh audit of the same inputs would, anything changed — the
problem in place, the pattern, the respondents, the moves — is audited again, a cancelled
audit is never remembered, and what a caller gets is its own."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protect_helpers import sized_problem

from argusqt.errors import Cancelled
from argusqt.progress import CancelToken
from argusqt.protection.audit import insider
from argusqt.protection.audit.insider import insider_audit, respondents_of


def _problem(seed: int = 0):
    """A 1H2D problem with frequencies (so respondents) and a pattern: its primaries, its
    single-respondent cells (the insiders) and a seeded fifth of its candidates."""
    p = sized_problem("1H2D", 200, seed=seed)
    rng = np.random.default_rng(seed)
    resp = respondents_of(p)
    assert resp is not None
    alone = np.zeros(p.n_cells, dtype=bool)
    alone[resp.known.tocsr().indices] = True
    mask = p.primary | alone | (p.candidate & (rng.random(p.n_cells) < 0.2))
    return p, mask


def _facts(out) -> tuple:
    """Everything an outcome says, its time aside."""
    found = sorted((d.cell, d.respondent, d.lower, d.upper, d.known) for d in out.disclosures)
    return (found, out.attackers, out.unit, out.note, out.n_lps, out.available, out.ok)


def _fresh(problem, mask, **kw):
    """The audit itself, on a copy of the problem: no memory involved."""
    return insider._insider_audit(copy.deepcopy(problem), mask, **kw)


@pytest.fixture
def runs(monkeypatch):
    """The patterns the audit really ran on."""
    seen: list[bytes] = []
    audit = insider._insider_audit

    def counting(problem, suppressed, **kw):
        seen.append(np.packbits(np.asarray(suppressed, dtype=bool)).tobytes())
        return audit(problem, suppressed, **kw)

    monkeypatch.setattr(insider, "_insider_audit", counting)
    return seen


def test_the_same_audit_twice_runs_once_and_answers_as_a_fresh_audit(runs):
    p, mask = _problem()
    expected = _facts(_fresh(p, mask))
    runs.clear()
    first = insider_audit(p, mask)
    # the branch-and-cut passes the respondents it derived: the same inputs
    again = insider_audit(p, mask.copy(), respondents=respondents_of(p))
    assert len(runs) == 1
    assert _facts(first) == _facts(again) == expected
    assert first.attackers > 0  # the audit had work to do
    # a hit is the caller's own: changing it changes no later answer
    again.disclosures.clear()
    again.figures["x"] = 1
    assert _facts(insider_audit(p, mask)) == expected and len(runs) == 1


def test_a_changed_problem_pattern_or_input_is_audited_again(runs):
    p, mask = _problem(1)
    insider_audit(p, mask)
    other = mask.copy()
    other[np.flatnonzero(p.candidate & ~mask)[0]] = True
    insider_audit(p, other)
    assert len(runs) == 2
    prim = np.flatnonzero(p.primary)
    p.upl[prim[0]] *= 3.0  # the problem changed in place
    assert _facts(insider_audit(p, mask)) == _facts(_fresh(p, mask))
    assert len(runs) == 4  # (the fresh audit is the fourth)
    moves = [(np.array([int(prim[0])]), np.array([1.0]))]
    insider_audit(p, mask, moves=moves)
    assert len(runs) == 5
    resp = respondents_of(p)
    assert resp is not None
    fewer = type(resp)(resp.known[:-1], resp.exempt[:-1], resp.unit, resp.note)
    insider_audit(p, mask, respondents=fewer)
    assert len(runs) == 6


def test_a_cancelled_audit_is_not_remembered(runs):
    p, mask = _problem(2)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        insider_audit(p, mask, cancel=token)
    out = insider_audit(p, mask)
    assert len(runs) == 2
    assert _facts(out) == _facts(_fresh(p, mask))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 5),
    steps=st.lists(st.tuples(st.sampled_from(["audit", "change"]), st.integers(0, 3)), max_size=6),
)
def test_every_answer_is_the_fresh_audit_of_the_problem_as_it_is(seed, steps):
    """Patterns audited, repeated, and the problem's levels changed in place between them:
    each answer is that of an audit run on the problem as it is then."""
    p, mask = _problem(seed)
    free = np.flatnonzero(p.candidate & ~mask)
    prim = np.flatnonzero(p.primary)
    patterns = [mask]
    for k in range(3):
        extra = mask.copy()
        extra[free[k::4]] = True
        patterns.append(extra)
    for what, k in [("audit", 0), *steps, ("audit", 0)]:
        if what == "change":
            cell = prim[k % prim.size]  # wider levels: a primary safe before may not be
            p.lpl[cell] = 4.0 * p.lpl[cell] + 5.0
            p.upl[cell] = 4.0 * p.upl[cell] + 5.0
            continue
        assert _facts(insider_audit(p, patterns[k])) == _facts(_fresh(p, patterns[k]))


def test_an_opt_protect_audits_no_pattern_twice_with_the_same_inputs(monkeypatch):
    """Through the Session (start pattern, its repair, the branch-and-cut's check, the
    publication audit of the optimum): every insider audit that runs has inputs of its
    own, and the table is protected as before (the audit's verdict is the gate's)."""
    from protect_helpers import flat_codelist, hier_codelist, problem_from_table, table_from_leaves

    from argusqt.protection.audit.insider_memo import audit_key
    from argusqt.session import Session

    rng = np.random.default_rng(7)
    dims = [hier_codelist("h", [3, 3]), flat_codelist("c", 6)]
    shape = tuple(int(d.is_leaf.sum()) for d in dims)
    leaves = np.round(rng.lognormal(3.0, 1.0, size=shape)) + 1
    freq = rng.integers(1, 4, size=shape).astype(float)  # singletons: insiders to check
    t = table_from_leaves(dims, leaves, freq)
    cells = np.flatnonzero(t.freq > 0)
    prim = rng.choice(cells, size=max(2, cells.size // 10), replace=False)
    problem_from_table(t, prim, np.maximum(1.0, np.round(0.2 * t.value[prim])))
    keys: list[bytes] = []
    audit = insider._insider_audit

    def keyed(problem, suppressed, **kw):
        keys.append(
            audit_key(
                problem,
                suppressed,
                kw.get("respondents"),
                kw.get("lower"),
                kw.get("upper"),
                kw.get("moves"),
            )  # fmt: skip
        )
        return audit(problem, suppressed, **kw)

    monkeypatch.setattr(insider, "_insider_audit", keyed)
    s = Session()
    s.tables = [t]
    result = s.protect(1, "OPT")
    assert result.audit is not None and result.audit.ok
    assert len(keys) >= 2  # the publication audit and the branch-and-cut's check both ran
    assert len(set(keys)) == len(keys)
