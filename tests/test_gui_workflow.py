"""End to end through the real windows and the real core: open → specify → protect → save.

Uses the synthetic sample data (sample_data/, copied to tmp_path) and drives the dialogs the
way a user does (menus, dialog widgets, buttons).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import conftest_gui  # noqa: F401
import numpy as np
import pytest
from confidential_helpers import body_lines
from conftest_gui import run_dialog
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from argusqt.gui.opendialog import OpenDataDialog
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.savedialog import SaveTableDialog
from argusqt.gui.specify import SpecifyTablesDialog

pytestmark = pytest.mark.gui

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def _open_and_specify(qtbot, window, sample):
    def fill_open(d: OpenDataDialog) -> None:
        d.set_data(str(sample / "enterprise.asc"))
        d.buttons.accepted.emit()

    def fill_spec(d: SpecifyTablesDialog) -> None:
        d.select_variables(["activity", "region"])
        d.response.setCurrentText("turnover")
        d.individual.p[0].check.setChecked(True)
        d.individual.p[0].params[0].setValue(15)
        d.individual.freq.check.setChecked(True)
        d.individual.freq.params[0].setValue(3)
        d.individual.freq.params[1].setValue(20)
        d.compute.click()

    seen = run_dialog(qtbot, OpenDataDialog, fill_open)
    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.actions["open_micro"].trigger()
    assert seen and seen[0].meta_edit.text().endswith("enterprise.rda")
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    return window.views[0]


def test_open_specify_shows_unsafe_cells(qtbot, window, sample):
    view = _open_and_specify(qtbot, window, sample)
    t = view.table
    unsafe = int(((t.status >= 3) & (t.status <= 9)).sum())
    assert unsafe > 0
    assert f"{unsafe:,} unsafe" in window.status_label.text()
    assert [d.name for d in t.dims] == ["activity", "region"]
    # the grid shows the total first; the legend counts the unsafe cells
    assert view.model.headerData(0, 2).strip().endswith("Total")
    assert f"({unsafe:,})" in view.legend.counts["Unsafe (rule)"].text()
    # log pane has the core's log
    assert "Table 1 computed" in window.log.toPlainText()


def test_bad_metadata_from_gui_names_file_and_line(qtbot, window, sample):
    shown = window.errors
    bad = sample / "bad.rda"
    bad.write_text("holding 1 six\n  <HOLDING>\n")
    window.open_microdata(str(sample / "enterprise.asc"), str(bad))
    qtbot.waitUntil(lambda: bool(shown), timeout=60_000)
    assert str(bad) in shown[0] and "line 1" in shown[0]
    assert window.session is None


@pytest.mark.slow
def test_protect_audit_and_save(qtbot, window, sample):
    view = _open_and_specify(qtbot, window, sample)
    run_dialog(qtbot, ProtectDialog, lambda d: (d.select("HEUR"), d.run_button.click()))
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    r = window.last_result
    assert r.audit is not None and r.audit.ok
    t = view.table
    assert int(((t.status == 11) | (t.status == 12)).sum()) == r.n_secondary > 0
    assert "Audit passed" in window.result_box.text()

    out = sample / "safe.txt"

    def fill_save(d: SaveTableDialog) -> None:
        d.select_type(3)
        d.checks["AS"].setChecked(True)
        d.checks["FL"].setChecked(True)
        d.path_edit.setText(str(out))
        d.buttons.accepted.emit()

    run_dialog(qtbot, SaveTableDialog, fill_save)
    window.actions["save_table"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    lines = body_lines(out)  # AS+: marked by its CONFIDENTIAL sidecar
    assert len(lines) == 1 + t.n_cells  # header (FL+) and one line per cell
    statuses = np.array([int(x.split(",")[-1]) for x in lines[1:]])
    np.testing.assert_array_equal(np.sort(statuses), np.sort(t.status.astype(int)))

    xlsx = sample / "safe.xlsx"

    def save_excel(d: SaveTableDialog) -> None:
        d.select_type(7)
        d.path_edit.setText(str(xlsx))
        d.buttons.accepted.emit()

    run_dialog(qtbot, SaveTableDialog, save_excel)
    window.actions["save_table"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    import openpyxl

    wb = openpyxl.load_workbook(xlsx, read_only=True)
    assert wb.sheetnames == ["table"]  # the published table only
    layout = wb.worksheets[0]  # the table as on screen, then a legend of the symbols
    rows = list(layout.iter_rows(values_only=True))
    legend = next(i for i, r in enumerate(rows) if r and r[0] == "Legend")
    assert any(r and r[0] == "x" and str(r[1]).startswith("not published") for r in rows[legend:])
    n_x = sum(1 for row in rows[:legend] for v in row if v == "x")
    assert n_x == int(
        ((t.status >= 3) & (t.status <= 12) & (t.status != 10)).sum()
    )  # suppressed shown as x


def _spec_size(d: SpecifyTablesDialog) -> None:
    d.select_variables(["activity", "size"])
    d.response.setCurrentText("turnover")
    d.individual.nk[0].check.setChecked(True)
    d.individual.freq.check.setChecked(True)
    d.compute.click()


def test_recode_dialog_groups_folds_and_undoes(qtbot, window, sample):
    from argusqt.gui.recodedialog import RecodeDialog

    run_dialog(qtbot, SpecifyTablesDialog, _spec_size, timeout=60)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    before = window.tables[0]
    n_size = len(before.dims[1])

    def recode(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow(1)  # size: flat → code-group editor
        assert d.pages.currentIndex() == 1
        d.load_grc(str(sample / "size3.grc"))
        assert d.apply()
        size = d.table.dims[1]
        assert [c.strip() for c in size.codes[:4]] == ["Total", "1", "2", "3"]
        assert "now" in d.counts.text()
        d.var_list.setCurrentRow(0)  # activity: hierarchical → tree with folds
        assert d.pages.currentIndex() == 0
        top = d.tree.topLevelItem(0)
        code = top.text(0)
        top.setCheckState(0, Qt.CheckState.Checked)
        assert d.folded_codes() == [code]
        assert d.apply()
        act = d.table.dims[0]
        assert act.is_leaf[act.index_of(code)[0]]
        assert d.tree.topLevelItem(0).checkState(0) == Qt.CheckState.Checked
        d.var_list.setCurrentRow(1)
        assert d.undo()
        assert len(d.table.dims[1]) == n_size
        d.reject()

    driven = run_dialog(qtbot, RecodeDialog, recode, timeout=60)
    window.actions["recode"].trigger()
    driven.check()
    assert not window.errors, window.errors
    t = window.tables[0]
    assert t is not before and len(t.dims[1]) == n_size  # size back to original, activity folded
    assert len(t.dims[0]) < len(before.dims[0])
    assert "recoded" in window.log.toPlainText()


def test_status_changes_report_and_batch_file(qtbot, window, sample, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QTextBrowser

    view = _open_and_specify(qtbot, window, sample)
    t = view.table
    safe = int(np.flatnonzero(t.status == 1)[-1])
    assert view.select_cell(safe)  # every branch is expanded after computing
    view.buttons["unsafe"].click()
    # argusqt/docs/rules.md §7.2: the rule's status, or 9 (unsafe by hand)
    assert int(t.status[safe]) in (3, 4, 5, 6, 9)
    assert t.lpl[safe] > 0
    assert "Unsafe" in view.info.labels["status"].text()
    view.buttons["safe"].click()
    assert int(t.status[safe]) in (1, 2)
    view.buttons["protected"].click()
    assert int(t.status[safe]) == 10
    assert "Protected (1)" in view.legend.counts["Protected"].text()

    window.view_report()
    html = window.html_dialog.findChild(QTextBrowser).toPlainText()
    assert "Table structure" in html and "activity" in html

    arb = sample / "again.arb"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(arb), ""))
    window.actions["write_batch"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    text = arb.read_text()
    assert "<OPENMICRODATA>" in text and "<SPECIFYTABLE>" in text and "P(15" in text


@pytest.mark.no_replay(
    "a run cancelled by the user keeps a partial pattern; its batch file runs OPT to the end"
)
def test_opt_keeps_gui_responsive_and_cancel_returns_safe_pattern(qtbot, window, sample):
    """Real OPT (SCIP) on the worker: the event loop keeps ticking; Cancel returns within 2 s."""
    import time

    from PySide6.QtCore import QTimer

    run_dialog(qtbot, SpecifyTablesDialog, _spec_size, timeout=60)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    run_dialog(qtbot, ProtectDialog, lambda d: (d.select("OPT"), d.run_button.click()))
    window.actions["protect"].trigger()
    timer.start(20)
    qtbot.wait(2000)
    assert window.runner.busy, "OPT finished too early to test responsiveness"
    gaps = np.diff(ticks)
    # generous bounds that hold on a loaded machine (quiet: ~100 ticks, longest gap ~30 ms)
    assert len(ticks) >= 5, f"only {len(ticks)} timer ticks in 2 s while OPT ran"
    assert gaps.max() < 1.5, f"the event loop stalled for {gaps.max():.2f} s"
    print(
        f"OPT running: {len(ticks)} ticks of 20 ms in 2 s, longest gap {gaps.max() * 1000:.0f} ms"
    )
    t0 = time.perf_counter()
    window.runner.dialog.request_cancel()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    cancel_time = time.perf_counter() - t0
    print(f"Cancel → best safe pattern in {cancel_time:.2f} s")
    assert cancel_time < 20.0  # generous functional deadline (quiet: 0.17 s)
    timer.stop()
    assert not window.errors, window.errors  # a cancel is no error
    r = window.last_result
    if r is not None:  # the best pattern was audited within the cancel's grace time
        assert r.cancelled and r.audit is not None and r.audit.ok and r.verdict.ok
    else:  # none could be: the table stays unprotected and the user is told so
        assert "unprotected" in window.result_box.text()


def test_open_table_protect_opt_matches_e8(qtbot, window, shared_data, tmp_path):
    """File | Open table with batch_ex1 (given statuses), OPT: the pattern of
    argusqt/docs/methods.md §2."""
    for f in (shared_data / "batch_ex1").iterdir():
        shutil.copy(f, tmp_path / f.name)

    def fill_open(d: OpenDataDialog) -> None:
        d.set_data(str(tmp_path / "tabdata_ex1.tab"))
        d.meta_edit.setText(str(tmp_path / "metadata_ex1.rda"))
        d.buttons.accepted.emit()

    def fill_spec(d: SpecifyTablesDialog) -> None:
        d.select_variables(["region", "gender"])
        d.response.setCurrentText("freq")
        d.compute.click()  # no rule: tabular input keeps the given status (MAN 20)

    run_dialog(qtbot, OpenDataDialog, fill_open)
    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.actions["open_table"].trigger()
    qtbot.waitUntil(lambda: bool(window.views) or bool(window.errors), timeout=60_000)
    assert not window.errors, window.errors
    t = window.tables[0]
    run_dialog(qtbot, ProtectDialog, lambda d: (d.select("OPT"), d.run_button.click()))
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    status = {tuple(c.strip() for c in t.cell_codes(i)): int(t.status[i]) for i in range(t.n_cells)}
    assert status[("A", "female")] == 9
    assert {k for k, s in status.items() if s in (11, 12)} == {
        ("A", "male"),
        ("C", "male"),
        ("C", "female"),
    }
    r = window.last_result
    assert r.cost == pytest.approx(1950) and r.audit.ok
    cell = next(
        i for i in range(t.n_cells) if tuple(c.strip() for c in t.cell_codes(i)) == ("A", "female")
    )
    view = window.views[0]
    assert view.select_cell(cell)
    assert view.info.labels["audit"].text() == "[0, 623]\npassed"  # E8 audit interval


@pytest.mark.parametrize("method", ["RND", "CTA", "IP"])
def test_rounding_adjustment_and_intervals_from_the_gui(
    qtbot, window, shared_data, tmp_path, method
):
    """RND/CTA publish new values (shown in the grid); IP publishes intervals (cell panel)."""
    for f in (shared_data / "batch_ex1").iterdir():
        shutil.copy(f, tmp_path / f.name)

    def fill_spec(d: SpecifyTablesDialog) -> None:
        d.select_variables(["region", "gender"])
        d.response.setCurrentText("freq")
        d.compute.click()

    def fill_protect(d: ProtectDialog) -> None:
        d.select(method)
        if method == "RND":
            d.set_value("RND", "base", 5)
        d.run_button.click()

    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.open_table(str(tmp_path / "tabdata_ex1.tab"), str(tmp_path / "metadata_ex1.rda"))
    qtbot.waitUntil(lambda: bool(window.views) or bool(window.errors), timeout=60_000)
    run_dialog(qtbot, ProtectDialog, fill_protect)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    view = window.views[0]
    t = view.table
    cell = next(
        i for i in range(t.n_cells) if tuple(c.strip() for c in t.cell_codes(i)) == ("A", "female")
    )
    assert view.select_cell(cell)
    if method == "IP":
        r = window.last_result
        lo, hi = r.interval_lower[cell], r.interval_upper[cell]
        assert lo <= 137 - 1 and hi >= 137 + 1  # the interval covers value ± protection level (1)
        assert view.info.labels["interval"].text() == f"[{lo:,.0f}, {hi:,.0f}]"
        return
    assert view.published_box.isChecked()
    shown = np.array(
        [
            float(view.model.index(r, c).data().replace(",", ""))
            for r in range(view.model.rowCount())
            for c in range(3)
        ]
    )
    np.testing.assert_allclose(shown, t.published)  # the grid shows the published values
    if method == "RND":
        assert np.all(t.published % 5 == 0)
    M = t.relations
    np.testing.assert_allclose(M @ t.published, 0, atol=1e-6)  # additivity kept


def test_generate_and_apply_apriori_round_trip(qtbot, window, sample, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QInputDialog

    view = _open_and_specify(qtbot, window, sample)
    t = view.table
    cell = int(np.flatnonzero(t.status == 1)[-1])
    assert view.select_cell(cell)
    view.buttons["protected"].click()
    assert int(t.status[cell]) == 10
    hst = sample / "statuses.hst"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(hst), ""))
    window.actions["gen_apriori"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    assert hst.exists() and hst.read_text().strip()
    view.buttons["safe"].click()
    assert int(t.status[cell]) in (1, 2)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(hst), ""))
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (",", True))
    window.actions["apriori"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    assert int(t.status[cell]) == 10  # the a-priori file protected the cell again
    assert "A-priori file statuses.hst applied" in window.log.toPlainText()


def test_linked_tables_protected_together(qtbot, window, shared_data, tmp_path):
    """Two tables of batch_ex2's microdata with a common margin, OPT on all tables at once."""
    for f in (shared_data / "batch_ex2").iterdir():
        shutil.copy(f, tmp_path / f.name)

    def spec(d: SpecifyTablesDialog) -> None:
        for names in (["region", "gender"], ["region"]):
            d.select_variables(names)
            d.response.setCurrentText("num1")
            d.individual.freq.set(True, [5, 20])
            d.individual.p[0].set(True, [20, 5])
            d.add_table.click()
        d.compute.click()

    def protect(d: ProtectDialog) -> None:
        assert not d.linked.isHidden()
        d.select("RND")
        assert not d.linked.isEnabled()  # only OPT and MOD protect linked tables
        d.select("OPT")
        d.linked.setChecked(True)
        d.run_button.click()

    run_dialog(qtbot, SpecifyTablesDialog, spec, timeout=60)
    window.open_microdata(str(tmp_path / "microdata_ex2.asc"), str(tmp_path / "metadata_ex2.rda"))
    qtbot.waitUntil(lambda: len(window.views) == 2 or bool(window.errors), timeout=60_000)
    assert not window.errors, window.errors
    driven = run_dialog(qtbot, ProtectDialog, protect)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    results = window.last_result
    assert len(results) == 2 and all(r.audit.ok for r in results)
    t1, t2 = window.tables
    # E9 pattern on the 2-D table; the common cells (region totals) agree in both tables
    status = {
        tuple(c.strip() for c in t1.cell_codes(i)): int(t1.status[i]) for i in range(t1.n_cells)
    }
    assert status[("A", "female")] == 3
    for i in range(t2.n_cells):
        (code,) = (c.strip() for c in t2.cell_codes(i))
        assert int(t2.status[i] in (11, 12)) == int(status[(code, "Total")] in (11, 12))
    assert "Table 1:" in window.result_box.text() and "Table 2:" in window.result_box.text()


def test_metadata_edit_save_and_reopen(qtbot, window, sample, monkeypatch):
    from argusqt.gui.metadataeditor import C, MetadataEditor

    _open_and_specify(qtbot, window, sample)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    new_rda = sample / "edited.rda"

    def edit(d: MetadataEditor) -> None:
        r = [d.grid.item(i, C["Name"]).text() for i in range(d.grid.rowCount())].index("turnover")
        d.grid.item(r, C["Decimals"]).setText("0")
        assert d.save_to(new_rda)

    seen = run_dialog(qtbot, MetadataEditor, edit)
    run_dialog(qtbot, SpecifyTablesDialog, lambda d: d.reject(), timeout=60)
    window.actions["spec_meta"].trigger()
    seen.check()
    qtbot.waitUntil(lambda: window.session.meta_path == new_rda, timeout=60_000)
    assert not window.errors, window.errors
    assert window.session.metadata.variable("turnover").decimals == 0


def test_user_guide_first_table_steps(qtbot, window, sample):
    """argusqt/docs/user_guide.md §2 through the real windows: the counts the guide quotes, and
    the Protect dialog's suggestion and reason as the guide quotes them."""
    import re

    from argusqt.docs import USER_GUIDE

    guide = " ".join(USER_GUIDE.read_text(encoding="utf-8").split())
    view = _open_and_specify(qtbot, window, sample)
    t = view.table
    unsafe = int(((t.status >= 3) & (t.status <= 9)).sum())
    assert f"has {t.n_cells} cells: {unsafe} are red" in guide
    assert f"({unsafe:,})" in view.legend.counts["Unsafe (rule)"].text()
    suggestion: list[str] = []

    def read_and_close(d: ProtectDialog) -> None:
        suggestion.append(d.advice.text())
        d.reject()

    run_dialog(qtbot, ProtectDialog, read_and_close)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: bool(suggestion), timeout=30_000)
    text = suggestion[0]
    assert text.startswith("Suggested for this table: Optimal")
    quoted = re.search(
        r'"(\d+ cells, \d+ unsafe: small enough for the optimal method[^"]*)"', guide
    )
    assert quoted and quoted[1] in text, text


def test_save_dialog_refuses_an_input_as_the_output(qtbot, window, sample):
    """Save table pointed at the open microdata: refused with a message, the data unchanged
    (issue 23 item 7, through the real window)."""
    import hashlib

    _open_and_specify(qtbot, window, sample)
    data = sample / "enterprise.asc"
    before = hashlib.sha256(data.read_bytes()).hexdigest()

    def fill_save(d: SaveTableDialog) -> None:
        d.select_type(3)
        d.checks["AS"].setChecked(True)
        d.path_edit.setText(str(data))
        d.buttons.accepted.emit()

    run_dialog(qtbot, SaveTableDialog, fill_save)
    window.actions["save_table"].trigger()
    qtbot.waitUntil(lambda: bool(window.errors), timeout=60_000)
    assert "is the microdata this session read" in window.errors[0]
    assert hashlib.sha256(data.read_bytes()).hexdigest() == before
    assert not (sample / "enterprise.asc.CONFIDENTIAL.txt").exists()
