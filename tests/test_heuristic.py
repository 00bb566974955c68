"""Heuristic + cleanup (argusqt/docs/methods.md §4) and the method dispatcher (run_method)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from protect_helpers import cell_id, problem_2d, random_1h2d, random_2d, random_3d, sized_problem

from argusqt.errors import AuditError, MethodError, TimeLimitError
from argusqt.model.status import is_suppressed
from argusqt.progress import CancelToken
from argusqt.protection.audit.outsider import audit
from argusqt.protection.core.result import TIME_LIMIT_DECIDED, ProtectionResult
from argusqt.protection.lp.cleanup import cleanup
from argusqt.protection.run import run_method
from argusqt.protection.suppress.heuristic import solve_heuristic

EX1 = [[895, 137], [753, 973], [569, 486], [540, 793]]
EX2 = [[1938.79, 189.40], [1476.06, 1998.80], [1192.16, 1057.36], [1118.06, 1514.32]]


def _ex1_manual_status():
    """E8: status column S/U → every cell 2 (safe manual), (A,female) 9 with PL 1."""
    p = problem_2d(EX1, [(1, 2)], 1.0)
    status = np.full(p.n_cells, 2, dtype=p.status.dtype)
    status[cell_id(p, 1, 2)] = 9
    p.status = status
    return p


def test_e8_heuristic_finds_the_optimal_rectangle():
    p = _ex1_manual_status()
    res = run_method(p, "HEUR", {})
    s = res.status
    expected_x = {cell_id(p, 1, 1), cell_id(p, 3, 1), cell_id(p, 3, 2)}
    assert set(np.flatnonzero(s == 12)) == expected_x  # secondaries of safe-manual cells → 12
    assert s[cell_id(p, 1, 2)] == 9
    assert res.cost == pytest.approx(1950)
    assert res.audit is not None and res.audit.ok
    assert res.audit.lower[cell_id(p, 1, 2)] == pytest.approx(0)
    assert res.audit.upper[cell_id(p, 1, 2)] == pytest.approx(623)


def test_e9_heuristic_with_decimals():
    p = problem_2d(EX2, [(1, 2)], 22.404)
    p.decimals = 2
    res = run_method(p, "HEUR", {})
    sec = set(np.flatnonzero(res.status == 11))
    assert sec == {cell_id(p, 1, 1), cell_id(p, 3, 1), cell_id(p, 3, 2)}
    assert res.cost == pytest.approx(4188.31)
    assert res.audit.upper[cell_id(p, 1, 2)] == pytest.approx(1246.76, abs=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: random_2d(rng, 8, 7),
        lambda rng: random_1h2d(rng, [3, 3], 6),
        lambda rng: random_3d(rng, [2, 2], [2, 2], 4),
    ],
    ids=["2D", "1H2D", "3D"],
)
def test_random_patterns_pass_the_audit_and_are_irredundant_locally(make):
    rng = np.random.default_rng(11)
    p = make(rng)
    res = solve_heuristic(p, {})
    sup = is_suppressed(res.status)
    assert sup[p.primary].all()
    verdict = audit(p, sup)
    assert verdict.ok
    # cleanup: removing any single secondary breaks the protection (small tables: full check)
    sec = np.flatnonzero(sup & ~p.primary)
    for s in sec[:15]:
        trial = sup.copy()
        trial[s] = False
        assert not audit(p, trial, intervals=False).ok, f"secondary {s} is redundant"


def test_cleanup_removes_redundant_cells():
    # E8 with extra, unnecessary suppressions: the whole row B and column totals
    p = problem_2d(EX1, [(1, 2)], 1.0)
    sup = np.zeros(p.n_cells, dtype=bool)
    for c in [(1, 2), (1, 1), (3, 1), (3, 2), (2, 1), (2, 2), (2, 0), (0, 1)]:
        sup[cell_id(p, *c)] = True
    assert audit(p, sup).ok
    out, info = cleanup(p, sup)
    assert audit(p, out).ok
    assert info["removed"] >= 3
    assert out[p.primary].all()
    cost = p.cost[out & ~p.primary].sum()
    assert cost <= p.cost[sup & ~p.primary].sum() - 1726  # at least row B's cells went


def test_cancel_returns_safe_pattern_without_cleanup():
    rng = np.random.default_rng(5)
    p = random_2d(rng, 10, 10)
    token = CancelToken()
    token.cancel()
    res = solve_heuristic(p, {}, cancel=token)
    assert res.cancelled
    assert audit(p, is_suppressed(res.status)).ok
    full = solve_heuristic(p, {})
    assert full.cost <= res.cost + 1e-9


def test_unprotectable_primary_is_a_method_error():
    p = problem_2d([[5, 5], [5, 5]], [(1, 1)], 1.0)
    p.status[:] = 10  # everything protected except the primary
    p.status[cell_id(p, 1, 1)] = 3
    with pytest.raises(MethodError, match="cannot be protected"):
        solve_heuristic(p, {})


def test_run_method_rejects_unknown_methods():
    p = problem_2d(EX1, [(1, 2)], 1.0)
    with pytest.raises(MethodError, match="unknown protection method"):
        run_method(p, "XYZ", {})


def test_failed_audit_is_loud(monkeypatch):
    # a fake method that only suppresses the primary: run_method must refuse it
    import dataclasses

    from argusqt.protection.core import registry

    def solve_fake(problem, params, progress, cancel):
        return ProtectionResult(method="OPT", status=problem.status.copy())

    fake = dataclasses.replace(registry.get("OPT"), solve=solve_fake)
    monkeypatch.setitem(registry._REGISTRY, "OPT", fake)
    with pytest.raises(AuditError, match="AUDIT FAILED"):
        run_method(problem_2d(EX1, [(1, 2)], 1.0), "OPT", {})


def test_status_mapping_13_to_11():
    p = problem_2d(EX1, [(1, 2)], 1.0)
    p.status[cell_id(p, 1, 1)] = 13
    res = run_method(p, "HEUR", {})
    assert res.status[cell_id(p, 1, 1)] == 11
    assert set(np.unique(res.status)) <= {1, 3, 11}


def test_3d_900_cells_timing():
    rng = np.random.default_rng(2)
    p = random_3d(rng, [2, 3], [2, 3], 10)
    t0 = time.perf_counter()
    res = solve_heuristic(p, {"cleanup_time": 5.0})
    elapsed = time.perf_counter() - t0
    print(f"HEUR on {p.n_cells} cells, {int(p.primary.sum())} primaries: {elapsed:.1f} s")
    assert audit(p, is_suppressed(res.status), intervals=False).ok


def test_run_method_reuses_identical_pass_fail_audit_only():
    rng = np.random.default_rng(9)
    p = random_2d(rng, 6, 6)
    # (singleton options off: virtual cells make the method audit another problem)
    off = {"singleton_singleton": False, "singleton_multiple": False}
    quick = run_method(p, "HEUR", {"audit_intervals": False, **off})
    assert any("own pass/fail audit" in line for line in quick.log)
    assert quick.audit.ok
    exact = run_method(p, "HEUR", {"audit_intervals": True, **off})
    assert not any("own pass/fail audit" in line for line in exact.log)
    sup = is_suppressed(exact.status)
    prim = np.flatnonzero(p.primary)
    assert np.all(exact.audit.lower[prim] <= p.values[prim] - p.lpl[prim] + 0.5)
    assert np.all(exact.audit.upper[prim] >= p.values[prim] + p.upl[prim] - 0.5)
    assert exact.audit.audited.sum() == (sup & p.primary).sum()


def test_complete_pattern_repairs_a_failing_pattern():
    from argusqt.protection.lp.protector import complete_pattern

    p = problem_2d(EX1, [(1, 2)], 1.0)
    bad = np.zeros(p.n_cells, dtype=bool)
    for c in [(1, 2), (1, 1), (3, 2)]:  # E13's x*: (A,f) exactly disclosed
        bad[cell_id(p, *c)] = True
    assert not audit(p, bad).ok
    fixed = complete_pattern(p, bad)
    assert fixed[bad].all()
    assert audit(p, fixed).ok
    assert fixed[cell_id(p, 3, 1)]  # the cheapest completion: (C,male)


def test_batch_time_limit_reaches_the_heuristic(monkeypatch):
    # regression: HEUR(1, 0.01) logged max_time=0.6 and ran 38 s: the batch parameters give
    # "max_time" (every method's name) but the heuristic read "time_limit" only
    import argusqt.protection.core.budget as budget
    from argusqt.protection.core import registry

    heur = registry.get("HEUR")
    params = heur.options_for(heur.params(max_minutes=0.01), _facts())
    assert params.max_time == pytest.approx(0.6)

    class Jumping:  # every clock reading is 10 s later: the 0.6 s are gone at once
        now = 0.0

        def __call__(self):
            Jumping.now += 10.0
            return Jumping.now

    monkeypatch.setattr(budget, "CLOCK", Jumping())
    p = random_3d(np.random.default_rng(2), [2, 3], [2, 3], 6)
    # past the limit and its grace there is no pattern in time: a clear refusal (issue 22)
    with pytest.raises(TimeLimitError, match=r"HEUR: the time limit of 0.6 CPU-s .*left unchanged"):
        run_method(p, "HEUR", params)
    # within the grace (here endless) every primary is still protected, in a hurry, and the
    # result says that the time limit decided
    monkeypatch.setattr(budget, "GRACE_MIN", 1e12)
    res = run_method(p, "HEUR", params)
    assert res.timed_out and TIME_LIMIT_DECIDED in res.log
    assert any("time limit reached while protecting" in line for line in res.log)
    assert any("stopped early" in line for line in res.log)  # no clean-up after the limit
    assert audit(p, is_suppressed(res.status), intervals=False).ok  # still every primary safe


def _facts():
    """A table without a FREQ rule, as a method's options see it."""
    from argusqt.protection.core.params import TableFacts

    return TableFacts(1, 100, 3, True, None, 1)


def test_cleanup_stops_at_its_lp_budget_with_a_safe_pattern():
    # regression (issue 15): HEUR's clean-up ran 1,113 s of a 1,219 s run on a 99,789-cell
    # table; it is bounded by an LP count (the same pattern on every run), not only by time
    p = sized_problem("3D", 600, seed=3)
    sup = is_suppressed(solve_heuristic(p, {"cleanup": False}).status)
    sup |= np.asarray(p.candidate) & (np.arange(p.n_cells) % 3 == 0)  # redundant extras
    assert audit(p, sup, intervals=False).ok
    full, info_full = cleanup(p, sup)
    budget = info_full["lps"] // 3
    part, info = cleanup(p, sup, max_lps=budget)
    again, _ = cleanup(p, sup, max_lps=budget)
    assert info["stopped"] == "LP budget"
    assert info["lps"] < info_full["lps"]
    assert np.array_equal(part, again)  # an LP budget, not seconds: reproducible
    assert audit(p, part, intervals=False).ok
    assert info["removed"] <= info_full["removed"]


def test_heuristic_passes_its_cleanup_budget_on():
    p = sized_problem("3D", 600, seed=3)
    res = solve_heuristic(p, {"cleanup_lps": 1})
    assert any("stopped early (LP budget)" in line for line in res.log)
    assert audit(p, is_suppressed(res.status), intervals=False).ok
