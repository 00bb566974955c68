"""While a core job runs on the worker thread, cyclic garbage collection happens only on the
GUI thread (a collection on the worker could free GUI-thread Qt objects: segfault)."""

from __future__ import annotations

import gc
import threading

import conftest_gui  # noqa: F401
import pytest
from PySide6.QtWidgets import QWidget

from argusqt.gui.gcpin import GuiThreadCollector
from argusqt.gui.jobs import JobRunner

pytestmark = pytest.mark.gui


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.payload = [0] * 10


def test_collections_during_a_job_run_on_the_gui_thread(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    runner = JobRunner(parent)
    gui_thread = threading.get_ident()
    seen: list[int] = []

    def on_gc(phase: str, _info: dict) -> None:
        if phase == "start":
            seen.append(threading.get_ident())

    def job(progress, cancel):
        worker = threading.get_ident()
        for _ in range(300_000):  # far past every generation threshold
            _Cycle()
        return worker

    done: list[int] = []
    gc.callbacks.append(on_gc)
    try:
        assert gc.isenabled()
        runner.start("cycles", job, done.append, show_dialog=False)
        assert not gc.isenabled()  # automatic collection is off while the worker runs
        qtbot.waitUntil(lambda: bool(done), timeout=120_000)
    finally:
        gc.callbacks.remove(on_gc)
    assert done[0] != gui_thread
    assert gc.isenabled()  # restored afterwards
    assert seen, "the GUI thread never collected while the job allocated cycles"
    assert set(seen) == {gui_thread}


def test_collector_counts_holds_and_keeps_a_disabled_gc_disabled(qapp):
    """A QTimer starts only on a thread with an event dispatcher: the application's (qapp),
    so this test passes alone as well as after a test that made one."""
    c = GuiThreadCollector()
    gc.disable()
    try:
        c.hold()
        c.hold()
        c.release()
        assert not gc.isenabled() and c.timer.isActive()
        c.release()
        assert not gc.isenabled() and not c.timer.isActive()  # it was off before
        c.release()  # one release too many is harmless
    finally:
        gc.enable()
    c.hold()
    assert not gc.isenabled()
    c.release()
    assert gc.isenabled()
