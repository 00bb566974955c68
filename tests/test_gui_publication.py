"""The publication gate in the real windows: a status change after protection shows the table
as not protected; Save table is refused with a dialog that offers to protect again; after
protecting again the table is saved (sample data, real core, real dialogs)."""

from __future__ import annotations

import conftest_gui  # noqa: F401
import numpy as np
import openpyxl
import pytest
from conftest_gui import run_dialog
from test_gui_workflow import _open_and_specify

from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.publicationdialog import PublicationRefusedDialog
from argusqt.gui.savedialog import EXCEL, SaveTableDialog

pytestmark = pytest.mark.gui


def _protect_heur(d: ProtectDialog) -> None:
    d.select("HEUR")
    d.run_button.click()


def _save_excel_dialog(path):
    def fill(d: SaveTableDialog) -> None:
        d.select_type(3)
        d.checks["AS"].setChecked(True)  # code-value with statuses: an internal file
        assert d.is_confidential() and "CONFIDENTIAL" in d.note.text()
        d.select_type(EXCEL)
        assert not d.is_confidential() and d.note.text().startswith("For publication")
        d.path_edit.setText(str(path))
        d.buttons.accepted.emit()

    return fill


def _open_row_cell(t) -> int:
    """A published cell whose row has no suppressed cell: set unsafe alone it is disclosed."""
    st = t.status.reshape(t.shape)
    for r in range(1, t.shape[0]):
        if np.all(np.isin(st[r], (1, 2))):
            return t.cell_index((r, t.shape[1] - 1))
    raise AssertionError("no fully published row")


@pytest.mark.slow
def test_status_change_after_protection_refused_then_protect_again(qtbot, window, sample):
    view = _open_and_specify(qtbot, window, sample)
    assert "not protected" in view.protection.text()
    run_dialog(qtbot, ProtectDialog, _protect_heur)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors
    assert "publication audit passed" in view.protection.text()
    assert "publication audit passed" in window.status_label.text()

    # a published cell set unsafe by hand: no longer protected, shown as such
    t = view.table
    cell = _open_row_cell(t)
    assert view.select_cell(cell)
    view.buttons["unsafe"].click()
    assert int(t.status[cell]) == 9
    assert "NOT PROTECTED" in view.protection.text()
    assert "NOT PROTECTED" in window.status_label.text()
    view.grab().save(str(sample / "not_protected.png"))

    # Save table → refused: the dialog explains, names the cell, offers to protect again
    out = sample / "pub.xlsx"
    seen: list[str] = []

    def refused(d: PublicationRefusedDialog) -> None:
        seen.append(d.details.toPlainText())
        d.grab().save(str(sample / "refused.png"))
        d.protect_button.click()

    run_dialog(qtbot, SaveTableDialog, _save_excel_dialog(out))
    driven = run_dialog(qtbot, PublicationRefusedDialog, refused, timeout=120)
    protect = run_dialog(qtbot, ProtectDialog, _protect_heur, timeout=120)
    window.actions["save_table"].trigger()
    qtbot.waitUntil(lambda: bool(protect), timeout=120_000)
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors
    assert not out.exists()
    codes = " × ".join(c.strip() for c in t.cell_codes(cell))
    assert seen and "changed after protection" in seen[0] and codes in seen[0]
    assert "not saved" in window.log.toPlainText()

    # protected again (from the dialog): the save works and the new primary is an x
    assert "publication audit passed" in view.protection.text()
    run_dialog(qtbot, SaveTableDialog, _save_excel_dialog(out))
    window.actions["save_table"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors
    assert out.exists()
    ws = openpyxl.load_workbook(out)["table"]
    rows = list(ws.iter_rows(values_only=True))
    r_code, c_code = (c.strip() for c in t.cell_codes(cell))
    (h,) = [i for i, r in enumerate(rows) if r and r[0] == t.dims[0].name]
    col = [str(c).strip() for c in rows[h]].index(c_code)
    row = next(r for r in rows[h + 1 :] if r[0] is not None and str(r[0]).strip() == r_code)
    assert row[col] == "x"
