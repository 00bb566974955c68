"""Progress events and cancel tokens shared by every long-running core function.

The GUI passes a callback and a token; the core never knows about threads or Qt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ProgressEvent:
    """A small, immutable snapshot of a running method (safe to send across threads)."""

    message: str = ""
    fraction: float | None = None  # 0..1 when known
    bound: float | None = None  # lower bound (minimisation)
    incumbent: float | None = None  # best safe solution value so far
    gap: float | None = None  # relative gap, 0.01 = 1 %
    cuts: int | None = None
    elapsed: float | None = None  # seconds since start
    extra: dict = field(default_factory=dict)


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(event: ProgressEvent) -> None:
    """Default callback: discard events."""


class CancelToken:
    """Thread-safe cancel flag; methods poll `cancelled` and return their best safe result."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)


class Stopwatch:
    """Elapsed seconds since creation, for the `elapsed` field of events."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start
