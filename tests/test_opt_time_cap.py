"""OPT's time limit is a safety cap over the whole run (docs/design.md, D-52): wherever the
clock passes it — start heuristic, its publication audit, the branch-and-cut, the final
audit and insider repair — the run ends within the limit's grace, with an audited pattern
that says the time limit decided, or with TimeLimitError. No wall clock: the run's clock
(budget.CLOCK) is a counter the test advances by one second per HiGHS solve."""

from __future__ import annotations

import highspy
import numpy as np
import pytest
from protect_helpers import lp_protected, sized_problem

from argusqt.errors import TimeLimitError
from argusqt.model.status import is_suppressed
from argusqt.protection.core import budget
from argusqt.protection.core.result import TIME_LIMIT_DECIDED
from argusqt.protection.run import run_method


class _LPClock:
    """The run's clock: one second per HiGHS solve (any phase, any thread), so the clock
    passes the limit at a fixed point of the run's work."""

    def __init__(self) -> None:
        self.now = 0.0
        self.solves = 0

    def __call__(self) -> float:
        return self.now

    def tick(self) -> None:
        self.solves += 1
        self.now += 1.0


def _ticking(monkeypatch) -> _LPClock:
    clock = _LPClock()
    monkeypatch.setattr(budget, "CLOCK", clock)
    real_run = highspy.Highs.run

    def run(self):  # type: ignore[no-untyped-def]
        clock.tick()
        return real_run(self)

    monkeypatch.setattr(highspy.Highs, "run", run)
    return clock


def _problem():
    p = sized_problem("1H2D", 300, seed=1)
    p.cost = np.abs(p.values)
    return p


def test_without_a_cap_in_reach_the_run_is_not_flagged(monkeypatch):
    clock = _ticking(monkeypatch)
    p = _problem()
    r = run_method(p, "OPT", {"max_time": 1e9})
    assert not r.timed_out and TIME_LIMIT_DECIDED not in r.log
    assert clock.solves > 320  # the sweep's limits fall inside the run


@pytest.mark.parametrize("limit", [5.0, 20.0, 40.0, 80.0, 160.0, 320.0])
def test_the_run_ends_within_its_grace_wherever_the_limit_falls(monkeypatch, limit):
    clock = _ticking(monkeypatch)
    p = _problem()
    try:
        r = run_method(p, "OPT", {"max_time": limit})
    except TimeLimitError as err:
        assert "time limit" in str(err)
        # the start heuristic alone needs > 100 solves here: with 320 its pattern is audited
        assert limit < 320.0
    else:
        sup = is_suppressed(r.status)
        assert r.verdict is not None and r.verdict.ok
        assert lp_protected(p, sup)  # the test's own attacker
        if clock.now > limit:
            assert r.timed_out and TIME_LIMIT_DECIDED in r.log
    assert clock.now <= limit + budget.limit_grace(limit) + 1.0


class _Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_deadlines_grace_counts_on_the_runs_clock_and_does_not_stack(monkeypatch):
    # before D-52 the grace after a deadline counted wall seconds (time.monotonic): a phase
    # cut by the run's CPU-second clock ran on for CANCEL_GRACE wall seconds
    clock = _Clock()
    monkeypatch.setattr(budget, "CLOCK", clock)
    token = budget.DeadlineToken(budget.Deadline(10.0), extra=1.0)
    grace = token.grace(2.0)
    clock.now = 11.5
    assert token.cancelled and not grace.cancelled  # 11.5 < 10 + 1 + 2
    assert not grace.grace(5.0).cancelled  # graces do not stack: still 2 s
    clock.now = 13.0
    assert grace.cancelled and grace.grace(5.0).cancelled


def test_a_deadlines_grace_after_the_users_cancel_is_the_cancels_grace(monkeypatch):
    from argusqt.progress import CancelToken

    clock = _Clock()
    monkeypatch.setattr(budget, "CLOCK", clock)
    user = CancelToken()
    grace = budget.DeadlineToken(budget.Deadline(None), user).grace(0.0)
    assert not grace.cancelled
    user.cancel()
    assert grace.cancelled  # a grace of 0 s after the user's cancel
    direct = budget.DeadlineToken(budget.Deadline(None))
    direct.cancel()
    assert direct.grace(0.0).cancelled


def test_the_insider_repair_stops_at_a_cancelled_token():
    from protect_helpers import mixed_problem

    from argusqt.errors import Cancelled
    from argusqt.progress import CancelToken
    from argusqt.protection.audit.insider_repair import make_publishable, repair_insiders
    from argusqt.protection.audit.publication import publication_audit
    from argusqt.protection.suppress.heuristic import solve_heuristic

    for seed in range(12):
        p = mixed_problem(seed)
        # HEUR without singleton cells: respondents alone in a cell often disclose others
        sup = is_suppressed(solve_heuristic(p).status) | p.primary
        verdict = publication_audit(p, sup, intervals=False)
        if verdict.outsider.ok and not verdict.ok:
            break
    else:
        pytest.fail("no pattern with insider disclosures only among the seeds")
    stopped = CancelToken()
    stopped.cancel()
    with pytest.raises(Cancelled):
        repair_insiders(p, sup, verdict, stopped)
    with pytest.raises(Cancelled):
        make_publishable(p, sup, intervals=False, cancel=stopped)
    grown = repair_insiders(p, sup, verdict, CancelToken())  # not cancelled: repaired
    assert (grown & ~sup).any()
