"""The typed log of what was done in a Session: one small frozen dataclass per user action.

Session methods append an action after it succeeded; undo removes actions. Batch files are
rendered from the log (batch/render.py) and session files persist it (sessionfile.py), so a
written batch file replays to the same statuses, and undone work is never replayed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from argusqt.dataclass import dataclass
from argusqt.model.table import TableSpec
from argusqt.protection.core.params import MethodParams

#: manual status changes (argusqt/docs/rules.md §7.2)
StatusChange = Literal["safe", "unsafe", "protected", "cost", "levels"]


@dataclass(frozen=True)
class OpenMicrodata:
    """A microdata file with its metadata."""

    data: Path
    metadata: Path


@dataclass(frozen=True)
class OpenTableData:
    """One table file of a (possibly linked) tabular session."""

    data: Path
    metadata: Path


@dataclass(frozen=True)
class SpecifyTable:
    """A table specification with its safety rules (a copy: later edits do not change it)."""

    spec: TableSpec


@dataclass(frozen=True)
class ComputeTables:
    """`<READMICRODATA>`, or `<READTABLE> mode[T]` for table files."""

    totals_mode: int = 0
    keep_status: bool = False


@dataclass(frozen=True)
class Recode:
    """A recode of one variable: a hierarchy level, or `.grc` text (kept, so a batch file can
    be written even when the file it came from changed or never existed: typed in the GUI)."""

    table: int
    variable: str
    level: int | None = None
    grc_text: str | None = None
    source: Path | None = None  # the .grc file the text was read from
    folder: Path | None = None  # where relative `<CODELIST>` names in the text are found


@dataclass(frozen=True)
class ApplyApriori:
    """An a-priori file applied to one table."""

    table: int
    path: Path
    sep: str = ","
    ignore_errors: bool = True
    expand_trivial: bool = False


@dataclass(frozen=True)
class ChangeStatus:
    """A manual change of some cells, named by their codes (indices change with recodes)."""

    table: int
    change: StatusChange
    cells: tuple[tuple[str, ...], ...]
    value: float | None = None  # cost, or the lower protection level
    upper: float | None = None  # the upper protection level


@dataclass(frozen=True)
class Protect:
    """A protection method's run; table 0: all tables protected together (linked)."""

    table: int
    method: str
    params: MethodParams
    #: CKM: the ptables given for this run (file names or io.ptable.PTable), else None
    ptables: tuple[Any, Any, Any] | None = None


@dataclass(frozen=True)
class WriteTable:
    """A table written (its type, options and file), replayed as `<WRITETABLE>`."""

    table: int
    out_type: int
    options: str
    path: Path


@dataclass(frozen=True)
class CopyTable:
    """A copy to the clipboard fit for publication: it counts as published (D-90)."""

    table: int


#: what is done before the tables exist (a new table specification starts again from here)
SetupAction = OpenMicrodata | OpenTableData | SpecifyTable | ComputeTables
#: what is done to computed tables
TableAction = Recode | ApplyApriori | ChangeStatus | Protect | WriteTable | CopyTable
Action = SetupAction | TableAction

SETUP_ACTIONS = (OpenMicrodata, OpenTableData, SpecifyTable, ComputeTables)
TABLE_ACTIONS = (Recode, ApplyApriori, ChangeStatus, Protect, WriteTable, CopyTable)

__all__ = [
    "Action",
    "ApplyApriori",
    "ChangeStatus",
    "ComputeTables",
    "CopyTable",
    "OpenMicrodata",
    "OpenTableData",
    "Protect",
    "Recode",
    "SetupAction",
    "SpecifyTable",
    "StatusChange",
    "TableAction",
    "WriteTable",
]
