"""Time caps shared by the phases of a method, so that a method's time limit is the run's.

Every internal step of a method is bounded by counts (SCIP nodes, attacker LPs, path LPs,
repair rounds): the same input gives the same statuses on any machine and load. The user's
time limit is only a safety cap on top (argusqt/docs/methods.md §15.1): each phase gets what
is left of one Deadline, and a Deadline remembers whether the clock ever stopped anything
(`hit`), so that the result can say "the time limit decided" (ProtectionResult.timed_out).
The limit counts CPU-seconds of the process (D-96): a loaded machine reaches it after the same
work; a wall-clock backstop (BACKSTOP_FACTOR × the limit) still ends a starved run. The clocks
are module attributes so tests can drive them without waiting.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from argusqt.progress import CancelToken, run_cpu
from argusqt.protection.core.options import seconds

#: CPU-seconds of the run: the process's (every thread of a run: the worker, OPT's start
#: heuristic, HiGHS) less the GUI thread's while it waits for the run, so that load does not
#: move the limit (D-96); tests replace it with a fake clock
CLOCK = run_cpu
#: wall seconds, only for the backstop of a starved run; tests may replace it too
WALL = time.monotonic
#: how fast a process's CPU-seconds can grow on the wall clock: twice the machine's processors
#: (a margin; 0 when unknown: the CPU clock is read at every poll, D-114)
CPU_RATE = 2.0 * (os.cpu_count() or 0)
#: CPU-seconds short of a limit at which Deadline.over reads the CPU clock whatever the wall
#: clock says: covers the moment between a deadline's two first reads and a CPU clock that
#: charges a thread's time a scheduler tick late or early (≤ 15.6 ms a thread)
GATE_MARGIN = 0.25

#: the wall-clock backstop of a limit of s CPU-seconds: max(BACKSTOP_FACTOR · s, s +
#: BACKSTOP_MIN) wall seconds, so that a run the machine starves of CPU still ends (D-96)
BACKSTOP_FACTOR = 10.0
BACKSTOP_MIN = 300.0


class RunScope:
    """The deadlines of one run (run_method) the wall-clock backstop ended: per run, not per
    process, so that two runs (one after the other, or in two threads) never take each
    other's "the backstop decided" (session 20); a nested run counts in its callers too."""

    def __init__(self, parent: RunScope | None = None) -> None:
        self.parent = parent
        self.starved = 0

    def add(self) -> None:
        scope: RunScope | None = self
        while scope is not None:
            scope.starved += 1
            scope = scope.parent


#: the run a Deadline made now belongs to (a context variable: each thread, and each run
#: inside it, has its own; a method's helper thread runs in a copy of its run's context)
_RUN: ContextVar[RunScope | None] = ContextVar("argusqt_run_scope", default=None)


@contextmanager
def run_scope() -> Iterator[RunScope]:
    """A run's scope: the Deadlines made inside it report their starvation to it."""
    scope = RunScope(_RUN.get())
    token = _RUN.set(scope)
    try:
        yield scope
    finally:
        _RUN.reset(token)


def starvations() -> int:
    """Deadlines of the current run (run_scope) the wall-clock backstop has ended so far
    (0 outside a run)."""
    scope = _RUN.get()
    return 0 if scope is None else scope.starved


def backstop(seconds: float | None) -> float:
    """Wall seconds after which a run with a limit of `seconds` CPU-seconds stops anyway."""
    if seconds is None:
        return math.inf
    return max(BACKSTOP_FACTOR * float(seconds), float(seconds) + BACKSTOP_MIN)


def scip_time_limit(model: Any, seconds: float) -> None:
    """SCIP's time limit in CPU-seconds of the process, as the run's Deadline counts them."""
    model.setParam("timing/clocktype", 1)  # 1 = CPU time, 2 = wall clock (SCIP's default)
    model.setParam("limits/time", float(seconds))


def highs_time_limit(h: Any, deadline: Deadline) -> None:
    """HiGHS counts wall seconds of all its runs on one object: it may stop only at the
    run's wall-clock backstop, never before the CPU limit decides (D-96)."""
    left = deadline.wall_remaining
    h.setOptionValue("time_limit", math.inf if math.isinf(left) else h.getRunTime() + left)


#: the solvers' seeds: fixed, so that the same input gives the same statuses; recorded in
#: every result's figures (and so in the saved session) by run_method
SCIP_SEED_SHIFT = 0
HIGHS_SEED = 0


def seeds() -> dict[str, int]:
    """The seeds a run used, as recorded with its result's figures (flat: the session file
    keeps plain values): SCIP's randomization/randomseedshift and HiGHS's random_seed."""
    return {"seed_scip": SCIP_SEED_SHIFT, "seed_highs": HIGHS_SEED}


#: the grace a run may overrun its time limit by to finish the audit of its best pattern or
#: say why there is none: GRACE_SHARE of the limit, at least GRACE_MIN seconds
GRACE_SHARE = 0.1
GRACE_MIN = 5.0


def limit_grace(seconds: float | None) -> float:
    """Seconds a run with a limit of `seconds` may end after it (0 without a limit)."""
    if seconds is None:
        return 0.0
    return max(GRACE_MIN, GRACE_SHARE * float(seconds))


def out_of_time(
    limit: float | None,
    when: str,
    outcome: str = "no pattern was published and the table was left unchanged",
    advice: str = "give the method more time, or use a faster one",
) -> str:
    """The refusal of a run whose time limit (and grace) ended before it had an audited
    pattern: one wording for every method."""
    return (
        f"the time limit of {limit or 0:g} CPU-s (+ {limit_grace(limit):g} s grace) ran out "
        f"{when}; {outcome}: {advice}"
    )


def starved_note(limit: float | None) -> str:
    """What a run adds when the wall-clock backstop, not its CPU limit, ended it (D-96)."""
    return (
        f"the wall-clock backstop of {backstop(limit):g} s ran out before the time limit of "
        f"{limit or 0:g} CPU-s: the machine gave the run too little processor time, so the "
        "clock decided"
    )


def stop_after(seconds: float | None) -> float:
    """Seconds past the limit at which a run's work stops: half its grace, so that the other
    half covers stopping (the LP under way, unwinding, the log; docs/design.md, D-19)."""
    return 0.5 * limit_grace(seconds)


class Deadline:
    """`seconds` CPU-seconds from now (None = no limit): what is left, and whether it has
    passed, on CLOCK; or the wall-clock backstop has (`starved`).

    `hit` turns True the first time `expired` is seen True: a phase then changed its course
    because of the clock, and the run's result is no longer the same on every machine.
    """

    def __init__(self, seconds: float | None):
        self.start = CLOCK()
        self.wall_start = WALL()
        self.seconds = None if seconds is None else max(0.0, float(seconds))
        self.wall_seconds = backstop(self.seconds)
        self.hit = False
        #: the wall-clock backstop ended it before the CPU limit (a starved run)
        self.starved = False
        #: the run it belongs to (run_scope), told when the backstop ends it
        self.scope = _RUN.get()

    @property
    def elapsed(self) -> float:
        return CLOCK() - self.start

    @property
    def wall_elapsed(self) -> float:
        return WALL() - self.wall_start

    @property
    def wall_remaining(self) -> float:
        """Wall seconds left before the backstop (inf without a limit)."""
        return max(0.0, self.wall_seconds - self.wall_elapsed)

    def over(self, extra: float = 0.0) -> bool:
        """True when the limit plus `extra` has passed on CLOCK, or the backstop plus `extra`
        on the wall clock (then `starved`); marks the deadline hit."""
        if self.seconds is None:
            return False
        wall = self.wall_elapsed
        if (
            wall * CPU_RATE < self.seconds + extra - GATE_MARGIN
            and wall < self.wall_seconds + extra
            and CLOCK is run_cpu
            and WALL is time.monotonic
        ):
            # so little wall time has passed that the run's CPU cannot have reached the limit:
            # the answer the CPU clock gives, without its system call (D-114)
            return False
        if self.elapsed >= self.seconds + extra:
            self.hit = True
        elif self.wall_elapsed >= self.wall_seconds + extra:
            self.starve()
        else:
            return False
        return True

    def starve(self) -> None:
        """The wall-clock backstop ended this deadline (here or inside a solver)."""
        if not self.starved and self.scope is not None:
            self.scope.add()
        self.hit = self.starved = True

    @property
    def remaining(self) -> float:
        """CPU-seconds left; 0 past the limit or the backstop, which then marks the deadline
        hit (or starved): a caller that stops on 0 was stopped by the clock (session 20)."""
        if self.seconds is None:
            return math.inf
        if self.over():
            return 0.0
        return max(0.0, self.seconds - self.elapsed)

    @property
    def expired(self) -> bool:
        self.over()
        return self.hit

    def part(self, share: float, reserve: float = 0.0) -> float | None:
        """Seconds for a phase: `share` of what is left after keeping `reserve` (None = no limit)."""
        if self.seconds is None:
            return None
        return max(0.0, share * (self.remaining - reserve))


def seconds_param(params: Mapping[str, Any], *names: str) -> float | None:
    """The first of `names` given in params as a number of seconds (None when none is)."""
    for name in names:
        value = seconds(params.get(name))
        if value is not None:
            return value
    return None


class DeadlineToken(CancelToken):
    """Cancelled when `parent` is (the user's cancel) or when `deadline` plus `extra` seconds
    has passed: hands a run's time limit to code that polls a cancel token (the audits)."""

    def __init__(self, deadline: Deadline, parent: CancelToken | None = None, extra: float = 0.0):
        super().__init__()
        self.deadline = deadline
        self.parent = parent
        self.extra = float(extra)
        #: the grace this token is (grace()), so that graces do not stack
        self.graced: float | None = None

    def grace(self, seconds: float) -> CancelToken:
        """A token cancelled `seconds` after this one: after the deadline on the run's clock
        (CLOCK: a CPU-second limit stays one, a test's clock drives it; D-52, D-96), after the
        user's cancel by the parent's grace. Graces do not stack."""
        base = self.extra
        if self.graced is not None:
            seconds = min(float(seconds), self.graced)
            base -= self.graced
        if self._event.is_set() and not (
            (self.parent is not None and self.parent.cancelled) or self.out_of_time
        ):
            return super().grace(seconds)  # cancelled by a direct cancel(): its wall grace
        parent = self.parent.grace(seconds) if self.parent is not None else None
        token = DeadlineToken(self.deadline, parent, extra=base + float(seconds))
        token.graced = float(seconds)
        return token

    @property
    def out_of_time(self) -> bool:
        return self.deadline.over(self.extra)

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        if (self.parent is not None and self.parent.cancelled) or self.out_of_time:
            self.cancel()
            return True
        return False


class WorkBudget:
    """A count (attacker LPs) shared by the phases of a run: what the clock was before, but
    the same on every machine, so a phase that stops at it stops at the same place."""

    def __init__(self, total: int):
        self.total = max(0, int(total))
        self.used = 0

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.used)

    def share(self, parts: int) -> int:
        """An equal share of what is left among `parts` phases (unused shares roll on)."""
        return self.remaining // max(1, int(parts))

    def spend(self, count: int) -> None:
        self.used += max(0, int(count))
