"""Show core errors to the user: ArgusError as a plain message, anything else with details."""

from __future__ import annotations

import traceback

from PySide6.QtWidgets import QMessageBox, QWidget

from argusqt.errors import ArgusError


def show_error(parent: QWidget | None, exc: BaseException, title: str = "argusqt") -> None:
    """ArgusError: its text (file, line, problem); others: short message + collapsible trace."""
    if isinstance(exc, ArgusError):
        QMessageBox.critical(parent, title, str(exc))
        return
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle(title)
    box.setText(
        f"An unexpected error occurred: {type(exc).__name__}: {exc}\n\n"
        "Your data were not changed. Please report this problem with the details below."
    )
    box.setDetailedText("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    box.exec()
