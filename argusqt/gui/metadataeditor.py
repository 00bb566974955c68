"""Specify | Metadata: every `.rda` attribute of every variable in one grid, validated, saved.

A grid instead of τ-Argus's one-variable-at-a-time form: the whole file is visible, problems
are marked on the offending cell, and saving goes through argusqt.io.rda.write_rda.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from argusqt.gui.errors import show_error

ROLES = [
    "explanatory",
    "explanatory + numeric",
    "numeric",
    "weight",
    "holding",
    "request",
    "frequency",
    "top-n (maxscore)",
    "status",
    "shadow",
    "cost",
    "lower PL",
    "upper PL",
    "(none)",
]
_ROLE_FLAGS = {
    "explanatory": ("recodeable",),
    "explanatory + numeric": ("recodeable", "numeric"),
    "numeric": ("numeric",),
    "weight": ("weight",),
    "holding": ("holding",),
    "request": ("request",),
    "frequency": ("frequency",),
    "top-n (maxscore)": ("maxscore",),
    "status": ("status",),
    "shadow": ("shadow",),
    "cost": ("cost",),
    "lower PL": ("lowerpl",),
    "upper PL": ("upperpl",),
    "(none)": (),
}
_ALL_FLAGS = sorted({f for fl in _ROLE_FLAGS.values() for f in fl})

COLUMNS = [
    "Name",
    "Start",
    "Width",
    "Missing 1",
    "Missing 2",
    "Role",
    "Decimals",
    "Total code",
    "Hierarchical",
    "Digit levels",
    "Hierarchy file",
    "Lead string",
    "Codelist file",
    "Distance",
    "Request codes",
]
C = {name: i for i, name in enumerate(COLUMNS)}


def role_of(v: Any) -> str:
    for role, flags in _ROLE_FLAGS.items():
        if (
            flags
            and all(getattr(v, f, False) for f in flags)
            and not any(getattr(v, f, False) for f in _ALL_FLAGS if f not in flags)
        ):
            return role
    return "(none)"


class MetadataEditor(QDialog):
    """Edit a Metadata object (argusqt.model.metadata); `metadata()` gives the edited copy."""

    saved = Signal(str)  # path of the .rda just written

    def __init__(self, meta: Any, parent=None) -> None:
        super().__init__(parent)
        self.original = meta
        self.setWindowTitle(
            "Metadata" + (f" — {Path(meta.path).name}" if meta is not None and meta.path else "")
        )
        self.kind = getattr(meta, "kind", "fixed") if meta is not None else "fixed"
        self.grid = QTableWidget(0, len(COLUMNS))
        self.grid.setHorizontalHeaderLabels(COLUMNS)
        self.grid.verticalHeader().setDefaultSectionSize(28)
        header = QLabel(
            {
                "fixed": "Fixed-format microdata: start column and width per variable.",
                "free": f"Free-format microdata, separator {getattr(meta, 'separator', None)!r}: width per variable.",
                "tabular": "Tabular data: columns in file order; no positions.",
            }.get(self.kind, "")
        )
        add = QPushButton("Add variable")
        remove = QPushButton("Remove selected")
        up = QPushButton("Move up")
        add.clicked.connect(lambda: self._add_row(None))
        remove.clicked.connect(self._remove_rows)
        up.clicked.connect(self._move_up)
        self.problems = QLabel("")
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color:#b00020;")
        self.buttons = QDialogButtonBox()
        self.check_button = self.buttons.addButton("Check", QDialogButtonBox.ButtonRole.ActionRole)
        self.save_button = self.buttons.addButton(
            "Save as .rda…", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.check_button.clicked.connect(self.validate)
        self.save_button.clicked.connect(self._save)
        self.buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        for b in (add, remove, up):
            row.addWidget(b)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addWidget(header)
        lay.addWidget(self.grid)
        lay.addLayout(row)
        lay.addWidget(self.problems)
        lay.addWidget(self.buttons)
        for v in getattr(meta, "variables", []) or []:
            self._add_row(v)
        self.grid.resizeColumnsToContents()
        self.resize(1100, 520)

    # ------------------------------------------------------------------ rows
    def _item(self, text: Any) -> QTableWidgetItem:
        return QTableWidgetItem("" if text is None else str(text))

    def _add_row(self, v: Any | None) -> None:
        r = self.grid.rowCount()
        self.grid.insertRow(r)
        self._fill_row(r, v)

    def _fill_row(self, r: int, v: Any | None) -> None:
        miss = list(getattr(v, "missing", []) or []) + ["", ""]
        values = {
            "Name": getattr(v, "name", f"var{r + 1}"),
            "Start": getattr(v, "start", None),
            "Width": getattr(v, "width", None),
            "Missing 1": miss[0],
            "Missing 2": miss[1],
            "Decimals": getattr(v, "decimals", 0),
            "Total code": getattr(v, "total_code", "Total"),
            "Digit levels": " ".join(map(str, getattr(v, "hierlevels", []) or [])),
            "Hierarchy file": getattr(v, "hier_file", None),
            "Lead string": getattr(v, "hier_lead", None),
            "Codelist file": getattr(v, "codelist", None),
            "Distance": " ".join(map(str, getattr(v, "distance", [1, 1, 1, 1, 1]) or [])),
            "Request codes": " ".join(getattr(v, "request_codes", []) or []),
        }
        for name, val in values.items():
            self.grid.setItem(r, C[name], self._item(val))
        role = QComboBox()
        role.addItems(ROLES)
        role.setCurrentText(role_of(v) if v is not None else "explanatory")
        self.grid.setCellWidget(r, C["Role"], role)
        hier = QTableWidgetItem()
        hier.setFlags(hier.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        hier.setCheckState(
            Qt.CheckState.Checked if getattr(v, "hierarchical", False) else Qt.CheckState.Unchecked
        )
        self.grid.setItem(r, C["Hierarchical"], hier)
        if self.kind != "fixed":
            self.grid.item(r, C["Start"]).setFlags(Qt.ItemFlag.NoItemFlags)

    def _remove_rows(self) -> None:
        for r in sorted({i.row() for i in self.grid.selectedIndexes()}, reverse=True):
            self.grid.removeRow(r)

    def _move_up(self) -> None:
        r = self.grid.currentRow()
        if r <= 0:
            return
        v, above = self._variable(r), self._variable(r - 1)
        self._fill_row(r - 1, v)
        self._fill_row(r, above)
        self.grid.setCurrentCell(r - 1, 0)

    # ------------------------------------------------------------------ model
    def _text(self, r: int, name: str) -> str:
        it = self.grid.item(r, C[name])
        return it.text().strip() if it is not None else ""

    def _variable(self, r: int) -> Any:
        from argusqt.model.metadata import Variable

        def num(name: str) -> int | None:
            t = self._text(r, name)
            return int(t) if t.lstrip("-").isdigit() else None

        role = self.grid.cellWidget(r, C["Role"]).currentText()
        flags: dict[str, Any] = {f: f in _ROLE_FLAGS[role] for f in _ALL_FLAGS}
        width = num("Width")
        missing = [m for m in (self._text(r, "Missing 1"), self._text(r, "Missing 2")) if m]
        if width and flags.get("recodeable"):
            missing = [m.rjust(width) for m in missing]
        dist = [int(x) for x in self._text(r, "Distance").split() if x.isdigit()] or [1]
        dist = (dist + [dist[-1]] * 5)[:5]
        return Variable(
            name=self._text(r, "Name"),
            start=num("Start") if self.kind == "fixed" else None,
            width=width,
            missing=missing,
            decimals=num("Decimals") or 0,
            total_code=self._text(r, "Total code") or "Total",
            total_code_given=self._text(r, "Total code") not in ("", "Total"),
            hierarchical=self.grid.item(r, C["Hierarchical"]).checkState() == Qt.CheckState.Checked,
            hierlevels=[
                int(x) for x in self._text(r, "Digit levels").split() if x.isdigit() and int(x) > 0
            ],
            hier_file=self._text(r, "Hierarchy file") or None,
            hier_lead=self._text(r, "Lead string") or None,
            codelist=self._text(r, "Codelist file") or None,
            distance=dist,
            request_codes=self._text(r, "Request codes").split(),
            line=r + 1,
            **flags,
        )

    def metadata(self) -> Any:
        from argusqt.model.metadata import Metadata

        meta = copy.copy(self.original) if self.original is not None else Metadata(None, "fixed")
        meta.variables = [self._variable(r) for r in range(self.grid.rowCount())]
        return meta

    def validate(self) -> list[tuple[int, str, str]]:
        """Problems as (row, column, message); marks the cells and lists them under the grid."""
        problems: list[tuple[int, str, str]] = []
        names: dict[str, int] = {}
        n_expl = 0
        for r in range(self.grid.rowCount()):
            for c in range(len(COLUMNS)):
                it = self.grid.item(r, c)
                if it is not None:
                    it.setBackground(QColor(0, 0, 0, 0))
            name = self._text(r, "Name")
            v = self._variable(r)
            if not name or " " in name:
                problems.append((r, "Name", "a name without blanks is required"))
            elif name.lower() in names:
                problems.append((r, "Name", f"duplicate of row {names[name.lower()] + 1}"))
            names.setdefault(name.lower(), r)
            if self.kind == "fixed" and (v.start is None or v.start < 1):
                problems.append((r, "Start", "expected a start column ≥ 1"))
            if self.kind != "tabular" and (v.width is None or v.width < 1):
                problems.append((r, "Width", "expected a width ≥ 1"))
            for col in ("Missing 1", "Missing 2"):
                m = self._text(r, col)
                if m and v.width and len(m) > v.width:
                    problems.append((r, col, f"longer than the width {v.width}"))
            if self._text(r, "Missing 2") and not self._text(r, "Missing 1"):
                problems.append((r, "Missing 1", "give missing 1 before missing 2"))
            if v.recodeable:
                n_expl += 1
            if v.hierarchical:
                if v.hier_file and not v.hier_lead:
                    problems.append(
                        (r, "Lead string", "a hierarchy file needs a lead string (e.g. @)")
                    )
                if not v.hier_file and not v.hierlevels:
                    problems.append((r, "Hierarchical", "give digit levels or a hierarchy file"))
                if v.hierlevels and v.width and sum(v.hierlevels) != v.width:
                    problems.append(
                        (
                            r,
                            "Digit levels",
                            f"levels add up to {sum(v.hierlevels)}, width is {v.width}",
                        )
                    )
            if v.request and not v.request_codes:
                problems.append(
                    (r, "Request codes", "the request variable needs at least one code")
                )
            if not self._text(r, "Decimals").isdigit() and self._text(r, "Decimals"):
                problems.append((r, "Decimals", "expected a whole number"))
        if self.grid.rowCount() and n_expl == 0:
            problems.append((0, "Role", "at least one explanatory variable is required"))
        for r, col, _msg in problems:
            it = self.grid.item(r, C[col])
            if it is not None:
                it.setBackground(QColor("#f6c6c1"))
        self.problems.setText(
            "\n".join(f"Row {r + 1}, {col}: {msg}" for r, col, msg in problems[:12])
            or "No problems found."
        )
        self.problems.setStyleSheet("color:#b00020;" if problems else "color:#1d4d12;")
        return problems

    def save_to(self, path: str | Path) -> bool:
        if self.validate():
            return False
        from argusqt.session import Session

        try:
            Session.write_metadata(self.metadata(), path)
        except Exception as exc:  # ArgusError or an unexpected problem: tell the user
            show_error(self, exc, "Save metadata")
            return False
        self.problems.setText(f"Saved {path}")
        self.saved.emit(str(path))
        return True

    def _save(self) -> None:
        start = str(self.original.path) if self.original is not None and self.original.path else ""
        path, _ = QFileDialog.getSaveFileName(self, "Save metadata", start, "Metadata (*.rda)")
        if path:
            self.save_to(path)
