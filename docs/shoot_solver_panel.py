"""Screenshot of the live solver panel during a real OPT run: docs/screenshots/solver_panel.png.

Run: `python docs/shoot_solver_panel.py [seconds]` (offscreen by itself). The sample survey's
activity × region | turnover with NK(3,75) and FREQ(3,30) keeps OPT busy for minutes; the main
window is grabbed after `seconds` (default 20) of solving, then the run is cancelled (the best
audited pattern is kept) and the window with the result is grabbed too.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "screenshots"


def _wait(app, until, seconds: float) -> bool:
    from PySide6.QtCore import QElapsedTimer

    t = QElapsedTimer()
    t.start()
    while t.elapsed() < seconds * 1000:
        app.processEvents()
        if until():
            return True
    return False


def _generous_cancel() -> None:
    """Let the cancelled run audit its pattern however loaded the machine (as the tests do)."""
    import importlib
    import pkgutil

    import argusqt.protection

    for info in pkgutil.iter_modules(argusqt.protection.__path__):
        module = importlib.import_module(f"argusqt.protection.{info.name}")
        if hasattr(module, "CANCEL_GRACE"):
            module.CANCEL_GRACE = 600.0


def main(argv: list[str]) -> int:
    from PySide6.QtCore import QSettings

    from argusqt.gui.app import create_app
    from argusqt.gui.mainwindow import MainWindow
    from argusqt.model.rulespec import DominanceRule, FreqRule, SafetyRules
    from argusqt.model.table import TableSpec

    seconds = float(argv[0]) if argv else 20.0
    OUT.mkdir(parents=True, exist_ok=True)
    app = create_app(["argusqt"])
    tmp = Path(tempfile.mkdtemp(prefix="argusqt_panel_"))
    for f in (ROOT / "sample_data").iterdir():
        if f.is_file():
            shutil.copy(f, tmp / f.name)
    settings = QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat)
    settings.setValue("options/specifyAfterOpen", False)
    win = MainWindow(settings=settings)
    win.resize(1400, 860)
    win.show()
    win.open_microdata(str(tmp / "enterprise.asc"), str(tmp / "enterprise.rda"))
    _wait(app, lambda: win.session is not None and not win.runner.busy, 120)
    rules = SafetyRules(nk_individual=[DominanceRule(3, 75)], freq_individual=FreqRule(3, 30))
    win.compute_tables(
        [
            TableSpec(["activity", "region"], "turnover", rules=rules),
            TableSpec(["activity", "size"], "turnover", rules=rules),
        ]
    )
    _wait(app, lambda: len(win.views) == 2 and not win.runner.busy, 120)
    win.views[0].labels_box.setChecked(True)
    _generous_cancel()
    (opt,) = [d for d in win.session.protection_methods() if d.name == "OPT"]
    win.protect_table("OPT", opt.params.from_mapping({"max_minutes": 10}))
    _wait(app, lambda: False, seconds)
    panel = win.runner.panel
    print("bound", panel.bound.text(), "gap", panel.gap.text(), "cost", panel.incumbent.text())
    panel.grab().save(str(OUT / "solver_panel.png"))
    win.grab().save(str(OUT / "solver_panel_window.png"))
    print("wrote", OUT / "solver_panel.png")
    panel.request_cancel()
    _wait(app, lambda: not win.runner.busy, 600)
    _wait(app, lambda: False, 0.5)
    win.grab().save(str(OUT / "solver_panel_cancelled.png"))
    if win.result_box is not None:
        print(win.result_box.text())
        win.result_box.close()
    win.confirm_discard = lambda *a, **k: True  # a script: no unsaved-work question on close
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
