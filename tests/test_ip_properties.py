"""Property (issue 21): interval protection on random hierarchical tables from microdata
(2–3 dimensions, holdings, negative values) through the API. Whatever is published passes
an attacker written here — scipy's linprog over the printed intervals and the relations,
plus the midpoint and endpoint estimates — and whatever the gate refuses is written nowhere.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from protect_helpers import lp_reach_ok

import argusqt
from argusqt.errors import ArgusError, PublicationError
from argusqt.protection.core.problem import CSPProblem

SETTINGS = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)


def _records(seed: int, n_dims: int, n: int) -> pd.DataFrame:
    """Records with a two-level first variable (codes 'ab'), holdings of 1–3 records and
    about one value in eight negative (a small loss)."""
    rng = np.random.default_rng(seed)
    cols = {
        "a": [f"{i}{j}" for i, j in zip(rng.integers(1, 3, n), rng.integers(1, 3, n), strict=True)],
        "b": rng.integers(1, 4, n).astype(str),
    }
    if n_dims == 3:
        cols["c"] = rng.integers(1, 3, n).astype(str)
    cols["hold"] = (np.arange(n) // rng.integers(1, 4)).astype(str)
    x = rng.gamma(1.5, 200.0, n).round(1)
    neg = rng.random(n) < 0.125
    x[neg] = -(x[neg] / 10.0).round(1)  # small losses: large ones leave IP no room at all
    cols["x"] = x
    return pd.DataFrame(cols)


def near_estimates(problem: CSPProblem, lower: np.ndarray, upper: np.ndarray, decimals: int):
    """Primaries whose midpoint or an endpoint lies within max(half a printed unit, a tenth
    of the mean level) of the true value (written here, not the method's code)."""
    a = problem.values
    near = []
    for p in np.flatnonzero(problem.primary):
        tol = max(0.5 * 10.0**-decimals, 0.05 * (problem.lpl[p] + problem.upl[p]))
        for estimate in (0.5 * (lower[p] + upper[p]), lower[p], upper[p]):
            if abs(estimate - a[p]) <= tol:
                near.append(int(p))
    return near


def _printed(res, problem: CSPProblem) -> tuple[np.ndarray, np.ndarray]:
    frame = res.publish()
    lower = frame["lower"].to_numpy(dtype=float, na_value=np.nan)
    upper = frame["upper"].to_numpy(dtype=float, na_value=np.nan)
    empty = np.isnan(lower)
    return np.where(empty, problem.values, lower), np.where(empty, problem.values, upper)


@pytest.mark.slow
@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n_dims=st.sampled_from([2, 3]),
    n=st.integers(40, 100),
    as_given=st.booleans(),
)
def test_ip_publishes_only_what_the_attacker_cannot_use(
    tmp_path_factory, seed, n_dims, n, as_given
):
    """`as_given`: the expert option (the rules' symmetric levels), which the gate refuses
    whenever a midpoint gives a value away: then nothing may be written."""
    out: Path = tmp_path_factory.mktemp("ip")
    dims = ["a", "b", "c"][:n_dims]
    try:
        res = argusqt.protect(
            _records(seed, n_dims, n),
            explanatory=dims,
            response="x",
            holding="hold",
            rules="P(15,1)|P(10,1)|P(20,1)",  # the third p% rule looks at holdings
            hierarchies={"a": [1, 1]},
            decimals={"x": 1},
            method="IP",
            params={"levels_as_given": as_given},
            progress=False,
        )
    except ArgusError:
        event("method refused")
        return  # the method refused (e.g. levels beyond the bounds): nothing to publish
    table = res.table
    problem = CSPProblem.from_table(table)
    verdict = res.audit()
    if not verdict.ok:
        event("gate refused")
        for call in (
            lambda: res.publish(),
            lambda: res.to_excel(out / "t.xlsx"),
            lambda: res.to_parquet(out / "t.parquet"),
            lambda: res.write(out / "t.csv", "csv"),
        ):
            try:
                call()
            except PublicationError:
                continue
            raise AssertionError("a publication the gate refuses was produced")
        assert not any(out.iterdir()), list(out.iterdir())
        return
    event("published")
    lower, upper = _printed(res, problem)
    assert not near_estimates(problem, lower, upper, table.decimals)
    lo = np.maximum(lower, problem.lower)
    hi = np.minimum(upper, problem.upper)
    prim = np.flatnonzero(problem.primary)
    assert lp_reach_ok(problem, lo, hi, prim, tol=problem.tolerance)
    assert res.to_excel(out / "t.xlsx").exists()
