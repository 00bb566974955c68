"""Audit intervals against worked examples (argusqt/docs/methods.md §2, §3.3) and a timing check."""

from __future__ import annotations

import time

import numpy as np
import pytest
from protect_helpers import cell_id, problem_2d, random_2d

from argusqt.protection.audit.outsider import audit

# E8 (batch ex1): region A–D × gender (male, female)
EX1 = [[895, 137], [753, 973], [569, 486], [540, 793]]
# E9 (batch ex2): num1 with 2 decimals
EX2 = [[1938.79, 189.40], [1476.06, 1998.80], [1192.16, 1057.36], [1118.06, 1514.32]]


def _mask(problem, cells):
    m = np.zeros(problem.n_cells, dtype=bool)
    m[[cell_id(problem, *c) for c in cells]] = True
    return m


def _interval(res, problem, *nodes):
    i = cell_id(problem, *nodes)
    return res.lower[i], res.upper[i]


def test_e1_manual_interval():
    # hidden truth 4,3 / 2,1 / 3,3; rows 1-2 suppressed; X11 is the primary
    p = problem_2d([[4, 3], [2, 1], [3, 3]], [(1, 1)], 1.0)
    sup = _mask(p, [(1, 1), (1, 2), (2, 1), (2, 2)])
    res = audit(p, sup, cells="all")
    assert _interval(res, p, 1, 1) == pytest.approx((3, 6))
    assert _interval(res, p, 1, 2) == pytest.approx((1, 4))
    assert _interval(res, p, 2, 1) == pytest.approx((0, 3))
    assert _interval(res, p, 2, 2) == pytest.approx((0, 3))
    assert res.audited.sum() == 4
    assert res.ok  # X11 = 4 with PL 1: [3, 5] inside [3, 6]


E2_ROWS = [[20, 50, 10], [8, 19, 22], [17, 32, 12]]
E2_SUP = [(2, 1), (2, 3), (3, 1), (3, 3)]


def test_e2_without_extra_bounds():
    p = problem_2d(E2_ROWS, [(2, 3)], 1.0)
    res = audit(p, _mask(p, E2_SUP), cells="all")
    assert _interval(res, p, 2, 3) == pytest.approx((5, 30))
    assert _interval(res, p, 2, 1) == pytest.approx((0, 25))
    assert _interval(res, p, 3, 1) == pytest.approx((0, 25))
    assert _interval(res, p, 3, 3) == pytest.approx((4, 29))


def test_e2_all_suppressed_within_50_percent():
    p = problem_2d(E2_ROWS, [(2, 3)], 1.0)
    sup = _mask(p, E2_SUP)
    lo = np.where(sup, 0.5 * p.values, p.values)
    hi = np.where(sup, 1.5 * p.values, p.values)
    res = audit(p, sup, cells="all", lower=lo, upper=hi)
    assert _interval(res, p, 2, 3) == pytest.approx((18, 26))
    assert _interval(res, p, 2, 1) == pytest.approx((4, 12))
    assert _interval(res, p, 3, 1) == pytest.approx((13, 21))
    assert _interval(res, p, 3, 3) == pytest.approx((8, 16))


def test_e2_only_sensitive_cell_bounded():
    p = problem_2d(E2_ROWS, [(2, 3)], 1.0)
    sup = _mask(p, E2_SUP)
    lo = np.where(sup, 0.0, p.values)
    hi = np.where(sup, 1e6, p.values)
    i = cell_id(p, 2, 3)
    lo[i], hi[i] = 11.0, 33.0
    # no `suppressed` given: a cell is a variable iff its bounds differ
    res = audit(p, None, cells=[i], lower=lo, upper=hi)
    assert _interval(res, p, 2, 3) == pytest.approx((11, 30))
    assert res.audited.sum() == 1


def test_e8_optimal_pattern_intervals():
    p = problem_2d(EX1, [(1, 2)], 1.0)
    assert p.upper[0] == pytest.approx(7719)  # 1.5 × 5146 (E13)
    sup = _mask(p, [(1, 2), (1, 1), (3, 1), (3, 2)])
    res = audit(p, sup, cells="all")
    assert _interval(res, p, 1, 2) == pytest.approx((0, 623))
    assert _interval(res, p, 1, 1) == pytest.approx((409, 1032))
    assert _interval(res, p, 3, 1) == pytest.approx((432, 1055))
    assert _interval(res, p, 3, 2) == pytest.approx((0, 623))
    assert res.ok
    assert not res.exact.any()
    # default: only the suppressed primary is audited
    only = audit(p, sup)
    assert np.flatnonzero(only.audited).tolist() == [cell_id(p, 1, 2)]


def test_e9_intervals_with_decimals():
    p = problem_2d(EX2, [(1, 2)], 22.404)
    p.decimals = 2
    sup = _mask(p, [(1, 2), (1, 1), (3, 1), (3, 2)])
    res = audit(p, sup, cells="all")
    assert res.tolerance == pytest.approx(0.005)
    assert _interval(res, p, 1, 2) == pytest.approx((0, 1246.76), abs=1e-6)
    assert _interval(res, p, 1, 1) == pytest.approx((881.43, 2128.19), abs=1e-6)
    assert _interval(res, p, 3, 1) == pytest.approx((1002.76, 2249.52), abs=1e-6)
    assert _interval(res, p, 3, 2) == pytest.approx((0, 1246.76), abs=1e-6)
    assert res.ok


def test_failing_pattern_detected_e13():
    # x* of E13: (A,f), (A,m), (C,f): C,f cannot move, so A,f is exactly disclosed
    p = problem_2d(EX1, [(1, 2)], 1.0)
    sup = _mask(p, [(1, 2), (1, 1), (3, 2)])
    res = audit(p, sup, cells="all")
    i = cell_id(p, 1, 2)
    assert not res.ok
    assert res.failures.tolist() == [i]
    assert _interval(res, p, 1, 2) == pytest.approx((137, 137))
    assert res.exact[i]
    assert "AUDIT FAILED" in res.summary()
    # a primary alone in its row is exactly disclosed as well
    res2 = audit(p, _mask(p, [(1, 2)]))
    assert not res2.ok and res2.exact[i]


def test_tolerance_half_unit():
    # interval upper reaches a + UPL − 0.4: passes with 0 decimals (tol 0.5), fails with 1
    p = problem_2d([[10, 10], [10, 10]], [(1, 1)], 10.0)
    p.upper = np.full(p.n_cells, 19.6)  # cell (1,1) can rise to 19.6 only
    sup = _mask(p, [(1, 1), (1, 2), (2, 1), (2, 2)])
    assert audit(p, sup).ok
    p.decimals = 1
    assert not audit(p, sup).ok


def test_pass_fail_mode_agrees_with_intervals():
    rng = np.random.default_rng(3)
    p = random_2d(rng, 12, 10)
    sup = p.primary | (rng.random(p.n_cells) < 0.15)
    full = audit(p, sup)
    quick = audit(p, sup, intervals=False)
    assert np.array_equal(full.passed, quick.passed)
    # pass/fail mode reports attacker-reachable witnesses: inside the exact interval
    aud = full.audited
    assert np.all(quick.lower[aud] >= full.lower[aud] - 1e-6)
    assert np.all(quick.upper[aud] <= full.upper[aud] + 1e-6)


def test_10000_cells_fast():
    rng = np.random.default_rng(7)
    p = random_2d(rng, 99, 99)  # 100 × 100 = 10,000 cells
    assert p.n_cells == 10_000
    sup = p.primary | (rng.random(p.n_cells) < 0.05)
    t0 = time.perf_counter()
    res = audit(p, sup, cells="all")
    elapsed = time.perf_counter() - t0
    print(
        f"audit of {int(sup.sum())} suppressed cells in a 10,000-cell table: {elapsed:.2f} s, {res.n_lps} LPs"
    )
    assert res.audited.sum() == sup.sum()
    assert np.all(res.lower[sup] <= p.values[sup] + 1e-6)
    assert np.all(res.upper[sup] >= p.values[sup] - 1e-6)


def test_hints_are_verified_never_trusted():
    p = problem_2d(EX1, [(1, 2)], 1.0)
    af, am, cm, cf = (cell_id(p, *c) for c in [(1, 2), (1, 1), (3, 1), (3, 2)])
    bad = _mask(p, [(1, 2), (1, 1), (3, 2)])  # E13's x*: fails
    bogus = [
        (np.array([af, am]), np.array([1.0, -1.0])),  # breaks the female column
        (np.array([af, am, cm, cf]), np.array([1.0, -1.0, 1.0, -1.0])),  # uses published (C,m)
    ]
    res = audit(p, bad, intervals=False, hints=bogus)
    assert not res.ok and res.failures.tolist() == [af]
    # a valid rectangle move proves the E8 pattern without any LP
    good = _mask(p, [(1, 2), (1, 1), (3, 1), (3, 2)])
    move = [(np.array([af, am, cm, cf]), np.array([1.0, -1.0, 1.0, -1.0]))]
    res = audit(p, good, intervals=False, hints=move)
    assert res.ok and res.n_lps == 0
    assert res.upper[af] == pytest.approx(623)  # the move scaled to the bounds
