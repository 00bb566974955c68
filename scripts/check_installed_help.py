"""Check that Help works offline in an *installed* argusqt (not a checkout).

Run it with the Python of a venv where argusqt was installed with `pip install .`, from a
folder outside the checkout, without network or browser (the PyInstaller bundle runs it as
`argusqt --check-help`, installer/smoke.sh):

    python -m venv /tmp/v && /tmp/v/bin/pip install /path/to/argusqt
    cd /tmp && QT_QPA_PLATFORM=offscreen /tmp/v/bin/python /path/to/scripts/check_installed_help.py

It opens the main window offscreen, triggers Help → User guide and Help → argusqt online,
checks that the guide shown is the file inside the installed package, that its pictures and
its links to the reference pages resolve from there, and saves screenshots of the Help
window (`--shots DIR`). Exit code 0 when every check passes; each check prints one line.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shots", type=Path, default=None, help="save Help window PNGs here")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    import argusqt
    from argusqt.docs import DOCS_DIR, PAGES, USER_GUIDE

    failures: list[str] = []

    def check(ok: bool, what: str) -> None:
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    # installed: site-packages; in the PyInstaller bundle (`argusqt --check-help`): its folder
    site = Path(getattr(sys, "_MEIPASS", sysconfig.get_paths()["purelib"])).resolve()
    package = Path(argusqt.__file__).resolve().parent
    check(package.is_relative_to(site), f"argusqt imported from the installed package {package}")
    check(USER_GUIDE.is_relative_to(site), f"user guide path {USER_GUIDE}")
    for page in PAGES:
        check((DOCS_DIR / page).is_file(), f"page {page} installed")

    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QApplication, QTextBrowser

    from argusqt.gui.app import create_app
    from argusqt.gui.mainwindow import MainWindow

    opened: list[str] = []
    QDesktopServices.openUrl = lambda url: opened.append(url.toString()) or False  # type: ignore[method-assign]
    app = create_app()
    win = MainWindow()
    win.show()

    from argusqt.gui.resources import RESOURCES, icon

    root = Path(sys.prefix).resolve()
    check(RESOURCES.resolve().is_relative_to(root), f"icons and stylesheet from {RESOURCES}")
    # a pixmap, not just the file: the SVG image plugin must be there to draw the icons
    check(not icon("app").pixmap(32, 32).isNull(), "the application icon draws")

    win.actions["guide"].trigger()
    app.processEvents()
    dlg = win.html_dialog
    browser = dlg.findChild(QTextBrowser)
    text = browser.toPlainText()
    check(text.startswith("argusqt user guide"), "Help → User guide shows the guide")
    headings = [
        ln.lstrip("#").strip().replace("`", "")
        for ln in USER_GUIDE.read_text(encoding="utf-8").splitlines()
        if ln.startswith("## ")
    ]
    missing = [h for h in headings if h not in text]
    check(not missing, f"all {len(headings)} sections of the installed file shown {missing}")
    check(
        [Path(p).resolve() for p in browser.searchPaths()] == [DOCS_DIR.resolve()],
        f"pictures and links are looked up in {DOCS_DIR}",
    )
    image = browser.document().resource(3, "screenshots/main_window.png")  # 3 = ImageResource
    check(image is not None and not getattr(image, "isNull", lambda: False)(), "its pictures load")
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
        dlg.grab().save(str(args.shots / "help_user_guide.png"))
    for page, title in (("formats.md", "File formats"), ("rules.md", "Sensitivity rules")):
        browser.setSource(page)
        app.processEvents()
        check(browser.toPlainText().startswith(title), f"link {page} opens offline")
        first = (DOCS_DIR / page).read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
        check(browser.toPlainText().startswith(first), f"{page} shown is the installed file")

    win.actions["online"].trigger()
    app.processEvents()
    dlg = win.html_dialog
    check("no web site" in dlg.windowTitle(), f"Help → argusqt online: '{dlg.windowTitle()}'")
    if args.shots:
        dlg.grab().save(str(args.shots / "help_online.png"))
    check(opened == [], f"no browser started (asked for: {opened})")

    win.close()
    QApplication.processEvents()
    print(f"{len(failures)} failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
