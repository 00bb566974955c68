"""A progress dialog with live solver figures (bound, incumbent, gap, elapsed) and Cancel."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from argusqt.progress import ProgressEvent


def _fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "–"
    if pct:
        return f"{100 * x:.2f} %"
    return f"{x:,.2f}"


class ProgressDialog(QDialog):
    """Shows the latest ProgressEvent of a worker; Cancel asks the job for its best safe result."""

    cancel_clicked = Signal()

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumWidth(420)
        self.cancel_requested = False
        self._start = time.perf_counter()

        self.message = QLabel("Starting…")
        self.message.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy until a fraction arrives
        self.bound = QLabel("–")
        self.incumbent = QLabel("–")
        self.gap = QLabel("–")
        self.elapsed = QLabel("0 s")
        figures = QFormLayout()
        figures.addRow("Lower bound:", self.bound)
        figures.addRow("Best safe solution (cost):", self.incumbent)
        figures.addRow("Gap:", self.gap)
        figures.addRow("Elapsed:", self.elapsed)
        for lab in (self.bound, self.incumbent, self.gap, self.elapsed):
            lab.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(200)
        self.log.setFixedHeight(90)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.rejected.connect(self.request_cancel)

        lay = QVBoxLayout(self)
        lay.addWidget(self.message)
        lay.addWidget(self.bar)
        lay.addLayout(figures)
        lay.addWidget(self.log)
        lay.addWidget(self.buttons)

        self._clock = QTimer(self)
        self._clock.timeout.connect(self._tick)
        self._clock.start(250)

    def _tick(self) -> None:
        self.elapsed.setText(f"{time.perf_counter() - self._start:,.1f} s")

    def update_event(self, ev: ProgressEvent) -> None:
        """Show one progress event (called on the GUI thread through a queued signal)."""
        if ev.message:
            if ev.message != self.message.text():
                self.log.appendPlainText(ev.message)
            self.message.setText(ev.message)
        if ev.fraction is not None:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(max(0.0, min(1.0, ev.fraction)) * 1000))
        if ev.bound is not None:
            self.bound.setText(_fmt(ev.bound))
        if ev.incumbent is not None:
            self.incumbent.setText(_fmt(ev.incumbent))
        if ev.gap is not None:
            self.gap.setText(_fmt(ev.gap, pct=True))

    def request_cancel(self) -> None:
        """First press: ask the job to stop (it returns the best safe result so far)."""
        self.cancel_requested = True
        self.message.setText("Cancelling… waiting for the best safe result so far.")
        self.buttons.setEnabled(False)
        self.cancel_clicked.emit()

    def reject(self) -> None:  # Esc / close button behave like Cancel, never orphan the job
        if not self.cancel_requested:
            self.request_cancel()
