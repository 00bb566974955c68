"""Pareto-optimal capacity cuts (Separator.pareto, docs/design.md D-88): the failing LP solved
again at x* moved toward the all-ones core point only chooses another dual, so the same
primaries fail, every cut it gives is violated at the point and holds at other points for an
independent attacker (scipy's linprog over every relation, no argusqt code), and OPT with it
proves the brute-force optimum of tiny tables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import random_1h2d, random_2d
from test_opt_bounds import EPS, SETTINGS, cheapest_protected, tiny_tables
from test_separation_reuse import _points, _reach

from argusqt.protection.lp.separation import Separator
from argusqt.protection.run import run_method


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), hier=st.booleans(), mu=st.sampled_from([1e-7, 1e-6, 1e-3]))
def test_pareto_duals_change_no_verdict_and_their_cuts_are_valid(
    seed: int, hier: bool, mu: float
) -> None:
    """At drifting points the same primaries fail with and without Pareto duals; each cut is
    violated at its point, and at later points its capacity is at least the independent
    attacker's reach in its direction (weak duality, whatever the dual)."""
    rng = np.random.default_rng(seed)
    if hier:
        problem = random_1h2d(rng, [2, 2], 4, primary_share=0.3)
    else:
        problem = random_2d(rng, 4, 5, primary_share=0.3)
    plain, pareto = Separator(problem), Separator(problem)
    pareto.pareto = mu
    points = _points(rng, problem.n_cells, 8)
    made = []
    for x in points:
        fail_plain = plain.separate(x)
        fail_pareto = pareto.separate(x)
        assert {o.primary for o in fail_pareto} == {o.primary for o in fail_plain}
        xf = pareto.full_point(x)
        for o in fail_pareto:
            for c in o.cuts:
                assert c.raw_lhs(xf) < c.raw_rhs - pareto.eps / 2
                made.append(c)
    assert pareto.n_pareto >= pareto.n_pareto_kept
    for c in made[:8]:
        for x in points[-3:]:
            xf = pareto.full_point(x)
            down, up = _reach(problem, xf, c.primary)
            reach = up if c.kind == "upper" else down
            tol = 1e-6 * max(1.0, abs(float(problem.values[c.primary])))
            assert c.raw_lhs(xf) >= reach - tol


@pytest.mark.parametrize("where", [{}, {"pareto_depth": 0}, {"pareto_gap": 0.05}])
@SETTINGS
@given(p=tiny_tables())
def test_opt_with_pareto_cuts_proves_the_brute_force_optimum(where, p):
    best = cheapest_protected(p)
    r = run_method(p, "OPT", {"max_time": 600, "pareto_cuts": 1e-6, **where})
    assert r.optimal and r.cost == pytest.approx(best, rel=EPS, abs=EPS)
    assert r.lower_bound is not None and r.lower_bound <= best + EPS * max(1.0, best)
