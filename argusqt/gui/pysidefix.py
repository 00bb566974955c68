"""Guard against PySide6 builds that drop a reference to None on every void call.

PySide6 6.12.0 on Python < 3.12 (where None is not immortal) decrements None's reference
count on each call of a method returning void; a long session then aborts with "deallocating
None". pyproject excludes that release; this guard keeps the app alive if it is installed.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, QTimer

_keeper: list[None] = []
# The keeper must outlive interpreter shutdown: freeing it would give back the references
# PySide6 took away and abort at exit. One leaked reference keeps it alive for good.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_keeper))


def void_calls_drain_none(samples: int = 200) -> bool:
    """True when calling a void Qt method lowers None's reference count (the 6.12.0 bug)."""
    if sys.version_info >= (3, 12):
        return False  # None is immortal
    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(samples):
        probe.setObjectName("probe")
    return sys.getrefcount(None) < before - samples // 2


class NoneRefGuard(QObject):
    """Tops None's reference count back up a few times per second."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 200) -> None:
        super().__init__(parent)
        self.target = sys.getrefcount(None) + 100_000
        self.top_up()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.top_up)
        self.timer.start(interval_ms)

    def top_up(self) -> None:
        now = sys.getrefcount(None)
        if now > self.target:  # None gained references elsewhere: keep the margin above them
            self.target = now
        elif now < self.target:
            _keeper.extend([None] * (self.target - now))


def install(app: QObject) -> NoneRefGuard | None:
    """Install the guard on `app` when this PySide6 build has the bug; None otherwise."""
    if not void_calls_drain_none():
        return None
    guard = NoneRefGuard(app)
    app.setProperty("argusqt_none_guard", True)
    return guard
