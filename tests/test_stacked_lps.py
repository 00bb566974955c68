"""A block's attacker LPs solved several at a time as one model of copies (Separator.stack,
docs/design.md D-76): at fractional points the same primaries fail in the same directions
as one by one, each cut is violated by as much (strong duality), and every cut holds at
other points for an independent attacker written here (scipy's linprog over every relation,
bounds scaled by x): weak duality, so it holds for every protected pattern."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from protect_helpers import random_1h2d, random_2d
from scipy.optimize import linprog

from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.separation import Separator


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


def _problems() -> list[CSPProblem]:
    out = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        out.append(random_2d(rng, 5, 6, primary_share=0.3))
        out.append(random_1h2d(rng, [2, 3], 4, primary_share=0.3))
    return out


def _fractional(rng: np.random.Generator, n: int, k: int) -> list[np.ndarray]:
    """k fractional master points drifting like a branch-and-cut's."""
    x = rng.random(n) * (rng.random(n) < 0.6)
    out = []
    for _ in range(k):
        x = np.clip(x + rng.normal(0, 0.15, n) * (rng.random(n) < 0.3), 0, 1)
        x[0] = 0.5  # never a 0/1 point
        out.append(x.copy())
    return out


def _cuts(outcomes) -> dict:
    return {(c.primary, c.kind): c for o in outcomes for c in o.cuts}


@pytest.mark.parametrize("stack", [2, 5, 16])
def test_stacked_lps_fail_the_same_primaries_with_cuts_as_deep_and_valid(stack) -> None:
    checked = 0
    for problem in _problems():
        one, many = Separator(problem), Separator(problem)
        many.stack = stack
        for reuse in (False, True):
            one.reuse = many.reuse = reuse
            rng = np.random.default_rng(problem.n_cells + stack)
            points = _fractional(rng, problem.n_cells, 8)
            for x in points:
                got_one, got_many = one.separate(x), many.separate(x)
                assert [o.primary for o in got_many] == [o.primary for o in got_one]
                c1, cm = _cuts(got_one), _cuts(got_many)
                assert cm.keys() == c1.keys()
                for key, cut in cm.items():
                    # the same shortfall: both are optimal duals of the same LP
                    assert cut.raw_lhs(many.full_point(x)) == pytest.approx(
                        c1[key].raw_lhs(one.full_point(x)), rel=1e-6, abs=1e-6
                    )
                if reuse:
                    continue
                for key, cut in list(cm.items())[:4]:
                    p, kind = key
                    if kind not in ("upper", "lower"):
                        continue
                    for y in points[::3]:
                        yf = many.full_point(y)
                        down, up = _reach(problem, yf, int(p))
                        moved = up if kind == "upper" else down
                        # weak duality: no attacker moves p further than the cut's left side
                        assert moved <= cut.raw_lhs(yf) + 1e-6 * max(1.0, cut.raw_rhs)
                        checked += 1
        assert many.n_lps > 0
    assert checked > 20


def test_stacked_lps_leave_0_1_points_and_single_targets_one_by_one() -> None:
    problem = _problems()[0]
    one, many = Separator(problem), Separator(problem)
    many.stack = 8
    x = (np.random.default_rng(7).random(problem.n_cells) < 0.5).astype(float)
    assert [o.primary for o in many.separate(x)] == [o.primary for o in one.separate(x)]
    assert many.n_lps == one.n_lps  # the same LPs, one by one
