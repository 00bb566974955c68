"""Help | Options: the few defaults a user may want to keep between sessions (QSettings)."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QSpinBox

#: key → (label, default); ints are minutes
DEFAULTS: dict[str, tuple[str, object]] = {
    "options/specifyAfterOpen": ("Open Specify | Tables after opening data", True),
    "options/showLabels": ("Show labels instead of codes in new tables", False),
    "options/optMinutes": ("Optimal suppression: maximum time (minutes)", 10),
    "options/modMinutes": ("Modular: maximum time per subtable (minutes)", 1),
    "options/rndMinutes": ("Controlled rounding: maximum time (minutes)", 20),
}


def option(settings: QSettings, key: str):
    """The stored value of an option, with its default and type."""
    default = DEFAULTS[key][1]
    value = settings.value(key, default)
    if isinstance(default, bool):
        return value in (True, "true", "1", 1)
    return int(value)


class OptionsDialog(QDialog):
    """Edit the options; OK stores them in the application's settings."""

    def __init__(self, settings: QSettings, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Options")
        self.settings = settings
        self.widgets: dict[str, QCheckBox | QSpinBox] = {}
        form = QFormLayout(self)
        for key, (label, default) in DEFAULTS.items():
            if isinstance(default, bool):
                w = QCheckBox(label)
                w.setChecked(option(settings, key))
                form.addRow(w)
            else:
                w = QSpinBox()
                w.setRange(1, 10_000)
                w.setValue(option(settings, key))
                form.addRow(label + ":", w)
            self.widgets[key] = w
        note = QLabel("Solvers: SCIP (pyscipopt) and HiGHS (highspy), both free, are always used.")
        note.setStyleSheet("color:#555;")
        form.addRow(note)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.buttons = buttons

    def accept(self) -> None:
        for key, w in self.widgets.items():
            value = w.isChecked() if isinstance(w, QCheckBox) else w.value()
            self.settings.setValue(key, value)
        self.settings.sync()
        super().accept()
