"""File | Save session… and File | Open session… through the real window and core."""

from __future__ import annotations

from pathlib import Path

import conftest_gui  # noqa: F401
import numpy as np
import pytest
from conftest_gui import run_dialog
from PySide6.QtWidgets import QFileDialog

from argusqt.gui.specify import SpecifyTablesDialog

pytestmark = pytest.mark.gui

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def _spec(d: SpecifyTablesDialog) -> None:
    d.select_variables(["activity", "size"])
    d.response.setCurrentText("turnover")
    d.individual.nk[0].check.setChecked(True)
    d.individual.freq.check.setChecked(True)
    d.compute.click()


@pytest.mark.slow
def test_save_and_open_session_from_the_menus(qtbot, window, sample, monkeypatch):
    run_dialog(qtbot, SpecifyTablesDialog, _spec, timeout=60)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    window.session.recode(1, "size", str(sample / "size3.grc"))
    window.table_replaced(1, window.session.table(1))
    window.protect_table("HEUR", {})
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    before = window.tables[0]
    assert ((before.status == 11) | (before.status == 12)).any()

    asked: list[str] = []

    def save_name(parent, caption, folder, filt):
        asked.append(filt)
        return str(sample / "work"), filt

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_name)
    window.actions["save_session"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    assert asked == ["argusqt session (*.aqs)"]
    saved = sample / "work.aqs"  # the suffix is added
    assert saved.is_file()

    old_session = window.session
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", lambda *a, **k: (str(saved), "argusqt session (*.aqs)")
    )
    window.actions["open_session"].trigger()
    qtbot.waitUntil(lambda: window.session is not old_session, timeout=60_000)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    after = window.tables[0]
    assert after is not before
    assert [d.codes for d in after.dims] == [d.codes for d in before.dims]
    np.testing.assert_array_equal(after.status, before.status)
    np.testing.assert_array_equal(after.cost, before.cost)
    view = window.views[0]
    assert view.result is not None and view.result.audit.ok
    assert "secondary" in window.status_label.text()
    assert "work.aqs" in window.log.toPlainText()
    assert window.specs and window.specs[0].explanatory == ["activity", "size"]


def test_open_bad_session_shows_the_error(qtbot, window, tmp_path, monkeypatch):
    bad = tmp_path / "bad.aqs"
    bad.write_text('{"format": "argusqt-session", "version": 7}')
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    window.actions["open_session"].trigger()
    qtbot.waitUntil(lambda: bool(window.errors), timeout=60_000)
    assert str(bad) in window.errors[0] and "version 7" in window.errors[0]
    assert window.session is None
