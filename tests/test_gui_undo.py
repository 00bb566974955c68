"""Edit | Undo and Redo in the real main window (issue 13): Ctrl+Z / Ctrl+Shift+Z take back and
redo a status change, a recode (Modify | Global recode) and a protection, every cell exactly;
after an undone protection the table is not saved for publication; a session saved after an
undo reloads to the current tables. The window fixture then replays the action log as a
batch file and finds the same tables."""

from __future__ import annotations

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import run_dialog
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from test_gui_acceptance import (  # noqa: F401  (tauw is a fixture)
    _button,
    _open_and_specify,
    _pick_file,
    _recode_size_with_gk,
    _spec_p15,
    tauw,
)

from argusqt.gui.savedialog import EXCEL
from argusqt.gui.specify import SpecifyTablesDialog
from argusqt.sessionfile import load_session

pytestmark = pytest.mark.gui

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def _spec_sample(d: SpecifyTablesDialog) -> None:
    d.select_variables(["activity", "size"])
    d.response.setCurrentText("turnover")
    d.individual.nk[0].check.setChecked(True)
    d.individual.freq.check.setChecked(True)
    d.compute.click()


def _idle(qtbot, window) -> None:
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors


def _press(qtbot, window, redo: bool = False) -> None:
    """Ctrl+Z (Ctrl+Shift+Z for redo) typed in the table, as a user would."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    view = window.current_view()
    target = view.view if view is not None else window
    target.setFocus()
    qtbot.keyClick(target, Qt.Key.Key_Z, CTRL | SHIFT if redo else CTRL)


def _menu_text(window, key: str) -> str:
    return window.actions[key].text().replace("&", "")


def test_status_change_undone_and_redone_with_the_shortcuts(qtbot, window, sample):
    run_dialog(qtbot, SpecifyTablesDialog, _spec_sample, timeout=60)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    _idle(qtbot, window)
    undo, redo = window.actions["undo"], window.actions["redo"]
    assert not undo.isEnabled() and not redo.isEnabled()
    assert _menu_text(window, "undo") == "Undo"
    assert undo.shortcut().toString() == "Ctrl+Z"
    assert "Ctrl+Shift+Z" in [k.toString() for k in redo.shortcuts()]
    edit = [m for m in window.menuBar().actions() if m.text().replace("&", "") == "Edit"]
    assert edit and {undo, redo} <= set(edit[0].menu().actions())

    view = window.current_view()
    table = view.table
    before = table.status.copy()
    cell = int(np.flatnonzero(table.status == 1)[0])
    assert view.select_cell(cell)
    view.buttons["unsafe"].click()  # Set unsafe, the table view's button
    after = table.status.copy()
    assert not np.array_equal(before, after)
    assert undo.isEnabled()
    assert _menu_text(window, "undo") == "Undo set unsafe (1 cell) in table 1"

    _press(qtbot, window)
    assert np.array_equal(window.session.table(1).status, before)
    assert not undo.isEnabled() and redo.isEnabled()
    assert _menu_text(window, "redo") == "Redo set unsafe (1 cell) in table 1"
    assert "Undo: set unsafe (1 cell) in table 1" in window.log.toPlainText()

    _press(qtbot, window, redo=True)
    assert np.array_equal(window.session.table(1).status, after)
    assert undo.isEnabled() and not redo.isEnabled()
    # the view shows the table as it is (its model reads the session's table)
    assert window.current_view().table is window.session.table(1)


def test_recode_and_protection_undone_redone_saved_and_reloaded(
    qtbot,
    window,
    monkeypatch,
    tauw,  # noqa: F811 (the fixture imported above)
    tmp_path,
):
    """tau_testW: recode Size (GK.GRC) in table 1, protect it, undo and redo both with the
    keys; an undone protection is refused for publication; a session saved after the undo
    reloads to the current statuses."""
    _open_and_specify(qtbot, window, monkeypatch, tauw, _spec_p15)
    _idle(qtbot, window)
    original = window.session.table(1)
    original_status = original.status.copy()

    _recode_size_with_gk(qtbot, window, monkeypatch, tauw)
    recoded = window.session.table(1)
    recoded_status = recoded.status.copy()
    assert recoded is not original
    assert _menu_text(window, "undo") == "Undo recode Size in table 1"

    _press(qtbot, window)
    assert window.session.table(1) is original
    assert window.views[0].table is original  # the view shows the original coding again
    assert np.array_equal(window.views[0].table.status, original_status)
    _press(qtbot, window, redo=True)
    assert window.views[0].table is recoded
    assert np.array_equal(window.views[0].table.status, recoded_status)

    window.protect_table("HEUR", {})
    _idle(qtbot, window)
    window.result_box.close()  # OK: the result box is modal (issue 23), the keys wait for it
    protected_status = window.session.table(1).status.copy()
    assert not np.array_equal(protected_status, recoded_status)
    assert _menu_text(window, "undo") == "Undo protection HEUR of table 1"

    _press(qtbot, window)  # the protection is undone
    assert np.array_equal(window.session.table(1).status, recoded_status)
    assert "not protected" in window.views[0].protection.text()

    # Output | Save table for publication: refused (the dialog offers to protect: "no")
    from argusqt.gui import publicationdialog

    refused: list[str] = []

    def answer_no(dlg) -> int:
        refused.append(dlg.windowTitle())
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(publicationdialog.PublicationRefusedDialog, "exec", answer_no)
    xlsx = tmp_path / "table1.xlsx"
    window.save_table(EXCEL, "", str(xlsx))
    _idle(qtbot, window)
    qtbot.waitUntil(lambda: bool(refused), timeout=60_000)
    assert not xlsx.exists()

    _press(qtbot, window, redo=True)  # the protection again, from its stored result
    assert np.array_equal(window.session.table(1).status, protected_status)
    window.save_table(EXCEL, "", str(xlsx))
    _idle(qtbot, window)
    assert xlsx.is_file()

    _press(qtbot, window)  # undone again: the session file holds the unprotected table
    session_file = tmp_path / "undone.aqs"
    window.save_session(str(session_file))
    _idle(qtbot, window)
    again = load_session(session_file)
    for no, (a, b) in enumerate(zip(window.session.tables, again.tables, strict=True), 1):
        assert [list(d.codes) for d in a.dims] == [list(d.codes) for d in b.dims], no
        assert np.array_equal(a.status, b.status), no
        assert np.array_equal(a.cost, b.cost), no
    assert not any(type(a).__name__ == "Protect" for a in again.actions)


def test_recode_across_tables_is_one_undo_step(qtbot, window, monkeypatch, tauw):  # noqa: F811
    """Modify | Global recode of Size in every table that uses it (tables 1 and 2): one
    Edit | Undo puts both tables back, one Redo recodes both again."""
    from PySide6.QtWidgets import QDialogButtonBox

    from argusqt.gui.recodedialog import RecodeDialog

    _open_and_specify(qtbot, window, monkeypatch, tauw, _spec_p15)
    _idle(qtbot, window)
    originals = list(window.session.tables)
    statuses = [t.status.copy() for t in originals]

    def recode(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow([x.name for x in d.table.dims].index("Size"))
        assert d.scope_all.isChecked()  # the default: every table that uses Size
        _pick_file(monkeypatch, tauw / "GK.GRC")
        _button(d, "Load .grc…").click()
        d.apply_button.click()
        d.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close).click()

    driven = run_dialog(qtbot, RecodeDialog, recode, timeout=60)
    window.actions["recode"].trigger()
    driven.check()
    assert not window.errors, window.errors
    recoded = list(window.session.tables)
    assert all(a is not b for a, b in zip(recoded, originals, strict=True))
    assert _menu_text(window, "undo") == "Undo recode Size in tables 1, 2"

    _press(qtbot, window)
    for no, (t, st) in enumerate(zip(originals, statuses, strict=True), 1):
        assert window.session.table(no) is t and window.views[no - 1].table is t
        assert np.array_equal(t.status, st)
    assert _menu_text(window, "redo") == "Redo recode Size in tables 1, 2"
    _press(qtbot, window, redo=True)
    for no, t in enumerate(recoded, 1):
        assert window.session.table(no) is t and window.views[no - 1].table is t


@pytest.mark.slow
def test_apriori_and_undo_suppression_undone_from_the_edit_menu(qtbot, window, sample, monkeypatch):
    """Modify | Apply a-priori file and the table's Undo suppression button are actions like
    any other: Edit | Undo takes them back, also with the keyboard focus in the log."""
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    run_dialog(qtbot, SpecifyTablesDialog, _spec_sample, timeout=60)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    _idle(qtbot, window)
    s = window.session
    t = s.table(1)
    leaf = np.logical_and.outer(t.dims[0].is_leaf, t.dims[1].is_leaf).ravel()
    safe = np.flatnonzero((t.status == 1) & leaf)[:3]  # cells inside, not totals
    s.set_status(1, safe, "unsafe")  # an a-priori file that makes these 3 cells unsafe
    hst = sample / "three.hst"
    s.write_apriori(1, hst)
    s.undo()
    window.views[0].refresh()
    before = t.status.copy()

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(hst), ""))
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (",", True))
    window.actions["apriori"].trigger()
    _idle(qtbot, window)
    applied = t.status.copy()
    assert (applied[safe] != 1).all()
    assert _menu_text(window, "undo") == "Undo a-priori file three.hst on table 1"
    window.actions["undo"].trigger()  # Edit | Undo from the menu
    assert np.array_equal(t.status, before)
    window.log.setFocus()  # the keys work wherever the focus is in the window
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    qtbot.keyClick(window.log, Qt.Key.Key_Z, CTRL | SHIFT)
    assert np.array_equal(t.status, applied)
    _press(qtbot, window)  # the a-priori file undone again (its manual levels are wide)
    assert np.array_equal(t.status, before)

    window.protect_table("HEUR", {})
    _idle(qtbot, window)
    window.result_box.close()  # OK: the result box is modal (issue 23), the keys wait for it
    protected = t.status.copy()
    window.views[0].buttons["undo"].click()  # Undo suppression
    assert not np.array_equal(t.status, protected)
    assert _menu_text(window, "undo") == ("Undo removal of the secondary suppressions of table 1")
    _press(qtbot, window)
    assert np.array_equal(t.status, protected)
    assert window.views[0].audit is not None  # the view has the protection's audit again
    assert "not protected" not in window.views[0].protection.text()


def test_undo_is_disabled_while_a_job_runs(qtbot, window, sample):
    run_dialog(qtbot, SpecifyTablesDialog, _spec_sample, timeout=60)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    _idle(qtbot, window)
    view = window.current_view()
    assert view.select_cell(int(np.flatnonzero(view.table.status == 1)[0]))
    view.buttons["unsafe"].click()
    assert window.actions["undo"].isEnabled()
    window._update_actions(busy=True)
    assert not window.actions["undo"].isEnabled()
    window._update_actions(busy=False)
    assert window.actions["undo"].isEnabled()
