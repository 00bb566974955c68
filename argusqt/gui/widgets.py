"""Small widget factories shared by the dialogs, so every number field looks the same."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox


def number_spin(lo: float, hi: float, value: float, decimals: int = 0, suffix: str = ""):
    """A right-aligned spin box: QSpinBox for whole numbers, QDoubleSpinBox otherwise."""
    s = QSpinBox() if decimals == 0 else QDoubleSpinBox()
    if decimals:
        s.setDecimals(decimals)
    s.setRange(lo, hi)
    s.setValue(value)
    s.setSuffix(suffix)
    s.setAlignment(Qt.AlignmentFlag.AlignRight)
    return s
