"""The core API: one method per user action, called by the batch runner and by the GUI (no Qt).

A Session holds the log, the opened data and metadata, the table specifications, the built
tables (numbered from 1) and the actions done on them (to write a batch file later).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.errors import (
    ArgusError,
    AuditError,
    MethodError,
    PublicationError,
    SpecificationError,
)
from argusqt.export.gate import mark_protected
from argusqt.io.logbook import Logbook, format_entry
from argusqt.model.rulespec import SafetyRules

if TYPE_CHECKING:
    from argusqt.io.frames import Roles
    from argusqt.protection.params import MethodParams
    from argusqt.protection.result import ProtectionResult
from argusqt.model.table import ProtectionInfo, Table, TableSpec
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress

#: history placeholder for the manual status changes of a table (an .hst at write time)
MANUAL_MARK = "<APRIORI> @manual:{}"
MANUAL_RE = re.compile(r"^<APRIORI> @manual:(\d+)$")


def is_warning(message: str) -> bool:
    """Warnings start with 'warning:' (readers write them so) wherever they come from."""
    return str(message).lstrip().lower().startswith("warning")


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
    history: list[str] = field(default_factory=list)  # batch lines of actions on the tables
    read_mode: tuple[int, bool] = (0, False)  # READTABLE totals mode and keep-status flag
    results: dict[int, Any] = field(default_factory=dict)  # table number → last ProtectionResult
    #: tables protected together (table 0): published only after a joint audit
    linked: list[int] = field(default_factory=list)
    linked_cleared: str | None = None  # export.gate.linked_fingerprint when it last passed

    # ------------------------------------------------------------------ log
    def add_log(self, message: str) -> None:
        """Keep a log entry and append it to the logbook file if there is one."""
        entry = LogEntry(datetime.now(), message)
        self.log.append(entry)
        if self.logbook is not None:
            self.logbook.write(message, entry.when)

    def set_logbook(self, path: str | Path) -> None:
        self.logbook = Logbook(path)
        self.add_log(f"Logbook: {Path(path)}")

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
        self.history = []
        self.manual: dict[int, list[str]] = {}
        self.add_log("Session cleared")

    def clear_tables(self) -> None:
        """Forget the specified and computed tables but keep the opened data (Specify tables again)."""
        self.specs = []
        self.tables = []
        self.results = {}
        self.linked = []
        self.history = []
        self.manual: dict[int, list[str]] = {}
        for src in self.sources[-1:]:
            src.spec = None
        self.sources = self.sources[-1:]

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
            + (f" ({n} records)" if n is not None else "")
        )
        self._log_lines(list(getattr(micro, "log", []) or []))  # the reader's warnings
        self.history = []
        self.manual: dict[int, list[str]] = {}

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
        self.history = []
        self.manual: dict[int, list[str]] = {}

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
        self.kind = "tabular"
        self.data_path, self.meta_path, self.metadata = tab_path, meta_path, meta
        self.sources.append(TabularSource(tab_path, meta_path, meta))
        self._log_lines(list(getattr(meta, "warnings", []) or []))
        self.add_log(f"Table file {tab_path.name} opened with metadata {meta_path.name}")
        self.history = []
        self.manual: dict[int, list[str]] = {}

    # ------------------------------------------------------------------ specify
    def specify_table(self, spec: TableSpec) -> int:
        """Add a table specification; returns its number. Variables are checked against the metadata."""
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
        for name in (spec.response, spec.shadow, spec.cost.variable):
            if name is not None and not meta.variable(name).is_number:
                var = meta.variable(name)
                raise SpecificationError(
                    f"'{var.name}' is not a numeric variable (<NUMERIC>): a response, shadow or "
                    "cost variable must be",
                    file=meta.path,
                    line=var.line or None,
                )
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
        self.history = []
        self.manual: dict[int, list[str]] = {}
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
        spec.rules = rules
        try:
            from argusqt.rules.parse import format_safety_rule

            text = format_safety_rule(rules)
        except ImportError:  # pragma: no cover
            text = repr(rules)
        self.add_log(f"Safety rules of table {idx + 1}: {text}")

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
        from argusqt.rules.classify import apply_rules
        from argusqt.rules.cost import compute_cost

        log: list[str] = []
        if self.kind == "microdata":
            from argusqt.io.codelists import codelist_for
            from argusqt.model.tabulate import build_tables

            tables = build_tables(
                self.metadata, self.microdata, self.specs, log, progress, cancel,
                codelist_for=codelist_for,
            )  # fmt: skip
            if len(tables) < len(self.specs):
                self._log_lines(log)
                self.add_log("Computing the tables was cancelled")
                return self.tables
            for t in tables:
                apply_rules(t)
                compute_cost(t, self._distances(t))
        else:
            read_tab = _optional("argusqt.io.tabular", "read_tab", "reading table files (.tab)")
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
        self.linked = []
        self.history = []
        self.manual: dict[int, list[str]] = {}
        for no, t in enumerate(tables, start=1):
            counts = np.bincount(np.asarray(t.status, dtype=np.int64), minlength=15)
            self.add_log(
                f"Table {no} computed: {t.n_cells} cells, "
                f"{int(counts[3:10].sum())} primary unsafe, {int(counts[14])} empty"
            )
        progress(ProgressEvent("Tables ready", fraction=1.0))
        return tables

    def _distances(self, table: Table) -> list[list[int]] | None:
        if table.spec.cost.kind != "distance":
            return None
        meta = self.metadata
        return [list(getattr(meta.find(d.name), "distance", None) or [1]) for d in table.dims]

    # ------------------------------------------------------------------ modify
    def apply_apriori(
        self,
        table_no: int,
        path: str | Path,
        sep: str = ",",
        ignore_errors: bool = True,
        expand_trivial: bool = False,
    ) -> Any:
        """Apply an a-priori (`.hst`) file to a table; returns the module's report."""
        fn = _optional("argusqt.io.apriori", "apply_apriori", "a-priori files")
        table = self.table(table_no)
        before = self.protection_state(table_no)
        report = fn(
            table, Path(path), sep=sep, ignore_errors=ignore_errors, expand_trivial=expand_trivial
        )
        lines = getattr(report, "lines", None)
        if callable(lines):
            self._log_lines(list(lines()))
        self.add_log(f"A-priori file {Path(path).name} applied to table {table_no}")
        self._note_state(table_no, before)
        flags = f"{int(ignore_errors)}, {int(expand_trivial)}"
        self.history.append(f'<APRIORI> "{path}", {table_no}, "{sep}", {flags}')
        return report

    def recode(self, table_no: int, var: str, file_or_level: str | Path | int) -> Table:
        """Recode one explanatory variable of a table with a `.grc` file or a hierarchy level."""
        table = self.table(table_no)
        if self.kind == "tabular":
            raise SpecificationError("recoding is not available for tabular input")
        status = np.asarray(table.status)
        if table.published is not None or ((status == 11) | (status == 12)).any():
            raise SpecificationError(
                f"table {table_no} has been protected; recoding is only possible before protection"
            )
        fn = _optional("argusqt.recode.apply", "recode_variable", "recoding")
        new, warnings = fn(table, var, file_or_level)
        if new.spec.cost.kind == "distance":  # distances per step come from the metadata
            from argusqt.rules.cost import compute_cost

            compute_cost(new, self._distances(new))
        source = "" if isinstance(file_or_level, int) else f"{Path(file_or_level).name}: "
        self._log_lines([f"warning: {source}{w}" for w in warnings])
        self.tables[table_no - 1] = new
        self.results.pop(table_no, None)
        how = (
            f"level {file_or_level}" if isinstance(file_or_level, int) else Path(file_or_level).name
        )
        self.add_log(f"Table {table_no}: variable {var} recoded ({how})")
        arg = str(file_or_level) if isinstance(file_or_level, int) else f'"{file_or_level}"'
        self.history.append(f"<RECODE> {table_no}, {var}, {arg}")
        return new

    # ------------------------------------------------------------------ protect
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
        one is a ParameterError naming the parameter and the values allowed."""
        from argusqt.model.status import is_suppressed
        from argusqt.protection import registry
        from argusqt.protection.audit import audit as run_audit
        from argusqt.protection.methods import run_method
        from argusqt.protection.problem import CSPProblem

        desc = registry.get(method)
        p = desc.params.coerce(params)
        table = self.table(table_no)
        options = desc.options_for(p, registry.table_facts(table, table_no))
        check_solver_numbers(table, table_no)
        problem = CSPProblem.from_table(table)
        self.add_log(f"Table {table_no}: {desc.name} started with {p.describe()}")
        self._log_lines(p.without_effect())
        try:
            result = run_method(problem, desc.name, options, progress, cancel)
        except ArgusError:
            raise
        except Exception as exc:
            explained = _explain_solver_failure(table, table_no, desc.name, exc)
            if explained is None:
                raise
            raise explained from exc
        for line in result.log or []:
            self.add_log(f"  {line}")
        audit = result.audit
        if audit is None and desc.kind == "suppress":
            audit = run_audit(
                problem, is_suppressed(result.status), progress=progress, cancel=cancel
            )
            result.audit = audit
        if audit is not None and not audit.ok:
            self.add_log(audit.summary())
            raise AuditError(
                f"{desc.name} on table {table_no}: {audit.summary()} The table was left unchanged."
            )
        table.status = np.asarray(result.status).astype(np.int8)
        if desc.kind == "adjust" and result.published is not None:
            table.published = np.asarray(result.published, dtype=float)
        if result.interval_lower is not None and result.interval_upper is not None:
            table.interval_lower = np.asarray(result.interval_lower, dtype=float)
            table.interval_upper = np.asarray(result.interval_upper, dtype=float)
        else:
            table.interval_lower = table.interval_upper = None
        table.protection = ProtectionInfo(desc.name, desc.face, p.describe())
        table.audit = audit
        mark_protected(table, result.verdict)
        self.results[table_no] = result
        done = "cancelled, best safe result kept" if result.cancelled else "finished"
        self.add_log(
            f"Table {table_no}: {desc.name} {done}: {result.n_secondary} secondary suppressions, "
            f"cost {result.cost:g}, {result.elapsed:.1f} s"
            + (f"; {audit.summary()}" if audit is not None else "")
        )
        self.history.append(f"<SUPPRESS> {desc.name}({', '.join([str(table_no), *p.to_batch()])})")
        return result

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
        from argusqt.protection import registry
        from argusqt.protection.audit import audit as run_audit
        from argusqt.protection.linked import protect_linked
        from argusqt.protection.problem import CSPProblem

        desc = registry.get(method)
        registry.require_linked(desc)
        p = desc.params.coerce(params)
        if not self.tables:
            raise SpecificationError("there are no tables to protect together: compute them first")
        options = desc.options_for(p, registry.table_facts(self.tables[0], 1))
        for no, t in enumerate(self.tables, start=1):
            check_solver_numbers(t, no)
        problems = [CSPProblem.from_table(t) for t in self.tables]
        self.add_log(f"Linked tables 1–{len(problems)}: {desc.name} started with {p.describe()}")
        self._log_lines(p.without_effect())
        cover = self._linked_cover(problems) if desc.linked == "cover" else None
        results = protect_linked(problems, desc.name, options, progress, cancel, cover=cover)
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
            t.status = np.asarray(res.status).astype(np.int8)
            t.protection = ProtectionInfo(desc.name, desc.face, p.describe() + " (linked)")
            t.audit = verdict
            mark_protected(t)
            self.results[no] = res
            self.add_log(
                f"Table {no} (linked): {res.n_secondary} secondary suppressions, cost {res.cost:g}; "
                f"{verdict.summary()}"
            )
        self.linked = list(range(1, len(self.tables) + 1))
        self.linked_cleared = None
        self.history.append(f"<SUPPRESS> {desc.name}({', '.join(['0', *p.to_batch()])})")
        return results

    def _linked_cover(self, problems: list) -> Any:
        """MOD on linked tables from microdata: the cover table over all their variables.

        None when every cover cell is in some table (the joint problem is the cover) or
        there is no microdata; the cover gets the first table's response, rules and cost.
        """
        from argusqt.protection.linked import build_linked_problem, cover_dims
        from argusqt.protection.problem import CSPProblem

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
        """Save table `table_no` as type 1–6 (argusqt/docs/formats.md §10); `report` adds the
        (confidential) HTML report next to it (base name + `_CONFIDENTIAL.html`). `tau_exact`
        (option `TA+`) writes codes and labels byte for byte as τ-Argus; by default one a
        spreadsheet would run as a formula gets a `'` in front. Returns the files written.

        A file for publication is written only if the table passes the publication gate
        (PublicationError naming the cells otherwise; nothing is written)."""
        from argusqt.export.excel import confidential_path
        from argusqt.export.writetable import TAU_EXACT, is_confidential, write_table

        if Path(path).is_dir():  # else the error would name the hidden temporary file
            raise SpecificationError(f"{path} is a folder; name a file to write table {table_no}")
        table = self.table(table_no)
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
            html = confidential_path(Path(path).with_suffix(".html"))
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
        self.history.append(f'<WRITETABLE> ({table_no}, {out_type}, {opt}, "{path}")')
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

        table = self.table(table_no)
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

    def protection_state(self, table_no: int) -> str:
        """'cleared', 'protected', 'changed', 'unprotected' or 'nothing to protect'."""
        from argusqt.export.gate import protection_state

        return protection_state(self.table(table_no))

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
        return info

    def write_report(self, table_no: int, path: str | Path, *, tau_name: bool = False) -> Path:
        """The HTML report of a table (files, structure, rules, method, status summary).

        It holds per-status sums: a confidential file (it says so in its first line and
        title, and CONFIDENTIAL is added to its name when missing). `tau_name` keeps the name
        as given — batch `<WRITETABLE>` writes τ-Argus's `<name>.html`, which scripts look
        for; the marking is then in the content only. Returns the path written."""
        from argusqt.export.excel import confidential_path
        from argusqt.export.report import write_report

        table = self.table(table_no)
        info = self._report_info(table_no)
        atomic_path = Path(path) if tau_name else confidential_path(path)
        write_report(table, atomic_path, info)
        self.add_log(f"Table {table_no}: CONFIDENTIAL report (not for publication) {atomic_path}")
        return atomic_path

    def change_status(
        self,
        table_no: int,
        action: str,
        cells,
        value: float | None = None,
        upper: float | None = None,
    ) -> int:
        """A manual change (argusqt/docs/rules.md §7.2): "safe", "unsafe", "protected", "cost"
        (value), "levels" (value = lower, upper) or "undo" (secondaries). Returns cells changed.

        The change is remembered as a-priori lines, so a batch file written later replays it
        (`<APRIORI>` with a `.hst` written beside the batch file).
        """
        table = self.table(table_no)
        before = self.protection_state(table_no)
        try:
            return self._change_status(table_no, table, action, cells, value, upper)
        finally:
            self._note_state(table_no, before)

    def _change_status(self, table_no, table, action, cells, value, upper) -> int:
        from argusqt.io.textcells import neutralise
        from argusqt.rules import changes

        cells = np.atleast_1d(np.asarray(cells, dtype=np.int64))
        if action == "undo":
            n = changes.undo_secondary(table)
            table.published = None
            table.interval_lower = table.interval_upper = None
            table.protected_print = table.cleared_print = None  # no protection left
            pattern = re.compile(rf"^<SUPPRESS> \w+\({table_no}[,)]")
            self.history = [h for h in self.history if not pattern.match(h)]
            self.add_log(f"Table {table_no}: secondary suppressions undone ({n} cells)")
            return n
        if action == "cost":
            n = changes.set_cost(table, cells, float(value))
            code = f"C,{float(value)!r}"
        elif action == "levels":
            n = changes.set_protection_levels(table, cells, float(value), float(upper))
            code = f"PL,{float(value)!r},{float(upper)!r}"
        else:
            fn = {
                "safe": changes.set_safe,
                "unsafe": changes.set_unsafe,
                "protected": changes.set_protected,
            }.get(action)
            if fn is None:
                raise MethodError(f"unknown status change {action!r}")
            n = fn(table, cells)
            code = {"safe": "S", "unsafe": "U", "protected": "P"}[action]
        lines = self.manual.setdefault(table_no, [])
        for c in cells.tolist():
            codes = ",".join(
                '"' + neutralise(x.strip()).replace('"', "'") + '"'
                for x in table.cell_codes(int(c))
            )
            lines.append(f"{codes},{code}")
        marker = MANUAL_MARK.format(table_no)
        if marker not in self.history:
            self.history.append(marker)
        self.add_log(f"Table {table_no}: {action} on {len(cells)} cell(s), {n} changed")
        return n

    def write_apriori(
        self,
        table_no: int,
        path: str | Path,
        actions: dict[int, str] | None = None,
        keep: list[bool] | None = None,
        sep: str = ",",
    ) -> int:
        """Output | Generate apriori from the table's current statuses; returns lines written."""
        fn = _optional("argusqt.io.apriori", "write_apriori", "writing a-priori files")
        n = fn(self.table(table_no), path, actions, keep, sep)
        self.add_log(
            f"A-priori file {path} written from table {table_no} ({n} lines; CONFIDENTIAL, "
            "not for publication: cell statuses)"
        )
        return n

    def write_batch(self, path: str | Path) -> None:
        """Same as `write_batch_file` (name used by the GUI)."""
        self.write_batch_file(path)

    def batch_lines(self) -> list[str]:
        """The `.arb` lines that rebuild the current state: open, specify, read, then the actions."""
        from argusqt.rules.parse import format_safety_rule

        def spec_lines(spec: TableSpec) -> list[str]:
            rules = format_safety_rule(spec.rules)
            return [f"<SPECIFYTABLE> {spec_to_arb(spec)}"] + (
                [f"<SAFETYRULE> {rules}"] if rules else []
            )

        lines: list[str] = []
        if self.kind == "microdata":
            lines += [f'<OPENMICRODATA> "{self.data_path}"', f'<OPENMETADATA> "{self.meta_path}"']
            for spec in self.specs:
                lines += spec_lines(spec)
            if self.tables:
                lines.append("<READMICRODATA>")
        elif self.kind == "tabular":
            for src in self.sources:
                lines += [f'<OPENTABLEDATA> "{src.tab_path}"', f'<OPENMETADATA> "{src.meta_path}"']
                if src.spec is not None:
                    lines += spec_lines(src.spec)
            if self.tables:
                mode, keep = self.read_mode
                lines.append(f"<READTABLE> {mode}{'T' if keep else ''}")
        if self.tables:
            lines += self.history
        return lines

    def write_batch_file(self, path: str | Path) -> None:
        """Write a `.arb` file that repeats what was done in this session."""
        from argusqt import __version__
        from argusqt.io.apriori import hst_text
        from argusqt.io.atomic import atomic_write_text
        from argusqt.io.logbook import timestamp

        head = [
            f"// Batch file written by argusqt {__version__}",
            f"// {timestamp(datetime.now())}",
        ]
        path = Path(path)
        body = []
        for line in self.batch_lines():
            m = MANUAL_RE.match(line)
            if m is None:
                body.append(line)
                continue
            n = int(m.group(1))
            if not self.manual.get(n):
                continue  # e.g. a session reloaded without its manual-change list
            hst = path.with_name(f"{path.stem}_manual{n}.hst")
            atomic_write_text(hst, hst_text(self.manual[n]))
            body.append(f'<APRIORI> "{hst.name}", {n}, ",", 0, 0')
        atomic_write_text(path, "".join(line + "\n" for line in head + body))
        self.add_log(f"Batch file written: {path}")


# ---------------------------------------------------------------------- helpers
def _optional(module: str, name: str, what: str):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise MethodError(f"{what} is not available yet") from None


#: Ratio of the largest to the smallest non-zero cell value beyond which a solver failure is
#: put down to precision (measured on batch_ex2, smallest cell ≈ 1e3: one record of 3e10 still
#: works, 1e11 makes the attacker LP fail). Only used to explain a failure, never to refuse.
SOLVER_RANGE = 1e7


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


def describe_spec(spec: TableSpec) -> str:
    resp = spec.response or "frequency"
    return f"{' × '.join(spec.explanatory)} | {resp}"


def spec_to_arb(spec: TableSpec) -> str:
    """The `<SPECIFYTABLE>` argument of a spec (writes `|λ` only when λ ≠ 1)."""
    exp = "".join(f'"{e}"' for e in spec.explanatory)
    resp = f'"{spec.response}"' if spec.response is not None else "<freq>"
    shadow = f'"{spec.shadow}"' if spec.shadow else '""'
    kind = spec.cost.kind
    cost = {"frequency": "-1", "unity": "-2", "distance": "-3"}.get(
        kind, f'"{spec.cost.variable}"' if spec.cost.variable else '""'
    )
    lam = f"|{spec.cost.lam:g}" if spec.cost.lam != 1 else ""
    return f"{exp}|{resp}|{shadow}|{cost}{lam}"


__all__ = ["ArgusError", "LogEntry", "Session", "TabularSource", "is_warning", "spec_to_arb"]
