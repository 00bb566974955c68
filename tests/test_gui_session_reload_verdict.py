"""File | Open session in the real window on a session saved NOT PUBLISHABLE (docs/design.md,
D-51): the tables' publication line, the status bar and the log say NOT PUBLISHABLE with the
gate's words after the reload, never "protected"; a publishable session reads "protected
(publication audit passed)"."""

from __future__ import annotations

import conftest_gui  # noqa: F401
import pytest
from test_issue27_linked_verdict import linked_session

from argusqt.export.gate import STATE_TEXT
from argusqt.sessionfile import save_session

pytestmark = pytest.mark.gui


def _open(qtbot, window, path) -> None:
    window.open_session(str(path))
    qtbot.waitUntil(lambda: len(window.views) == 2 or bool(window.errors), timeout=120_000)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors


@pytest.mark.usefixtures("older_insiders")
def test_window_reloads_a_not_publishable_linked_session_as_not_publishable(
    qtbot, window, tmp_path
):
    s = linked_session()  # B08, B09 protected by hand: the sum B05+B06+B07 stays unsafe
    s.protect_linked("MOD")
    assert [s.protection_state(n) for n in (1, 2)] == ["refused", "refused"]
    path = tmp_path / "refused.aqs"
    save_session(s, path)
    _open(qtbot, window, path)
    for no, view in enumerate(window.views, start=1):
        assert window.session.protection_state(no) == "refused"
        text = view.protection.text()
        assert text == f"Publication: {STATE_TEXT['refused']}", text
        assert "protected" not in text.lower().replace("not publishable", "")
    for no in (1, 2):
        window.tabs.setCurrentIndex(no - 1)
        window._update_status()
        assert "NOT PUBLISHABLE" in window.status_label.text()
    log = window.log.toPlainText()
    assert "Table 1: NOT PUBLISHABLE: AUDIT FAILED" in log
    assert "Table 2: NOT PUBLISHABLE: AUDIT FAILED" in log


def test_window_reloads_a_publishable_session_as_cleared(qtbot, window, tmp_path):
    s = linked_session(pinned=False)  # HEUR on each table: publishable
    assert [s.protection_state(n) for n in (1, 2)] == ["cleared", "cleared"]
    path = tmp_path / "cleared.aqs"
    save_session(s, path)
    _open(qtbot, window, path)
    for no, view in enumerate(window.views, start=1):
        assert window.session.protection_state(no) == "cleared"
        assert view.protection.text() == f"Publication: {STATE_TEXT['cleared']}"
    assert "NOT PUBLISHABLE" not in window.log.toPlainText()
