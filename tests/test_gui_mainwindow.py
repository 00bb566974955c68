"""Main window wiring: menus, open → specify → table → protect → summary, recent files, errors.

These tests drive the real windows and dialogs; the core is replaced by a small stand-in
session so that the GUI behaviour is tested on its own (test_gui_workflow.py uses the core).
"""

from __future__ import annotations

import conftest_gui  # noqa: F401
import pytest
from conftest_gui import FakeSession, run_dialog
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QMessageBox

from argusqt.errors import InputError
from argusqt.gui.mainwindow import MainWindow
from argusqt.gui.opendialog import OpenDataDialog
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.specify import SpecifyTablesDialog
from argusqt.model.rulespec import PRule

pytestmark = pytest.mark.gui


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "survey.asc"
    data.write_text("A1 123.4\n")
    (tmp_path / "survey.rda").write_text("Region 1 1\n")
    return data


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    sessions: list[FakeSession] = []

    def factory():
        sessions.append(FakeSession(slow=30.0))
        return sessions[-1]

    w = MainWindow(settings=settings, session_factory=factory)
    w.sessions = sessions
    # the test's work is not to be saved: closing the window at teardown must not ask
    qtbot.addWidget(w, before_close_func=lambda win: setattr(win, "dirty", False))
    w.show()
    return w


def test_menus_in_tau_argus_order(window):
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    # τ-Argus's menus, with Edit (Undo / Redo, an argusqt addition) where desktop users look
    assert titles == ["File", "Edit", "Specify", "Modify", "Output", "Help"]
    assert window.actions["open_micro"].shortcut().toString() == "Ctrl+M"
    # without data only opening is possible
    assert window.actions["open_micro"].isEnabled()
    assert not window.actions["spec_tables"].isEnabled()
    assert not window.actions["protect"].isEnabled()


def _specify(dlg: SpecifyTablesDialog) -> None:
    dlg.select_variables(["Region", "Gender"])
    dlg.response.setCurrentText("Turnover")
    dlg.individual.p[0].check.setChecked(True)
    dlg.individual.p[0].params[0].setValue(20)
    dlg.compute.click()


def test_open_specify_protect_flow(qtbot, window, files):
    seen_open = run_dialog(
        qtbot, OpenDataDialog, lambda d: (d.set_data(str(files)), d.buttons.accepted.emit())
    )
    seen_spec = run_dialog(qtbot, SpecifyTablesDialog, _specify, timeout=60)
    window.actions["open_micro"].trigger()
    assert seen_open and seen_open[0].meta_edit.text().endswith("survey.rda")  # proposed .rda
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    assert seen_spec
    session = window.sessions[-1]
    assert session.calls[0] == ("open_microdata", str(files), str(files.with_suffix(".rda")))
    spec = session.specs[0]
    assert spec.explanatory == ["Region", "Gender"] and spec.response == "Turnover"
    assert spec.rules.p_individual == [PRule(20.0, 100.0, 1)]
    assert "5 unsafe" not in window.status_label.text()
    assert "unsafe" in window.status_label.text()
    assert window.actions["protect"].isEnabled()
    # recent files remember the pair
    assert window._recent()[0].startswith("microdata|")

    # protect with OPT through the real protect dialog; cancel from the progress dialog
    session.slow = 30.0
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    run_dialog(qtbot, ProtectDialog, lambda d: (d.select("OPT"), d.run_button.click()))
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: window.runner.dialog is not None, timeout=60_000)
    qtbot.wait(400)
    assert len(ticks) >= 2  # the GUI event loop keeps running while the job works
    assert window.runner.dialog.bound.text() == "1"
    assert not window.views[0].buttons["unsafe"].isEnabled()  # no edits while the job runs
    assert not window.actions["save_table"].isEnabled()
    window.runner.dialog.request_cancel()
    # functional deadline as the wait's timeout (the job alone runs 30 s; quiet answer ~0.2 s)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=20_000)
    timer.stop()
    assert window.last_result.cancelled
    assert window.views[0].buttons["unsafe"].isEnabled()
    assert "OPT cancelled: the fake pattern was kept." in window.result_box.text()
    assert "secondary" in window.status_label.text()
    assert session.calls[-1][:3] == ("protect", 1, "OPT")
    # no time in the options: the time suggested for this small table (protect.advice)
    assert session.calls[-1][3].max_minutes == 1

    dlg = window.show_summary()
    assert dlg.grid.item(dlg.grid.rowCount() - 1, 1).text() == f"{window.tables[0].n_cells:,}"


def test_open_error_shows_file_and_line(qtbot, window, files, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))

    def bad_factory():
        s = FakeSession()

        def fail(data, meta):
            raise InputError(
                "expected a width (a whole number) in column 3, got 'x'", file=meta, line=4
            )

        s.open_microdata = fail
        return s

    window.session_factory = bad_factory
    window.open_microdata(str(files), str(files.with_suffix(".rda")))
    qtbot.waitUntil(lambda: bool(shown), timeout=60_000)
    assert (
        shown[0]
        == f"{files.with_suffix('.rda')}, line 4: expected a width (a whole number) in column 3, got 'x'"
    )
    assert window.session is None


def test_drop_data_file_opens_with_its_rda(qtbot, window, files):
    run_dialog(qtbot, SpecifyTablesDialog, lambda d: d.reject())
    window.open_paths([str(files)])
    qtbot.waitUntil(lambda: window.session is not None, timeout=60_000)
    assert window.sessions[-1].calls[0][2] == str(files.with_suffix(".rda"))


def test_opening_an_rda_alone_opens_its_data_file(qtbot, window, files):
    """The desktop entry claims .rda: a double-click opens the data file beside it."""
    run_dialog(qtbot, SpecifyTablesDialog, lambda d: d.reject())
    window.open_paths([str(files.with_suffix(".rda"))])
    qtbot.waitUntil(lambda: window.session is not None, timeout=60_000)
    assert window.sessions[-1].calls[0][1:3] == (str(files), str(files.with_suffix(".rda")))


def test_window_state_saved(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings, session_factory=FakeSession)
    qtbot.addWidget(w)
    w.show()
    w.resize(700, 500)
    qtbot.waitUntil(lambda: w.width() == 700)
    w.close()
    assert (
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat).value("geometry") is not None
    )
    w2 = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w2)
    w2.show()
    assert (w2.width(), w2.height()) == (700, 500)


def test_drop_event_and_recent_files_menu(qtbot, window, files):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    run_dialog(qtbot, SpecifyTablesDialog, lambda d: d.reject())
    mime = QMimeData()
    mime.setUrls(
        [QUrl.fromLocalFile(str(files)), QUrl.fromLocalFile(str(files.with_suffix(".rda")))]
    )
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.session is not None, timeout=60_000)
    assert window.sessions[-1].calls[0] == (
        "open_microdata",
        str(files),
        str(files.with_suffix(".rda")),
    )
    # the pair is now the first recent file; choosing it opens the same files again
    acts = [a for a in window.recent_menu.actions() if a.text().startswith("&1")]
    assert acts and "survey.asc" in acts[0].text()
    n = len(window.sessions)
    run_dialog(qtbot, SpecifyTablesDialog, lambda d: d.reject())
    acts[0].trigger()
    qtbot.waitUntil(
        lambda: len(window.sessions) == n + 1 and bool(window.sessions[-1].calls), timeout=5000
    )
    assert window.sessions[-1].calls[0][1] == str(files.resolve())


def test_help_guide_opens_with_its_pictures(qtbot, window):
    from PySide6.QtWidgets import QTextBrowser

    window.actions["guide"].trigger()
    browser = window.html_dialog.findChild(QTextBrowser)
    text = browser.toPlainText()
    assert "argusqt user guide" in text and "Protecting" in text
    assert (
        browser.searchPaths() and browser.loadResource(2, "screenshots/main_window.png") is not None
    )


def test_help_guide_is_the_shipped_page_and_follows_links_offline(qtbot, window):
    """Help opens the page inside the package (argusqt/docs), and its links to the reference
    pages open in the same window from the same folder: no browser, no network."""
    from pathlib import Path

    from PySide6.QtWidgets import QTextBrowser

    import argusqt
    from argusqt.gui import mainwindow

    assert mainwindow.GUIDE.parent == Path(argusqt.__file__).resolve().parent / "docs"
    window.actions["guide"].trigger()
    browser = window.html_dialog.findChild(QTextBrowser)
    assert "formats.md" in browser.toMarkdown()  # the guide links the reference pages
    for page, title in (("formats.md", "File formats"), ("rules.md", "Sensitivity rules")):
        browser.setSource(page)
        qtbot.waitUntil(lambda title=title: browser.toPlainText().startswith(title), timeout=5000)


def test_closing_during_a_job_cancels_it_first(qtbot, window, files):
    run_dialog(qtbot, SpecifyTablesDialog, _specify, timeout=60)
    window.open_microdata(str(files), str(files.with_suffix(".rda")))
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    window.protect_table("OPT", {"max_minutes": 10})
    qtbot.waitUntil(lambda: window.runner.busy, timeout=60_000)
    worker = window.runner.worker
    window.close()
    assert window.isVisible()  # not yet: the job is asked to stop first
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=60_000)
    assert worker.cancel_token.cancelled
    assert window.last_result.cancelled


def test_options_are_stored_and_used(qtbot, window, files):
    from argusqt.gui.optionsdialog import OptionsDialog

    def set_options(d: OptionsDialog) -> None:
        d.widgets["options/specifyAfterOpen"].setChecked(False)
        d.widgets["options/showLabels"].setChecked(True)
        d.widgets["options/optMinutes"].setValue(3)
        d.buttons.accepted.emit()

    driven = run_dialog(qtbot, OptionsDialog, set_options)
    window.actions["options"].trigger()
    driven.check()
    assert window.settings.value("options/optMinutes") in (3, "3")
    window.open_microdata(str(files), str(files.with_suffix(".rda")))  # no Specify dialog now
    qtbot.waitUntil(lambda: window.session is not None, timeout=60_000)
    window.compute_tables([_spec_from_dialog_defaults()])
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    assert window.views[0].labels_box.isChecked()
    seen = run_dialog(qtbot, ProtectDialog, lambda d: d.reject())
    window.actions["protect"].trigger()
    assert seen and seen[0].value("OPT", "max_minutes") == 3


def _spec_from_dialog_defaults():
    from argusqt.model.rulespec import SafetyRules
    from argusqt.model.table import TableSpec

    return TableSpec(["Region", "Gender"], "Turnover", rules=SafetyRules(p_individual=[PRule(15)]))


def test_specify_dialog_builds_full_spec(qtbot):
    from argusqt.gui.core import choices_from_metadata
    from argusqt.model.metadata import Metadata, Variable
    from argusqt.model.rulespec import DominanceRule, FreqRule, RequestRule

    meta = Metadata(
        None,
        "fixed",
        [
            Variable("A", 1, 1, recodeable=True),
            Variable("B", 2, 1, recodeable=True),
            Variable("X", 3, 5, numeric=True),
            Variable("Y", 8, 5, numeric=True),
            Variable("H", 13, 3, holding=True),
            Variable("W", 16, 3, weight=True),
        ],
    )
    d = SpecifyTablesDialog(choices_from_metadata(meta))
    qtbot.addWidget(d)
    d.select_variables(["A", "B"])
    d.chosen.setCurrentRow(1)
    d.up_var.click()
    d.response.setCurrentText("X")
    d.shadow.setCurrentText("Y")
    d.cost_freq_radio.setChecked(True)
    d.lam.setValue(0.5)
    d.use_weights.setChecked(True)
    d.individual.nk[0].set(True, [2, 80])
    d.individual.freq.set(True, [4, 25])
    d.individual.req.set(True, [60, 70, 2, 15])
    d.holding.p[0].set(True, [10, 1])
    d.zero.setChecked(True)
    d.zero_range.setValue(5)
    d.missing_safe.setChecked(True)
    d.manual.setValue(30)
    s = d.current_spec()
    assert s.explanatory == ["B", "A"]
    assert (s.response, s.shadow, s.cost.kind, s.cost.lam) == ("X", "Y", "frequency", 0.5)
    r = s.rules
    assert r.nk_individual == [DominanceRule(2, 80.0)]
    assert r.freq_individual == FreqRule(4, 25.0)
    assert r.req_individual == RequestRule(60.0, 70.0, 2, 15.0)
    assert r.p_holding == [PRule(10.0, 100.0, 1)] and r.uses_holdings
    assert (r.zero_range, r.missing_safe, r.manual_margin, r.use_weights) == (5.0, True, 30.0, True)
    # a spec loads back into the form unchanged
    d2 = SpecifyTablesDialog(choices_from_metadata(meta))
    qtbot.addWidget(d2)
    d2.load_spec(s)
    assert d2.current_spec() == s
    # frequency tables: only the frequency rule is offered
    d.response.setCurrentText("<frequency>")
    assert not d.individual.nk[0].check.isEnabled() and d.individual.freq.check.isEnabled()
    assert d.current_spec().rules.nk_individual == []


def test_help_online_is_this_project_or_the_shipped_guide(qtbot, window, monkeypatch):
    """argusqt has no web site yet: Help → argusqt online opens the shipped guide and says so;
    it never opens τ-Argus's pages (no browser is started)."""
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QTextBrowser

    from argusqt.gui import mainwindow

    opened: list = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    assert mainwindow.PROJECT_URL is None
    window.actions["online"].trigger()
    dlg = window.html_dialog
    assert "no web site" in dlg.windowTitle()
    browser = dlg.findChild(QTextBrowser)
    assert browser.toPlainText().startswith("argusqt user guide")
    assert opened == []
    help_menu = next(
        m for m in window.menuBar().findChildren(type(window.recent_menu)) if m.title() == "&Help"
    )
    assert [a.text() for a in help_menu.actions() if a.text()] == [
        "&User guide",
        "argusqt &online",
        "&Options…",
        "&About argusqt",
    ]
    # with a project address, that address is opened
    monkeypatch.setattr(mainwindow, "PROJECT_URL", "https://example.org/argusqt")
    window.actions["online"].trigger()
    assert [u.toString() for u in opened] == ["https://example.org/argusqt"]
