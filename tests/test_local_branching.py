"""OPT's neighbourhood heuristic (suppress/local_branching.py, docs/design.md D-45): the
sub-MIP's cuts are the run's cuts on the neighbourhood, its patterns are protected (checked
here by the test's own linprog attacker), it is bounded by counts and gives the same pattern
on every run; OPT's proven optimum does not move."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from protect_helpers import lp_protected, random_1h2d

from argusqt.protection.core.budget import SCIP_SEED_SHIFT
from argusqt.protection.suppress import branch_and_cut, local_branching
from argusqt.protection.suppress.local_branching import neighbourhood, restricted_cuts
from argusqt.protection.suppress.optimal import solve_optimal


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    p = random_1h2d(rng, [3, 3], 6, primary_share=0.15)
    p.cost = np.abs(p.values) + 1.0
    return p


def test_neighbourhood_fixes_the_cells_where_incumbent_and_lp_point_agree():
    free = np.array([True, True, True, True, False])
    fixed = np.array([np.nan, np.nan, np.nan, np.nan, 1.0])
    inc = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    x = np.array([1.0, 0.0, 0.4, 0.3, 1.0])
    out = neighbourhood(free, fixed, inc, x)
    assert out[0] == 1.0 and out[1] == 0.0 and out[4] == 1.0
    assert np.isnan(out[2]) and np.isnan(out[3])
    assert np.isnan(fixed[0])  # the run's own array is left as it was


@pytest.mark.parametrize("seed", range(6))
def test_restricted_cuts_keep_exactly_the_neighbourhood_patterns_of_the_cuts(seed):
    """Enumeration: a 0/1 point of the neighbourhood meets the restricted cuts exactly when
    the full point meets the run's cuts (the sub-MIP loses no protected pattern, adds none)."""
    rng = np.random.default_rng(seed)
    n, m = 9, 7
    dense = np.where(rng.random((m, n)) < 0.5, rng.uniform(0.1, 1.0, (m, n)), 0.0)
    rhs = rng.uniform(0.3, 1.5, m)
    sub_fixed = np.full(n, np.nan)
    fix = rng.choice(n, size=4, replace=False)
    sub_fixed[fix] = rng.integers(0, 2, size=4)
    cuts = restricted_cuts(sp.csr_matrix(dense), rhs, sub_fixed)
    free = np.flatnonzero(np.isnan(sub_fixed))
    met = []
    for bits in itertools.product((0.0, 1.0), repeat=free.size):
        x = np.where(np.isnan(sub_fixed), 0.0, sub_fixed)
        x[free] = bits
        full_ok = bool(np.all(dense @ x >= rhs - 1e-12))
        met.append(full_ok)
        if cuts is not None:
            assert all(c.lhs(x) >= c.rhs - 1e-12 for c in cuts) == full_ok
    if cuts is None:  # an empty neighbourhood: no point of it meets the run's cuts
        assert not any(met)
    else:
        assert all(set(c.cells) <= set(free) for c in cuts)


def _solve(p, monkeypatch, calls: list):
    """solve_pattern with the neighbourhood heuristic from the first LP on; each sub-MIP's
    limits recorded."""
    monkeypatch.setattr(local_branching, "RINS_DELAY", 0)
    monkeypatch.setattr(local_branching, "RINS_MAX_FREE", 1.0)
    solve = branch_and_cut.solve_pattern

    def recording(*args, **kw):
        calls.append((kw["max_nodes"], kw["max_lps"], kw["rins"]))
        return solve(*args, **kw)

    start = p.candidate | p.primary | p.secondary
    # a start pattern far from the optimum: every candidate suppressed
    heur = local_branching.RinsHeur

    class Recording(heur):
        def __init__(self, hdlr, _solve, delay=None):
            super().__init__(hdlr, recording, delay)

    monkeypatch.setattr(branch_and_cut, "RinsHeur", Recording)
    return solve(p, start=start, rins=True, max_time=600.0, heuristics="off")


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_neighbourhood_patterns_are_protected_bounded_and_repeatable(seed, monkeypatch):
    assert SCIP_SEED_SHIFT == 0
    p = _problem(seed)
    calls: list = []
    out = _solve(p, monkeypatch, calls)
    assert out.optimal and out.mask is not None
    assert lp_protected(p, out.mask)
    assert out.rins_runs == len(calls) >= 1
    # every sub-MIP is bounded by counts (nodes, attacker LPs) and runs no heuristic of its own
    assert all(c == (local_branching.RINS_NODES, local_branching.RINS_LPS, False) for c in calls)
    again: list = []
    out2 = _solve(p, monkeypatch, again)
    assert np.array_equal(out.mask, out2.mask)
    assert (out2.rins_runs, out2.rins_found, out2.rins_lps) == (
        out.rins_runs,
        out.rins_found,
        out.rins_lps,
    )


def test_opt_optimum_is_the_same_with_and_without_the_neighbourhood(monkeypatch):
    monkeypatch.setattr(local_branching, "RINS_DELAY", 0)
    for seed in range(4):
        p = _problem(seed)
        off = solve_optimal(p, {"max_time": 300})
        on = solve_optimal(p, {"max_time": 300, "rins": True})
        assert off.optimal and on.optimal
        assert on.cost == pytest.approx(off.cost, rel=1e-9, abs=1e-6)
        assert lp_protected(p, (on.status != 1) & (on.status != 14))
