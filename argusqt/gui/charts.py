"""Small charts beside the tables (solver trace, recode history, method comparison), on pyqtgraph.

pyqtgraph is imported on first use only: it costs about a second on a loaded machine
(docs/design.md, D-32), which a user who never protects a table should not pay at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

INCUMBENT_COLOUR = "#c0392b"  # the best pattern so far: about what the user would pay
BOUND_COLOUR = "#2471a3"  # lower bound: no pattern can be cheaper
BAR_COLOUR = "#5d6d7e"
PICKED_COLOUR = "#d68910"


def _pg() -> Any:
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True, background="w", foreground="#333333")
    return pg


def _readable_axis(orientation: str) -> Any:
    """An axis whose ticks read 30,000,000 (not 3e+07 nor 'x1e+07' in the label)."""
    from pyqtgraph import AxisItem

    from argusqt.gui.formatting import axis_number

    _pg()

    class ReadableAxis(AxisItem):
        def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph override
            return [axis_number(v * scale, spacing * scale) for v in values]

    axis = ReadableAxis(orientation)
    axis.enableAutoSIPrefix(False)
    return axis


class _Chart(QWidget):
    """A QWidget holding one pyqtgraph PlotWidget with the project's look."""

    def __init__(self, title: str, left: str, bottom: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg = _pg()
        self.plot = pg.PlotWidget(
            axisItems={"left": _readable_axis("left"), "bottom": _readable_axis("bottom")}
        )
        self.plot.setTitle(title, size="9pt")
        self.plot.setLabel("left", left)
        self.plot.setLabel("bottom", bottom)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setMinimumHeight(150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot)


class SolverTraceChart(_Chart):
    """Incumbent and lower bound over elapsed time: the gap is the space between the lines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        # the legend is the title (a legend box inside a narrow dock hides the lines)
        title = (
            f'<span style="color:{INCUMBENT_COLOUR}">━ best pattern</span>&nbsp;&nbsp;'
            f'<span style="color:{BOUND_COLOUR}">╍ lower bound</span>'
        )
        super().__init__(title, "cost", "seconds", parent)
        pg = _pg()
        self.incumbent = self.plot.plot(
            [], [], name="best pattern", pen=pg.mkPen(INCUMBENT_COLOUR, width=2), stepMode=None
        )
        self.bound = self.plot.plot(
            [], [], name="lower bound", pen=pg.mkPen(BOUND_COLOUR, width=2, style=_dash())
        )
        self.t_inc: list[float] = []
        self.v_inc: list[float] = []
        self.t_bound: list[float] = []
        self.v_bound: list[float] = []

    def add(self, elapsed: float, incumbent: float | None, bound: float | None) -> None:
        if incumbent is not None:
            self.t_inc.append(elapsed)
            self.v_inc.append(incumbent)
            self.incumbent.setData(self.t_inc, self.v_inc)
        if bound is not None:
            self.t_bound.append(elapsed)
            self.v_bound.append(bound)
            self.bound.setData(self.t_bound, self.v_bound)
        values = self.v_inc + self.v_bound
        if values:  # a flat line gets a visible band, not ticks of 28,389,824.2 / .4
            lo, hi = min(values), max(values)
            pad = max(0.05 * (hi - lo), 0.02 * max(abs(hi), abs(lo)), 1.0)
            self.plot.setYRange(lo - pad, hi + pad, padding=0)
            # time from the job's start: the seconds before the first figure count too
            self.plot.setXRange(0.0, max(self.t_inc + self.t_bound + [1.0]) * 1.03, padding=0)

    def points(self) -> int:
        return len(self.t_inc) + len(self.t_bound)


def _dash():
    from PySide6.QtCore import Qt

    return Qt.PenStyle.DashLine


class BarChart(_Chart):
    """Labelled vertical bars (recode steps, methods); `picked` is drawn in another colour."""

    def __init__(self, title: str, left: str, bottom: str, parent: QWidget | None = None) -> None:
        super().__init__(title, left, bottom, parent)
        self.bars: Any = None
        self.values: list[float] = []
        self.labels: list[str] = []

    def set_bars(
        self, labels: Sequence[str], values: Sequence[float], picked: int | None = None
    ) -> None:
        pg = _pg()
        self.labels, self.values = list(labels), [float(v) for v in values]
        if self.bars is not None:
            self.plot.removeItem(self.bars)
        brushes = [
            pg.mkBrush(PICKED_COLOUR if i == picked else BAR_COLOUR)
            for i in range(len(self.values))
        ]
        self.bars = pg.BarGraphItem(
            x=list(range(len(self.values))), height=self.values, width=0.6, brushes=brushes
        )
        self.plot.addItem(self.bars)
        axis = self.plot.getAxis("bottom")
        axis.setTicks([list(enumerate(self.labels))])
        top = max(self.values, default=0.0)
        self.plot.setYRange(0, top * 1.15 if top > 0 else 1.0)
        self.plot.setXRange(-0.6, max(len(self.values) - 0.4, 0.6))


class LineChart(_Chart):
    """One series against labelled steps (unsafe cells after each recode step)."""

    def __init__(self, title: str, left: str, bottom: str, parent: QWidget | None = None) -> None:
        super().__init__(title, left, bottom, parent)
        pg = _pg()
        self.curve = self.plot.plot(
            [], [], pen=pg.mkPen(INCUMBENT_COLOUR, width=2), symbol="o", symbolSize=7,
            symbolBrush=INCUMBENT_COLOUR,
        )  # fmt: skip
        self.values: list[float] = []
        self.labels: list[str] = []

    def set_points(self, labels: Sequence[str], values: Sequence[float]) -> None:
        self.labels, self.values = list(labels), [float(v) for v in values]
        xs = list(range(len(self.values)))
        self.curve.setData(xs, self.values)
        self.plot.getAxis("bottom").setTicks([list(enumerate(self.labels))])
        top = max(self.values, default=0.0)
        self.plot.setYRange(0, top * 1.15 if top > 0 else 1.0)
        self.plot.setXRange(-0.3, max(len(xs) - 0.7, 0.3))
