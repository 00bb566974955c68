"""Protect panel: choose a method (suppression, rounding, CTA, interval) and its options."""

from __future__ import annotations

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
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from argusqt.gui.widgets import number_spin

#: (method code, title, explanation) in the order offered.
METHODS: list[tuple[str, str, str]] = [
    ("OPT", "Optimal suppression", "Fewest cost of secondary suppressions (branch-and-cut, SCIP)."),
    ("MOD", "Modular (HiTaS)", "Hierarchical tables: optimal per subtable, fast on large tables."),
    ("HEUR", "Fast heuristic", "A safe pattern quickly (LP paths + clean-up); not minimal."),
    (
        "GH",
        "Hypercube (GHMITER)",
        "τ-Argus's hypercube: boxes of suppressed cells around every primary; quick on big "
        "tables, suppresses more.",
    ),
    (
        "NET",
        "Network flows",
        "2-D tables with at most one hierarchical variable: shortest cycles, fast.",
    ),
    ("RND", "Controlled rounding", "Publish every cell rounded to a multiple of the base."),
    ("CTA", "Controlled tabular adjustment", "Publish slightly adjusted values for all cells."),
    ("IP", "Interval protection", "Publish intervals instead of suppressing cells."),
]


class ProtectDialog(QDialog):
    """Returns `method()` and `params()` (batch parameter names) when accepted."""

    def __init__(self, table_title: str, min_base: int = 1, parent=None, n_tables: int = 1) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Protect — {table_title}")
        self.group = QButtonGroup(self)
        self.pages = QStackedWidget()
        methods_box = QGroupBox("Method")
        ml = QVBoxLayout(methods_box)
        self.radios: dict[str, QRadioButton] = {}
        for i, (code, title, text) in enumerate(METHODS):
            r = QRadioButton(title)
            r.setToolTip(text)
            self.group.addButton(r, i)
            self.radios[code] = r
            ml.addWidget(r)
            hint = QLabel(text)
            hint.setStyleSheet("color:#555; margin-left:22px;")
            hint.setWordWrap(True)
            ml.addWidget(hint)
        ml.addStretch(1)

        # option pages (same order as METHODS)
        self.opt_time = number_spin(1, 10_000, 10, suffix=" min")
        self.mod_time = number_spin(1, 10_000, 1, suffix=" min")
        self.mod_single = QCheckBox("Protect singletons")
        self.mod_multi = QCheckBox("Protect multiple singletons")
        self.mod_minfreq = QCheckBox("Minimum frequency protection")
        for c in (self.mod_single, self.mod_multi, self.mod_minfreq):
            c.setChecked(True)
        self.heur_single = QCheckBox("Protect singletons")
        self.heur_single.setChecked(True)
        self.opt_single = QCheckBox("Protect singletons")
        self.opt_single.setChecked(True)
        for c in (self.opt_single, self.heur_single):
            c.setToolTip(
                "Aim for a pattern that respondents alone in a cell cannot undo (singleton, "
                "singleton–multiple and minimum-frequency options). The insider audit runs "
                "either way and adds cells if needed."
            )
        self.gh_percent = number_spin(1, 1000, 100, suffix=" %")
        self.gh_percent.setToolTip(
            "The attacker is taken to know every cell within ± this percentage of its value."
        )
        self.gh_model = QComboBox()
        self.gh_model.addItems(["normal", "large"])
        self.gh_single = QCheckBox("Protect singletons (a single respondent's cell in two boxes)")
        self.gh_single.setChecked(True)
        self.net_note = QLabel(
            "For 2-dimensional tables with at most one hierarchical variable; other tables "
            "are refused with the rule."
        )
        self.net_note.setWordWrap(True)
        self.rnd_base = number_spin(1, 10**9, max(1, min_base))
        self.rnd_base.setToolTip(f"Minimum base for this table: {min_base}")
        self.rnd_steps = number_spin(0, 10, 0)
        self.rnd_time = number_spin(1, 10_000, 20, suffix=" min")
        self.rnd_stop = QComboBox()
        self.rnd_stop.addItems(["1 — first RAPID solution", "2 — first feasible", "3 — optimal"])
        self.rnd_stop.setCurrentIndex(2)
        self.rnd_partitions = QCheckBox("Partition by the first non-hierarchical variable")
        self.cta_fixed = QCheckBox("Fix directions with a heuristic (LP, faster, may cost more)")
        self.ip_note = QLabel(
            "Publishes for each sensitive cell an interval that covers its protection levels."
        )
        self.ip_note.setWordWrap(True)
        self.min_base = min_base
        pages = [
            [("Maximum time:", self.opt_time), ("", self.opt_single)],
            [
                ("Maximum time per subtable:", self.mod_time),
                ("", self.mod_single),
                ("", self.mod_multi),
                ("", self.mod_minfreq),
            ],
            [("", self.heur_single)],
            [
                ("A-priori bounds:", self.gh_percent),
                ("Model size:", self.gh_model),
                ("", self.gh_single),
            ],
            [("", self.net_note)],
            [
                ("Rounding base:", self.rnd_base),
                ("Steps allowed:", self.rnd_steps),
                ("Maximum time:", self.rnd_time),
                ("Stop rule:", self.rnd_stop),
                ("", self.rnd_partitions),
            ],
            [("", self.cta_fixed)],
            [("", self.ip_note)],
        ]
        for rows in pages:
            w = QWidget()
            f = QFormLayout(w)
            for lab, widget in rows:
                f.addRow(lab, widget)
            self.pages.addWidget(w)
        opts_box = QGroupBox("Options")
        QVBoxLayout(opts_box).addWidget(self.pages)
        self.group.idToggled.connect(lambda i, on: on and self.pages.setCurrentIndex(i))
        self.radios["OPT"].setChecked(True)

        self.buttons = QDialogButtonBox()
        self.run_button = self.buttons.addButton("Protect", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.warning = QLabel("")
        self.warning.setStyleSheet("color:#b00020;")
        self.advice = QLabel("")  # the suggested method and why (see suggest)
        self.advice.setWordWrap(True)
        self.advice.setVisible(False)
        self.linked = QCheckBox(
            f"Protect all {n_tables} tables together (linked tables; OPT, MOD and GH)"
        )
        self.linked.setVisible(n_tables > 1)
        self.n_tables = n_tables
        self.group.idToggled.connect(lambda *_: self._sync_linked())
        top = QHBoxLayout()
        top.addWidget(methods_box, 3)
        top.addWidget(opts_box, 2)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.advice)
        lay.addWidget(self.linked)
        lay.addWidget(self.warning)
        lay.addWidget(self.buttons)
        self.resize(820, 640)  # eight methods with their hints

    def _sync_linked(self) -> None:
        ok = self.method() in ("OPT", "MOD", "GH")
        self.linked.setEnabled(ok)
        if not ok:
            self.linked.setChecked(False)

    def is_linked(self) -> bool:
        return self.n_tables > 1 and self.linked.isChecked()

    def select(self, code: str) -> None:
        self.radios[code].setChecked(True)

    def suggest(self, advice) -> None:
        """Preselect the method and time of a protect.advice.Advice and say why."""
        self.select(advice.method)
        spin = {"OPT": self.opt_time, "MOD": self.mod_time}.get(advice.method)
        if spin is not None:
            spin.setValue(advice.minutes)
        title = dict((c, t) for c, t, _ in METHODS)[advice.method]
        per = " per subtable" if advice.method == "MOD" else ""
        self.advice.setText(
            f"Suggested for this table: {title}, {advice.minutes} min{per} — {advice.reason}."
        )
        self.advice.setVisible(True)

    def method(self) -> str:
        return METHODS[self.group.checkedId()][0]

    def params(self) -> dict:
        """Parameters with the batch names (`<SUPPRESS>` of argusqt/docs/formats.md §8.5); times
        in minutes."""
        m = self.method()
        if m == "OPT":
            return {
                "max_minutes": self.opt_time.value(),
                "singleton_singleton": self.opt_single.isChecked(),
                "singleton_multiple": self.opt_single.isChecked(),
                "min_freq_option": self.opt_single.isChecked(),
            }
        if m == "MOD":
            return {
                "max_minutes": self.mod_time.value(),
                "singleton_singleton": int(self.mod_single.isChecked()),
                "singleton_multiple": int(self.mod_multi.isChecked()),
                "min_freq_option": int(self.mod_minfreq.isChecked()),
            }
        if m == "HEUR":
            on = self.heur_single.isChecked()
            return {"singleton_singleton": on, "singleton_multiple": on, "min_freq_option": on}
        if m == "GH":
            return {
                "apriori_percent": float(self.gh_percent.value()),
                "model_size": self.gh_model.currentIndex(),
                "apply_singleton": self.gh_single.isChecked(),
            }
        if m == "RND":
            return {
                "base": int(self.rnd_base.value()),
                "steps": int(self.rnd_steps.value()),
                "max_minutes": self.rnd_time.value(),
                "partitions": int(self.rnd_partitions.isChecked()),
                "stop_rule": self.rnd_stop.currentIndex() + 1,
            }
        if m == "CTA":
            return {"fixed_directions": self.cta_fixed.isChecked()}
        return {}

    def _accept(self) -> None:
        if self.method() == "RND" and self.rnd_base.value() < self.min_base:
            self.warning.setText(
                f"The rounding base must be at least {self.min_base} for this table."
            )
            return
        self.accept()
