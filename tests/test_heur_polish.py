"""HEUR's small-table polish (heur_polish) and the clean-up's kept moves (cleanup.py)."""

from __future__ import annotations

import numpy as np
from protect_helpers import flat_codelist, hier_codelist, random_problem, sized_problem

from argusqt.model.status import is_suppressed
from argusqt.progress import CancelToken
from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.audit.outsider import audit
from argusqt.protection.core import registry
from argusqt.protection.lp.cleanup import Witnesses, _likely_failures_first, cleanup
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.protection.run import run_method
from argusqt.protection.suppress.heuristic import solve_heuristic


def _random_set_table_3():
    """Table 3 of benchmarks/bench_random_set.py: the repaired heuristic pattern costs 627,
    the cheapest publishable one 450."""
    rng = np.random.default_rng(3)
    dims = [hier_codelist("h", [4, 4]), flat_codelist("c", 8)]
    share = float(rng.uniform(0.08, 0.25))
    p = random_problem(rng, dims, primary_share=share, zero_share=float(rng.uniform(0, 0.1)))
    p.cost = np.abs(p.values)
    return p


def _publishable(p, status) -> bool:
    sup = is_suppressed(status)
    return audit(p, sup).ok and not insider_audit(p, sup).disclosures


def test_polish_finds_a_cheaper_publishable_pattern():
    p = _random_set_table_3()
    plain = run_method(p, "HEUR", {"polish": 0})
    # a generous polish budget: the branch-and-cut stops when it proves optimality
    polished = run_method(p, "HEUR", {"polish": 300})
    assert not any("polish" in line for line in plain.log)
    assert polished.cost < plain.cost - 1e-6
    assert any("kept the branch-and-cut pattern" in line for line in polished.log)
    assert polished.verdict is not None and polished.verdict.ok
    assert _publishable(p, polished.status) and _publishable(p, plain.status)
    cost = np.asarray(p.cost)[is_suppressed(polished.status) & ~p.primary].sum()
    assert polished.cost == np.float64(cost)


def test_polished_verdict_is_not_taken_again(monkeypatch):
    """The polish's verdict (exact intervals on small tables, as run_method's "auto") is the
    publication verdict: run_method does not audit the same pattern a second time."""
    import argusqt.protection.run as methods

    calls = []
    real = methods.make_publishable
    monkeypatch.setattr(
        methods, "make_publishable", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    p = _random_set_table_3()
    res = run_method(p, "HEUR", {"polish": 300})
    assert calls == []
    assert res.verdict.ok and res.audit.ok
    sup = is_suppressed(res.status)
    assert res.figures["audit_exact"] and _publishable(p, res.status)
    fresh = audit(p, sup)  # exact intervals, the same as the kept verdict's
    assert np.allclose(fresh.lower[sup], res.audit.lower[sup], equal_nan=True)
    assert np.allclose(fresh.upper[sup], res.audit.upper[sup], equal_nan=True)


def test_opt_start_pattern_path_has_no_polish():
    """OPT's start pattern calls solve_heuristic: it must stay the plain heuristic."""
    p = _random_set_table_3()
    res = solve_heuristic(p, {})
    assert not any("polish" in line for line in res.log)
    assert registry.get("HEUR").singletons == "method"


def test_cancel_in_the_polish_returns_a_publishable_pattern():
    p = _random_set_table_3()
    token = CancelToken()

    def progress(ev):
        if "branch-and-cut from its pattern" in (ev.message or ""):
            token.cancel()

    res = run_method(p, "HEUR", {"polish": 300}, progress=progress, cancel=token)
    assert token.cancelled
    assert _publishable(p, res.status)


def test_large_tables_are_not_polished():
    p = sized_problem("2D", 2500, seed=3)
    res = run_method(p, "HEUR", {"polish": 300})
    assert p.n_cells > 2000
    assert not any("polish" in line for line in res.log)
    assert audit(p, is_suppressed(res.status)).ok


def test_cleanup_reuses_kept_moves_and_stays_protected():
    p = sized_problem("3D", 1500, seed=2)
    plain = solve_heuristic(p, {"cleanup": False})
    sup = is_suppressed(plain.status)
    out, info = cleanup(p, sup)
    assert info["reused"] > 0  # pairs proved again by a kept move, without an LP
    assert info["removed"] > 0
    assert audit(p, out).ok
    assert not (out & ~sup).any()


def test_other_proof_skips_moves_through_published_cells():
    p = sized_problem("2D", 30, seed=1)
    ctx = MoveContext(p)
    prim = int(np.flatnonzero(p.primary)[0])
    wit = Witnesses()
    sup = p.primary.copy()
    found = ctx.path_move(prim, UP, np.arange(p.n_cells), np.ones(p.n_cells))
    assert found is not None
    cells = np.flatnonzero(found)
    mid = wit.record(cells, found[cells], ctx)
    assert (prim, UP) in wit.proves_of(mid)
    sup[cells] = True
    assert wit.other_proof((prim, UP), sup) == mid
    other = int(cells[cells != prim][0])
    sup[other] = False  # the move needs a cell that is published now
    assert wit.other_proof((prim, UP), sup) is None
    assert wit.other_proof((prim, DOWN), sup) is None or (prim, DOWN) in wit.proves_of(mid)


def test_pairs_next_to_the_published_cell_are_checked_first():
    p = sized_problem("2D", 30, seed=1)
    ctx = MoveContext(p)
    rel = p.relations.tocsr()
    s = 0  # the grand total: every marginal shares a relation with it
    rows = ctx.mcsc.indices[ctx.mcsc.indptr[s] : ctx.mcsc.indptr[s + 1]]
    near = set(np.concatenate([rel.indices[rel.indptr[r] : rel.indptr[r + 1]] for r in rows]))
    far = [c for c in range(p.n_cells) if c not in near][:3]
    close = [c for c in near if c != s][:3]
    pairs = {(c, UP) for c in far} | {(c, DOWN) for c in close}
    ordered = _likely_failures_first(s, pairs, rel, ctx.mcsc)
    assert sorted(ordered) == sorted(pairs)
    assert {k[0] for k in ordered[: len(close)]} == set(close)


def test_polish_stopped_at_its_work_limit_gives_the_same_pattern(monkeypatch):
    """HEUR is repeatable: the polish stops at a node count, not at a time, so a slow run (a
    loaded machine: a clock twice as fast, a progress callback that sleeps) gives the same
    statuses as a quick one when the work limit, not a proof, ends the branch-and-cut."""
    import time

    import argusqt.protection.core.budget as budget

    p = _random_set_table_3()
    params = {"polish_nodes": 2, "polish": 300, "max_time": 3600}
    quick = run_method(p, "HEUR", params)
    assert any("stopped at its work limit of 2 SCIP nodes" in line for line in quick.log)

    real = time.perf_counter
    start = real()
    monkeypatch.setattr(budget, "CLOCK", lambda: start + 2.0 * (real() - start))
    slow = run_method(p, "HEUR", params, progress=lambda ev: time.sleep(0.002))
    assert any("stopped at its work limit of 2 SCIP nodes" in line for line in slow.log)
    assert np.array_equal(quick.status, slow.status)
    assert quick.cost == slow.cost
    assert _publishable(p, slow.status)


def test_a_polish_the_clock_stops_keeps_the_heuristic_pattern(monkeypatch):
    """Without a time limit from the user, a branch-and-cut pattern the clock chose (which
    differs with the machine's load) is not used: HEUR keeps its repaired pattern, so a session
    or batch replay gives the same statuses. With the user's limit the clock may decide."""
    import argusqt.protection.suppress.heur_polish as heur_polish

    real = heur_polish.solve_pattern

    def clock_stopped(*args, **kwargs):
        out = real(*args, **kwargs)
        out.timed_out, out.optimal = True, False
        return out

    def no_pattern(*args, **kwargs):
        out = real(*args, **kwargs)
        out.mask = None
        return out

    p = _random_set_table_3()
    monkeypatch.setattr(heur_polish, "solve_pattern", no_pattern)
    heuristic_only = run_method(p, "HEUR", {})
    monkeypatch.setattr(heur_polish, "solve_pattern", clock_stopped)
    stopped = run_method(p, "HEUR", {})
    assert any("clock's pattern is not used" in line for line in stopped.log)
    assert np.array_equal(stopped.status, heuristic_only.status)
    assert _publishable(p, stopped.status)
    # the user's own time limit: the (cheaper) branch-and-cut pattern is taken
    limited = run_method(p, "HEUR", {"max_time": 3600})
    assert not any("clock's pattern is not used" in line for line in limited.log)
    assert limited.cost < stopped.cost
    assert _publishable(p, limited.status)
