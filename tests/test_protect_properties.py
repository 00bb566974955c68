"""Property tests: HEUR patterns on random small tables pass an independent attacker check.

The attacker here is a plain scipy.optimize.linprog on the full relation set (no
components, no neighbourhoods, no warm starts) so it shares no code with protection/audit.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protect_helpers import random_1h2d, random_2d, random_3d
from scipy.optimize import linprog

from argusqt.model.status import is_suppressed
from argusqt.protection.run import run_method


def attacker_interval(problem, sup: np.ndarray, cell: int) -> tuple[float, float]:
    """min/max of a cell given published cells, relations and the bounds
    (argusqt/docs/methods.md §2)."""
    n = problem.n_cells
    bounds = np.where(
        sup[:, None],
        np.c_[problem.lower, problem.upper],
        np.c_[problem.values, problem.values],
    )
    a_eq = problem.relations.toarray()
    b_eq = np.asarray(problem.rhs, dtype=float)
    c = np.zeros(n)
    c[cell] = 1.0
    lo = linprog(c, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    hi = linprog(-c, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    assert lo.status == 0 and hi.status == 0
    return lo.fun, -hi.fun


def check_protected(problem, status) -> None:
    sup = is_suppressed(status)
    tol = problem.tolerance
    assert sup[problem.primary].all(), "a primary was published"
    for p in np.flatnonzero(problem.primary):
        lo, hi = attacker_interval(problem, sup, int(p))
        assert lo <= problem.values[p] - problem.lpl[p] + tol, (p, lo, problem.lpl[p])
        assert hi >= problem.values[p] + problem.upl[p] - tol, (p, hi, problem.upl[p])


SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    nrow=st.integers(2, 6),
    ncol=st.integers(2, 6),
    share=st.floats(0.05, 0.3),
)
def test_heur_2d_pattern_is_protected(seed, nrow, ncol, share):
    rng = np.random.default_rng(seed)
    p = random_2d(rng, nrow, ncol, primary_share=share)
    res = run_method(p, "HEUR", {})
    check_protected(p, res.status)
    assert res.audit.ok


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    b1=st.integers(2, 3),
    b2=st.integers(1, 3),
    ncol=st.integers(2, 4),
    zero_share=st.sampled_from([0.0, 0.1]),
)
def test_heur_1h2d_pattern_is_protected(seed, b1, b2, ncol, zero_share):
    rng = np.random.default_rng(seed)
    p = random_1h2d(rng, [b1, b2], ncol, zero_share=zero_share)
    res = run_method(p, "HEUR", {})
    check_protected(p, res.status)


@pytest.mark.slow
@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    b=st.integers(1, 2),
    n2=st.integers(2, 3),
)
def test_heur_3d_pattern_is_protected(seed, b, n2):
    rng = np.random.default_rng(seed)
    p = random_3d(rng, [2, b], [2], n2)
    res = run_method(p, "HEUR", {})
    check_protected(p, res.status)
