"""Icons and the stylesheet from the repository's resources/ folder (absent → plain Qt)."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon


def _resources_folder() -> Path:
    """The repository's resources/ (source checkout) or the copy a wheel installs in share/."""
    for candidate in (
        Path(__file__).resolve().parents[2] / "resources",
        Path(sys.prefix) / "share" / "argusqt" / "resources",
    ):
        if (candidate / "style.qss").exists():
            return candidate
    return Path(__file__).resolve().parents[2] / "resources"


RESOURCES = _resources_folder()


@cache
def icon(name: str) -> QIcon:
    p = RESOURCES / "icons" / f"{name}.svg"
    return QIcon(str(p)) if p.exists() else QIcon()


def stylesheet() -> str:
    p = RESOURCES / "style.qss"
    return p.read_text(encoding="utf-8") if p.exists() else ""
