"""Summary of a table per status: cells, contributors, value and cost (τ-Argus 'Summary')."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from argusqt.gui import statuscolors
from argusqt.model.status import is_primary
from argusqt.model.table import Table

GROUPS: list[tuple[str, tuple[int, ...]]] = [
    ("Safe", (1,)),
    ("Safe (manual)", (2,)),
    ("Unsafe: dominance / p%", (3,)),
    ("Unsafe: request", (4,)),
    ("Unsafe: frequency", (5,)),
    ("Unsafe: zero", (6,)),
    ("Unsafe: singleton", (7, 8)),
    ("Unsafe: manual", (9,)),
    ("Protected", (10,)),
    ("Secondary", (11, 12)),
    ("Empty (non-structural)", (13,)),
    ("Empty", (14,)),
]


def status_summary(table: Table) -> list[tuple[str, int, float, float, float]]:
    """(group, cells, contributors, value, cost) per status group, vectorised by bincount."""
    st = table.status.astype(np.int64)
    n = np.bincount(st, minlength=15)
    f = np.bincount(st, weights=table.freq, minlength=15)
    v = np.bincount(st, weights=table.value, minlength=15)
    c = np.bincount(st, weights=table.cost, minlength=15)
    rows = []
    for name, codes in GROUPS:
        idx = list(codes)
        rows.append(
            (name, int(n[idx].sum()), float(f[idx].sum()), float(v[idx].sum()), float(c[idx].sum()))
        )
    rows.append(("All cells", int(n.sum()), float(f.sum()), float(v.sum()), float(c.sum())))
    return rows


def unsafe_count(table: Table) -> int:
    s = table.status
    return int(is_primary(s).sum())


class SummaryDialog(QDialog):
    """A small table of `status_summary`; totals in bold."""

    def __init__(self, table: Table, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Summary — {title}")
        rows = status_summary(table)
        fmt = f"{{:,.{max(0, int(table.decimals))}f}}"
        self.grid = QTableWidget(len(rows), 5, self)
        self.grid.setHorizontalHeaderLabels(["Status", "Cells", "Contributors", "Value", "Cost"])
        self.grid.verticalHeader().hide()
        for r, (name, n, f, v, c) in enumerate(rows):
            texts = [name, f"{n:,}", f"{f:,.0f}", fmt.format(v), f"{c:,.2f}"]
            for k, t in enumerate(texts):
                item = QTableWidgetItem(t)
                if k:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                codes = GROUPS[r][1] if r < len(GROUPS) else ()
                if codes and k == 0:
                    bg = statuscolors.background(codes[0])
                    if bg is not None:
                        item.setBackground(bg)
                if r == len(rows) - 1:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.grid.setItem(r, k, item)
        self.grid.verticalHeader().setDefaultSectionSize(24)
        self.grid.horizontalHeader().setStretchLastSection(True)
        self.grid.resizeColumnsToContents()
        self.grid.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.grid.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        width = sum(self.grid.columnWidth(c) for c in range(5)) + 40
        height = 24 * (len(rows) + 1) + 110
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(f"Table: {title}"))
        lay.addWidget(self.grid)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        self.resize(max(520, width), height)
