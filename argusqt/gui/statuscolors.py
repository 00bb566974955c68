"""Cell colours per τ-Argus status, shared by the table view, legend and screenshots."""

from __future__ import annotations

from PySide6.QtGui import QColor

from argusqt.model.status import STATUS_LABELS

#: (background, foreground) per status; light tints so numbers stay readable.
_SCHEME: dict[int, tuple[str | None, str]] = {
    1: (None, "#1a1a1a"),
    2: ("#dcefd6", "#1d4d12"),
    3: ("#f6c6c1", "#7a0d04"),
    4: ("#f6c6c1", "#7a0d04"),
    5: ("#f6c6c1", "#7a0d04"),
    6: ("#f6c6c1", "#7a0d04"),
    7: ("#f6c6c1", "#7a0d04"),
    8: ("#f6c6c1", "#7a0d04"),
    9: ("#efc0e2", "#5e0b4a"),
    10: ("#cfe0f3", "#0d3563"),
    11: ("#ffe39a", "#5c4100"),
    12: ("#ffe39a", "#5c4100"),
    13: ("#f2f2f2", "#555555"),
    14: ("#f2f2f2", "#8a8a8a"),
}

#: Legend groups shown under the table (statuses with the same colour share a line).
LEGEND: list[tuple[str, tuple[int, ...]]] = [
    ("Safe", (1,)),
    ("Safe (manual)", (2,)),
    ("Unsafe (rule)", (3, 4, 5, 6, 7, 8)),
    ("Unsafe (manual)", (9,)),
    ("Protected", (10,)),
    ("Secondary", (11, 12)),
    ("Empty", (13, 14)),
]


def background(status: int) -> QColor | None:
    bg = _SCHEME.get(int(status), (None, ""))[0]
    return QColor(bg) if bg else None


def foreground(status: int) -> QColor:
    return QColor(_SCHEME.get(int(status), (None, "#000000"))[1])


def label(status: int) -> str:
    return STATUS_LABELS.get(int(status), f"Status {status}")
