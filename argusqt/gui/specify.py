"""Specify | Tables: explanatory variables, cell items, cost, weights, holdings and rules.

Builds `TableSpec` objects (argusqt.model.table) with `SafetyRules` (argusqt.model.rulespec);
one form for everything τ-Argus spreads over a crowded dialog, grouped by what it affects.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from argusqt.gui.core import VariableChoices
from argusqt.gui.widgets import number_spin
from argusqt.model.rulespec import DominanceRule, FreqRule, PRule, RequestRule, SafetyRules
from argusqt.model.table import MAX_DIMENSIONS, CostSpec, TableSpec

FREQ_ITEM = "<frequency>"
SAME_AS_RESPONSE = "(same as response)"
#: explanatory variables per table: τ-Argus's and the batch file's 6 (a table file: 4, what
#: the tabular reader takes)
MAX_EXPLANATORY = MAX_DIMENSIONS
MAX_EXPLANATORY_TABULAR = 4


class RuleRow:
    """A checkbox enabling a rule and its parameter spin boxes on one grid row."""

    def __init__(self, grid: QGridLayout, row: int, title: str, params: list[tuple[str, QWidget]]):
        self.check = QCheckBox(title)
        self.params = [w for _, w in params]
        grid.addWidget(self.check, row, 0)
        col = 1
        for label, w in params:
            lab = QLabel(label)
            lab.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            grid.addWidget(lab, row, col)
            grid.addWidget(w, row, col + 1)
            col += 2
        self.check.toggled.connect(self._sync)
        self._sync(False)

    def _sync(self, on: bool) -> None:
        for w in self.params:
            w.setEnabled(on)

    @property
    def on(self) -> bool:
        return self.check.isChecked() and self.check.isEnabled()

    def values(self) -> list[float]:
        return [w.value() for w in self.params]

    def set(self, on: bool, values: list[float] | None = None) -> None:
        self.check.setChecked(on)
        for w, v in zip(self.params, values or [], strict=False):
            w.setValue(v)


class LevelRules(QWidget):
    """Rules of one level (individual contributions or holdings)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        g = QGridLayout(self)
        g.setHorizontalSpacing(8)
        self.nk = [
            RuleRow(
                g,
                i,
                f"Dominance rule {i + 1}",
                [("n", number_spin(1, 99, 3)), ("k %", number_spin(1, 100, 75))],
            )
            for i in range(2)
        ]
        self.p = [
            RuleRow(
                g,
                2 + i,
                f"p% rule {i + 1}",
                [("p %", number_spin(1, 100, 15)), ("n", number_spin(1, 99, 1))],
            )
            for i in range(2)
        ]
        self.freq = RuleRow(
            g,
            4,
            "Minimum frequency",
            [("freq", number_spin(1, 999, 3)), ("range %", number_spin(0, 100, 30))],
        )
        # argusqt's FREQ(m,r,U): count respondents even when weights apply (US#98)
        self.freq_unweighted = QCheckBox("count respondents, not weights")
        self.freq_unweighted.setToolTip(
            "With weights applied, the minimum frequency still counts the respondents "
            "(unweighted), e.g. 'at least 10 units, unweighted'. Written as FREQ(m,r,U), "
            "an argusqt extension of the batch syntax."
        )
        g.addWidget(self.freq_unweighted, 4, 5, 1, 2)
        self.freq.check.toggled.connect(self.freq_unweighted.setEnabled)
        self.freq_unweighted.setEnabled(False)
        self.req = RuleRow(
            g,
            5,
            "Request rule",
            [
                ("p1 %", number_spin(0, 100, 70)),
                ("p2 %", number_spin(0, 100, 80)),
                ("freq", number_spin(0, 999, 3)),
            ],
        )
        self.req_margin = number_spin(0, 100, 20)
        g.addWidget(QLabel("range %"), 6, 5, Qt.AlignmentFlag.AlignRight)
        g.addWidget(self.req_margin, 6, 6)
        self.req.params.append(self.req_margin)
        self.req._sync(False)
        g.setColumnStretch(7, 1)
        g.setRowStretch(7, 1)

    def dominance(self) -> list[DominanceRule]:
        return [DominanceRule(int(n), float(k)) for r in self.nk if r.on for n, k in [r.values()]]

    def prules(self) -> list[PRule]:
        return [PRule(float(p), 100.0, int(n)) for r in self.p if r.on for p, n in [r.values()]]

    def freq_rule(self) -> FreqRule | None:
        if not self.freq.on:
            return None
        m, rng = self.freq.values()
        return FreqRule(int(m), float(rng), self.freq_unweighted.isChecked())

    def request_rule(self) -> RequestRule | None:
        if not self.req.on:
            return None
        p1, p2, f, margin = self.req.values()
        return RequestRule(float(p1), float(p2), int(f), float(margin))

    def load(self, nk, p, freq, req) -> None:
        for row, rule in zip(self.nk, [*nk, None, None][:2], strict=True):
            row.set(rule is not None, [rule.n, rule.k] if rule else None)
        for row, rule in zip(self.p, [*p, None, None][:2], strict=True):
            row.set(rule is not None, [rule.p, rule.n] if rule else None)
        self.freq.set(freq is not None, [freq.minfreq, freq.range] if freq else None)
        self.freq_unweighted.setChecked(bool(freq is not None and freq.unweighted))
        self.req.set(req is not None, [req.p1, req.p2, req.minfreq, req.margin] if req else None)


def describe_rules(r: SafetyRules) -> str:
    """Short rule text for the list of tables (batch-like notation)."""
    parts = [f"NK({x.n},{x.k:g})" for x in r.nk_individual]
    parts += [f"P({x.p:g},{x.n})" for x in r.p_individual]
    if r.freq_individual:
        u = ",U" if r.freq_individual.unweighted else ""
        parts.append(f"FREQ({r.freq_individual.minfreq},{r.freq_individual.range:g}{u})")
    if r.req_individual:
        q = r.req_individual
        parts.append(f"REQ({q.p1:g},{q.p2:g},{q.minfreq},{q.margin:g})")
    hold = [f"NK({x.n},{x.k:g})" for x in r.nk_holding] + [f"P({x.p:g},{x.n})" for x in r.p_holding]
    if r.freq_holding:
        hold.append(f"FREQ({r.freq_holding.minfreq},{r.freq_holding.range:g})")
    if hold:
        parts.append("holding: " + "|".join(hold))
    if r.zero_range is not None:
        parts.append(f"ZERO({r.zero_range:g})")
    if r.missing_safe:
        parts.append("MIS(1)")
    if r.use_weights:
        parts.append("WGT(1)")
    if r.combined is not None:
        parts.append(f"COMB({int(r.combined)})")
    parts.append(f"MAN({r.manual_margin:g})")
    return "|".join(parts)


def describe_spec(s: TableSpec) -> str:
    resp = s.response or "frequency"
    cost = {
        "variable": s.cost.variable or resp,
        "frequency": "freq",
        "unity": "unity",
        "distance": "distance",
    }[s.cost.kind]
    lam = f" λ={s.cost.lam:g}" if s.cost.lam != 1 else ""
    return (
        f"{' × '.join(s.explanatory)}  |  {resp}  |  cost {cost}{lam}  |  {describe_rules(s.rules)}"
    )


class SpecifyTablesDialog(QDialog):
    """Collects table specifications; `specs` holds them when the dialog is accepted."""

    def __init__(self, choices: VariableChoices, specs: list[TableSpec] | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Specify tables")
        self.choices = choices
        self.specs: list[TableSpec] = list(specs or [])
        self.max_vars = MAX_EXPLANATORY_TABULAR if choices.tabular else MAX_EXPLANATORY

        # ---------------- variables → table
        self.available = QListWidget()
        self.available.addItems(choices.explanatory)
        self.available.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.chosen = QListWidget()
        self.add_var = QPushButton("Add →")
        self.remove_var = QPushButton("← Remove")
        self.add_var.clicked.connect(self._add_vars)
        self.remove_var.clicked.connect(self._remove_vars)
        self.available.itemDoubleClicked.connect(lambda _: self._add_vars())
        self.chosen.itemDoubleClicked.connect(lambda _: self._remove_vars())
        mid = QVBoxLayout()
        mid.addStretch(1)
        mid.addWidget(self.add_var)
        mid.addWidget(self.remove_var)
        self.up_var = QPushButton("Move up")
        self.up_var.setToolTip("Order of the variables: 1st = rows, 2nd = columns")
        self.up_var.clicked.connect(self._move_up)
        mid.addSpacing(12)
        mid.addWidget(self.up_var)
        mid.addStretch(1)
        vars_box = QGroupBox(f"Explanatory variables (up to {self.max_vars})")
        vl = QHBoxLayout(vars_box)
        left = QVBoxLayout()
        left.addWidget(QLabel("Available"))
        left.addWidget(self.available)
        right = QVBoxLayout()
        right.addWidget(QLabel("In the table (1st = rows, 2nd = columns)"))
        right.addWidget(self.chosen)
        vl.addLayout(left)
        vl.addLayout(mid)
        vl.addLayout(right)

        # ---------------- cell items
        items = QGroupBox("Cell items")
        f = QFormLayout(items)
        self.response = QComboBox()
        self.response.addItems([*choices.numeric, FREQ_ITEM])
        self.shadow = QComboBox()
        self.shadow.addItems([SAME_AS_RESPONSE, *choices.numeric])
        f.addRow("Response:", self.response)
        f.addRow("Shadow (for the rules):", self.shadow)
        self.use_weights = QCheckBox(
            f"Apply weights ({choices.weight})" if choices.weight else "Apply weights"
        )
        self.use_weights.setEnabled(choices.weight is not None)
        f.addRow("", self.use_weights)
        self.holding_note = QLabel(
            f"Holding variable: {choices.holding}"
            if choices.holding
            else "No holding variable in the metadata"
        )
        f.addRow("", self.holding_note)

        # ---------------- cost
        cost_box = QGroupBox("Cost of suppressing a cell")
        cg = QGridLayout(cost_box)
        self.cost_var_radio = QRadioButton("Variable")
        self.cost_freq_radio = QRadioButton("Frequency")
        self.cost_unity_radio = QRadioButton("Unity")
        self.cost_dist_radio = QRadioButton("Distance")
        self.cost_var_radio.setChecked(True)
        self.cost_var = QComboBox()
        self.cost_var.addItems([SAME_AS_RESPONSE, *choices.numeric])
        self.lam = number_spin(0.0, 1.0, 1.0, decimals=2)
        self.lam.setSingleStep(0.1)
        cg.addWidget(self.cost_var_radio, 0, 0)
        cg.addWidget(self.cost_var, 0, 1)
        cg.addWidget(self.cost_freq_radio, 1, 0)
        cg.addWidget(self.cost_unity_radio, 1, 1)
        cg.addWidget(self.cost_dist_radio, 2, 0)
        cg.addWidget(QLabel("λ (cost^λ; 0 = log):"), 3, 0)
        cg.addWidget(self.lam, 3, 1)
        self.cost_var_radio.toggled.connect(self.cost_var.setEnabled)

        # ---------------- rules
        self.individual = LevelRules()
        self.holding = LevelRules()
        self.rule_tabs = QTabWidget()
        self.rule_tabs.addTab(self.individual, "Individual level")
        self.rule_tabs.addTab(self.holding, "Holding level")
        self.rule_tabs.setTabEnabled(1, choices.holding is not None)
        general = QHBoxLayout()
        self.zero = QCheckBox("Zero cells unsafe, range")
        self.zero_range = number_spin(0.0, 1e9, 10.0, decimals=2)
        self.zero.toggled.connect(self.zero_range.setEnabled)
        self.zero_range.setEnabled(False)
        self.missing_safe = QCheckBox("Missing codes are safe")
        self.manual = number_spin(0, 100, 20, suffix=" %")
        general.addWidget(self.zero)
        general.addWidget(self.zero_range)
        general.addSpacing(12)
        general.addWidget(self.missing_safe)
        general.addSpacing(12)
        # argusqt's COMB(0|1): dominance and p% on determined sums of suppressed cells (US#160)
        self.combined = QCheckBox("Rules on sums of suppressed cells")
        self.combined.setToolTip(
            "Apply the dominance and p% rules also to each sum of suppressed cells that a "
            "published total gives away (on by default; written COMB(0) when off)."
        )
        self.combined.setChecked(True)
        general.addWidget(self.combined)
        general.addSpacing(12)
        general.addWidget(QLabel("Manual safety range:"))
        general.addWidget(self.manual)
        general.addStretch(1)
        rules_box = QGroupBox("Sensitivity rules")
        rl = QVBoxLayout(rules_box)
        rl.addWidget(self.rule_tabs)
        rl.addLayout(general)
        self.response.currentTextChanged.connect(self._response_changed)
        self._response_changed(self.response.currentText())

        # ---------------- specified tables
        self.table_list = QListWidget()
        self.table_list.currentRowChanged.connect(self._load_selected)
        self.add_table = QPushButton("Add table ↓")
        self.add_table.setDefault(False)
        self.add_table.clicked.connect(self._add_table)
        self.replace_table = QPushButton("Replace selected")
        self.replace_table.clicked.connect(self._replace_table)
        self.delete_table = QPushButton("Delete selected")
        self.delete_table.clicked.connect(self._delete_table)
        tb = QHBoxLayout()
        tb.addWidget(self.add_table)
        tb.addWidget(self.replace_table)
        tb.addWidget(self.delete_table)
        tb.addStretch(1)
        list_box = QGroupBox("Specified tables")
        ll = QVBoxLayout(list_box)
        ll.addLayout(tb)
        ll.addWidget(self.table_list)

        self.buttons = QDialogButtonBox()
        self.compute = self.buttons.addButton(
            "Compute tables", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._compute)
        self.buttons.rejected.connect(self.reject)

        top = QHBoxLayout()
        top.addWidget(vars_box, 3)
        col = QVBoxLayout()
        col.addWidget(items)
        col.addWidget(cost_box)
        top.addLayout(col, 2)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(rules_box)
        lay.addWidget(list_box)
        lay.addWidget(self.buttons)
        self._refresh_list()
        if self.specs:  # reopened: the form shows the last table, its response and rules
            self.table_list.setCurrentRow(len(self.specs) - 1)
        self.resize(900, 760)

    # ------------------------------------------------------------------ variables
    def _add_vars(self) -> None:
        for item in self.available.selectedItems():
            if self.chosen.count() >= self.max_vars:
                break
            if not self.chosen.findItems(item.text(), Qt.MatchFlag.MatchExactly):
                self.chosen.addItem(item.text())

    def _remove_vars(self) -> None:
        for item in self.chosen.selectedItems():
            self.chosen.takeItem(self.chosen.row(item))

    def _move_up(self) -> None:
        row = self.chosen.currentRow()
        if row > 0:
            item = self.chosen.takeItem(row)
            self.chosen.insertItem(row - 1, item)
            self.chosen.setCurrentRow(row - 1)

    def select_variables(self, names: list[str]) -> None:
        """Put these explanatory variables in the table (used by tests and reload)."""
        self.chosen.clear()
        for n in names[: self.max_vars]:
            self.chosen.addItem(n)

    def _response_changed(self, text: str) -> None:
        freq = text == FREQ_ITEM
        # frequency tables accept only FREQ/MAN/MIS/WGT (argusqt/docs/rules.md §3.10)
        for level in (self.individual, self.holding):
            for row in level.nk + level.p + [level.req]:
                row.check.setEnabled(not freq)
                row._sync(row.check.isChecked() and not freq)
        self.zero.setEnabled(not freq)
        self.shadow.setEnabled(not freq)

    # ------------------------------------------------------------------ spec in/out
    def current_spec(self) -> TableSpec:
        """The TableSpec the form describes now."""
        expl = [self.chosen.item(i).text() for i in range(self.chosen.count())]
        resp = self.response.currentText()
        response = None if resp == FREQ_ITEM else resp
        shadow = self.shadow.currentText()
        shadow = None if shadow == SAME_AS_RESPONSE or response is None else shadow
        if self.cost_freq_radio.isChecked():
            cost = CostSpec("frequency", None, self.lam.value())
        elif self.cost_unity_radio.isChecked():
            cost = CostSpec("unity", None, self.lam.value())
        elif self.cost_dist_radio.isChecked():
            cost = CostSpec("distance", None, self.lam.value())
        else:
            cv = self.cost_var.currentText()
            cost = CostSpec("variable", None if cv == SAME_AS_RESPONSE else cv, self.lam.value())
        ind, hold = self.individual, self.holding
        use_hold = self.choices.holding is not None
        rules = SafetyRules(
            nk_individual=ind.dominance(),
            nk_holding=hold.dominance() if use_hold else [],
            p_individual=ind.prules(),
            p_holding=hold.prules() if use_hold else [],
            freq_individual=ind.freq_rule(),
            freq_holding=hold.freq_rule() if use_hold else None,
            req_individual=ind.request_rule(),
            req_holding=hold.request_rule() if use_hold else None,
            zero_range=self.zero_range.value()
            if self.zero.isChecked() and self.zero.isEnabled()
            else None,
            manual_margin=float(self.manual.value()),
            use_weights=self.use_weights.isChecked(),
            missing_safe=self.missing_safe.isChecked(),
            combined=None if self.combined.isChecked() else False,
        )
        return TableSpec(expl, response, shadow, cost, rules)

    def load_spec(self, s: TableSpec) -> None:
        self.select_variables(s.explanatory)
        self.response.setCurrentText(s.response or FREQ_ITEM)
        self.shadow.setCurrentText(s.shadow or SAME_AS_RESPONSE)
        {
            "variable": self.cost_var_radio,
            "frequency": self.cost_freq_radio,
            "unity": self.cost_unity_radio,
            "distance": self.cost_dist_radio,
        }[s.cost.kind].setChecked(True)
        self.cost_var.setCurrentText(s.cost.variable or SAME_AS_RESPONSE)
        self.lam.setValue(s.cost.lam)
        r = s.rules
        self.individual.load(r.nk_individual, r.p_individual, r.freq_individual, r.req_individual)
        self.holding.load(r.nk_holding, r.p_holding, r.freq_holding, r.req_holding)
        self.zero.setChecked(r.zero_range is not None)
        if r.zero_range is not None:
            self.zero_range.setValue(r.zero_range)
        self.missing_safe.setChecked(r.missing_safe)
        self.combined.setChecked(r.combined is not False)
        self.manual.setValue(int(r.manual_margin))
        self.use_weights.setChecked(r.use_weights)

    def validate(self, s: TableSpec) -> str | None:
        """A message if the spec cannot be right, else None."""
        if not s.explanatory:
            return "Choose at least one explanatory variable."
        if s.is_frequency and (
            s.rules.nk_individual or s.rules.p_individual or s.rules.zero_range is not None
        ):
            return "Frequency tables accept only the minimum-frequency rule (no dominance, p% or zero rule)."
        if not s.rules.has_sensitivity_rules and not self.choices.tabular:
            return "Choose at least one sensitivity rule (dominance, p%, minimum frequency, …)."
        for r in s.rules.p_individual + s.rules.p_holding:
            if r.p > r.q:
                return f"p ({r.p:g}) must not exceed q ({r.q:g})."
        return None

    # ------------------------------------------------------------------ table list
    def _refresh_list(self) -> None:
        self.table_list.blockSignals(True)
        self.table_list.clear()
        for i, s in enumerate(self.specs, 1):
            self.table_list.addItem(f"{i}.  {describe_spec(s)}")
        self.table_list.blockSignals(False)

    def _checked_spec(self) -> TableSpec | None:
        s = self.current_spec()
        problem = self.validate(s)
        if problem:
            QMessageBox.warning(self, "Specify tables", problem)
            return None
        return s

    def _add_table(self) -> None:
        s = self._checked_spec()
        if s is not None:
            self.specs.append(s)
            self._refresh_list()
            self.table_list.setCurrentRow(len(self.specs) - 1)

    def _replace_table(self) -> None:
        row = self.table_list.currentRow()
        s = self._checked_spec() if row >= 0 else None
        if s is not None:
            self.specs[row] = s
            self._refresh_list()

    def _delete_table(self) -> None:
        row = self.table_list.currentRow()
        if row >= 0:
            del self.specs[row]
            self._refresh_list()

    def _load_selected(self, row: int) -> None:
        if 0 <= row < len(self.specs):
            self.load_spec(self.specs[row])

    def _compute(self) -> None:
        if not self.specs:
            s = self._checked_spec()
            if s is None:
                return
            self.specs.append(s)
        self.accept()
