"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_paths import tauargus_dir


@pytest.fixture
def shared_data() -> Path:
    """The read-only τ-Argus data folder (skips when absent, fails when CI=true)."""
    return tauargus_dir()


SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


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


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The real main window with private settings; error boxes are collected, not shown."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from argusqt.gui.mainwindow import MainWindow

    errors: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: errors.append(text))
    w = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    w.errors = errors
    qtbot.addWidget(w)
    w.show()
    return w
