"""Keep Python's cyclic garbage collector on the GUI thread while worker threads run.

CPython collects cycles in whichever thread crosses the allocation threshold. A core job
allocating heavily on a worker QThread (pandas parsing a table file) could then free Qt
objects of the GUI thread caught in reference cycles (dialogs, views of an earlier window)
from the wrong thread: an intermittent segfault inside whatever the worker was doing. While
a job runs, automatic collection is off and a GUI-thread timer collects by the same
generation thresholds; afterwards the previous setting is restored. (The same pattern is
used by pyqtgraph and calibre; no library provides it for PySide6.)
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: how often the GUI thread checks the allocation counters while a job runs
INTERVAL_MS = 200


class GuiThreadCollector(QObject):
    """Reference-counted: `hold()` when a worker starts, `release()` when it has finished."""

    def __init__(self) -> None:
        super().__init__()
        self.holds = 0
        self.was_enabled = True
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.collect_due)

    def hold(self) -> None:
        if self.holds == 0:
            self.was_enabled = gc.isenabled()
            gc.disable()
            self.timer.start()
        self.holds += 1

    def release(self) -> None:
        if self.holds == 0:
            return
        self.holds -= 1
        if self.holds == 0:
            self.timer.stop()
            self.collect_due()
            if self.was_enabled:
                gc.enable()

    def collect_due(self) -> None:
        """Collect the generations whose counters passed their thresholds (as CPython would)."""
        t0, t1, t2 = gc.get_threshold()
        c0, c1, c2 = gc.get_count()
        if c0 <= t0:
            return
        generation = 2 if (c1 > t1 and c2 > t2) else 1 if c1 > t1 else 0
        gc.collect(generation)


_collector: GuiThreadCollector | None = None


def collector() -> GuiThreadCollector:
    """The process-wide collector (created on first use, on the GUI thread)."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector()
    return _collector
