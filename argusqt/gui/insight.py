"""Pictures beside the table: the recode history (unsafe cells after each step) and the
information loss of each protection method tried on a table, side by side, to pick one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from argusqt.gui.formatting import format_cost

if TYPE_CHECKING:
    from argusqt.gui.charts import BarChart, LineChart


def _grid(headers: list[str]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().hide()
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    h = t.horizontalHeader()
    h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for c in range(1, len(headers)):
        h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
    t.setMaximumHeight(230)  # six rows without a scroll bar
    return t


def _item(text: str, right: bool = False) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    if right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return it


@dataclass(frozen=True)
class RecodeStep:
    """One step of a table's recode history and the unsafe cells after it."""

    label: str  # "as computed", "size: size3.grc", "size: undone", …
    unsafe: int


class RecodeHistoryPanel(QWidget):
    """The recode steps of the current table with the unsafe-cell count after each."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recodeHistory")
        self.setMinimumWidth(420)  # step names and a readable chart
        self.caption = QLabel("No recode yet: Modify | Global recode.")
        self.caption.setWordWrap(True)
        self.steps = _grid(["Step", "Unsafe cells"])
        self.chart: LineChart | None = None
        self.lay = QVBoxLayout(self)
        self.lay.addWidget(self.caption)
        self.lay.addWidget(self.steps)

    def show_steps(self, title: str, steps: list[RecodeStep]) -> None:
        self.caption.setText(f"<b>Table {title}</b>: unsafe cells after each recode step")
        self.steps.setRowCount(len(steps))
        for r, step in enumerate(steps):
            self.steps.setItem(r, 0, _item(f"{r}. {step.label}"))
            self.steps.setItem(r, 1, _item(f"{step.unsafe:,}", right=True))
        if self.chart is None:
            from argusqt.gui.charts import LineChart

            self.chart = LineChart("Unsafe cells after each step", "unsafe cells", "recode step")
            self.chart.setObjectName("recodeChart")
            self.lay.insertWidget(1, self.chart, 1)
        self.chart.set_points([str(k) for k in range(len(steps))], [s.unsafe for s in steps])


@dataclass(frozen=True)
class MethodRun:
    """One protection of a table, as the comparison shows it."""

    method: str
    params: Any  # what it ran with (MethodParams or a mapping: to run it again if picked)
    face: str  # "suppress", "round", "cta", "interval"
    changed: int  # secondary suppressions (cells changed, for the other faces)
    cost: float  # cost of the secondary suppressions (weighted deviation for CTA)
    cost_share: float  # that cost / the cost of every non-empty cell of the table
    gap: float | None
    seconds: float
    cancelled: bool = False


class MethodComparisonPanel(QWidget):
    """Information loss per method tried on the current table; the user picks one."""

    use_method = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("methodComparison")
        self.setMinimumWidth(560)  # two charts side by side and six columns
        self.caption = QLabel("Protect the table with several methods to compare them here.")
        self.caption.setWordWrap(True)
        self.runs = _grid(["Method", "Secondary cells", "Cost", "Share of cost", "Gap", "Time"])
        self.use = QPushButton("Protect again with the selected method")
        self.use.setObjectName("useMethod")
        self.use.setToolTip(
            "Run the selected method again with the parameters it had, from the primaries and "
            "manual statuses (each row is an independent run; the current pattern is replaced "
            "once the new one passes the audit)"
        )
        self.use.clicked.connect(self._use)
        self.use.setEnabled(False)
        self.runs.itemSelectionChanged.connect(self._enable_use)
        self.busy = False
        self.cells_chart: BarChart | None = None
        self.share_chart: BarChart | None = None
        self.charts = QHBoxLayout()
        self.lay = QVBoxLayout(self)
        self.lay.addWidget(self.caption)
        self.lay.addLayout(self.charts, 1)
        self.lay.addWidget(self.runs)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.use)
        self.lay.addLayout(row)
        self.methods: list[str] = []
        self.current: str | None = None

    def show_runs(self, title: str, runs: list[MethodRun], current: str | None) -> None:
        self.caption.setText(
            f"<b>Table {title}</b>: information loss per method tried, each run on its own "
            "from the primaries and manual statuses "
            + ("(the pattern on the table now is marked ✔)" if current else "")
        )
        self.methods = [r.method for r in runs]
        self.current = current
        self.runs.setRowCount(len(runs))
        for r, run in enumerate(runs):
            suppress = run.face == "suppress"
            cells = [
                ("✔ " if run.method == current else "")
                + run.method
                + (" (cancelled)" if run.cancelled else ""),
                f"{run.changed:,}" if suppress else f"{run.changed:,} changed",
                format_cost(run.cost) if suppress else "–",
                f"{100 * run.cost_share:.2f} %" if suppress else "–",
                "–" if run.gap is None else f"{100 * run.gap:.2f} %",
                f"{run.seconds:,.1f} s" if run.seconds >= 0.05 else "< 0.1 s",
            ]
            for c, text in enumerate(cells):
                self.runs.setItem(r, c, _item(text, right=c > 0))
        if self.cells_chart is None or self.share_chart is None:
            from argusqt.gui.charts import BarChart

            self.cells_chart = BarChart("Secondary suppressions", "cells", "method")
            self.cells_chart.setObjectName("methodCellsChart")
            self.share_chart = BarChart(
                "Cost of the secondaries", "% of the table's cost", "method"
            )
            self.share_chart.setObjectName("methodShareChart")
            self.charts.addWidget(self.cells_chart)
            self.charts.addWidget(self.share_chart)
        picked = self.methods.index(current) if current in self.methods else None
        self.cells_chart.set_bars(self.methods, [r.changed for r in runs], picked)
        self.share_chart.set_bars(self.methods, [100 * r.cost_share for r in runs], picked)
        self._enable_use()

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._enable_use()

    def _selected(self) -> str | None:
        rows = {i.row() for i in self.runs.selectedItems()}
        return self.methods[min(rows)] if rows else None

    def _enable_use(self) -> None:
        picked = self._selected()
        self.use.setEnabled(not self.busy and picked is not None and picked != self.current)

    def _use(self) -> None:
        picked = self._selected()
        if picked is not None:
            self.use_method.emit(picked)


# ---------------------------------------------------------------------------- session files
def insight_to_json(
    steps: dict[int, list[RecodeStep]], runs: dict[int, dict[str, MethodRun]]
) -> dict[str, Any]:
    """The docks' content per table number (text keys), for `Session.insight`."""
    out: dict[str, Any] = {}
    for no, table_steps in steps.items():
        entry = out.setdefault(str(no), {})
        entry["recode_history"] = [{"label": s.label, "unsafe": int(s.unsafe)} for s in table_steps]
    for no, table_runs in runs.items():
        entry = out.setdefault(str(no), {})
        entry["methods"] = [_run_to_json(r) for r in table_runs.values()]
    return out


def _run_to_json(r: MethodRun) -> dict[str, Any]:
    params = r.params.to_mapping() if hasattr(r.params, "to_mapping") else dict(r.params or {})
    return {
        "method": r.method,
        "params": params,
        "face": r.face,
        "changed": int(r.changed),
        "cost": float(r.cost),
        "cost_share": float(r.cost_share),
        "gap": None if r.gap is None else float(r.gap),
        "seconds": float(r.seconds),
        "cancelled": bool(r.cancelled),
    }


def insight_from_json(
    data: Any, n_tables: int
) -> tuple[dict[int, list[RecodeStep]], dict[int, dict[str, MethodRun]], list[str]]:
    """The docks' content back from `Session.insight`, and warnings for what was skipped
    (display only: a damaged entry is left out, never stops the session)."""
    steps: dict[int, list[RecodeStep]] = {}
    runs: dict[int, dict[str, MethodRun]] = {}
    skipped: list[str] = []
    for key, entry in (data or {}).items() if isinstance(data, dict) else ():
        try:
            no = int(key)
            if not 1 <= no <= n_tables:
                raise ValueError(f"there is no table {no}")
            history = [
                RecodeStep(str(s["label"]), int(s["unsafe"]))
                for s in entry.get("recode_history", [])
            ]
            methods = {
                str(r["method"]): MethodRun(
                    str(r["method"]),
                    dict(r.get("params") or {}),
                    str(r["face"]),
                    int(r["changed"]),
                    float(r["cost"]),
                    float(r["cost_share"]),
                    None if r.get("gap") is None else float(r["gap"]),
                    float(r["seconds"]),
                    bool(r.get("cancelled", False)),
                )  # fmt: skip
                for r in entry.get("methods", [])
            }
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            skipped.append(
                f"warning: the recode history and methods of table {key} were not restored ({exc})"
            )
            continue
        if history:
            steps[no] = history
        if methods:
            runs[no] = methods
    return steps, runs, skipped
