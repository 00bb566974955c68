"""Run one core call per user action on a Worker, with a progress dialog and error reporting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from argusqt.gui.errors import show_error
from argusqt.gui.gcpin import collector
from argusqt.gui.progressdialog import ProgressDialog
from argusqt.gui.worker import Job, Worker


class JobRunner(QObject):
    """Starts at most one job at a time; the GUI thread only receives signals."""

    busy_changed = Signal(bool)
    job_finished = Signal()

    def __init__(self, parent_widget: QWidget) -> None:
        super().__init__(parent_widget)
        self.parent_widget = parent_widget
        self.worker: Worker | None = None
        self.dialog: ProgressDialog | None = None

    @property
    def busy(self) -> bool:
        return self.worker is not None

    def start(
        self,
        title: str,
        job: Job,
        on_success: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        show_dialog: bool = True,
    ) -> Worker | None:
        """Run `job(progress, cancel)` off the GUI thread; callbacks run on the GUI thread."""
        if self.worker is not None:
            return None
        worker = Worker(job, self)
        self.worker = worker
        if show_dialog:
            self.dialog = ProgressDialog(title, self.parent_widget)
            self.dialog.cancel_clicked.connect(worker.cancel)
            worker.progressed.connect(self.dialog.update_event)
            dialog = self.dialog
            # quick jobs finish before the dialog appears: no flashing window
            QTimer.singleShot(300, lambda: dialog is self.dialog and dialog.show())

        def done_ok(result: Any) -> None:
            self._finish()
            if on_success is not None:
                try:
                    on_success(result)
                except Exception as exc:  # a bug in the GUI callback: still tell the user
                    show_error(self.parent_widget, exc, title)

        def done_err(exc: BaseException) -> None:
            self._finish()
            if on_error is not None:
                on_error(exc)
            else:
                show_error(self.parent_widget, exc, title)

        worker.succeeded.connect(done_ok)
        worker.failed.connect(done_err)
        self.busy_changed.emit(True)
        collector().hold()  # no garbage collection on the worker thread (see gcpin)
        worker.start()
        return worker

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _finish(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.wait(5000)
            worker.deleteLater()
            collector().release()
        if self.dialog is not None:
            self.dialog._clock.stop()
            self.dialog.hide()
            self.dialog.deleteLater()
            self.dialog = None
        self.busy_changed.emit(False)
        self.job_finished.emit()
