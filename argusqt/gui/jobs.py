"""Run one core call per user action on a Worker, with the live solver panel and error reporting.

The panel is a dock of the main window (a tool window beside any other parent), never modal:
the tables stay readable while a job runs; the window disables the actions that would
conflict while `busy` is true.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from argusqt.errors import Cancelled
from argusqt.gui.errors import show_error
from argusqt.gui.gcpin import collector
from argusqt.gui.solverpanel import SolverPanel
from argusqt.gui.worker import Job, Worker


def cancel_note(result: Any) -> str:
    """The session's sentence on what a cancelled protection kept ('' for other results);
    linked tables give one per table."""
    results = result if isinstance(result, list | tuple) else [result]
    return " ".join(n for r in results if (n := getattr(r, "cancel_note", "")))


class JobRunner(QObject):
    """Starts at most one job at a time; the GUI thread only receives signals."""

    busy_changed = Signal(bool)
    job_finished = Signal()

    def __init__(self, parent_widget: QWidget) -> None:
        super().__init__(parent_widget)
        self.parent_widget = parent_widget
        self.worker: Worker | None = None
        #: the panel while a job runs (None otherwise); it outlives the job with its figures
        self.dialog: SolverPanel | None = None
        self.panel = SolverPanel()
        self.panel.cancel_clicked.connect(self.cancel)
        self.dock: QDockWidget | None = None
        if isinstance(parent_widget, QMainWindow):
            self.dock = QDockWidget("Solver", parent_widget)
            self.dock.setObjectName("solverDock")
            self.dock.setWidget(self.panel)
            parent_widget.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
            self.dock.hide()
        else:
            self.panel.setParent(parent_widget, Qt.WindowType.Tool)
            self.panel.hide()

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
            panel = self.panel
            panel.start(title)
            self.dialog = panel
            worker.progressed.connect(panel.update_event)

            # quick jobs finish before the panel appears: no flashing window
            def show_later() -> None:
                if self.dialog is panel:
                    self._show_panel()

            QTimer.singleShot(300, show_later)

        def done_ok(result: Any) -> None:
            panel = self.dialog
            self._finish("cancelled" if worker.cancel_token.cancelled else "finished")
            if panel is not None:
                panel.show_result(result)  # the kept result's cost, bound and gap
                panel.show_outcome(cancel_note(result))
            if on_success is not None:
                try:
                    on_success(result)
                except Exception as exc:  # a bug in the GUI callback: still tell the user
                    show_error(self.parent_widget, exc, title)

        def done_err(exc: BaseException) -> None:
            panel = self.dialog
            self._finish("cancelled" if worker.cancel_token.cancelled else "failed")
            if panel is not None and isinstance(exc, Cancelled):
                panel.show_outcome(str(exc))  # what the cancel left, as the log says it
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

    def _show_panel(self) -> None:
        if self.dock is not None:
            self.dock.show()
            self.dock.raise_()
        else:
            self.panel.show()

    def _finish(self, outcome: str = "finished") -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.wait(5000)
            worker.deleteLater()
            collector().release()
        if self.dialog is not None:
            self.dialog.finish(outcome)
            if not self.dialog.solver_seen:  # a read or a write: nothing worth keeping shown
                (self.dock or self.panel).hide()
            self.dialog = None
        self.busy_changed.emit(False)
        self.job_finished.emit()
