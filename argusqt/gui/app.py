"""Entry point of the desktop application: `argusqt.gui.app:main(argv) -> int`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from argusqt.gui import pysidefix
from argusqt.gui.mainwindow import MainWindow
from argusqt.gui.resources import icon, stylesheet


def create_app(argv: Sequence[str] | None = None) -> QApplication:
    """The QApplication (reused if one exists) with name, icon and the light stylesheet."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    app.setApplicationName("argusqt")
    app.setOrganizationName("argusqt")
    app.setWindowIcon(icon("app"))
    app.setStyleSheet(stylesheet())
    if not hasattr(app, "_argusqt_guard"):
        app._argusqt_guard = pysidefix.install(app)  # type: ignore[attr-defined]
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """Start the GUI; file arguments: a .arb runs, a data file (+ its .rda) opens."""
    from argusqt.session import install_cleanup

    args = list(sys.argv[1:] if argv is None else argv)
    files = [a for a in args if not a.startswith("-")]
    install_cleanup()  # a terminated GUI leaves no half-written temp files behind
    app = create_app(["argusqt", *[a for a in args if a.startswith("-")]])
    win = MainWindow()
    win.show()
    if files:
        QTimer.singleShot(0, lambda: win.open_paths(files))
    return int(app.exec())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
