"""One generic QThread worker: runs a core callable off the GUI thread with progress and cancel.

The core never knows about Qt: it receives a plain progress callback and a CancelToken; the
callback turns ProgressEvents into a queued Qt signal, so the event loop stays responsive.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QThread, Signal

from argusqt.progress import CancelToken, ProgressEvent, leave_out

#: A core job: called as job(progress=callback, cancel=token) on the worker thread.
Job = Callable[..., Any]


class Worker(QThread):
    """Run `job(progress=..., cancel=...)` on its own thread; report through signals."""

    progressed = Signal(object)  # ProgressEvent
    succeeded = Signal(object)  # the job's return value
    failed = Signal(object)  # the exception raised by the job

    def __init__(self, job: Job, parent=None, min_interval: float = 0.05) -> None:
        super().__init__(parent)
        self.job = job
        self.cancel_token = CancelToken()
        self.min_interval = min_interval
        self._last_emit = 0.0
        self.result: Any = None
        self.error: BaseException | None = None
        #: the GUI thread (which makes the worker) draws the progress: its CPU is not the
        #: run's, so a time limit counts the same work as in the batch and the API (D-96)
        self._gui_thread = threading.get_ident()

    def cancel(self) -> None:
        """Ask the job to stop; it returns its best safe result as soon as it polls the token."""
        self.cancel_token.cancel()

    def _progress(self, event: ProgressEvent) -> None:
        # Rate-limit so a chatty solver cannot flood the GUI thread's event queue.
        now = time.perf_counter()
        if event.fraction == 1.0 or now - self._last_emit >= self.min_interval:
            self._last_emit = now
            self.progressed.emit(event)

    def run(self) -> None:  # noqa: D401 - Qt override
        put_back = leave_out(self._gui_thread)
        try:
            try:
                self.result = self.job(progress=self._progress, cancel=self.cancel_token)
            finally:
                put_back()
        except BaseException as exc:  # reported to the GUI, never swallowed
            self.error = exc
            self.failed.emit(exc)
        else:
            self.succeeded.emit(self.result)
