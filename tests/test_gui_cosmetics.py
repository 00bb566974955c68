"""What a statistician reads in the windows: figures printed whole and readably (issue 13).

Each test is one of the cosmetic defects users reported: cut numbers and labels, clipped
method descriptions, -0.00, costs as 5.32128e+06, "secondary suppressions" after rounding or
CTA, ".00" on rounded values, fold marks in copied codes, Save defaulting to code-value in
the data folder, a stale welcome text, unreadable solver-panel axes.
"""

from __future__ import annotations

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import FakeSession, small_table
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QFont, QFontMetrics

from argusqt.gui.formatting import axis_number, format_cost, format_number
from argusqt.model.table import ProtectionInfo
from argusqt.progress import ProgressEvent
from argusqt.protection.core.result import AuditResult, ProtectionResult

pytestmark = pytest.mark.gui


def _bold_width(widget, text: str) -> int:
    f = QFont(widget.font())
    f.setBold(True)
    return QFontMetrics(f).horizontalAdvance(text)


def _big_table():
    """small_table with eight-digit values and a long region label (bold when suppressed)."""
    t = small_table()
    t.value = t.value * 20_000 + 0.37
    t.dims[0].labels["A"] = "Groningen-Noord en Zuidoost"
    return t


# ---------------------------------------------------------------- numbers
def test_numbers_print_grouped_without_negative_zero_or_exponent():
    assert format_number(-1e-12, 2) == "0.00"
    assert format_number(-0.004, 2) == "0.00"
    assert format_number(-0.006, 2) == "-0.01"
    assert format_number(395, 2) == "395.00"
    assert format_cost(5_321_280.0) == "5,321,280"
    assert format_cost(1234.5) == "1,234.50"
    assert "e+" not in format_cost(6.62739e13)
    assert axis_number(30_000_000.0, 10_000_000.0) == "30,000,000"
    assert axis_number(0.25, 0.05) == "0.25"


def test_cell_information_prints_audit_interval_without_negative_zero(qtbot):
    from argusqt.gui.cellinfo import CellInfoPanel

    t = small_table()
    n = t.n_cells
    cell = int(np.flatnonzero(t.status == 5)[0])
    lower = np.full(n, np.nan)
    upper = np.full(n, np.nan)
    lower[cell], upper[cell] = -3e-13, 395.0
    audited = np.zeros(n, bool)
    audited[cell] = True
    audit = AuditResult(lower, upper, lower, upper, audited, np.ones(n, bool), np.zeros(n, bool))
    panel = CellInfoPanel()
    qtbot.addWidget(panel)
    panel.show_cell(t, cell, audit)
    assert panel.labels["audit"].text().startswith("[0.0, 395.0]")  # the table's 1 decimal
    assert "-0" not in panel.labels["audit"].text()
    assert "e+" not in panel.labels["cost"].text()


# ---------------------------------------------------------------- table view
def test_bold_numbers_and_labels_are_never_cut(qtbot):
    from argusqt.gui.tableview import TableView

    t = _big_table()
    view = TableView(t, "t")
    qtbot.addWidget(view)
    view.labels_box.setChecked(True)
    view.resize(1200, 700)
    view.show()
    m = view.model
    # a cell becomes a secondary (bold) after protection: its column is refitted
    widest = int(np.argmax(t.value * (t.status == 1)))
    t.status[widest] = 11
    view.refresh()
    head = view.view.horizontalHeader()
    for c in range(m.columnCount()):
        for r in range(m.rowCount()):
            text = m.data(m.index(r, c))
            assert head.sectionSize(c) >= _bold_width(view.view, text) + 8, (r, c, text)
        label = m.headerData(c, Qt.Orientation.Horizontal)
        assert head.sectionSize(c) >= _bold_width(head, label), label
    rows = view.view.verticalHeader()
    for r in range(m.rowCount()):
        label = m.headerData(r, Qt.Orientation.Vertical)
        assert rows.width() >= _bold_width(rows, label), label
    names = [m.headerData(r, Qt.Orientation.Vertical) for r in range(m.rowCount())]
    assert any("Groningen-Noord en Zuidoost" in x for x in names), names


def _grid(text: str) -> list[str]:
    """The copied block from its header row on (a banner such as NOT FOR PUBLICATION may
    come first)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("\t"))
    return lines[start:]


def test_copy_gives_clean_codes_without_fold_marks(qtbot):
    from argusqt.gui.tableview import TableView

    view = TableView(small_table(), "t")
    qtbot.addWidget(view)
    m = view.model
    assert m.headerData(0, Qt.Orientation.Vertical).lstrip().startswith("▾")
    view.view.selectAll()
    text = view.copy_selection()
    assert "▾" not in text and "▸" not in text
    first = [line.split("\t")[0] for line in _grid(text)[1:]]
    assert first == ["Total", "N", "A", "B", "S", "C", "D"]
    view.labels_box.setChecked(True)
    first = [line.split("\t")[0] for line in _grid(view.copy_selection())[1:]]
    assert first[1:4] == ["North", "Amsterdam", "Breda"]
    # the key a user presses, through the view's own key handling, to the clipboard
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication

    QApplication.clipboard().clear()
    ctrl_c = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    QApplication.sendEvent(view.view, ctrl_c)
    # Qt keeps the modifiers of the last key event as "held" (selection commands read them):
    # a plain key event lets Ctrl go for the tests that follow
    plain = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_A, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.legend, plain)
    assert QApplication.keyboardModifiers() == Qt.KeyboardModifier.NoModifier
    pasted = QApplication.clipboard().text()
    assert _grid(pasted)[0].split("\t")[1:] == ["Total", "female", "male"]
    assert "▾" not in pasted and _grid(pasted)[2].startswith("North\t")


def test_rounded_values_print_as_whole_numbers(qtbot):
    from argusqt.gui.tableview import TableView

    t = small_table()
    t.published = np.round(t.value / 5) * 5
    t.protection = ProtectionInfo("RND", "round")
    view = TableView(t, "t")
    qtbot.addWidget(view)
    view.refresh()
    m = view.model
    texts = [m.data(m.index(r, c)) for r in range(m.rowCount()) for c in range(m.columnCount())]
    assert all("." not in x for x in texts), texts
    t.protection = ProtectionInfo("CTA", "cta")  # adjusted values keep the table's decimals
    view.refresh()
    assert any("." in m.data(m.index(r, 0)) for r in range(m.rowCount()))


# ---------------------------------------------------------------- results
def test_rounding_and_cta_results_speak_of_changed_cells_not_secondaries():
    original = np.array([10.0, 20.0, 30.0, 60.0])
    status = np.array([1, 11, 3, 1], dtype=np.int8)
    rnd = ProtectionResult("RND", status, cost=7.0, published=np.array([10.0, 25, 25, 60]))
    lines = rnd.outcome_lines("round", original)
    assert lines[0] == "Rounded cells (value changed): 2"
    assert not any("econdar" in line for line in lines)
    cta = ProtectionResult("CTA", status, cost=5_321_280.0, published=np.array([10, 21, 31, 62.0]))
    lines = cta.outcome_lines("cta", original)
    assert lines[0] == "Adjusted cells: 3" and "Weighted deviation: 5,321,280" in lines
    assert not any("econdar" in line or "e+" in line for line in lines)
    opt = ProtectionResult("OPT", status, cost=5_321_280.0, lower_bound=5e6, gap=0.06)
    lines = opt.outcome_lines("suppress", original)
    assert lines == [
        "Secondary suppressions: 1",
        "Cost of secondaries: 5,321,280",
        "Lower bound: 5,000,000",
        "Gap: 6.00 %",
    ]


# ---------------------------------------------------------------- dialogs
def test_protect_dialog_shows_every_method_description_whole(qtbot):
    from argusqt.gui.protectdialog import ProtectDialog
    from argusqt.session import Session

    s = Session()
    s.tables = [small_table()]
    dlg = ProtectDialog("t", s.protection_methods(), s.table_facts(1))
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    for hint in dlg.hints:
        assert hint.wordWrap()
        assert hint.height() >= hint.heightForWidth(hint.width()), hint.text()
        inside = hint.mapTo(dlg.methods_scroll.viewport(), hint.rect().topRight())
        assert inside.x() <= dlg.methods_scroll.viewport().width(), hint.text()


def test_save_dialog_defaults_to_excel_in_the_last_output_folder(qtbot, tmp_path):
    from argusqt.gui.savedialog import EXCEL, SaveTableDialog

    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    out.mkdir()
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    first = SaveTableDialog(str(data), "table1", None, settings)
    qtbot.addWidget(first)
    assert first.file_type() == EXCEL
    assert first.path().endswith(".xlsx")
    first.path_edit.setText(str(out / "mine.xlsx"))
    first._accept()
    second = SaveTableDialog(str(data), "table2", None, settings)
    qtbot.addWidget(second)
    assert second.file_type() == EXCEL
    assert second.path() == str(out / "table2.xlsx")  # where the user saved last, not the data


def test_welcome_text_moves_on_once_data_are_open(qtbot, tmp_path):
    from argusqt.gui.mainwindow import MainWindow

    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    assert "Open microdata" in w.welcome.text()
    w._set_session(FakeSession(), ("microdata", str(tmp_path / "x.asc"), str(tmp_path / "x.rda")))
    assert w.welcome.isVisibleTo(w)
    assert "x.asc is open" in w.welcome.text() and "Specify | Tables" in w.welcome.text()
    assert "Open microdata" not in w.welcome.text()


# ---------------------------------------------------------------- solver panel
def test_solver_panel_axes_read_as_grouped_numbers_and_a_building_pattern_is_not_best(qtbot):
    from argusqt.gui.solverpanel import BEST_CAPTION, BUILDING_CAPTION, SolverPanel

    panel = SolverPanel()
    qtbot.addWidget(panel)
    panel.start("Protect table 1 (OPT)")
    panel.update_event(ProgressEvent("Heuristic: primary 1 of 9", incumbent=5.9e7, fraction=0.1))
    assert panel.incumbent_caption.text() == BUILDING_CAPTION
    assert panel.chart is None or panel.chart.points() == 0  # a partial cost is not plotted
    panel.update_event(ProgressEvent("Heuristic finished", incumbent=6.8e7, fraction=1.0))
    panel.update_event(
        ProgressEvent("Optimal suppression: branch-and-cut", incumbent=6.8e7, bound=2.98e6, gap=0.9)
    )
    assert panel.incumbent_caption.text() == BEST_CAPTION
    assert panel.incumbent.text() == "68,000,000" and panel.bound.text() == "2,980,000"
    left = panel.chart.plot.getAxis("left")
    assert left.tickStrings([2.9836e6, 3e7], 1.0, 1e6) == ["2,983,600", "30,000,000"]
    assert left.labelUnitPrefix == ""  # no 'x1e+06' in the axis label
    panel.finish("finished")
    panel.show_result(
        ProtectionResult("OPT", np.array([11]), cost=7.67e7, lower_bound=3e7, gap=0.6)
    )
    assert panel.incumbent.text() == "76,700,000" and panel.gap.text() == "60.00 %"
    panel._clock.stop()
