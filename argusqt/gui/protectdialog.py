"""Protect panel: one choice per registered method, its options built from its parameters.

Nothing here lists methods or parameters: the descriptors (protect/registry.py, given by the
Session) say which methods exist, what they are called, their parameters with labels,
ranges and defaults, and which of them protect linked tables together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from argusqt.errors import ArgusError
from argusqt.gui.widgets import number_spin

if TYPE_CHECKING:  # types only: the GUI reaches the core through the Session
    from argusqt.protection.core.params import FieldSpec, MethodParams, TableFacts
    from argusqt.protection.core.registry import MethodDescriptor

#: largest number a parameter's spin box offers
SPIN_MAX = 10**9
#: narrowest a method's description is laid out (its height is reserved for this width)
HINT_WIDTH = 320
#: the problem every Protect solves, said in the dialog
BASIS = (
    "Protect solves from the primaries and your manual statuses (safe, unsafe, protected, "
    "a-priori); the secondaries of a pattern now on the table are not used, and that pattern "
    "is replaced only by one that passes the audit."
)


class ProtectDialog(QDialog):
    """Returns `method()` and `params()` (the method's typed parameters) when accepted."""

    def __init__(
        self,
        table_title: str,
        methods: Sequence[MethodDescriptor],
        facts: TableFacts,
        parent: QWidget | None = None,
        n_tables: int = 1,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Protect — {table_title}")
        self.methods = list(methods)
        self.facts = facts
        self.group = QButtonGroup(self)
        self.pages = QStackedWidget()
        self.radios: dict[str, QRadioButton] = {}
        self.widgets: dict[tuple[str, str], QWidget] = {}
        methods_box = QGroupBox("Method")
        method_list = QWidget()
        ml = QVBoxLayout(method_list)
        self.hints: list[QLabel] = []
        for i, desc in enumerate(self.methods):
            r = QRadioButton(desc.label)
            r.setToolTip(desc.help)
            self.group.addButton(r, i)
            self.radios[desc.name] = r
            ml.addWidget(r)
            hint = QLabel(desc.help)
            hint.setStyleSheet("color:#555;")
            hint.setContentsMargins(22, 0, 0, 4)
            hint.setWordWrap(True)
            hint.setMinimumWidth(HINT_WIDTH)
            self.hints.append(hint)
            ml.addWidget(hint)
            self.pages.addWidget(self._page(desc))
        ml.addStretch(1)
        # a word-wrapped label gets no height for its width from Qt's layouts: each is given
        # its height (_fit_hints) and the list scrolls on a small screen instead of clipping
        scroll = QScrollArea()
        scroll.setWidget(method_list)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        QVBoxLayout(methods_box).addWidget(scroll)
        self.methods_scroll = scroll
        opts_box = QGroupBox("Options")
        QVBoxLayout(opts_box).addWidget(self.pages)
        self.group.idToggled.connect(lambda i, on: self.pages.setCurrentIndex(i) if on else None)

        self.buttons = QDialogButtonBox()
        self.run_button = self.buttons.addButton("Protect", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.warning = QLabel("")
        self.warning.setStyleSheet("color:#b00020;")
        self.warning.setWordWrap(True)
        #: what every Protect solves (Session.protect): never the pattern on the table now
        self.basis = QLabel(BASIS)
        self.basis.setObjectName("protectBasis")
        self.basis.setWordWrap(True)
        self.advice = QLabel("")  # the suggested method and why (see suggest)
        self.advice.setWordWrap(True)
        self.advice.setVisible(False)
        linked = [d.name for d in self.methods if d.linked is not None]
        self.linked = QCheckBox(
            f"Protect all {n_tables} tables together (linked tables; {', '.join(linked)})"
        )
        self.linked.setVisible(n_tables > 1)
        self.n_tables = n_tables
        self.group.idToggled.connect(lambda *_: self._sync_linked())
        if self.methods:
            self.radios[self.methods[0].name].setChecked(True)
        top = QHBoxLayout()
        top.addWidget(methods_box, 3)
        top.addWidget(opts_box, 2)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.basis)
        lay.addWidget(self.advice)
        lay.addWidget(self.linked)
        lay.addWidget(self.warning)
        lay.addWidget(self.buttons)
        self._fit_hints()
        bar = scroll.verticalScrollBar().sizeHint().width()
        scroll.setMinimumWidth(method_list.minimumSizeHint().width() + bar)  # no text under it
        self.resize(900, 720)  # eight methods with their descriptions, none cut

    def _fit_hints(self) -> None:
        """Each description as tall as it is at its narrowest width: never cut, however wide."""
        for hint in self.hints:
            hint.setMinimumHeight(hint.heightForWidth(HINT_WIDTH))

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._fit_hints()  # the style sheet's font is known now

    # ------------------------------------------------------------------ building
    def _page(self, desc: MethodDescriptor) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        start = desc.params.suggested(self.facts)
        shown = [f for f in desc.params.fields() if not f.info.no_effect]
        for f in shown:
            w = self._field_widget(f, getattr(start, f.name))
            self.widgets[(desc.name, f.name)] = w
            if isinstance(w, QCheckBox):
                form.addRow("", w)
            else:
                form.addRow(f"{f.info.label}:", w)
        if not shown:
            note = QLabel("No options.")
            note.setStyleSheet("color:#555;")
            form.addRow("", note)
        return page

    def _field_widget(self, f: FieldSpec, value: Any) -> QWidget:
        i = f.info
        w: QWidget
        if f.type is bool:
            box = QCheckBox(i.label)
            box.setChecked(bool(value))
            w = box
        elif i.choices:
            combo = QComboBox()
            for k, text in i.choices.items():
                combo.addItem(f"{k} — {text}", k)
            combo.setCurrentIndex(list(i.choices).index(value))
            w = combo
        else:
            low = i.minimum if i.minimum is not None else -SPIN_MAX
            if i.exclusive_minimum:
                low += 1  # whole minutes or units: the next one up
            high = i.maximum if i.maximum is not None else SPIN_MAX
            suffix = f" {i.unit}" if i.unit else ""
            w = number_spin(low, high, value, suffix=suffix)
        tip = i.help
        if f.required and i.suggest is not None:
            tip = (tip + " " if tip else "") + f"At least {i.suggest(self.facts):g} for this table."
        w.setToolTip(tip)
        return w

    # ------------------------------------------------------------------ reading
    def _sync_linked(self) -> None:
        ok = self.descriptor().linked is not None
        self.linked.setEnabled(ok)
        if not ok:
            self.linked.setChecked(False)

    def is_linked(self) -> bool:
        return self.n_tables > 1 and self.linked.isChecked()

    def select(self, code: str) -> None:
        self.radios[code].setChecked(True)

    def descriptor(self) -> MethodDescriptor:
        return self.methods[self.group.checkedId()]

    def method(self) -> str:
        return self.descriptor().name

    def widget(self, method: str, field: str) -> QWidget:
        """The widget of one parameter (tests, remembered values)."""
        return self.widgets[(method, field)]

    def set_value(self, method: str, field: str, value: Any) -> None:
        w = self.widget(method, field)
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QComboBox):
            w.setCurrentIndex(max(0, w.findData(value)))
        else:
            w.setValue(value)  # type: ignore[attr-defined]

    def value(self, method: str, field: str) -> Any:
        w = self.widget(method, field)
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, QComboBox):
            return w.currentData()
        return w.value()  # type: ignore[attr-defined]

    def params(self) -> MethodParams:
        """The chosen method's parameters (ParameterError if a value is not allowed)."""
        desc = self.descriptor()
        values = {name: self.value(m, name) for (m, name) in self.widgets if m == desc.name}
        return desc.params.from_mapping(values)

    def suggest(self, advice: Any) -> None:
        """Preselect the method and time of a suggestion (Session.suggest_method) and say why."""
        self.select(advice.method)
        desc = self.descriptor()
        per = ""
        if (advice.method, "max_minutes") in self.widgets:
            self.set_value(advice.method, "max_minutes", advice.minutes)
            label = desc.params.field_spec("max_minutes").info.label
            per = " per subtable" if "subtable" in label else ""
        self.advice.setText(
            f"Suggested for this table: {desc.label}, {advice.minutes} min{per} — {advice.reason}."
        )
        self.advice.setVisible(True)

    def _accept(self) -> None:
        try:
            self.descriptor().options_for(self.params(), self.facts)
        except ArgusError as exc:  # out of range for this table (e.g. the rounding base)
            self.warning.setText(exc.message)
            return
        self.accept()
