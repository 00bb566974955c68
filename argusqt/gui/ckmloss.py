"""The cell key method's loss and risk of the current table, as a small chart and a grid
(argusqt/docs/methods.md §16.7): how much the noise moved the cells of each size class, and
how often a class was published at its true value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from argusqt.gui.insight import _grid, _item


class CKMLossDialog(QDialog):
    """Figures per size class of the original value, with a bar chart of the risk figure."""

    def __init__(self, title: str, loss: Mapping[str, Any], parent: QWidget | None = None) -> None:
        from argusqt.gui.charts import BarChart

        super().__init__(parent)
        self.setWindowTitle(f"Cell key method: loss and risk — {title}")
        layout = QVBoxLayout(self)
        self.summary = QLabel(
            f"Cells changed: {int(loss['changed']):,} of {int(loss['cells']):,} "
            f"({100 * float(loss['changed_share']):.1f} %). Mean absolute deviation "
            f"{float(loss['mean_abs']):.3g}, mean relative deviation "
            f"{100 * float(loss['mean_rel']):.2f} %, largest {float(loss['max_abs']):.3g}."
        )
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        classes = list(loss.get("classes", []))
        headers = ["Original value", "Cells", "Changed", "Mean abs. dev.", "At true value"]
        self.grid = _grid(headers)
        self.grid.setRowCount(len(classes))
        for r, c in enumerate(classes):
            texts = [
                str(c["class"]),
                f"{int(c['cells']):,}",
                f"{int(c['changed']):,}",
                f"{float(c['mean_abs']):.3g}",
                f"{100 * float(c['exact_share']):.1f} %",
            ]
            for col, text in enumerate(texts):
                self.grid.setItem(r, col, _item(text, right=col > 0))
        layout.addWidget(self.grid)
        self.chart = BarChart("Published at the true value (risk)", "% of cells", "original value")
        self.chart.set_bars(
            [str(c["class"]) for c in classes], [100 * float(c["exact_share"]) for c in classes]
        )
        layout.addWidget(self.chart)
        self.resize(620, 560)
