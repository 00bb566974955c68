"""Issue 22's GUI scenario in the real main window: a second Protect gives the pattern a fresh
one gives (the first pattern's secondaries are not used), and after Cancel the log, the
result window, the Solver panel and the status bar say the same true sentence.

sample_data activity × size | turnover, P(15,1)|FREQ(3,20) (GH and HEUR in seconds) and
activity × region (OPT runs for minutes there: a Cancel certainly meets it running). No
wall-clock assertion: generous functional waits only.
"""

from __future__ import annotations

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import run_dialog
from PySide6.QtWidgets import QDialogButtonBox
from test_gui_issue10_bugs import _open

from argusqt.batch.arb import parse_specify_table
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.model.status import is_secondary, is_suppressed
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session

pytestmark = pytest.mark.gui

#: generous waits on a loaded 2-core machine
WAIT_MS = 300_000


def _protect(qtbot, window, method: str) -> np.ndarray:
    """Modify | Protect table with `method` (its dialog defaults); the statuses after it."""

    def choose(d: ProtectDialog) -> None:
        assert "primaries" in d.basis.text() and d.basis.isVisibleTo(d)
        d.select(method)
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, choose, timeout=120)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=WAIT_MS)
    assert not window.errors, window.errors
    assert window.last_result is not None and window.last_result.method == method
    return np.asarray(window.tables[0].status).copy()


def _fresh(sample, dims: str, method: str) -> np.ndarray:
    """The same table protected once, by a Session of its own (as the API or batch would)."""
    s = Session()
    s.open_microdata(sample / "enterprise.asc", sample / "enterprise.rda")
    spec = parse_specify_table(f'{dims}|"turnover"||')
    spec.rules = parse_safety_rule("P(15,1)|FREQ(3,20)")
    s.specify_table(spec)
    s.compute_tables()
    s.protect(1, method)
    return s.table(1).status.copy()


@pytest.mark.slow
def test_protect_again_gives_the_pattern_of_a_fresh_protect(qtbot, window, sample):
    _open(qtbot, window, sample, '"activity""size"')
    gh = _protect(qtbot, window, "GH")
    heur = _protect(qtbot, window, "HEUR")  # another method after GH
    fresh = _fresh(sample, '"activity""size"', "HEUR")
    assert not np.array_equal(gh, fresh), "GH found HEUR's pattern: nothing to tell apart"
    np.testing.assert_array_equal(heur, fresh)
    again = _protect(qtbot, window, "HEUR")  # the same method again
    np.testing.assert_array_equal(again, fresh)
    # Methods compared: GH's row run again gives GH's pattern, not one built on HEUR's
    window.use_method("GH")
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=WAIT_MS)
    np.testing.assert_array_equal(window.tables[0].status, gh)
    window.result_box.close()


def _one_sentence(window, panel) -> str:
    """The panel's last word after a cancel, which the log, the box and the status bar repeat."""
    text = panel.message.text()
    assert text.startswith("Table 1: OPT cancelled"), text
    log = [line for line in window.log.toPlainText().splitlines() if line.strip()]
    assert log[-1].endswith(text), (log[-1], text)  # "hh:mm:ss  " + the session's sentence
    assert text in window.result_box.text()
    assert window.statusBar().currentMessage() == text
    return text


@pytest.mark.no_replay("a run cancelled by the user: its batch file runs OPT to the end")
def test_after_cancel_log_panel_box_and_status_bar_say_one_true_thing(
    qtbot, window, sample, monkeypatch
):
    """OPT cancelled as soon as it runs, with no time to audit a pattern (grace 0): nothing
    changes and every place says the table keeps GH's pattern; had a pattern been audited,
    every place would say it was kept and the table's statuses must pass the audit."""
    from protect_helpers import patch_cancel_grace

    _open(qtbot, window, sample, '"activity""region"')
    gh = _protect(qtbot, window, "GH")
    window.result_box.close()
    patch_cancel_grace(monkeypatch, 0.0)
    gh_result = window.last_result

    def opt(d: ProtectDialog) -> None:
        d.select("OPT")
        d.set_value("OPT", "max_minutes", 30)
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, opt, timeout=120)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: window.runner.busy, timeout=WAIT_MS)
    panel = window.runner.panel
    panel.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    assert "Cancelling" in panel.message.text() and "kept only if" in panel.message.text()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=WAIT_MS)
    assert not window.errors, window.errors  # a cancel is no error
    text = _one_sentence(window, panel)
    table = window.tables[0]
    if window.last_result is gh_result:  # nothing kept: GH's pattern is on the table
        assert text.endswith(
            "Nothing changed: table 1 keeps its GH pattern, which passed the audit."
        )
        assert "was kept" not in text
        np.testing.assert_array_equal(table.status, gh)
        assert table.protection.method == "GH"
    else:  # an audited pattern was kept: it is on the table and passes the audit again
        r = window.last_result
        assert r.cancelled and text == r.cancel_note and "was kept" in text
        np.testing.assert_array_equal(table.status, r.status)
    assert is_secondary(table.status).any()
    verdict = publication_audit(CSPProblem.from_table(table), is_suppressed(table.status))
    assert verdict.ok, verdict.summary()
    window.result_box.close()


# ---------------------------------------------------------------- honest progress (no solver)
def test_progress_counts_what_it_counts_and_a_new_step_is_busy(qtbot):
    from argusqt.gui.solverpanel import SolverPanel
    from argusqt.progress import ProgressEvent

    panel = SolverPanel()
    qtbot.addWidget(panel)
    panel.start("Protect table 1 (MOD)")
    panel.update_event(ProgressEvent("Modular: subtable 1 of 13", fraction=1 / 13))
    assert panel.bar.maximum() == 1000 and panel.bar.format() == "1 of 13"
    panel.update_event(ProgressEvent("Modular: subtable 2 of 13", fraction=2 / 13))
    assert panel.bar.format() == "2 of 13"
    # the next step has no known length: no stale "15 %" for it
    panel.update_event(ProgressEvent("Modular: checking every primary over the whole table"))
    assert panel.bar.maximum() == 0
    assert panel.message.text() == "Modular: checking every primary over the whole table"
    panel.request_cancel()
    assert "kept only if it passes the audit" in panel.message.text()
    panel.finish("cancelled")
    assert panel.message.text() == "Cancelled."  # what was kept is the job's to say


def test_a_cancel_that_kept_nothing_is_said_by_the_panel_as_raised(qtbot):
    from PySide6.QtWidgets import QMainWindow

    from argusqt.errors import Cancelled
    from argusqt.gui.jobs import JobRunner

    main = QMainWindow()
    qtbot.addWidget(main)
    runner = JobRunner(main)
    said = "Table 1: MOD cancelled: its best pattern could not be audited in time, so it is not used. Nothing changed: table 1 stays unprotected."  # noqa: E501
    seen: list[BaseException] = []

    def job(progress, cancel):
        cancel.wait(600)  # a method polling its token (generous functional deadline)
        raise Cancelled(said)

    runner.start("Protect table 1 (MOD)", job, on_error=seen.append)
    qtbot.waitUntil(lambda: runner.busy, timeout=WAIT_MS)
    runner.panel.request_cancel()
    qtbot.waitUntil(lambda: not runner.busy, timeout=WAIT_MS)
    assert seen and str(seen[0]) == said
    assert runner.panel.message.text() == said
    assert "kept" not in runner.panel.message.text()


# ---------------------------------------------------------------- test isolation
def test_a_dialog_poller_of_an_ended_test_drives_no_dialog(qtbot):
    """`run_dialog` pollers whose dialog never came polled on for their whole timeout, into
    the next tests (shared state between GUI test files): the autouse fixture stops them."""
    from conftest_gui import stop_dialog_pollers
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QMessageBox

    stale = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Ok).click()
    )
    stop_dialog_pollers()  # what the fixture does when a test ends
    box = QMessageBox(QMessageBox.Icon.Question, "next test", "a dialog of the next test")
    qtbot.addWidget(box)
    closed_by_us: list[bool] = []
    QTimer.singleShot(1500, lambda: (closed_by_us.append(True), box.reject()))
    box.exec()
    assert closed_by_us and not stale  # the old poller never saw it


def test_select_cell_selects_that_cell_alone_whatever_key_is_down(qtbot, window, sample):
    """A modifier key left down by an earlier test (application-wide state) made
    `select_cell` keep the old selection: test_bug3's "protected" went to an unsafe cell
    (random order, seed 2203). The selected cell is now the selection, whatever the keys."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    _open(qtbot, window, sample, '"activity""size"')
    view = window.views[0]
    safe = np.flatnonzero(view.table.status == 1)
    assert view.select_cell(int(safe[-1]))
    QTest.keyPress(view.view, Qt.Key.Key_Control, Qt.KeyboardModifier.ControlModifier)
    try:
        assert view.select_cell(int(safe[0]))
        assert view.selected_cells().tolist() == [int(safe[0])]
    finally:
        QTest.keyRelease(view.view, Qt.Key.Key_Control)
