"""The table window: axis and layer selectors, the coloured cell grid, legend and cell panel."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from argusqt.errors import ArgusError
from argusqt.gui import statuscolors
from argusqt.gui.cellinfo import CellInfoPanel
from argusqt.gui.tablemodel import TableModel
from argusqt.gui.widgets import FlowLayout
from argusqt.model.table import Table
from argusqt.session import published_face, spreadsheet_safe

#: first line of a copy of a table that has not passed the publication audit
NOT_FOR_PUBLICATION = "NOT FOR PUBLICATION: the table has not passed the publication audit — "


def _labelled(text: str, widget: QWidget) -> QWidget:
    """A label and its control kept on one line when a row of controls wraps."""
    box = QWidget()
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(QLabel(text))
    lay.addWidget(widget)
    return box


class Legend(QWidget):
    """Colour swatches of the status groups, with the number of cells of each."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = FlowLayout(self, spacing=12)  # wraps: the legend never widens the window
        self.counts: dict[str, QLabel] = {}
        for name, codes in statuscolors.LEGEND:
            entry = QWidget()
            pair = QHBoxLayout(entry)
            pair.setContentsMargins(0, 0, 0, 0)
            sw = QLabel()
            sw.setFixedSize(14, 14)
            bg = statuscolors.background(codes[0])
            sw.setStyleSheet(
                f"background:{bg.name() if bg else '#ffffff'}; border:1px solid #9a9a9a;"
            )
            lab = QLabel(name)
            pair.addWidget(sw)
            pair.addWidget(lab)
            lay.addWidget(entry)
            self.counts[name] = lab

    def update_counts(self, table: Table) -> None:
        n = np.bincount(table.status.astype(np.int64), minlength=15)
        for name, codes in statuscolors.LEGEND:
            self.counts[name].setText(f"{name} ({int(n[list(codes)].sum()):,})")


class TableView(QWidget):
    """Everything about one table; emits `change_status(action, cells)` for the main window."""

    change_status = Signal(str, object)  # action name, np.ndarray of cell indices

    def __init__(self, table: Table, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self.title = title
        self.audit = None
        self.result = None  # last ProtectionResult (intervals of interval protection)
        #: (state, words) of the table for a copy; the main window asks the session, which
        #: also knows tables protected together (Session.clipboard_state)
        self.state_of: Callable[[Table], tuple[str, str]] | None = None
        # told of a copy fit for publication (the session counts it as published)
        self.copied: Callable[[Table], object] | None = None
        self.model = TableModel(table, self)

        # --- axis controls
        names = [d.name for d in table.dims]
        self.row_combo = QComboBox()
        self.col_combo = QComboBox()
        self.row_combo.addItems(names)
        self.col_combo.addItems(["(none)", *names])
        self.row_combo.setCurrentIndex(0)
        self.col_combo.setCurrentIndex(2 if table.ndim >= 2 else 0)
        self.row_combo.currentIndexChanged.connect(self._axes_changed)
        self.col_combo.currentIndexChanged.connect(self._axes_changed)
        self.labels_box = QCheckBox("Show labels")
        self.labels_box.toggled.connect(self.model.set_show_labels)
        self.labels_box.toggled.connect(lambda _: self._fit_columns())
        self.published_box = QCheckBox("Show published values")
        self.published_box.setToolTip("After rounding or CTA: the rounded / adjusted values")
        self.published_box.setChecked(self.model.show_published)
        self.published_box.setEnabled(table.published is not None)
        self.published_box.toggled.connect(self._published_toggled)
        self.preview_box = QCheckBox("Preview safe table (x)")
        self.preview_box.setToolTip("Show suppressed cells as x, as the saved table will")
        self.preview_box.toggled.connect(self.model.set_preview_safe)
        self.next_unsafe = QPushButton("Next unsafe ▸")
        self.next_unsafe.setToolTip("Go to the next unsafe cell of this view (F3)")
        self.next_unsafe.setShortcut("F3")
        self.next_unsafe.clicked.connect(self.goto_next_unsafe)
        self.row_level = QSpinBox()
        self.row_level.setPrefix("Row levels: ")
        self.row_level.valueChanged.connect(lambda v: self._set_level(self.model.row_dim, v))
        self.col_level = QSpinBox()
        self.col_level.setPrefix("Column levels: ")
        self.col_level.valueChanged.connect(
            lambda v: self.model.col_dim is not None and self._set_level(self.model.col_dim, v)
        )

        # rows of controls wrap (FlowLayout): the window never grows wider than the screen
        axes = FlowLayout()
        for w in (_labelled("Rows:", self.row_combo), _labelled("Columns:", self.col_combo),
                  self.row_level, self.col_level, self.next_unsafe):  # fmt: skip
            axes.addWidget(w)

        # --- layer selectors (one per dimension not on an axis) and display switches
        self.layer_bar = FlowLayout()
        switches = FlowLayout()
        for box in (self.labels_box, self.preview_box, self.published_box):
            switches.addWidget(box)
        self.layer_combos: dict[int, QComboBox] = {}

        # --- grid
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setAlternatingRowColors(False)
        self.view.verticalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignLeft)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.verticalHeader().sectionClicked.connect(self._row_header_clicked)
        self.view.horizontalHeader().sectionClicked.connect(self._col_header_clicked)
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self.view.installEventFilter(self)  # Ctrl+C copies the block, '+' / '-' fold rows

        self.legend = Legend()
        self.info = CellInfoPanel()
        # where the table stands on its way to publication; red when it must not be saved
        self.protection = QLabel()
        self.protection.setObjectName("protectionState")
        self.protection.setWordWrap(True)
        self.protection_state = ""

        # --- status actions
        self.buttons: dict[str, QPushButton] = {}
        actions = QGridLayout()
        actions.setSpacing(4)
        for key, text, tip in (
            ("safe", "Set safe", "Mark the selected cells safe (manual): status 2"),
            ("unsafe", "Set unsafe", "Mark the selected cells unsafe (manual): status 9"),
            ("protected", "Set protected", "Never suppress the selected cells: status 10"),
            ("cost", "Set cost…", "Change the suppression cost of the selected cells"),
            ("levels", "Set protection levels…", "Change the protection levels of unsafe cells"),
            ("undo", "Undo suppression", "Remove all secondary suppressions of this table"),
        ):
            b = QPushButton(text)
            b.setToolTip(tip)
            b.clicked.connect(lambda _=False, k=key: self._emit_change(k))
            self.buttons[key] = b
            k = len(self.buttons) - 1
            actions.addWidget(b, k // 2, k % 2)
        right = QVBoxLayout()
        info_scroll = QScrollArea()
        info_scroll.setWidget(self.info)
        info_scroll.setWidgetResizable(True)
        info_scroll.setFrameShape(QFrame.Shape.NoFrame)
        info_scroll.setMinimumWidth(self.info.minimumWidth() + 20)
        right.addWidget(info_scroll, 1)
        right.addLayout(actions)
        side = QFrame()
        side.setLayout(right)

        center = QWidget()
        cl = QVBoxLayout(center)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addLayout(axes)
        cl.addLayout(self.layer_bar)
        cl.addLayout(switches)
        cl.addWidget(self.protection)
        cl.addWidget(self.view, 1)
        cl.addWidget(self.legend)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(center)
        split.addWidget(side)
        split.setStretchFactor(0, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(split)

        self._rebuild_layers()
        self._update_level_spins()
        self.legend.update_counts(table)
        self.update_protection()
        self._fit_columns()

    # ------------------------------------------------------------------ axes & layers
    def _axes_changed(self) -> None:
        r = self.row_combo.currentIndex()
        c = self.col_combo.currentIndex() - 1
        col = None if c < 0 or c == r else c
        self.model.set_axes(r, col)
        self._rebuild_layers()
        self._update_level_spins()
        self._fit_columns()

    def _rebuild_layers(self) -> None:
        while self.layer_bar.count():
            item = self.layer_bar.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        self.layer_combos.clear()
        shown = {self.model.row_dim, self.model.col_dim}
        for d, dim in enumerate(self.table.dims):
            if d in shown:
                continue
            combo = QComboBox()
            for i, code in enumerate(dim.codes):
                indent = "  " * int(dim.depth[i]) if dim.hierarchical else ""
                lab = dim.label(i)
                text = code.strip() if lab == code else f"{code.strip()} — {lab}"
                combo.addItem(indent + (text or "(blank)"))
            combo.setCurrentIndex(self.model.layer[d])
            combo.currentIndexChanged.connect(lambda i, d=d: self._set_layer(d, i))
            self.layer_bar.addWidget(_labelled(f"{dim.name}:", combo))
            self.layer_combos[d] = combo

    def _set_layer(self, dim: int, node: int) -> None:
        self.model.set_layer(dim, node)
        self._fit_columns()  # another layer, other numbers

    def _update_level_spins(self) -> None:
        for spin, dim in (
            (self.row_level, self.model.row_dim),
            (self.col_level, self.model.col_dim),
        ):
            spin.blockSignals(True)
            if dim is None or not self.table.dims[dim].hierarchical:
                spin.setEnabled(False)
                spin.setRange(0, 0)
            else:
                n = self.table.dims[dim].n_levels
                spin.setEnabled(True)
                spin.setRange(0, n)
                spin.setValue(n)
            spin.blockSignals(False)

    def _set_level(self, dim: int, level: int) -> None:
        self.model.set_level(dim, level)
        self._fit_columns()

    def _row_header_clicked(self, section: int) -> None:
        self.model.toggle(self.model.row_dim, self.model.row_node(section))
        self._fit_columns()

    def _col_header_clicked(self, section: int) -> None:
        node = self.model.col_node(section)
        if node is not None and self.model.col_dim is not None:
            self.model.toggle(self.model.col_dim, node)
            self._fit_columns()

    def _published_toggled(self, on: bool) -> None:
        self.model.show_published = on and self.table.published is not None
        self.model.refresh()
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Every column and the row headers as wide as their widest text in bold (totals and
        suppressed cells are bold), measured over all rows of the model: Qt's own fit looks
        at a sample of rows in the regular font and cut '16,847,646…' and 'Groning…'."""
        m = self.model
        pad = 18  # cell margins, focus frame and grid line
        cell_fm = QFontMetrics(_bold(self.view.font()))
        head = self.view.horizontalHeader()
        head_fm = QFontMetrics(_bold(head.font()))
        widths = [cell_fm.horizontalAdvance(t) + pad for t in m.widest_texts()]
        for c in range(min(len(widths), m.columnCount())):
            text = str(m.headerData(c, Qt.Orientation.Horizontal) or "")
            widths[c] = max(widths[c], head_fm.horizontalAdvance(text) + pad)
        if len(widths) > 2_000:  # thousands of columns: one width for all
            head.setDefaultSectionSize(max(widths))
        else:
            for c, w in enumerate(widths):
                head.resizeSection(c, w)
        rows = self.view.verticalHeader()
        row_fm = QFontMetrics(_bold(rows.font()))
        widest = max(
            (
                row_fm.horizontalAdvance(str(m.headerData(r, Qt.Orientation.Vertical) or ""))
                for r in range(m.rowCount())
            ),
            default=0,
        )
        rows.setMinimumWidth(min(max(120, widest + pad), 640))

    # ------------------------------------------------------------------ cells
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            cell = self.model.cell_at(current.row(), current.column())
            self.info.show_cell(self.table, cell, self.audit, self.result)
        else:
            self.info.clear()

    def selected_cells(self) -> np.ndarray:
        idx = self.view.selectionModel().selectedIndexes()
        if not idx:
            cur = self.view.currentIndex()
            idx = [cur] if cur.isValid() else []
        return np.array(
            sorted({self.model.cell_at(i.row(), i.column()) for i in idx}), dtype=np.int64
        )

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.view and event.type() == QEvent.Type.KeyPress:
            if event.matches(QKeySequence.StandardKey.Copy):
                self.copy_selection()
                return True
            if event.key() in (Qt.Key.Key_Plus, Qt.Key.Key_Minus):
                self._fold_current(event.key() == Qt.Key.Key_Plus)
                return True
        return super().eventFilter(obj, event)

    def copy_selection(self) -> str:
        """Copy the selected block as tab-separated text with row and column headers.

        Always the published face (`x` for suppressed cells, `-` for empty ones, the rounded,
        adjusted or interval values), whatever the view shows: a clipboard leaves the
        program like a file, and true values of sensitive cells must not (docs/design.md).
        A table that has not passed the publication audit on its current statuses (not
        protected, changed after protection) gets a first line saying it is not for
        publication: its `x` cells may still be recomputable from the others.
        """
        from argusqt.gui import core

        idx = self.view.selectionModel().selectedIndexes()
        if not idx:
            return ""
        rows = sorted({i.row() for i in idx})
        cols = sorted({i.column() for i in idx})
        chosen = {(i.row(), i.column()) for i in idx}
        m = self.model
        try:
            face = published_face(self.table)
        except ArgusError as exc:  # e.g. rounded values off their grid: nothing is copied
            from argusqt.gui.errors import show_error

            show_error(self, exc, "Copy")
            return ""

        def col_header(c: int) -> str:  # the code or label, never the fold mark or indent
            node = m.col_node(c)
            if m.col_dim is None or node is None:
                return spreadsheet_safe(str(m.headerData(c, Qt.Orientation.Horizontal)))
            return spreadsheet_safe(m.node_name(m.col_dim, node))

        head = [""] + [col_header(c) for c in cols]
        # the verdict already stored (fingerprints): no audit on the GUI thread
        state, words = (self.state_of or core.protection_of)(self.table)
        lines = [] if state in ("cleared", "nothing to protect") else [NOT_FOR_PUBLICATION + words]
        lines.append("\t".join(head))
        for r in rows:
            cells = [str(face[m.cell_at(r, c)]) if (r, c) in chosen else "" for c in cols]
            name = spreadsheet_safe(m.node_name(m.row_dim, m.row_node(r))) if m.table.ndim else ""
            lines.append("\t".join([name, *cells]))
        text = "\n".join(lines) + "\n"
        QApplication.clipboard().setText(text)
        if not lines[0].startswith(NOT_FOR_PUBLICATION) and self.copied is not None:
            self.copied(self.table)
        return text

    def _fold_current(self, expand: bool) -> None:
        """'+' / '-' on a cell unfold / fold the branch of its row code."""
        cur = self.view.currentIndex()
        if not cur.isValid():
            return
        node = self.model.row_node(cur.row())
        v = self.model.views[self.model.row_dim]
        if v.has_children(node) and bool(v.expanded[node]) != expand:
            self.model.toggle(self.model.row_dim, node)
            self._fit_columns()
            self.view.setCurrentIndex(self.model.index(cur.row(), cur.column()))

    def goto_next_unsafe(self) -> bool:
        """Make the next visible unsafe cell (row-major after the current one) current."""
        pos = self.model.primary_positions()
        if not len(pos):
            return False
        cur = self.view.currentIndex()
        ncol = max(1, self.model.columnCount())
        key = pos[:, 0] * ncol + pos[:, 1]
        start = cur.row() * ncol + cur.column() if cur.isValid() else -1
        after = np.flatnonzero(key > start)
        r, c = pos[after[0]] if len(after) else pos[0]
        self.view.setCurrentIndex(self.model.index(int(r), int(c)))
        return True

    def select_cell(self, cell: int) -> bool:
        """Make `cell` current (switching the layer if needed); False if it is collapsed away."""
        nodes = self.table.cell_nodes(cell)
        for d, combo in self.layer_combos.items():
            combo.setCurrentIndex(nodes[d])
        index = self.model.find(cell)
        if not index.isValid():
            return False
        # the cell alone becomes the selection: setCurrentIndex alone reads the keyboard's
        # modifiers (a Ctrl still down kept the old selection, and a status change went to it)
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        return True

    def _emit_change(self, action: str) -> None:
        cells = self.selected_cells()
        if len(cells) or action == "undo":
            self.change_status.emit(action, cells)

    def set_busy(self, busy: bool) -> None:
        """While a core job runs, the table must not change under it: no status edits."""
        for b in self.buttons.values():
            b.setEnabled(not busy)

    def update_protection(self) -> None:
        """Show whether the table may be saved for publication (state from export.gate)."""
        from argusqt.gui import core

        # the session's words when it knows them: a table sharing cells with tables already
        # published is not called clear before their joint audit passed (D-81)
        self.protection_state, words = (self.state_of or core.protection_of)(self.table)
        bad = self.protection_state in ("changed", "unprotected", "refused")
        pending = self.protection_state == "protected"  # the gate has not judged it yet
        self.protection.setText(f"Publication: {words}")
        self.protection.setStyleSheet(
            "color:#b00020;font-weight:bold;"
            if bad
            else "color:#8a4b00;"
            if pending
            else "color:#1b5e20;"
        )
        self.protection.setToolTip(
            "Saving for publication needs a pattern that passes the audit (outside attacker "
            "and insiders) on the current statuses: protect the table (again)."
            if bad
            else "The publication audit runs before saving (Output | View report shows its "
            "verdict now); what fails it is not written."
            if pending
            else "The publication audit runs again before saving if anything changed."
        )

    def set_audit(self, audit) -> None:
        self.audit = audit

    def set_result(self, result) -> None:
        """The last protection result: its audit and, for interval protection, the intervals."""
        self.result = result
        self.audit = getattr(result, "audit", None)

    def refresh(self) -> None:
        """The table's statuses or values changed (protection, manual change)."""
        self.published_box.setEnabled(self.table.published is not None)
        if self.table.published is not None and not self.published_box.isChecked():
            self.published_box.setChecked(True)
        self.model.refresh()
        self._fit_columns()  # secondaries are bold now; rounded values print otherwise
        self.legend.update_counts(self.table)
        self.update_protection()
        cur = self.view.currentIndex()
        if cur.isValid():
            self._current_changed(cur, cur)


def _bold(font: QFont) -> QFont:
    f = QFont(font)
    f.setBold(True)
    return f
