"""The worker keeps the GUI responsive, relays progress, cancels within 2 s, reports errors."""

from __future__ import annotations

import time

import conftest_gui  # noqa: F401
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox, QWidget

from argusqt.errors import InputError
from argusqt.gui.jobs import JobRunner
from argusqt.gui.worker import Worker
from argusqt.progress import ProgressEvent, Stopwatch

pytestmark = pytest.mark.gui


def core_like_job(progress, cancel, seconds: float = 30.0):
    """Sleeps in small steps like a solver; returns its best 'safe result' when cancelled."""
    sw = Stopwatch()
    best = None
    while sw.elapsed < seconds:
        best = round(sw.elapsed, 2)
        progress(
            ProgressEvent("solving", bound=1.0, incumbent=10.0 - best, gap=0.5, elapsed=sw.elapsed)
        )
        if cancel is not None and cancel.wait(0.02):
            return {"cancelled": True, "best": best}
    return {"cancelled": False, "best": best}


def test_event_loop_keeps_running_and_cancel_returns_fast(qtbot):
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(20)
    events = []
    w = Worker(core_like_job)
    w.progressed.connect(events.append)
    # the wait's timeout is the functional deadline: the job alone would run 30 s, a cancel
    # answers in 0.02 s quiet; 20 s is generous for a loaded 2-core machine (no stopwatch)
    with qtbot.waitSignal(w.succeeded, timeout=20_000) as blocker:
        w.start()
        qtbot.wait(600)
        n_before = len(ticks)
        assert n_before >= 3, "GUI timer must keep ticking while the job runs"
        w.cancel()
    assert blocker.args[0]["cancelled"] is True
    assert events and isinstance(events[0], ProgressEvent)
    assert len(events) < 100  # rate-limited
    w.wait()
    timer.stop()


def test_job_error_is_shown_as_message(qtbot, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    parent = QWidget()
    qtbot.addWidget(parent)
    runner = JobRunner(parent)

    def bad(progress, cancel):
        raise InputError("expected a number in column 3, got 'abc'", file="x.asc", line=12)

    runner.start("Read", bad)
    qtbot.waitUntil(lambda: not runner.busy, timeout=60_000)
    assert shown == ["x.asc, line 12: expected a number in column 3, got 'abc'"]


def test_unexpected_error_has_details(qtbot, monkeypatch):
    boxes = []
    monkeypatch.setattr(QMessageBox, "exec", lambda self: boxes.append(self) or 0)
    parent = QWidget()
    qtbot.addWidget(parent)
    runner = JobRunner(parent)

    def bug(progress, cancel):
        return 1 / 0

    runner.start("Compute", bug)
    qtbot.waitUntil(lambda: not runner.busy, timeout=60_000)
    assert len(boxes) == 1
    assert "ZeroDivisionError" in boxes[0].text()
    assert "Traceback" in boxes[0].detailedText()


def test_progress_dialog_cancel_button_cancels_worker(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    runner = JobRunner(parent)
    results = []
    runner.start("Protect", core_like_job, on_success=results.append)
    qtbot.waitUntil(
        lambda: runner.dialog is not None and runner.dialog.bound.text() != "–", timeout=5000
    )
    assert runner.dialog.incumbent.text() != "–"
    runner.dialog.buttons.button(runner.dialog.buttons.StandardButton.Cancel).click()
    # functional deadline as the wait's timeout (the job alone runs 30 s; quiet answer ~0.2 s)
    qtbot.waitUntil(lambda: not runner.busy, timeout=20_000)
    assert results and results[0]["cancelled"]
