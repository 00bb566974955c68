"""Progress events and cancel tokens shared by every long-running core function.

The GUI passes a callback and a token; the core never knows about threads or Qt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import field

from argusqt.dataclass import dataclass


@dataclass(frozen=True)
class ProgressEvent:
    """A small, immutable snapshot of a running method (safe to send across threads)."""

    message: str = ""
    fraction: float | None = None  # 0..1 when known
    bound: float | None = None  # lower bound (minimisation)
    incumbent: float | None = None  # best safe solution value so far
    gap: float | None = None  # relative gap, 0.01 = 1 %
    cuts: int | None = None
    elapsed: float | None = None  # CPU-seconds since start (the time limit's clock, D-96)
    extra: dict = field(default_factory=dict)


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(event: ProgressEvent) -> None:
    """Default callback: discard events."""


class CancelToken:
    """Thread-safe cancel flag; methods poll `cancelled` and return their best safe result."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.cancelled_at: float | None = None  # time.monotonic() of the first cancel

    def cancel(self) -> None:
        if self.cancelled_at is None:
            self.cancelled_at = time.monotonic()
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def grace(self, seconds: float) -> CancelToken:
        """A token cancelled `seconds` after this one: time to finish or audit a result."""
        return GraceToken(self, seconds)


class GraceToken(CancelToken):
    """Cancelled once its parent has been cancelled for `seconds` (the cancel's time budget)."""

    def __init__(self, parent: CancelToken, seconds: float) -> None:
        super().__init__()
        self.parent = parent
        self.seconds = float(seconds)

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        if not self.parent.cancelled:
            return False
        t0 = self.parent.cancelled_at
        if t0 is None or time.monotonic() - t0 >= self.seconds:
            self.cancel()
            return True
        return False

    def grace(self, seconds: float) -> GraceToken:
        """Graces do not stack: the budget stays counted from the first cancel."""
        return GraceToken(self.parent, min(self.seconds, seconds))

    def wait(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.cancelled:
                return True
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))
        return self.cancelled


#: CPU clocks of threads whose work is no run's (the GUI thread while a job runs: it draws
#: the progress), with how many jobs asked; run_cpu leaves them out (D-96)
_LEFT_OUT: dict[int, int] = {}
_left_out_lock = threading.Lock()


def run_cpu() -> float:
    """CPU-seconds of the process less those of the threads left out (leave_out): what a
    run's time limit counts, the same in the GUI, the batch and the API (D-96)."""
    now = time.process_time()
    for clock in tuple(_LEFT_OUT):
        try:
            now -= time.clock_gettime(clock)
        except OSError:  # the thread has ended: its CPU stays in the process's
            pass
    return now


def leave_out(thread_id: int) -> Callable[[], None]:
    """Leave thread `thread_id`'s CPU out of run_cpu until the returned function is called
    (nothing to leave out where threads have no CPU clock of their own: Windows)."""
    try:
        clock = time.pthread_getcpuclockid(thread_id)
    except (AttributeError, OSError):
        return lambda: None
    with _left_out_lock:
        _LEFT_OUT[clock] = _LEFT_OUT.get(clock, 0) + 1

    def put_back() -> None:
        with _left_out_lock:
            if _LEFT_OUT.get(clock, 0) <= 1:
                _LEFT_OUT.pop(clock, None)
            else:
                _LEFT_OUT[clock] -= 1

    return put_back


#: the clock of Stopwatch: CPU-seconds of the run (run_cpu), the clock of the user's time
#: limit (docs/design.md, D-96); tests replace it with a fast or slow one
CLOCK = run_cpu


class Stopwatch:
    """CPU-seconds since creation (`elapsed`, what time limits and results count) and wall
    seconds (`wall`, for what a person watches)."""

    def __init__(self) -> None:
        self.start = CLOCK()
        self.wall_start = time.monotonic()

    @property
    def elapsed(self) -> float:
        return CLOCK() - self.start

    @property
    def wall(self) -> float:
        return time.monotonic() - self.wall_start
