"""Deadline.over reads the CPU clock only once the wall clock says the limit can have passed
(D-114): it says "over" at the same polls as before — never "not over" once the run's CPU
has reached the limit — and tests' own clocks are read at every poll as before."""

from __future__ import annotations

import os
import time

import pytest

from argusqt.progress import run_cpu
from argusqt.protection.core import budget


def _hidden_expiries(monkeypatch, seconds: float, extra: float = 0.0) -> tuple[int, int, int]:
    """(polls that said "not over" although the CPU read just before had passed the limit,
    polls, CPU-clock reads by the deadline); the loop burns CPU until it says "over"."""
    reads = [0]

    def counted() -> float:
        reads[0] += 1
        return run_cpu()

    # the same function in both places keeps the gate on (it asks `CLOCK is run_cpu`)
    monkeypatch.setattr(budget, "CLOCK", counted)
    monkeypatch.setattr(budget, "run_cpu", counted)
    deadline = budget.Deadline(seconds)
    hidden = polls = 0
    for _ in range(10**8):
        before = run_cpu() - deadline.start
        polls += 1
        if deadline.over(extra):
            assert deadline.hit and deadline.elapsed >= seconds + extra
            return hidden, polls, reads[0]
        hidden += before >= seconds + extra
        if hidden > 1000:
            return hidden, polls, reads[0]
        sum(range(200))  # some CPU between polls
    raise AssertionError("the deadline never expired")


@pytest.mark.parametrize(("seconds", "extra"), [(0.0, 0.0), (0.3, 0.0), (0.2, 0.1)])
def test_the_gate_never_hides_an_expired_limit(monkeypatch, seconds, extra):
    assert budget.CLOCK is run_cpu and budget.WALL is time.monotonic  # the gate is on
    hidden, polls, reads = _hidden_expiries(monkeypatch, seconds, extra)
    assert hidden == 0
    if seconds + extra > budget.GATE_MARGIN:
        assert reads < polls  # and it spared reads


def test_the_processors_bound_is_what_makes_it_exact(monkeypatch):
    """A rate below the real one (the wall clock taken for less CPU than it allows) hides
    expiries: the bound on the CPU's growth is the gate's whole argument."""
    monkeypatch.setattr(budget, "CPU_RATE", 0.01)
    assert _hidden_expiries(monkeypatch, 0.3)[0] > 0


def test_a_process_uses_no_more_cpu_than_its_processors_give():
    wall0, cpu0 = time.monotonic(), run_cpu()
    while time.monotonic() - wall0 < 0.05:
        sum(range(1000))
    assert run_cpu() - cpu0 <= (time.monotonic() - wall0) * budget.CPU_RATE / 2
    assert budget.CPU_RATE == 2.0 * (os.cpu_count() or 0)


def test_a_test_clock_is_read_at_every_poll(monkeypatch):
    """A replaced CPU clock may run ahead of the wall clock: no gate then."""
    now = [0.0]
    monkeypatch.setattr(budget, "CLOCK", lambda: now[0])
    deadline = budget.Deadline(100.0)
    assert not deadline.over()
    now[0] = 100.0
    assert deadline.over() and deadline.hit


def test_the_backstop_still_ends_a_starved_run(monkeypatch):
    wall = [0.0]
    monkeypatch.setattr(budget, "WALL", lambda: wall[0])
    deadline = budget.Deadline(1.0)
    wall[0] = deadline.wall_seconds + 1.0
    assert deadline.over() and deadline.starved
