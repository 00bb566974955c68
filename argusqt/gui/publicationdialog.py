"""Save table refused by the publication gate: say why, name the cells, offer to protect again."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
)

from argusqt.errors import PublicationError


class PublicationRefusedDialog(QDialog):
    """Accepted = the user wants to protect the table again (the Protect dialog opens)."""

    def __init__(self, table_no: int, exc: PublicationError, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Table not saved")
        self.error = exc
        if exc.beside:  # publishable alone, not beside what was published before it
            head = QLabel(
                f"<b>Table {table_no} was not saved: it shares cells with "
                f"{', '.join(exc.beside)}.</b><br>"
                "Each passes the audit alone, but someone who reads them together could "
                "recompute a sensitive cell. Nothing was written. Protect this table again "
                "(a suppression method now adds the cells it needs beside what is "
                "published), protect the tables together (linked), or publish only one of them (delete a draft never released: a file deleted or written over no longer counts)."
            )
        else:
            head = QLabel(
                f"<b>Table {table_no} was not saved: it is not protected for publication.</b>"
                "<br>Its current statuses fail the audit, so the saved table would let "
                "someone recompute a sensitive cell. Nothing was written."
            )
        head.setWordWrap(True)
        self.head = head
        self.details = QPlainTextEdit(str(exc))
        self.details.setReadOnly(True)
        cells = [" × ".join(c.strip() or c for c in codes) for codes in exc.cells]
        if cells:
            self.details.appendPlainText("\nCells that can be recomputed:\n" + "\n".join(cells))
        self.buttons = QDialogButtonBox()
        self.protect_button = QPushButton("Protect again…")
        self.protect_button.setDefault(True)
        self.buttons.addButton(self.protect_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(head)
        lay.addWidget(self.details, 1)
        lay.addWidget(self.buttons)
        self.resize(620, 340)
