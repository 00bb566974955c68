"""The table view: model geometry, hierarchy folding, formatting, colours, cell panel, summary."""

from __future__ import annotations

import conftest_gui  # noqa: F401  (offscreen Qt before PySide6 is imported)
import numpy as np
import pytest
from conftest_gui import small_table
from PySide6.QtCore import Qt

from argusqt.gui import statuscolors
from argusqt.gui.summary import status_summary, unsafe_count
from argusqt.gui.tablemodel import CELL_ROLE, TableModel
from argusqt.gui.tableview import TableView

pytestmark = pytest.mark.gui


def test_model_geometry_and_cell_mapping(qtbot):
    t = small_table()
    m = TableModel(t)
    assert (m.rowCount(), m.columnCount()) == (7, 3)
    # every visible position maps to the row-major cell of its two nodes
    for r in range(7):
        for c in range(3):
            assert m.cell_at(r, c) == r * 3 + c
            assert m.index(r, c).data(CELL_ROLE) == r * 3 + c


def test_values_formatted_right_aligned_with_thousands_and_decimals(qtbot):
    t = small_table()
    m = TableModel(t)
    total = m.index(0, 0).data()
    assert total == f"{t.value[0]:,.1f}"
    assert "," in total or t.value[0] < 1000
    assert m.index(0, 0).data(Qt.ItemDataRole.TextAlignmentRole) & int(Qt.AlignmentFlag.AlignRight)
    # an empty cell (C × male: node 5, column 1) shows '-'
    t.status[5 * 3 + 1] = 14
    assert m.index(5, 1).data() == "-"


def test_status_colours(qtbot):
    t = small_table()
    m = TableModel(t)
    cell = int(np.flatnonzero(t.status == 5)[0])
    r, c = divmod(cell, 3)
    assert m.index(r, c).data(Qt.ItemDataRole.BackgroundRole) == statuscolors.background(5)
    safe = int(np.flatnonzero(t.status == 1)[0])
    r, c = divmod(safe, 3)
    assert m.index(r, c).data(Qt.ItemDataRole.BackgroundRole) is None


def test_collapse_and_expand_branches_and_levels(qtbot):
    t = small_table()
    m = TableModel(t)
    assert m.headerData(1, Qt.Orientation.Vertical).strip().startswith("▾")
    m.toggle(0, 1)  # collapse North
    assert m.rowCount() == 5
    assert [m.row_node(r) for r in range(5)] == [0, 1, 4, 5, 6]
    assert m.headerData(1, Qt.Orientation.Vertical).strip().startswith("▸")
    # cells still map correctly after folding: row 2 is node 4 (South)
    assert m.cell_at(2, 0) == 4 * 3
    m.toggle(0, 1)
    assert m.rowCount() == 7
    m.set_level(0, 1)
    assert [m.row_node(r) for r in range(m.rowCount())] == [0, 1, 4]
    m.set_level(0, 0)
    assert m.rowCount() == 1
    # indentation shows depth
    m.set_level(0, 2)
    assert m.headerData(2, Qt.Orientation.Vertical).startswith("        ")


def test_labels_toggle(qtbot):
    m = TableModel(small_table())
    assert "N" in m.headerData(1, Qt.Orientation.Vertical)
    m.set_show_labels(True)
    assert "North" in m.headerData(1, Qt.Orientation.Vertical)


def test_view_cell_panel_and_layers(qtbot):
    t = small_table()
    w = TableView(t, "T1")
    qtbot.addWidget(w)
    cell = int(np.flatnonzero(t.status == 5)[0])
    assert w.select_cell(cell)
    info = w.info.labels
    assert "Unsafe (frequency)" in info["status"].text()
    assert info["value"].text() == f"{t.value[cell]:,.1f}"
    assert info["pl"].text() == "3.0 / 3.0"
    np.testing.assert_array_equal(w.selected_cells(), [cell])
    # swap axes: gender as rows, no column variable → region becomes a layer selector
    w.row_combo.setCurrentIndex(1)
    w.col_combo.setCurrentIndex(0)
    assert w.model.columnCount() == 1 and w.model.rowCount() == 3
    assert 0 in w.layer_combos
    w.layer_combos[0].setCurrentIndex(2)  # region A
    assert w.model.cell_at(1, 0) == 2 * 3 + 1


def test_summary_counts_by_status(qtbot):
    t = small_table()
    rows = {r[0]: r for r in status_summary(t)}
    n5 = int((t.status == 5).sum())
    assert rows["Unsafe: frequency"][1] == n5 == unsafe_count(t)
    assert rows["All cells"][1] == t.n_cells
    assert rows["Unsafe: frequency"][3] == pytest.approx(float(t.value[t.status == 5].sum()))


def test_repainting_does_not_drain_none_refcount(qtbot):
    """PySide6 6.12.0 drops a reference to None per void call: the app must guard against it."""
    import sys

    from PySide6.QtCore import QObject

    from argusqt.gui import pysidefix
    from argusqt.gui.app import create_app

    app = create_app()
    if pysidefix.void_calls_drain_none():
        guard = app._argusqt_guard
        assert guard is not None
        probe = QObject()
        for _ in range(5000):
            probe.setObjectName("x")
        guard.top_up()
        assert sys.getrefcount(None) >= guard.target - 10
        return
    w = TableView(small_table(), "T")
    qtbot.addWidget(w)
    w.show()
    qtbot.wait(50)
    import gc

    gc.collect()  # objects of earlier tests freed during the loop would release None too
    gc.disable()
    try:
        before = sys.getrefcount(None)
        for _ in range(300):
            w.view.viewport().repaint()
        after = sys.getrefcount(None)
    finally:
        gc.enable()
    assert after > before - 200


def test_one_dimensional_table_and_big_table_speed(qtbot):
    import time

    from argusqt.model.codelist import CodeList
    from argusqt.model.table import Table, TableSpec

    one = CodeList.flat("Size", ["1", "2", "3"])
    v = np.array([6.0, 1.0, 2.0, 3.0])
    t1 = Table(TableSpec(["Size"], None), [one], v, v, v, v, np.zeros((4, 2)))
    w1 = TableView(t1, "1-D")
    qtbot.addWidget(w1)
    assert (w1.model.rowCount(), w1.model.columnCount()) == (4, 1)
    assert w1.model.headerData(0, Qt.Orientation.Horizontal) == "Frequency"
    assert w1.model.index(3, 0).data() == "3"

    # 300 × 200 = 60,000 cells: building and showing the view stays interactive
    rows = CodeList.flat("A", [f"{i:03d}" for i in range(299)])
    cols = CodeList.flat("B", [f"{i:03d}" for i in range(199)])
    n = len(rows) * len(cols)
    val = np.arange(n, dtype=float)
    big = Table(
        TableSpec(["A", "B"], "x"), [rows, cols], val, np.ones(n), val, val, np.zeros((n, 2))
    )
    t0 = time.perf_counter()
    w = TableView(big, "big")
    qtbot.addWidget(w)
    w.show()
    qtbot.wait(10)
    w.view.viewport().repaint()
    elapsed = time.perf_counter() - t0
    print(f"60,000-cell table view built and painted in {elapsed:.2f} s")
    assert w.model.index(299, 199).data() == f"{n - 1:,}"


def test_next_unsafe_and_safe_preview(qtbot):
    t = small_table()
    t.status[4 * 3 + 2] = 3  # South × female
    t.status[1 * 3 + 1] = 11  # North × male: a secondary
    w = TableView(t, "T")
    qtbot.addWidget(w)
    unsafe = sorted(int(c) for c in np.flatnonzero((t.status >= 3) & (t.status <= 9)))
    visited = []
    for _ in range(len(unsafe) + 1):
        assert w.goto_next_unsafe()
        cur = w.view.currentIndex()
        visited.append(w.model.cell_at(cur.row(), cur.column()))
    assert visited[:-1] == unsafe and visited[-1] == unsafe[0]  # wraps around
    # preview: suppressed cells (primary and secondary) as x, others unchanged
    w.preview_box.setChecked(True)
    assert w.model.index(1, 1).data() == "x"
    assert w.model.index(4, 2).data() == "x"
    assert w.model.index(0, 0).data() == f"{t.value[0]:,.1f}"
    w.model.toggle(0, 1)  # collapse North: its unsafe leaves are skipped
    assert all(w.model.row_node(r) not in (2, 3) for r, _ in w.model.primary_positions())


def test_copy_selection_and_keyboard_folding(qtbot):
    from PySide6.QtCore import QItemSelectionModel
    from PySide6.QtWidgets import QApplication

    t = small_table()
    w = TableView(t, "T")
    qtbot.addWidget(w)
    w.show()
    sel = w.view.selectionModel()
    for r, c in ((0, 0), (0, 1), (1, 0), (1, 1)):
        sel.select(w.model.index(r, c), QItemSelectionModel.SelectionFlag.Select)
    text = w.copy_selection()
    warning, *lines = text.splitlines()
    # an unprotected table: the copy says first that it is not for publication
    assert warning.startswith("NOT FOR PUBLICATION: the table has not passed the publication")
    assert lines[0].split("\t")[1:] == ["Total", "female"]  # flat codes in byte order
    # the published face: plain numbers (no grouping), codes without fold marks
    assert lines[1].split("\t") == ["Total", f"{t.value[0]:.1f}", f"{t.value[1]:.1f}"]
    assert lines[2].split("\t")[0] == "N"
    assert QApplication.clipboard().text() == text
    QApplication.clipboard().setText("")
    qtbot.keyClick(w.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == text
    # '-' on a cell of row N folds N, '+' unfolds it again
    w.view.setCurrentIndex(w.model.index(1, 0))
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_Minus)
    assert w.model.rowCount() == 5
    qtbot.keyClick(w.view, Qt.Key.Key_Plus)
    assert w.model.rowCount() == 7


def test_copy_gives_the_published_face_never_a_sensitive_value(qtbot):
    """Ctrl+C leaves the program like a file: suppressed cells copy as `x` (whatever the
    view shows), empty cells as `-`, formula-like codes neutralised."""
    from PySide6.QtCore import QItemSelectionModel

    t = small_table()
    t.dims[1].codes[1] = "=cmd"  # a code a spreadsheet would run
    primary = np.flatnonzero(t.status == 5)
    assert primary.size
    t.status[0] = 11  # a secondary: also x
    w = TableView(t, "T")
    qtbot.addWidget(w)
    w.show()
    assert not w.model.preview_safe  # the view shows true values of sensitive cells
    w.view.selectAll()
    text = w.copy_selection()
    assert text.startswith("NOT FOR PUBLICATION")  # primaries and no passing audit
    text = text.split("\n", 1)[1]
    assert text.splitlines()[0].split("\t")[1:] == ["Total", "'=cmd", "male"]
    shown = {f"{v:.1f}" for v in t.value[t.status == 5]} | {
        f"{v:,.1f}" for v in t.value[t.status == 5]
    }
    rows = [ln.split("\t")[1:] for ln in text.splitlines()[1:]]
    copied = [c for r in rows for c in r]
    assert copied.count("x") == primary.size + 1
    assert not shown & set(copied) - {f"{v:.1f}" for v in t.value[t.status == 1]}
    sel = w.view.selectionModel()
    sel.clearSelection()
    r, c = next((r, c) for r, c in w.model.primary_positions())
    sel.select(w.model.index(r, c), QItemSelectionModel.SelectionFlag.Select)
    assert w.copy_selection().splitlines()[2].split("\t")[1] == "x"
    # once the table passed the publication gate (here: its fingerprint recorded as
    # cleared), the copy is the plain published face
    from argusqt.export.gate import fingerprint

    t.cleared_print = fingerprint(t)
    plain = w.copy_selection().splitlines()
    assert not plain[0].startswith("NOT FOR") and plain[1].split("\t")[1] == "x"
