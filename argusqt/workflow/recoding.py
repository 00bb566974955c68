"""Modify | Recode: recodes of one table or of every table that uses a variable, all or
none, and taking them back (behind `Session.recode*` and `undo_recode*`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.actions import Recode
from argusqt.errors import SpecificationError
from argusqt.io.text import read_lines
from argusqt.model.status import is_secondary
from argusqt.model.table import Table
from argusqt.workflow import changing, specifying

if TYPE_CHECKING:
    from argusqt.session import Session


def recode_action(table_no: int, var: str, file_or_level: str | Path | int) -> Recode:
    """The logged action of a recode by hierarchy level or by `.grc` file (its text kept)."""
    if isinstance(file_or_level, int) or str(file_or_level).strip().isdigit():
        return Recode(table_no, var, level=int(str(file_or_level)))

    path = Path(file_or_level)
    text = "".join(line + "\n" for line in read_lines(path))
    return Recode(table_no, var, grc_text=text, source=path, folder=path.parent)


def recode_all(s: Session, actions: list[Recode]) -> list[Table]:
    """Recode several tables, all or none: every new table is built (and every check
    passed) before the first one replaces its old table."""
    for a in actions:
        require_unprotected(s, a.table, "recoding")
    done = [(a, *recoded(s, s.table(a.table), a)) for a in actions]
    for action, new, warnings in done:
        source = f"{action.source.name}: " if action.source is not None else ""
        s._log_lines([f"warning: {source}{w}" for w in warnings])
        s.tables[action.table - 1] = new
        s.results.pop(action.table, None)
        s.add_log(f"Table {action.table}: variable {action.variable} recoded ({_how(action)})")
        s.actions.append(action)
    return [new for _, new, _ in done]


def recoded(s: Session, table: Table, a: Recode) -> tuple[Table, list[str]]:
    """The table rebuilt from its fine cells with the recode, and its warnings."""
    # lazy: the recode modules, only when a recode runs (D-57)
    from argusqt.recode.apply import original_codelist, parse_recode_text, recode_variable

    if s.kind == "tabular":
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
    return recode_variable(table, a.variable, how, specifying.distances(s, table))


def undo_recode(s: Session, table_no: int, var: str) -> Table:
    """Back to the original coding of `var` (other recodes stay): its recodes leave the
    log, and the table is rebuilt from what remains, as a batch file would rebuild it."""
    table = s.table(table_no)
    require_unprotected(s, table_no, "undoing a recode")
    mine = [
        a
        for a in s.actions
        if isinstance(a, Recode) and a.table == table_no and a.variable.lower() == var.lower()
    ]
    from argusqt.recode import apply as recode_apply  # lazy: as in recoded

    new = recode_apply.undo_recode(table, var, specifying.distances(s, table))
    s.actions = [a for a in s.actions if not any(a is m for m in mine)]
    s.tables[table_no - 1] = new
    s.results.pop(table_no, None)
    changing.redo_changes(s, table_no)
    s.add_log(f"Table {table_no}: recode of {var} undone")
    return s.tables[table_no - 1]


def tables_using(s: Session, var: str) -> list[int]:
    """Numbers of the computed tables that have `var` as an explanatory variable."""
    key = var.lower()
    return [
        no for no, t in enumerate(s.tables, start=1) if any(d.name.lower() == key for d in t.dims)
    ]


def undo_recode_tables(s: Session, var: str, only: int | None = None) -> list[int]:
    """Back to the original coding of `var` in every table recoded on it (or in table
    `only`); checked for all before any changes. Returns the tables changed."""
    numbers = [
        no
        for no in recode_targets(s, var, only)
        if any(
            isinstance(a, Recode) and a.table == no and a.variable.lower() == var.lower()
            for a in s.actions
        )
    ]
    if not numbers:
        raise SpecificationError(f"{var} has not been recoded: there is no recode to undo")
    for no in numbers:
        require_unprotected(s, no, "undoing a recode")
    for no in numbers:
        s.undo_recode(no, var)
    return numbers


def require_all_unprotected(s: Session, numbers: list[int], var: str) -> None:
    """A recode of every table that uses `var` names the way out when one is protected."""
    if len(numbers) < 2:
        return
    for no in numbers:
        try:
            require_unprotected(s, no, "recoding")
        except SpecificationError as exc:
            others = ", ".join(str(n) for n in numbers if n != no)
            raise SpecificationError(
                f"{exc}; {var} is recoded in every table that uses it (tables "
                f"{', '.join(str(n) for n in numbers)}) and nothing was recoded. Undo the "
                f"protection of table {no}, or recode table {others} only"
            ) from None


def recode_targets(s: Session, var: str, only: int | None) -> list[int]:
    """The tables a recode of `var` applies to: every table that uses it, or `only`."""
    if only is not None:
        if only not in s.tables_using(var):
            raise SpecificationError(f"table {only} does not use the variable {var}")
        return [only]
    numbers = s.tables_using(var)
    if not numbers:
        raise SpecificationError(f"no computed table uses the variable {var}")
    return numbers


def require_unprotected(s: Session, table_no: int, what: str) -> None:
    """Refuse a change that would leave a protected pattern on other cells."""
    table = s.table(table_no)
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


def _how(a: Recode) -> str:
    """How a recode was given, for the log."""
    if a.level is not None:
        return f"level {a.level}"
    return a.source.name if a.source is not None else "recode typed in the dialog"
