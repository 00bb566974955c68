"""Output: every file a session writes (through the publication gate or marked CONFIDENTIAL),
the publication audit on demand and what leaves by the clipboard."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.actions import CopyTable, WriteTable
from argusqt.errors import PublicationError, SpecificationError
from argusqt.export import writetable
from argusqt.export.codevalue import shown_values
from argusqt.export.frame import published_frame as frame_for_publication
from argusqt.export.gate import (
    STATE_TEXT,
    clear_for_publication,
    clear_linked_for_publication,
    linked_audit,
    linked_fingerprint,
    protection_state,
)
from argusqt.export.writetable import TAU_EXACT, is_confidential
from argusqt.io.atomic import atomic_write_text
from argusqt.io.confidential import confidential_path, sidecar_path
from argusqt.io.textcells import neutralise
from argusqt.model.status import is_secondary
from argusqt.model.table import Table
from argusqt.progress import CancelToken, ProgressCallback, no_progress
from argusqt.rules.cause import cause_codes, cause_words

if TYPE_CHECKING:
    from argusqt.export.audit_report import AuditReport
    from argusqt.session import Session


def write_table(
    s: Session,
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
    if Path(path).is_dir():  # else the error would name the hidden temporary file
        raise SpecificationError(f"{path} is a folder; name a file to write table {table_no}")
    table = s.table(table_no)
    html = confidential_path(Path(path).with_suffix(".html"))
    side = {1: [confidential_path(path)], 5: [Path(path).with_suffix(".rda")]}.get(
        out_type, [sidecar_path(path)]
    )
    s.check_outputs(path, *side, *([html] if report else []), action=f"saving table {table_no}")
    public = not is_confidential(out_type, options, path)
    try:
        if table_no in s.linked and public:
            clear_linked(s, progress, cancel)
        if public:
            clear_beside(s, table_no, progress, cancel, over=path)
        files = writetable.write_table(
            table, out_type, options, path, progress, cancel, tau_exact=tau_exact
        )
    except PublicationError as exc:
        s.add_log(f"Table {table_no} NOT written to {path}: {exc}")
        raise PublicationError(
            f"table {table_no}: {exc}", cells=exc.cells, beside=exc.beside
        ) from None
    if public:
        remember_printed(s, table_no, path)
    if report:
        files.append(s.write_report(table_no, html))
    what = "CONFIDENTIAL, not for publication: " if is_confidential(out_type, options, path) else ""
    s.add_log(f"Table {table_no} written ({what}{', '.join(str(f) for f in files)})")
    opt = (
        options
        if isinstance(options, str)
        else "".join(f"{k}{'+' if v else '-'}" for k, v in options.items())
    )
    if tau_exact and f"{TAU_EXACT}+" not in opt.upper().replace(" ", ""):
        opt += f"{TAU_EXACT}+"
    s.actions.append(WriteTable(table_no, out_type, opt, Path(path)))
    return files


def clear_beside(
    s: Session,
    table_no: int,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    over: str | Path | None = None,
) -> str | None:
    """The table alone through the gate, then beside every face already published from the
    same data (docs/design.md, D-81) but the one in the file `over` it replaces; the joint
    verdict's words, None when none shares."""
    from argusqt.export.shared import clear_beside_published  # lazy: only a second table

    table = s.table(table_no)
    printed = printed_out(s, over)
    if not printed:
        return None
    clear_for_publication(table, progress=progress, cancel=cancel)
    words = clear_beside_published(
        table, table_no, printed, s.printed_cleared, progress=progress, cancel=cancel
    )
    if words is not None:
        s.add_log(f"Table {table_no}: {words}")
    return words


def beside_verdict(
    s: Session, table_no: int, progress: ProgressCallback = no_progress
) -> Any | None:
    """The joint verdict of the table beside the faces already published (None when none
    shares its records): what the gate will say at saving (docs/design.md, D-81)."""
    from argusqt.export.shared import partners, shared_verdict  # lazy: a second table only

    table = s.table(table_no)
    others = partners(table, table_no, printed_out(s))
    if not others:
        return None
    return shared_verdict(table, table_no, others, progress=progress)[0]


def remember_printed(
    s: Session, table_no: int, path: str | Path | None, where: str = "a data frame"
) -> None:
    """What a published file (None: a data frame or the clipboard, `where`) showed, kept for
    the joint audit of the files that follow; a file written over an earlier one replaces
    what that one showed."""
    from argusqt.export.shared import Printed, snapshot  # lazy: only a published table

    table = s.table(table_no)
    where = Path(path).name if path is not None else where
    key = str(Path(path).resolve()) if path is not None else None
    face = Printed(table_no, snapshot(table), where, key)
    if key is not None:  # one face per file: the one on disk
        s.printed = [p for p in s.printed if p.path != key]
    elif any(p.path is None and p.number == table_no and p.print == face.print for p in s.printed):
        return
    s.printed.append(face)


def printed_out(s: Session, over: str | Path | None = None) -> list[Any]:
    """The published faces still out there: data frames, and files still on disk but the
    one `over` that a file about to be written replaces (a file deleted or written over no
    longer tells anything: docs/design.md, D-81). Faces of other data are told apart by
    export.shared.partners (their grand totals)."""
    replaced = str(Path(over).resolve()) if over is not None else None
    return [
        p for p in s.printed if p.path is None or (p.path != replaced and Path(p.path).exists())
    ]


def clear_linked(s: Session, progress: ProgressCallback, cancel: CancelToken | None) -> None:
    """The joint publication audit of the tables protected together (once per change)."""
    tables = [s.table(n) for n in s.linked]
    if s.linked_cleared == linked_fingerprint(tables):
        return
    s.linked_cleared = clear_linked_for_publication(
        tables, s.linked, progress=progress, cancel=cancel
    )
    s.add_log(f"Linked tables {s.linked}: joint publication audit passed")


def write_confidential(
    s: Session,
    table_no: int,
    path: str | Path,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Path:
    """The confidential workbook: the table with status colours, the cell list (statuses,
    true values, protection levels, audit intervals) and the report. Not for publication:
    its name contains CONFIDENTIAL (added when missing). Returns the path written."""
    # lazy: openpyxl (only a workbook needs it)
    from argusqt.export.excel import ExcelOptions, write_excel

    table = s.table(table_no)
    s.check_outputs(confidential_path(path), action="saving the CONFIDENTIAL workbook")
    info = report_info(s, table_no)
    written = write_excel(
        table,
        path,
        ExcelOptions(confidential=True),
        audit=getattr(table, "audit", None),
        report_info=info,
        progress=progress,
        cancel=cancel,
    )
    s.add_log(f"Table {table_no}: CONFIDENTIAL workbook (not for publication) {written}")
    return written


def save_text(s: Session, path: str | Path, text: str) -> Path:
    """Write a text file the user asked for (a `.grc`), atomically (never over an input)."""
    s.check_outputs(path, action="saving")
    atomic_write_text(Path(path), text)
    return Path(path)


def clipboard_state(s: Session, table: Table) -> tuple[str, str]:
    """(state, words) for what leaves the program without a gate (the clipboard): the
    table's own state (export.gate), except that a table protected together with others
    is not 'cleared' while the set's joint publication audit is not current (another
    table of the set changed). Fingerprints only: no audit runs (the GUI thread asks)."""
    state, words = table_protection(table)
    no = next((i for i, t in enumerate(s.tables, 1) if t is table), None)
    if state in ("cleared", "nothing to protect") and no is not None and s.printed:
        from argusqt.export.shared import partners, set_print  # lazy: only a second table

        others = partners(table, no, printed_out(s))
        if others and set_print(table, no, others) not in s.printed_cleared:
            numbers = sorted({p.number for p in others})
            which = f"table{'s' if len(numbers) > 1 else ''} {', '.join(map(str, numbers))}"
            return "protected", (
                f"{words}; it shares cells with tables already published ({which}), and "
                "their joint publication audit has not passed yet (it runs before anything "
                "is written)"
            )
    if state == "cleared" and no is not None and no in s.linked:
        tables = [s.table(n) for n in s.linked]
        if s.linked_cleared != linked_fingerprint(tables):
            return "protected", (
                f"protected together with tables {', '.join(map(str, s.linked))}, whose "
                "joint publication audit has not passed on their current statuses"
            )
    return state, words


def remember_copied(s: Session, table: Table) -> bool:
    """A copy without the not-for-publication line may be pasted into a publication: its
    face counts beside the tables published after it, like a data frame (docs/design.md,
    D-90). The whole face, whatever block was selected: the program cannot know which part
    was pasted. False (nothing kept) for a copy that carried the line."""
    no = next((i for i, t in enumerate(s.tables, 1) if t is table), None)
    if no is None or clipboard_state(s, table)[0] not in ("cleared", "nothing to protect"):
        return False
    known = len(s.printed)
    remember_printed(s, no, None, where="a clipboard copy")
    if len(s.printed) > known:
        s.add_log(
            f"Table {no} copied to the clipboard: counted as published, so tables of the same "
            "data published after it are judged beside it"
        )
        s.actions.append(CopyTable(no))  # a batch file repeats it (<COPIED>)
    return True


def audit_publication(
    s: Session,
    table_no: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> str:
    """Run the publication gate now (outsider and insider audit of the current statuses);
    returns its verdict in words, PublicationError naming the cells when it fails."""
    try:
        text = clear_for_publication(s.table(table_no), progress=progress, cancel=cancel)
        beside = clear_beside(s, table_no, progress, cancel)
        if beside is not None:
            text = f"{text}; {beside}"
    except PublicationError as exc:
        s.add_log(f"Table {table_no}: publication audit failed: {exc}")
        raise PublicationError(
            f"table {table_no}: {exc}", cells=exc.cells, beside=exc.beside
        ) from None
    s.add_log(f"Table {table_no}: publication audit: {text}")
    return text


def published_frame(
    s: Session,
    table_no: int,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Any:
    """The table as a pandas DataFrame for publication (codes, labels, published values,
    NA where suppressed); only through the publication gate (PublicationError naming the
    cells otherwise)."""
    try:
        if table_no in s.linked:  # the same joint audit as write_table
            clear_linked(s, progress, cancel)
        clear_beside(s, table_no, progress, cancel)
        frame = frame_for_publication(s.table(table_no), progress=progress, cancel=cancel)
    except PublicationError as exc:
        s.add_log(f"Table {table_no} NOT published as a data frame: {exc}")
        raise PublicationError(
            f"table {table_no}: {exc}", cells=exc.cells, beside=exc.beside
        ) from None
    remember_printed(s, table_no, None)
    s.add_log(f"Table {table_no} published as a data frame ({len(frame)} cells)")
    return frame


def report_info(s: Session, table_no: int) -> dict[str, Any]:
    """What the report says beside the table: the input files, the method and its audit."""
    files: dict[str, str] = {}
    if s.kind == "microdata":
        files = {"Microdata": str(s.data_path), "Metadata": str(s.meta_path)}
    elif s.kind == "tabular" and table_no <= len(s.sources):
        src = s.sources[table_no - 1]
        files = {"Table file": str(src.tab_path), "Metadata": str(src.meta_path)}
    info: dict[str, Any] = {"files": files}
    result = s.results.get(table_no)
    if result is not None:
        info |= {"method": result.method, "elapsed": result.elapsed, "audit": result.audit}
        if result.method == "CKM":
            info["ckm_loss"] = result.figures.get("loss")
    return info


def report_html(s: Session, table_no: int) -> str:
    """The table's report as HTML, to show (View | Report); it holds per-status sums."""
    from argusqt.export import report as reports  # lazy: the HTML report (D-57)

    return reports.report_html(s.table(table_no), report_info(s, table_no))


def write_report(s: Session, table_no: int, path: str | Path, *, tau_name: bool = False) -> Path:
    """The HTML report of a table (files, structure, rules, method, status summary).

    It holds per-status sums: a confidential file (it says so in its first line and
    title, and CONFIDENTIAL is added to its name when missing). `tau_name` keeps the name
    as given — batch `<WRITETABLE>` writes τ-Argus's `<name>.html`, which scripts look
    for; the marking is then in the content only. Returns the path written."""
    table = s.table(table_no)
    info = report_info(s, table_no)
    atomic_path = Path(path) if tau_name else confidential_path(path)
    s.check_outputs(atomic_path, action=f"saving the report of table {table_no}")
    from argusqt.export import report as reports  # lazy: the HTML report (D-57)

    reports.write_report(table, atomic_path, info)
    s.add_log(f"Table {table_no}: CONFIDENTIAL report (not for publication) {atomic_path}")
    return atomic_path


def write_apriori(
    s: Session,
    table_no: int,
    path: str | Path,
    actions: dict[int, str] | None = None,
    keep: list[bool] | None = None,
    sep: str = ",",
) -> int:
    """Output | Generate apriori from the table's current statuses; returns lines written."""
    from argusqt.io import apriori  # lazy: the .hst module (2 dataclasses), its own action (D-62)

    s.check_outputs(path, action="writing the a-priori file")
    n = apriori.write_apriori(s.table(table_no), path, actions, keep, sep)
    s.add_log(
        f"A-priori file {path} written from table {table_no} ({n} lines; CONFIDENTIAL, "
        "not for publication: cell statuses)"
    )
    return n


def audit_report(
    s: Session,
    table_no: int,
    pattern: str | Path | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> AuditReport:
    """Behind `Session.audit_report`: the verdict on the current pattern or on a pattern file
    put on a copy of the table (the session's table keeps its statuses)."""
    # lazy: scipy, HiGHS and the audit (docs/design.md, D-39)
    from argusqt.export.audit_report import apply_pattern, audit_table
    from argusqt.io.pattern import read_pattern

    table = s.table(table_no)
    published = None
    notes: list[str] = []
    if pattern is not None:
        table = copy.copy(table)  # the session's table keeps its statuses
        for name in ("cleared_print", "protected_print", "refused_print"):
            setattr(table, name, None)
        table.protection = None
        table.published = table.interval_lower = table.interval_upper = None
        published, notes = apply_pattern(table, read_pattern(pattern, table))
        s.add_log(f"Table {table_no}: auditing the pattern of {pattern}")
    report = audit_table(
        table, table_no, published=published, notes=notes, progress=progress, cancel=cancel
    )
    if pattern is None and table_no in s.linked:
        with_joint_verdict(s, table_no, report, progress, cancel)
    if pattern is None and report.ok:
        with_beside_verdict(s, table_no, report, progress, cancel)
    s._log_lines(report.log_lines())
    return report


def with_joint_verdict(
    s: Session,
    table_no: int,
    report: AuditReport,
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> None:
    """A table protected together is published only when the set passes too (the gate,
    docs/design.md, D-50): the joint verdict goes into its report, its disclosures of this
    table's primaries on their lines (reason "joint: …")."""
    tables = [s.table(n) for n in s.linked]
    try:
        joint, local = linked_audit(tables, s.linked, progress=progress, cancel=cancel)
    except PublicationError as exc:
        report.ok = False
        report.summary = f"AUDIT FAILED: {exc}"
        return
    joint_into_report(
        report, joint, local[s.linked.index(table_no)],
        f"protected together with tables {s.linked}",
    )  # fmt: skip


def with_beside_verdict(
    s: Session,
    table_no: int,
    report: AuditReport,
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> None:
    """A table is published only if it passes beside the faces already published from the
    same records (docs/design.md, D-81): that joint verdict goes into its report too."""
    from argusqt.export.shared import partners, shared_verdict  # lazy: a second table only

    table = s.table(table_no)
    others = partners(table, table_no, printed_out(s))
    if not others:
        return
    try:
        joint, problem, who = shared_verdict(
            table, table_no, others, progress=progress, cancel=cancel
        )
    except PublicationError as exc:
        report.ok = False
        report.summary = f"AUDIT FAILED: {exc}"
        return
    joint_into_report(report, joint, problem.local[0], f"beside {', '.join(who[1:])}")


def joint_into_report(report: AuditReport, joint: Any, mine: np.ndarray, what: str) -> None:
    """A set's joint verdict in one table's report (`mine`: the joint cell of each of its
    cells): a note when it passed, else its disclosures on the primaries' lines."""
    if joint.ok:
        report.notes.append(f"{what[0].upper()}{what[1:]}: the joint audit passed.")
        return
    mine = np.asarray(mine)
    for line in report.primaries:
        line.reasons += [f"joint: {r}" for r in joint.reasons(int(mine[line.cell]))]
    report.ok = False
    report.summary = f"AUDIT FAILED: {what}, taken together (an attacker combines them) " + (
        joint.summary()
    )


def cell_cause(table: Table, cell: int) -> str:
    """Why a primary cell is unsafe: its cause code and the words (US#174); '' otherwise."""
    code = cause_codes(table, np.array([cell]))[0]
    return f"{code}: {cause_words(code)}" if code else ""


def cell_levels(table: Table, cell: int) -> tuple[float, float]:
    """A cell's LPL and UPL as protected, not only as the rule asked: a count's lower level
    ends at the non-empty cells '-' tells of (D-94)."""
    from argusqt.protection.core.problem import protected_levels  # lazy: D-78's start-up

    lpl, upl = protected_levels(table)
    return float(lpl[cell]), float(upl[cell])


def published_face(table: Table) -> np.ndarray:
    """Each cell as it would be published (`x` suppressed, `-` empty, rounded, adjusted or
    interval values): what leaves the program by the clipboard too."""
    return shown_values(table)


def spreadsheet_safe(text: str) -> str:
    """`text` with a `'` in front when a spreadsheet would run it as a formula."""
    return neutralise(text)


def table_protection(table: Table) -> tuple[str, str]:
    """(state, words) of a table on its way to publication (export.gate): 'cleared',
    'protected', 'changed', 'unprotected' or 'nothing to protect'."""
    state = protection_state(table)
    if state == "unprotected" and is_secondary(table.status).any():
        # e.g. statuses read from a table file: the gate audits them when saving
        return state, "not protected by a method (the pattern is audited when saved)"
    return state, STATE_TEXT[state]
