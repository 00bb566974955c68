"""Specify | Tables: table specifications, safety rules, computing the tables and
recomputing only what changed (behind `Session.specify_*`, `compute_tables`, `update_tables`)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from argusqt.actions import (
    Action,
    ComputeTables,
    OpenMicrodata,
    OpenTableData,
    Protect,
    SpecifyTable,
    TableAction,
    WriteTable,
)
from argusqt.errors import SpecificationError
from argusqt.io.codelists import codelist_for
from argusqt.io.tabular import read_tab
from argusqt.model.rulespec import SafetyRules
from argusqt.model.status import Status, is_primary
from argusqt.model.table import Table, TableSpec
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.rules.classify import apply_rules
from argusqt.rules.cost import compute_cost
from argusqt.rules.parse import format_safety_rule

if TYPE_CHECKING:
    from pathlib import Path

    from argusqt.model.ptable import PTable, PTableKind
    from argusqt.session import Session


def check_spec(s: Session, spec: TableSpec) -> None:
    """The variables of a specification against the metadata (before anything changes)."""
    if s.kind is None:
        raise SpecificationError("open microdata or a table file before specifying a table")
    meta = s.metadata
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


def specify_table(s: Session, spec: TableSpec) -> int:
    """Add a table specification; returns its number. Variables are checked against the metadata."""
    check_spec(s, spec)
    if s.kind == "tabular":
        src = s.sources[-1]
        if src.spec is not None:
            raise SpecificationError(
                f"table file {src.tab_path.name} already has a table specified; "
                "open the next table file first"
            )
        src.spec = spec
    s.specs.append(spec)
    s.tables = []
    s.linked = []
    s.add_log(f"Table {len(s.specs)} specified: {describe_spec(spec)}")
    s.actions = [
        a for a in s.actions if isinstance(a, OpenMicrodata | OpenTableData | SpecifyTable)
    ]
    s.actions.append(SpecifyTable(copy.deepcopy(spec)))
    return len(s.specs)


def set_safety_rules(s: Session, rules: SafetyRules, table_no: int | None = None) -> None:
    """Set the safety rules of a specified table (default: the last one)."""
    if not s.specs:
        raise SpecificationError("specify a table before giving its safety rules")
    idx = len(s.specs) - 1 if table_no is None else table_no - 1
    if not 0 <= idx < len(s.specs):
        raise SpecificationError(f"there is no specified table {table_no}")
    spec = s.specs[idx]
    if spec.is_frequency and (
        rules.nk_individual or rules.nk_holding or rules.p_individual or rules.p_holding
        or rules.zero_range is not None or rules.req_individual or rules.req_holding
    ):  # fmt: skip
        raise SpecificationError("P, NK, ZERO and REQ rules cannot be used for a frequency table")

    spec.rules = rules
    s.add_log(f"Safety rules of table {idx + 1}: {format_safety_rule(rules)}")
    specified = [k for k, a in enumerate(s.actions) if isinstance(a, SpecifyTable)]
    if idx < len(specified):
        s.actions[specified[idx]] = SpecifyTable(copy.deepcopy(spec))


def compute_tables(
    s: Session,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    totals_mode: int = 0,
    keep_status: bool = False,
) -> list[Table]:
    """Build every specified table, apply the safety rules and costs."""
    if not s.specs:
        raise SpecificationError("no table has been specified")
    log: list[str] = []
    if s.kind == "microdata":
        built = build_microdata_tables(s, s.specs, progress, cancel)
        if built is None:
            s.add_log("Computing the tables was cancelled")
            return s.tables
        tables = built
    else:
        tables = []
        for k, src in enumerate(s.sources):
            if src.spec is None:
                raise SpecificationError(
                    f"no table was specified for {src.tab_path.name}", file=src.tab_path
                )
            progress(ProgressEvent(f"Reading {src.tab_path.name}", fraction=k / len(s.sources)))
            # read_tab applies the rules (or keeps the given status) and the costs
            t = read_tab(src.metadata, src.tab_path, src.spec, totals_mode, keep_status, log)
            tables.append(t)
        s.read_mode = (totals_mode, keep_status)
    s._log_lines(log)
    s.tables = tables
    s.results = {}
    s._ckm_ptables = {}
    s.linked = []
    s.history.clear()  # its steps name the tables just replaced
    s.actions = [
        a for a in s.actions if isinstance(a, OpenMicrodata | OpenTableData | SpecifyTable)
    ]
    mode, keep = (totals_mode, keep_status) if s.kind == "tabular" else (0, False)
    s.actions.append(ComputeTables(mode, keep))
    for no, t in enumerate(tables, start=1):
        counts = np.bincount(np.asarray(t.status, dtype=np.int64), minlength=15)
        s.add_log(
            f"Table {no} computed: {t.n_cells:,} cells, "
            f"{int(counts[3:10].sum()):,} primary unsafe, {int(counts[14]):,} empty"
        )
    progress(ProgressEvent("Tables ready", fraction=1.0))
    return tables


def distances(s: Session, table: Table) -> list[list[int]] | None:
    """Per dimension the distances a distance cost reads from the metadata (None otherwise)."""
    if table.spec.cost.kind != "distance":
        return None
    meta = s.metadata
    return [list(getattr(meta.find(d.name), "distance", None) or [1]) for d in table.dims]


def tables_kept(s: Session, specs: Sequence[TableSpec]) -> dict[int, int]:
    """Specify | Tables again: new table number → old number of each computed table whose
    specification did not change (it keeps its recodes, status changes and protection).

    Only microdata tables are kept (a table file is read again as a whole), and tables
    protected together are kept only if the table set does not change at all."""
    old = computed_specs(s)
    if s.kind != "microdata" or not old:
        return {}
    kept: dict[int, int] = {}
    for new_no, spec in enumerate(specs, start=1):
        for old_no, before in enumerate(old, start=1):
            if old_no not in kept.values() and before == spec:
                kept[new_no] = old_no
                break
    unchanged = (
        len(specs) == len(old) and all(kept.get(n) == n for n in kept) and (len(kept) == len(old))
    )
    if linked_protection(s) and not unchanged:
        return {}
    return kept


def work_lost_by(s: Session, specs: Sequence[TableSpec]) -> list[int]:
    """The computed tables (old numbers) whose recodes, status changes, a-priori files or
    protection Specify | Tables with `specs` would drop: the GUI asks before that."""
    kept = set(s.tables_kept(specs).values())
    linked = linked_protection(s)
    return [
        no
        for no in range(1, len(s.tables) + 1)
        if no not in kept and (linked or any(a.table == no for a in table_work(s)))
    ]


def update_tables(
    s: Session,
    specs: Sequence[TableSpec],
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> list[int]:
    """Specify | Tables → Compute: only new and changed tables are computed; every other
    table keeps its Table, recodes, status changes and protection (renumbered when tables
    before it were removed). Returns the numbers of the tables computed now."""
    specs = list(specs)
    kept = s.tables_kept(specs)
    if not kept:
        s.specify_tables(specs, progress, cancel)
        return list(range(1, len(s.tables) + 1))
    fresh = [no for no in range(1, len(specs) + 1) if no not in kept]
    if not fresh and len(specs) == len(s.tables):
        s.add_log("Tables unchanged: nothing to compute")
        return []
    for spec in specs:
        check_spec(s, spec)
    built = build_microdata_tables(s, [specs[no - 1] for no in fresh], progress, cancel)
    if built is None:
        s.add_log("Computing the tables was cancelled; the tables are as they were")
        return []
    by_no = dict(zip(fresh, built, strict=True))
    tables = [
        s.tables[kept[no] - 1] if no in kept else by_no[no] for no in range(1, len(specs) + 1)
    ]
    renumber = {old: new for new, old in kept.items()}
    work: list[Action] = [
        dataclasses.replace(a, table=renumber[a.table])
        for a in table_work(s, with_writes=True)
        if a.table in renumber
    ]
    opened = [a for a in s.actions if isinstance(a, OpenMicrodata)][-1:]
    s.actions = [
        *opened,
        *(SpecifyTable(copy.deepcopy(spec)) for spec in specs),
        ComputeTables(0, False),
        *work,
    ]
    s.results = {renumber[o]: r for o, r in s.results.items() if o in renumber}
    s.specs, s.tables = specs, tables
    s.history.clear()  # its steps name tables by their old numbers
    for no in fresh:
        t = s.tables[no - 1]
        s.add_log(
            f"Table {no} computed: {describe_spec(specs[no - 1])}, {t.n_cells:,} cells, "
            f"{int(is_primary(t.status).sum()):,} primary unsafe, "
            f"{int((np.asarray(t.status) == Status.EMPTY).sum()):,} empty"
        )
    moved = ", ".join(f"{o}" if o == n else f"{o} (now {n})" for n, o in sorted(kept.items()))
    s.add_log(f"Tables kept as they were (specification unchanged): {moved}")
    progress(ProgressEvent("Tables ready", fraction=1.0))
    return fresh


def computed_specs(s: Session) -> list[TableSpec]:
    """The specifications of the computed tables, as they were computed (the log's copies:
    a spec object the caller changed in place still compares as changed)."""
    logged = [a.spec for a in s.actions if isinstance(a, SpecifyTable)]
    computed = any(isinstance(a, ComputeTables) for a in s.actions)
    if not computed or len(logged) != len(s.tables):
        return list(s.specs) if len(s.specs) == len(s.tables) else []
    return logged


def linked_protection(s: Session) -> bool:
    """Tables protected together now or in the log: recomputing keeps them only as a set."""
    return bool(s.linked) or any(isinstance(a, Protect) and a.table == 0 for a in s.actions)


def has_table_work(s: Session) -> bool:
    """Recodes, status changes, a-priori files or protection in the log: work a user
    loses if the session is not saved (writes and specifications are quick to redo)."""
    return bool(table_work(s))


def table_work(s: Session, with_writes: bool = False) -> list[TableAction]:
    """The logged actions on one computed table (writes only if asked: they lose nothing)."""
    work = [a for a in s.actions if isinstance(a, TableAction) and a.table > 0]
    return [a for a in work if with_writes or not isinstance(a, WriteTable)]


def build_microdata_tables(
    s: Session, specs: list[TableSpec], progress: ProgressCallback, cancel: CancelToken | None
) -> list[Table] | None:
    """Tables from the open microdata with rules and costs applied; None when cancelled."""
    log: list[str] = []
    # lazy: tabulating (a table file's batch never tabulates microdata; D-111)
    from argusqt.model.tabulate import build_tables

    tables = build_tables(
        s.metadata, s.microdata, specs, log, progress, cancel, codelist_for=codelist_for
    )
    s._log_lines(log)
    if len(tables) < len(specs):
        return None
    for t in tables:
        apply_rules(t)
        compute_cost(t, distances(s, t))
        if s.metadata is not None and s.metadata.record_key is not None:
            # lazy: the cell key module (5 dataclasses), only for data with record keys (D-62)
            from argusqt.model.cellkey import attach_cell_keys

            # argusqt/docs/methods.md §16.1
            attach_cell_keys(t, s.metadata, s.microdata, _read_ptable)
    return tables


def describe_spec(spec: TableSpec) -> str:
    """A specification in the log's words: `Size × Region | Var2`."""
    resp = spec.response or "frequency"
    return f"{' × '.join(spec.explanatory)} | {resp}"


def _read_ptable(path: str | Path, kind: PTableKind = "freq") -> PTable:
    """io.ptable.read_ptable, imported when a table with cell keys reads its p-table."""
    from argusqt.io.ptable import read_ptable  # lazy: the p-table reader, CKM's (D-57)

    return read_ptable(path, kind)
