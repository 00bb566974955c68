"""The core API: one typed method per user action, used by the GUI, the batch runner and
Python users alike (no Qt).

A Session holds the log, the opened data and metadata, the table specifications, the built
tables (numbered from 1) and the typed log of actions (argusqt/actions.py): every method
appends its action after it succeeded and undo removes actions, so a batch file written
from the log (batch/render.py) replays to the same tables.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from argusqt.actions import (
    Action,
    ApplyApriori,
    ChangeStatus,
    ComputeTables,
    OpenMicrodata,
    OpenTableData,
    Protect,
    Recode,
    SpecifyTable,
    StatusChange,
    TableAction,
    WriteTable,
)
from argusqt.errors import (
    ArgusError,
    AuditError,
    Cancelled,
    MethodError,
    PublicationError,
    SpecificationError,
    clip_echo,
)
from argusqt.export.gate import mark_protected
from argusqt.history import History, capture, describe
from argusqt.io.logbook import Logbook, format_entry
from argusqt.model.rulespec import SafetyRules
from argusqt.model.status import Status, is_primary, is_secondary
from argusqt.model.table import ProtectionInfo, Table, TableSpec
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protection.core.result import TIME_LIMIT_DECIDED, public_figures

if TYPE_CHECKING:
    from argusqt.io.frames import Roles
    from argusqt.model.codelist import CodeList
    from argusqt.model.metadata import Metadata
    from argusqt.protection.core.advice import Advice
    from argusqt.protection.core.params import MethodParams, TableFacts
    from argusqt.protection.core.registry import MethodDescriptor
    from argusqt.protection.core.result import ProtectionResult


#: `<READTABLE>`'s totals modes in words (argusqt/docs/formats.md §3.3)
TOTALS_MODES = {
    0: "checked (every total must equal the sum of its parts)",
    1: "recomputed from the most detailed cells",
    2: "taken as given, additive or not",
}


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
    when: datetime
    message: str

    def __str__(self) -> str:
        return format_entry(self.when, self.message).rstrip("\n")


@dataclass
class TabularSource:
    """One table file of a tabular session with its metadata and (once given) its spec."""

    tab_path: Path
    meta_path: Path
    metadata: Any
    spec: TableSpec | None = None
    #: written by the Python API from a DataFrame into a temporary folder: saving a session
    #: or batch file writes it beside them (write_temporary_tables)
    temporary: bool = False


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
    results: dict[int, Any] = field(default_factory=dict)  # table number → last ProtectionResult
    #: tables protected together (table 0): published only after a joint audit
    linked: list[int] = field(default_factory=list)
    linked_cleared: str | None = None  # export.gate.linked_fingerprint when it last passed
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
        from argusqt.io.text import resolve_path

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
        from argusqt.io.outputs import check_outputs

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
        """Read the metadata and the microdata file (replaces any earlier data and tables)."""
        from argusqt.io.microdata import read_microdata
        from argusqt.io.rda import read_rda

        data_path, meta_path = Path(data_path), Path(meta_path)
        meta = read_rda(meta_path)
        if meta.kind == "tabular":
            raise SpecificationError(
                "this metadata describes a table file, not microdata (use Open table)",
                file=meta_path,
            )
        self._log_lines(list(getattr(meta, "warnings", []) or []))
        micro = read_microdata(meta, data_path)
        self.kind = "microdata"
        self.data_path, self.meta_path = data_path, meta_path
        self.metadata, self.microdata = meta, micro
        self.specs, self.sources, self.tables, self.results = [], [], [], {}
        self.linked = []
        n = getattr(micro, "n_records", None)
        self.add_log(
            f"Microdata {data_path.name} opened with metadata {meta_path.name}"
            + (f" ({n:,} records)" if n is not None else "")
        )
        self._log_lines(list(getattr(micro, "log", []) or []))  # the reader's warnings
        self.actions = [OpenMicrodata(data_path, meta_path)]

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
        from argusqt.io.frames import read_frame

        meta, micro = read_frame(data, roles, progress=progress, cancel=cancel)
        self.kind = "microdata"
        self.data_path, self.meta_path = Path(micro.path), None
        self.metadata, self.microdata = meta, micro
        self.specs, self.sources, self.tables, self.results = [], [], [], {}
        self.linked = []
        self.add_log(
            f"Microdata {Path(micro.path).name} opened ({micro.n_records} records; columns "
            f"{', '.join(v.name for v in meta.variables)})"
        )
        self._log_lines(list(micro.log))
        self.actions = []  # no file to reopen: saving writes the data (write_microdata_files)

    @property
    def from_frame(self) -> bool:
        """Microdata opened from a data frame or Parquet/CSV file: no `.rda` to name."""
        return self.kind == "microdata" and self.meta_path is None

    def write_microdata_files(self, beside: str | Path) -> list[Path]:
        """Write the data frame's microdata next to a session or batch file being saved, as
        fixed-width data + generated `.rda` (+ `.hrc`, `.cdl`), one atomic set; returns
        [data, metadata, side files…]. The session keeps reading from the frame."""
        from argusqt.io.framefiles import write_microdata_files

        files = write_microdata_files(self.metadata, self.microdata, Path(beside))
        self.add_log(
            f"Microdata of the data frame written to {files[0]} (CONFIDENTIAL: the records) "
            f"with metadata {files[1].name}"
            + (f" (and {', '.join(p.name for p in files[2:])})" if files[2:] else "")
        )
        return files

    def write_temporary_tables(self, beside: str | Path) -> dict[Path, tuple[Path, Path]]:
        """Write the ready tables the Python API put in a temporary folder next to a session or
        batch file being saved (`.tab` + `.rda` + copies of their `.hrc`/`.cdl`, one atomic
        set); returns old table path → (table, metadata) written."""
        from argusqt.io.atomic import atomic_write_set
        from argusqt.io.framefiles import table_file_paths, table_files

        temp = [src for src in self.sources if src.temporary]
        files: dict[Path, bytes] = {}
        renamed: dict[Path, tuple[Path, Path]] = {}
        for k, src in enumerate(temp, 1):
            tab, rda = table_file_paths(Path(beside), k, len(temp))
            files |= table_files(src.tab_path, src.meta_path, tab, rda)
            renamed[src.tab_path] = (tab, rda)
        atomic_write_set(files)
        for tab, rda in renamed.values():
            self.add_log(
                f"Table of the data frame written to {tab} (CONFIDENTIAL: true cell values) "
                f"with metadata {rda.name}"
            )
        return renamed

    def open_table_data(self, tab_path: str | Path, meta_path: str | Path) -> None:
        """Add a table file with its metadata (several may form a linked table set)."""
        from argusqt.io.atomic import settle_sets
        from argusqt.io.rda import read_rda

        tab_path, meta_path = Path(tab_path), Path(meta_path)
        for folder in {tab_path.parent, meta_path.parent}:  # a set argusqt wrote is complete
            settle_sets(folder)
        meta = read_rda(meta_path, kind_hint="tabular")
        if self.kind != "tabular" or self.tables:
            self.specs, self.sources, self.tables, self.results = [], [], [], {}
            self.linked = []
            self.actions = []
        self.kind = "tabular"
        self.data_path, self.meta_path, self.metadata = tab_path, meta_path, meta
        self.sources.append(TabularSource(tab_path, meta_path, meta))
        self._log_lines(list(getattr(meta, "warnings", []) or []))
        self.add_log(f"Table file {tab_path.name} opened with metadata {meta_path.name}")
        self.actions.append(OpenTableData(tab_path, meta_path))

    def set_read_mode(self, totals_mode: int, keep_status: bool = False) -> None:
        """How table files are read (File | Open table's Totals, `<READTABLE> n[T]`): totals
        checked (0), recomputed (1) or taken as given (2); `keep_status` keeps the statuses
        given on total lines. Used by every later compute of this data."""
        if self.kind != "tabular":
            raise SpecificationError("a totals mode applies to a table file (open one first)")
        if totals_mode not in (0, 1, 2) or not isinstance(keep_status, bool):
            raise SpecificationError(
                f"expected totals mode 0, 1 or 2 and keep-status True/False, got "
                f"{totals_mode!r}, {keep_status!r}"
            )
        self.read_mode = (totals_mode, keep_status)
        self.add_log(f"Table file totals: {TOTALS_MODES[totals_mode]}"
                     + (", statuses given on total lines kept" if keep_status else ""))  # fmt: skip

    # ------------------------------------------------------------------ specify
    def _check_spec(self, spec: TableSpec) -> None:
        """The variables of a specification against the metadata (before anything changes)."""
        if self.kind is None:
            raise SpecificationError("open microdata or a table file before specifying a table")
        meta = self.metadata
        for name in spec.explanatory:
            var = meta.variable(name)
            if not var.recodeable:
                raise SpecificationError(
                    f"'{var.name}' is not an explanatory (<RECODEABLE>) variable",
                    file=meta.path,
                    line=var.line or None,
                )
        for numeric in (spec.response, spec.shadow, spec.cost.variable):
            if numeric is not None and not meta.variable(numeric).is_number:
                var = meta.variable(numeric)
                raise SpecificationError(
                    f"'{var.name}' is not a numeric variable (<NUMERIC>): a response, shadow or "
                    "cost variable must be",
                    file=meta.path,
                    line=var.line or None,
                )

    def specify_table(self, spec: TableSpec) -> int:
        """Add a table specification; returns its number. Variables are checked against the metadata."""
        self._check_spec(spec)
        if self.kind == "tabular":
            src = self.sources[-1]
            if src.spec is not None:
                raise SpecificationError(
                    f"table file {src.tab_path.name} already has a table specified; "
                    "open the next table file first"
                )
            src.spec = spec
        self.specs.append(spec)
        self.tables = []
        self.linked = []
        self.add_log(f"Table {len(self.specs)} specified: {describe_spec(spec)}")
        self.actions = [
            a for a in self.actions if isinstance(a, OpenMicrodata | OpenTableData | SpecifyTable)
        ]
        self.actions.append(SpecifyTable(copy.deepcopy(spec)))
        return len(self.specs)

    def set_safety_rules(self, rules: SafetyRules, table_no: int | None = None) -> None:
        """Set the safety rules of a specified table (default: the last one)."""
        if not self.specs:
            raise SpecificationError("specify a table before giving its safety rules")
        idx = len(self.specs) - 1 if table_no is None else table_no - 1
        if not 0 <= idx < len(self.specs):
            raise SpecificationError(f"there is no specified table {table_no}")
        spec = self.specs[idx]
        if spec.is_frequency and (
            rules.nk_individual or rules.nk_holding or rules.p_individual or rules.p_holding
            or rules.zero_range is not None or rules.req_individual or rules.req_holding
        ):  # fmt: skip
            raise SpecificationError(
                "P, NK, ZERO and REQ rules cannot be used for a frequency table"
            )
        from argusqt.rules.parse import format_safety_rule

        spec.rules = rules
        self.add_log(f"Safety rules of table {idx + 1}: {format_safety_rule(rules)}")
        specified = [k for k, a in enumerate(self.actions) if isinstance(a, SpecifyTable)]
        if idx < len(specified):
            self.actions[specified[idx]] = SpecifyTable(copy.deepcopy(spec))

    # ------------------------------------------------------------------ compute
    def compute_tables(
        self,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        totals_mode: int = 0,
        keep_status: bool = False,
    ) -> list[Table]:
        """Build every specified table, apply the safety rules and costs."""
        if not self.specs:
            raise SpecificationError("no table has been specified")
        log: list[str] = []
        if self.kind == "microdata":
            built = self._build_microdata_tables(self.specs, progress, cancel)
            if built is None:
                self.add_log("Computing the tables was cancelled")
                return self.tables
            tables = built
        else:
            from argusqt.io.tabular import read_tab

            tables = []
            for k, src in enumerate(self.sources):
                if src.spec is None:
                    raise SpecificationError(
                        f"no table was specified for {src.tab_path.name}", file=src.tab_path
                    )
                progress(
                    ProgressEvent(f"Reading {src.tab_path.name}", fraction=k / len(self.sources))
                )
                # read_tab applies the rules (or keeps the given status) and the costs
                t = read_tab(src.metadata, src.tab_path, src.spec, totals_mode, keep_status, log)
                tables.append(t)
            self.read_mode = (totals_mode, keep_status)
        self._log_lines(log)
        self.tables = tables
        self.results = {}
        self._ckm_ptables = {}
        self.linked = []
        self.history.clear()  # its steps name the tables just replaced
        self.actions = [
            a for a in self.actions if isinstance(a, OpenMicrodata | OpenTableData | SpecifyTable)
        ]
        mode, keep = (totals_mode, keep_status) if self.kind == "tabular" else (0, False)
        self.actions.append(ComputeTables(mode, keep))
        for no, t in enumerate(tables, start=1):
            counts = np.bincount(np.asarray(t.status, dtype=np.int64), minlength=15)
            self.add_log(
                f"Table {no} computed: {t.n_cells:,} cells, "
                f"{int(counts[3:10].sum()):,} primary unsafe, {int(counts[14]):,} empty"
            )
        progress(ProgressEvent("Tables ready", fraction=1.0))
        return tables

    def _distances(self, table: Table) -> list[list[int]] | None:
        if table.spec.cost.kind != "distance":
            return None
        meta = self.metadata
        return [list(getattr(meta.find(d.name), "distance", None) or [1]) for d in table.dims]

    # ------------------------------------------------------------------ recompute what changed
    def tables_kept(self, specs: Sequence[TableSpec]) -> dict[int, int]:
        """Specify | Tables again: new table number → old number of each computed table whose
        specification did not change (it keeps its recodes, status changes and protection).

        Only microdata tables are kept (a table file is read again as a whole), and tables
        protected together are kept only if the table set does not change at all."""
        old = self._computed_specs()
        if self.kind != "microdata" or not old:
            return {}
        kept: dict[int, int] = {}
        for new_no, spec in enumerate(specs, start=1):
            for old_no, before in enumerate(old, start=1):
                if old_no not in kept.values() and before == spec:
                    kept[new_no] = old_no
                    break
        unchanged = (
            len(specs) == len(old)
            and all(kept.get(n) == n for n in kept)
            and (len(kept) == len(old))
        )
        if self._linked_protection() and not unchanged:
            return {}
        return kept

    def work_lost_by(self, specs: Sequence[TableSpec]) -> list[int]:
        """The computed tables (old numbers) whose recodes, status changes, a-priori files or
        protection Specify | Tables with `specs` would drop: the GUI asks before that."""
        kept = set(self.tables_kept(specs).values())
        linked = self._linked_protection()
        return [
            no
            for no in range(1, len(self.tables) + 1)
            if no not in kept and (linked or any(a.table == no for a in self._table_work()))
        ]

    def update_tables(
        self,
        specs: Sequence[TableSpec],
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> list[int]:
        """Specify | Tables → Compute: only new and changed tables are computed; every other
        table keeps its Table, recodes, status changes and protection (renumbered when tables
        before it were removed). Returns the numbers of the tables computed now."""
        specs = list(specs)
        kept = self.tables_kept(specs)
        if not kept:
            self.specify_tables(specs, progress, cancel)
            return list(range(1, len(self.tables) + 1))
        fresh = [no for no in range(1, len(specs) + 1) if no not in kept]
        if not fresh and len(specs) == len(self.tables):
            self.add_log("Tables unchanged: nothing to compute")
            return []
        for spec in specs:
            self._check_spec(spec)
        built = self._build_microdata_tables([specs[no - 1] for no in fresh], progress, cancel)
        if built is None:
            self.add_log("Computing the tables was cancelled; the tables are as they were")
            return []
        by_no = dict(zip(fresh, built, strict=True))
        tables = [
            self.tables[kept[no] - 1] if no in kept else by_no[no]
            for no in range(1, len(specs) + 1)
        ]
        renumber = {old: new for new, old in kept.items()}
        work: list[Action] = [
            dataclasses.replace(a, table=renumber[a.table])
            for a in self._table_work(with_writes=True)
            if a.table in renumber
        ]
        opened = [a for a in self.actions if isinstance(a, OpenMicrodata)][-1:]
        self.actions = [
            *opened,
            *(SpecifyTable(copy.deepcopy(spec)) for spec in specs),
            ComputeTables(0, False),
            *work,
        ]
        self.results = {renumber[o]: r for o, r in self.results.items() if o in renumber}
        self.specs, self.tables = specs, tables
        self.history.clear()  # its steps name tables by their old numbers
        for no in fresh:
            t = self.tables[no - 1]
            self.add_log(
                f"Table {no} computed: {describe_spec(specs[no - 1])}, {t.n_cells:,} cells, "
                f"{int(is_primary(t.status).sum()):,} primary unsafe, "
                f"{int((np.asarray(t.status) == Status.EMPTY).sum()):,} empty"
            )
        moved = ", ".join(f"{o}" if o == n else f"{o} (now {n})" for n, o in sorted(kept.items()))
        self.add_log(f"Tables kept as they were (specification unchanged): {moved}")
        progress(ProgressEvent("Tables ready", fraction=1.0))
        return fresh

    def _computed_specs(self) -> list[TableSpec]:
        """The specifications of the computed tables, as they were computed (the log's copies:
        a spec object the caller changed in place still compares as changed)."""
        logged = [a.spec for a in self.actions if isinstance(a, SpecifyTable)]
        computed = any(isinstance(a, ComputeTables) for a in self.actions)
        if not computed or len(logged) != len(self.tables):
            return list(self.specs) if len(self.specs) == len(self.tables) else []
        return logged

    def _linked_protection(self) -> bool:
        return bool(self.linked) or any(
            isinstance(a, Protect) and a.table == 0 for a in self.actions
        )

    def has_table_work(self) -> bool:
        """Recodes, status changes, a-priori files or protection in the log: work a user
        loses if the session is not saved (writes and specifications are quick to redo)."""
        return bool(self._table_work())

    def _table_work(self, with_writes: bool = False) -> list[TableAction]:
        """The logged actions on one computed table (writes only if asked: they lose nothing)."""
        work = [a for a in self.actions if isinstance(a, TableAction) and a.table > 0]
        return [a for a in work if with_writes or not isinstance(a, WriteTable)]

    def _build_microdata_tables(
        self, specs: list[TableSpec], progress: ProgressCallback, cancel: CancelToken | None
    ) -> list[Table] | None:
        """Tables from the open microdata with rules and costs applied; None when cancelled."""
        from argusqt.io.codelists import codelist_for
        from argusqt.io.ptable import read_ptable
        from argusqt.model.cellkey import attach_cell_keys
        from argusqt.model.tabulate import build_tables
        from argusqt.rules.classify import apply_rules
        from argusqt.rules.cost import compute_cost

        log: list[str] = []
        tables = build_tables(
            self.metadata, self.microdata, specs, log, progress, cancel, codelist_for=codelist_for
        )
        self._log_lines(log)
        if len(tables) < len(specs):
            return None
        for t in tables:
            apply_rules(t)
            compute_cost(t, self._distances(t))
            attach_cell_keys(
                t, self.metadata, self.microdata, read_ptable
            )  # argusqt/docs/methods.md §16.1
        return tables

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
        action = ApplyApriori(table_no, Path(path), sep, ignore_errors, expand_trivial)
        before = self.protection_state(table_no)
        report = self._apply_apriori(action)
        self.add_log(f"A-priori file {Path(path).name} applied to table {table_no}")
        self._note_state(table_no, before)
        self.actions.append(action)
        return report

    def _apply_apriori(self, a: ApplyApriori) -> Any:
        from argusqt.io.apriori import apply_apriori

        report = apply_apriori(
            self.table(a.table),
            a.path,
            sep=a.sep,
            ignore_errors=a.ignore_errors,
            expand_trivial=a.expand_trivial,
        )
        self._log_lines(list(report.lines()))
        return report

    def recode(self, table_no: int, var: str, file_or_level: str | Path | int) -> Table:
        """Recode one explanatory variable of a table with a `.grc` file or a hierarchy level
        (recodes start from the original codes; manual status changes are lost)."""
        return self._recode(self._recode_action(table_no, var, file_or_level))

    @staticmethod
    def _recode_action(table_no: int, var: str, file_or_level: str | Path | int) -> Recode:
        if isinstance(file_or_level, int) or str(file_or_level).strip().isdigit():
            return Recode(table_no, var, level=int(str(file_or_level)))
        from argusqt.io.text import read_lines

        path = Path(file_or_level)
        text = "".join(line + "\n" for line in read_lines(path))
        return Recode(table_no, var, grc_text=text, source=path, folder=path.parent)

    def recode_text(
        self, table_no: int, var: str, grc_text: str, folder: str | Path | None = None
    ) -> Table:
        """Recode with `.grc` text (typed in the GUI); relative `<CODELIST>` names in it are
        found in `folder`. A batch file written later gets the text as a file beside it."""
        where = Path(folder) if folder is not None else None
        return self._recode(Recode(table_no, var, grc_text=grc_text, folder=where))

    @undoable()
    def _recode(self, action: Recode) -> Table:
        return self._recode_all([action])[0]

    def _recode_all(self, actions: list[Recode]) -> list[Table]:
        """Recode several tables, all or none: every new table is built (and every check
        passed) before the first one replaces its old table."""
        for a in actions:
            self._require_unprotected(a.table, "recoding")
        done = [(a, *self._recoded(self.table(a.table), a)) for a in actions]
        for action, new, warnings in done:
            source = f"{action.source.name}: " if action.source is not None else ""
            self._log_lines([f"warning: {source}{w}" for w in warnings])
            self.tables[action.table - 1] = new
            self.results.pop(action.table, None)
            self.add_log(
                f"Table {action.table}: variable {action.variable} recoded ({_how(action)})"
            )
            self.actions.append(action)
        return [new for _, new, _ in done]

    def _recoded(self, table: Table, a: Recode) -> tuple[Table, list[str]]:
        from argusqt.recode.apply import original_codelist, parse_recode_text, recode_variable

        if self.kind == "tabular":
            raise SpecificationError("recoding is not available for tabular input")
        how: Any
        if a.level is not None:
            how = a.level
        elif a.grc_text is None:
            raise SpecificationError(
                f"table {a.table}: the recode of {a.variable} has no recode text (from an older "
                "session file); recode it again"
            )
        else:
            where = a.source or (a.folder or Path()) / f"{a.variable} (typed recode)"
            how = parse_recode_text(a.grc_text, original_codelist(table, a.variable), where)
        return recode_variable(table, a.variable, how, self._distances(table))

    @undoable(lambda s, table_no, var: f"removal of the recode of {var} in table {table_no}")
    def undo_recode(self, table_no: int, var: str) -> Table:
        """Back to the original coding of `var` (other recodes stay): its recodes leave the
        log, and the table is rebuilt from what remains, as a batch file would rebuild it."""
        from argusqt.recode.apply import undo_recode

        table = self.table(table_no)
        self._require_unprotected(table_no, "undoing a recode")
        mine = [
            a
            for a in self.actions
            if isinstance(a, Recode) and a.table == table_no and a.variable.lower() == var.lower()
        ]
        new = undo_recode(table, var, self._distances(table))
        self.actions = [a for a in self.actions if not any(a is m for m in mine)]
        self.tables[table_no - 1] = new
        self.results.pop(table_no, None)
        self._redo_changes(table_no)
        self.add_log(f"Table {table_no}: recode of {var} undone")
        return self.tables[table_no - 1]

    def _redo_changes(self, table_no: int) -> None:
        """After an undo, the manual changes and a-priori files the log keeps for a table since
        its last recode are applied again (a recode starts statuses from the rules)."""
        start = 0
        for k, a in enumerate(self.actions):
            if isinstance(a, ComputeTables) or (isinstance(a, Recode) and a.table == table_no):
                start = k + 1
        kept: list[Action] = []
        for k, a in enumerate(self.actions):
            if k >= start and isinstance(a, ChangeStatus) and a.table == table_no:
                cells = self._cells_of(self.table(table_no), a.cells)
                if cells is None:
                    self.add_log(
                        f"Table {table_no}: a manual {a.change} change no longer applies (its "
                        "cells are not in the table now) and was dropped"
                    )
                    continue
                self._change(a, cells)
            elif k >= start and isinstance(a, ApplyApriori) and a.table == table_no:
                self._apply_apriori(a)
            kept.append(a)
        self.actions = kept

    # ------------------------------------------------------------------ recode across tables
    def tables_using(self, var: str) -> list[int]:
        """Numbers of the computed tables that have `var` as an explanatory variable."""
        key = var.lower()
        return [
            no
            for no, t in enumerate(self.tables, start=1)
            if any(d.name.lower() == key for d in t.dims)
        ]

    @undoable()
    def recode_tables(
        self, var: str, file_or_level: str | Path | int, only: int | None = None
    ) -> list[int]:
        """Recode `var` in every table that uses it (a variable has one coding in a
        publication), or in table `only`; all or none. Returns the tables recoded."""
        numbers = self._recode_targets(var, only)
        self._require_all_unprotected(numbers, var)
        self._recode_all([self._recode_action(no, var, file_or_level) for no in numbers])
        return numbers

    @undoable()
    def recode_text_tables(
        self, var: str, grc_text: str, folder: str | Path | None = None, only: int | None = None
    ) -> list[int]:
        """`recode_tables` with `.grc` text typed in the GUI (see `recode_text`)."""
        where = Path(folder) if folder is not None else None
        numbers = self._recode_targets(var, only)
        self._require_all_unprotected(numbers, var)
        self._recode_all([Recode(no, var, grc_text=grc_text, folder=where) for no in numbers])
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
        numbers = [
            no
            for no in self._recode_targets(var, only)
            if any(
                isinstance(a, Recode) and a.table == no and a.variable.lower() == var.lower()
                for a in self.actions
            )
        ]
        if not numbers:
            raise SpecificationError(f"{var} has not been recoded: there is no recode to undo")
        for no in numbers:
            self._require_unprotected(no, "undoing a recode")
        for no in numbers:
            self.undo_recode(no, var)
        return numbers

    def _require_all_unprotected(self, numbers: list[int], var: str) -> None:
        """A recode of every table that uses `var` names the way out when one is protected."""
        if len(numbers) < 2:
            return
        for no in numbers:
            try:
                self._require_unprotected(no, "recoding")
            except SpecificationError as exc:
                others = ", ".join(str(n) for n in numbers if n != no)
                raise SpecificationError(
                    f"{exc}; {var} is recoded in every table that uses it (tables "
                    f"{', '.join(str(n) for n in numbers)}) and nothing was recoded. Undo the "
                    f"protection of table {no}, or recode table {others} only"
                ) from None

    def _recode_targets(self, var: str, only: int | None) -> list[int]:
        if only is not None:
            if only not in self.tables_using(var):
                raise SpecificationError(f"table {only} does not use the variable {var}")
            return [only]
        numbers = self.tables_using(var)
        if not numbers:
            raise SpecificationError(f"no computed table uses the variable {var}")
        return numbers

    def _require_unprotected(self, table_no: int, what: str) -> None:
        table = self.table(table_no)
        status = np.asarray(table.status)
        if (
            table.published is not None
            or table.interval_lower is not None
            or is_secondary(status).any()
        ):
            raise SpecificationError(
                f"table {table_no} has been protected; {what} is only possible before protection "
                "(undo the protection first)"
            )

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
        table = self.table(table_no)
        idx = np.atleast_1d(np.asarray(cells, dtype=np.int64))
        codes = tuple(table.cell_codes(int(c)) for c in idx.tolist())
        action = ChangeStatus(table_no, change, codes, value, upper)
        before = self.protection_state(table_no)
        try:
            n = self._change(action, idx)
        finally:
            self._note_state(table_no, before)
        self.add_log(f"Table {table_no}: {change} on {len(idx)} cell(s), {n} changed")
        self.actions.append(action)
        return n

    def _change(self, a: ChangeStatus, cells: np.ndarray) -> int:
        from argusqt.rules import changes

        table = self.table(a.table)
        if a.change == "cost":
            return changes.set_cost(table, cells, float(a.value or 0.0))
        if a.change == "levels":
            return changes.set_protection_levels(
                table, cells, float(a.value or 0.0), float(a.upper or 0.0)
            )
        fn = {
            "safe": changes.set_safe,
            "unsafe": changes.set_unsafe,
            "protected": changes.set_protected,
        }[a.change]
        return fn(table, cells)

    @staticmethod
    def _cells_of(table: Table, codes: tuple[tuple[str, ...], ...]) -> np.ndarray | None:
        """Cell indices of cells named by their codes; None when one is not in the table."""
        index = [{c: i for i, c in enumerate(d.codes)} for d in table.dims]
        out = []
        for cell in codes:
            if len(cell) != len(index):
                return None
            nodes = [index[d].get(c) for d, c in enumerate(cell)]
            if any(n is None for n in nodes):
                return None
            out.append(table.cell_index(tuple(int(n) for n in nodes if n is not None)))
        return np.asarray(out, dtype=np.int64)

    @undoable(lambda s, table_no: f"removal of the secondary suppressions of table {table_no}")
    def undo_protection(self, table_no: int) -> int:
        """Undo the secondary suppressions (and published values) of a method; its run leaves
        the log. Tables protected together are undone together. Returns cells changed."""
        from argusqt.rules import changes

        linked = table_no in self.linked and any(
            isinstance(a, Protect) and a.table == 0 for a in self.actions
        )
        numbers = list(self.linked) if linked else [table_no]
        n = 0
        for no in numbers:
            table = self.table(no)
            before = self.protection_state(no)
            n += changes.undo_secondary(table)
            table.published = None
            table.interval_lower = table.interval_upper = None
            table.protected_print = table.cleared_print = None  # no protection left
            table.protection = None
            table.audit = None
            self.results.pop(no, None)
            self._note_state(no, before)
        self.actions = [
            a
            for a in self.actions
            if not (isinstance(a, Protect) and (a.table in numbers or (linked and a.table == 0)))
        ]
        if linked:
            self.linked = []
            self.linked_cleared = None
            self.add_log(
                f"Tables {numbers} were protected together: their secondary suppressions are "
                f"undone together ({n} cell{'s' if n != 1 else ''})"
            )
        else:
            self.add_log(
                f"Table {table_no}: secondary suppressions undone ({n} cell{'s' if n != 1 else ''})"
            )
        return n

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
                self._note_state(no, states[no])
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
        a-priori statuses, never the secondaries of the method run before (docs/design.md)."""
        from argusqt.model.status import is_suppressed
        from argusqt.protection.audit.outsider import audit as run_audit
        from argusqt.protection.core import registry
        from argusqt.protection.core.problem import CSPProblem
        from argusqt.protection.run import run_method
        from argusqt.rules.changes import keep_pattern, posed_status

        desc = registry.get(method)
        p = desc.params.coerce(params)
        table = self.table(table_no)
        options = desc.options_for(p, registry.table_facts(table, table_no))
        self._check_numbers(table, table_no)
        start = posed_status(table)
        problem = CSPProblem.from_table(table, status=start)
        self.add_log(f"Table {table_no}: {desc.name} started with {p.describe()}")
        self._log_lines(p.without_effect())
        if desc.kind != "suppress":
            options.setdefault("seed", self._seed(problem))
        try:
            result = run_method(problem, desc.name, options, progress, cancel)
            for line in result.log or []:
                self.add_log(f"  {line}")
            audit = result.audit
            if audit is None and desc.kind == "suppress":
                audit = run_audit(
                    problem, is_suppressed(result.status), progress=progress, cancel=cancel
                )
                result.audit = audit
        except Cancelled as exc:
            raise self._cancelled([table_no], exc) from None
        except ArgusError:
            raise
        except Exception as exc:
            explained = _explain_solver_failure(table, table_no, desc.name, exc)
            if explained is None:
                raise
            raise explained from exc
        if audit is not None and not audit.ok:
            self.add_log(audit.summary())
            raise AuditError(
                f"{desc.name} on table {table_no}: {audit.summary()} The table was left unchanged."
            )
        keep_pattern(table, start, result.status)
        # a new method's face replaces the last one's: no rounded values under a suppression
        adjusted = desc.kind == "adjust" and result.published is not None
        table.published = np.asarray(result.published, dtype=float) if adjusted else None
        if result.interval_lower is not None and result.interval_upper is not None:
            table.interval_lower = np.asarray(result.interval_lower, dtype=float)
            table.interval_upper = np.asarray(result.interval_upper, dtype=float)
        else:
            table.interval_lower = table.interval_upper = None
        public = public_figures(desc.face, result.figures)
        table.protection = ProtectionInfo(desc.name, desc.face, p.describe(), public)
        table.audit = audit
        mark_protected(table, result.verdict)
        if result.verdict is not None and not result.verdict.ok:
            self.add_log(f"Table {table_no}: NOT PUBLISHABLE: {result.verdict.summary()}")
        self.results[table_no] = result
        done = "cancelled" if result.cancelled else "finished"
        if result.timed_out and not result.cancelled:
            done += f" ({TIME_LIMIT_DECIDED})"
        figures = "; ".join(result.outcome_lines(desc.face, table.value))
        self.add_log(
            f"Table {table_no}: {desc.name} {done} in {result.elapsed:,.1f} s: {figures}"
            + (f"; {audit.summary()}" if audit is not None else "")
        )
        if result.cancelled:
            result.cancel_note = kept_after_cancel(table_no, result, desc.kind)
            self.add_log(result.cancel_note)
        ptables = self._ckm_ptables.get(table_no) if desc.name == "CKM" else None
        self.actions.append(Protect(table_no, desc.name, p, ptables))
        return result

    def set_ckm_ptables(
        self, table_no: int, first: Any = None, sep: Any = None
    ) -> tuple[Any, Any, Any]:
        """Other ptables for the cell key method on this table, as the batch command
        `CKM(t) "first" | "sep" | μc` gives them (argusqt/docs/formats.md §8.5): `first` is
        the counts' ptable of a frequency table, the magnitudes' of a magnitude table; each a
        file name or a ptable (io.ptable.PTable); None keeps the metadata's. Files are read
        and checked now (InputError with file and line)."""
        from argusqt.io.ptable import PTable, read_ptable
        from argusqt.model.cellkey import set_ptables

        table = self.table(table_no)
        freq = table.spec.is_frequency

        def loaded(x: Any, kind: str) -> Any:
            if x is None or isinstance(x, PTable):
                return x
            read_ptable(x, kind)  # type: ignore[arg-type]  # checked now, read at protect
            return str(x)

        first = loaded(first, "freq" if freq else "cont")
        sep = loaded(sep, "cont")
        if freq and sep is not None:
            raise SpecificationError(
                f"table {table_no} is a frequency table: it takes one ptable, not a "
                "small-value ptable (argusqt/docs/formats.md §8.5)"
            )
        ok = set_ptables(table, pfile=first, pfile_cont=None, pfile_sep=None) if freq else (
            set_ptables(table, pfile_cont=first, pfile_sep=sep)
        )  # fmt: skip
        if not ok:
            raise SpecificationError(
                f"table {table_no} has no record keys: CKM needs a <RECORDKEY> variable "
                "(argusqt/docs/formats.md §1.5)"
            )
        old = self._ckm_ptables.get(table_no, (None, None, None))
        new = (first, None, None) if freq else (None, first, sep)
        merged = tuple(n if n is not None else o for n, o in zip(new, old, strict=True))
        self._ckm_ptables[table_no] = merged  # type: ignore[assignment]
        named = ", ".join(str(getattr(x, "source", x)) for x in merged if x is not None)
        self.add_log(f"Table {table_no}: CKM ptables {named}")
        return merged  # type: ignore[return-value]

    def _seed(self, problem: Any) -> int:
        """The session's confidential seed; the first time derived from the data, so a batch
        run twice gives the same output (rule 2) while nobody without the data can know it.

        Besides the table's values and levels it digests the whole data file: every record
        and every column, which no attacker can guess, whereas a small table's few unknown
        values could be tried one by one against the published intervals."""
        if self.protection_seed is None:
            from argusqt.protection.audit.disclosure import confidential_seed

            seed = confidential_seed(problem)
            digest = _file_digest(self.data_path)
            if digest is not None:
                seed = int.from_bytes(digest[:8], "big") ^ seed
                seed >>= 1  # a non-negative 63-bit seed, as confidential_seed gives
            self.protection_seed = seed
        return self.protection_seed

    def _cancelled(self, numbers: list[int], exc: Cancelled) -> Cancelled:
        """A cancel that kept no new pattern: the one message the log, the dialogs, the
        Solver panel and the API give, saying what the tables hold now."""
        states = "; ".join(self._unchanged(no) for no in numbers)
        which = f"Table {numbers[0]}" if len(numbers) == 1 else f"Tables {numbers}"
        note = f"{which}: {exc.message.rstrip('.')}. Nothing changed: {states}."
        self.add_log(note)
        return Cancelled(note)

    def _unchanged(self, table_no: int) -> str:
        """What a table holds after a Protect that changed nothing, in words."""
        t = self.table(table_no)
        state = self.protection_state(table_no)
        if t.protection is not None and state in ("cleared", "protected"):
            return (
                f"table {table_no} keeps its {t.protection.method} pattern, which passed the audit"
            )
        if t.protection is not None:
            return (
                f"table {table_no} keeps its statuses ({t.protection.method}'s pattern changed "
                "by hand since: not protected)"
            )
        if state == "nothing to protect":
            return f"table {table_no} has no unsafe cells"
        return f"table {table_no} stays unprotected"

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
        from argusqt.model.status import is_suppressed
        from argusqt.protection.audit.outsider import audit as run_audit
        from argusqt.protection.core import registry
        from argusqt.protection.core.problem import CSPProblem
        from argusqt.protection.suppress.linked import protect_linked
        from argusqt.rules.changes import keep_pattern, posed_status

        desc = registry.get(method)
        registry.require_linked(desc)
        p = desc.params.coerce(params)
        if not self.tables:
            raise SpecificationError("there are no tables to protect together: compute them first")
        options = desc.options_for(p, registry.table_facts(self.tables[0], 1))
        for no, t in enumerate(self.tables, start=1):
            self._check_numbers(t, no)
        starts = [posed_status(t) for t in self.tables]
        problems = [
            CSPProblem.from_table(t, status=s) for t, s in zip(self.tables, starts, strict=True)
        ]
        self.add_log(f"Linked tables 1–{len(problems)}: {desc.name} started with {p.describe()}")
        self._log_lines(p.without_effect())
        numbers = list(range(1, len(self.tables) + 1))
        try:
            cover = self._linked_cover(problems) if desc.linked == "cover" else None
            results = protect_linked(problems, desc.name, options, progress, cancel, cover=cover)
        except Cancelled as exc:
            raise self._cancelled(numbers, exc) from None
        audits = []
        for no, (prob, res) in enumerate(zip(problems, results, strict=True), start=1):
            verdict = res.audit or run_audit(prob, is_suppressed(res.status), cancel=None)
            if not verdict.ok:
                self.add_log(f"Table {no}: {verdict.summary()}")
                raise AuditError(
                    f"{desc.name} on linked tables: table {no}: {verdict.summary()} "
                    "The tables were left unchanged."
                )
            audits.append(verdict)
        for no, (t, res, verdict) in enumerate(zip(self.tables, results, audits, strict=True), 1):
            res.audit = verdict
            keep_pattern(t, starts[no - 1], res.status)
            t.published = t.interval_lower = t.interval_upper = None  # a suppression's face
            t.protection = ProtectionInfo(desc.name, desc.face, p.describe() + " (linked)")
            t.audit = verdict
            mark_protected(t)
            self.results[no] = res
            self.add_log(
                f"Table {no} (linked): {'; '.join(res.outcome_lines(desc.face, t.value))}; "
                f"{verdict.summary()}"
            )
            if res.cancelled:
                res.cancel_note = kept_after_cancel(no, res, desc.kind)
                self.add_log(res.cancel_note)
        self.linked = list(range(1, len(self.tables) + 1))
        self.linked_cleared = None
        self.actions.append(Protect(0, desc.name, p))
        return results

    def _check_numbers(self, table: Table, table_no: int) -> None:
        """check_solver_numbers, its message pointing at the data record with the largest
        response (file and line) when the table comes from microdata."""
        try:
            check_solver_numbers(table, table_no)
        except MethodError as exc:
            raise MethodError(exc.message + self._largest_record(table_no)) from None

    def _largest_record(self, table_no: int) -> str:
        """`; the largest num1 in data.asc is 1e+300 (line 6)`, or "" when not known."""
        spec = self.specs[table_no - 1] if table_no <= len(self.specs) else None
        micro, data = self.microdata, self.data_path
        if spec is None or spec.response is None or micro is None or data is None:
            return ""
        try:
            values = np.asarray(micro.values(spec.response), dtype=float)
        except (KeyError, ValueError, AttributeError):
            return ""
        if values.size == 0:
            return ""
        k = int(np.nanargmax(np.abs(np.nan_to_num(values, nan=0.0))))
        return (
            f". The largest {spec.response} in {data.name} is {values[k]:.6g} "
            f"(line {micro.line_of(k)})"
        )

    def _linked_cover(self, problems: list) -> Any:
        """MOD on linked tables from microdata: the cover table over all their variables.

        None when every cover cell is in some table (the joint problem is the cover) or
        there is no microdata; the cover gets the first table's response, rules and cost.
        """
        from argusqt.protection.core.problem import CSPProblem
        from argusqt.protection.suppress.linked import build_linked_problem, cover_dims

        if self.kind != "microdata" or self.microdata is None:
            return None
        if build_linked_problem(problems)[0].dims is not None:
            return None
        from argusqt.io.codelists import codelist_for
        from argusqt.model.tabulate import build_table
        from argusqt.rules.classify import apply_rules
        from argusqt.rules.cost import compute_cost

        first = self.tables[0].spec
        names = [c.name for c in cover_dims(problems)[0]]
        spec = TableSpec(names, first.response, first.shadow, first.cost, first.rules)
        log: list[str] = []
        table = build_table(self.metadata, self.microdata, spec, log, codelist_for=codelist_for)
        apply_rules(table)
        compute_cost(table, self._distances(table))
        self._log_lines(log)
        self.add_log(f"Linked tables: cover table {' × '.join(names)}, {table.n_cells} cells")
        return CSPProblem.from_table(table)

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
        from argusqt.export.writetable import TAU_EXACT, is_confidential, write_table
        from argusqt.io.confidential import confidential_path, sidecar_path

        if Path(path).is_dir():  # else the error would name the hidden temporary file
            raise SpecificationError(f"{path} is a folder; name a file to write table {table_no}")
        table = self.table(table_no)
        html = confidential_path(Path(path).with_suffix(".html"))
        side = {1: [confidential_path(path)], 5: [Path(path).with_suffix(".rda")]}.get(
            out_type, [sidecar_path(path)]
        )
        self.check_outputs(
            path, *side, *([html] if report else []), action=f"saving table {table_no}"
        )
        try:
            if table_no in self.linked and not is_confidential(out_type, options, path):
                self._clear_linked(progress, cancel)
            files = write_table(
                table, out_type, options, path, progress, cancel, tau_exact=tau_exact
            )
        except PublicationError as exc:
            self.add_log(f"Table {table_no} NOT written to {path}: {exc}")
            raise PublicationError(f"table {table_no}: {exc}", cells=exc.cells) from None
        if report:
            files.append(self.write_report(table_no, html))
        what = (
            "CONFIDENTIAL, not for publication: "
            if is_confidential(out_type, options, path)
            else ""
        )
        self.add_log(f"Table {table_no} written ({what}{', '.join(str(f) for f in files)})")
        opt = (
            options
            if isinstance(options, str)
            else "".join(f"{k}{'+' if v else '-'}" for k, v in options.items())
        )
        if tau_exact and f"{TAU_EXACT}+" not in opt.upper().replace(" ", ""):
            opt += f"{TAU_EXACT}+"
        self.actions.append(WriteTable(table_no, out_type, opt, Path(path)))
        return files

    def _clear_linked(self, progress: ProgressCallback, cancel: CancelToken | None) -> None:
        """The joint publication audit of the tables protected together (once per change)."""
        from argusqt.export.gate import clear_linked_for_publication, linked_fingerprint

        tables = [self.table(n) for n in self.linked]
        if self.linked_cleared == linked_fingerprint(tables):
            return
        self.linked_cleared = clear_linked_for_publication(
            tables, self.linked, progress=progress, cancel=cancel
        )
        self.add_log(f"Linked tables {self.linked}: joint publication audit passed")

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
        from argusqt.export.excel import ExcelOptions, write_excel
        from argusqt.io.confidential import confidential_path

        table = self.table(table_no)
        self.check_outputs(confidential_path(path), action="saving the CONFIDENTIAL workbook")
        info = self._report_info(table_no)
        written = write_excel(
            table,
            path,
            ExcelOptions(confidential=True),
            audit=getattr(table, "audit", None),
            report_info=info,
            progress=progress,
            cancel=cancel,
        )
        self.add_log(f"Table {table_no}: CONFIDENTIAL workbook (not for publication) {written}")
        return written

    # ------------------------------------------------------------------ what the GUI asks
    @staticmethod
    def protection_methods() -> list[MethodDescriptor]:
        """Every protection method with its parameters (the Protect dialog is built from it)."""
        from argusqt.protection.core import registry

        return registry.methods()

    def table_facts(self, table_no: int) -> TableFacts:
        """What a method's table-dependent defaults and checks read (minimum base, …)."""
        from argusqt.protection.core import registry

        return registry.table_facts(self.table(table_no), table_no)

    def suggest_method(self, table_no: int) -> Advice:
        """The suppression method and time limit we suggest for the table, and why."""
        from argusqt.protection.core.advice import recommend_for_table

        return recommend_for_table(self.table(table_no))

    def original_codelist(self, table_no: int, var: str) -> CodeList:
        """The codelist of `var` before any recode (recodes are written against it)."""
        from argusqt.recode.apply import original_codelist

        return original_codelist(self.table(table_no), var)

    def check_recode_text(self, table_no: int, var: str, grc_text: str) -> list[str]:
        """Parse `.grc` text against the variable's original codes: its warnings, or an
        InputError naming the line (before saving it or recoding with it)."""
        from argusqt.recode.apply import parse_recode_text

        spec = parse_recode_text(grc_text, self.original_codelist(table_no, var), "recode")
        return list(spec.warnings)

    def save_text(self, path: str | Path, text: str) -> Path:
        """Write a text file the user asked for (a `.grc`), atomically (never over an input)."""
        from argusqt.io.atomic import atomic_write_text

        self.check_outputs(path, action="saving")
        atomic_write_text(Path(path), text)
        return Path(path)

    @staticmethod
    def write_metadata(metadata: Metadata, path: str | Path) -> Path:
        """Write metadata (the metadata editor) as a `.rda` file."""
        from argusqt.io.rda import write_rda

        write_rda(metadata, path)
        return Path(path)

    def protection_state(self, table_no: int) -> str:
        """'cleared', 'protected', 'changed', 'unprotected' or 'nothing to protect'."""
        from argusqt.export.gate import protection_state

        return protection_state(self.table(table_no))

    def clipboard_state(self, table: Table) -> tuple[str, str]:
        """(state, words) for what leaves the program without a gate (the clipboard): the
        table's own state (export.gate), except that a table protected together with others
        is not 'cleared' while the set's joint publication audit is not current (another
        table of the set changed). Fingerprints only: no audit runs (the GUI thread asks)."""
        from argusqt.export.gate import linked_fingerprint

        state, words = table_protection(table)
        no = next((i for i, t in enumerate(self.tables, 1) if t is table), None)
        if state == "cleared" and no is not None and no in self.linked:
            tables = [self.table(n) for n in self.linked]
            if self.linked_cleared != linked_fingerprint(tables):
                return "protected", (
                    f"protected together with tables {', '.join(map(str, self.linked))}, whose "
                    "joint publication audit has not passed on their current statuses"
                )
        return state, words

    def audit_publication(
        self,
        table_no: int,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> str:
        """Run the publication gate now (outsider and insider audit of the current statuses);
        returns its verdict in words, PublicationError naming the cells when it fails."""
        from argusqt.export.gate import clear_for_publication

        try:
            text = clear_for_publication(self.table(table_no), progress=progress, cancel=cancel)
        except PublicationError as exc:
            self.add_log(f"Table {table_no}: publication audit failed: {exc}")
            raise PublicationError(f"table {table_no}: {exc}", cells=exc.cells) from None
        self.add_log(f"Table {table_no}: publication audit: {text}")
        return text

    def published_frame(
        self,
        table_no: int,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> Any:
        """The table as a pandas DataFrame for publication (codes, labels, published values,
        NA where suppressed); only through the publication gate (PublicationError naming the
        cells otherwise)."""
        from argusqt.export.frame import published_frame

        try:
            if table_no in self.linked:  # the same joint audit as write_table
                self._clear_linked(progress, cancel)
            frame = published_frame(self.table(table_no), progress=progress, cancel=cancel)
        except PublicationError as exc:
            self.add_log(f"Table {table_no} NOT published as a data frame: {exc}")
            raise PublicationError(f"table {table_no}: {exc}", cells=exc.cells) from None
        self.add_log(f"Table {table_no} published as a data frame ({len(frame)} cells)")
        return frame

    def _note_state(self, table_no: int, before: str) -> None:
        """Log when a change leaves a protected table no longer protected."""
        after = self.protection_state(table_no)
        if before in ("cleared", "protected") and after == "changed":
            self.add_log(
                f"Table {table_no} is NOT PROTECTED any more: its statuses changed after "
                "protection; protect it again (or pass the publication audit) before publishing"
            )

    def _report_info(self, table_no: int) -> dict[str, Any]:
        files: dict[str, str] = {}
        if self.kind == "microdata":
            files = {"Microdata": str(self.data_path), "Metadata": str(self.meta_path)}
        elif self.kind == "tabular" and table_no <= len(self.sources):
            src = self.sources[table_no - 1]
            files = {"Table file": str(src.tab_path), "Metadata": str(src.meta_path)}
        info: dict[str, Any] = {"files": files}
        result = self.results.get(table_no)
        if result is not None:
            info |= {"method": result.method, "elapsed": result.elapsed, "audit": result.audit}
            if result.method == "CKM":
                info["ckm_loss"] = result.figures.get("loss")
        return info

    def report_html(self, table_no: int) -> str:
        """The table's report as HTML, to show (View | Report); it holds per-status sums."""
        from argusqt.export.report import report_html

        return report_html(self.table(table_no), self._report_info(table_no))

    def write_report(self, table_no: int, path: str | Path, *, tau_name: bool = False) -> Path:
        """The HTML report of a table (files, structure, rules, method, status summary).

        It holds per-status sums: a confidential file (it says so in its first line and
        title, and CONFIDENTIAL is added to its name when missing). `tau_name` keeps the name
        as given — batch `<WRITETABLE>` writes τ-Argus's `<name>.html`, which scripts look
        for; the marking is then in the content only. Returns the path written."""
        from argusqt.export.report import write_report
        from argusqt.io.confidential import confidential_path

        table = self.table(table_no)
        info = self._report_info(table_no)
        atomic_path = Path(path) if tau_name else confidential_path(path)
        self.check_outputs(atomic_path, action=f"saving the report of table {table_no}")
        write_report(table, atomic_path, info)
        self.add_log(f"Table {table_no}: CONFIDENTIAL report (not for publication) {atomic_path}")
        return atomic_path

    def write_apriori(
        self,
        table_no: int,
        path: str | Path,
        actions: dict[int, str] | None = None,
        keep: list[bool] | None = None,
        sep: str = ",",
    ) -> int:
        """Output | Generate apriori from the table's current statuses; returns lines written."""
        from argusqt.io.apriori import write_apriori

        self.check_outputs(path, action="writing the a-priori file")
        n = write_apriori(self.table(table_no), path, actions, keep, sep)
        self.add_log(
            f"A-priori file {path} written from table {table_no} ({n} lines; CONFIDENTIAL, "
            "not for publication: cell statuses)"
        )
        return n


# ---------------------------------------------------------------------- helpers
#: Ratio of the largest to the smallest non-zero cell value beyond which a solver failure is
#: put down to precision (measured on batch_ex2, smallest cell ≈ 1e3: one record of 3e10 still
#: works, 1e11 makes the attacker LP fail). Only used to explain a failure, never to refuse.
SOLVER_RANGE = 1e7
#: Largest cell value (or protection level) a protection method is given: beyond 2^53 ≈ 9e15
#: sums of whole numbers are no longer exact, and the LP solvers fail with errors of their own.
MAX_SOLVER_VALUE = 1e15


def _file_digest(path: Path | None) -> bytes | None:
    """SHA-256 of a regular file's bytes, read in blocks (None when there is no such file)."""
    if path is None or not Path(path).is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.digest()


def kept_after_cancel(table_no: int, result: ProtectionResult, kind: str) -> str:
    """The one message after a cancel that kept a result: which result and its audit."""
    what = "pattern" if kind == "suppress" else "result"
    verdict = result.verdict if result.verdict is not None else result.audit
    audit = verdict.summary() if verdict is not None else "no audit"
    return (
        f"Table {table_no}: {result.method} cancelled: the best {what} found before the cancel "
        f"was kept. {audit}"
    )


def check_solver_numbers(table: Table, table_no: int) -> None:
    """Refuse a table whose numbers are not finite before a solver sees them (an overflow
    would otherwise surface as a solver error)."""
    for what, arr in (
        ("values", table.value),
        ("costs", table.cost),
        ("protection levels", table.lpl),
        ("protection levels", table.upl),
    ):
        arr = np.asarray(arr, dtype=float)
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            codes = ", ".join(table.cell_codes(int(bad[0])))
            raise MethodError(
                f"table {table_no}: {bad.size} cell(s) have {what} that are not finite numbers "
                f"(first: cell ({codes})); the input values are too large. Rescale the data "
                "(e.g. thousands) and read it again"
            )
        if what == "costs":  # derived (scaled by the methods); the values bound them
            continue
        huge = np.flatnonzero(np.abs(arr) > MAX_SOLVER_VALUE)
        if huge.size:
            k = int(huge[np.argmax(np.abs(arr[huge]))])
            codes = ", ".join(table.cell_codes(k))
            raise MethodError(
                f"table {table_no}: {huge.size} cell(s) have {what} beyond "
                f"{MAX_SOLVER_VALUE:.0e} (largest: {arr[k]:.6g}, cell ({codes})); sums of "
                "such numbers are not exact and no solver can protect them. Check the largest "
                "values in the data or rescale the response (e.g. thousands) and read it again"
            )


def _explain_solver_failure(
    table: Table, table_no: int, method: str, exc: Exception
) -> MethodError | None:
    """A solver failure on a table whose values span more digits than LP solvers keep is an
    input problem with a fix (rescale); anything else stays an internal error."""
    a = np.abs(np.asarray(table.value, dtype=float))
    a = a[a > 0]
    if a.size == 0 or a.max() / a.min() <= SOLVER_RANGE:
        return None
    big = ", ".join(table.cell_codes(int(np.argmax(np.abs(table.value)))))
    return MethodError(
        f"{method} on table {table_no}: the solver failed ({type(exc).__name__}: {exc}). The "
        f"cell values range from {a.min():g} to {a.max():g} (cell ({big})), beyond about "
        f"{SOLVER_RANGE:.0e} : 1, where solvers lose precision; check the largest values in "
        "the data or rescale the response (e.g. thousands)"
    )


def install_cleanup() -> None:
    """On SIGTERM/SIGHUP remove this process's unfinished temp files first (the GUI's door to
    io.atomic.install_cleanup)."""
    from argusqt.io.atomic import install_cleanup as install

    install()


def preload() -> None:
    """Import every module a Session action may use (the GUI does this on its own thread
    before worker threads start: a first import of a C extension inside a thread crashed)."""
    import importlib

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


def published_face(table: Table) -> np.ndarray:
    """Each cell as it would be published (`x` suppressed, `-` empty, rounded, adjusted or
    interval values): what leaves the program by the clipboard too."""
    from argusqt.export.codevalue import shown_values

    return shown_values(table)


def spreadsheet_safe(text: str) -> str:
    """`text` with a `'` in front when a spreadsheet would run it as a formula."""
    from argusqt.io.textcells import neutralise

    return neutralise(text)


def table_protection(table: Table) -> tuple[str, str]:
    """(state, words) of a table on its way to publication (export.gate): 'cleared',
    'protected', 'changed', 'unprotected' or 'nothing to protect'."""
    from argusqt.export.gate import STATE_TEXT, protection_state
    from argusqt.model.status import is_secondary

    state = protection_state(table)
    if state == "unprotected" and is_secondary(table.status).any():
        # e.g. statuses read from a table file: the gate audits them when saving
        return state, "not protected by a method (the pattern is audited when saved)"
    return state, STATE_TEXT[state]


def _how(a: Recode) -> str:
    if a.level is not None:
        return f"level {a.level}"
    return a.source.name if a.source is not None else "recode typed in the dialog"


def describe_spec(spec: TableSpec) -> str:
    resp = spec.response or "frequency"
    return f"{' × '.join(spec.explanatory)} | {resp}"


__all__ = [
    "ArgusError",
    "LogEntry",
    "Session",
    "TabularSource",
    "is_warning",
    "preload",
    "published_face",
    "spreadsheet_safe",
    "table_protection",
]
