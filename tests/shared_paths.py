"""Where the τ-Argus compatibility data lives; skip (or fail under CI=true) when absent."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

TAUARGUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "tauargus"


def tauargus_dir() -> Path:
    """The read-only shared folder; never write into it (copy with `copy_case`)."""
    if not TAUARGUS.is_dir():
        msg = f"τ-Argus compatibility data not found at {TAUARGUS}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (required when CI=true)")
        pytest.skip(msg)
    return TAUARGUS


def copy_case(name: str, dest: Path) -> Path:
    """Copy one case folder (e.g. "enterprise") into `dest` and return the copy."""
    src = tauargus_dir() / name
    out = dest / name
    shutil.copytree(src, out)
    return out
