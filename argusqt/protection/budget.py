"""Time budgets shared by the phases of a method, so that a method's time limit is the run's.

A method gives each phase (start pattern, branch-and-cut, clean-up, final audit) what is
left of one Deadline instead of the whole limit again. The clock is a module attribute so
tests can drive it without waiting.
"""

from __future__ import annotations

import math
import time

from argusqt.progress import CancelToken

#: seconds, monotonic; tests replace it with a fake clock
CLOCK = time.perf_counter


class Deadline:
    """`seconds` from now (None = no limit): what is left, and whether it has passed."""

    def __init__(self, seconds: float | None):
        self.start = CLOCK()
        self.seconds = None if seconds is None else max(0.0, float(seconds))

    @property
    def elapsed(self) -> float:
        return CLOCK() - self.start

    @property
    def remaining(self) -> float:
        if self.seconds is None:
            return math.inf
        return max(0.0, self.seconds - self.elapsed)

    @property
    def expired(self) -> bool:
        return self.seconds is not None and self.elapsed >= self.seconds

    def part(self, share: float, reserve: float = 0.0) -> float | None:
        """Seconds for a phase: `share` of what is left after keeping `reserve` (None = no limit)."""
        if self.seconds is None:
            return None
        return max(0.0, share * (self.remaining - reserve))


def seconds_param(params: dict, *names: str) -> float | None:
    """The first of `names` given in params as a number of seconds (None when none is)."""
    for name in names:
        value = params.get(name)
        if value is not None and value != "":
            return float(value)
    return None


class DeadlineToken(CancelToken):
    """Cancelled when `parent` is (the user's cancel) or when `deadline` plus `extra` seconds
    has passed: hands a run's time limit to code that polls a cancel token (the audits)."""

    def __init__(self, deadline: Deadline, parent: CancelToken | None = None, extra: float = 0.0):
        super().__init__()
        self.deadline = deadline
        self.parent = parent
        self.extra = float(extra)

    @property
    def out_of_time(self) -> bool:
        d = self.deadline
        return d.seconds is not None and d.elapsed >= d.seconds + self.extra

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        if (self.parent is not None and self.parent.cancelled) or self.out_of_time:
            self.cancel()
            return True
        return False
