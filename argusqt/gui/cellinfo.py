"""Cell information panel: everything known about the selected cell, as τ-Argus shows it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QWidget

from argusqt.gui import statuscolors
from argusqt.gui.formatting import format_cost, format_number
from argusqt.model.status import is_suppressed
from argusqt.model.table import Table
from argusqt.session import cell_cause, cell_levels


class CellInfoPanel(QGroupBox):
    """Read-only figures of one cell; `show_cell(table, cell, audit)` fills it."""

    FIELDS = (
        ("codes", "Cell"),
        ("status", "Status"),
        ("cause", "Why unsafe (cause)"),
        ("value", "Value"),
        ("published", "Published"),
        ("freq", "Contributors"),
        ("holdings", "Holdings"),
        ("top", "Largest contributions"),
        ("htop", "Largest holdings"),
        ("cost", "Cost"),
        ("pl", "Protection (lower / upper)"),
        ("audit", "Audit interval"),
        ("interval", "Published interval (interval protection)"),
    )

    #: copyable whatever the cell (they say which cell it is and what is published)
    ALWAYS_COPYABLE = ("codes", "status", "cause", "published")
    #: never copyable: the contributions of single respondents
    NEVER_COPYABLE = ("top", "htop")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Cell information", parent)
        form = QFormLayout(self)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)  # label above its value
        form.setVerticalSpacing(2)
        self.labels: dict[str, QLabel] = {}
        for key, title in self.FIELDS:
            lab = QLabel("–")
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setWordWrap(False)  # multi-line values use explicit line breaks: never clipped
            lab.setContentsMargins(8, 0, 0, 4)
            self.labels[key] = lab
            head = QLabel(title)
            head.setStyleSheet("color:#555; font-size:90%;")
            form.addRow(head, lab)
        self.setMinimumWidth(280)

    def clear(self) -> None:
        for lab in self.labels.values():
            lab.setText("–")

    def show_cell(self, table: Table, cell: int, audit=None, result=None) -> None:
        decimals = max(0, int(table.decimals))

        def fmt(x: float) -> str:  # the table's printed decimals, never -0.00
            return format_number(x, decimals)

        L = self.labels
        parts = []
        for d, node in zip(table.dims, table.cell_nodes(cell), strict=True):
            code = d.codes[node].strip() or "(blank)"
            lab = d.label(node).strip()
            parts.append(f"{d.name} = {code}" + (f" ({lab})" if lab and lab != code else ""))
        L["codes"].setText("\n".join(parts))
        st = int(table.status[cell])
        L["status"].setText(f"{statuscolors.label(st)}  [{st}]")
        L["cause"].setText(cell_cause(table, cell).replace("; ", "\n") or "–")
        L["value"].setText(fmt(float(table.value[cell])))
        pub = table.published
        rounded = table.protection is not None and table.protection.face == "round"
        pub_text = "–" if pub is None else format_number(pub[cell], 0 if rounded else decimals)
        L["published"].setText(pub_text)  # rounded values are whole multiples of the base
        L["freq"].setText(f"{table.freq[cell]:,.0f}")
        L["holdings"].setText(f"{table.hfreq[cell]:,.0f}" if table.hfreq is not None else "–")
        L["top"].setText(_top(table.top, cell, fmt))
        L["htop"].setText(_top(table.htop, cell, fmt) if table.htop is not None else "–")
        L["cost"].setText(format_cost(float(table.cost[cell])))
        lpl, upl = cell_levels(table, cell)
        pl = f"{fmt(lpl)} / {fmt(upl)}"
        if lpl < float(table.lpl[cell]):  # a count known non-empty: the rule asked below that
            floor = float(table.value[cell]) - lpl
            rule = f"{fmt(float(table.lpl[cell]))} / {fmt(upl)}"
            pl += f"\n(rule: {rule}; known ≥ {fmt(floor)}: empty cells print '-')"
        L["pl"].setText(pl)
        if audit is not None and bool(audit.audited[cell]):
            ok = "passed" if bool(audit.passed[cell]) else "NOT PROTECTED"
            L["audit"].setText(
                f"[{fmt(float(audit.lower[cell]))}, {fmt(float(audit.upper[cell]))}]\n{ok}"
            )
        else:
            L["audit"].setText("–")
        lo = getattr(result, "interval_lower", None)
        hi = getattr(result, "interval_upper", None)
        if lo is not None and hi is not None and np.isfinite(lo[cell]) and np.isfinite(hi[cell]):
            L["interval"].setText(f"[{fmt(float(lo[cell]))}, {fmt(float(hi[cell]))}]")
        else:
            L["interval"].setText("–")
        self._guard_copy(bool(is_suppressed(st)))

    def _guard_copy(self, suppressed: bool) -> None:
        """Shown, not copied: a suppressed cell's figures and any cell's largest contributions
        (respondents' own) cannot be selected for the clipboard; its codes and status can."""
        for key, lab in self.labels.items():
            ok = key in self.ALWAYS_COPYABLE or not (suppressed or key in self.NEVER_COPYABLE)
            lab.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse
                if ok
                else Qt.TextInteractionFlag.NoTextInteraction
            )
            lab.setToolTip(
                ""
                if ok
                else "Shown, not copyable: a suppressed cell's figures and respondents' "
                "contributions do not leave the program by the clipboard"
            )


def _top(top: np.ndarray | None, cell: int, fmt: Callable[[float], str]) -> str:
    if top is None or top.ndim != 2 or top.shape[1] == 0:
        return "–"
    row = top[cell]
    row = row[row != 0]
    return "\n".join(fmt(float(x)) for x in row) if len(row) else "–"
