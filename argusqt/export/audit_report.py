"""The audit outside the GUI (US#314): a table's current pattern — argusqt's own or one read
from a τ-Argus / pytauargus output — judged by the publication verdict (outside attacker and
insiders), with every primary's attacker interval, in words for the logbook, the console and
a confidential report file."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.io.confidential import CONFIDENTIAL_BANNER
from argusqt.io.pattern import Pattern
from argusqt.model.status import (
    STATUS_LABELS,
    Status,
    is_candidate,
    is_primary,
    is_secondary,
    is_suppressed,
    secondary_status_for,
)
from argusqt.model.table import Table
from argusqt.progress import CancelToken, ProgressCallback, no_progress


@dataclass
class PrimaryLine:
    """One primary cell in the report: what it needs and what the attacker gets."""

    cell: int
    name: str
    status: int
    cause: str
    value: float
    need_lower: float  # value − LPL: the attacker's lower bound must be at or below it
    need_upper: float  # value + UPL
    lower: float  # the attacker's interval (outsider); NaN when published
    upper: float
    reasons: list[str] = field(default_factory=list)  # empty: protected

    @property
    def ok(self) -> bool:
        return not self.reasons


@dataclass
class AuditReport:
    """The verdict on one table's pattern; `ok` is the exit code's source (0/1)."""

    table_no: int
    ok: bool
    summary: str
    primaries: list[PrimaryLine]
    n_secondary: int
    exact_intervals: bool
    notes: list[str] = field(default_factory=list)
    decimals: int = 2  # of the table's values, for the figures

    def log_lines(self) -> list[str]:
        """The logbook's lines: the verdict, then one line per primary."""
        head = f"Audit of table {self.table_no}: {self.summary}"
        return [head, *self.notes] + [
            f"Audit of table {self.table_no}: {_line(p, self.decimals)}" for p in self.primaries
        ]

    def text(self, title: str = "") -> str:
        """The human-readable report (confidential: true values of suppressed cells)."""
        out = [f"// {CONFIDENTIAL_BANNER}: audit report with the true values of suppressed cells"]
        out.append(title or f"argusqt audit of table {self.table_no}")
        out.append("")
        out.append(self.summary)
        out += self.notes
        n_fail = sum(not p.ok for p in self.primaries)
        out.append(
            f"{len(self.primaries)} primary cell(s), {self.n_secondary} secondary cell(s); "
            f"{n_fail} primary cell(s) disclosed."
        )
        if not self.exact_intervals:
            out.append(
                "More than 2000 suppressed cells: the attacker intervals below are bounds the "
                "audit reached (enough to decide), not the exact intervals."
            )
        out.append("")
        out.append("cell | status | cause | value | protection needs | attacker interval | verdict")
        out += [_line(p, self.decimals) for p in self.primaries]
        return "\n".join(out) + "\n"


def write_audit_report(path: str | Path, reports: list[AuditReport], title: str = "") -> Path:
    """Write the reports as one CONFIDENTIAL text file (its first line says so), atomically."""
    from argusqt.io.atomic import atomic_write_text

    path = Path(path)
    atomic_write_text(path, "".join(r.text(title) for r in reports))
    return path


def _num(x: float, decimals: int) -> str:
    """A figure with the table's decimals (and 0 without a sign)."""
    if not np.isfinite(x):
        return "–"
    d = max(int(decimals), 0)
    text = f"{x:.{d}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _line(p: PrimaryLine, decimals: int) -> str:
    def num(x: float) -> str:
        return _num(x, decimals)

    got = "published" if not np.isfinite(p.lower) else f"[{num(p.lower)}, {num(p.upper)}]"
    verdict = "protected" if p.ok else "DISCLOSED (" + ", ".join(p.reasons) + ")"
    return (
        f"{p.name} | {p.status} {STATUS_LABELS.get(p.status, '')} | {p.cause} | "
        f"{num(p.value)} | ≤ {num(p.need_lower)} and ≥ {num(p.need_upper)} | {got} | "
        f"{verdict}"
    )


def apply_pattern(table: Table, pattern: Pattern) -> tuple[np.ndarray, list[str]]:
    """Put a pattern read from another tool on the table's rule statuses: its suppressed
    cells become secondaries unless they are primary. Returns the primaries the pattern
    publishes (each an exact disclosure) and notes."""
    status = np.asarray(table.status).copy()
    sec = is_secondary(status)  # a pattern read from elsewhere replaces any secondary
    status[sec] = np.where(status[sec] == Status.SECONDARY_MANUAL, Status.SAFE_MANUAL, Status.SAFE)
    cells, sup = pattern.cells, pattern.suppressed
    prim = is_primary(status[cells])
    published = cells[prim & ~sup]
    to_secondary = cells[sup & is_candidate(status[cells])]
    status[to_secondary] = secondary_status_for(status[to_secondary])
    notes = list(pattern.notes)
    given = pattern.status
    differ = cells[(given > 0) & is_primary(given) & ~is_primary(status[cells])]
    if differ.size:
        notes.append(
            f"{differ.size} cell(s) primary in {pattern.path.name} are safe by the rules "
            "given here; audited as secondaries (only the rules given here decide primaries)"
        )
    if published.size:
        notes.append(
            f"{published.size} cell(s) primary by the rules given here are published in "
            f"{pattern.path.name}: disclosed"
        )
    table.status = status.astype(np.int8)
    return published, notes


def audit_table(
    table: Table,
    table_no: int,
    *,
    published: np.ndarray | None = None,
    notes: list[str] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> AuditReport:
    """The publication verdict on the table's current face, per primary. `published`:
    primaries a foreign pattern prints (disclosed whatever the attackers find)."""
    from argusqt.export.gate import cell_name, table_verdict
    from argusqt.protection.core.problem import protected_levels
    from argusqt.rules.cause import cause_codes

    status = np.asarray(table.status)
    prim = np.flatnonzero(is_primary(status))
    shown = set() if published is None else {int(c) for c in published}
    if prim.size == 0:
        return AuditReport(table_no, True, "Audit passed: no unsafe cells, nothing to protect",
                           [], 0, True, list(notes or []), int(table.decimals))  # fmt: skip
    verdict = table_verdict(table, progress=progress, cancel=cancel)
    out = verdict.outsider
    exact = int(is_suppressed(status).sum()) <= 2000
    causes = cause_codes(table)
    values = np.asarray(table.value, dtype=float)
    lpl, upl = protected_levels(table)  # a count's interval ends where '-' tells (D-94)
    need_lo = values - lpl
    lines = []
    for c in prim.tolist():
        reasons = list(verdict.reasons(c))
        lo, hi = float(out.lower[c]), float(out.upper[c])
        if c in shown:
            reasons = ["published", *reasons]
            lo = hi = float("nan")
        lines.append(
            PrimaryLine(
                c,
                cell_name(table, c),
                int(status[c]),
                causes[c],
                float(values[c]),
                float(need_lo[c]),
                float(values[c] + upl[c]),
                lo,
                hi,
                reasons,
            )
        )
    ok = verdict.ok and not shown
    summary = verdict.summary()
    if shown:
        summary = f"AUDIT FAILED: {len(shown)} primary cell(s) published outright" + (
            "" if verdict.ok else f"; {summary}"
        )
    n_sec = int(is_secondary(status).sum())
    return AuditReport(
        table_no, ok, summary, lines, n_sec, exact, list(notes or []), int(table.decimals)
    )
