"""Reader warnings reach the GUI: highlighted in the log pane and counted in the status bar."""

from __future__ import annotations

import conftest_gui  # noqa: F401
import pytest

pytestmark = pytest.mark.gui


def test_reader_warnings_reach_status_bar_and_log(qtbot, window, sample):
    data = sample / "enterprise.asc"
    lines = data.read_bytes().split(b"\n")
    lines[6] = lines[6][:28]  # cut inside turnover (columns 23-34): τ-Argus pads, we warn
    data.write_bytes(b"\n".join(lines))
    window.settings.setValue("options/specifyAfterOpen", False)
    window.open_microdata(str(data), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: window.session is not None, timeout=60_000)
    assert window.warning_button.isVisible()
    assert window.warning_button.text() == "⚠ 1 warning"
    assert "first: line 7, 28 characters" in window.warning_button.toolTip()
    assert "turnover (1 cut)" in window.log.toPlainText()
    assert "warning(s): see the Log pane" in window.statusBar().currentMessage()
    assert window.log_dock.isVisible()
    window.grab().save(str(sample / "warnings.png"))
    # data opened again without damage: the new session has no warnings
    first = window.session
    data.write_bytes(b"\n".join(lines[:6] + lines[7:]))
    window.open_microdata(str(data), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: window.session is not first, timeout=60_000)
    assert not window.warning_button.isVisible() and not window.errors
