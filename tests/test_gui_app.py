"""The entry point and File | Open batch: a .arb given to main() runs and shows its tables."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import conftest_gui  # noqa: F401
import pytest
from confidential_helpers import body_lines
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from argusqt.gui.mainwindow import MainWindow

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def ex2(shared_data, tmp_path):
    src = shared_data / "batch_ex2"
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path / "batch_ex2.arb"


DRIVER = r"""
import json, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from argusqt.gui.app import create_app, main
from argusqt.gui.mainwindow import MainWindow

create_app()  # timers need the application; main() reuses it
errors = []
QMessageBox.critical = staticmethod(lambda parent, title, text: errors.append(text))
out = {}

def watch():
    app = QApplication.instance()
    wins = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow)]
    if errors:
        app.quit()
    elif wins and wins[-1].views and not wins[-1].runner.busy:
        t = wins[-1].tables[0]
        out["cells"] = [[c.strip() for c in t.cell_codes(i)] + [int(t.status[i])] for i in range(t.n_cells)]
        wins[-1].close()
        app.quit()
    else:
        QTimer.singleShot(50, watch)

QTimer.singleShot(50, watch)
QTimer.singleShot(60000, lambda: QApplication.instance().quit())
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "errors": errors, **out}))
"""


def test_main_runs_a_batch_file_given_as_argument(ex2, tmp_path):
    """`main([file.arb])` in a fresh process (as the CLI starts it): runs it, shows the table."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(ex2)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0 and res["errors"] == []
    status = {tuple(c[:2]): c[2] for c in res["cells"]}
    # argusqt/docs/methods.md §3.3: (A,female) primary; secondaries (A,male), (C,male), (C,female)
    assert status[("A", "female")] == 3
    assert {k for k, s in status.items() if s in (11, 12)} == {
        ("A", "male"),
        ("C", "male"),
        ("C", "female"),
    }
    out = body_lines(tmp_path / "tabout_ex2.txt")  # AS+: after its CONFIDENTIAL line
    assert out[5] == '"A","  male",1938.79,11'
    assert out[6] == '"A","female",189.40,3'


def test_open_batch_from_menu_shows_error_with_line(qtbot, ex2, tmp_path, monkeypatch):
    errors: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: errors.append(text))
    text = ex2.read_text().replace(
        "<SAFETYRULE> FREQ(5,20)|P(20,5)|", "<SAFETYRULE> FREQ(5,20)|PP(20,5)|"
    )
    bad = tmp_path / "bad.arb"
    bad.write_text(text)
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.open_batch(str(bad))
    qtbot.waitUntil(lambda: bool(errors), timeout=60_000)
    assert str(bad) in errors[0] and "line 5" in errors[0]
    assert w.session is not None  # the GUI continues with what the batch built before the error


def test_open_batch_keeps_specs_for_specify_tables(qtbot, ex2, tmp_path, monkeypatch):
    errors: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: errors.append(text))
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.actions["open_batch"].setEnabled(True)
    w.open_batch(str(ex2))
    qtbot.waitUntil(lambda: bool(w.views) or bool(errors), timeout=60_000)
    assert not errors, errors
    assert [sp.explanatory for sp in w.specs] == [["region", "gender"]]
    assert w.actions["spec_tables"].isEnabled() and w.actions["protect"].isEnabled()
    assert "1 secondary" not in w.status_label.text() and "3 secondary" in w.status_label.text()
