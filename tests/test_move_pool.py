"""The pool of earlier attacker moves (lp/move_pool.py, docs/design.md D-82): it never changes
which primaries fail at a master point, every range it shows is one an independent attacker
reaches there (scipy's linprog over every relation, no argusqt code), and a published cell
stops a move whatever its bound."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import random_1h2d, random_2d
from test_separation_reuse import _points, _reach

from argusqt.protection.lp.move_pool import MovePool
from argusqt.protection.lp.separation import Separator


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), hier=st.booleans(), size=st.sampled_from([2, 8, 64]))
def test_the_pool_changes_no_verdict_and_its_ranges_are_reached(
    seed: int, hier: bool, size: int
) -> None:
    """At drifting points the same primaries fail with and without the pool, and every
    extreme the pool shows for a cell is within that cell's range for an independent
    attacker at that point."""
    rng = np.random.default_rng(seed)
    if hier:
        problem = random_1h2d(rng, [2, 2], 4, primary_share=0.3)
    else:
        problem = random_2d(rng, 4, 5, primary_share=0.3)
    plain, pooled = Separator(problem), Separator(problem)
    plain.reuse = pooled.reuse = True
    pooled.pool = MovePool(pooled.lb, pooled.ub, size)
    for x in _points(rng, problem.n_cells, 10):
        fail_plain = plain.separate(x)
        fail_pooled = pooled.separate(x)
        # a direction fails only after its LP: the same primaries fail, each with a fresh
        # LP's cut (optimal duals may differ after another sequence of warm starts)
        assert {o.primary for o in fail_pooled} == {o.primary for o in fail_plain}
        xf = pooled.full_point(x)
        low, high = pooled.pool.extremes(np.arange(problem.n_cells), xf)
        for p in np.flatnonzero((low < 0) | (high > 0))[:6].tolist():
            down, up = _reach(problem, xf, p)
            tol = 1e-6 * max(1.0, abs(float(problem.values[p])))
            assert high[p] <= up + tol and -low[p] <= down + tol


def test_the_pool_spares_lps_on_drifting_points() -> None:
    lps_plain = lps_pooled = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        problem = random_2d(rng, 5, 6, primary_share=0.3)
        plain, pooled = Separator(problem), Separator(problem)
        plain.reuse = pooled.reuse = True
        pooled.pool = MovePool(pooled.lb, pooled.ub, 64)
        for x in _points(rng, problem.n_cells, 15):
            assert {o.primary for o in plain.separate(x)} == {o.primary for o in pooled.separate(x)}
        lps_plain += plain.n_lps
        lps_pooled += pooled.n_lps
    assert lps_pooled < lps_plain


def test_a_move_is_scaled_to_the_point_and_stopped_by_a_published_cell() -> None:
    # y0 = y1 + y2: a move of +4 on cells 0 and 1
    lb = np.array([10.0, 5.0, np.inf])
    ub = np.array([10.0, 4.0, np.inf])
    pool = MovePool(lb, ub, 3)
    cells = np.arange(3)

    def high(x: list[float], cell: int) -> float:
        return float(pool.extremes(cells, np.array(x))[1][cell])

    def low(x: list[float], cell: int) -> float:
        return float(pool.extremes(cells, np.array(x))[0][cell])

    pool.add(cells, np.array([4.0, 4.0, 0.0]))
    assert high([1.0, 1.0, 0.0], 1) == 4.0
    assert high([1.0, 0.5, 0.0], 1) == 2.0
    assert high([0.1, 1.0, 0.0], 1) == 1.0  # the total's room 10·0.1
    assert low([1.0, 1.0, 1.0], 1) == 0.0  # no move down
    # an unbounded cell moved: published (x = 0) it stops the move (no inf·0 = nan)
    pool.add(np.array([0, 2]), np.array([-3.0, -3.0]))
    assert low([1.0, 1.0, 0.0], 2) == 0.0
    assert low([1.0, 1.0, 1.0], 2) == -3.0
    # a full ring drops the oldest move; moves pending beyond the ring never count
    for _ in range(5):
        pool.add(np.array([0, 2]), np.array([1.0, 1.0]))
    assert high([1.0, 1.0, 1.0], 1) == 0.0 and low([1.0, 1.0, 1.0], 2) == 0.0
