"""OPT's guided heuristic repairs each HEUR pattern once per run (D-105): a pattern met again
is replayed, and the run gives the same patterns, costs and nodes as without the memo."""

from __future__ import annotations

import numpy as np
import pytest
from test_optimal_guided import _problem

from argusqt.progress import CancelToken
from argusqt.protection.core.budget import Deadline, DeadlineToken
from argusqt.protection.run import run_method
from argusqt.protection.suppress import optimal
from argusqt.protection.suppress.optimal import _guide


def _token() -> CancelToken:
    return DeadlineToken(Deadline(60.0))


def _points(p, seed: int) -> list[np.ndarray]:
    """LP-like points, the first ones met again (the heuristic's repeated patterns)."""
    rng = np.random.default_rng(100 + seed)
    x0 = np.zeros(p.n_cells)
    x1 = np.where(p.candidate, 0.5, p.primary.astype(float))
    xs = [np.where(p.candidate, rng.random(p.n_cells), p.primary.astype(float)) for _ in range(3)]
    return [x0, x1, x0, *xs, x1, x0]


@pytest.mark.parametrize("seed", range(6))
def test_guided_memo_replays_the_same_repaired_patterns(seed, monkeypatch):
    p = _problem(seed)
    points = _points(p, seed)
    with_memo = _guide(p, p, publish=True)
    got = [with_memo(x, np.inf, _token(), 60.0) for x in points]
    monkeypatch.setattr(optimal, "GUIDED_MEMO", False)
    without = _guide(p, p, publish=True)
    want = [without(x, np.inf, _token(), 60.0) for x in points]
    for a, b in zip(got, want, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert np.array_equal(a, b)
    tally = with_memo.tally  # type: ignore[attr-defined]
    assert tally["replays"] >= 3  # x0 twice more, x1 once more
    assert tally["repairs"] + tally["replays"] == without.tally["repairs"]  # type: ignore[attr-defined]
    assert without.tally["replays"] == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_opt_with_and_without_the_guided_memo_is_the_same_run(seed, monkeypatch):
    p = _problem(seed + 10)
    opts = {"max_time": 120, "guided_delay": 0.0}
    a = run_method(p, "OPT", opts)
    monkeypatch.setattr(optimal, "GUIDED_MEMO", False)
    b = run_method(p, "OPT", opts)
    assert np.array_equal(a.status, b.status)
    assert a.cost == b.cost and a.optimal == b.optimal
    for key in ("nodes", "guided_runs", "guided_found", "attacker_lps"):
        assert a.figures.get(key) == b.figures.get(key)
    assert a.verdict.ok
