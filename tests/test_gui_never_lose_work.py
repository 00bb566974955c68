"""Issue 13 (part A) through the real main window: work is never lost, a recode reaches every
table that uses the variable, the recode history and the methods tried are shown.

Sample data (sample_data/enterprise, copied to tmp_path): table 1 region × size | turnover and
table 2 activity × size | turnover, both with the p%-rule (15, 1).
"""

from __future__ import annotations

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import run_dialog
from PySide6.QtWidgets import QMessageBox

from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.recodedialog import RecodeDialog
from argusqt.gui.specify import SpecifyTablesDialog
from argusqt.model.status import Status, is_secondary

pytestmark = pytest.mark.gui

JOB_MS = 240_000  # generous: tabulation, methods and audits on a loaded machine


def _rules(d: SpecifyTablesDialog) -> None:
    d.response.setCurrentText("turnover")
    d.individual.p[0].check.setChecked(True)
    d.individual.p[0].params[0].setValue(15)
    d.individual.p[0].params[1].setValue(1)


def _fill(tables: list[list[str]]):
    def fill(d: SpecifyTablesDialog) -> None:
        for names in tables:
            if not any(s.explanatory == names for s in d.specs):  # listed tables stay as they are
                d.select_variables(names)
                _rules(d)
                d.add_table.click()
        d.compute.click()

    return fill


def _specify(qtbot, window, tables: list[list[str]]) -> None:
    """Specify | Tables with the dialog: the tables in order, then Compute."""
    driven = run_dialog(qtbot, SpecifyTablesDialog, _fill(tables), timeout=60)
    window.actions["spec_tables"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=JOB_MS)
    assert not window.errors, window.errors


def _open_sample(qtbot, window, sample, tables: list[list[str]]) -> None:
    """Open the sample microdata; the Specify dialog opens by itself (an option) and is filled."""
    driven = run_dialog(qtbot, SpecifyTablesDialog, _fill(tables), timeout=120)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: len(window.views) == len(tables), timeout=JOB_MS)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=JOB_MS)
    driven.check()
    assert not window.errors, window.errors


def _run_recode_dialog(qtbot, window, fill) -> None:
    """Open Recode from the menu and let `fill` work the real dialog."""
    driven = run_dialog(qtbot, RecodeDialog, fill, timeout=60)
    window.actions["recode"].trigger()
    driven.check()
    assert not window.errors, window.errors


def _recode_size(qtbot, window, sample, only_this_table: bool = False) -> None:
    def recode(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow(1)  # size
        assert d.pages.currentIndex() == 1
        d.scope_one.setChecked(only_this_table)
        d.load_grc(str(sample / "size3.grc"))
        assert d.apply()
        d.reject()

    _run_recode_dialog(qtbot, window, recode)


def _protect(qtbot, window, method: str) -> None:
    def fill(d: ProtectDialog) -> None:
        d.select(method)
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, fill)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=JOB_MS)
    driven.check()
    assert not window.errors, window.errors
    window.result_box.close()


def _size_codes(t) -> list[str]:
    """The size codes of a table without the missing code 9 (it stays after a recode)."""
    return [c.strip() for c in t.dims[1].codes if c.strip() != "9"]


# ============================================================================ recompute
def test_recompute_keeps_the_other_tables(qtbot, window, sample):
    _open_sample(qtbot, window, sample, [["region", "size"]])
    _recode_size(qtbot, window, sample)
    t1 = window.tables[0]
    view = window.views[0]
    safe = int(np.flatnonzero(t1.status == Status.SAFE)[-1])
    assert view.select_cell(safe)
    view.buttons["unsafe"].click()  # after the recode no cell is unsafe: make one so
    assert int(t1.status[safe]) == Status.UNSAFE_MANUAL
    _protect(qtbot, window, "HEUR")
    assert is_secondary(t1.status).any()
    statuses, codes = t1.status.copy(), _size_codes(t1)
    state = window.views[0].protection.text()

    _specify(qtbot, window, [["region", "size"], ["activity", "size"]])  # one table added

    assert len(window.views) == 2
    assert window.tables[0] is t1  # not computed again: its recode and status change kept
    np.testing.assert_array_equal(window.tables[0].status, statuses)
    assert _size_codes(window.tables[0]) == codes == ["Total", "1", "2", "3"]
    assert window.views[0].protection.text() == state  # still protected by HEUR
    assert window.session.results[1].method == "HEUR"
    assert len(_size_codes(window.tables[1])) > 4  # the new table has the original coding
    assert window.tabs.currentIndex() == 1  # the new table is shown
    assert "Tables kept as they were" in window.log.toPlainText()


def test_recompute_of_a_changed_table_asks_first(qtbot, window, sample):
    _open_sample(qtbot, window, sample, [["region", "size"]])
    _recode_size(qtbot, window, sample)
    t1 = window.tables[0]
    asked = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Cancel).click()
    )

    def change(d: SpecifyTablesDialog) -> None:  # the same variables, another rule
        d.table_list.setCurrentRow(0)
        d.individual.p[0].params[0].setValue(20)
        d.replace_table.click()
        d.compute.click()

    run_dialog(qtbot, SpecifyTablesDialog, change, timeout=60)
    window.actions["spec_tables"].trigger()
    qtbot.waitUntil(lambda: bool(asked), timeout=30_000)
    assert asked[0].objectName() == "unsavedBox" and "table 1" in asked[0].text()
    qtbot.wait(200)
    assert not window.runner.busy and window.tables[0] is t1  # Cancel: nothing recomputed

    dropped = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Discard).click()
    )
    run_dialog(qtbot, SpecifyTablesDialog, change, timeout=60)
    window.actions["spec_tables"].trigger()
    qtbot.waitUntil(lambda: bool(dropped), timeout=30_000)
    qtbot.waitUntil(lambda: window.tables[0] is not t1 and not window.runner.busy, timeout=JOB_MS)
    assert len(_size_codes(window.tables[0])) > 4  # Discard: computed again, recode gone
    assert window.session.specs[0].rules.p_individual[0].p == 20
    assert 1 not in window.recode_steps and not window.dirty


# ============================================================================ quit / open
@pytest.mark.no_replay("the window is closed by the test (Discard): nothing left to replay")
def test_quit_with_unsaved_changes_asks(qtbot, window, sample):
    _open_sample(qtbot, window, sample, [["region", "size"]])
    assert not window.dirty  # only computed: nothing to lose yet
    view = window.views[0]
    t = view.table
    assert view.select_cell(int(np.flatnonzero(t.status == Status.SAFE)[-1]))
    view.buttons["protected"].click()
    assert window.dirty and window.windowTitle().endswith("*")

    seen = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Cancel).click()
    )
    window.actions["exit"].trigger()  # File | Exit, Ctrl+Q
    assert seen and "not saved" in seen[0].text()
    assert window.isVisible()  # Cancel: still there

    asked_open = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Cancel).click()
    )
    window.open_session(str(sample / "whatever.aqs"))
    assert asked_open and window.views and window.views[0].table is t  # nothing replaced

    asked_data = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Cancel).click()
    )
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    assert asked_data and not window.runner.busy and window.views[0].table is t

    gone = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Discard).click()
    )
    window.close()  # the window's close button
    assert gone
    assert not window.isVisible()


def test_save_in_the_question_saves_then_quits(qtbot, window, sample, monkeypatch):
    _open_sample(qtbot, window, sample, [["region", "size"]])
    view = window.views[0]
    assert view.select_cell(int(np.flatnonzero(view.table.status == Status.SAFE)[-1]))
    view.buttons["protected"].click()
    target = sample / "work.aqs"
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), ""))
    )
    saved = run_dialog(
        qtbot, QMessageBox, lambda b: b.button(QMessageBox.StandardButton.Save).click()
    )
    window.close()
    assert saved and target.exists()
    assert not window.isVisible() and not window.dirty


# ============================================================================ recode
def test_recode_of_size_changes_both_tables_and_the_history_shows_counts(qtbot, window, sample):
    _open_sample(qtbot, window, sample, [["region", "size"], ["activity", "size"]])
    n_size = len(window.tables[0].dims[1])
    before = [int(((t.status >= 3) & (t.status <= 9)).sum()) for t in window.tables]
    _recode_size(qtbot, window, sample)
    for t in window.tables:
        assert _size_codes(t) == ["Total", "1", "2", "3"]
        assert t.dims[1].label(1) == "small (0-9)"  # labels from the .grc's codelist
    # the history panel: unsafe cells after each step, drawn as a chart
    after = [int(((t.status >= 3) & (t.status <= 9)).sum()) for t in window.tables]
    steps = window.recode_steps[1]
    assert [(s.label, s.unsafe) for s in steps] == [
        ("as computed", before[0]),
        ("size: size3.grc", after[0]),
    ]
    assert window.history_dock.isVisible()
    panel = window.history_panel
    assert panel.steps.rowCount() == 2
    assert panel.steps.item(1, 1).text() == f"{after[0]:,}"
    assert panel.chart is not None and panel.chart.values == [float(before[0]), float(after[0])]
    window.tabs.setCurrentIndex(1)  # table 2's own history
    assert [s.unsafe for s in window.recode_steps[2]] == [before[1], after[1]]
    assert panel.steps.item(1, 1).text() == f"{after[1]:,}"

    # limited to one table: only that table changes
    def undo_one(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow(1)
        assert "tables 1, 2" in d.scope_all.text()
        d.scope_one.setChecked(True)
        assert d.undo()
        d.reject()

    driven = run_dialog(qtbot, RecodeDialog, undo_one, timeout=60)
    window.actions["recode"].trigger()
    driven.check()
    assert len(window.tables[1].dims[1]) == n_size  # table 2, the current one: undone
    assert _size_codes(window.tables[0]) == ["Total", "1", "2", "3"]  # table 1 keeps it
    assert [s.label for s in window.recode_steps[2]][-1] == "size: recode undone"
    assert len(window.recode_steps[1]) == 2


def test_recode_only_this_table(qtbot, window, sample):
    _open_sample(qtbot, window, sample, [["region", "size"], ["activity", "size"]])
    n_size = len(window.tables[1].dims[1])
    window.tabs.setCurrentIndex(0)
    _recode_size(qtbot, window, sample, only_this_table=True)
    assert _size_codes(window.tables[0]) == ["Total", "1", "2", "3"]
    assert len(window.tables[1].dims[1]) == n_size
    assert 2 not in window.recode_steps


def test_recode_dialog_writes_missing_codes_and_codelist(qtbot, window, sample):
    _open_sample(qtbot, window, sample, [["region", "size"]])
    labels = sample / "size3.cdl"

    def recode(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow(1)
        d.text.setPlainText("1: 1-2\n2: 3-4\n3: 5-6")
        d.missing.setText("9")
        d.codelist.setText(str(labels))
        text = d.grc_text()
        assert "<MISSING> 9" in text and f'<CODELIST> "{labels}"' in text
        assert d.apply()
        d.reject()

    _run_recode_dialog(qtbot, window, recode)
    size = window.tables[0].dims[1]
    assert [size.label(i) for i in range(1, 4)] == ["small (0-9)", "medium (10-49)", "large (50+)"]


# ============================================================================ methods
def test_method_comparison_after_two_methods(qtbot, window, sample):
    _open_sample(qtbot, window, sample, [["region", "size"]])
    _protect(qtbot, window, "HEUR")
    heur = window.last_result
    assert not window.methods_dock.isVisible()  # one method: nothing to compare yet
    window.session.undo_protection(1)
    window.views[0].refresh()
    _protect(qtbot, window, "MOD")
    mod = window.last_result
    runs = window.method_runs[1]
    assert list(runs) == ["HEUR", "MOD"]
    assert runs["HEUR"].changed == heur.n_secondary and runs["MOD"].changed == mod.n_secondary
    t = window.tables[0]
    total = float(t.cost[t.status != Status.EMPTY].sum())
    assert runs["MOD"].cost_share == pytest.approx(mod.cost / total)
    panel = window.methods_panel
    assert window.methods_dock.isVisible()
    assert panel.runs.rowCount() == 2
    assert panel.runs.item(1, 0).text() == "✔ MOD"  # MOD's pattern is on the table
    assert panel.runs.item(0, 1).text() == f"{heur.n_secondary:,}"
    assert panel.cells_chart.values == [float(heur.n_secondary), float(mod.n_secondary)]
    assert panel.share_chart.values == pytest.approx([100 * r.cost_share for r in runs.values()])

    panel.runs.selectRow(0)  # HEUR: protect again with it
    assert panel.use.isEnabled()
    panel.use.click()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=JOB_MS)
    assert not window.errors, window.errors
    assert window.last_result.method == "HEUR"
    assert int(is_secondary(window.tables[0].status).sum()) == heur.n_secondary
    assert panel.runs.item(0, 0).text() == "✔ HEUR"
