"""Modify | Global recode: fold hierarchies in a tree, group flat codes, .grc load/save, undo.

A recode applies to the variable in every table that uses it (one coding per publication),
unless the user limits it to the current table. Every recode goes through the Session
(`recode_tables` with a `.grc` file or a level digit, `recode_text_tables` with the text typed
here, `undo_recode_tables`), so the batch file written later repeats exactly what the user did
and nothing that was undone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from argusqt.errors import ArgusError
from argusqt.gui.errors import show_error
from argusqt.gui.summary import unsafe_count
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table


class RecodeDialog(QDialog):
    """Recode the explanatory variables of one table; the main window shows the new table."""

    def __init__(self, main: Any, table_no: int, table: Table) -> None:
        super().__init__(main)
        self.main = main
        self.table_no = table_no
        self.table = table
        self.before = unsafe_count(table)
        self.setWindowTitle(f"Global recode — table {table_no}")
        self.loaded: tuple[Path, str] | None = None

        self.var_list = QListWidget()
        for d in table.dims:
            self.var_list.addItem(f"{d.name}  ({'hierarchical' if d.hierarchical else 'flat'})")
        self.var_list.currentRowChanged.connect(self._var_changed)

        # hierarchical page: tree with checkable fold per node
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Code", "Label"])
        self.tree.setColumnWidth(0, 220)
        self.level = QSpinBox()
        self.level.setRange(1, 9)
        self.level.setPrefix("Fold every node at level ")
        fold_level = QPushButton("Apply level")
        fold_level.clicked.connect(self._apply_level)
        tree_page = QWidget()
        tl = QVBoxLayout(tree_page)
        tl.addWidget(
            QLabel(
                "Tick the nodes to collapse: their sub-codes disappear and the node becomes a leaf."
            )
        )
        tl.addWidget(self.tree)
        row = QHBoxLayout()
        row.addWidget(self.level)
        row.addWidget(fold_level)
        row.addStretch(1)
        tl.addLayout(row)

        # flat page: codes list + new code + .grc text
        self.codes = QListWidget()
        self.codes.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.new_code = QLineEdit()
        self.new_code.setPlaceholderText("new code")
        group = QPushButton("Group selected →")
        group.clicked.connect(self._group_selected)
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText(
            "new code: old codes, ranges a-b, open ranges -b / a-\n1: 1-2\n2: 3, 4"
        )
        # as τ-Argus's recode window: missing codes, and a codelist with labels for new codes
        self.missing = QLineEdit()
        self.missing.setObjectName("missingCodes")
        self.missing.setPlaceholderText("empty: as in the metadata")
        self.codelist = QLineEdit()
        self.codelist.setObjectName("codelistFile")
        self.codelist.setPlaceholderText("optional .cdl file")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_codelist)
        flat_page = QWidget()
        fl = QHBoxLayout(flat_page)
        left = QVBoxLayout()
        left.addWidget(QLabel("Codes"))
        left.addWidget(self.codes)
        left.addWidget(self.new_code)
        left.addWidget(group)
        right = QVBoxLayout()
        right.addWidget(QLabel("Recode lines (.grc)"))
        right.addWidget(self.text)
        form = QGridLayout()
        form.addWidget(QLabel("Missing codes:"), 0, 0)
        form.addWidget(self.missing, 0, 1, 1, 2)
        form.addWidget(QLabel("Codelist (labels):"), 1, 0)
        form.addWidget(self.codelist, 1, 1)
        form.addWidget(browse, 1, 2)
        right.addLayout(form)
        fl.addLayout(left, 1)
        fl.addLayout(right, 2)

        self.pages = QStackedWidget()
        self.pages.addWidget(tree_page)
        self.pages.addWidget(flat_page)

        load = QPushButton("Load .grc…")
        save = QPushButton("Save .grc…")
        load.clicked.connect(self._load)
        save.clicked.connect(self._save)
        self.apply_button = QPushButton("Apply")
        self.apply_button.setDefault(True)
        self.undo_button = QPushButton("Undo recode")
        self.apply_button.clicked.connect(self.apply)
        self.undo_button.clicked.connect(self.undo)
        self.counts = QLabel()
        actions = QHBoxLayout()
        for b in (load, save):
            actions.addWidget(b)
        actions.addStretch(1)
        actions.addWidget(self.counts)
        actions.addWidget(self.apply_button)
        actions.addWidget(self.undo_button)

        box = QGroupBox("Variables")
        vl = QVBoxLayout(box)
        vl.addWidget(self.var_list)
        scope = QGroupBox("Apply the recode to")
        sl = QVBoxLayout(scope)
        self.scope_all = QRadioButton("every table that uses the variable")
        self.scope_all.setObjectName("scopeAll")
        self.scope_one = QRadioButton(f"table {table_no} only")
        self.scope_one.setObjectName("scopeOne")
        self.scope_all.setChecked(True)
        sl.addWidget(self.scope_all)
        sl.addWidget(self.scope_one)
        vl.addWidget(scope)
        top = QHBoxLayout()
        top.addWidget(box, 1)
        top.addWidget(self.pages, 3)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(actions)
        lay.addWidget(close)
        self.var_list.setCurrentRow(0)
        self._show_counts()
        self.resize(860, 560)

    # ------------------------------------------------------------------ variable pages
    @property
    def var(self) -> str:
        return self.table.dims[self.var_list.currentRow()].name

    def users(self) -> list[int]:
        """The tables that use the current variable (all get the recode by default)."""
        return list(self.main.session.tables_using(self.var))

    def scope(self) -> int | None:
        """None: every table that uses the variable; a number: that table only."""
        return self.table_no if self.scope_one.isChecked() else None

    def _var_changed(self, row: int) -> None:
        if row < 0:
            return
        users = self.users()
        self.scope_all.setText(
            f"every table that uses {self.var} "
            f"(table{'s' if len(users) > 1 else ''} {', '.join(str(n) for n in users)})"
        )
        self.scope_all.setEnabled(len(users) > 1)
        orig = self.main.session.original_codelist(self.table_no, self.var)
        current = self.table.dims[row]
        if orig.hierarchical:
            self.pages.setCurrentIndex(0)
            self._fill_tree(orig, current)
            self.level.setMaximum(max(1, orig.n_levels - 1))
        else:
            self.pages.setCurrentIndex(1)
            self.codes.clear()
            for i in range(1, len(orig)):
                lab = orig.label(i)
                self.codes.addItem(orig.codes[i] + (f"  — {lab}" if lab != orig.codes[i] else ""))
                self.codes.item(i - 1).setData(Qt.ItemDataRole.UserRole, orig.codes[i])
            self.text.clear()

    def _fill_tree(self, orig: CodeList, current: CodeList) -> None:
        self.tree.clear()
        leaves_now = {current.codes[i] for i in range(len(current)) if current.is_leaf[i]}
        items: list[QTreeWidgetItem | None] = [None] * len(orig)
        for i in range(1, len(orig)):
            p = int(orig.parent[i])
            parent = items[p] if p > 0 else self.tree.invisibleRootItem()
            it = QTreeWidgetItem(
                parent, [orig.codes[i], orig.label(i) if orig.label(i) != orig.codes[i] else ""]
            )
            it.setData(0, Qt.ItemDataRole.UserRole, i)
            if not orig.is_leaf[i]:
                folded = orig.codes[i] in leaves_now
                it.setCheckState(0, Qt.CheckState.Checked if folded else Qt.CheckState.Unchecked)
            items[i] = it
        self.tree.expandToDepth(0)

    def _group_selected(self) -> None:
        codes = [it.data(Qt.ItemDataRole.UserRole).strip() for it in self.codes.selectedItems()]
        new = self.new_code.text().strip()
        if codes and new:
            self.text.appendPlainText(f"{new}: {', '.join(codes)}")
            self.new_code.clear()
            self.codes.clearSelection()

    def folded_codes(self) -> list[str]:
        out: list[str] = []

        def walk(item: QTreeWidgetItem) -> None:
            for k in range(item.childCount()):
                ch = item.child(k)
                if ch.childCount() and ch.checkState(0) == Qt.CheckState.Checked:
                    out.append(ch.text(0))
                walk(ch)

        walk(self.tree.invisibleRootItem())
        return out

    def set_folded(self, codes: list[str]) -> None:
        want = set(codes)

        def walk(item: QTreeWidgetItem) -> None:
            for k in range(item.childCount()):
                ch = item.child(k)
                if ch.childCount():
                    ch.setCheckState(
                        0, Qt.CheckState.Checked if ch.text(0) in want else Qt.CheckState.Unchecked
                    )
                walk(ch)

        walk(self.tree.invisibleRootItem())

    def grc_text(self) -> str:
        """The recode of the current page as `.grc` text (with `<MISSING>` and `<CODELIST>`
        from their fields unless the lines already have them)."""
        if self.pages.currentIndex() == 0:
            return "\n".join(["<TREERECODE>", *self.folded_codes()]) + "\n"
        text = self.text.toPlainText().rstrip()
        keywords = {ln.strip().split(" ")[0].upper() for ln in text.splitlines()}
        lines = [text]
        missing = self.missing.text().split()
        if missing and "<MISSING>" not in keywords:
            lines.append("<MISSING> " + " ".join(missing))
        cdl = self.codelist.text().strip()
        if cdl and "<CODELIST>" not in keywords:
            lines.append(f'<CODELIST> "{cdl}"')
        return "\n".join(lines) + "\n"

    def _browse_codelist(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Codelist with labels", "", "Codelists (*.cdl);;All files (*)"
        )
        if path:
            self.codelist.setText(path)

    # ------------------------------------------------------------------ files
    def _load(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Load recode file", "", "Recode files (*.grc);;All files (*)"
        )
        if path:
            self.load_grc(path)

    def load_grc(self, path: str) -> None:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        self.loaded = (Path(path), text.rstrip() + "\n")
        if text.lstrip().upper().startswith("<TREERECODE>"):
            self.set_folded([ln.strip() for ln in text.splitlines()[1:] if ln.strip()])
        else:
            self.text.setPlainText(text.rstrip())

    def _save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save recode file", "", "Recode files (*.grc)")
        if path:
            try:
                self.main.session.save_text(path, self.grc_text())
            except (ArgusError, OSError) as exc:
                show_error(self, exc, "Save recode file")

    # ------------------------------------------------------------------ apply / undo
    def apply(self) -> bool:
        """Recode the table: with the loaded `.grc` file when unchanged (the batch file then
        names it), else with the text as it stands (written beside the batch file later)."""
        text = self.grc_text()
        loaded = self.loaded
        var, only = self.var, self.scope()
        if loaded is not None and loaded[1] == text:
            path = loaded[0]
            return self._run(lambda s: s.recode_tables(var, path, only), f"{var}: {path.name}")
        folder = loaded[0].parent if loaded is not None else None  # its <CODELIST> names
        return self._run(
            lambda s: s.recode_text_tables(var, text, folder, only), f"{var}: recode typed"
        )

    def _apply_level(self) -> None:
        var, only, level = self.var, self.scope(), int(self.level.value())
        self._run(lambda s: s.recode_tables(var, level, only), f"{var}: level {level}")

    def undo(self) -> bool:
        """Back to the original coding of the variable (other recodes stay)."""
        var, only = self.var, self.scope()
        return self._run(lambda s: s.undo_recode_tables(var, only), f"{var}: recode undone")

    def _run(self, fn, step: str) -> bool:
        session = self.main.session
        try:
            numbers = fn(session)
        except ArgusError as exc:
            show_error(self, exc, "Recode")
            return False
        for no in numbers:
            self.main.table_replaced(no, session.table(no), step)
        new = self.table = session.table(self.table_no)
        self.main._sync_log()
        self._show_counts()
        if self.pages.currentIndex() == 0:
            orig = self.main.session.original_codelist(self.table_no, self.var)
            self._fill_tree(orig, new.dims[self.var_list.currentRow()])
        return True

    def _show_counts(self) -> None:
        self.counts.setText(
            f"Unsafe cells: {self.before:,} before → {unsafe_count(self.table):,} now"
        )
