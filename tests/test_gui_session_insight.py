"""The recode history and the methods compared (the docks beside the tables) are saved in the
session file and shown again when it is reopened, in the real windows."""

from __future__ import annotations

import json

import conftest_gui  # noqa: F401  (offscreen Qt)
import pytest
from test_gui_never_lose_work import JOB_MS, _open_sample, _protect, _recode_size

from argusqt.gui.insight import insight_from_json, insight_to_json
from argusqt.model.status import is_secondary

pytestmark = pytest.mark.gui


def _rows(grid) -> list[list[str]]:
    return [
        [grid.item(r, c).text() for c in range(grid.columnCount())] for r in range(grid.rowCount())
    ]


def _docks(window) -> dict[int, tuple[list[list[str]], list[list[str]]]]:
    """What the two docks show for each table (its tab made current)."""
    out = {}
    for i in range(len(window.views)):
        window.tabs.setCurrentIndex(i)
        window._show_insight()
        history = _rows(window.history_panel.steps) if window.recode_steps.get(i + 1) else []
        methods = _rows(window.methods_panel.runs) if window.method_runs.get(i + 1) else []
        out[i + 1] = (history, methods)
    return out


def _wait(qtbot, window) -> None:
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=JOB_MS)
    assert not window.errors, window.errors


@pytest.mark.slow
def test_session_file_keeps_the_recode_history_and_methods_compared(
    qtbot, window, sample, tmp_path
):
    _open_sample(qtbot, window, sample, [["region", "size"], ["activity", "region"]])
    window.tabs.setCurrentIndex(0)
    _recode_size(qtbot, window, sample, only_this_table=True)  # table 1's history
    window.tabs.setCurrentIndex(1)
    _protect(qtbot, window, "HEUR")  # table 2: two methods compared
    window.session.undo_protection(2)
    window.views[1].refresh()
    _protect(qtbot, window, "MOD")
    before = _docks(window)
    assert len(before[1][0]) == 2 and before[1][0][1][0].startswith("1. size: size3.grc")
    assert [r[0] for r in before[2][1]] == ["HEUR", "✔ MOD"]
    window.tabs.setCurrentIndex(1)
    window.grab().save(str(tmp_path / "before.png"))

    path = tmp_path / "work.aqs"
    window.save_session(str(path))
    _wait(qtbot, window)
    saved = json.loads(path.read_text(encoding="utf-8"))["insight"]
    assert [s["label"] for s in saved["1"]["recode_history"]] == ["as computed", "size: size3.grc"]
    assert [m["method"] for m in saved["2"]["methods"]] == ["HEUR", "MOD"]

    window.open_session(str(path))  # saved just now: nothing to discard
    _wait(qtbot, window)
    assert window.source == ("session", str(path))
    assert _docks(window) == before  # the same rows in both docks, ✔ on MOD's pattern
    window.tabs.setCurrentIndex(1)
    window._show_insight(raise_methods=True)
    window.grab().save(str(tmp_path / "after.png"))

    # a method picked from the restored comparison runs again with its saved parameters
    panel = window.methods_panel
    panel.runs.selectRow(0)
    assert panel.use.isEnabled()
    heur = int(before[2][1][0][1].replace(",", ""))
    panel.use.click()
    _wait(qtbot, window)
    assert window.last_result.method == "HEUR"
    assert int(is_secondary(window.tables[1].status).sum()) == heur
    assert panel.runs.item(0, 0).text() == "✔ HEUR"


def test_damaged_insight_is_skipped_not_fatal():
    from argusqt.gui.insight import MethodRun, RecodeStep

    steps = {1: [RecodeStep("as computed", 5), RecodeStep("size: a.grc", 2)]}
    runs = {
        2: {"HEUR": MethodRun("HEUR", {"max_minutes": 1.0}, "suppress", 3, 9.5, 0.1, None, 1.0)}
    }
    data = insight_to_json(steps, runs)
    data["3"] = {"methods": [{"method": "MOD"}]}  # no figures
    data["9"] = {"recode_history": []}  # no such table
    back_steps, back_runs, skipped = insight_from_json(json.loads(json.dumps(data)), 3)
    assert back_steps == steps and back_runs == runs
    assert len(skipped) == 2 and all(s.startswith("warning:") for s in skipped)
    assert insight_from_json(["not", "a", "mapping"], 3)[:2] == ({}, {})
