"""The user's time limit counts CPU-seconds of the run (docs/design.md, D-96): a run that
sleeps does not reach it, one that works does; SCIP counts CPU too; HiGHS may stop only at
the wall-clock backstop; a starved run ends at the backstop and says so. No wall-clock
assertion: the wall clock is a fake wherever a test reads it."""

from __future__ import annotations

import math
import threading
import time

import highspy
import numpy as np
import pytest
from protect_helpers import sized_problem

from argusqt import progress
from argusqt.errors import TimeLimitError
from argusqt.protection.adjust import cta, cta_model, rounding
from argusqt.protection.core import budget
from argusqt.protection.core.budget import Deadline, DeadlineToken, backstop
from argusqt.protection.run import run_method
from argusqt.protection.suppress import branch_and_cut


def _burn(deadline: Deadline, most: int = 10**9) -> int:
    """Busy work until the deadline expires (bounded by a count, never by the clock)."""
    n = 0
    while not deadline.expired and n < most:
        n += sum(range(1000)) > 0
    return n


def test_the_run_clocks_count_cpu_seconds():
    assert budget.CLOCK is progress.run_cpu
    assert progress.CLOCK is progress.run_cpu


def test_a_thread_left_out_does_not_count():
    """The GUI thread's CPU while it draws a run's progress is left out of the run's clock."""
    box: dict = {}
    ready, go, done, end = (threading.Event() for _ in range(4))

    def other() -> None:  # a thread busy for a count, not a clock; alive while measured
        box["id"] = threading.get_ident()
        ready.set()
        go.wait()
        box["n"] = sum(range(3_000_000))
        done.set()
        end.wait()

    t = threading.Thread(target=other)
    t.start()
    ready.wait()
    put_back = progress.leave_out(box["id"])
    before = progress.run_cpu()
    own0, other0 = time.thread_time(), time.process_time()
    go.set()
    done.wait()
    counted = progress.run_cpu() - before
    spent = (time.process_time() - other0) - (time.thread_time() - own0)  # the other's CPU
    put_back()
    end.set()
    t.join()
    assert spent > 0.01
    assert counted < 0.5 * spent


def test_a_sleeping_run_does_not_reach_its_limit_a_busy_one_does():
    box: dict = {}

    def run() -> None:  # a worker thread, as the GUI and the API run a method
        d = Deadline(0.3)
        time.sleep(0.6)  # waiting is not work: the CPU limit is not reached
        box["after_sleep"] = d.expired
        box["burned"] = _burn(d)
        box["expired"], box["starved"] = d.expired, d.starved

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert box["after_sleep"] is False
    assert box["expired"] is True and box["starved"] is False
    assert box["burned"] < 10**9


class _Wall:
    """A fake wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_wall_clock_backstop_ends_a_starved_deadline(monkeypatch):
    wall = _Wall()
    monkeypatch.setattr(budget, "WALL", wall)
    monkeypatch.setattr(budget, "CLOCK", lambda: 0.0)  # no CPU at all: a starved run
    assert backstop(60.0) == 600.0 and backstop(1.0) == 301.0 and backstop(None) == math.inf
    with budget.run_scope():
        d = Deadline(60.0)
        token = DeadlineToken(d, extra=5.0)
        wall.now = 599.0
        assert not d.expired and d.remaining == 60.0 and d.wall_remaining == 1.0
        wall.now = 600.0
        assert d.expired and d.starved and d.remaining == 0.0
        assert not token.cancelled  # the grace counts past the backstop too
        wall.now = 605.0
        assert token.cancelled
        assert budget.starvations() == 1
    assert budget.starvations() == 0  # outside the run
    assert not Deadline(None).expired


def test_a_starved_run_says_the_backstop_decided(monkeypatch):
    """The run's wall clock jumps 100 s at every reading: HEUR (60 CPU-s) ends at its
    backstop, whichever way, saying so."""

    class Jumping(_Wall):
        def __call__(self) -> float:
            self.now += 100.0
            return self.now

    monkeypatch.setattr(budget, "WALL", Jumping())
    p = sized_problem("2D", 60, seed=3)
    try:
        r = run_method(p, "HEUR", {"max_time": 60})
    except TimeLimitError as err:
        assert "wall-clock backstop of 600 s" in str(err)
    else:
        assert r.timed_out
        assert any("wall-clock backstop of 600 s" in line for line in r.log)


def _recording(base: type, seen: list) -> type:
    """A pyscipopt Model that records its clock type and time limit when it solves."""

    class Recording(base):  # type: ignore[misc, valid-type]
        def _note(self) -> None:
            seen.append((self.getParam("timing/clocktype"), self.getParam("limits/time")))

        def optimize(self):  # type: ignore[no-untyped-def]
            self._note()
            return super().optimize()

        def optimizeNogil(self):  # type: ignore[no-untyped-def]
            self._note()
            return super().optimizeNogil()

    return Recording


@pytest.mark.parametrize(
    ("method", "params", "modules"),
    [
        ("OPT", {"max_time": 30}, (branch_and_cut,)),
        ("RND", {"base": 100, "max_time": 30}, (rounding,)),
        ("CTA", {"max_time": 30}, (cta, cta_model)),
    ],
)
def test_scip_models_count_cpu_seconds(monkeypatch, method, params, modules):
    seen: list = []
    for module in modules:
        monkeypatch.setattr(module, "Model", _recording(module.Model, seen))
    p = sized_problem("2D", 40, seed=1)
    p.cost = np.abs(p.values)
    run_method(p, method, params)
    assert seen, "no SCIP model solved"
    assert all(clock == 1 for clock, _ in seen)  # 1 = CPU time
    assert all(0 < limit <= 30 for _, limit in seen)


def test_highs_is_told_no_wall_limit_below_the_backstop(monkeypatch):
    """With the wall clock standing still every deadline's backstop stays whole: HiGHS is
    given its own run time plus the backstop of what its phase had left (≥ BACKSTOP_MIN),
    never the CPU seconds left."""
    monkeypatch.setattr(budget, "WALL", _Wall())
    told: list[float] = []
    set_option = highspy.Highs.setOptionValue

    def record(self, name, value):  # type: ignore[no-untyped-def]
        if name == "time_limit":
            told.append(float(value) - self.getRunTime())
        return set_option(self, name, value)

    monkeypatch.setattr(highspy.Highs, "setOptionValue", record)
    p = sized_problem("1H2D", 120, seed=2)
    p.cost = np.abs(p.values)
    r = run_method(p, "OPT", {"max_time": 30})
    assert not r.timed_out
    assert told, "no attacker LP got a time limit"
    assert min(told) >= budget.BACKSTOP_MIN
    assert max(told) <= backstop(30) + 1e-6


class _Cpu(_Wall):
    """A fake CPU clock the test moves by hand."""


def test_remaining_at_zero_marks_the_deadline_hit(monkeypatch):
    """A caller that stops because nothing is left was stopped by the clock: remaining()
    reaching 0 (past the limit, or past the backstop) marks the deadline (session 20)."""
    cpu, wall = _Cpu(), _Wall()
    monkeypatch.setattr(budget, "CLOCK", cpu)
    monkeypatch.setattr(budget, "WALL", wall)
    d = Deadline(10.0)
    cpu.now = 4.0
    assert d.remaining == 6.0 and not d.hit
    cpu.now = 10.0
    assert d.remaining == 0.0 and d.hit and not d.starved
    s = Deadline(10.0)
    wall.now = backstop(10.0)
    assert s.remaining == 0.0 and s.hit and s.starved
    assert Deadline(None).remaining == math.inf


def test_rounding_stopped_by_the_clock_between_trials_says_so(monkeypatch):
    """The zero-restricted trial finds none, and the limit passes before the K-step trial:
    the run says the time limit cut it short, not that no rounding exists (session 20)."""
    cpu = _Cpu()
    monkeypatch.setattr(budget, "CLOCK", cpu)
    monkeypatch.setattr(budget, "WALL", _Wall())
    solve_part = rounding._solve_part
    calls: list[int] = []

    def zero_infeasible_then_late(*args, **kw):  # type: ignore[no-untyped-def]
        calls.append(args[5])
        if args[5] == 0:
            cpu.now = 1e6  # the CPU limit passes during the first trial
            out = rounding._PartOutcome()
            out.status = "infeasible"
            return out
        return solve_part(*args, **kw)

    monkeypatch.setattr(rounding, "_solve_part", zero_infeasible_then_late)
    p = sized_problem("2D", 40, seed=1)
    try:  # RAPID's fallback is published when it passes the audit, refused when not
        r = run_method(p, "RND", {"base": 100, "steps": 1, "max_time": 30})
    except TimeLimitError as err:
        assert "the time limit of 30 CPU-s" in str(err) and "no additive" not in str(err)
    else:
        assert r.timed_out
        assert any("time limit decided" in line for line in r.log)
    assert calls == [0]


def test_starvations_are_counted_per_run(monkeypatch):
    """One run's starved deadline is not another's: two runs one after the other, and two
    runs in two threads at once; a nested run counts in its caller too (session 20)."""
    wall = _Wall()
    monkeypatch.setattr(budget, "WALL", wall)
    monkeypatch.setattr(budget, "CLOCK", lambda: 0.0)
    with budget.run_scope() as first:
        Deadline(1.0).starve()
        with budget.run_scope() as inner:
            Deadline(1.0).starve()
    with budget.run_scope() as second:
        assert budget.starvations() == 0
    assert (first.starved, inner.starved, second.starved) == (2, 1, 0)
    box: dict = {}
    started, starved = threading.Event(), threading.Event()

    def starving() -> None:
        with budget.run_scope() as scope:
            started.set()
            Deadline(1.0).starve()
            box["a"] = scope.starved
            starved.set()

    def quiet() -> None:
        with budget.run_scope() as scope:
            started.wait()
            starved.wait()
            box["b"] = scope.starved

    threads = [threading.Thread(target=quiet), threading.Thread(target=starving)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert box == {"a": 1, "b": 0}


def test_a_run_does_not_take_another_runs_backstop_note(monkeypatch):
    """A run the CPU limit cuts short while another thread's run is starved says the time
    limit decided, not that the wall-clock backstop did (session 20)."""
    cpu = _Cpu()
    monkeypatch.setattr(budget, "CLOCK", cpu)
    monkeypatch.setattr(budget, "WALL", _Wall())

    def other_run_starves() -> None:
        with budget.run_scope():
            Deadline(1.0).starve()

    def late(*args, **kw):  # type: ignore[no-untyped-def]
        t = threading.Thread(target=other_run_starves)
        t.start()
        t.join()
        cpu.now = 1e6  # this run's CPU limit passes during its trial: SCIP stops there
        out = rounding._PartOutcome()
        out.status = "timelimit"
        return out

    monkeypatch.setattr(rounding, "_solve_part", late)
    p = sized_problem("2D", 40, seed=1)
    try:
        r = run_method(p, "RND", {"base": 100, "steps": 1, "max_time": 30})
    except TimeLimitError as err:
        text = str(err)
    else:
        assert r.timed_out
        text = "\n".join(r.log)
    assert "time limit" in text and "wall-clock backstop" not in text
