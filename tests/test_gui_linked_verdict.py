"""The real window after Protect on linked tables whose sum of suppressed cells stays unsafe
(issue 27, docs/design.md, D-50): the tables' publication line, the status bar and the
result box say NOT PUBLISHABLE with the gate's words, never "protected" or "audit passed"."""

from __future__ import annotations

import conftest_gui  # noqa: F401
import pytest
from conftest_gui import run_dialog
from test_issue27_linked_verdict import linked_session, own_unsafe_sums

from argusqt.batch.render import write_batch_file
from argusqt.gui.protectdialog import ProtectDialog


@pytest.mark.usefixtures("older_insiders")
@pytest.mark.parametrize("method", ["MOD", "GH"])
def test_window_shows_not_publishable_for_linked_tables_with_an_unsafe_sum(
    qtbot, window, tmp_path, method
):
    arb = tmp_path / "job.arb"
    write_batch_file(linked_session(), arb)  # the records, both tables, B08 and B09 pinned
    window.open_batch(str(arb))
    qtbot.waitUntil(lambda: len(window.views) == 2 or bool(window.errors), timeout=60_000)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors

    def protect(d: ProtectDialog) -> None:
        d.select(method)
        d.linked.setChecked(True)
        d.run_button.click()

    driven = run_dialog(qtbot, ProtectDialog, protect)
    window.actions["protect"].trigger()
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors
    s = window.session
    for no, view in enumerate(window.views, start=1):
        assert own_unsafe_sums(view.table) == [{"B05", "B06", "B07"}]  # the test's attacker
        assert s.protection_state(no) == "refused"
        assert view.protection.text().startswith("Publication: NOT PUBLISHABLE")
    assert "NOT PUBLISHABLE" in window.status_label.text()
    box = window.result_box.text()
    assert box.count("NOT PUBLISHABLE: AUDIT FAILED") == 2  # one line per table
    assert "Audit passed" not in box
    for r in window.last_result:  # the box quotes the verdict the gate gives
        assert r.verdict.summary() in box
