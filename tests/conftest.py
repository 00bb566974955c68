"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_paths import tauargus_dir


@pytest.fixture(autouse=True)
def _dialog_pollers_end_with_their_test():
    """A `run_dialog` poller lives as long as its test (and the window's teardown), never into
    the next test, where it would drive that test's dialogs with the old test's function."""
    yield
    import sys

    gui = sys.modules.get("conftest_gui")  # only GUI tests start pollers
    if gui is not None:
        gui.stop_dialog_pollers()


@pytest.fixture
def older_insiders(monkeypatch) -> None:
    """Respondents sharing a suppressed cell not attacked (docs/design.md, D-91): for tests of
    another feature whose case the floors' extra cells dissolve (the rule on combined cells:
    its dominated sum no longer arises). The floors have their own tests (test_insider_floors,
    test_floor_model, test_interval_floors, test_mod_subtable_floors)."""
    import argusqt.protection.core.problem as problem_module

    monkeypatch.setattr(problem_module, "floors_of", lambda table: None)


@pytest.fixture
def shared_data() -> Path:
    """The read-only τ-Argus data folder (skips when absent, fails when CI=true)."""
    return tauargus_dir()


SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


@pytest.fixture
def generous_cancel_grace(monkeypatch) -> float:
    """Every method's cancel budget (CANCEL_GRACE, 1.5 s of wall clock, timed in
    benchmarks/bench_cancel.py) raised to 600 s, for tests that check what a cancel keeps:
    on a loaded machine the repair and audit may not fit in 1.5 s and the run then ends with
    no pattern. Each method module imports the constant by name, so each is patched."""
    from protect_helpers import patch_cancel_grace

    seconds = 600.0
    patch_cancel_grace(monkeypatch, seconds)
    return seconds


@pytest.fixture
def ex2(shared_data, tmp_path) -> Path:
    """A writable copy of τ-Argus's batch example 2 (microdata, metadata, hierarchies)."""
    import shutil

    folder = tmp_path / "ex2"
    shutil.copytree(shared_data / "batch_ex2", folder)
    return folder


@pytest.fixture
def sample(tmp_path) -> Path:
    """A temporary copy of the bundled sample data (tests never write into the repo)."""
    import shutil

    for f in SAMPLE.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    return tmp_path


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item (the window fixture looks at the call)."""
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


#: files whose tests share a costly result within one process: with the README's
#: `-n 2 --dist loadgroup` (docs/design.md, D-69) each group runs in one worker, as in a serial
#: run; the mypy cache of tests/test_typing.py (a cold run ~50 s, the second one ~2 s on it) and
#: the linked enterprise runs kept for the session by tests/enterprise_linked.py.
XDIST_GROUPS = {
    "test_typing.py": "mypy_cache",
    "test_gh_net_compat.py": "enterprise_linked",
    "test_linked_enterprise.py": "enterprise_linked",
    "test_linked_enterprise_publishable.py": "enterprise_linked",
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the tests of XDIST_GROUPS's files with their group (before xdist reads the marks)."""
    for item in items:
        group = XDIST_GROUPS.get(item.path.name)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "no_replay(why): the GUI test ends in a state a batch file cannot repeat (say why)",
    )


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch, request):
    """The real main window with private settings; error boxes are collected, not shown.

    After a passing test, what the user did in the window is written as a batch file and
    run: it must give the same tables (codes, statuses, costs), unless the test is marked
    `no_replay` with the reason."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from argusqt.gui.mainwindow import MainWindow

    errors: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: errors.append(text))
    w = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    w.errors = errors
    # the test's work is not to be saved: closing the window at teardown must not ask
    qtbot.addWidget(w, before_close_func=_forget_unsaved_work)
    w.show()
    yield w
    call = getattr(request.node, "rep_call", None)
    if call is not None and call.passed and not request.node.get_closest_marker("no_replay"):
        assert_window_replays(qtbot, w, tmp_path / "replay")


def _forget_unsaved_work(window) -> None:
    window.dirty = False


def assert_window_replays(qtbot, window, folder: Path) -> None:
    """Write the window's session as a batch file (File | Write batch file's code), run it and
    compare every table."""
    import numpy as np

    from argusqt.batch.render import write_batch_file
    from argusqt.batch.runner import run_batch

    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    s = window.session
    if s is None or not s.tables:
        return
    folder.mkdir(parents=True, exist_ok=True)
    arb = folder / "replay.arb"
    write_batch_file(s, arb)
    out = run_batch(arb)
    assert out.ok, f"the written batch file does not run: {out.error}\n{arb.read_text()}"
    assert len(out.session.tables) == len(s.tables)
    for no, (a, b) in enumerate(zip(s.tables, out.session.tables, strict=True), 1):
        assert [list(d.codes) for d in a.dims] == [list(d.codes) for d in b.dims], no
        assert np.array_equal(a.status, b.status), f"table {no}: other statuses on replay"
        assert np.allclose(a.cost, b.cost), f"table {no}: other costs on replay"
