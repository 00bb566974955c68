"""MOD's pattern made publishable: insider repair, then the added cells it can spare
published again or replaced by cheaper ones (issue 15, goal 2; protection/modular_publish.py).

Judged by an auditor of its own (scipy's linprog over every relation, each respondent's own
cells fixed), which shares no code with the method or with the publication audit.
"""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import lp_publishable as independent_publishable
from protect_helpers import mixed_problem, patch_cancel_grace, sized_problem

from argusqt.model.status import is_suppressed
from argusqt.protection.audit.insider_repair import make_publishable
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.run import run_method
from argusqt.protection.suppress.heuristic import solve_heuristic
from argusqt.protection.suppress.modular_publish import publish


def _cost(p, mask) -> float:
    return float(np.asarray(p.cost, dtype=float)[mask & ~p.primary].sum())


@pytest.mark.slow
def test_publish_repairs_insiders_and_is_no_dearer_than_the_repair_of_record():
    n_repaired = 0
    ours = theirs = 0.0
    for seed in (1, 5, 8, 9):  # seeds whose HEUR pattern an insider breaks
        p = mixed_problem(seed)
        sup = is_suppressed(solve_heuristic(p).status) | p.primary
        before = publication_audit(p, sup, intervals=False)
        assert before.outsider.ok and not before.ok
        done = publish(p, sup, intervals=False)
        assert done.verdict.ok
        assert np.all(done.pattern[sup])  # only cells added, never a suppression undone
        assert done.added == int((done.pattern & ~sup).sum()) > 0
        assert independent_publishable(p, done.pattern)
        assert not independent_publishable(p, sup)
        fixed, _, _ = make_publishable(p, sup, intervals=False)
        assert _cost(p, done.pattern) <= _cost(p, fixed) + 1e-9
        ours += _cost(p, done.pattern)
        theirs += _cost(p, fixed)
        n_repaired += 1
    assert n_repaired == 4
    # was strictly cheaper (seeds 1, 5, 8); since D-91 (mod18) the repair of record puts back
    # the cells it added needlessly and reaches the same total here: no dearer is the claim
    assert ours <= theirs + 1e-9


def test_publish_leaves_a_publishable_pattern_alone():
    p = mixed_problem(0)
    sup = is_suppressed(solve_heuristic(p).status) | p.primary
    assert publication_audit(p, sup, intervals=False).ok
    done = publish(p, sup, intervals=True)
    assert done.added == 0 and np.array_equal(done.pattern, sup) and not done.lines
    assert done.verdict.ok


def test_publish_with_exact_intervals_gives_a_full_verdict():
    p = mixed_problem(1)
    sup = is_suppressed(solve_heuristic(p).status) | p.primary
    done = publish(p, sup, intervals=True)
    assert done.verdict.ok and done.verdict.outsider.lower.size == p.n_cells
    assert publication_audit(p, done.pattern, intervals=True).ok


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_large_table_mod_publishes_its_own_repaired_pattern(seed):
    # issue 15: on tables above POLISH_CELLS run_method repaired MOD's pattern for the
    # insiders after the method (b7290: +278 cells, 1.026 × HEUR's cost); MOD now does it
    # itself, cheaper, and run_method reuses that verdict instead of repairing again
    p = sized_problem("1H2D", 300, seed=seed)
    p.cost = np.abs(p.values)
    r = run_method(p, "MOD", {"polish": True, "polish_cells": 0})
    plain = run_method(p, "MOD", {"polish": False})  # the repair of record after MOD
    assert any(line.startswith("insider repair:") for line in r.log)
    assert not any("in addition" in line for line in r.log)
    assert any("in addition" in line for line in plain.log)
    assert r.verdict is not None and r.verdict.ok
    assert independent_publishable(p, is_suppressed(r.status))
    assert r.cost <= plain.cost + 1e-9


def test_publish_stops_when_cancelled():
    # a cancelled run publishes nothing of its own: run_method audits under its grace
    from argusqt.errors import Cancelled
    from argusqt.progress import CancelToken

    p = mixed_problem(1)
    sup = is_suppressed(solve_heuristic(p).status) | p.primary
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        publish(p, sup, intervals=False, cancel=token)


def test_swap_stops_at_its_lp_budget_and_stays_publishable(monkeypatch):
    import argusqt.protection.suppress.modular_publish as mp

    p = mixed_problem(1)
    sup = is_suppressed(solve_heuristic(p).status) | p.primary
    full = publish(p, sup, intervals=False)
    monkeypatch.setattr(mp, "SWAP_MIN_LPS", 0)
    monkeypatch.setattr(mp, "SWAP_LPS_PER_PAIR", 0)
    bare = publish(p, sup, intervals=False)  # the repair alone: no cell swapped
    assert "0 published again" in bare.lines[0]
    assert bare.verdict.ok and independent_publishable(p, bare.pattern)
    assert _cost(p, full.pattern) <= _cost(p, bare.pattern)


# seeds 1 and 4: the polish proves its pattern; seed 8: it stops at its LP budget
@pytest.mark.parametrize("seed", [1, 4, 8])
def test_small_table_mod_spares_the_modular_publication_when_its_polish_is_proven(
    monkeypatch, seed
):
    # D-48: the whole-table branch-and-cut runs from the modular pattern itself; when it
    # proves its pattern optimal (insiders inside the proof) the modular pattern is not made
    # publishable as well: no publishable pattern is cheaper than that proof's
    import argusqt.protection.suppress.modular as modular

    p = mixed_problem(seed)
    seen: dict[str, list] = {"modular": [], "published": [], "optimal": []}
    real_polish = modular._polish
    real_publish = modular.publish_cheaply
    real_solve = modular.solve_pattern

    def polish(problem, sup, *args, **kw):
        seen["modular"].append(sup.copy())
        return real_polish(problem, sup, *args, **kw)

    def publish_spy(problem, pattern, **kw):
        seen["published"].append(pattern.copy())
        return real_publish(problem, pattern, **kw)

    def solve(*args, **kw):
        out = real_solve(*args, **kw)
        if kw.get("insiders") is not None:
            seen["optimal"].append(out.optimal)
        return out

    monkeypatch.setattr(modular, "_polish", polish)
    monkeypatch.setattr(modular, "publish_cheaply", publish_spy)
    monkeypatch.setattr(modular, "solve_pattern", solve)
    r = run_method(p, "MOD", {"polish": True})
    assert r.verdict is not None and r.verdict.ok
    mask = is_suppressed(r.status)
    assert independent_publishable(p, mask)
    (sup,) = seen["modular"]
    proven = seen["optimal"] == [True]
    # the modular pattern is published only when no proof spares it
    modular_published = any(np.array_equal(x, sup) for x in seen["published"])
    assert modular_published != proven
    # never dearer than the modular pattern made publishable (the former last step)
    alone = publish(p, sup, intervals=False)
    assert alone.verdict.ok and independent_publishable(p, alone.pattern)
    assert _cost(p, mask) <= _cost(p, alone.pattern) + 1e-6 * max(1.0, _cost(p, mask))


def _intervals(problem, mask: np.ndarray, cell: int) -> tuple[float, float]:
    """The outside attacker's exact interval of one cell (scipy's linprog, every relation)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    m = sp.csr_matrix(problem.relations)
    a = problem.values
    bounds = np.c_[np.where(mask, problem.lower, a), np.where(mask, problem.upper, a)]
    out = []
    for sense in (1.0, -1.0):
        c = np.zeros(a.size)
        c[cell] = sense
        r = linprog(c, A_eq=m, b_eq=np.zeros(m.shape[0]), bounds=bounds, method="highs")
        assert r.status == 0
        out.append(sense * r.fun)
    return out[0], out[1]


@pytest.mark.parametrize("seed", [1, 8])  # the polish proves its pattern (1) or stops (8)
def test_small_table_mod_leaves_the_exact_intervals_to_the_verdict(monkeypatch, seed):
    # D-48: before the polish the modular pattern is audited pass/fail only (its witnesses
    # decide that without LPs); the intervals of record are the publication verdict's
    import argusqt.protection.suppress.modular as modular

    asked = []
    real = modular.audit

    def spy(*args, **kw):
        asked.append(kw.get("intervals"))
        return real(*args, **kw)

    monkeypatch.setattr(modular, "audit", spy)
    p = mixed_problem(seed)
    r = run_method(p, "MOD", {"polish": True, "audit_intervals": True})
    assert asked and not any(asked)
    assert r.verdict is not None and r.verdict.ok and r.audit_exact
    mask = is_suppressed(r.status)
    assert independent_publishable(p, mask)
    scale = max(1.0, float(np.abs(p.values).max()))
    for cell in np.flatnonzero(p.primary & mask).tolist():
        lo, hi = _intervals(p, mask, cell)
        assert r.audit.lower[cell] == pytest.approx(lo, abs=1e-6 * scale)
        assert r.audit.upper[cell] == pytest.approx(hi, abs=1e-6 * scale)


def test_a_cancel_during_the_polish_still_publishes_the_modular_pattern(monkeypatch):
    # D-48: the modular pattern is made publishable after the polish's branch-and-cut; a
    # cancel (or the run's limit) during that search leaves it the cancel's grace, as when
    # its publication came first
    import argusqt.protection.suppress.modular as modular
    from argusqt.progress import CancelToken

    patch_cancel_grace(monkeypatch, 600.0)  # the grace is not what this test is about
    token = CancelToken()
    real = modular.solve_pattern

    def solve(*args, **kw):
        out = real(*args, **kw)
        if kw.get("insiders") is not None:
            token.cancel()  # the user cancels while the polish searches
        return out

    monkeypatch.setattr(modular, "solve_pattern", solve)
    p = mixed_problem(1)
    r = run_method(p, "MOD", {"polish": True}, cancel=token)
    line = next(x for x in r.log if x.startswith("whole table:"))
    assert line.startswith("whole table: modular") and "kept the modular pattern" in line
    assert r.verdict is not None and r.verdict.ok
    assert independent_publishable(p, is_suppressed(r.status))
