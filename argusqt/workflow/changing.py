"""Modify | status changes, a-priori files and undoing a protection: what a user changes by
hand on a computed table, logged so that undo, session and batch files repeat it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.actions import (
    Action,
    ApplyApriori,
    ChangeStatus,
    ComputeTables,
    Protect,
    Recode,
    StatusChange,
)
from argusqt.model.table import Table
from argusqt.rules import changes

if TYPE_CHECKING:
    from argusqt.session import Session


def apply_apriori(
    s: Session,
    table_no: int,
    path: str | Path,
    sep: str = ",",
    ignore_errors: bool = True,
    expand_trivial: bool = False,
) -> Any:
    """Apply an a-priori (`.hst`) file to a table; returns the module's report."""
    action = ApplyApriori(table_no, Path(path), sep, ignore_errors, expand_trivial)
    before = s.protection_state(table_no)
    report = read_apriori(s, action)
    s.add_log(f"A-priori file {Path(path).name} applied to table {table_no}")
    note_state(s, table_no, before)
    s.actions.append(action)
    return report


def read_apriori(s: Session, a: ApplyApriori) -> Any:
    """One logged a-priori file applied to its table, its report in the log."""
    from argusqt.io.apriori import apply_apriori as apply_file  # lazy: the .hst reader (D-62)

    report = apply_file(
        s.table(a.table),
        a.path,
        sep=a.sep,
        ignore_errors=a.ignore_errors,
        expand_trivial=a.expand_trivial,
    )
    s._log_lines(list(report.lines()))
    return report


def record_change(
    s: Session,
    table_no: int,
    change: StatusChange,
    cells: Sequence[int] | np.ndarray,
    value: float | None = None,
    upper: float | None = None,
) -> int:
    """A manual change of cells (status, cost or levels), logged by their codes."""
    table = s.table(table_no)
    idx = np.atleast_1d(np.asarray(cells, dtype=np.int64))
    codes = tuple(table.cell_codes(int(c)) for c in idx.tolist())
    action = ChangeStatus(table_no, change, codes, value, upper)
    before = s.protection_state(table_no)
    try:
        n = apply_change(s, action, idx)
    finally:
        note_state(s, table_no, before)
    s.add_log(f"Table {table_no}: {change} on {len(idx)} cell(s), {n} changed")
    s.actions.append(action)
    return n


def apply_change(s: Session, a: ChangeStatus, cells: np.ndarray) -> int:
    """One logged manual change on its cells (also when the log is replayed after an undo)."""
    table = s.table(a.table)
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


def cells_of(table: Table, codes: tuple[tuple[str, ...], ...]) -> np.ndarray | None:
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


def undo_protection(s: Session, table_no: int) -> int:
    """Undo the secondary suppressions (and published values) of a method; its run leaves
    the log. Tables protected together are undone together. Returns cells changed."""
    linked = table_no in s.linked and any(
        isinstance(a, Protect) and a.table == 0 for a in s.actions
    )
    numbers = list(s.linked) if linked else [table_no]
    n = 0
    for no in numbers:
        table = s.table(no)
        before = s.protection_state(no)
        n += changes.undo_secondary(table)
        table.published = None
        table.interval_lower = table.interval_upper = None
        table.protected_print = table.cleared_print = None  # no protection left
        table.protection = None
        table.audit = None
        s.results.pop(no, None)
        note_state(s, no, before)
    s.actions = [
        a
        for a in s.actions
        if not (isinstance(a, Protect) and (a.table in numbers or (linked and a.table == 0)))
    ]
    if linked:
        s.linked = []
        s.linked_cleared = None
        s.add_log(
            f"Tables {numbers} were protected together: their secondary suppressions are "
            f"undone together ({n} cell{'s' if n != 1 else ''})"
        )
    else:
        s.add_log(
            f"Table {table_no}: secondary suppressions undone ({n} cell{'s' if n != 1 else ''})"
        )
    return n


def redo_changes(s: Session, table_no: int) -> None:
    """After an undo, the manual changes and a-priori files the log keeps for a table since
    its last recode are applied again (a recode starts statuses from the rules)."""
    start = 0
    for k, a in enumerate(s.actions):
        if isinstance(a, ComputeTables) or (isinstance(a, Recode) and a.table == table_no):
            start = k + 1
    kept: list[Action] = []
    for k, a in enumerate(s.actions):
        if k >= start and isinstance(a, ChangeStatus) and a.table == table_no:
            cells = cells_of(s.table(table_no), a.cells)
            if cells is None:
                s.add_log(
                    f"Table {table_no}: a manual {a.change} change no longer applies (its "
                    "cells are not in the table now) and was dropped"
                )
                continue
            apply_change(s, a, cells)
        elif k >= start and isinstance(a, ApplyApriori) and a.table == table_no:
            read_apriori(s, a)
        kept.append(a)
    s.actions = kept


def note_state(s: Session, table_no: int, before: str) -> None:
    """Log when a change leaves a protected table no longer protected."""
    after = s.protection_state(table_no)
    if before in ("cleared", "protected") and after == "changed":
        s.add_log(
            f"Table {table_no} is NOT PROTECTED any more: its statuses changed after "
            "protection; protect it again (or pass the publication audit) before publishing"
        )
