"""The core API: one typed method per user action, used by the GUI, the batch runner and
Python users alike (no Qt).

A Session holds the log, the opened data and metadata, the table specifications, the built
tables (numbered from 1) and the typed log of actions (argusqt/actions.py): every method
appends its action after it succeeded and undo removes actions, so a batch file written
from the log (batch/render.py) replays to the same tables.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from argusqt.actions import (
    Action,
    ApplyApriori,
    OpenMicrodata,
    OpenTableData,
    Recode,
    StatusChange,
)
from argusqt.dataclass import dataclass
from argusqt.errors import ArgusError, SpecificationError, clip_echo
from argusqt.export.gate import protection_state
from argusqt.history import History, capture, describe
from argusqt.io.atomic import install_cleanup as install
from argusqt.io.logbook import Logbook, format_entry
from argusqt.io.outputs import check_outputs
from argusqt.io.rda import write_rda
from argusqt.io.text import resolve_path
from argusqt.model.rulespec import SafetyRules
from argusqt.model.table import Table, TableSpec
from argusqt.progress import CancelToken, ProgressCallback, no_progress
from argusqt.protection.core.result import TIME_LIMIT_DECIDED
from argusqt.workflow import changing, opening, output, protecting, recoding, specifying
from argusqt.workflow.opening import TOTALS_MODES, TabularSource
from argusqt.workflow.output import (
    cell_cause,
    cell_levels,
    published_face,
    spreadsheet_safe,
    table_protection,
)

if TYPE_CHECKING:
    from argusqt.export.audit_report import AuditReport
    from argusqt.io.frames import Roles
    from argusqt.model.codelist import CodeList
    from argusqt.model.metadata import Metadata
    from argusqt.protection.core.advice import Advice
    from argusqt.protection.core.params import MethodParams, TableFacts
    from argusqt.protection.core.registry import MethodDescriptor
    from argusqt.protection.core.result import ProtectionResult


def is_warning(message: str) -> bool:
    """Warnings start with 'warning:' (readers write them so) wherever they come from."""
    return str(message).lstrip().lower().startswith("warning")


P = ParamSpec("P")
R = TypeVar("R")


def undoable(
    label: Callable[..., str] | None = None,
) -> Callable[[Callable[Concatenate[Session, P], R]], Callable[Concatenate[Session, P], R]]:
    """An action on the tables that Edit | Undo can take back (argusqt/history.py): the state
    it changes is kept before it runs; on failure it is put back, so no action half-applies.
    `label(session, *args)` names it; by default the actions it appended to the log do."""

    def wrap(fn: Callable[Concatenate[Session, P], R]) -> Callable[Concatenate[Session, P], R]:
        @functools.wraps(fn)
        def run(self: Session, *args: P.args, **kwargs: P.kwargs) -> R:
            history = self.history
            if history.depth:  # part of an outer action: one step for both
                return fn(self, *args, **kwargs)
            before = capture(self)
            history.depth += 1
            try:
                out = fn(self, *args, **kwargs)
            except BaseException:
                history.rollback(before, self)
                raise
            finally:
                history.depth -= 1
            n = len(before.session.actions)
            new = self.actions[n:] if tuple(self.actions[:n]) == before.session.actions else []
            try:
                name = label(self, *args, **kwargs) if label else describe(new)
            except (TypeError, ValueError, LookupError):
                name = describe(new)
            try:
                history.record(name, before, self)
            except Exception as exc:  # the action stands; only its undo is lost
                history.clear()
                self.add_log(f"warning: undo is not possible for {name} ({exc}); history cleared")
            return out

        return run

    return wrap


@dataclass
class LogEntry:
    """One line of the session's log, with its time."""

    when: datetime
    message: str

    def __str__(self) -> str:
        return format_entry(self.when, self.message).rstrip("\n")


@dataclass
class Session:
    """Everything one user (or one batch file) works on."""

    logbook: Logbook | None = None
    tempdir: Path | None = None
    log: list[LogEntry] = field(default_factory=list)
    kind: str | None = None  # "microdata" | "tabular"
    data_path: Path | None = None
    meta_path: Path | None = None
    metadata: Any = None
    microdata: Any = None
    specs: list[TableSpec] = field(default_factory=list)
    sources: list[TabularSource] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    #: what was done, in order (argusqt/actions.py): batch files and session files hold it
    actions: list[Action] = field(default_factory=list)
    read_mode: tuple[int, bool] = (0, False)  # READTABLE totals mode and keep-status flag
    results: dict[int, ProtectionResult] = field(default_factory=dict)  # table number → last result
    #: tables protected together (table 0): published only after a joint audit
    linked: list[int] = field(default_factory=list)
    linked_cleared: str | None = None  # export.gate.linked_fingerprint when it last passed
    #: every face written for publication from this data (export.shared.Printed): a table
    #: is published only if an attacker reading it beside them all learns no primary
    #: (docs/design.md, D-81); the files stay out there when a table is protected again
    printed: list[Any] = field(default_factory=list)
    #: export.shared.set_print of the sets whose joint audit passed
    printed_cleared: set[str] = field(default_factory=set)
    #: what the windows show beside the tables, JSON-able, kept in session files: per table
    #: number (text), its recode history and the methods compared (gui/insight.py)
    insight: dict[str, Any] = field(default_factory=dict)
    #: Edit | Undo and Redo over the actions on the tables (argusqt/history.py)
    history: History = field(default_factory=History, repr=False, compare=False)
    #: inputs besides the data's own files: the batch file or session file being run
    #: (role, path); no output may be written over them (input_files)
    other_inputs: list[tuple[str, Path]] = field(default_factory=list)
    #: CONFIDENTIAL seed of the methods' random choices (IP's level split,
    #: argusqt/docs/methods.md §11):
    #: kept in session files, never in a publishable output; None until first needed
    protection_seed: int | None = None
    #: CKM ptables given per table (set_ckm_ptables): (counts, magnitudes, small values)
    _ckm_ptables: dict[int, tuple[Any, Any, Any]] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ log
    # ------------------------------------------------------------------ log
    def add_log(self, message: str) -> None:
        """Keep a log entry and append it to the logbook file if there is one (echoed input
        longer than a few hundred characters cut: errors.clip_echo)."""
        entry = LogEntry(datetime.now(), clip_echo(str(message)))
        self.log.append(entry)
        if self.logbook is not None:
            self.logbook.write(entry.message, entry.when)

    def set_logbook(self, path: str | Path) -> None:
        """Append the log to `path` from now on (never to one of the inputs)."""
        self.check_outputs(path, action="logbook")
        self.logbook = Logbook(path)
        self.add_log(f"Logbook: {Path(path)}")

    def input_files(self) -> list[tuple[str, Path]]:
        """(role, path) of every file this session read: data, metadata, the hierarchies and
        codelists they name, recode and a-priori files, the batch or session file."""
        found: list[tuple[str, Path]] = list(self.other_inputs)
        metas: list[tuple[Any, Path | None]] = []
        if self.kind == "microdata" and self.data_path is not None:
            found.append(("microdata", self.data_path))
        for src in self.sources:
            found += [("table file", src.tab_path), ("metadata", src.meta_path)]
            metas.append((src.metadata, src.meta_path))
        if self.meta_path is not None:
            found.append(("metadata", self.meta_path))
            metas.append((self.metadata, self.meta_path))
        for meta, where in metas:
            for var in getattr(meta, "variables", []) or []:
                for role, name in (("hierarchy", var.hier_file), ("codelist", var.codelist)):
                    if name and where is not None:
                        try:
                            found.append((role, resolve_path(name, where)))
                        except ArgusError:
                            pass  # never read: nothing to protect
        for a in self.actions:
            if isinstance(a, Recode) and a.source is not None:
                found.append(("recode file", a.source))
            elif isinstance(a, ApplyApriori):
                found.append(("a-priori file", a.path))
        return found

    def check_outputs(self, *paths: str | Path, action: str = "write") -> None:
        """SpecificationError, before anything is written, when an output is an input."""
        check_outputs(paths, self.input_files(), action)

    def _log_lines(self, lines: list[str]) -> None:
        for line in lines:
            self.add_log(str(line))

    @property
    def warnings(self) -> list[LogEntry]:
        """Log entries that warn the user (readers, recodes, a-priori files): the GUI shows
        their count in the status bar."""
        return [e for e in self.log if is_warning(e.message)]

    # ------------------------------------------------------------------ state
    def clear(self) -> None:
        """Forget data, metadata, specifications and tables (the log stays)."""
        self.kind = None
        self.data_path = self.meta_path = None
        self.metadata = self.microdata = None
        self.specs = []
        self.sources = []
        self.tables = []
        self.results = {}
        self.linked = []
        self.printed = []  # other data: what was published from the last has no cell in common
        self.printed_cleared = set()
        self.actions = []
        self.insight = {}
        self.add_log("Session cleared")

    def clear_tables(self) -> None:
        """Forget the specified and computed tables but keep the opened data (Specify tables again)."""
        self.specs = []
        self.tables = []
        self.results = {}
        self.linked = []
        for src in self.sources[-1:]:
            src.spec = None
        self.sources = self.sources[-1:]
        opened: list[Action] = [
            a for a in self.actions if isinstance(a, OpenMicrodata | OpenTableData)
        ]
        self.actions = opened[-1:]

    def specify_tables(
        self,
        specs: Sequence[TableSpec],
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> list[Table]:
        """Specify | Tables again: forget the tables, specify these (rules included) and
        compute them."""
        self.clear_tables()
        for spec in specs:
            self.specify_table(spec)
        mode = self.read_mode if self.kind == "tabular" else (0, False)  # as opened
        return self.compute_tables(progress, cancel, *mode)

    def table(self, table_no: int) -> Table:
        """Table `table_no` (1-based); SpecificationError naming the valid range."""
        if not self.tables:
            raise SpecificationError(
                f"there is no table {table_no}: no tables have been computed yet"
            )
        if not 1 <= table_no <= len(self.tables):
            raise SpecificationError(
                f"there is no table {table_no}: tables are numbered 1 to {len(self.tables)}"
            )
        return self.tables[table_no - 1]

    # ------------------------------------------------------------------ open
    def open_microdata(self, data_path: str | Path, meta_path: str | Path) -> None:
        """Read the metadata and the microdata file (replaces any earlier data and tables); a
        large fixed-format file is read when the tables are computed (io/fixedstream.py)."""
        opening.open_microdata(self, data_path, meta_path)

    def open_microdata_frame(
        self,
        data: Any,
        roles: Roles,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> None:
        """Microdata from a data frame (pandas, polars, pyarrow) or a Parquet/CSV file, its
        columns' roles given in Python instead of an `.rda` (replaces earlier data and
        tables). Large files are tabulated chunk by chunk later (io.frames)."""
        opening.open_microdata_frame(self, data, roles, progress, cancel)

    @property
    def from_frame(self) -> bool:
        """Microdata opened from a data frame or Parquet/CSV file: no `.rda` to name."""
        return self.kind == "microdata" and self.meta_path is None

    def write_microdata_files(self, beside: str | Path) -> list[Path]:
        """Write the data frame's microdata next to a session or batch file being saved, as
        fixed-width data + generated `.rda` (+ `.hrc`, `.cdl`), one atomic set; returns
        [data, metadata, side files…]. The session keeps reading from the frame."""
        return opening.write_microdata_files(self, beside)

    def write_temporary_tables(self, beside: str | Path) -> dict[Path, tuple[Path, Path]]:
        """Write the ready tables the Python API put in a temporary folder next to a session or
        batch file being saved (`.tab` + `.rda` + copies of their `.hrc`/`.cdl`, one atomic
        set); returns old table path → (table, metadata) written."""
        return opening.write_temporary_tables(self, beside)

    def open_table_data(self, tab_path: str | Path, meta_path: str | Path) -> None:
        """Add a table file with its metadata (several may form a linked table set)."""
        opening.open_table_data(self, tab_path, meta_path)

    def set_read_mode(self, totals_mode: int, keep_status: bool = False) -> None:
        """How table files are read (File | Open table's Totals, `<READTABLE> n[T]`): totals
        checked (0), recomputed (1) or taken as given (2); `keep_status` keeps the statuses
        given on total lines. Used by every later compute of this data."""
        opening.set_read_mode(self, totals_mode, keep_status)

    # ------------------------------------------------------------------ specify
    def specify_table(self, spec: TableSpec) -> int:
        """Add a table specification; returns its number. Variables are checked against the metadata."""
        return specifying.specify_table(self, spec)

    def set_safety_rules(self, rules: SafetyRules, table_no: int | None = None) -> None:
        """Set the safety rules of a specified table (default: the last one)."""
        specifying.set_safety_rules(self, rules, table_no)

    # ------------------------------------------------------------------ compute
    def compute_tables(
        self,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        totals_mode: int = 0,
        keep_status: bool = False,
    ) -> list[Table]:
        """Build every specified table, apply the safety rules and costs."""
        return specifying.compute_tables(self, progress, cancel, totals_mode, keep_status)

    def _distances(self, table: Table) -> list[list[int]] | None:
        return specifying.distances(self, table)

    # ------------------------------------------------------------------ recompute what changed
    def tables_kept(self, specs: Sequence[TableSpec]) -> dict[int, int]:
        """Specify | Tables again: new table number → old number of each computed table whose
        specification did not change (it keeps its recodes, status changes and protection).

        Only microdata tables are kept (a table file is read again as a whole), and tables
        protected together are kept only if the table set does not change at all."""
        return specifying.tables_kept(self, specs)

    def work_lost_by(self, specs: Sequence[TableSpec]) -> list[int]:
        """The computed tables (old numbers) whose recodes, status changes, a-priori files or
        protection Specify | Tables with `specs` would drop: the GUI asks before that."""
        return specifying.work_lost_by(self, specs)

    def update_tables(
        self,
        specs: Sequence[TableSpec],
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> list[int]:
        """Specify | Tables → Compute: only new and changed tables are computed; every other
        table keeps its Table, recodes, status changes and protection (renumbered when tables
        before it were removed). Returns the numbers of the tables computed now."""
        return specifying.update_tables(self, specs, progress, cancel)

    def has_table_work(self) -> bool:
        """Recodes, status changes, a-priori files or protection in the log: work a user
        loses if the session is not saved (writes and specifications are quick to redo)."""
        return specifying.has_table_work(self)

    # ------------------------------------------------------------------ modify
    @undoable()
    def apply_apriori(
        self,
        table_no: int,
        path: str | Path,
        sep: str = ",",
        ignore_errors: bool = True,
        expand_trivial: bool = False,
    ) -> Any:
        """Apply an a-priori (`.hst`) file to a table; returns the module's report."""
        return changing.apply_apriori(self, table_no, path, sep, ignore_errors, expand_trivial)

    def recode(self, table_no: int, var: str, file_or_level: str | Path | int) -> Table:
        """Recode one explanatory variable of a table with a `.grc` file or a hierarchy level
        (recodes start from the original codes; manual status changes are lost)."""
        return self._recode(recoding.recode_action(table_no, var, file_or_level))

    def recode_text(
        self, table_no: int, var: str, grc_text: str, folder: str | Path | None = None
    ) -> Table:
        """Recode with `.grc` text (typed in the GUI); relative `<CODELIST>` names in it are
        found in `folder`. A batch file written later gets the text as a file beside it."""
        where = Path(folder) if folder is not None else None
        return self._recode(Recode(table_no, var, grc_text=grc_text, folder=where))

    @undoable()
    def _recode(self, action: Recode) -> Table:
        return recoding.recode_all(self, [action])[0]

    @undoable(lambda s, table_no, var: f"removal of the recode of {var} in table {table_no}")
    def undo_recode(self, table_no: int, var: str) -> Table:
        """Back to the original coding of `var` (other recodes stay): its recodes leave the
        log, and the table is rebuilt from what remains, as a batch file would rebuild it."""
        return recoding.undo_recode(self, table_no, var)

    # ------------------------------------------------------------------ recode across tables
    def tables_using(self, var: str) -> list[int]:
        """Numbers of the computed tables that have `var` as an explanatory variable."""
        return recoding.tables_using(self, var)

    @undoable()
    def recode_tables(
        self, var: str, file_or_level: str | Path | int, only: int | None = None
    ) -> list[int]:
        """Recode `var` in every table that uses it (a variable has one coding in a
        publication), or in table `only`; all or none. Returns the tables recoded."""
        numbers = recoding.recode_targets(self, var, only)
        recoding.require_all_unprotected(self, numbers, var)
        actions = [recoding.recode_action(no, var, file_or_level) for no in numbers]
        recoding.recode_all(self, actions)
        return numbers

    @undoable()
    def recode_text_tables(
        self, var: str, grc_text: str, folder: str | Path | None = None, only: int | None = None
    ) -> list[int]:
        """`recode_tables` with `.grc` text typed in the GUI (see `recode_text`)."""
        where = Path(folder) if folder is not None else None
        numbers = recoding.recode_targets(self, var, only)
        recoding.require_all_unprotected(self, numbers, var)
        recoding.recode_all(
            self, [Recode(no, var, grc_text=grc_text, folder=where) for no in numbers]
        )
        return numbers

    @undoable(
        lambda s, var, only=None: (
            f"removal of the recode of {var}"
            + (f" in table {only}" if only is not None else " in every table")
        )
    )
    def undo_recode_tables(self, var: str, only: int | None = None) -> list[int]:
        """Back to the original coding of `var` in every table recoded on it (or in table
        `only`); checked for all before any changes. Returns the tables changed."""
        return recoding.undo_recode_tables(self, var, only)

    # ------------------------------------------------------------------ manual changes
    def set_status(
        self, table_no: int, cells: Sequence[int] | np.ndarray, status: StatusChange
    ) -> int:
        """Make cells "safe", "unsafe" or "protected" (argusqt/docs/rules.md §7.2);
        returns the number of cells changed."""
        if status not in ("safe", "unsafe", "protected"):
            raise SpecificationError(
                f"expected the status safe, unsafe or protected, got {status!r}"
            )
        return self._record_change(table_no, status, cells)

    def set_cost(self, table_no: int, cells: Sequence[int] | np.ndarray, cost: float) -> int:
        """The cost of suppressing the cells; returns the number of cells changed."""
        return self._record_change(table_no, "cost", cells, float(cost))

    def set_protection_levels(
        self, table_no: int, cells: Sequence[int] | np.ndarray, lower: float, upper: float
    ) -> int:
        """The lower and upper protection levels of unsafe cells; returns cells changed."""
        return self._record_change(table_no, "levels", cells, float(lower), float(upper))

    @undoable()
    def _record_change(
        self,
        table_no: int,
        change: StatusChange,
        cells: Sequence[int] | np.ndarray,
        value: float | None = None,
        upper: float | None = None,
    ) -> int:
        return changing.record_change(self, table_no, change, cells, value, upper)

    @undoable(lambda s, table_no: f"removal of the secondary suppressions of table {table_no}")
    def undo_protection(self, table_no: int) -> int:
        """Undo the secondary suppressions (and published values) of a method; its run leaves
        the log. Tables protected together are undone together. Returns cells changed."""
        return changing.undo_protection(self, table_no)

    # ------------------------------------------------------------------ undo / redo
    def undo_label(self) -> str | None:
        """What Edit | Undo would take back, e.g. 'recode Size in table 1' (None: nothing)."""
        return self.history.undo_label(self)

    def redo_label(self) -> str | None:
        return self.history.redo_label(self)

    def undo(self) -> list[int]:
        """Take back the last action on the tables: statuses, recodes, protection and the
        action log exactly as before it. Returns the numbers of the tables it changed."""
        return self._step_back_or_forth(redo=False)

    def redo(self) -> list[int]:
        """Do the last undone action again (its stored result: a protection is not re-run)."""
        return self._step_back_or_forth(redo=True)

    def _step_back_or_forth(self, redo: bool) -> list[int]:
        states = {no: self.protection_state(no) for no in range(1, len(self.tables) + 1)}
        step = self.history.redo(self) if redo else self.history.undo(self)
        if step is None:
            raise SpecificationError(f"there is nothing to {'redo' if redo else 'undo'}")
        self.add_log(f"{'Redo' if redo else 'Undo'}: {step.label}")
        for no in step.tables:
            if no in states and no <= len(self.tables):
                changing.note_state(self, no, states[no])
        return list(step.tables)

    # ------------------------------------------------------------------ protect
    @undoable()
    def protect(
        self,
        table_no: int,
        method: str,
        params: MethodParams | Mapping[str, object] | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> ProtectionResult:
        """Run a protection method on one table; statuses (and published values) are copied
        back only when the audit passed. `params`: the method's parameter dataclass or a
        mapping of its field names (argusqt/docs/formats.md §8.5); an unknown or out-of-range
        one is a ParameterError naming the parameter and the values allowed.

        The method solves the problem the user posed: the primaries and the manual and
        a-priori statuses, never the secondaries of the method run before (docs/design.md, D-22)."""
        return protecting.protect(self, table_no, method, params, progress, cancel)

    def set_ckm_ptables(
        self, table_no: int, first: Any = None, sep: Any = None
    ) -> tuple[Any, Any, Any]:
        """Other ptables for the cell key method on this table, as the batch command
        `CKM(t) "first" | "sep" | μc` gives them (argusqt/docs/formats.md §8.5): `first` is
        the counts' ptable of a frequency table, the magnitudes' of a magnitude table; each a
        file name or a ptable (io.ptable.PTable); None keeps the metadata's. Files are read
        and checked now (InputError with file and line)."""
        return protecting.set_ckm_ptables(self, table_no, first, sep)

    @undoable()
    def protect_linked(
        self,
        method: str,
        params: MethodParams | Mapping[str, object] | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> list[ProtectionResult]:
        """All tables protected together (batch table 0), by a method whose descriptor says
        how (`linked`: the joint problem, or MOD's cover table); one result per table."""
        return protecting.protect_linked(self, method, params, progress, cancel)

    # ------------------------------------------------------------------ output
    def write_table(
        self,
        table_no: int,
        out_type: int,
        options: str | dict[str, bool],
        path: str | Path,
        report: bool = False,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        *,
        tau_exact: bool = False,
    ) -> list[Path]:
        """Save table `table_no` as type 1–7 (argusqt/docs/formats.md §10); `report` adds the
        (confidential) HTML report next to it (base name + `_CONFIDENTIAL.html`). `tau_exact`
        (option `TA+`) writes codes and labels byte for byte as τ-Argus; by default one a
        spreadsheet would run as a formula gets a `'` in front. Returns the files written.

        A file for publication is written only if the table passes the publication gate
        (PublicationError naming the cells otherwise; nothing is written)."""
        return output.write_table(
            self, table_no, out_type, options, path, report, progress, cancel, tau_exact=tau_exact
        )

    def write_confidential(
        self,
        table_no: int,
        path: str | Path,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> Path:
        """The confidential workbook: the table with status colours, the cell list (statuses,
        true values, protection levels, audit intervals) and the report. Not for publication:
        its name contains CONFIDENTIAL (added when missing). Returns the path written."""
        return output.write_confidential(self, table_no, path, progress, cancel)

    # ------------------------------------------------------------------ what the GUI asks
    @staticmethod
    def protection_methods() -> list[MethodDescriptor]:
        """Every protection method with its parameters (the Protect dialog is built from it)."""
        # lazy: the method registry and parameters (a run that only tabulates needs none)
        from argusqt.protection.core import registry

        return registry.methods()

    def table_facts(self, table_no: int) -> TableFacts:
        """What a method's table-dependent defaults and checks read (minimum base, …)."""
        # lazy: the method registry and parameters (a run that only tabulates needs none)
        from argusqt.protection.core import registry

        return registry.table_facts(self.table(table_no), table_no)

    def suggest_method(self, table_no: int) -> Advice:
        """The suppression method and time limit we suggest for the table, and why."""
        # lazy: the advice (the GUI's Protect dialog asks; a batch never does; D-111)
        from argusqt.protection.core.advice import recommend_for_table

        return recommend_for_table(self.table(table_no))

    def original_codelist(self, table_no: int, var: str) -> CodeList:
        """The codelist of `var` before any recode (recodes are written against it)."""
        from argusqt.recode.apply import original_codelist  # lazy: the recode modules (D-57)

        return original_codelist(self.table(table_no), var)

    def check_recode_text(self, table_no: int, var: str, grc_text: str) -> list[str]:
        """Parse `.grc` text against the variable's original codes: its warnings, or an
        InputError naming the line (before saving it or recoding with it)."""
        from argusqt.recode.apply import parse_recode_text  # lazy: the recode modules (D-57)

        spec = parse_recode_text(grc_text, self.original_codelist(table_no, var), "recode")
        return list(spec.warnings)

    def save_text(self, path: str | Path, text: str) -> Path:
        """Write a text file the user asked for (a `.grc`), atomically (never over an input)."""
        return output.save_text(self, path, text)

    @staticmethod
    def write_metadata(metadata: Metadata, path: str | Path) -> Path:
        """Write metadata (the metadata editor) as a `.rda` file."""
        write_rda(metadata, path)
        return Path(path)

    def protection_state(self, table_no: int) -> str:
        """'cleared', 'protected', 'changed', 'unprotected' or 'nothing to protect'."""
        return protection_state(self.table(table_no))

    def clipboard_state(self, table: Table) -> tuple[str, str]:
        """(state, words) for what leaves the program without a gate (the clipboard): the
        table's own state (export.gate), except that a table protected together with others
        is not 'cleared' while the set's joint publication audit is not current (another
        table of the set changed). Fingerprints only: no audit runs (the GUI thread asks)."""
        return output.clipboard_state(self, table)

    def remember_copied(self, table: Table) -> bool:
        """A clipboard copy without the not-for-publication line counts as published beside
        the tables published after it (docs/design.md, D-90); False when nothing was kept."""
        return output.remember_copied(self, table)

    def audit_publication(
        self,
        table_no: int,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> str:
        """Run the publication gate now (outsider and insider audit of the current statuses);
        returns its verdict in words, PublicationError naming the cells when it fails."""
        return output.audit_publication(self, table_no, progress, cancel)

    def audit_report(
        self,
        table_no: int,
        pattern: str | Path | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> AuditReport:
        """The audit outside the GUI (US#314): the publication verdict on the table's current
        pattern, or on `pattern` (a τ-Argus / pytauargus code-value output) put on a copy
        of the table's rule statuses, with every primary's attacker interval; logged."""
        return output.audit_report(self, table_no, pattern, progress, cancel)

    def published_frame(
        self,
        table_no: int,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> Any:
        """The table as a pandas DataFrame for publication (codes, labels, published values,
        NA where suppressed); only through the publication gate (PublicationError naming the
        cells otherwise)."""
        return output.published_frame(self, table_no, progress, cancel)

    def report_html(self, table_no: int) -> str:
        """The table's report as HTML, to show (View | Report); it holds per-status sums."""
        return output.report_html(self, table_no)

    def write_report(self, table_no: int, path: str | Path, *, tau_name: bool = False) -> Path:
        """The HTML report of a table (files, structure, rules, method, status summary).

        It holds per-status sums: a confidential file (it says so in its first line and
        title, and CONFIDENTIAL is added to its name when missing). `tau_name` keeps the name
        as given — batch `<WRITETABLE>` writes τ-Argus's `<name>.html`, which scripts look
        for; the marking is then in the content only. Returns the path written."""
        return output.write_report(self, table_no, path, tau_name=tau_name)

    def write_apriori(
        self,
        table_no: int,
        path: str | Path,
        actions: dict[int, str] | None = None,
        keep: list[bool] | None = None,
        sep: str = ",",
    ) -> int:
        """Output | Generate apriori from the table's current statuses; returns lines written."""
        return output.write_apriori(self, table_no, path, actions, keep, sep)


def install_cleanup() -> None:
    """On SIGTERM/SIGHUP remove this process's unfinished temp files first (the GUI's door to
    io.atomic.install_cleanup)."""
    install()


def preload() -> None:
    """Import every module a Session action may use (the GUI does this on its own thread
    before worker threads start: a first import of a C extension inside a thread crashed)."""
    # lazy: the method registry and parameters (a run that only tabulates needs none)
    from argusqt.protection.core import registry

    registry.methods()  # imports every method module
    for name in (
        "pandas",
        "argusqt.io.microdata",
        "argusqt.io.tabular",
        "argusqt.io.apriori",
        "argusqt.io.rda",
        "argusqt.model.tabulate",
        "argusqt.rules.classify",
        "argusqt.rules.cost",
        "argusqt.rules.changes",
        "argusqt.recode.apply",
        "argusqt.protection.run",
        "argusqt.protection.suppress.linked",
        "argusqt.protection.core.advice",
        "argusqt.export.gate",
        "argusqt.export.writetable",
        "argusqt.export.excel",
        "argusqt.export.report",
    ):
        importlib.import_module(name)


__all__ = [
    "TIME_LIMIT_DECIDED",
    "TOTALS_MODES",
    "ArgusError",
    "LogEntry",
    "Session",
    "TabularSource",
    "cell_cause",
    "cell_levels",
    "is_warning",
    "preload",
    "published_face",
    "spreadsheet_safe",
    "table_protection",
]
