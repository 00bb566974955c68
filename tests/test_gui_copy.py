"""Ctrl+C in the table view: an unprotected or changed table copies marked NOT FOR
PUBLICATION; after protection the copy follows the verdict already stored (no audit on the GUI
thread) and never holds a suppressed value; tables protected together copy marked while their
joint audit is stale; the cell panel lets no suppressed figure be selected for the clipboard."""

from __future__ import annotations

import conftest_gui  # noqa: F401  (offscreen Qt before PySide6 is imported)
import numpy as np
import pytest
from conftest_gui import small_table
from PySide6.QtCore import Qt
from session_helpers import ex2_session
from test_publication_holes import _linked_session

from argusqt.gui.tableview import NOT_FOR_PUBLICATION, TableView
from argusqt.model.status import is_suppressed

pytestmark = pytest.mark.gui


def _no_audit(monkeypatch) -> None:
    """Any audit during a copy fails the test: the copy must use the stored verdict."""
    import argusqt.export.gate as gate
    import argusqt.protection.audit.outsider as audit
    import argusqt.protection.audit.publication as publication

    def refuse(*_a, **_k):
        raise AssertionError("an audit ran while copying")

    monkeypatch.setattr(publication, "publication_audit", refuse)
    monkeypatch.setattr(audit, "audit", refuse)
    monkeypatch.setattr(gate, "clear_for_publication", refuse)


def _copy_all(qtbot, view: TableView) -> str:
    """Select every cell and press Ctrl+C, as a user does; the clipboard's text."""
    from PySide6.QtWidgets import QApplication

    QApplication.clipboard().setText("")
    view.view.setFocus()
    view.view.selectAll()
    qtbot.keyClick(view.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    return QApplication.clipboard().text()


def _copied_values(text: str) -> list[str]:
    lines = text.splitlines()
    if lines[0].startswith("NOT FOR"):
        lines = lines[1:]
    return [c for line in lines[1:] for c in line.split("\t")[1:]]


def _view(qtbot, session, no: int) -> TableView:
    v = TableView(session.table(no), f"T{no}")
    v.state_of = session.clipboard_state  # as the main window wires it
    qtbot.addWidget(v)
    v.show()
    return v


def _no_suppressed_value(table, copied: list[str]) -> None:
    """Every suppressed cell copies as x: the copy has exactly as many x as suppressed cells
    (all cells of a 2-d table are shown when all levels are unfolded)."""
    assert copied.count("x") == int(is_suppressed(table.status).sum())


def test_copy_before_and_after_protection(qtbot, ex2, monkeypatch):
    s = ex2_session(ex2)
    v = _view(qtbot, s, 1)
    t = s.table(1)
    text = _copy_all(qtbot, v)
    assert text.startswith(NOT_FOR_PUBLICATION)  # unprotected: copied, marked
    _no_suppressed_value(t, _copied_values(text))
    s.protect(1, "HEUR")  # the method's publication verdict passed: the table is cleared
    v.refresh()
    assert s.protection_state(1) == "cleared"
    _no_audit(monkeypatch)
    text = _copy_all(qtbot, v)
    assert not text.startswith("NOT FOR")  # protected and audited: the plain published face
    _no_suppressed_value(t, _copied_values(text))
    assert int(is_suppressed(t.status).sum()) > int((t.status == 5).sum())  # secondaries too
    # a status change after protection: an unaudited pattern is copied marked again
    safe = int(np.flatnonzero(t.status == 1)[-1])
    s.set_status(1, [safe], "unsafe")
    v.refresh()
    text = _copy_all(qtbot, v)
    assert text.startswith(NOT_FOR_PUBLICATION) and "changed after protection" in text
    _no_suppressed_value(t, _copied_values(text))


def test_linked_tables_copy_marked_while_their_joint_audit_is_stale(qtbot, ex2, monkeypatch):
    s = _linked_session(ex2)
    for no in (1, 2):  # the joint publication audit passes: both cleared
        s.write_table(no, 3, "", ex2 / f"t{no}.txt")
    v2 = _view(qtbot, s, 2)
    _no_audit(monkeypatch)
    assert not _copy_all(qtbot, v2).startswith("NOT FOR")
    # table 1 changes: table 2's own statuses did not, but the set is no longer audited
    t1 = s.table(1)
    s.set_status(1, [int(np.flatnonzero(t1.status == 1)[-1])], "unsafe")
    assert s.protection_state(2) == "cleared"  # its own fingerprint: what the copy used
    text = _copy_all(qtbot, v2)
    assert text.startswith(NOT_FOR_PUBLICATION) and "protected together" in text
    _no_suppressed_value(s.table(2), _copied_values(text))


def test_main_window_views_ask_the_session(window, ex2):
    """The main window wires its table views to Session.clipboard_state."""
    s = _linked_session(ex2)
    window.session = s
    v = window._make_view(s.table(2), "T2")
    assert v.state_of(s.table(2)) == s.clipboard_state(s.table(2))
    v.deleteLater()
    window.session = None


def test_cell_panel_lets_no_suppressed_figure_be_selected(qtbot):
    t = small_table()
    v = TableView(t, "T")
    qtbot.addWidget(v)
    panel = v.info
    selectable = Qt.TextInteractionFlag.TextSelectableByMouse
    primary = int(np.flatnonzero(t.status == 5)[0])
    safe = int(np.flatnonzero(t.status == 1)[0])
    panel.show_cell(t, primary, None, None)
    assert panel.labels["value"].text() != "–"  # shown to the statistician …
    for key in ("value", "top", "pl", "freq"):  # … but not selectable for the clipboard
        assert not panel.labels[key].textInteractionFlags() & selectable, key
    assert panel.labels["codes"].textInteractionFlags() & selectable
    panel.show_cell(t, safe, None, None)
    assert panel.labels["value"].textInteractionFlags() & selectable
    assert not panel.labels["top"].textInteractionFlags() & selectable  # respondents' own


def test_a_face_that_cannot_be_printed_copies_nothing_with_a_message(qtbot, monkeypatch):
    """Rounded values off the grid of their decimals (the table would not add up as
    printed): Ctrl+C copies nothing and says why, no traceback."""
    from PySide6.QtWidgets import QMessageBox

    from argusqt.model.table import ProtectionInfo

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda _p, _t, text: shown.append(text))
    t = small_table()
    t.published = t.value + 0.0123  # decimals=1: off the grid
    t.protection = ProtectionInfo("RND", "round")
    v = TableView(t, "T")
    qtbot.addWidget(v)
    v.show()
    assert _copy_all(qtbot, v) == ""  # _copy_all empties the clipboard first
    assert shown and "decimals" in shown[0]


@pytest.mark.no_replay("the session is built by the test; the copy is not a batch action")
def test_a_copy_fit_for_publication_is_counted_beside_later_tables(qtbot, window, ex2):
    """Ctrl+C on a cleared table in the real window: the copy is counted as published
    (D-90), the other table's publication line and its own copy then say their joint audit
    has not passed, and saving it is judged beside the copy."""
    from test_linked_mixed_forms import _two_tables

    from argusqt.gui import core

    s = _two_tables(ex2)
    s.protect(1, "RND", {"base": 49})
    window._set_session(s, ("test",))
    window._show_tables(core.tables_of(s))
    assert not window.views[1].protection.text().startswith("Publication: NOT")
    text = _copy_all(qtbot, window.views[0])
    assert not text.startswith("NOT FOR")
    assert [(p.number, p.where) for p in s.printed] == [(1, "a clipboard copy")]
    line = window.views[1].protection.text()
    assert "shares cells with tables already published (table 1)" in line, line
    text = _copy_all(qtbot, window.views[1])
    assert text.startswith(NOT_FOR_PUBLICATION)
    assert [p.number for p in s.printed] == [1]  # the marked copy is not counted
