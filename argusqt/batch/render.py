"""Writes a Session's action log as a `.arb` batch file (with its side files) that replays to
the same tables (argusqt/docs/formats.md §8).

Side files go beside the batch file: recodes typed in the GUI (or whose file changed since)
as `<stem>_recode<t>_<variable>.grc`, and each run of manual status changes of a table as
`<stem>_manual<t>_<k>.hst`, read by an `<APRIORI>` at the run's place in the log.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field
from datetime import datetime
from pathlib import Path

from argusqt.actions import (
    Action,
    ApplyApriori,
    ChangeStatus,
    ComputeTables,
    CopyTable,
    OpenMicrodata,
    OpenTableData,
    Protect,
    Recode,
    SpecifyTable,
    WriteTable,
)
from argusqt.dataclass import dataclass
from argusqt.errors import SpecificationError
from argusqt.io.apriori import hst_text
from argusqt.io.atomic import atomic_write_text
from argusqt.io.logbook import timestamp
from argusqt.io.textcells import neutralise
from argusqt.model.table import TableSpec
from argusqt.recode.grc import absolute_codelist
from argusqt.rules.parse import format_safety_rule
from argusqt.session import Session


@dataclass
class BatchText:
    """The lines of a batch file and the side files it reads (file name → text)."""

    lines: list[str] = field(default_factory=list)
    side_files: dict[str, str] = field(default_factory=dict)


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


def _quoted_code(code: str) -> str:
    """A code in an a-priori line: a formula-like code gets a `'` (read back without it)."""
    return '"' + neutralise(code.strip()).replace('"', "'") + '"'


def _manual_line(a: ChangeStatus, cell: tuple[str, ...]) -> str:
    codes = ",".join(_quoted_code(c) for c in cell)
    if a.change == "cost":
        return f"{codes},C,{float(a.value or 0.0)!r}"
    if a.change == "levels":
        return f"{codes},PL,{float(a.value or 0.0)!r},{float(a.upper or 0.0)!r}"
    return f"{codes},{ {'safe': 'S', 'unsafe': 'U', 'protected': 'P'}[a.change] }"


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "var"


def render_actions(actions: Sequence[Action], batch_path: str | Path) -> BatchText:
    """The batch text of an action log; side-file names are relative to the batch folder."""
    stem = Path(batch_path).stem
    out = BatchText()
    lines = out.lines
    manual_runs: dict[int, int] = {}
    pending: tuple[int, list[str]] | None = None  # the current run of manual changes

    def flush() -> None:
        nonlocal pending
        if pending is None:
            return
        table, body = pending
        k = manual_runs[table] = manual_runs.get(table, 0) + 1
        name = f"{stem}_manual{table}_{k}.hst"
        out.side_files[name] = hst_text(body)  # CONFIDENTIAL first line: statuses by hand
        lines.append(f'<APRIORI> "{name}", {table}, ",", 0, 0')
        pending = None

    for a in actions:
        if isinstance(a, ChangeStatus):
            if pending is not None and pending[0] != a.table:
                flush()
            if pending is None:
                pending = (a.table, [])
            pending[1].extend(_manual_line(a, cell) for cell in a.cells)
            continue
        flush()
        if isinstance(a, OpenMicrodata):
            lines += [f'<OPENMICRODATA> "{a.data}"', f'<OPENMETADATA> "{a.metadata}"']
        elif isinstance(a, OpenTableData):
            lines += [f'<OPENTABLEDATA> "{a.data}"', f'<OPENMETADATA> "{a.metadata}"']
        elif isinstance(a, SpecifyTable):
            lines.append(f"<SPECIFYTABLE> {spec_to_arb(a.spec)}")
            rules = format_safety_rule(a.spec.rules)
            if rules:
                lines.append(f"<SAFETYRULE> {rules}")
        elif isinstance(a, ComputeTables):
            tabular = any(isinstance(b, OpenTableData) for b in actions)
            if tabular:
                lines.append(f"<READTABLE> {a.totals_mode}{'T' if a.keep_status else ''}")
            else:
                lines.append("<READMICRODATA>")
        elif isinstance(a, Recode):
            lines.append(_recode_line(a, stem, out))
        elif isinstance(a, ApplyApriori):
            flags = f"{int(a.ignore_errors)}, {int(a.expand_trivial)}"
            lines.append(f'<APRIORI> "{a.path}", {a.table}, "{a.sep}", {flags}')
        elif isinstance(a, Protect):
            lines.append(_suppress_line(a, stem, out))
        elif isinstance(a, WriteTable):
            lines.append(f'<WRITETABLE> ({a.table}, {a.out_type}, {a.options}, "{a.path}")')
        elif isinstance(a, CopyTable):
            lines.append(f"<COPIED> {a.table}")
    flush()
    return out


def _suppress_line(a: Protect, stem: str, out: BatchText) -> str:
    """`<SUPPRESS> M(t, …)`; CKM in τ-Argus's form `CKM(t) "ptable" | "sep" | μc` (a ptable
    given in memory is written as a side file), its generator parameters as argusqt's."""
    if a.method != "CKM":
        return f"<SUPPRESS> {a.method}({', '.join([str(a.table), *a.params.to_batch()])})"
    values = a.params.to_mapping()
    mu_c = float(values.pop("mu_c", 0.0))
    generic = any(values[f.name] != f.default for f in a.params.fields() if f.name in values)
    head = f"CKM({', '.join([str(a.table), *a.params.to_batch()])})" if generic else (
        f"CKM({a.table})"
    )  # fmt: skip
    counts, cont, sep = a.ptables or (None, None, None)

    def named(x: object, k: str) -> str:
        if x is None:
            return ""
        if not isinstance(x, str | Path):  # a ptable given in memory (API)
            from argusqt.io.ptable import ptable_text

            name = f"{stem}_ptable{a.table}{k}.txt"
            out.side_files[name] = ptable_text(x)  # type: ignore[arg-type]  # a PTable here
            return f'"{name}"'
        return f'"{x}"'

    first = named(counts, "") if counts is not None else named(cont, "")
    parts = [first, named(sep, "_sep"), "" if generic or mu_c == 0 else repr(mu_c)]
    while parts and not parts[-1]:
        parts.pop()
    return f"<SUPPRESS> {head}" + (" " + " | ".join(parts) if parts else "")


def _recode_line(a: Recode, stem: str, out: BatchText) -> str:
    """The user's `.grc` file when it still holds the recode's text, else a side file."""
    if a.level is not None:
        return f"<RECODE> {a.table}, {a.variable}, {a.level}"
    if a.grc_text is None:
        raise SpecificationError(
            f"table {a.table}: the recode of {a.variable} came from an older session file "
            "without its recode text; recode it again before writing a batch file"
        )
    if a.source is not None and _same_text(a.source, a.grc_text):
        return f'<RECODE> {a.table}, {a.variable}, "{a.source}"'
    name = f"{stem}_recode{a.table}_{_safe_name(a.variable)}.grc"
    folder = a.folder if a.folder is not None else (a.source.parent if a.source else None)
    text = absolute_codelist(a.grc_text, folder) if folder is not None else a.grc_text
    out.side_files[name] = text if text.endswith("\n") else text + "\n"
    return f'<RECODE> {a.table}, {a.variable}, "{name}"'


def _same_text(path: Path, text: str) -> bool:
    from argusqt.io.text import read_lines

    try:
        return "".join(line + "\n" for line in read_lines(path)) == text
    except Exception:  # noqa: BLE001 - a missing or unreadable file: write the text instead
        return False


def batch_text(
    session: Session,
    path: str | Path,
    microdata: tuple[Path, Path] | None = None,
    tables: dict[Path, tuple[Path, Path]] | None = None,
) -> BatchText:
    """What `write_batch_file` writes: header, lines and side files; `microdata` names the
    data and metadata files of a session opened from a data frame, `tables` those of ready
    tables from data frames (old table path → new files)."""
    from argusqt import __version__

    tables = tables or {}
    if any(src.temporary and src.tab_path not in tables for src in session.sources):
        raise SpecificationError(
            "this session's table came from a data frame: write the batch file with "
            "write_batch_file, which writes the table beside it"
        )
    actions = [
        OpenTableData(*tables[a.data]) if isinstance(a, OpenTableData) and a.data in tables else a
        for a in session.actions
    ]
    if microdata is not None:
        actions.insert(0, OpenMicrodata(*microdata))
    elif session.from_frame:
        raise SpecificationError(
            "this session's microdata came from a data frame: write the batch file with "
            "write_batch_file, which writes the data beside it"
        )
    out = render_actions(actions, path)
    head = [f"// Batch file written by argusqt {__version__}", f"// {timestamp(datetime.now())}"]
    out.lines = head + out.lines
    return out


def batch_lines(session: Session) -> list[str]:
    """The `.arb` command lines that rebuild the session's tables (no header)."""
    return render_actions(session.actions, "batch.arb").lines


def write_batch_file(session: Session, path: str | Path) -> list[Path]:
    """Write a `.arb` file that repeats what was done in the session, with its side files
    beside it (written first, each atomically); returns the files written."""
    path = Path(path)
    session.check_outputs(path, action="writing the batch file")
    written: list[Path] = []
    microdata = None
    if session.from_frame:  # no files to name: the data go beside the batch file
        batch_text(session, path, (path, path))  # nothing written when it cannot be written
        written = session.write_microdata_files(path)
        microdata = (Path(written[0].name), Path(written[1].name))  # beside the batch file
    tables = None
    if any(src.temporary for src in session.sources):  # ready tables from data frames
        batch_text(session, path, None, {src.tab_path: (path, path) for src in session.sources})
        tables = {
            old: (Path(tab.name), Path(rda.name))  # beside the batch file
            for old, (tab, rda) in session.write_temporary_tables(path).items()
        }
        written += [path.with_name(p.name) for pair in tables.values() for p in pair]
    text = batch_text(session, path, microdata, tables)
    sides = [path.with_name(name) for name in text.side_files]
    session.check_outputs(*sides, action="writing the batch file")
    for name, body in text.side_files.items():
        side = path.with_name(name)
        atomic_write_text(side, body)
        written.append(side)
    atomic_write_text(path, "".join(line + "\n" for line in text.lines))
    written.append(path)
    session.add_log(
        f"Batch file written: {path}"
        + (f" (with {', '.join(p.name for p in written[:-1])})" if written[:-1] else "")
    )
    session.add_log(writes_notice(path, text.lines))
    return written


def writes_notice(path: Path, lines: list[str]) -> str:
    """The files a batch file will write when run, by line: the session's writes (a session
    file edited by hand included) are copied into it, so the user is told which."""
    writes = [
        f"line {no}: {line}"
        for no, line in enumerate(lines, 1)
        if line.startswith(("<WRITETABLE>", "<LOGBOOK>", "<VERSIONINFO>"))
    ]
    if not writes:
        return f"Batch file {path.name} writes no output files when run"
    return (
        f"Batch file {path.name} writes {len(writes)} output file(s) when run (copied from the "
        "session's writes; check them before running it):\n" + "\n".join(writes)
    )


__all__ = [
    "BatchText",
    "batch_lines",
    "batch_text",
    "render_actions",
    "spec_to_arb",
    "write_batch_file",
    "writes_notice",
]
