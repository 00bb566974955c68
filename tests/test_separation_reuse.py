"""The separator's cheaper checks (lp/separation.py, docs/design.md D-46): remembered attacker
moves (Certificates) and reduced costs only for failing directions never change which
primaries fail at a master point, and every primary they pass is passed by an independent
attacker written here (scipy's linprog over every relation, bounds scaled by x)."""

from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp
from protect_helpers import random_1h2d, random_2d, sized_problem
from scipy.optimize import linprog

from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.separation import Certificates, Separator
from argusqt.protection.suppress.optimal import solve_optimal


def _reach(problem: CSPProblem, xf: np.ndarray, p: int) -> tuple[float, float]:
    """(how far p moves down, how far up) for an attacker whose cells move within
    [a − (a − lower)·x, a + (upper − a)·x] on every relation (linprog, no argusqt code)."""
    a = np.asarray(problem.values, dtype=float)
    lo = a - np.maximum(a - np.asarray(problem.lower, dtype=float), 0) * xf
    hi = a + np.maximum(np.asarray(problem.upper, dtype=float) - a, 0) * xf
    m = sp.csr_matrix(problem.relations)
    c = np.zeros(a.size)
    c[p] = 1.0
    down = linprog(c, A_eq=m, b_eq=m @ a, bounds=np.c_[lo, hi], method="highs")
    up = linprog(-c, A_eq=m, b_eq=m @ a, bounds=np.c_[lo, hi], method="highs")
    assert down.status == 0 and up.status == 0
    return a[p] - down.fun, -up.fun - a[p]


def _points(rng: np.random.Generator, n: int, k: int) -> list[np.ndarray]:
    """k master points that drift like a branch-and-cut's: fractional, then some 0/1 ones."""
    x = rng.random(n) * (rng.random(n) < 0.5)
    out = []
    for step in range(k):
        x = np.clip(x + rng.normal(0, 0.15, n) * (rng.random(n) < 0.3), 0, 1)
        out.append(np.round(x) if step % 3 == 2 else x.copy())
    return out


def _problems() -> list[CSPProblem]:
    out = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        out.append(random_2d(rng, 4, 5, primary_share=0.25))
        out.append(random_1h2d(rng, [2, 2], 4, primary_share=0.25))
    return out


def test_remembered_moves_change_no_verdict_and_pass_only_protected_primaries() -> None:
    spared = 0
    for problem in _problems():
        plain, cheap = Separator(problem), Separator(problem)
        cheap.reuse = True
        rng = np.random.default_rng(problem.n_cells)
        for x in _points(rng, problem.n_cells, 12):
            fail_plain = {o.primary for o in plain.separate(x)}
            before = cheap.certs.reused
            fail_cheap = {o.primary for o in cheap.separate(x)}
            assert fail_cheap == fail_plain
            if cheap.certs.reused > before:
                xf = cheap.full_point(x)
                for p in cheap.targets:
                    if int(p) in fail_cheap:
                        continue
                    down, up = _reach(problem, xf, int(p))
                    assert down >= problem.lpl[p] - 1e-6 and up >= problem.upl[p] - 1e-6
            spared += cheap.certs.reused - before
    assert spared > 0  # the points were close enough for remembered moves to be used
    assert cheap.n_lps < plain.n_lps


def test_a_move_scaled_to_a_smaller_point_reaches_less() -> None:
    # one relation y0 = y1 + y2: moving y1 up by 4 moves the total by 4; with x1 = 0.5 and
    # y1's room 4 the move scales by a half
    certs = Certificates(lb=np.array([10.0, 5.0, 5.0]), ub=np.array([10.0, 4.0, 4.0]))
    certs.keep(1, 1, np.array([0, 1]), np.array([4.0, 4.0]))
    assert certs.reach(1, 1, np.array([1.0, 1.0, 0.0])) == 4.0
    assert certs.reach(1, 1, np.array([1.0, 0.5, 0.0])) == 2.0
    assert certs.reach(1, 1, np.array([0.1, 1.0, 0.0])) == 1.0  # the total's room 10·0.1
    assert certs.reach(1, -1, np.ones(3)) == 0.0  # nothing remembered downwards
    certs.keep(2, -1, np.array([0, 2]), np.array([3.0, 3.0]))  # moves p up: not a down move
    assert certs.reach(2, -1, np.ones(3)) == 0.0


def test_opt_with_remembered_moves_keeps_the_optimum() -> None:
    """The same proven optimum with and without the remembered moves (1H2D, 3 seeds), and
    some attacker LPs spared."""
    spared = 0
    for seed in range(3):
        p = sized_problem("1H2D", 150, seed=seed)
        p.cost = np.abs(p.values)
        costs = {}
        for reuse in (True, False):
            r = solve_optimal(p, {"max_time": 600, "reuse_moves": reuse})
            assert r.optimal, r.log
            costs[reuse] = r.cost
            line = next(x for x in r.log if x.startswith("SCIP status"))
            got = int(re.search(r"\((\d+) spared", line).group(1))  # type: ignore[union-attr]
            assert got == 0 or reuse
            spared += got
        assert costs[True] == costs[False]
    assert spared > 0


def test_a_remembered_move_through_an_unbounded_published_cell_proves_nothing():
    """An infinite bound on a cell now published (x = 0) gives inf·0 = nan: the move cannot
    pass through that cell, so it reaches 0, not its full length."""
    import numpy as np

    from argusqt.protection.lp.separation import Certificates

    lb = np.array([1.0, 1.0, np.inf])
    ub = np.array([1.0, 1.0, np.inf])
    certs = Certificates(lb, ub)
    cells = np.array([0, 1, 2])
    certs.keep(0, 1, cells, np.array([4.0, -2.0, -2.0]))
    assert certs.reach(0, 1, np.array([1.0, 1.0, 0.0])) == 0.0
    assert certs.reach(0, 1, np.array([1.0, 1.0, 1.0])) > 0.0


def test_the_lp_point_read_from_the_variables_is_getsolvals(monkeypatch) -> None:
    """D-66: the separation reads SCIP's LP point from the variables (`_x_lp`) instead of one
    getSolVal each; at every separation of a run both give the same point, and the run
    proves the same optimum as one that reads it the old way."""
    from argusqt.protection.suppress import scip_plugins

    p = sized_problem("1H2D", 150, seed=1)
    p.cost = np.abs(p.values)
    fast = scip_plugins._CapacityHandler._x_lp
    seen = []

    def both(self):  # type: ignore[no-untyped-def]
        x = fast(self)
        seen.append(np.array_equal(x, self._x()))
        return x

    monkeypatch.setattr(scip_plugins._CapacityHandler, "_x_lp", both)
    r = solve_optimal(p, {"max_time": 600})
    assert r.optimal and seen and all(seen), (len(seen), r.log)
    monkeypatch.setattr(scip_plugins._CapacityHandler, "_x_lp", lambda self: self._x())
    old = solve_optimal(p, {"max_time": 600})
    assert old.optimal and old.cost == r.cost and old.lower_bound == r.lower_bound
