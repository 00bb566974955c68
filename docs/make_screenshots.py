"""Generate PNG screenshots of every main window and dialog into argusqt/docs/screenshots/.

Run: `QT_QPA_PLATFORM=offscreen python docs/make_screenshots.py` (the script sets offscreen
itself). With `--scale 2` it renders the main window at 200 % (QT_SCALE_FACTOR=2) as well.
Uses the synthetic data in sample_data/ and the real core.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "argusqt" / "docs" / "screenshots"  # shipped with the user guide


def _settle(app, ms: int = 150) -> None:
    from PySide6.QtCore import QElapsedTimer

    t = QElapsedTimer()
    t.start()
    while t.elapsed() < ms:
        app.processEvents()


def shoot(app, widget, name: str, size: tuple[int, int] | None = None) -> Path:
    if size:
        widget.resize(*size)
    widget.show()
    _settle(app)
    path = OUT / f"{name}.png"
    widget.grab().save(str(path))
    print("wrote", path)
    return path


def session_with_tables(folder: Path, protect: bool = True):
    """The sample survey, table activity × region with p% and frequency rules, protected."""
    from argusqt.model.rulespec import FreqRule, PRule, SafetyRules
    from argusqt.model.table import TableSpec
    from argusqt.session import Session

    s = Session()
    s.open_microdata(folder / "enterprise.asc", folder / "enterprise.rda")
    rules = SafetyRules(p_individual=[PRule(15)], freq_individual=FreqRule(3, 20))
    s.specify_table(TableSpec(["activity", "region"], "turnover", rules=rules))
    s.specify_table(TableSpec(["activity", "size", "region"], "turnover", rules=rules))
    s.compute_tables()
    if protect:
        s.protect(1, "MOD", {"max_minutes": 1})
    return s


def main(argv: list[str]) -> int:
    from PySide6.QtCore import QSettings

    from argusqt.gui.app import create_app
    from argusqt.gui.mainwindow import MainWindow
    from argusqt.gui.metadataeditor import MetadataEditor
    from argusqt.gui.opendialog import OpenDataDialog
    from argusqt.gui.protectdialog import ProtectDialog
    from argusqt.gui.recodedialog import RecodeDialog
    from argusqt.gui.savedialog import SaveTableDialog
    from argusqt.gui.solverpanel import SolverPanel
    from argusqt.gui.specify import SpecifyTablesDialog
    from argusqt.gui.summary import SummaryDialog
    from argusqt.progress import ProgressEvent

    scale_only = "--main-only" in argv
    OUT.mkdir(parents=True, exist_ok=True)
    app = create_app(["argusqt"])
    tmp = Path(tempfile.mkdtemp(prefix="argusqt_shots_"))
    for f in (ROOT / "sample_data").iterdir():
        if f.is_file():
            shutil.copy(f, tmp / f.name)
    settings = QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat)
    suffix = os.environ.get("SHOT_SUFFIX", "")

    s = session_with_tables(tmp)
    win = MainWindow(settings=settings)
    win._set_session(s, ("microdata", str(tmp / "enterprise.asc"), str(tmp / "enterprise.rda")))
    win.specs = list(s.specs)
    win._show_tables(s.tables)
    view = win.views[0]
    view.set_audit(getattr(s.tables[0], "audit", None))
    view.labels_box.setChecked(True)
    view.model.set_level(0, 1)
    view._fit_columns()
    # show a primary cell's information without selecting it (so its red colour stays visible)
    cell = int((s.tables[0].status == 3).nonzero()[0][0])
    view.info.show_cell(s.tables[0], cell, view.audit)
    win._sync_log()
    shoot(app, win, "main_window" + suffix, (1400, 860))
    if scale_only:
        return 0

    empty = MainWindow(settings=QSettings(str(tmp / "s2.ini"), QSettings.Format.IniFormat))
    shoot(app, empty, "main_window_empty", (1000, 640))
    empty.close()

    win.tabs.setCurrentIndex(1)
    v2 = win.views[1]
    v2.layer_combos[2].setCurrentIndex(1)
    shoot(app, win, "table_3d_layer", (1400, 860))
    win.tabs.setCurrentIndex(0)

    from argusqt.gui import core

    dlg = SpecifyTablesDialog(core.choices_from_metadata(s.metadata), list(s.specs), win)
    dlg.table_list.setCurrentRow(0)
    shoot(app, dlg, "specify_tables")
    dlg.close()

    od = OpenDataDialog("microdata", str(tmp), win)
    od.set_data(str(tmp / "enterprise.asc"))
    shoot(app, od, "open_microdata")
    od.close()

    pd = ProtectDialog(view.title, s.protection_methods(), s.table_facts(1), win, n_tables=2)
    shoot(app, pd, "protect")
    pd.select("RND")
    shoot(app, pd, "protect_rounding")
    pd.close()

    prog = SolverPanel()
    prog.start("Protect table 1 (OPT)")
    for t, inc, bound in (
        (1.0, 91022.0, 70112.0),
        (3.0, 86120.0, 79020.5),
        (6.0, 84410.0, 81234.5),
    ):
        prog.update_event(
            ProgressEvent(
                "Optimal suppression: branch-and-cut",
                bound=bound,
                incumbent=inc,
                gap=(inc - bound) / inc,
                elapsed=t,
            )
        )
    prog.log.appendPlainText("Heuristic start pattern: 41 secondary cells, cost 91,022")
    shoot(app, prog, "progress", (420, 520))
    prog._clock.stop()
    prog.close()

    sd = SaveTableDialog(str(tmp), "table1", win)
    sd.checks["AS"].setChecked(True)
    shoot(app, sd, "save_table")
    sd.close()

    sm = SummaryDialog(s.tables[0], view.title, win)
    shoot(app, sm, "summary")
    sm.close()

    rd = RecodeDialog(win, 2, s.tables[1])
    rd.var_list.setCurrentRow(0)
    shoot(app, rd, "recode_tree")
    rd.var_list.setCurrentRow(1)
    rd.load_grc(str(tmp / "size3.grc"))
    shoot(app, rd, "recode_groups")
    rd.close()

    from argusqt.gui.optionsdialog import OptionsDialog

    opts = OptionsDialog(settings, win)
    shoot(app, opts, "options")
    opts.close()

    me = MetadataEditor(s.metadata, win)
    shoot(app, me, "metadata_editor")
    me.close()
    win.close()

    # 200 % rendering of the main window in a fresh process (QT_SCALE_FACTOR is read at start)
    env = {**os.environ, "QT_SCALE_FACTOR": "2", "SHOT_SUFFIX": "_200pct"}
    subprocess.run([sys.executable, __file__, "--main-only"], env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
