"""Modular (HiTaS, argusqt/docs/methods.md §6): subtables, order, full-audit safety, equality
with OPT when flat."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import (
    flat_codelist,
    hier_codelist,
    lp_protected,
    problem_from_table,
    random_1h2d,
    random_2d,
    random_problem,
    table_from_leaves,
)

from argusqt.errors import MethodError
from argusqt.progress import CancelToken
from argusqt.protection.suppress.modular import repair, solve_modular, subtables
from argusqt.protection.suppress.optimal import solve_optimal


def _suppressed(result) -> np.ndarray:
    s = result.status
    return (s >= 3) & (s <= 12) & (s != 10)


def test_subtables_order_and_margins():
    dims = [hier_codelist("h", [2, 3]), flat_codelist("c", 3)]
    subs = subtables(dims)
    # parents of h: total + 2 level-1 nodes; c flat: total only → 3 subtables
    assert len(subs) == 3
    assert subs[0].parents == (0, 0) and subs[0].depth == 0
    assert [s.depth for s in subs] == sorted(s.depth for s in subs)
    top = subs[0]
    assert not top.margin.any()  # the top subtable's margins are its own cells
    deeper = subs[1]
    assert deeper.shape == (4, 4)
    # the level-1 row of a deeper subtable is a fixed margin
    assert deeper.margin.reshape(deeper.shape)[0].all()
    assert not deeper.margin.reshape(deeper.shape)[1:].any()
    # every cell is free (interior or a root margin) in exactly one subtable
    n = int(np.prod([len(d) for d in dims]))
    count = np.zeros(n, dtype=int)
    for s in subs:
        np.add.at(count, s.cells[~s.margin], 1)
    assert (count == 1).all()


@pytest.mark.parametrize("seed", range(3))
def test_flat_table_equals_optimal(seed):
    p = random_2d(np.random.default_rng(seed), 4, 4)
    p.cost = np.abs(p.values)
    # gap 0: MOD's subtables default to a 1 % gap, equality needs proven optima
    mod = solve_modular(p, {"max_time_per_subtable": 30, "gap": 0.0})
    opt = solve_optimal(p, {"max_time": 30})
    assert mod.cost == pytest.approx(opt.cost)
    assert mod.audit.ok and lp_protected(p, _suppressed(mod))


@pytest.mark.parametrize("seed", range(4))
def test_1h2d_passes_full_audit(seed):
    p = random_1h2d(np.random.default_rng(10 + seed), [3, 2], 4)
    p.cost = np.abs(p.values)
    r = solve_modular(p, {"max_time_per_subtable": 20})
    assert r.method == "MOD"
    assert r.audit is not None and r.audit.ok
    assert lp_protected(p, _suppressed(r))
    assert (r.status[p.primary] == p.status[p.primary]).all()
    assert r.cost >= solve_optimal(p, {"max_time": 30}).cost - 1e-6  # OPT is a lower bound


@pytest.mark.parametrize("seed", range(3))
def test_2h2d_passes_full_audit(seed):
    rng = np.random.default_rng(20 + seed)
    dims = [hier_codelist("a", [2, 2]), hier_codelist("b", [2, 3])]
    p = random_problem(rng, dims, primary_share=0.15)
    p.cost = np.abs(p.values)
    r = solve_modular(p, {"max_time_per_subtable": 20, "singleton_multiple": True})
    assert r.audit.ok
    assert lp_protected(p, _suppressed(r))
    assert r.figures["subtables"] == 3 * 3


def test_repair_protects_an_unprotected_pattern():
    p = random_1h2d(np.random.default_rng(5), [2, 2], 3)
    p.cost = np.abs(p.values)
    sup = p.primary.copy()  # primaries alone: not protected
    assert not lp_protected(p, sup)
    fixed, rounds = repair(p, sup)
    assert rounds >= 1 and (fixed >= sup).all()
    assert lp_protected(p, fixed)


def test_cancelled_modular_still_returns_a_safe_pattern():
    p = random_1h2d(np.random.default_rng(7), [3, 3], 5)
    p.cost = np.abs(p.values)
    token = CancelToken()
    token.cancel()
    r = solve_modular(p, {}, cancel=token)
    assert r.cancelled and r.audit.ok
    assert lp_protected(p, _suppressed(r))


def test_needs_dimensions():
    p = random_2d(np.random.default_rng(0), 2, 2)
    p.dims = None
    with pytest.raises(MethodError):
        solve_modular(p)


def test_backtracking_suppresses_a_margin_when_the_subtable_needs_it():
    # region 01 = {0101, 0102}; (0102, c1) is empty, so the primary (0101, c1) can only be
    # protected in its column through the margin (01, c1), published by the top subtable
    dims = [hier_codelist("h", [2, 2]), flat_codelist("c", 2)]
    leaves = np.array([[20.0, 30.0], [0.0, 25.0], [40.0, 35.0], [28.0, 33.0]])
    freq = np.where(leaves > 0, 5.0, 0.0)
    table = table_from_leaves(dims, leaves, freq)
    prim = np.array([table.cell_index((2, 1))])
    p = problem_from_table(table, prim, 4.0)
    p.cost = np.abs(p.values)
    assert p.status[table.cell_index((3, 1))] == 14
    r = solve_modular(p, {"max_time_per_subtable": 20})
    assert any("backtracking" in line for line in r.log)
    assert r.status[table.cell_index((1, 1))] in (11, 12)  # the margin (01, c1)
    assert r.audit.ok and lp_protected(p, _suppressed(r))


def test_modular_through_run_method_with_singleton_option():
    # argusqt/docs/methods.md §5 (manual §2.10): row A holds a singleton and a p%-unsafe cell; SM
    # forces a third suppression in row A, whether the virtual cell comes from run_method or the
    # subtable
    from argusqt.protection.run import run_method
    from argusqt.protection.suppress.modular import solve_modular

    dims = [flat_codelist("r", 2), flat_codelist("c", 4)]
    leaves = np.array([[52, 15, 62, 17], [24, 18, 31, 8]], dtype=float)
    freq = np.array([[6, 1, 7, 3], [5, 4, 6, 4]], dtype=float)
    table = table_from_leaves(dims, leaves, freq)
    prim = np.array([table.cell_index((1, 2)), table.cell_index((1, 4))])
    p = problem_from_table(table, prim, np.array([2.0, 2.0]))
    p.cost = np.abs(p.values)
    row_a = [table.cell_index((1, j)) for j in range(5)]
    plain = solve_modular(p, {"max_time_per_subtable": 20})  # no singleton option
    assert sum(plain.status[i] not in (1, 2) for i in row_a) == 2
    # run_method: singleton options on by default, so the third cell is there as well
    r = run_method(p, "MOD", {"max_time_per_subtable": 20})
    assert sum(r.status[i] not in (1, 2) for i in row_a) >= 3 and r.verdict.ok
    for params in ({"singleton_singleton": False}, {"singleton_multiple": True}):
        r = run_method(p, "MOD", {"max_time_per_subtable": 20, **params})
        assert r.status.shape == p.status.shape
        assert sum(r.status[i] not in (1, 2) for i in row_a) >= 3
        assert r.audit.ok


@pytest.mark.parametrize("seed", range(3))
def test_path_subtable_start_is_protected_and_keeps_fixed_cells(seed):
    from argusqt.protection.lp.separation import Separator
    from argusqt.protection.suppress.modular import _path_start, _subproblem

    p = random_1h2d(np.random.default_rng(seed), [3, 3], 4)
    sub = subtables(p.dims)[1]
    sup = p.primary | p.secondary
    local, fixed, _ = _subproblem(p, sub, sup, p.primary.copy())
    assert local.primary.any()
    start = _path_start(local, fixed)
    assert start is not None
    assert Separator(local, fixed).is_protected(start.astype(float))
    assert not start[fixed == 0].any() and start[fixed == 1].all()


class _FastClock:
    """A clock that jumps `step` seconds at every reading: deadlines pass without waiting."""

    def __init__(self, step: float):
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_subtable_time_limit_bounds_the_start_pattern(monkeypatch):
    # regression: the greedy start ran unbounded before the branch-and-cut got the whole
    # per-subtable limit ("subtable (1, 0, 0): 1847.1 s" under a 1-minute limit); its
    # successor, the path-LP start, stops at the deadline too
    import argusqt.protection.core.budget as budget
    import argusqt.protection.suppress.modular as modular
    from argusqt.protection.lp.components import MoveContext

    p = random_1h2d(np.random.default_rng(3), [3, 2], 4)
    p.cost = np.abs(p.values)
    moves = []
    given = []
    real_move = MoveContext.path_move
    real_solve = modular.solve_pattern

    def counting_move(self, *a, **kw):
        moves.append(1)
        return real_move(self, *a, **kw)

    def spying_solve(*a, **kw):
        given.append(kw["max_time"])
        return real_solve(*a, **kw)

    monkeypatch.setattr(MoveContext, "path_move", counting_move)
    monkeypatch.setattr(modular, "solve_pattern", spying_solve)
    # every clock reading is 100 s later: each subtable's 60 s are gone at once
    monkeypatch.setattr(budget, "CLOCK", _FastClock(100.0))
    start = modular._path_start(*_first_subproblem(p), budget.Deadline(60.0))
    assert start is None and not moves  # no path LP after the deadline
    r = solve_modular(p, {"max_time_per_subtable": 60})
    assert not given  # no time left for any branch-and-cut
    assert r.audit.ok and lp_protected(p, _suppressed(r))


def test_branch_and_cut_budget_is_shared_by_the_subtables(monkeypatch):
    # MOD's branch-and-cut work (attacker LPs, a count: issue 22) is one budget for all
    # subtables, not a full budget each; what a subtable leaves rolls on
    import argusqt.protection.suppress.modular as modular

    p = random_1h2d(np.random.default_rng(3), [3, 2], 4)
    given = []
    real_solve = modular.solve_pattern

    def spying_solve(*a, **kw):
        out = real_solve(*a, **kw)
        given.append((kw["max_lps"], out.lps))
        return out

    monkeypatch.setattr(modular, "solve_pattern", spying_solve)
    r = solve_modular(p, {"max_time_per_subtable": 60, "scip_lps": 40})
    assert given and all(share <= 40 for share, _ in given)
    # a share is what is left divided among the subtables still to come
    assert sum(used for _, used in given) <= 40 + max(used for _, used in given)
    assert r.figures["scip_lps"] == sum(used for _, used in given)
    assert r.audit.ok and lp_protected(p, _suppressed(r))


def _first_subproblem(p):
    """(local problem, fixed) of the top subtable of p, as MOD builds it."""
    from argusqt.protection.suppress.modular import _subproblem

    sub = subtables(p.dims)[0]
    local, fixed, _ = _subproblem(p, sub, p.primary.copy(), p.primary.copy())
    return local, fixed


def test_small_table_ends_with_the_cheaper_publishable_pattern():
    # MOD's last step on small tables: the whole-table branch-and-cut from the modular
    # pattern, both made publishable (insider repair), the cheaper one kept with its verdict,
    # which run_method then uses instead of auditing again
    from argusqt.protection.run import run_method

    p = random_1h2d(np.random.default_rng(5), [3, 3], 4)
    r = run_method(p, "MOD", {"max_time_per_subtable": 20, "polish": True})
    line = next(x for x in r.log if x.startswith("whole table:"))
    assert "kept the" in line
    assert r.verdict is not None and r.verdict.ok
    assert lp_protected(p, _suppressed(r))


def test_large_table_clean_up_may_use_the_whole_suppressed_set(monkeypatch):
    # issue 15: on b7290 (~3,100 suppressed cells with its virtual singleton cells) the
    # clean-up's default of whole-set witness LPs up to 3,000 cells left most secondaries
    # without a witness elsewhere: 7–15 published instead of 17 (63 vs 95·10⁶)
    import argusqt.protection.suppress.modular as modular

    calls = []
    real = modular.cleanup

    def spy(*args, **kw):
        calls.append(kw)
        return real(*args, **kw)

    monkeypatch.setattr(modular, "cleanup", spy)
    p = random_1h2d(np.random.default_rng(5), [3, 3], 4)
    monkeypatch.setattr(modular, "WHOLE_TABLE_REPAIR", p.n_cells - 1)  # p counts as large
    r = solve_modular(p, {"scip_lps": 0})
    whole = calls[-1]  # the subtables' clean-ups come first
    assert whole["max_full"] == modular.LARGE_CLEANUP_FULL
    assert whole["max_lps"] == max(
        modular.CLEANUP_MIN_LPS, int(modular.LARGE_CLEANUP_LPS_PER_PRIMARY * p.primary.sum())
    )
    assert lp_protected(p, _suppressed(r))
