"""Screenshots of the recode history and the method comparison docks (issue 13) into
docs/screenshots/, made by the real main window on the bundled sample data.

Run: `python docs/make_insight_screenshots.py` (sets QT_QPA_PLATFORM=offscreen itself).
sample_data/ is copied to a temporary folder; table 1 is region × size | turnover and table 2
activity × size | turnover, both with the p%-rule (15, 1).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "screenshots"
GUIDE_SHOTS = ROOT / "argusqt" / "docs" / "screenshots"  # the user guide shows them too


def wait(app, cond, seconds: float = 900.0) -> None:
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("the window did not get there in time")
        app.processEvents()
        time.sleep(0.02)


def save(widget, name: str) -> None:
    widget.grab().save(str(OUT / name))
    shutil.copy(OUT / name, GUIDE_SHOTS / name)
    print("wrote", OUT / name, "and", GUIDE_SHOTS / name)


def main() -> int:
    from PySide6.QtCore import QSettings, Qt

    from argusqt.gui.app import create_app
    from argusqt.gui.mainwindow import MainWindow
    from argusqt.gui.recodedialog import RecodeDialog
    from argusqt.model.rulespec import PRule, SafetyRules
    from argusqt.model.table import TableSpec

    OUT.mkdir(parents=True, exist_ok=True)
    app = create_app(["argusqt"])
    tmp = Path(tempfile.mkdtemp(prefix="argusqt_insight_"))
    for f in (ROOT / "sample_data").iterdir():
        if f.is_file():
            shutil.copy(f, tmp / f.name)
    settings = QSettings(str(tmp / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("options/specifyAfterOpen", False)  # no modal Specify dialog to answer
    win = MainWindow(settings=settings)
    win.resize(1400, 860)
    win.show()
    win.open_microdata(str(tmp / "enterprise.asc"), str(tmp / "enterprise.rda"))
    wait(app, lambda: win.session is not None and not win.runner.busy)
    rules = SafetyRules(p_individual=[PRule(15, 100, 1)])
    win.compute_tables(
        [
            TableSpec(["region", "size"], "turnover", rules=rules),
            TableSpec(["activity", "size"], "turnover", rules=rules),
        ]
    )
    wait(app, lambda: len(win.views) == 2 and not win.runner.busy)

    # 1. method comparison on table 1: HEUR, GH, NET, MOD and OPT (one minute at most), then the
    #    picture with OPT's pattern on the table
    win.tabs.setCurrentIndex(0)
    for method, params in (
        ("HEUR", None),
        ("GH", None),
        ("NET", None),
        ("MOD", None),
        ("OPT", {"max_minutes": 1}),
    ):
        if win.views[0].table.protection is not None:
            win.session.undo_protection(1)
            win.views[0].refresh()
        win.protect_table(method, params)
        wait(app, lambda: not win.runner.busy)
        if win.result_box is not None:
            win.result_box.close()
        print(method, "done:", win.last_result.n_secondary, "secondaries")
    win.methods_dock.show()
    win.methods_dock.raise_()
    win.resizeDocks([win.methods_dock], [660], Qt.Orientation.Horizontal)
    app.processEvents()
    save(win.methods_dock, "method_comparison.png")
    win.session.undo_protection(1)  # table 1 is recoded below
    win.views[0].refresh()

    # 2. recode history of table 2: size in both tables, activity to its sections, the
    #    size recode undone in table 2 only (the dialog as a user drives it)
    win.tabs.setCurrentIndex(1)
    dlg = RecodeDialog(win, 2, win.session.table(2))
    dlg.var_list.setCurrentRow(1)  # size, used by both tables
    dlg.load_grc(str(tmp / "size3.grc"))
    dlg.apply()
    dlg.var_list.setCurrentRow(0)  # activity: hierarchical, fold to level 1
    dlg.level.setValue(1)
    dlg._apply_level()
    dlg.var_list.setCurrentRow(1)
    dlg.scope_one.setChecked(True)
    dlg.undo()
    dlg.close()
    win.history_dock.show()
    win.history_dock.raise_()
    win.resizeDocks([win.history_dock], [600], Qt.Orientation.Horizontal)
    app.processEvents()
    save(win.history_dock, "recode_history.png")

    win.dirty = False  # nothing to save: do not ask
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
