"""Acceptance test of the GUI on the τ-Argus tutorial data (tau_testW), through the real windows.

A user's session, step by step: File | Open microdata → Specify | Tables (p%-rule tables on
Var2, a frequency table with the minimum-frequency rule) → Compute → the unsafe counts shown
→ Modify | Global recode (GK.GRC loaded in the dialog, Region folded and unfolded) → Modify |
Protect table (OPT with its time limit, controlled rounding) → Output | Save table as Excel,
the workbook read back cell by cell with openpyxl.

Everything is driven through menus/actions, dialog widgets and buttons; the only stand-ins
are the native file pickers (QFileDialog / QInputDialog), which return the file a user would
pick. The data are copied from the read-only shared folder to tmp_path.
"""

from __future__ import annotations

import re
import shutil
import stat
from pathlib import Path

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import openpyxl
import pytest
from conftest_gui import run_dialog
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QInputDialog,
    QPushButton,
)

from argusqt.gui.opendialog import OpenDataDialog
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.recodedialog import RecodeDialog
from argusqt.gui.savedialog import EXCEL, SaveTableDialog
from argusqt.gui.specify import FREQ_ITEM, SpecifyTablesDialog

pytestmark = pytest.mark.gui

SUPPRESSED = (3, 4, 5, 6, 7, 8, 9, 11, 12)  # shown as `x` in a published table
JOB_TIMEOUT_MS = 150_000  # OPT runs with a 1-minute limit; a loaded machine gets slack


# ============================================================================ fixtures
@pytest.fixture
def tauw(shared_data, tmp_path) -> Path:
    """A writable copy of tau_testW/ (data, metadata, GK.GRC, region2.hrc, …)."""
    src = shared_data / "tau_testW"
    if not src.is_dir():
        pytest.skip(f"{src} is missing")
    dst = tmp_path / "tau_testW"
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file():
            shutil.copy(f, dst / f.name)
            (dst / f.name).chmod(stat.S_IRUSR | stat.S_IWUSR)
    return dst


# ============================================================================ helpers
def _button(dialog, text: str) -> QPushButton:
    """The push button of a dialog with this text (buttons a user sees, not attributes)."""
    found = [b for b in dialog.findChildren(QPushButton) if b.text() == text]
    assert len(found) == 1, f"expected one button {text!r} in {dialog.windowTitle()!r}"
    return found[0]


def _pick_file(monkeypatch, path: Path) -> None:
    """The native file picker returns `path` (what the user would choose)."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))


def _choose_variables(d: SpecifyTablesDialog, names: list[str]) -> None:
    """Move variables from 'Available' to 'In the table' one by one with the Add → button."""
    while d.chosen.count():  # empty 'In the table' (single selection: one at a time)
        d.chosen.setCurrentRow(0)
        d.remove_var.click()
    for name in names:
        d.available.clearSelection()
        (item,) = [
            d.available.item(i)
            for i in range(d.available.count())
            if d.available.item(i).text() == name
        ]
        item.setSelected(True)
        d.add_var.click()
    assert [d.chosen.item(i).text() for i in range(d.chosen.count())] == names


def _wait_idle(qtbot, window, timeout: int = JOB_TIMEOUT_MS) -> None:
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=timeout)
    assert not window.errors, window.errors


def _open_and_specify(qtbot, window, monkeypatch, tauw: Path, fill_spec) -> None:
    """File | Open microdata (Browse… → tau_testW.asc, .rda proposed) → Specify | Tables."""

    def browse_first(d: OpenDataDialog) -> None:
        # two "Browse…" buttons: data first, metadata second (grid order)
        browse = [b for b in d.findChildren(QPushButton) if b.text() == "Browse…"]
        assert len(browse) == 2
        _pick_file(monkeypatch, tauw / "tau_testW.asc")
        browse[0].click()
        assert Path(d.data_edit.text()) == tauw / "tau_testW.asc"
        assert Path(d.meta_edit.text()) == tauw / "tau_testW.rda"  # proposed from the data
        d.buttons.button(QDialogButtonBox.StandardButton.Open).click()

    opened = run_dialog(qtbot, OpenDataDialog, browse_first)
    # Specify | Tables opens by itself after the data are read (option specifyAfterOpen)
    specified = run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.actions["open_micro"].trigger()
    opened.check()
    assert opened, "File | Open microdata showed no dialog"
    qtbot.waitUntil(lambda: bool(window.views or window.errors or specified.errors), timeout=60_000)
    specified.check()
    _wait_idle(qtbot, window)
    assert specified, "Specify | Tables did not open after the data were read"


def _spec_p15(d: SpecifyTablesDialog) -> None:
    """Size × Region | Var2 and Year × Size × Region | Var2, p%-rule p = 15, n = 1."""
    d.response.setCurrentText("Var2")
    d.individual.p[0].check.setChecked(True)
    d.individual.p[0].params[0].setValue(15)  # p
    d.individual.p[0].params[1].setValue(1)  # n
    for names in (["Size", "Region"], ["Year", "Size", "Region"]):
        _choose_variables(d, names)
        d.add_table.click()
    assert d.table_list.count() == 2
    assert all("P(15,1)" in d.table_list.item(i).text() for i in range(2))
    d.compute.click()


def _shown_unsafe(window) -> int:
    """The unsafe count of the current table as the status bar shows it."""
    m = re.search(r"([\d,]+) unsafe", window.status_label.text())
    assert m, window.status_label.text()
    return int(m.group(1).replace(",", ""))


def _legend_count(view, group: str) -> int:
    m = re.fullmatch(rf"{re.escape(group)} \(([\d,]+)\)", view.legend.counts[group].text())
    assert m, view.legend.counts[group].text()
    return int(m.group(1).replace(",", ""))


def _select_table(window, monkeypatch, no: int) -> None:
    """Modify | Select table: the user picks table `no` from the list."""
    names = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: (names[no - 1], True))
    window.actions["select_table"].trigger()
    assert window.current_table_no() == no


def _recode_size_with_gk(qtbot, window, monkeypatch, tauw: Path, extra=None) -> RecodeDialog:
    """Modify | Global recode: Size ← GK.GRC loaded with 'Load .grc…', Apply, (extra), Close."""

    def recode(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow([x.name for x in d.table.dims].index("Size"))
        assert d.pages.currentIndex() == 1  # Size is flat: the code-group page
        d.scope_one.setChecked(True)  # table 1 only: table 2 is protected as specified below
        _pick_file(monkeypatch, tauw / "GK.GRC")
        _button(d, "Load .grc…").click()
        assert d.text.toPlainText().strip() == "1:1-5"
        d.apply_button.click()
        if extra is not None:
            extra(d)
        d.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close).click()

    driven = run_dialog(qtbot, RecodeDialog, recode, timeout=60)
    window.actions["recode"].trigger()
    driven.check()
    assert driven, "Modify | Global recode showed no dialog"
    assert not window.errors, window.errors
    return driven[0]


def _protect(qtbot, window, method: str, fill=None) -> None:
    """Modify | Protect table with `method`; `fill(dialog)` sets its options."""

    def protect(d: ProtectDialog) -> None:
        d.radios[method].click()
        assert d.method() == method
        if fill is not None:
            fill(d)
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, protect)
    window.actions["protect"].trigger()
    driven.check()
    assert driven, "Modify | Protect table showed no dialog"
    _wait_idle(qtbot, window)


def _opt_one_minute(d: ProtectDialog) -> None:
    d.set_value("OPT", "max_minutes", 1)  # minutes: the 60 s limit
    assert d.value("OPT", "singleton_singleton")  # singleton protection on by default
    assert d.params().to_mapping() == {
        "max_minutes": 1,
        "singleton_singleton": True,
        "singleton_multiple": True,
        "min_freq_option": True,
    }


def _save_excel(qtbot, window, path: Path, confidential: bool = False) -> None:
    """Output | Save table: Excel workbook, file name typed, (CONFIDENTIAL box), Save."""

    def fill(d: SaveTableDialog) -> None:
        d.group.button(EXCEL).click()
        assert d.file_type() == EXCEL
        assert d.checks["CF"].isEnabled() and not d.checks["CF"].isChecked()
        d.checks["CF"].setChecked(confidential)
        d.path_edit.setText(str(path))
        d.buttons.button(QDialogButtonBox.StandardButton.Save).click()

    driven = run_dialog(qtbot, SaveTableDialog, fill)
    window.actions["save_table"].trigger()
    driven.check()
    assert driven, "Output | Save table showed no dialog"
    _wait_idle(qtbot, window, 60_000)
    assert path.exists(), f"{path} was not written"


def _grid(ws, row_var: str) -> dict[tuple[str, str], object]:
    """{(row code, column code): shown value} of a table sheet, located by its header row.

    The header row starts with the row variable's name and holds the column codes; data
    rows are those whose first column holds a code (the label row under the header has none)
    up to the legend below the table.
    """
    rows = list(ws.iter_rows(values_only=True))
    (h,) = [i for i, r in enumerate(rows) if r and r[0] == row_var]
    cols = {j: str(c) for j, c in enumerate(rows[h]) if j >= 2 and c is not None}
    out: dict[tuple[str, str], object] = {}
    for r in rows[h + 1 :]:
        if r and r[0] == "Legend":
            break
        if not r or r[0] is None:
            continue
        for j, code in cols.items():
            out[(str(r[0]).strip(), code.strip())] = r[j]
    return out


def _check_sheet_cells(t, sheet: dict, cells, fixed: dict[int, str] | None = None) -> int:
    """Safe cells show the table value, suppressed cells `x`, empty cells `-`; returns #checked."""
    fixed = fixed or {}
    n = 0
    for i in cells:
        codes = [c.strip() for c in t.cell_codes(int(i))]
        if any(codes[d] != code for d, code in fixed.items()):
            continue
        shown = sheet[(codes[0], codes[1])]
        st = int(t.status[i])
        if st == 14:
            assert shown == "-", (codes, st, shown)
        elif st in SUPPRESSED:
            assert shown == "x", (codes, st, shown)
        else:
            assert shown == pytest.approx(round(float(t.value[i]), t.decimals), abs=1e-9), (
                codes,
                st,
                shown,
            )
        n += 1
    return n


def _code_index(dim, code: str) -> int:
    return [c.strip() for c in dim.codes].index(code)


def _check_protected(window, table_no: int) -> None:
    """Audit passed (result, table, result box, log) and the secondaries are shown."""
    view = window.views[table_no - 1]
    t = view.table
    r = window.last_result
    assert r.method == "OPT"
    assert r.audit is not None and r.audit.ok, r.audit.summary()
    assert t.audit is not None and t.audit.ok  # the table keeps its audit (report, export)
    n_sec = int(np.isin(t.status, (11, 12)).sum())
    assert n_sec == r.n_secondary > 0
    assert "Audit passed" in window.result_box.text()
    assert f"Secondary suppressions: {n_sec:,}" in window.result_box.text()
    assert "Audit passed" in window.log.toPlainText()
    assert f"{n_sec:,} secondary" in window.status_label.text()
    assert _legend_count(view, "Secondary") == n_sec
    assert (t.status == 3).sum() > 0  # the primaries stay unsafe (and suppressed)


# ============================================================================ tests
@pytest.mark.slow
def test_p_rule_tables_recode_opt_and_excel(qtbot, window, tauw, monkeypatch, tmp_path):
    """tau_testW: p% tables → unsafe counts → GK recode (and a fold) → OPT → audit → Excel."""
    _open_and_specify(qtbot, window, monkeypatch, tauw, _spec_p15)
    assert len(window.views) == 2
    t1, t2 = window.tables
    assert [d.name for d in t1.dims] == ["Size", "Region"]
    assert [d.name for d in t2.dims] == ["Year", "Size", "Region"]
    assert t1.n_cells == 9 * 18 and t2.n_cells == 7 * 9 * 18

    # ---- the unsafe counts shown (status bar, legend, log) are the status-3 cells
    unsafe = []
    for no, t in enumerate(window.tables, 1):
        window.tabs.setCurrentIndex(no - 1)
        n3 = int((t.status == 3).sum())
        assert n3 > 0
        assert int(np.isin(t.status, (4, 5, 6, 7, 8, 9)).sum()) == 0  # only the p% rule here
        assert _shown_unsafe(window) == n3
        assert _legend_count(window.views[no - 1], "Unsafe (rule)") == n3
        log = window.log.toPlainText()
        assert re.search(rf"Table {no} rules: .*P\(15,1\)", log)  # the rules, once
        assert re.search(
            rf"Table {no} computed: (.*, )?{t.n_cells:,} cells, {n3:,} primary unsafe", log
        )
        unsafe.append(n3)
    window.tabs.setCurrentIndex(0)

    # ---- Modify | Global recode on table 1: Size with GK.GRC; Region folded to level 1, undone
    seen: dict[str, object] = {}

    def fold_region_and_undo(d: RecodeDialog) -> None:
        size = d.table.dims[0]
        seen["size"] = [c.strip() for c in size.codes]
        seen["after_gk"] = int((d.table.status == 3).sum())
        assert f"{unsafe[0]:,} before → {seen['after_gk']:,} now" in d.counts.text()
        d.var_list.setCurrentRow(1)  # Region: hierarchical → the tree page
        assert d.pages.currentIndex() == 0
        d.level.setValue(1)
        _button(d, "Apply level").click()
        region = d.table.dims[1]
        seen["region_folded"] = [c.strip() for c in region.codes]
        seen["after_fold"] = int((d.table.status == 3).sum())
        assert f"→ {seen['after_fold']:,} now" in d.counts.text()
        d.undo_button.click()  # back to region2.hrc's full tree, GK recode of Size stays
        seen["region_undone"] = len(d.table.dims[1])

    _recode_size_with_gk(qtbot, window, monkeypatch, tauw, fold_region_and_undo)
    # GK.GRC (1:1-5) merges the size classes 2, 4, 5 present in the data into class 1
    assert seen["size"] == ["Total", "1", "6", "7", "8", "9", "99"]
    assert seen["region_folded"] == ["Total", "Nr", "Os", "Ws", "Zd", "99"]
    assert seen["after_fold"] <= seen["after_gk"] < unsafe[0]
    assert seen["region_undone"] == 18
    t1 = window.tables[0]
    assert [c.strip() for c in t1.dims[0].codes] == seen["size"] and len(t1.dims[1]) == 18
    n3 = int((t1.status == 3).sum())
    assert n3 == seen["after_gk"] and 0 < n3 < unsafe[0]  # the unsafe count drops
    assert _shown_unsafe(window) == n3
    assert _legend_count(window.views[0], "Unsafe (rule)") == n3
    log = window.log.toPlainText()
    assert "variable Size recoded (GK.GRC)" in log and "variable Region recoded (level 1)" in log

    # ---- Modify | Protect table 1: optimal suppression, 60 s limit
    _protect(qtbot, window, "OPT", _opt_one_minute)
    _check_protected(window, 1)
    assert window.tables[0] is t1

    # ---- Output | Save table as Excel; the sheet read back cell by cell
    xlsx = tmp_path / "table1.xlsx"
    _save_excel(qtbot, window, xlsx)
    wb = openpyxl.load_workbook(xlsx)
    assert wb.sheetnames == ["table"]  # the published table only (no cell list, no report)
    assert not list(tmp_path.glob("*CONFIDENTIAL*"))  # not asked for
    sheet = _grid(wb["table"], "Size")
    assert len(sheet) == t1.n_cells
    # a few cells named explicitly: grand total, a primary, a secondary, an empty cell
    size, region = t1.dims
    total = 0
    assert sheet[("Total", "Total")] == pytest.approx(round(float(t1.value[total]), 2))
    picks = {
        "primary": np.flatnonzero(t1.status == 3)[0],
        "secondary": np.flatnonzero(np.isin(t1.status, (11, 12)))[0],
        "empty": np.flatnonzero(t1.status == 14)[0],
        "safe": np.flatnonzero(t1.status == 1)[-1],
    }
    want = {"primary": "x", "secondary": "x", "empty": "-"}
    for kind, i in picks.items():
        r, c = (x.strip() for x in t1.cell_codes(int(i)))
        assert int(i) == _code_index(size, r) * len(region) + _code_index(region, c)
        if kind in want:
            assert sheet[(r, c)] == want[kind], (kind, r, c)
        else:
            assert sheet[(r, c)] == pytest.approx(round(float(t1.value[i]), 2))
            assert isinstance(sheet[(r, c)], int | float)  # a number, not text
    # and every other cell of the sheet the same way
    assert _check_sheet_cells(t1, sheet, range(t1.n_cells)) == t1.n_cells
    n_x = sum(v == "x" for v in sheet.values())
    assert n_x == int(np.isin(t1.status, SUPPRESSED).sum()) == n3 + window.last_result.n_secondary
    # the method and audit are in the report of the CONFIDENTIAL workbook, asked for with
    # its checkbox in the Save dialog (the published one beside it stays the table only)
    _save_excel(qtbot, window, tmp_path / "again.xlsx", confidential=True)
    assert openpyxl.load_workbook(tmp_path / "again.xlsx").sheetnames == ["table"]
    conf = openpyxl.load_workbook(tmp_path / "again_CONFIDENTIAL.xlsx")
    assert conf["report"]["A1"].value == "CONFIDENTIAL — not for publication"
    report = {r[0]: r[1] for r in conf["report"].iter_rows(values_only=True) if r and r[0]}
    assert report["Method"] == "OPT" and str(report["Audit"]).startswith("Audit passed")

    # ---- table 2 (3-D, as specified, not recoded): Modify | Select table; first the fast
    # heuristic, Undo suppression, then OPT with the 60 s limit (it finishes well within it),
    # which must pass the audit and cost no more than the heuristic's pattern.
    _select_table(window, monkeypatch, 2)
    t2 = window.tables[1]
    assert _shown_unsafe(window) == unsafe[1] == int((t2.status == 3).sum())
    _protect(qtbot, window, "HEUR")
    heur = window.last_result
    assert heur.audit.ok and heur.n_secondary > 0
    window.views[1].buttons["undo"].click()  # "Undo suppression": secondaries removed
    assert not np.isin(t2.status, (11, 12)).any() and int((t2.status == 3).sum()) == unsafe[1]
    assert f"{unsafe[1]:,} unsafe, 0 secondary" in window.status_label.text()
    _protect(qtbot, window, "OPT", _opt_one_minute)
    assert not window.last_result.timed_out and not window.last_result.cancelled
    assert window.last_result.cost <= heur.cost * (1 + 1e-9)
    # table 1's workbooks are out: Size 1–5 there is the sum of this table's size classes
    # 1, 2, 4, 5, so OPT's own optimum would let a reader of both recompute Size=2 × Region=4;
    # the pattern is grown beside them (D-81) and no longer called optimal
    assert any("beside what was published before" in line for line in window.last_result.log)
    assert not window.last_result.optimal
    _check_protected(window, 2)

    xlsx2 = tmp_path / "table2.xlsx"
    _save_excel(qtbot, window, xlsx2)
    wb2 = openpyxl.load_workbook(xlsx2)
    # rows Year, columns Size, one sheet per Region code (the layer)
    region2 = t2.dims[2]
    assert wb2.sheetnames[: len(region2)] == [c.strip() for c in region2.codes]
    checked = 0
    secondary_layers = {t2.cell_codes(int(i))[2].strip() for i in np.flatnonzero(t2.status == 11)}
    for layer in ["Total", "Nr", *sorted(secondary_layers)[:3]]:
        sheet2 = _grid(wb2[layer], "Year")
        assert len(sheet2) == len(t2.dims[0]) * len(t2.dims[1])
        checked += _check_sheet_cells(t2, sheet2, range(t2.n_cells), fixed={2: layer})
    assert checked >= 2 * len(t2.dims[0]) * len(t2.dims[1])


@pytest.mark.slow
def test_frequency_table_rounding_base_5_and_excel(qtbot, window, tauw, monkeypatch, tmp_path):
    """Size × Region | frequency, FREQ(3, 30) → controlled rounding, base 5 → Excel."""

    def spec(d: SpecifyTablesDialog) -> None:
        d.response.setCurrentText(FREQ_ITEM)
        assert not d.individual.p[0].check.isEnabled()  # frequency tables: FREQ rule only
        d.individual.freq.check.setChecked(True)
        d.individual.freq.params[0].setValue(3)
        d.individual.freq.params[1].setValue(30)
        _choose_variables(d, ["Size", "Region"])
        d.compute.click()

    _open_and_specify(qtbot, window, monkeypatch, tauw, spec)
    view = window.views[0]
    t = view.table
    assert t.spec.response is None and t.spec.rules.freq_individual.minfreq == 3
    n5 = int((t.status == 5).sum())
    assert n5 > 0 and _shown_unsafe(window) == n5 == _legend_count(view, "Unsafe (rule)")
    np.testing.assert_array_equal(t.value, np.round(t.value))  # counts

    def base5(d: ProtectDialog) -> None:
        assert d.facts.min_rounding_base <= 5
        d.set_value("RND", "base", 5)
        assert d.params().base == 5

    _protect(qtbot, window, "RND", base5)
    r = window.last_result
    assert r.method == "RND" and not r.cancelled
    pub = t.published
    assert pub is not None and pub.shape == t.value.shape
    assert np.all(pub % 5 == 0)  # every published value a multiple of the base
    np.testing.assert_array_equal(t.relations @ pub, 0)  # every relation holds exactly
    assert np.all(np.abs(pub - t.value) < 5)  # zero-restricted: within one base of the truth
    assert np.any(pub != t.value)
    assert view.published_box.isEnabled() and view.published_box.isChecked()
    assert "Table 1: method RND" in window.result_box.text()

    xlsx = tmp_path / "rounded.xlsx"
    _save_excel(qtbot, window, xlsx, confidential=True)
    wb = openpyxl.load_workbook(xlsx)
    assert wb.sheetnames == ["table"]
    sheet = _grid(wb["table"], "Size")
    assert len(sheet) == t.n_cells
    numbers = []
    for i in range(t.n_cells):
        r_code, c_code = (c.strip() for c in t.cell_codes(i))
        shown = sheet[(r_code, c_code)]
        if int(t.status[i]) == 14:
            assert shown == "-"
            continue
        # rounding publishes every non-empty cell, the unsafe ones too (no `x`)
        assert shown == pub[i], (r_code, c_code, shown, pub[i], t.value[i])
        numbers.append(shown)
    assert len(numbers) == int((t.status != 14).sum())
    assert all(v % 5 == 0 for v in numbers)
    assert sheet[("Total", "Total")] == pub[0]
    conf = openpyxl.load_workbook(tmp_path / "rounded_CONFIDENTIAL.xlsx")
    cells = list(conf["cells"].iter_rows(values_only=True))
    assert cells[0][0] == "CONFIDENTIAL — not for publication"
    assert cells[1][4] == "Freq (published)"
