"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_paths import tauargus_dir


@pytest.fixture
def shared_data() -> Path:
    """The read-only τ-Argus data folder (skips when absent, fails when CI=true)."""
    return tauargus_dir()
