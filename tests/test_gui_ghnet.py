"""GH and NET in the real windows: Modify | Protect table, the progress dialog, Cancel.

tau_testW Size × Region | Var2 with the p%-rule (15, 1) is opened and specified through the
dialogs; the Protect dialog is driven with the hypercube (its a-priori percentage, model size
and singleton options) and with the network method. Each subtable of GH is slowed a little
so that the progress dialog can be watched and cancelled while boxes are being chosen.
"""

from __future__ import annotations

import time

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import run_dialog
from PySide6.QtWidgets import QDialogButtonBox
from test_gui_acceptance import _choose_variables, _open_and_specify, tauw  # noqa: F401

from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.specify import SpecifyTablesDialog
from argusqt.model.status import is_primary, is_secondary, is_suppressed
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.suppress import hypercube

pytestmark = pytest.mark.gui

#: seconds each hypercube subtable waits, so the progress dialog shows and can be cancelled
SLOW = 0.4


def _spec(d: SpecifyTablesDialog) -> None:
    d.response.setCurrentText("Var2")
    d.individual.p[0].check.setChecked(True)
    d.individual.p[0].params[0].setValue(15)
    d.individual.p[0].params[1].setValue(1)
    _choose_variables(d, ["Size", "Region"])
    d.add_table.click()
    d.compute.click()


def _slow_subtables(monkeypatch) -> None:
    real = hypercube.HypercubeSearch.process

    def slow(self, k):
        time.sleep(SLOW)
        return real(self, k)

    monkeypatch.setattr(hypercube.HypercubeSearch, "process", slow)


def _choose_gh(d: ProtectDialog) -> None:
    d.select("GH")
    assert d.pages.currentWidget().isAncestorOf(d.widget("GH", "apriori_percent"))
    d.set_value("GH", "apriori_percent", 100)
    d.set_value("GH", "model_size", 0)
    d.set_value("GH", "apply_singleton", True)
    assert d.params().to_mapping() == {
        "apriori_percent": 100.0,
        "model_size": 0,
        "apply_singleton": True,
    }
    d.run_button.click()


def _start(qtbot, window, fn):
    driven = run_dialog(qtbot, ProtectDialog, fn)
    window.actions["protect"].trigger()
    driven.check()
    assert driven, "Modify | Protect table showed no dialog"
    qtbot.waitUntil(lambda: window.runner.dialog is not None, timeout=60_000)
    return window.runner.dialog


def _assert_published_safe(window, before):
    table = window.tables[0]
    status = table.status
    assert np.array_equal(status[is_primary(before)], before[is_primary(before)])
    verdict = publication_audit(CSPProblem.from_table(table), is_suppressed(status))
    assert verdict.ok, verdict.summary()
    return status


@pytest.mark.slow
def test_gh_from_the_protect_dialog_shows_progress_and_an_audited_pattern(
    qtbot,
    window,
    monkeypatch,
    tauw,  # noqa: F811
):
    _open_and_specify(qtbot, window, monkeypatch, tauw, _spec)
    before = window.tables[0].status.copy()
    _slow_subtables(monkeypatch)
    dialog = _start(qtbot, window, _choose_gh)
    qtbot.waitUntil(lambda: "Hypercube: subtable" in dialog.log.toPlainText(), timeout=60_000)
    assert dialog.bar.maximum() == 1000 and dialog.bar.value() > 0  # a fraction is known
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    assert not window.errors, window.errors
    result = window.last_result
    assert result.method == "GH" and not result.cancelled
    assert window.tables[0].protection.method == "GH"
    status = _assert_published_safe(window, before)
    assert is_secondary(status).any()
    text = window.result_box.text()
    assert "method GH" in text and "Cost of secondaries" in text
    # the repair step's count is in the method's log, whatever it is
    assert any("full-table audit" in line for line in result.log)


@pytest.mark.no_replay(
    "a run cancelled by the user keeps a partial pattern; its batch file runs GH to the end"
)
def test_gh_cancel_in_the_progress_dialog_keeps_an_audited_pattern(
    qtbot,
    window,
    monkeypatch,
    generous_cancel_grace,  # checks what a cancel keeps, not how fast (bench_cancel.py)
    tauw,  # noqa: F811
):
    _open_and_specify(qtbot, window, monkeypatch, tauw, _spec)
    before = window.tables[0].status.copy()
    _slow_subtables(monkeypatch)
    dialog = _start(qtbot, window, _choose_gh)
    qtbot.waitUntil(lambda: "Hypercube: subtable" in dialog.log.toPlainText(), timeout=60_000)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors  # a cancel is no error
    result = window.last_result
    assert result.method == "GH" and result.cancelled
    assert any("cancelled; the repair step completes" in line for line in result.log)
    _assert_published_safe(window, before)
    # the session's one sentence: in the result window and the Solver panel alike
    assert result.cancel_note.startswith("Table 1: GH cancelled: the best pattern found")
    assert result.cancel_note in window.result_box.text()
    assert dialog.message.text() == result.cancel_note


def test_net_from_the_protect_dialog(qtbot, window, monkeypatch, tauw):  # noqa: F811
    _open_and_specify(qtbot, window, monkeypatch, tauw, _spec)
    before = window.tables[0].status.copy()

    def net(d: ProtectDialog) -> None:
        d.select("NET")
        assert d.params().to_mapping() == {}
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, net)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    assert not window.errors, window.errors
    assert window.last_result.method == "NET"
    _assert_published_safe(window, before)
