"""MOD's subtables of one depth in one branch-and-cut (suppress/modular.py JOINT_DEPTH,
docs/design.md D-63): they are independent problems, so side by side each keeps its own
optimum, and MOD's pattern stays safe and the same run after run.

Judged by the test's own linprog attacker (protect_helpers.lp_protected) and by each
subtable solved alone, proven optimal.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protect_helpers import hier_codelist, lp_protected, mixed_problem, random_problem

import argusqt.protection.suppress.modular as modular
from argusqt.model.status import is_suppressed
from argusqt.protection.core.budget import Deadline, WorkBudget
from argusqt.protection.suppress.modular_params import ModOptions
from argusqt.protection.suppress.subtables import subtables


def _by_depth(subs):
    out: dict[int, list] = {}
    for s in subs:
        out.setdefault(s.depth, []).append(s)
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    st.lists(st.integers(1, 2), min_size=0, max_size=2),
)
def test_a_cell_is_free_in_one_subtable_and_a_margin_only_below_shallower_ones(b0, b1, b2):
    dims = [hier_codelist("a", b0), hier_codelist("b", b1)]
    if b2:
        dims.append(hier_codelist("c", b2))
    subs = subtables(dims)
    n = int(np.prod([len(d) for d in dims]))
    home = np.full(n, -1)
    for s in subs:
        free = s.cells[~s.margin]
        assert (home[free] == -1).all()  # free in one subtable only
        home[free] = s.depth
    assert (home >= 0).all()
    for s in subs:  # a margin is free in a shallower subtable: fixed when this one runs
        assert (home[s.cells[s.margin]] < s.depth).all()
    for group in _by_depth(subs).values():  # same depth: no cell free in one is in another
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                assert not np.isin(a.cells[~a.margin], b.cells).any()
                assert not np.isin(b.cells[~b.margin], a.cells).any()


def _limits() -> modular._Limits:
    return modular._Limits(WorkBudget(10_000), Deadline(None), 60.0)


@pytest.mark.parametrize("seed", [3, 5, 6])
def test_side_by_side_each_subtable_keeps_its_own_optimum(seed):
    p = mixed_problem(seed)
    params = ModOptions.of({"gap": 0.0})
    true_prim = p.primary.copy()
    sup = true_prim | p.secondary
    cost = np.asarray(p.cost, dtype=float)
    checked = 0
    for group in _by_depth(subtables(p.dims)).values():
        joint = modular._solve_depth(p, group, sup, true_prim, params, None, None, _limits())
        one_by_one = sup.copy()
        alones = [
            modular._solve_subtable(
                p, sub, sup, true_prim, params, None, scip_lps=None, limits=_limits()
            )
            for sub in group  # each alone, from the same input: proven optimal (gap 0)
        ]
        if joint is None:  # only when a subtable needs its margins (solve_modular backtracks)
            assert any(alone is None for alone in alones)
            break
        for alone in alones:
            assert alone is not None
            assert not (alone & one_by_one & ~sup).any()  # each changes its own cells only
            one_by_one |= alone
        for sub in group:  # the joint pattern protects each subtable on its own (linprog)
            local = modular._subproblem(p, sub, sup, true_prim)[0]
            assert lp_protected(local, joint[sub.cells])
        joint_cost = cost[joint & ~sup].sum()
        alone_cost = cost[one_by_one & ~sup].sum()
        assert joint_cost == pytest.approx(alone_cost, rel=1e-9, abs=1e-6)
        checked += len(group) > 1
        sup = joint  # the next depth from the joint pattern, as solve_modular goes on
    assert checked  # some depth had several subtables


@pytest.mark.parametrize("seed", [1, 2, 4, 7])
def test_mod_solves_a_depth_at_once_and_publishes_a_safe_pattern_every_time(monkeypatch, seed):
    from argusqt.protection.run import run_method

    rng = np.random.default_rng(100 + seed)
    if seed % 2:
        dims = [hier_codelist("a", [2, 3]), hier_codelist("b", [3, 2])]
        p = random_problem(rng, dims, primary_share=0.2)
    else:
        p = mixed_problem(seed)
    p.cost = np.abs(p.values)
    calls: list[int] = []
    real = modular.solve_pattern

    def counting(work, *a, **kw):
        calls.append(work.n_cells)
        return real(work, *a, **kw)

    monkeypatch.setattr(modular, "solve_pattern", counting)
    first = run_method(p, "MOD", {"polish": False})
    n_depths = len(_by_depth(subtables(p.dims)))
    assert 0 < len(calls) <= n_depths  # one branch-and-cut per depth, not per subtable
    joint_calls = len(calls)
    mask = is_suppressed(first.status)
    assert first.verdict is not None and first.verdict.ok
    assert lp_protected(p, mask)
    again = run_method(p, "MOD", {"polish": False})
    assert np.array_equal(again.status, first.status)  # counts, never the clock
    monkeypatch.setattr(modular, "JOINT_DEPTH", False)  # one by one, as before D-63
    calls.clear()
    alone = run_method(p, "MOD", {"polish": False})
    assert len(calls) >= joint_calls
    assert lp_protected(p, is_suppressed(alone.status))


def test_a_gap_the_user_gives_keeps_the_subtables_one_by_one(monkeypatch):
    """The joint search of a depth proves each subtable optimal; a user's gap is per subtable,
    so with one every branch-and-cut gets that gap (none is joint at gap 0)."""
    from protect_helpers import mixed_problem

    import argusqt.protection.suppress.modular as modular
    from argusqt.protection.run import run_method

    gaps: list[float] = []
    real = modular.solve_pattern

    def spy(work, *args, **kwargs):
        gaps.append(kwargs.get("gap"))
        return real(work, *args, **kwargs)

    monkeypatch.setattr(modular, "solve_pattern", spy)
    run_method(mixed_problem(3), "MOD", {"polish": False, "gap": 0.05})
    assert gaps and all(g == 0.05 for g in gaps)
    gaps.clear()
    run_method(mixed_problem(3), "MOD", {"polish": False})
    assert 0.0 in gaps  # the default: some depth went through the joint search
