"""Issue 23, GUI items, driven through the real window as a user drives it: τ-Argus's `pp.tab`
opens with its totals mode and gives the batch route's table; the window stays inside a
1600-px screen as docks open; the result box is modal; Set safe on a secondary says what to
do; one "Warning:" and singular words; the Specify form shows the last table again; the
solver panel's figures after MOD; six explanatory variables per table."""

from __future__ import annotations

import shutil
from pathlib import Path

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import run_dialog
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.runner import run_batch
from argusqt.gui.opendialog import OpenDataDialog
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.specify import SpecifyTablesDialog
from argusqt.model.status import Status
from argusqt.rules.parse import parse_safety_rule

pytestmark = pytest.mark.gui

SCREEN = 1600  # the narrowest screen a user reported the window outgrowing
#: a table MOD protects in well under a second, so its replay (the window fixture) is exact
SMALL = '"size""region"'


def _tableinput(shared_data: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "tableinput"
    shutil.copytree(shared_data / "tableinput", folder)
    return folder


def _open_sample(qtbot, window, sample: Path, *dims: str, rules: str = "P(15,1)|FREQ(3,20)"):
    specs = []
    for d in dims:
        spec = parse_specify_table(f'{d}|"turnover"||')
        spec.rules = parse_safety_rule(rules)
        specs.append(spec)
    window.settings.setValue("options/specifyAfterOpen", False)
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: window.session is not None and not window.runner.busy, timeout=60_000)
    window.compute_tables(specs)
    qtbot.waitUntil(
        lambda: len(window.views) == len(dims) and not window.runner.busy, timeout=60_000
    )


def _protect(qtbot, window, method: str) -> None:
    run_dialog(qtbot, ProtectDialog, lambda d: (d.select(method), d.run_button.click()))
    window.actions["protect"].trigger()
    qtbot.waitUntil(
        lambda: window.result_box is not None and not window.runner.busy, timeout=120_000
    )
    assert not window.errors, window.errors


# ---------------------------------------------------------------- item 2: pp.tab
def test_pp_tab_opens_with_its_totals_mode_like_the_batch_route(
    qtbot, window, shared_data, tmp_path
):
    folder = _tableinput(shared_data, tmp_path)
    seen_modes = []

    def fill_open(d: OpenDataDialog) -> None:
        d.set_data(str(folder / "pp.tab"))
        d.meta_edit.setText(str(folder / "pp.rda"))
        assert d.totals.isVisible() and not d.keep_status.isEnabled()  # T only with mode 1
        d.set_read_mode(1, True)
        seen_modes.append(d.read_mode())
        d.buttons.accepted.emit()

    def fill_spec(d: SpecifyTablesDialog) -> None:  # TestTable.arb's "Size""Region"|…
        d.select_variables(["Size", "Region"])
        d.response.setCurrentText("Var2")
        d.shadow.setCurrentText("Var2_Shadow")
        d.cost_var.setCurrentText("Var2")
        d.compute.click()  # no rule: the statuses given in the file

    run_dialog(qtbot, OpenDataDialog, fill_open).check()
    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.actions["open_table"].trigger()
    qtbot.waitUntil(lambda: bool(window.views) or bool(window.errors), timeout=60_000)
    assert not window.errors, window.errors
    assert seen_modes == [(1, True)]
    by_gui = window.tables[0]
    batch = run_batch(folder / "TestTable.arb")
    assert batch.ok, batch.error
    by_batch = batch.session.tables[0]
    assert [list(d.codes) for d in by_gui.dims] == [list(d.codes) for d in by_batch.dims]
    np.testing.assert_array_equal(by_gui.status, by_batch.status)
    np.testing.assert_allclose(by_gui.value, by_batch.value)
    np.testing.assert_allclose(by_gui.freq, by_batch.freq)
    np.testing.assert_allclose(by_gui.cost, by_batch.cost)
    assert (by_gui.status == Status.UNSAFE_RULE).sum() + (by_gui.status == 9).sum() > 0
    assert window.session.read_mode == (1, True)


def test_recent_files_reopen_pp_tab_with_the_mode_chosen(qtbot, window, shared_data, tmp_path):
    folder = _tableinput(shared_data, tmp_path)
    window.settings.setValue("options/specifyAfterOpen", False)

    def fill_open(d: OpenDataDialog) -> None:
        d.set_data(str(folder / "pp.tab"))
        d.set_read_mode(1, True)
        d.buttons.accepted.emit()

    run_dialog(qtbot, OpenDataDialog, fill_open).check()
    window.actions["open_table"].trigger()
    qtbot.waitUntil(lambda: window.session is not None and not window.runner.busy, timeout=60_000)
    first = window.session
    assert first.read_mode == (1, True)
    window.recent_menu.actions()[0].trigger()  # File | Recent files | 1  table: pp.tab + pp.rda
    qtbot.waitUntil(lambda: window.session is not first and not window.runner.busy, timeout=60_000)
    assert window.session.read_mode == (1, True)
    seen = []  # File | Open table proposes the mode again for the same file
    run_dialog(qtbot, OpenDataDialog, lambda d: (d.set_data(str(folder / "pp.tab")),
                                                 seen.append(d.read_mode()), d.reject()))  # fmt: skip
    window.actions["open_table"].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=30_000)
    assert seen == [(1, True)]
    spec = parse_specify_table('"Size""Region"|"Var2"|"Var2_Shadow"|"Var2"')
    window.compute_tables([spec])
    qtbot.waitUntil(lambda: bool(window.views) or bool(window.errors), timeout=60_000)
    assert not window.errors, window.errors
    batch = run_batch(folder / "TestTable.arb")
    np.testing.assert_array_equal(window.tables[0].status, batch.session.tables[0].status)


@pytest.mark.no_replay("the open fails: there is no table to replay")
def test_pp_tab_with_totals_checked_says_where_to_choose_the_mode(
    qtbot, window, shared_data, tmp_path
):
    folder = _tableinput(shared_data, tmp_path)

    def fill_spec(d: SpecifyTablesDialog) -> None:
        d.select_variables(["Size", "Region"])
        d.response.setCurrentText("Var2")
        d.compute.click()

    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.open_table(str(folder / "pp.tab"), str(folder / "pp.rda"))  # totals checked (0)
    qtbot.waitUntil(lambda: bool(window.errors), timeout=60_000)
    assert "not additive" in window.errors[0] and "File | Open table" in window.errors[0]


# ---------------------------------------------------------------- item 5: the windows
def test_window_stays_inside_a_1600_px_screen_as_docks_open(qtbot, window, sample):
    window.resize(1213, 800)
    qtbot.waitUntil(lambda: window.width() == 1213)
    _open_sample(qtbot, window, sample, SMALL)
    _protect(qtbot, window, "MOD")
    window.result_box.close()
    for dock in (window.runner.dock, window.history_dock, window.methods_dock, window.log_dock):
        dock.show()
    window.methods_dock.raise_()
    window.runner.dock.raise_()
    QApplication.processEvents()
    assert window.minimumSizeHint().width() <= 1213  # nothing forces the window wider
    assert window.width() == 1213
    window.resize(SCREEN, 900)
    QApplication.processEvents()
    window.grab().save(str(sample / "main_1600.png"))  # for a look (the report's figures)
    # the solver panel's Cancel button and figures lie inside the window
    panel = window.runner.panel
    inside = window.rect()
    for w in (panel.buttons, panel.incumbent, panel.bound, panel.gap):
        top_left = w.mapTo(window, QPoint(0, 0))
        assert inside.contains(top_left) and inside.contains(
            top_left + QPoint(w.width() - 1, w.height() - 1)
        ), type(w).__name__
    # after MOD: the kept pattern's cost, and a bound that says why there is none
    assert panel.incumbent.text()[0].isdigit()
    assert panel.bound.text() == "none (MOD gives no bound)"
    # the legend and the controls wrap instead of widening the table view
    view = window.views[0]
    assert view.minimumSizeHint().width() < 700


def test_protection_finished_is_modal(qtbot, window, sample):
    _open_sample(qtbot, window, sample, SMALL)
    _protect(qtbot, window, "MOD")
    box = window.result_box
    assert box.isVisible() and box.windowModality() == Qt.WindowModality.WindowModal
    assert QApplication.activeModalWidget() is box
    # Qt blocks every input to the window (menus, toolbar, shortcuts) until OK is pressed:
    # a second protection cannot start while the first one's result is being read
    assert box.isModal() and box.parent() is window
    box.close()


def test_set_safe_on_a_secondary_says_undo_the_suppression(qtbot, window, sample):
    _open_sample(qtbot, window, sample, SMALL)
    _protect(qtbot, window, "MOD")
    window.result_box.close()
    view = window.views[0]
    secondary = np.flatnonzero(view.table.status == Status.SECONDARY)
    assert secondary.size
    assert view.select_cell(int(secondary[0]))
    view.buttons["safe"].click()
    assert len(window.errors) == 1
    text = window.errors.pop()
    assert "secondary suppression" in text and "Undo the table's suppression first" in text
    assert "statuses 1-10" not in text


@pytest.mark.no_replay("only the status bar and the audit's words are looked at")
def test_one_warning_word_and_singular_cells(qtbot, window, sample):
    from argusqt.protection.core.result import AuditResult

    _open_sample(qtbot, window, sample, '"activity""region"')
    window.session.add_log("warning: region.cdl: 2 labels for codes not in the data")
    window._sync_log()
    assert window.statusBar().currentMessage() == (
        "Warning: region.cdl: 2 labels for codes not in the data"
    )
    one = np.array([True, False])
    audit = AuditResult(
        np.zeros(2), np.ones(2), np.zeros(2), np.ones(2), one, np.ones(2, bool), np.zeros(2, bool)
    )
    assert audit.summary().startswith("Audit passed: 1 primary cell checked,")
    # the publication audit's words on a table with one primary cell, (x, r): 1 contributor
    import pandas as pd

    import argusqt

    cells = {
        ("x", "p"): 3,
        ("x", "q"): 3,
        ("x", "r"): 1,
        ("y", "p"): 3,
        ("y", "q"): 4,
        ("y", "r"): 2,
    }
    frame = pd.DataFrame(
        [(a, b, 5.0 + k) for (a, b), n in cells.items() for k in range(n)], columns=["a", "b", "v"]
    )
    done = argusqt.protect(frame, explanatory=["a", "b"], response="v", rules="FREQ(2,30)",
                           method="OPT", progress=False)  # fmt: skip
    assert done.n_primary == 1 and done.n_secondary >= 3
    text = done.audit().summary()
    assert "1 primary cell checked" in text and "1 primary cells" not in text


def test_specify_form_shows_the_last_table_again(qtbot, window, sample):
    _open_sample(qtbot, window, sample, '"activity""region"', rules="NK(3,75)|FREQ(4,25)")
    shown = {}

    def look(d: SpecifyTablesDialog) -> None:
        shown["response"] = d.response.currentText()
        shown["vars"] = [d.chosen.item(i).text() for i in range(d.chosen.count())]
        shown["spec"] = d.current_spec()
        d.reject()

    run_dialog(qtbot, SpecifyTablesDialog, look).check()
    window.specify_tables()
    assert shown["response"] == "turnover"
    assert shown["vars"] == ["activity", "region"]
    rules = shown["spec"].rules
    assert [(r.n, r.k) for r in rules.nk_individual] == [(3, 75)]
    assert rules.freq_individual is not None and rules.freq_individual.minfreq == 4
    assert rules.freq_individual.range == 25


# ---------------------------------------------------------------- item 6: six variables
def _six_variable_data(folder: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(7)
    n = 600
    lines = []
    for _ in range(n):
        codes = [str(x) for x in rng.integers(1, 3, 6)]
        lines.append(" ".join(codes) + f" {int(rng.integers(1, 500))}")
    data = folder / "six.txt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rda = folder / "six.rda"
    variables = "".join(f'v{i} 1\n    <RECODEABLE>\n    <TOTCODE> "Total"\n' for i in range(6))
    rda.write_text(
        f'    <SEPARATOR> " "\n{variables}x 1\n    <NUMERIC>\n    <DECIMALS> 0\n',
        encoding="utf-8",
    )
    return data, rda


def test_six_explanatory_variables_from_the_specify_form(qtbot, window, tmp_path):
    data, rda = _six_variable_data(tmp_path)

    def fill_spec(d: SpecifyTablesDialog) -> None:
        d.available.selectAll()
        d.add_var.click()
        assert d.chosen.count() == 6
        d.response.setCurrentText("x")
        d.individual.freq.set(True, [10, 30])
        d.compute.click()

    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.open_microdata(str(data), str(rda))
    qtbot.waitUntil(lambda: bool(window.views) or bool(window.errors), timeout=60_000)
    assert not window.errors, window.errors
    t = window.tables[0]
    assert len(t.dims) == 6 and t.n_cells == 3**6
    assert t.value[0] > 0 and (t.status == Status.UNSAFE_FREQ).any()
    view = window.views[0]
    assert len(view.layer_combos) == 4  # a selector per variable not on an axis
