"""File | Open: microdata, a data frame or table files with their metadata, and the read
mode (the door is `Session.open_*` in argusqt/session.py; this is what it does)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from argusqt.actions import OpenMicrodata, OpenTableData
from argusqt.dataclass import dataclass
from argusqt.errors import SpecificationError
from argusqt.io.atomic import atomic_write_set, settle_sets
from argusqt.io.rda import read_rda
from argusqt.progress import CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from argusqt.io.frames import Roles
    from argusqt.model.metadata import Metadata
    from argusqt.model.table import TableSpec
    from argusqt.session import Session


#: `<READTABLE>`'s totals modes in words (argusqt/docs/formats.md §3.3)
TOTALS_MODES = {
    0: "checked (every total must equal the sum of its parts)",
    1: "recomputed from the most detailed cells",
    2: "taken as given, additive or not",
}


@dataclass
class TabularSource:
    """One table file of a tabular session with its metadata and (once given) its spec."""

    tab_path: Path
    meta_path: Path
    metadata: Metadata
    spec: TableSpec | None = None
    #: written by the Python API from a DataFrame into a temporary folder: saving a session
    #: or batch file writes it beside them (write_temporary_tables)
    temporary: bool = False


def open_microdata(s: Session, data_path: str | Path, meta_path: str | Path) -> None:
    """Read the metadata and the microdata file (replaces any earlier data and tables); a
    large fixed-format file is read when the tables are computed (io/fixedstream.py)."""
    data_path, meta_path = Path(data_path), Path(meta_path)
    meta = read_rda(meta_path)
    if meta.kind == "tabular":
        raise SpecificationError(
            "this metadata describes a table file, not microdata (use Open table)",
            file=meta_path,
        )
    s._log_lines(list(getattr(meta, "warnings", []) or []))
    # lazy: the microdata readers stay out of a table file's batch run (D-47)
    from argusqt.io.fixedstream import open_microdata as open_microdata_file

    micro = open_microdata_file(meta, data_path)  # a large fixed-format file is streamed
    s.kind = "microdata"
    s.data_path, s.meta_path = data_path, meta_path
    s.metadata, s.microdata = meta, micro
    s.specs, s.sources, s.tables, s.results = [], [], [], {}
    s.linked = []
    n = getattr(micro, "n_records", None)
    s.add_log(
        f"Microdata {data_path.name} opened with metadata {meta_path.name}"
        + (f" ({n:,} records)" if n is not None else "")
    )
    s._log_lines(list(getattr(micro, "log", []) or []))  # the reader's warnings
    s.actions = [OpenMicrodata(data_path, meta_path)]


def open_microdata_frame(
    s: Session,
    data: Any,
    roles: Roles,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> None:
    """Microdata from a data frame (pandas, polars, pyarrow) or a Parquet/CSV file, its
    columns' roles given in Python instead of an `.rda` (replaces earlier data and
    tables). Large files are tabulated chunk by chunk later (io.frames)."""
    from argusqt.io.frames import read_frame  # lazy: the data-frame reader (D-47)

    meta, micro = read_frame(data, roles, progress=progress, cancel=cancel)
    s.kind = "microdata"
    s.data_path, s.meta_path = Path(micro.path), None
    s.metadata, s.microdata = meta, micro
    s.specs, s.sources, s.tables, s.results = [], [], [], {}
    s.linked = []
    s.add_log(
        f"Microdata {Path(micro.path).name} opened ({micro.n_records} records; columns "
        f"{', '.join(v.name for v in meta.variables)})"
    )
    s._log_lines(list(micro.log))
    s.actions = []  # no file to reopen: saving writes the data (write_microdata_files)


def write_microdata_files(s: Session, beside: str | Path) -> list[Path]:
    """Write the data frame's microdata next to a session or batch file being saved, as
    fixed-width data + generated `.rda` (+ `.hrc`, `.cdl`), one atomic set; returns
    [data, metadata, side files…]. The session keeps reading from the frame."""
    from argusqt.io import framefiles  # lazy: the microdata writers (D-47)

    files = framefiles.write_microdata_files(s.metadata, s.microdata, Path(beside))
    s.add_log(
        f"Microdata of the data frame written to {files[0]} (CONFIDENTIAL: the records) "
        f"with metadata {files[1].name}"
        + (f" (and {', '.join(p.name for p in files[2:])})" if files[2:] else "")
    )
    return files


def write_temporary_tables(s: Session, beside: str | Path) -> dict[Path, tuple[Path, Path]]:
    """Write the ready tables the Python API put in a temporary folder next to a session or
    batch file being saved (`.tab` + `.rda` + copies of their `.hrc`/`.cdl`, one atomic
    set); returns old table path → (table, metadata) written."""
    from argusqt.io.framefiles import table_file_paths, table_files  # lazy: as above

    temp = [src for src in s.sources if src.temporary]
    files: dict[Path, bytes] = {}
    renamed: dict[Path, tuple[Path, Path]] = {}
    for k, src in enumerate(temp, 1):
        tab, rda = table_file_paths(Path(beside), k, len(temp))
        files |= table_files(src.tab_path, src.meta_path, tab, rda)
        renamed[src.tab_path] = (tab, rda)
    atomic_write_set(files)
    for tab, rda in renamed.values():
        s.add_log(
            f"Table of the data frame written to {tab} (CONFIDENTIAL: true cell values) "
            f"with metadata {rda.name}"
        )
    return renamed


def open_table_data(s: Session, tab_path: str | Path, meta_path: str | Path) -> None:
    """Add a table file with its metadata (several may form a linked table set)."""
    tab_path, meta_path = Path(tab_path), Path(meta_path)
    for folder in {tab_path.parent, meta_path.parent}:  # a set argusqt wrote is complete
        settle_sets(folder)
    meta = read_rda(meta_path, kind_hint="tabular")
    if s.kind != "tabular" or s.tables:
        s.specs, s.sources, s.tables, s.results = [], [], [], {}
        s.linked = []
        s.actions = []
    s.kind = "tabular"
    s.data_path, s.meta_path, s.metadata = tab_path, meta_path, meta
    s.sources.append(TabularSource(tab_path, meta_path, meta))
    s._log_lines(list(getattr(meta, "warnings", []) or []))
    s.add_log(f"Table file {tab_path.name} opened with metadata {meta_path.name}")
    s.actions.append(OpenTableData(tab_path, meta_path))


def set_read_mode(s: Session, totals_mode: int, keep_status: bool = False) -> None:
    """How table files are read (File | Open table's Totals, `<READTABLE> n[T]`): totals
    checked (0), recomputed (1) or taken as given (2); `keep_status` keeps the statuses
    given on total lines. Used by every later compute of this data."""
    if s.kind != "tabular":
        raise SpecificationError("a totals mode applies to a table file (open one first)")
    if totals_mode not in (0, 1, 2) or not isinstance(keep_status, bool):
        raise SpecificationError(
            f"expected totals mode 0, 1 or 2 and keep-status True/False, got "
            f"{totals_mode!r}, {keep_status!r}"
        )
    s.read_mode = (totals_mode, keep_status)
    s.add_log(f"Table file totals: {TOTALS_MODES[totals_mode]}"
                 + (", statuses given on total lines kept" if keep_status else ""))  # fmt: skip
