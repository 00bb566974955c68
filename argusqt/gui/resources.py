"""Icons and the stylesheet from the repository's resources/ folder (absent → plain Qt)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon

RESOURCES = Path(__file__).resolve().parents[2] / "resources"


@cache
def icon(name: str) -> QIcon:
    p = RESOURCES / "icons" / f"{name}.svg"
    return QIcon(str(p)) if p.exists() else QIcon()


def stylesheet() -> str:
    p = RESOURCES / "style.qss"
    return p.read_text(encoding="utf-8") if p.exists() else ""
