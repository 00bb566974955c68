"""What every protection method returns, so the session, batch runner and GUI treat them alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.model.status import is_secondary

if TYPE_CHECKING:  # annotations only: the audit room sits above core
    from argusqt.protection.audit.publication import PublicationVerdict

#: what a result the time limit changed says, in the log and in every door's result
#: (ProtectionResult.timed_out): its statuses are not reproducible (issue 22)
TIME_LIMIT_DECIDED = (
    "the time limit decided: the run was cut short by it, so the result may differ on "
    "another machine or under another load"
)


@dataclass
class AuditResult:
    """Attacker intervals of the audited cells (argusqt/docs/methods.md §12); NaN where not
    audited."""

    lower: np.ndarray  # realised lower bound per cell
    upper: np.ndarray  # realised upper bound per cell
    required_lower: np.ndarray  # a − LPL (primaries), NaN otherwise
    required_upper: np.ndarray  # a + UPL (primaries), NaN otherwise
    audited: np.ndarray  # bool mask of cells audited
    passed: np.ndarray  # bool per cell (True for cells not audited)
    exact: np.ndarray  # bool: exact disclosure (upper − lower ≤ tolerance)
    tolerance: float = 0.0
    elapsed: float = 0.0
    n_lps: int = 0

    @property
    def ok(self) -> bool:
        return bool(self.passed.all())

    @property
    def failures(self) -> np.ndarray:
        return np.flatnonzero(~self.passed)

    def summary(self) -> str:
        n = int(self.audited.sum())
        if self.ok:
            cells = f"{n} primary cell{'s' if n != 1 else ''}"
            return f"Audit passed: {cells} checked, every protection interval covered."
        return (
            f"AUDIT FAILED: {len(self.failures)} of {n} checked cell{'s' if n != 1 else ''} "
            f"{'is' if len(self.failures) == 1 else 'are'} not protected "
            f"(cells {', '.join(map(str, self.failures[:10]))}{'…' if len(self.failures) > 10 else ''})."
        )


@dataclass
class ProtectionResult:
    """Outcome of a method on a CSPProblem; `status` has secondaries set (11/12)."""

    method: str
    status: np.ndarray
    cost: float = 0.0  # Σ cost of secondary suppressions (or weighted deviation for CTA)
    lower_bound: float | None = None
    gap: float | None = None  # relative, 0.0 = proven optimal
    optimal: bool = False
    cancelled: bool = False
    #: the user's time limit (a safety cap) changed the course of the run: the result is
    #: still audited, but may differ on another machine or load (TIME_LIMIT_DECIDED); a run
    #: without it is bounded by counts only and gives the same statuses everywhere
    timed_out: bool = False
    elapsed: float = 0.0
    published: np.ndarray | None = None  # rounded / adjusted values (RND, CTA)
    interval_lower: np.ndarray | None = None  # interval protection: published intervals
    interval_upper: np.ndarray | None = None
    audit: AuditResult | None = None
    #: the publication verdict of the final pattern or face (outsider and insider)
    verdict: PublicationVerdict | None = None
    #: what run_method reads of the method's own final audit: the pattern it judged
    #: (audit.outsider.pattern_digest) and whether its intervals are exact; run_method reuses
    #: that audit only for this very pattern
    audit_digest: str | None = None
    audit_exact: bool = False
    #: the pattern the method ran the publication verdict (and its repair) on, if it did
    publication_digest: str | None = None
    #: attacker moves (cells, shifts) through the final pattern the method found: the
    #: insider audit starts its cover from them after checking each (never trusted as given)
    moves: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    #: figures for the log, the report and the session file only; nothing decides on them
    figures: dict[str, Any] = field(default_factory=dict)
    #: after a cancel: which result the table kept and its audit, the one sentence the log,
    #: the dialogs, the Solver panel and the API all give (set by the Session)
    cancel_note: str = ""

    @property
    def n_secondary(self) -> int:
        s = np.asarray(self.status)
        return int(is_secondary(s).sum())

    def outcome_lines(self, face: str, original: np.ndarray | None = None) -> list[str]:
        """The result's figures in the words of its face (a rounded or adjusted table has no
        secondary suppressions); `original`: the true values, to count the changed cells."""
        changed = None
        if self.published is not None and original is not None:
            diff = np.abs(np.asarray(self.published, float) - np.asarray(original, float))
            changed = int(np.count_nonzero(diff > 1e-9))
        if face == "ckm":  # the method's loss and risk figures (argusqt/docs/methods.md §16.7)
            loss = self.figures.get("loss") or {}
            lines = [
                f"Perturbed cells (value changed): {loss.get('changed', changed or 0):,} of "
                f"{loss.get('cells', 0):,}",
                f"Mean absolute deviation: {loss.get('mean_abs', 0.0):.3g}; mean relative "
                f"deviation: {100 * loss.get('mean_rel', 0.0):.2f} %",
                f"Small cells (1–4) published at their true value: "
                f"{100 * loss.get('small_exact_share', 0.0):.1f} %",
            ]
        elif face == "round":
            lines = [f"Rounded cells (value changed): {changed:,}"] if changed is not None else []
            lines.append(f"Distance to the true values (sum of changes): {grouped(self.cost)}")
        elif face == "cta":
            if changed is not None:
                lines = [f"Adjusted cells: {changed:,}"]
            else:
                lines = [f"Adjusted safe cells: {self.n_secondary:,}"]
            lines.append(f"Weighted deviation: {grouped(self.cost)}")
        elif face == "interval":
            lines = [f"Objective (interval widths): {grouped(self.cost)}"]
        else:
            lines = [
                f"Secondary suppressions: {self.n_secondary:,}",
                f"Cost of secondaries: {grouped(self.cost)}",
            ]
        if self.lower_bound is not None:
            lines.append(f"Lower bound: {grouped(self.lower_bound)}")
        if self.gap is not None:
            lines.append("Proven optimal" if self.optimal else f"Gap: {100 * self.gap:.2f} %")
        return lines


#: per face, the figures of a result that are public parameters: an attacker knows them and
#: the publication gate needs them to judge the table again (Table.protection.public)
PUBLIC_FIGURES: dict[str, tuple[str, ...]] = {
    "round": ("base", "steps"),
    "ckm": ("mu_c", "ptable_d", "ptable_v", "ptable_js", "ptable_pstay"),
}


def public_figures(face: str, figures: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    """The public parameters among a result's figures, as ProtectionInfo.public keeps them."""
    return tuple((k, float(figures[k])) for k in PUBLIC_FIGURES.get(face, ()) if k in figures)


def grouped(x: float | None) -> str:
    """Grouped digits, two decimals only when the figure has them (never 5.32128e+06)."""
    if x is None:
        return "–"
    x = float(x)
    text = f"{x:,.0f}" if abs(x - round(x)) < 1e-9 else f"{x:,.2f}"
    return "0" if text in ("-0", "-0.00") else text
