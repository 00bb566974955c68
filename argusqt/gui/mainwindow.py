"""The main window: τ-Argus menus, toolbar, table tabs, log pane; one core call per action.

Every long action runs on the JobRunner's worker thread; the window only reacts to its
signals, so the event loop never blocks.
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QEventLoop, QSettings, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from argusqt import __version__ as _version
from argusqt.batch.render import write_batch_file
from argusqt.docs import PROJECT_URL, USER_GUIDE
from argusqt.errors import ArgusError, Cancelled, PublicationError
from argusqt.gui import core
from argusqt.gui.errors import show_error
from argusqt.gui.insight import (
    MethodComparisonPanel,
    MethodRun,
    RecodeHistoryPanel,
    RecodeStep,
    insight_from_json,
    insight_to_json,
)
from argusqt.gui.jobs import JobRunner
from argusqt.gui.opendialog import OpenDataDialog
from argusqt.gui.optionsdialog import option
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.resources import icon
from argusqt.gui.savedialog import EXCEL, SaveTableDialog
from argusqt.gui.specify import SpecifyTablesDialog, describe_rules
from argusqt.gui.summary import SummaryDialog, unsafe_count
from argusqt.gui.tableview import TableView
from argusqt.model.status import Status, is_secondary
from argusqt.model.table import Table, TableSpec
from argusqt.session import TIME_LIMIT_DECIDED, is_warning

MAX_RECENT = 8
SESSION_FILTER = "argusqt session (*.aqs)"
GUIDE = USER_GUIDE  # shipped inside the package: Help works offline in an installed app


class MainWindow(QMainWindow):
    """The application window; `session` is the core Session of the open data (or None)."""

    def __init__(self, settings: QSettings | None = None, session_factory=core.new_session) -> None:
        super().__init__()
        core.preload_core()
        self.setWindowTitle("argusqt — statistical disclosure control of tables")
        self.setWindowIcon(icon("app"))
        self.setAcceptDrops(True)
        self.settings = settings if settings is not None else QSettings("argusqt", "argusqt")
        self.session_factory = session_factory
        self.session: Any = None
        self.source: tuple[str, ...] = ()
        self.specs: list[TableSpec] = []
        self.views: list[TableView] = []
        self.last_result: Any = None
        self.result_box: QMessageBox | None = None
        self.runner = JobRunner(self)
        self.runner.busy_changed.connect(self._update_actions)
        #: the session's action log as last saved (None: never): quit, open and recompute
        #: ask before unsaved work on the tables is lost
        self._saved_actions: list[Any] | None = None
        #: per table: the recode steps with the unsafe cells after each (history dock)
        self.recode_steps: dict[int, list[RecodeStep]] = {}
        #: per table: the last run of each protection method tried (methods dock)
        self.method_runs: dict[int, dict[str, MethodRun]] = {}

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.currentChanged.connect(self._tab_changed)
        self.welcome = QLabel(
            "<h2>argusqt</h2><p>Open microdata (<b>File | Open microdata</b>), a table "
            "(<b>File | Open table</b>) or a batch file, or drop data and metadata files here.</p>"
            "<p>Then <b>Specify | Tables</b>, inspect the unsafe cells, and <b>Modify | Protect "
            "table</b>.</p>"
        )
        self.welcome.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.welcome.setWordWrap(True)
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.welcome)
        cl.addWidget(self.tabs)
        self.setCentralWidget(central)

        self.log = QPlainTextEdit()
        self.log.setObjectName("log")
        self.log.setReadOnly(True)
        self.log_dock = QDockWidget("Log", self)
        self.log_dock.setObjectName("logDock")
        self.log_dock.setWidget(self.log)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log_dock)
        self._log_seen = 0

        self.history_panel = RecodeHistoryPanel()
        self.history_dock = self._side_dock(
            "Recode history", "recodeHistoryDock", self.history_panel
        )
        self.methods_panel = MethodComparisonPanel()
        self.methods_panel.use_method.connect(self.use_method)
        self.methods_dock = self._side_dock("Methods compared", "methodsDock", self.methods_panel)
        if self.runner.dock is not None:
            self.tabifyDockWidget(self.runner.dock, self.history_dock)
            self.tabifyDockWidget(self.history_dock, self.methods_dock)

        self.status_label = QLabel("No data")
        self.statusBar().addPermanentWidget(self.status_label)
        # reader and recode warnings: a count the user cannot miss, a click shows the log
        self.warnings: list[str] = []
        self.warning_button = QPushButton()
        self.warning_button.setObjectName("warningButton")
        self.warning_button.setFlat(True)
        self.warning_button.setStyleSheet("color: #9a5b00; font-weight: bold;")
        self.warning_button.clicked.connect(self.show_log)
        self.warning_button.hide()
        self.statusBar().addPermanentWidget(self.warning_button)

        self._make_actions()
        self._make_menus()
        self._make_toolbar()
        self._restore()
        self._update_actions()
        self._update_status()

    # ================================================================== construction
    def _side_dock(self, title: str, name: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        dock.hide()
        return dock

    def _act(
        self, key: str, text: str, slot, shortcut=None, icon_name: str | None = None, tip: str = ""
    ):
        a = QAction(icon(icon_name) if icon_name else icon(""), text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
            a.setToolTip(tip)
        a.triggered.connect(lambda _=False: slot())
        self.actions[key] = a
        return a

    def _make_actions(self) -> None:
        self.actions: dict[str, QAction] = {}
        A = self._act
        A(
            "open_micro",
            "Open &microdata…",
            self.open_microdata,
            "Ctrl+M",
            "open_microdata",
            "Open a microdata file and its metadata",
        )
        A(
            "open_table",
            "Open &table…",
            self.open_table,
            "Ctrl+T",
            "open_table",
            "Open tabular input and its metadata",
        )
        A(
            "open_batch",
            "Open &batch process…",
            self.open_batch,
            "Ctrl+B",
            "open_batch",
            "Run a batch (.arb) file",
        )
        A(
            "open_session",
            "Open sess&ion…",
            self.open_session,
            None,
            None,
            "Open a saved session (.aqs): data, tables, recodes and statuses",
        )
        A(
            "save_session",
            "Sa&ve session…",
            self.save_session,
            None,
            None,
            "Save the specifications, recodes, status changes and results (.aqs)",
        )
        A("exit", "E&xit", self.close, QKeySequence.StandardKey.Quit)
        A("undo", "&Undo", self.undo, "Ctrl+Z", None, "Take back the last action on a table")
        A("redo", "&Redo", self.redo, "Ctrl+Shift+Z", None, "Do the last undone action again")
        self.actions["redo"].setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        A(
            "spec_meta",
            "&Metadata…",
            self.edit_metadata,
            "Ctrl+D",
            "metadata",
            "View and edit the metadata",
        )
        A(
            "spec_tables",
            "&Tables…",
            self.specify_tables,
            "Ctrl+K",
            "specify_tables",
            "Specify tables and sensitivity rules",
        )
        A("select_table", "&Select table…", self.select_table, "Ctrl+L")
        A(
            "protect",
            "&Protect table…",
            self.protect_table,
            "Ctrl+P",
            "protect",
            "Suppress, round or adjust the current table",
        )
        A(
            "recode",
            "&Global recode…",
            self.recode,
            "Ctrl+R",
            "recode",
            "Recode an explanatory variable in every table that uses it (or in this table only)",
        )
        A("apriori", "Apply &a-priori file…", self.apply_apriori, None)
        A("ckm_ptable", "Cell &key ptable…", self.choose_ckm_ptable, None)
        A(
            "summary",
            "Table s&ummary…",
            self.show_summary,
            "Ctrl+U",
            "summary",
            "Cells, contributors, value and cost per status",
        )
        A(
            "save_table",
            "&Save table…",
            self.save_table,
            QKeySequence.StandardKey.Save,
            "save_table",
            "Write the safe table",
        )
        A("view_report", "View &report…", self.view_report, None, "report")
        A("ckm_loss", "Cell key &loss and risk…", self.show_ckm_loss, None)
        A("gen_apriori", "&Generate a-priori file…", self.generate_apriori, None)
        A("write_batch", "Write &batch file…", self.write_batch_file, None)
        A("guide", "&User guide", self.show_guide, QKeySequence.StandardKey.HelpContents)
        A("online", "argusqt &online", self.show_online)
        A("options", "&Options…", self.show_options)
        A("about", "&About argusqt", self.show_about)

    def _make_menus(self) -> None:
        mb = self.menuBar()
        a = self.actions
        m = mb.addMenu("&File")
        for k in ("open_micro", "open_table", "open_batch"):
            m.addAction(a[k])
        m.addSeparator()
        m.addAction(a["open_session"])
        m.addAction(a["save_session"])
        m.addSeparator()
        self.recent_menu = m.addMenu("Recent files")
        m.addSeparator()
        m.addAction(a["exit"])
        m = mb.addMenu("&Edit")
        m.addAction(a["undo"])
        m.addAction(a["redo"])
        m = mb.addMenu("&Specify")
        m.addAction(a["spec_meta"])
        m.addAction(a["spec_tables"])
        m = mb.addMenu("&Modify")
        for k in ("select_table", "protect", "recode", "apriori", "ckm_ptable", "summary"):
            m.addAction(a[k])
        m = mb.addMenu("&Output")
        for k in ("save_table", "view_report", "ckm_loss", "gen_apriori", "write_batch"):
            m.addAction(a[k])
        m = mb.addMenu("&Help")
        for k in ("guide", "online", "options", "about"):
            m.addAction(a[k])
        m.insertSeparator(a["about"])
        self._rebuild_recent()

    def _make_toolbar(self) -> None:
        tb = self.addToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextUnderIcon)
        a = self.actions
        for k in (
            "open_micro",
            "open_table",
            "open_batch",
            None,
            "spec_tables",
            "protect",
            "recode",
            "summary",
            None,
            "save_table",
            "view_report",
        ):
            if k is None:
                tb.addSeparator()
            else:
                tb.addAction(a[k])
        self.toolbar = tb

    # ================================================================== state
    def _restore(self) -> None:
        geo = self.settings.value("geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(1180, 780)
        state = self.settings.value("windowState")
        if state is not None:
            self.restoreState(state)
        else:
            self.resizeDocks([self.log_dock], [130], Qt.Orientation.Vertical)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        pending = getattr(self, "_close_pending", False)
        if not pending and not self.confirm_discard("quit"):
            event.ignore()
            return
        if self.runner.busy:
            # never destroy a running thread: ask the job for its best safe result, close after
            # (the user agreed to quit: what the job returns is not asked about again)
            self.runner.cancel()
            if not pending:
                self._close_pending = True
                self.runner.job_finished.connect(self.close)
                self.statusBar().showMessage("Stopping the running job before closing…")
            event.ignore()
            return
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState())
        self.settings.sync()
        super().closeEvent(event)

    # ================================================================== unsaved work
    @property
    def dirty(self) -> bool:
        """Work on the tables (recodes, status changes, a-priori files, protection) that is
        not in a session file: the action log differs from the one last saved or opened."""
        s = self.session
        if s is None or not s.tables:
            return False
        if not s.has_table_work():
            return False
        actions = list(s.actions)
        saved = self._saved_actions
        return (
            saved is None
            or len(saved) != len(actions)
            or any(a is not b for a, b in zip(saved, actions, strict=True))
        )

    @dirty.setter
    def dirty(self, value: bool) -> None:
        """False: what is there now counts as saved (after Save session, or a test's end)."""
        s = self.session
        self._saved_actions = None if value or s is None else list(getattr(s, "actions", []))
        self._update_title()

    def _update_title(self) -> None:
        name = Path(self.source[1]).name if len(self.source) > 1 else ""
        title = (
            f"argusqt — {name}" if name else "argusqt — statistical disclosure control of tables"
        )
        self.setWindowTitle(title + (" *" if self.dirty else ""))

    def confirm_discard(self, what: str, tables: list[int] | None = None) -> bool:
        """Ask before unsaved work is lost; True = go ahead (Save wrote a session file first,
        or Discard). `what`: "quit", "open" or "recompute" (`tables`: whose work goes)."""
        if not self.dirty:
            return True
        if what == "recompute":
            names = ", ".join(str(n) for n in tables or [])
            question = (
                f"Computing the tables again drops the recodes, status changes and protection "
                f"of table{'s' if len(tables or []) > 1 else ''} {names}."
            )
        else:
            question = {
                "quit": "Quitting loses them.",
                "open": "Opening other data or a session replaces them.",
            }[what]
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Unsaved changes",
            "The tables have recodes, status changes or protection that are not saved in a "
            f"session file. {question}\n\nSave the session first?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("unsavedBox")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        self.unsaved_box = box
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Discard:
            return True
        if answer != QMessageBox.StandardButton.Save:
            return False
        self.save_session()
        if self.runner.busy:  # the session file is written on the worker: wait for it
            loop = QEventLoop()
            self.runner.job_finished.connect(loop.quit)
            loop.exec()
            self.runner.job_finished.disconnect(loop.quit)
        return not self.dirty

    @property
    def tables(self) -> list[Table]:
        return [v.table for v in self.views]

    def current_table_no(self) -> int | None:
        i = self.tabs.currentIndex()
        return i + 1 if i >= 0 and self.views else None

    def current_view(self) -> TableView | None:
        i = self.tabs.currentIndex()
        return self.views[i] if 0 <= i < len(self.views) else None

    def _update_actions(self, busy: bool | None = None) -> None:
        busy = self.runner.busy if busy is None else busy
        has_data = self.session is not None
        has_table = bool(self.views)
        for k, a in self.actions.items():
            if k in ("exit", "guide", "online", "about", "options"):
                a.setEnabled(True)
            elif k in ("open_micro", "open_table", "open_batch", "open_session"):
                a.setEnabled(not busy)
            elif k in ("spec_meta", "spec_tables", "save_session"):
                a.setEnabled(not busy and has_data)
            else:
                a.setEnabled(not busy and has_table)
        self.recent_menu.setEnabled(not busy)
        for v in self.views:
            v.set_busy(busy)
        self._update_undo(busy)

    def _update_undo(self, busy: bool | None = None) -> None:
        """Edit | Undo and Redo name the action they would take back or do again."""
        if "undo" not in getattr(self, "actions", {}):
            return
        busy = self.runner.busy if busy is None else busy
        for key, word in (("undo", "Undo"), ("redo", "Redo")):
            label = None if busy else getattr(self.session, f"{key}_label", None)
            what = label() if callable(label) else None
            self.actions[key].setText(f"&{word} {what}" if what else f"&{word}")
            self.actions[key].setEnabled(what is not None)

    def _tab_changed(self, _index: int) -> None:
        self._update_status()
        self._show_insight()

    def _update_status(self) -> None:
        self._update_undo()
        self._update_title()
        view = self.current_view()
        self.welcome.setVisible(not self.views)
        self.tabs.setVisible(bool(self.views))
        if view is None:
            src = Path(self.source[1]).name if len(self.source) > 1 else ""
            self.status_label.setText(f"Data: {src}" if src else "No data")
            if self.session is not None:  # data open, no table yet (a cancelled Specify)
                self.welcome.setText(
                    f"<h2>{html.escape(src or 'Data')} is open</h2><p>Next: <b>Specify | "
                    "Tables</b> (Ctrl+K) to choose the variables and safety rules of a table.</p>"
                )
            return
        t = view.table
        self.status_label.setText(
            f"Table {self.tabs.currentIndex() + 1}: {t.n_cells:,} cells, "
            f"{unsafe_count(t):,} unsafe, {int(is_secondary(t.status).sum()):,} secondary"
            f" — {view.protection.text().removeprefix('Publication: ')}"
        )

    # ================================================================== log
    def log_message(self, text: str) -> None:
        self.log.appendPlainText(time.strftime("%H:%M:%S  ") + text)

    def _sync_log(self) -> None:
        """Append the session's new log entries (the core keeps its own log); warnings are
        highlighted and counted in the status bar."""
        if self.session is None:
            return
        entries = self.session.log
        new_warnings = []
        for e in entries[self._log_seen :]:
            text = str(e.message)
            if is_warning(text):
                new_warnings.append(text)
                self.log.appendHtml(
                    f"{e.when.strftime('%H:%M:%S')}&nbsp;&nbsp;"
                    f'<span style="color:#9a5b00"><b>⚠</b> {html.escape(text)}</span>'
                )
            else:
                self.log.appendPlainText(e.when.strftime("%H:%M:%S  ") + text)
        self._log_seen = len(entries)
        if new_warnings:
            self.warnings += new_warnings
            self._show_warning_count()
            first = new_warnings[0].lstrip()
            if first.lower().startswith("warning"):  # the readers' own "warning:" prefix
                first = first[len("warning") :].lstrip(" :")
            self.statusBar().showMessage(f"Warning: {first}", 15000)

    def _show_warning_count(self) -> None:
        n = len(self.warnings)
        self.warning_button.setVisible(n > 0)
        self.warning_button.setText(f"⚠ {n} warning{'s' if n != 1 else ''}")
        tip = "\n".join(self.warnings[:10]) + (f"\n… and {n - 10} more" if n > 10 else "")
        self.warning_button.setToolTip(tip + "\n\nClick to show the log.")

    def show_log(self) -> None:
        """Bring the log pane into view (the warnings are there, highlighted)."""
        self.log_dock.show()
        self.log_dock.raise_()
        self.log.setFocus()

    # ================================================================== recent files
    def _recent(self, key: str = "recent") -> list[str]:
        v = self.settings.value(key, [])
        if isinstance(v, str):
            v = [v]
        return [str(x) for x in (v or [])]

    def _table_totals(self, data: str) -> tuple[int, bool]:
        """The totals mode last chosen for this table file, so Recent files and a dropped
        file read it as File | Open table did (entries "path|1T")."""
        key = str(Path(data).resolve())
        for entry in self._recent("tableTotals"):
            path, _, mode = entry.rpartition("|")
            if path == key and mode[:1] in ("0", "1", "2"):
                return int(mode[0]), mode.endswith("T")
        return 0, False

    def _remember_totals(self, data: str, totals: tuple[int, bool]) -> None:
        key = str(Path(data).resolve())
        entries = [e for e in self._recent("tableTotals") if e.rpartition("|")[0] != key]
        if totals != (0, False):
            entries.insert(0, f"{key}|{totals[0]}{'T' if totals[1] else ''}")
        self.settings.setValue("tableTotals", entries[: 4 * MAX_RECENT])

    def add_recent(self, kind: str, *paths: str) -> None:
        entry = "|".join([kind, *[str(Path(p).resolve()) for p in paths]])
        rec = [e for e in self._recent() if e != entry]
        rec.insert(0, entry)
        self.settings.setValue("recent", rec[:MAX_RECENT])
        self._rebuild_recent()

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        rec = self._recent()
        for i, entry in enumerate(rec, 1):
            kind, *paths = entry.split("|")
            text = f"&{i}  {kind}: " + " + ".join(Path(p).name for p in paths)
            act = self.recent_menu.addAction(text)
            act.setToolTip(" + ".join(paths))
            act.triggered.connect(lambda _=False, k=kind, p=paths: self._open_recent(k, p))
        if not rec:
            self.recent_menu.addAction("(none)").setEnabled(False)

    def _open_recent(self, kind: str, paths: list[str]) -> None:
        if kind == "microdata":
            self.open_microdata(*paths)
        elif kind == "table":
            self.open_table(*paths)
        elif kind == "batch":
            self.open_batch(paths[0])
        elif kind == "session":
            self.open_session(paths[0])

    # ================================================================== drag and drop
    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_paths(paths)

    def open_paths(self, paths: list[str]) -> None:
        """Open dropped or command-line files: a .aqs session or .arb runs; data (+ .rda) opens."""
        ps = [Path(p) for p in paths]
        aqs = [p for p in ps if p.suffix.lower() == ".aqs"]
        if aqs:
            self.open_session(str(aqs[0]))
            return
        arb = [p for p in ps if p.suffix.lower() in core.BATCH_SUFFIXES]
        if arb:
            self.open_batch(str(arb[0]))
            return
        meta = next((p for p in ps if p.suffix.lower() in core.META_SUFFIXES), None)
        tab = next((p for p in ps if p.suffix.lower() in core.TABLE_SUFFIXES), None)
        data = next(
            (p for p in ps if p.suffix.lower() not in core.META_SUFFIXES | core.TABLE_SUFFIXES),
            None,
        )
        if tab is not None:
            meta = meta or core.proposed_metadata(tab)
            self.open_table(str(tab), str(meta) if meta else None)
        elif data is not None:
            meta = meta or core.proposed_metadata(data)
            self.open_microdata(str(data), str(meta) if meta else None)
        elif meta is not None:  # a .rda alone: its data file beside it, else ask for it
            found = core.proposed_data(meta)
            if found is not None and found.suffix.lower() in core.TABLE_SUFFIXES:
                self.open_table(str(found), str(meta))
            else:
                self.open_microdata(str(found) if found else None, str(meta))

    # ================================================================== File
    def _start_dir(self) -> str:
        return str(self.settings.value("lastDir", "") or "")

    def open_microdata(self, data: str | None = None, meta: str | None = None) -> None:
        self._open_data("microdata", data, meta)

    def open_table(
        self,
        data: str | None = None,
        meta: str | None = None,
        totals: tuple[int, bool] | None = None,
    ) -> None:
        """File | Open table; `totals`: the totals mode and keep-status flag when both files
        are given (None: as last chosen for this file; the dialog asks otherwise)."""
        self._open_data("table", data, meta, totals)

    def _open_data(
        self, kind: str, data: str | None, meta: str | None, totals: tuple[int, bool] | None = None
    ) -> None:
        if not self.confirm_discard("open"):
            return
        if data is None or meta is None:
            dlg = OpenDataDialog(kind, self._start_dir(), self, self._table_totals)
            self.open_dialog = dlg
            if data:
                dlg.set_data(data)
            if meta:
                dlg.meta_edit.setText(meta)
            if dlg.exec() != QDialog.DialogCode.Accepted:
                return
            data, meta = dlg.paths()
            totals = dlg.read_mode()
        if kind == "table":
            totals = self._table_totals(data) if totals is None else totals
            self._remember_totals(data, totals)
        self.settings.setValue("lastDir", str(Path(data).parent))
        factory = self.session_factory

        def job(progress, cancel):
            s = factory()
            if kind == "microdata":
                s.open_microdata(data, meta)
            else:
                s.open_table_data(data, meta)
                if totals is not None and totals != (0, False):
                    s.set_read_mode(*totals)
            return s

        def done(s) -> None:
            self._set_session(s, (kind, data, meta))
            self.add_recent(kind, data, meta)  # the session logged the opening
            if self.warnings:
                self.statusBar().showMessage(
                    f"Data opened with {len(self.warnings)} warning(s): see the Log pane. "
                    "Next: Specify | Tables.",
                    15000,
                )
                self.show_log()
            else:
                self.statusBar().showMessage("Data opened. Next: Specify | Tables.", 8000)
            if option(self.settings, "options/specifyAfterOpen"):
                self.specify_tables()

        self.runner.start(f"Open {kind}", job, done)

    def _set_session(self, session: Any, source: tuple[str, ...]) -> None:
        self.session = session
        self.source = source
        self.specs = []
        self.recode_steps = {}
        self.method_runs = {}
        self.dirty = False  # as opened: a session file or batch file holds it
        self._log_seen = 0
        self.warnings = []
        self._show_warning_count()
        self._sync_log()
        self._show_tables([])

    def open_batch(self, path: str | None = None) -> None:
        if not self.confirm_discard("open"):
            return
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, "Open batch process", self._start_dir(), "Batch files (*.arb);;All files (*)"
            )
            if not path:
                return

        def done(outcome) -> None:
            s = outcome.session
            self._set_session(s, ("batch", path))
            self.specs = list(s.specs)  # Specify | Tables starts from them
            self.add_recent("batch", path)
            self._show_tables(core.tables_of(s))
            error = outcome.error
            if error is not None:
                self.log_message(f"Batch {path} stopped: {error}")
                show_error(self, error, "Batch file")
            else:
                self.log_message(f"Batch {path} finished")

        self.runner.start(
            "Run batch file", lambda progress, cancel: core.run_batch(path, progress, cancel), done
        )

    def open_session(self, path: str | None = None) -> None:
        """File | Open session: reopen the data, rebuild and audit the saved tables."""
        if not self.confirm_discard("open"):
            return
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, "Open session", self._start_dir(), SESSION_FILTER + ";;All files (*)"
            )
            if not path:
                return
        self.settings.setValue("lastDir", str(Path(path).parent))

        def job(progress, cancel):
            from argusqt.sessionfile import load_session

            return load_session(path, progress, cancel)

        def done(s) -> None:
            self._set_session(s, ("session", path))
            self.specs = list(s.specs)
            self.add_recent("session", path)
            tables = core.tables_of(s)
            self.recode_steps, self.method_runs, skipped = insight_from_json(
                s.insight, len(tables)
            )  # the docks as saved
            for line in skipped:
                s.add_log(line)
            self._show_tables(tables)
            results = s.results
            for no, view in enumerate(self.views, 1):
                if no in results:
                    view.set_result(results[no])
                view.refresh()
            self._update_status()
            self.log_message(f"Session {path} opened: {len(tables)} table(s)")
            self.statusBar().showMessage(f"Session {Path(path).name} opened", 8000)

        self.runner.start("Open session", job, done, on_error=self._job_error)

    def save_session(self, path: str | None = None) -> None:
        """File | Save session: specifications, recodes and the state of every cell."""
        if self.session is None:
            return
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self, "Save session", self._start_dir(), SESSION_FILTER
            )
            if not path:
                return
        if not Path(path).suffix:
            path += ".aqs"
        session = self.session
        session.insight = insight_to_json(self.recode_steps, self.method_runs)  # the docks

        def job(progress, cancel):
            from argusqt.sessionfile import save_session

            return save_session(session, path)

        def done(p) -> None:
            self._sync_log()
            self.add_recent("session", str(p))
            if self.session is session:
                self.dirty = False
            self.log_message(
                f"Session saved to {p} (CONFIDENTIAL: cell statuses, not for publication)"
            )
            self.statusBar().showMessage(f"Session saved to {p}", 8000)

        self.runner.start("Save session", job, done, on_error=self._job_error)

    # ================================================================== Specify
    def specify_tables(self) -> SpecifyTablesDialog | None:
        if self.session is None:
            return None
        choices = core.choices_from_metadata(core.metadata_of(self.session))
        dlg = SpecifyTablesDialog(choices, self.specs, self)
        self.specify_dialog = dlg
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return dlg
        self.compute_tables(dlg.specs)
        return dlg

    def compute_tables(self, specs: list[TableSpec]) -> None:
        """Compute the new and changed tables; every other table keeps its recodes, status
        changes and protection (Session.update_tables). Asks first when work would be lost."""
        session = self.session
        specs = list(specs)
        lost = session.work_lost_by(specs)
        if lost and not self.confirm_discard("recompute", lost):
            return
        kept = session.tables_kept(specs)  # new number → old number

        def job(progress, cancel):
            return session.update_tables(specs, progress, cancel)

        def done(fresh: list[int]) -> None:
            self.specs = specs
            self._sync_log()  # the session logged each table once ("Table 1 computed: …")
            tables = core.tables_of(session)
            for no in fresh:  # what its lines leave out: the rules
                self.log_message(f"Table {no} rules: {describe_rules(specs[no - 1].rules)}")
            old_steps, old_runs = self.recode_steps, self.method_runs
            self.recode_steps = {n: old_steps[o] for n, o in kept.items() if o in old_steps}
            self.method_runs = {n: old_runs[o] for n, o in kept.items() if o in old_runs}
            current = self.tabs.currentIndex()
            self._show_tables(tables)
            if fresh:
                self.tabs.setCurrentIndex(fresh[0] - 1)
            elif 0 <= current < len(tables):
                self.tabs.setCurrentIndex(current)

        self.runner.start("Compute tables", job, done, on_error=self._job_error)

    def _job_error(self, exc: BaseException) -> None:
        self._sync_log()
        self.log_message(f"Error: {exc}")
        show_error(self, exc)

    def _make_view(self, table: Table, title: str) -> TableView:
        """One table view wired like every other (labels option, status changes, status bar)."""
        v = TableView(table, title)
        v.state_of = lambda t: self.session.clipboard_state(t)  # knows tables linked together
        v.copied = self._copied
        v.labels_box.setChecked(option(self.settings, "options/showLabels"))
        v.change_status.connect(self.change_status)
        v.view.selectionModel().currentChanged.connect(lambda *_: self._update_status())
        return v

    def _show_tables(self, tables: list[Table]) -> None:
        self.tabs.clear()
        self.views = []
        for i, t in enumerate(tables, 1):
            title = (
                f"{i}: " + " × ".join(d.name for d in t.dims) + f" | {t.spec.response or 'freq'}"
            )
            v = self._make_view(t, title)
            result = (getattr(self.session, "results", None) or {}).get(i)
            if result is not None:  # a table kept through a recompute keeps its result
                v.set_result(result)
            self.views.append(v)
            self.tabs.addTab(v, title)
        self._update_actions()
        self._update_status()
        self._show_insight()

    def edit_metadata(self) -> None:
        from argusqt.gui.metadataeditor import MetadataEditor

        dlg = MetadataEditor(core.metadata_of(self.session), self)
        dlg.saved.connect(self._metadata_saved)
        self.metadata_dialog = dlg
        dlg.exec()

    def _metadata_saved(self, rda: str) -> None:
        """Offer to read the data again with the metadata just saved (tables are rebuilt)."""
        s = self.session
        data = s.data_path
        if data is None:
            return
        answer = QMessageBox.question(
            self, "Metadata saved", f"Open {Path(data).name} again with {Path(rda).name}?"
        )
        if answer == QMessageBox.StandardButton.Yes:
            if self.metadata_dialog is not None:
                self.metadata_dialog.accept()
            kind = "microdata" if s.kind == "microdata" else "table"
            self._open_data(kind, str(data), rda)

    # ================================================================== Modify
    def select_table(self) -> None:
        names = [self.tabs.tabText(i) for i in range(self.tabs.count())]
        name, ok = QInputDialog.getItem(
            self, "Select table", "Table:", names, self.tabs.currentIndex(), False
        )
        if ok:
            self.tabs.setCurrentIndex(names.index(name))

    def change_status(self, action: str, cells: np.ndarray) -> None:
        """Manual status changes through the Session (argusqt/docs/rules.md §7.2)."""
        view = self.current_view()
        if view is None:
            return
        t = view.table
        table_no = self.current_table_no()
        try:
            if action == "cost":
                value, ok = QInputDialog.getDouble(
                    self,
                    "Set cost",
                    "New cost of the selected cells:",
                    float(t.cost[cells[0]]),
                    0.0,
                    1e15,
                    4,
                )
                if not ok:
                    return
                n = self.session.set_cost(table_no, cells, value)
            elif action == "levels":
                lo, ok = QInputDialog.getDouble(
                    self,
                    "Protection levels",
                    "Lower protection level:",
                    float(t.lpl[cells[0]]),
                    0.0,
                    1e15,
                    t.decimals,
                )
                if not ok:
                    return
                up, ok = QInputDialog.getDouble(
                    self,
                    "Protection levels",
                    "Upper protection level:",
                    float(t.upl[cells[0]]),
                    0.0,
                    1e15,
                    t.decimals,
                )
                if not ok:
                    return
                n = self.session.set_protection_levels(table_no, cells, lo, up)
            elif action == "undo":
                n = self.session.undo_protection(table_no)
                view.set_audit(None)
            else:  # safe, unsafe, protected: the session logs it for "Write batch file"
                n = self.session.set_status(table_no, cells, action)
        except ArgusError as exc:
            show_error(self, exc, "Change status")
            return
        self.log_message(
            f"Table {self.current_table_no()}: {action} on {len(cells)} cell(s), {n} changed"
        )
        view.refresh()
        self._update_status()
        self._show_insight()  # e.g. after Undo suppression no method's pattern is on the table

    def undo(self) -> None:
        self._undo_redo(redo=False)

    def redo(self) -> None:
        self._undo_redo(redo=True)

    def _undo_redo(self, redo: bool) -> None:
        """Edit | Undo / Redo: the session puts the tables back; the views follow."""
        if self.session is None or self.runner.busy:
            return
        what = self.session.redo_label() if redo else self.session.undo_label()
        try:
            numbers = self.session.redo() if redo else self.session.undo()
        except ArgusError as exc:
            show_error(self, exc, "Redo" if redo else "Undo")
            return
        self._sync_log()
        for no in numbers:
            if no > len(self.views):
                continue
            if self.views[no - 1].table is not self.session.table(no):  # a recode's table
                step = f"{'redo' if redo else 'undo'}: {what}"  # for the recode history
                self.table_replaced(no, self.session.table(no), step)
            self.views[no - 1].set_result(self.session.results.get(no))
            self.views[no - 1].refresh()
        self._update_status()

    def protect_table(
        self, method: str | None = None, params: Any = None, linked: bool = False
    ) -> None:
        """Modify | Protect table: one method on the current table, or on all tables (linked)."""
        view = self.current_view()
        if view is None or self.session is None:
            return
        table_no = self.current_table_no()
        assert table_no is not None  # a current view has a number
        if method is None:
            s = self.session
            dlg = ProtectDialog(
                view.title,
                s.protection_methods(),
                s.table_facts(table_no),
                self,
                n_tables=len(self.views),
            )
            dlg.suggest(s.suggest_method(table_no))  # method and time from the table's size
            for key, code in (
                ("options/optMinutes", "OPT"),
                ("options/modMinutes", "MOD"),
                ("options/rndMinutes", "RND"),
            ):
                if self.settings.contains(key) or code == "RND":  # the user's time wins
                    dlg.set_value(code, "max_minutes", option(self.settings, key))
            self.protect_dialog = dlg
            if dlg.exec() != QDialog.DialogCode.Accepted:
                return
            method, params, linked = dlg.method(), dlg.params(), dlg.is_linked()
        session = self.session

        def job(progress, cancel):
            if linked:
                return session.protect_linked(method, params, progress=progress, cancel=cancel)
            return session.protect(table_no, method, params, progress=progress, cancel=cancel)

        def done(result) -> None:
            self._sync_log()
            results = list(result) if isinstance(result, list | tuple) else [result]
            numbers = range(1, len(results) + 1) if linked else [table_no]
            lines: list[str] = []
            for no, r in zip(numbers, results, strict=True):
                self.views[no - 1].set_result(r)
                self.views[no - 1].refresh()
                lines += [*self._result_lines(no, r), ""]
                if not linked:
                    self._record_run(no, r, params)
            cancelled = any(r.cancelled for r in results)
            self._show_result_box(
                "\n".join(lines).strip(),
                "Protection cancelled" if cancelled else "Protection finished",
            )
            self.last_result = results[-1] if not linked else results
            self._update_status()
            if cancelled:  # the session's sentence, as the log and the Solver panel give it
                self.statusBar().showMessage(" ".join(r.cancel_note for r in results))
            self._show_insight(raise_methods=len(self.method_runs.get(table_no, {})) > 1)

        def failed(exc: BaseException) -> None:
            if not isinstance(exc, Cancelled):
                self._job_error(exc)
                return
            # a cancel without an audited pattern: nothing changed, which is no error; the
            # session logged the sentence that says so (the panel and the box repeat it)
            self._sync_log()
            if (
                self.session is None
                or not self.session.log
                or self.session.log[-1].message != str(exc)
            ):
                self.log_message(str(exc))
            self._show_result_box(str(exc), "Protection cancelled")
            self._update_status()
            self.statusBar().showMessage(str(exc))

        title = "all tables (linked)" if linked else f"table {table_no}"
        self.runner.start(f"Protect {title} ({method})", job, done, on_error=failed)

    def _result_lines(self, table_no: int, r: Any) -> list[str]:
        """What the user should know about a protection result (the session logs it once)."""
        lines = [f"Table {table_no}: method {r.method}"]
        if r.cancelled:
            lines.append(r.cancel_note or "Cancelled.")  # the session's sentence
        if r.timed_out:
            lines.append(
                "Time limit reached: the best safe pattern found so far was kept; "
                f"{TIME_LIMIT_DECIDED}."
            )
        t = self.views[table_no - 1].table
        face = t.protection.face if t.protection is not None else "suppress"
        lines += r.outcome_lines(face, t.value)  # rounded / adjusted cells, not "secondaries"
        lines.append(f"CPU time: {r.elapsed:,.1f} s")  # the time limit's clock (D-96)
        # the publication verdict (what saving says) before the outsider audit alone
        verdict = r.verdict if r.verdict is not None else r.audit
        if verdict is not None:
            refused = r.verdict is not None and not r.verdict.ok
            lines.append(("NOT PUBLISHABLE: " if refused else "") + verdict.summary())
        return lines

    # ================================================================== insight docks
    def _record_run(self, table_no: int, r: Any, params: Any) -> None:
        """Remember a protection for the method comparison (the last run per method)."""
        t = self.views[table_no - 1].table
        status = np.asarray(t.status)
        total = float(np.asarray(t.cost, dtype=float)[status != Status.EMPTY].sum())
        info = getattr(t, "protection", None)
        face = info.face if info is not None else "suppress"
        cost = float(r.cost)
        self.method_runs.setdefault(table_no, {})[r.method] = MethodRun(
            r.method, params, face, int(r.n_secondary), cost,
            cost / total if total > 0 else 0.0, r.gap, float(r.elapsed), bool(r.cancelled),
        )  # fmt: skip

    def _show_insight(self, raise_methods: bool = False, raise_history: bool = False) -> None:
        """The recode history and the method comparison of the current table."""
        no = self.current_table_no()
        if no is None:
            self.history_dock.hide()
            self.methods_dock.hide()
            return
        view = self.views[no - 1]
        steps = self.recode_steps.get(no, [])
        if steps:
            self.history_panel.show_steps(view.title, steps)
            if raise_history:
                self.history_dock.show()
                self.history_dock.raise_()
        runs = self.method_runs.get(no, {})
        if runs:
            state = core.protection_of(view.table)[0]
            info = getattr(view.table, "protection", None)
            current = (
                info.method if info is not None and state in ("cleared", "protected") else None
            )
            self.methods_panel.show_runs(view.title, list(runs.values()), current)
            if raise_methods:
                self.methods_dock.show()
                self.methods_dock.raise_()

    def use_method(self, method: str) -> None:
        """Methods dock: protect the current table again with a method tried before (like
        every Protect it solves from the primaries and manual statuses, not from the pattern
        now on the table, which stays until the new one is audited)."""
        no = self.current_table_no()
        run = self.method_runs.get(no or 0, {}).get(method)
        if no is None or run is None or self.runner.busy:
            return
        self.protect_table(method, run.params)

    def _show_result_box(self, text: str, title: str = "Protection finished") -> None:
        box = QMessageBox(
            QMessageBox.Icon.Information,
            title,
            text,
            QMessageBox.StandardButton.Ok,
            self,
        )
        # modal: no second protection (or any change) starts while the result is being read
        box.setWindowModality(Qt.WindowModality.WindowModal)
        self.result_box = box
        box.show()

    def recode(self) -> None:
        view = self.current_view()
        if view is None:
            return
        from argusqt.gui.recodedialog import RecodeDialog

        dlg = RecodeDialog(self, self.current_table_no(), view.table)
        self.recode_dialog = dlg
        dlg.exec()

    def table_replaced(self, table_no: int, table: Table, step: str | None = None) -> None:
        """After a recode the session has a new Table object for `table_no`; `step` names the
        recode for the table's recode history."""
        i = table_no - 1
        old = self.views[i]
        if step is not None:
            steps = self.recode_steps.setdefault(
                table_no, [RecodeStep("as computed", unsafe_count(old.table))]
            )
            steps.append(RecodeStep(step, unsafe_count(table)))
        v = self._make_view(table, old.title)
        v.labels_box.setChecked(old.labels_box.isChecked())
        self.views[i] = v
        current = self.tabs.currentIndex()
        self.tabs.blockSignals(True)  # the current tab stays: a recode may change other tables
        self.tabs.removeTab(i)
        self.tabs.insertTab(i, v, old.title)
        self.tabs.setCurrentIndex(current)
        self.tabs.blockSignals(False)
        old.deleteLater()
        self.method_runs.pop(table_no, None)  # the methods were tried on the old coding
        self._update_status()
        self._show_insight(raise_history=step is not None)

    def apply_apriori(self) -> None:
        table_no = self.current_table_no()
        if table_no is None:
            return
        path, _ = QFileDialog.getOpenFileName(
            self, "Apply a-priori file", self._start_dir(), "A-priori (*.hst);;All files (*)"
        )
        if not path:
            return
        sep, ok = QInputDialog.getText(self, "A-priori file", "Field separator:", text=",")
        if not ok:
            return
        session = self.session

        def job(progress, cancel):
            return session.apply_apriori(table_no, path, sep, True, False)

        def done(_r) -> None:
            self._sync_log()
            self.views[table_no - 1].refresh()
            self._update_status()

        self.runner.start("Apply a-priori file", job, done, on_error=self._job_error)

    def choose_ckm_ptable(self, path: str | None = None) -> bool:
        """Another ptable for the cell key method on this table (the metadata's otherwise;
        a generated one is a choice in the Protect dialog): argusqt/docs/methods.md §16."""
        table_no = self.current_table_no()
        if table_no is None or self.session is None:
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, "Cell key ptable", self._start_dir(), "ptable (*.txt *.csv);;All files (*)"
            )
        if not path:
            return False
        try:
            self.session.set_ckm_ptables(table_no, path)
        except ArgusError as exc:
            self._sync_log()
            self._show_result_box(str(exc), "Cell key ptable")
            return False
        self._sync_log()
        self.statusBar().showMessage(f"Table {table_no}: the cell key method will use {path}")
        return True

    def show_summary(self) -> SummaryDialog | None:
        view = self.current_view()
        if view is None:
            return None
        dlg = SummaryDialog(view.table, view.title, self)
        self.summary_dialog = dlg
        dlg.show()
        return dlg

    # ================================================================== Output
    def save_table(
        self, file_type: int | None = None, options: str | None = None, path: str | None = None
    ) -> None:
        table_no = self.current_table_no()
        if table_no is None:
            return
        if file_type is None or path is None:
            dlg = SaveTableDialog(self._start_dir(), f"table{table_no}", self, self.settings)
            self.save_dialog = dlg
            if dlg.exec() != QDialog.DialogCode.Accepted:
                return
            file_type, options, path = dlg.file_type(), dlg.options(), dlg.path()
        session = self.session
        confidential = file_type == EXCEL and "CF+" in (options or "")

        def job(progress, cancel):
            if file_type == EXCEL:  # the core writes .xlsx for type 1 (argusqt extension)
                xlsx = str(Path(path).with_suffix(".xlsx"))
                kw = {"progress": progress, "cancel": cancel}
                files = session.write_table(table_no, 1, "", xlsx, **kw)
                if confidential:  # asked for explicitly: the internal workbook beside it
                    files.append(session.write_confidential(table_no, xlsx, **kw))
                return ", ".join(str(f) for f in files)
            session.write_table(
                table_no, file_type, options or "", path, progress=progress, cancel=cancel
            )
            return path

        def done(p) -> None:
            self._sync_log()
            self.log_message(f"Table {table_no} written to {p}")
            self.statusBar().showMessage(f"Saved {p}", 8000)
            self._refresh_views()  # a saved table is a partner of others

        def failed(exc: BaseException) -> None:
            self._refresh_view(table_no)
            if isinstance(exc, PublicationError):
                self._publication_refused(table_no, exc)
            else:
                self._job_error(exc)

        self.runner.start("Save table", job, done, on_error=failed)

    def _copied(self, table: Table) -> None:
        """A copy fit for publication is counted as published: the other tables' publication
        lines may change (they are now judged beside it)."""
        if self.session.remember_copied(table):
            self._sync_log()
            self._refresh_views()

    def _refresh_views(self) -> None:
        for no in range(1, len(self.views) + 1):
            self._refresh_view(no)

    def _refresh_view(self, table_no: int) -> None:
        if 0 < table_no <= len(self.views):
            self.views[table_no - 1].update_protection()
        self._update_status()

    def _publication_refused(self, table_no: int, exc: PublicationError) -> None:
        """The gate refused a file for publication: explain, offer to protect again."""
        from argusqt.gui.publicationdialog import PublicationRefusedDialog

        self._sync_log()
        self.log_message(f"Table {table_no} not saved: {exc}")
        dlg = PublicationRefusedDialog(table_no, exc, self)
        self.publication_dialog = dlg
        if dlg.exec() == QDialog.DialogCode.Accepted:
            if self.current_table_no() != table_no:
                self.tabs.setCurrentIndex(table_no - 1)
            self.protect_table()

    def show_ckm_loss(self) -> QDialog | None:
        """The cell key method's loss and risk of the current table (its last CKM run)."""
        from argusqt.gui.ckmloss import CKMLossDialog

        table_no = self.current_table_no()
        result = self.session.results.get(table_no) if self.session and table_no else None
        loss = result.figures.get("loss") if result is not None and result.method == "CKM" else None
        if not loss:
            self.statusBar().showMessage("The table has not been protected by the cell key method")
            return None
        dlg = CKMLossDialog(self.views[table_no - 1].title, loss, self)
        self.ckm_loss_dialog = dlg
        dlg.show()
        return dlg

    def view_report(self) -> None:
        table_no = self.current_table_no()
        if table_no is None or self.session is None:
            return
        try:
            html = self.session.report_html(table_no)
        except ArgusError as exc:
            show_error(self, exc, "Report")
            return
        self._show_html("Report", html)

    def _show_html(self, title: str, html: str, markdown: bool = False) -> QDialog:
        dlg = QDialog(self)
        dlg.setWindowTitle(title)
        browser = QTextBrowser(dlg)
        browser.setOpenExternalLinks(True)
        if markdown:
            browser.setSearchPaths([str(GUIDE.parent)])  # the guide's screenshots
            browser.setMarkdown(html)
            _fit_images(browser.document(), 760)
        else:
            browser.setHtml(html)
        QVBoxLayout(dlg).addWidget(browser)
        dlg.resize(820, 640)
        dlg.show()
        self.html_dialog = dlg
        return dlg

    def generate_apriori(self) -> None:
        table_no = self.current_table_no()
        if table_no is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Generate a-priori file", self._start_dir(), "A-priori (*.hst)"
        )
        if not path:
            return
        session = self.session
        self.runner.start(
            "Generate a-priori file",
            lambda progress, cancel: session.write_apriori(table_no, path),
            lambda _r: self.log_message(
                f"A-priori file written: {path} (CONFIDENTIAL: cell statuses, not for publication)"
            ),
            on_error=self._job_error,
        )

    def write_batch_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Write batch file", self._start_dir(), "Batch files (*.arb)"
        )
        if not path:
            return
        session = self.session
        self.runner.start(
            "Write batch file",
            lambda progress, cancel: write_batch_file(session, path),
            lambda _r: self.log_message(f"Batch file written: {path}"),
            on_error=self._job_error,
        )

    # ================================================================== Help
    def show_guide(self, title: str = "User guide") -> None:
        """The guide shipped inside the package: no browser, no network."""
        if not GUIDE.exists():
            QMessageBox.warning(
                self,
                "User guide",
                f"The user guide is missing from this installation ({GUIDE}). "
                "Reinstall argusqt to get it back.",
            )
            return
        self._show_html(title, GUIDE.read_text(encoding="utf-8"), markdown=True)

    def show_online(self) -> None:
        """The project's own web site; while it has none, the shipped guide, saying so."""
        if PROJECT_URL is None:
            self.show_guide("User guide (argusqt has no web site yet: this guide ships with it)")
            self.log_message(
                f"argusqt has no web site yet; Help → argusqt online shows the guide shipped "
                f"with the program ({GUIDE})"
            )
            return
        if not QDesktopServices.openUrl(QUrl(PROJECT_URL)):
            QMessageBox.information(
                self,
                "argusqt online",
                f"No web browser could be started. The address is {PROJECT_URL}",
            )

    def show_options(self) -> None:
        from argusqt.gui.optionsdialog import OptionsDialog

        dlg = OptionsDialog(self.settings, self)
        self.options_dialog = dlg
        dlg.exec()

    def show_about(self) -> None:
        QMessageBox.about(
            self,
            "About argusqt",
            f"<b>argusqt {_version}</b><br>Statistical disclosure control of tables, "
            "compatible with τ-Argus 4.1 files and batch commands.<br>Free solvers: SCIP and HiGHS.",
        )


def _fit_images(doc: QTextDocument, max_width: int) -> None:
    """Scale the guide's screenshots down to the window (Qt's Markdown has no image width):
    a reader should not scroll sideways to see a picture."""
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isImageFormat():
                image_fmt = fmt.toImageFormat()
                image = doc.resource(
                    QTextDocument.ResourceType.ImageResource, QUrl(image_fmt.name())
                )
                width = image.width() if image is not None else 0
                if width > max_width:
                    image_fmt.setWidth(max_width)
                    image_fmt.setHeight(image.height() * max_width / width)
                    cursor = QTextCursor(doc)
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(
                        fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor
                    )
                    cursor.setCharFormat(image_fmt)
            it += 1
        block = block.next()
