"""Output | Save table: τ-Argus output types 1–6 with their options, plus Excel.

The Excel workbook is the published table only; its `CF` option asks for the separate
CONFIDENTIAL workbook too (statuses, cell list, audit intervals, report).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
)

#: type number → (title, default extension, options meaningful for it)
TYPES: dict[int, tuple[str, str, tuple[str, ...]]] = {
    1: ("CSV file (as on screen)", ".csv", ("QU", "TA")),
    2: ("CSV file for a pivot table", ".csv", ("AS", "SE", "FL", "QU", "TA")),
    3: ("Code-value file", ".txt", ("AS", "SE", "FL", "QU", "TA")),
    4: ("SBS output format", ".sbs", ("SE", "HL", "TA")),
    5: ("Intermediate file (+ .rda)", ".tab", ("SO", "AR", "HI", "TA")),
    6: ("JJ format (cells and relations)", ".jj", ("TR",)),
    7: ("Excel workbook", ".xlsx", ("CF",)),
}
OPTION_TEXT = {
    "AS": "Add status / original value",
    "SE": "Suppress empty cells",
    "FL": "Variable names on the first line",
    "QU": "Codes in double quotes",
    "HL": "Hierarchical level after each code",
    "SO": "Status only",
    "AR": "Add audit results",
    "HI": "Holding-level information",
    "TR": "Remove trivial levels",
    "TA": "Texts exactly as τ-Argus (no ' before codes such as =…)",
    # argusqt: the internal workbook beside the published one (never part of it)
    "CF": "Also the CONFIDENTIAL workbook (statuses, cell list, report)",
}
EXCEL = 7
#: QSettings key of the folder the last table was saved in (outputs go there, not beside data)
OUTPUT_DIR_KEY = "lastOutputDir"


class SaveTableDialog(QDialog):
    """Returns `file_type()`, `options()` (batch option string) and `path()`."""

    def __init__(
        self,
        start_dir: str = "",
        base_name: str = "table",
        parent=None,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Save table")
        self.settings = settings
        last = str(settings.value(OUTPUT_DIR_KEY, "") or "") if settings is not None else ""
        self.start_dir = last if last and Path(last).is_dir() else start_dir
        self.base_name = base_name
        self.group = QButtonGroup(self)
        types = QGroupBox("Format")
        tl = QVBoxLayout(types)
        for t, (title, _ext, _opts) in TYPES.items():
            r = QRadioButton(f"{title}" + (f"  (type {t})" if t != EXCEL else ""))
            self.group.addButton(r, t)
            tl.addWidget(r)
        tl.addStretch(1)
        opts = QGroupBox("Options")
        ol = QGridLayout(opts)
        self.checks: dict[str, QCheckBox] = {}
        for i, (code, text) in enumerate(OPTION_TEXT.items()):
            c = QCheckBox(text)
            self.checks[code] = c
            ol.addWidget(c, i, 0)
        self.checks["QU"].setChecked(True)
        self.checks["TA"].setToolTip(
            "Codes starting with = + - @ are written as they are, byte for byte as τ-Argus.\n"
            "A spreadsheet opening such a file may run them as formulas."
        )
        self.path_edit = QLineEdit()
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        pl = QHBoxLayout()
        pl.addWidget(QLabel("File:"))
        pl.addWidget(self.path_edit, 1)
        pl.addWidget(browse)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.warning = QLabel("")
        self.warning.setStyleSheet("color:#b00020;")
        # publication or confidential: said before the file is written
        self.note = QLabel("")
        self.note.setWordWrap(True)
        for c in self.checks.values():
            c.toggled.connect(self._update_note)
        top = QHBoxLayout()
        top.addWidget(types, 3)
        top.addWidget(opts, 2)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(pl)
        lay.addWidget(self.note)
        lay.addWidget(self.warning)
        lay.addWidget(self.buttons)
        self.group.idToggled.connect(self._type_changed)
        self.group.button(EXCEL).setChecked(True)  # the main output: a published workbook
        self.resize(680, 380)

    def _type_changed(self, t: int, on: bool) -> None:
        if not on:
            return
        allowed = TYPES[t][2]
        for code, c in self.checks.items():
            c.setEnabled(code in allowed)
        if t == 2:
            self.checks["FL"].setChecked(True)
        ext = TYPES[t][1]
        cur = self.path_edit.text().strip()
        if cur:
            self.path_edit.setText(str(Path(cur).with_suffix(ext)))
        elif self.start_dir:
            self.path_edit.setText(str(Path(self.start_dir) / (self.base_name + ext)))
        self._update_note()

    def is_confidential(self) -> bool:
        """An internal file: statuses or true values (AS+), SBS, intermediate, JJ."""
        t = self.file_type()
        flags = self.option_flags()
        return t in (4, 5, 6) or (t in (2, 3) and flags["AS"])

    def _update_note(self, *_args) -> None:
        if self.group.checkedId() < 0:
            return
        if self.is_confidential():
            self.note.setText(
                "<b>CONFIDENTIAL — not for publication:</b> this file holds cell statuses "
                "or true values of suppressed cells."
            )
            self.note.setStyleSheet("color:#b00020;")
        else:
            extra = (
                " The CONFIDENTIAL workbook is written beside it, with CONFIDENTIAL in its name."
                if self.file_type() == EXCEL and self.checks["CF"].isChecked()
                else ""
            )
            self.note.setText(
                "For publication: the table is audited again before it is written "
                "(suppressed cells show as x, empty cells as -)." + extra
            )
            self.note.setStyleSheet("color:#1b5e20;")

    def select_type(self, t: int) -> None:
        self.group.button(t).setChecked(True)

    def file_type(self) -> int:
        return self.group.checkedId()

    def options(self) -> str:
        """τ-Argus option string, e.g. 'AS+FL+QU+' (only options meaningful for the type)."""
        allowed = TYPES[self.file_type()][2]
        on = {c: self.checks[c].isChecked() for c in allowed}
        # TA is an argusqt extension: left out when off, so the batch line stays τ-Argus's
        return "".join(f"{c}{'+' if v else '-'}" for c, v in on.items() if c != "TA" or v)

    def option_flags(self) -> dict[str, bool]:
        return {c: ch.isChecked() and ch.isEnabled() for c, ch in self.checks.items()}

    def path(self) -> str:
        return self.path_edit.text().strip()

    def _browse(self) -> None:
        t = self.file_type()
        path, _ = QFileDialog.getSaveFileName(
            self, "Save table", self.path() or self.start_dir, f"*{TYPES[t][1]};;All files (*)"
        )
        if path:
            self.path_edit.setText(path)

    def _accept(self) -> None:
        p = self.path()
        if not p:
            self.warning.setText("Choose a file name.")
            return
        if not Path(p).parent.exists():
            self.warning.setText(f"The folder {Path(p).parent} does not exist.")
            return
        if self.settings is not None:
            self.settings.setValue(OUTPUT_DIR_KEY, str(Path(p).resolve().parent))
        self.accept()
