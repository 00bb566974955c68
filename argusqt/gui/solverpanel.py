"""The live solver panel: phase, best safe cost, lower bound, gap, elapsed time and their plot.

It is a dock of the main window, not a dialog: the tables stay usable (tabs, scrolling,
reading cells) while a method runs; the actions that would change a table are disabled by
the window while the job is busy. Cancel asks the job for its best audited result.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from argusqt.gui.formatting import format_cost, format_gap
from argusqt.progress import ProgressEvent

if TYPE_CHECKING:
    from argusqt.gui.charts import SolverTraceChart


#: the incumbent of a finished pattern, and of one still being built (a heuristic's running
#: cost while it walks the primaries: not yet a pattern, so not called one). The solver's
#: best pattern is not yet the kept one: the insider audit after it may add cells.
BEST_CAPTION = "Best pattern so far (cost):"
BUILDING_CAPTION = "Pattern being built (cost so far):"
#: the figures of a progress message (counts, percentages)
STEP_FIGURES = re.compile(r"\d[\d,.]*")
#: "3 of 13" in a progress message: what its fraction counts
COUNTED = re.compile(r"\d[\d,]* of \d[\d,]*")


class SolverPanel(QWidget):
    """Shows the ProgressEvents of the running job; figures appear with the first event."""

    cancel_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("solverPanel")
        self.setMinimumWidth(340)
        self.cancel_requested = False
        self.running = False
        self.solver_seen = False  # an event carried a cost or a bound (a method, not a read)
        self._start = time.perf_counter()
        self._phase = ""

        self.title = QLabel()
        f = QFont(self.title.font())
        f.setBold(True)
        self.title.setFont(f)
        self.title.setWordWrap(True)
        self.message = QLabel("Starting…")
        self.message.setObjectName("solverPhase")
        self.message.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy until a fraction arrives
        self.incumbent = QLabel("–")
        self.bound = QLabel("–")
        self.gap = QLabel("–")
        self.elapsed = QLabel("0.0 s")
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        self.incumbent_caption = QLabel(BEST_CAPTION)
        rows = (
            (self.incumbent_caption, self.incumbent),
            (QLabel("Lower bound:"), self.bound),
            (QLabel("Gap:"), self.gap),
            (QLabel("Elapsed:"), self.elapsed),
        )
        for r, (caption, lab) in enumerate(rows):
            grid.addWidget(caption, r, 0)
            lab.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(lab, r, 1)
        grid.setColumnStretch(1, 1)
        self.chart: SolverTraceChart | None = (
            None  # created with the first cost or bound (pyqtgraph loads lazily)
        )
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(200)
        self.log.setFixedHeight(80)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.rejected.connect(self.request_cancel)

        self.lay = QVBoxLayout(self)
        self.lay.addWidget(self.title)
        self.lay.addWidget(self.message)
        self.lay.addWidget(self.bar)
        self.lay.addLayout(grid)
        self.chart_slot = self.lay.count()
        self.lay.addWidget(self.log)
        self.lay.addWidget(self.buttons)
        self.lay.addStretch(1)

        self._clock = QTimer(self)
        self._clock.timeout.connect(self._tick)

    # ------------------------------------------------------------------ job life
    def start(self, title: str) -> None:
        """A new job: clear the figures, the plot and the log; start the clock."""
        self.title.setText(title)
        self.message.setText("Starting…")
        self._phase = ""
        self.bar.setRange(0, 0)
        self.bar.setFormat("%p%")
        for lab in (self.incumbent, self.bound, self.gap):
            lab.setText("–")
        self.incumbent_caption.setText(BEST_CAPTION)
        self.log.clear()
        if self.chart is not None:
            self.lay.removeWidget(self.chart)
            self.chart.deleteLater()
            self.chart = None
        self.cancel_requested = False
        self.solver_seen = False
        self.running = True
        self.buttons.setEnabled(True)
        self._start = time.perf_counter()
        self._tick()
        self._clock.start(250)

    def finish(self, outcome: str) -> None:
        """The job ended ('finished', 'cancelled' or 'failed'): keep the last figures shown."""
        self.running = False
        self._clock.stop()
        self._tick()
        self.buttons.setEnabled(False)
        if self.bar.maximum() == 0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(1000 if outcome == "finished" else 0)
        self.bar.setFormat("%p%")
        # what a cancel kept is the job's to say (show_outcome): nothing is claimed here
        self.message.setText(
            {"finished": "Finished.", "cancelled": "Cancelled."}.get(
                outcome, "Stopped with an error (see the message)."
            )
        )

    def show_outcome(self, text: str) -> None:
        """The job's own last word (after a cancel: which pattern was kept and its audit, or
        that nothing changed), the very sentence the log and the dialog give."""
        if text:
            self.message.setText(text)
            self.log.appendPlainText(text)

    def _tick(self) -> None:
        self.elapsed.setText(f"{time.perf_counter() - self._start:,.1f} s")

    # ------------------------------------------------------------------ events
    def update_event(self, ev: ProgressEvent) -> None:
        """Show one progress event (called on the GUI thread through a queued signal)."""
        if ev.message:
            if ev.message != self.message.text():
                self.log.appendPlainText(ev.message)
            # a step is its words without its figures: "subtable 3 of 13" and "subtable 4
            # of 13" are one step, "checking every primary" is the next
            phase = STEP_FIGURES.sub("#", ev.message) + str(ev.extra.get("phase", ""))
            if phase != self._phase and ev.fraction is None:
                self.bar.setRange(0, 0)  # a new step of unknown length: busy, no stale %
                self.bar.setFormat("%p%")
            self._phase = phase
            self.message.setText(ev.message)
        if ev.fraction is not None:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(max(0.0, min(1.0, ev.fraction)) * 1000))
            # the fraction counts what the message counts (subtables, primaries), not time
            counted = COUNTED.search(ev.message or "")
            self.bar.setFormat(counted.group(0) if counted else "%p%")
        building = ev.fraction is not None and ev.fraction < 1.0
        if ev.incumbent is not None:
            self.incumbent.setText(format_cost(ev.incumbent))
            self.incumbent_caption.setText(BUILDING_CAPTION if building else BEST_CAPTION)
        if ev.bound is not None:
            self.bound.setText(format_cost(ev.bound))
        if ev.gap is not None:
            self.gap.setText(format_gap(ev.gap))
        if ev.incumbent is not None or ev.bound is not None:
            self.solver_seen = True
            # a pattern still being built is no point of the best-safe-pattern line
            incumbent = None if building else ev.incumbent
            if incumbent is not None or ev.bound is not None:
                self._plot(ev, incumbent)

    def _plot(self, ev: ProgressEvent, incumbent: float | None) -> None:
        if self.chart is None:
            from argusqt.gui.charts import SolverTraceChart

            self.chart = SolverTraceChart(self)
            self.chart.setObjectName("solverChart")
            self.lay.insertWidget(self.chart_slot, self.chart, 1)
        # the panel's own clock, as "Elapsed" shows it: a method's events count from its own
        # start (after the start heuristic for OPT's bound), which would shift the lines
        self.chart.add(time.perf_counter() - self._start, incumbent, ev.bound)

    def show_result(self, result: object) -> None:
        """The kept result's own figures once the job is done: the insider repair after the
        solver may add cells, so the last event's cost and gap are not the result's."""
        if isinstance(result, list | tuple) and result:  # tables protected together
            result = _joint(result)
        cost = getattr(result, "cost", None)
        if not isinstance(cost, int | float) or getattr(result, "status", None) is None:
            return
        self.incumbent_caption.setText("Kept pattern (cost):" if self.solver_seen else "Cost:")
        self.incumbent.setText(format_cost(float(cost)))
        bound = getattr(result, "lower_bound", None)
        if bound is not None:
            self.bound.setText(format_cost(bound))
        gap = getattr(result, "gap", None)
        if gap is not None:
            self.gap.setText(format_gap(gap))
        # a method that proves no bound (MOD, HEUR, GH, …) says so: a dash reads as "missing"
        if self.bound.text() == "–" and not getattr(result, "joint", False):
            method = getattr(result, "method", None) or "this method"
            self.bound.setText(f"none ({method} gives no bound)")
            self.gap.setText("none")

    def request_cancel(self) -> None:
        """First press: ask the job to stop (it returns the best safe result so far)."""
        if not self.running or self.cancel_requested:
            return
        self.cancel_requested = True
        self.message.setText(
            "Cancelling… a pattern found so far is kept only if it passes the audit."
        )
        self.buttons.setEnabled(False)
        self.cancel_clicked.emit()


def _joint(results: list | tuple) -> object:
    """The figures of tables protected together: their costs summed. No bound: whether the
    tables' bounds add up depends on the method, so the solver's own events show it."""
    from types import SimpleNamespace

    costs = [getattr(r, "cost", None) for r in results]
    if not all(isinstance(c, int | float) for c in costs):
        return None
    return SimpleNamespace(cost=float(sum(costs)), status=True, joint=True)  # type: ignore[arg-type]
