"""The cell key method in the application (argusqt/docs/methods.md §16): the Magnitude example
of τ-Argus opened in the main window, CKM chosen in the Protect dialog with a generated
ptable, and with a ptable file chosen from Modify | Cell key ptable; the published values
are the Session's, the result box gives the loss figures."""

from __future__ import annotations

import shutil
from pathlib import Path

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import run_dialog
from shared_paths import tauargus_dir

from argusqt.batch.arb import parse_specify_table
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session

pytestmark = pytest.mark.gui


def _open(qtbot, window, folder: Path) -> None:
    spec = parse_specify_table('"Sex""Age"|"<freq>"||')
    spec.rules = parse_safety_rule("FREQ(3,10)")
    window.settings.setValue("options/specifyAfterOpen", False)
    window.open_microdata(str(folder / "microdata.csv"), str(folder / "microdata.rda"))
    qtbot.waitUntil(lambda: window.session is not None and not window.runner.busy, timeout=60_000)
    window.compute_tables([spec])
    qtbot.waitUntil(lambda: len(window.views) == 1 and not window.runner.busy, timeout=60_000)


def _session(folder: Path, params: dict, ptable: Path | None = None) -> np.ndarray:
    s = Session()
    s.open_microdata(folder / "microdata.csv", folder / "microdata.rda")
    spec = parse_specify_table('"Sex""Age"|"<freq>"||')
    spec.rules = parse_safety_rule("FREQ(3,10)")
    s.specify_table(spec)
    s.compute_tables()
    if ptable is not None:
        s.set_ckm_ptables(1, ptable)
    s.protect(1, "CKM", params)
    assert s.table(1).published is not None
    return s.table(1).published.copy()


def test_ckm_from_the_protect_dialog_and_a_chosen_ptable(qtbot, window, tmp_path):
    folder = tmp_path / "Magnitude"
    shutil.copytree(tauargus_dir() / "cellkey" / "Magnitude", folder)
    _open(qtbot, window, folder)

    def choose(d: ProtectDialog) -> None:
        d.select("CKM")
        d.set_value("CKM", "ptable_d", 3)
        d.set_value("CKM", "ptable_v", 1.5)
        d.set_value("CKM", "ptable_pstay", 0.25)
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, choose, timeout=120)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    assert not window.errors, window.errors
    assert window.last_result is not None and window.last_result.method == "CKM"
    table = window.tables[0]
    want = _session(folder, {"ptable_d": 3, "ptable_v": 1.5, "ptable_pstay": 0.25})
    assert np.array_equal(table.published, want)
    lines = window._result_lines(1, window.last_result)
    assert any(line.startswith("Perturbed cells (value changed):") for line in lines)
    assert window.session.protection_state(1) == "cleared"
    # Modify | Cell key ptable: τ-Argus's other example ptable, then CKM with its defaults
    other = folder / "other.txt"
    shutil.copy(tauargus_dir() / "cellkey" / "Frequency" / "tau_testW_ptable.txt", other)
    assert window.choose_ckm_ptable(str(other))

    def defaults(d: ProtectDialog) -> None:
        d.select("CKM")
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, defaults, timeout=120)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    assert not window.errors, window.errors
    assert np.array_equal(window.tables[0].published, _session(folder, {}, other))


def test_loss_and_risk_chart(qtbot, window, tmp_path):
    """Output | Cell key loss and risk: one bar and one row per size class of the result."""
    folder = tmp_path / "Magnitude"
    shutil.copytree(tauargus_dir() / "cellkey" / "Magnitude", folder)
    _open(qtbot, window, folder)
    assert window.show_ckm_loss() is None  # not protected by CKM yet

    def defaults(d: ProtectDialog) -> None:
        d.select("CKM")
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, defaults, timeout=120)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    dlg = window.show_ckm_loss()
    assert dlg is not None
    qtbot.addWidget(dlg)
    classes = window.last_result.figures["loss"]["classes"]
    assert dlg.grid.rowCount() == len(classes) == len(dlg.chart.values)
    table = window.tables[0]
    nonempty = table.status != 14
    exact = table.published[nonempty] == table.value[nonempty]
    assert sum(c["exact"] for c in classes) == int(exact.sum())
