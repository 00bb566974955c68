"""Time budgets shared by the phases of a method, so that a method's time limit is the run's.

A method gives each phase (start pattern, branch-and-cut, clean-up, final audit) what is
left of one Deadline instead of the whole limit again. The clock is a module attribute so
tests can drive it without waiting.
"""

from __future__ import annotations

import math
import time

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
