"""File | Open microdata / Open table: the data file and its metadata (.rda proposed); for a
table, how its totals are read (τ-Argus's dialog and `<READTABLE> n[T]`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from argusqt.gui.core import proposed_metadata
from argusqt.session import TOTALS_MODES

FILTERS = {
    "microdata": "Microdata (*.asc *.dat *.csv *.txt);;All files (*)",
    "table": "Tabular data (*.tab *.csv *.txt);;All files (*)",
}


class OpenDataDialog(QDialog):
    """Two file fields; choosing the data file fills in the .rda with the same base name."""

    def __init__(
        self,
        kind: str = "microdata",
        start_dir: str = "",
        parent=None,
        totals_for: Callable[[str], tuple[int, bool]] | None = None,
    ) -> None:
        super().__init__(parent)
        self.kind = kind
        #: the totals mode last chosen for a table file (the main window remembers them)
        self.totals_for = totals_for
        self._totals_of = ""  # the file whose remembered mode the form shows
        self.start_dir = start_dir
        self.setWindowTitle("Open microdata" if kind == "microdata" else "Open table")
        self.data_edit = QLineEdit()
        self.meta_edit = QLineEdit()
        self.data_edit.setPlaceholderText("the data file")
        self.meta_edit.setPlaceholderText("the metadata file (.rda)")
        self.data_edit.editingFinished.connect(self._propose)
        b1 = QPushButton("Browse…")
        b2 = QPushButton("Browse…")
        b1.clicked.connect(self._browse_data)
        b2.clicked.connect(self._browse_meta)
        g = QGridLayout()
        g.addWidget(QLabel("Data file:" if kind == "microdata" else "Table file:"), 0, 0)
        g.addWidget(self.data_edit, 0, 1)
        g.addWidget(b1, 0, 2)
        g.addWidget(QLabel("Metadata:"), 1, 0)
        g.addWidget(self.meta_edit, 1, 1)
        g.addWidget(b2, 1, 2)
        g.setColumnStretch(1, 1)
        # a table file's totals: checked, recomputed or taken as given (argusqt/docs/formats.md §3.3)
        self.totals = QComboBox()
        for mode, words in TOTALS_MODES.items():
            self.totals.addItem(f"{words[0].upper()}{words[1:]}", mode)
        self.totals.setToolTip(
            "A table whose totals do not add up (τ-Argus's pp.tab): recompute them, or take "
            "them as given (the suppression methods then refuse it). Batch: <READTABLE> 0, 1, 2"
        )
        self.keep_status = QCheckBox("Keep the statuses given on total lines (T)")
        self.keep_status.setToolTip("<READTABLE> 1T: a recomputed total keeps its line's status")
        self.totals.currentIndexChanged.connect(
            lambda _: self.keep_status.setEnabled(self.totals.currentData() == 1)
        )
        self.keep_status.setEnabled(False)  # totals checked (mode 0): nothing recomputed
        if kind == "table":
            g.addWidget(QLabel("Totals:"), 2, 0)
            g.addWidget(self.totals, 2, 1)
            g.addWidget(self.keep_status, 3, 1)
        else:
            self.totals.hide()
            self.keep_status.hide()
        self.note = QLabel("")
        self.note.setStyleSheet("color:#555;")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(g)
        lay.addWidget(self.note)
        lay.addWidget(self.buttons)
        self.resize(620, 150 if kind == "microdata" else 200)

    def set_data(self, path: str) -> None:
        self.data_edit.setText(path)
        self._propose()

    def _propose(self) -> None:
        data = self.data_edit.text().strip()
        if data and self.kind == "table" and self.totals_for is not None:
            if data != self._totals_of:  # a new file, not the same one losing focus
                self._totals_of = data
                self.set_read_mode(*self.totals_for(data))
        if data and not self.meta_edit.text().strip():
            rda = proposed_metadata(data)
            if rda is not None:
                self.meta_edit.setText(str(rda))
                self.note.setText(f"Proposed metadata: {rda.name} (same base name as the data)")

    def _browse_data(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.windowTitle(), self.start_dir, FILTERS[self.kind]
        )
        if path:
            self.meta_edit.clear()
            self.set_data(path)

    def _browse_meta(self) -> None:
        start = str(Path(self.data_edit.text()).parent) if self.data_edit.text() else self.start_dir
        path, _ = QFileDialog.getOpenFileName(
            self, "Metadata", start, "Metadata (*.rda);;All files (*)"
        )
        if path:
            self.meta_edit.setText(path)

    def paths(self) -> tuple[str, str]:
        return self.data_edit.text().strip(), self.meta_edit.text().strip()

    def read_mode(self) -> tuple[int, bool]:
        """The table's totals mode and keep-status flag, as `<READTABLE> n[T]`."""
        mode = int(self.totals.currentData())
        return mode, mode == 1 and self.keep_status.isChecked()

    def set_read_mode(self, totals_mode: int, keep_status: bool = False) -> None:
        self.totals.setCurrentIndex(self.totals.findData(totals_mode))
        self.keep_status.setChecked(keep_status)

    def _accept(self) -> None:
        data, meta = self.paths()
        missing = [p for p in (data, meta) if not p or not Path(p).exists()]
        if missing:
            self.note.setText(
                "Please choose both files; not found: " + ", ".join(m or "(empty)" for m in missing)
            )
            self.note.setStyleSheet("color:#b00020;")
            return
        self.accept()
