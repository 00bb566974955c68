"""The verdict of record before a table is shown as protected or written for publication.

Our one promise: no published table lets an outsider (who knows every published value)
or an insider (a respondent who knows its own cells) recompute a primary inside its
protection interval. `publication_audit` runs both attackers on a suppression pattern;
the publication gate, `run_method` and the session all use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from copy import copy
from dataclasses import field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import Cancelled, TimeLimitError
from argusqt.progress import CancelToken, ProgressCallback, no_progress
from argusqt.protection.audit.insider import InsiderOutcome, insider_audit, record_passes
from argusqt.protection.audit.insider_memo import by_pattern
from argusqt.protection.audit.outsider import audit
from argusqt.protection.core.budget import Deadline, DeadlineToken, out_of_time, stop_after
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import NEGATIVE_NOTE, TABLE_BY_TABLE_NOTE
from argusqt.protection.core.result import AuditResult

if TYPE_CHECKING:
    from argusqt.protection.audit.floor_memo import FloorMemo
    from argusqt.protection.audit.insider_floor import FloorOutcome

#: how a primary is disclosed: the LP attackers or a point estimate
#: (argusqt/docs/methods.md §12, §13, §2.1)
Reason = Literal[
    "outsider",
    "insider",
    "midpoint",
    "endpoint",
    "level estimate",
    "adjusted value",
    "rounding interval",
    "ckm check",
    "combined",  # a determined sum of suppressed cells fails a rule (US#160)
    "ckm interval",
    "published value",
    "relations not audited",
]

#: seconds a method may still use after a cancel to finish or audit its best pattern; a
#: pattern not audited by then is dropped and the table stays unprotected
CANCEL_GRACE = 1.5


def audit_stop(deadline: Deadline, cancel: CancelToken | None) -> DeadlineToken:
    """What a run's final audit (and its insider repair) polls: a cancel, before or during
    it, leaves CANCEL_GRACE seconds to finish; the run's time limit bounds it too."""
    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    return DeadlineToken(deadline, grace, extra=stop_after(deadline.seconds))


def audit_stopped(
    stop: DeadlineToken, cancel: CancelToken | None, who: str, pattern: str, outcome: str
) -> TimeLimitError | Cancelled:
    """The error to raise when `stop` (audit_stop) ended the audit of `who`'s `pattern`: the
    user's limit (TimeLimitError) unless the user cancelled."""
    if stop.out_of_time and not (cancel is not None and cancel.cancelled):
        what = f"while auditing {pattern.replace('best ', '')} (outsider and insiders)"
        return TimeLimitError(
            f"{who}: "
            + out_of_time(stop.deadline.seconds, f"{what}, so it is not used", outcome=outcome)
        )
    return Cancelled(f"{who} cancelled: {pattern} could not be audited in time, so it is not used")


#: above this many suppressed cells the outsider audit decides pass/fail only (no exact intervals)
EXACT_INTERVAL_LIMIT = 2000


@dataclass(frozen=True)
class Disclosure:
    """A primary an attacker recomputes inside its protection interval, and how."""

    cell: int
    reason: Reason
    lower: float  # attacker interval (a witness bound when only pass/fail was decided)
    upper: float
    #: insider: the cells the attacking contributor knows (it alone makes them up)
    known_cells: tuple[int, ...] = ()
    #: insider sharing cells: (cell, lower bound) it knows besides (its contribution, D-91)
    floors: tuple[tuple[int, float], ...] = ()


@dataclass
class PublicationVerdict:
    """Outcome of the outsider and the insider attacker on one pattern."""

    outsider: AuditResult
    disclosures: list[Disclosure] = field(default_factory=list)
    insider: InsiderOutcome | None = None
    elapsed: float = 0.0
    #: the attack of respondents sharing cells (their contributions as lower bounds, D-91)
    floor: FloorOutcome | None = None
    label: Callable[[int], str] = str  # cell → words (codes), set by publication_audit

    @property
    def insiders_checked(self) -> int:
        """Respondents attacked: each alone makes up at least one suppressed cell."""
        return 0 if self.insider is None else self.insider.attackers

    @property
    def ok(self) -> bool:
        return not self.disclosures

    @property
    def failing_cells(self) -> np.ndarray:
        return np.unique(np.array([d.cell for d in self.disclosures], dtype=np.int64))

    def reasons(self, cell: int) -> list[Reason]:
        return sorted({d.reason for d in self.disclosures if d.cell == cell})

    def summary(self, names=None) -> str:
        """One line for logs and dialogs; `names(cell)` labels cells (default: their codes)."""
        label = names or self.label
        n_out = int(self.outsider.audited.sum())
        if self.ok:
            checked = f"{n_out} primary cell{'s' if n_out != 1 else ''}"
            text = f"Audit passed: {checked} checked against the outside attacker"
            ins = self.insider
            if ins is not None and ins.attackers:
                unit = "holding" if ins.unit == "holding" else "respondent"
                unit += "s" if ins.attackers != 1 else ""
                text += f" and {ins.attackers} {unit} alone in a suppressed cell"
            text += "; every protection interval covered."
            floor_note = None if self.floor is None else self.floor.note
            if ins is not None and not ins.available:
                text += " Insiders not checked: the table has no respondent counts."
            elif ins is not None and floor_note is None:
                # no floor audit (a table file, tables judged together): said, so the
                # verdict never claims more than was checked (argusqt/docs/methods.md §13)
                text += (
                    " Not checked: a respondent sharing a suppressed cell, who knows the cell"
                    " is at least its own contribution."
                )
            elif ins is not None and floor_note == NEGATIVE_NOTE:
                text += (
                    " A respondent sharing a suppressed cell learns nothing from its own"
                    " contribution: the data has negative values."
                )
            elif ins is not None and floor_note == TABLE_BY_TABLE_NOTE:
                text += (
                    " Respondents sharing a suppressed cell checked table by table (each knows"
                    " the cell is at least its own contribution). Not checked: one record's"
                    " contributions to several of the tables together."
                )
            elif ins is not None:
                text += (
                    " Respondents sharing a suppressed cell checked too (each knows the cell"
                    " is at least its own contribution)."
                )
            return text
        cells = self.failing_cells
        parts = []
        for cell in cells[:10]:
            why = "/".join(self.reasons(int(cell)))
            parts.append(f"{label(int(cell))} ({why})")
        more = "…" if cells.size > 10 else ""
        return (
            f"AUDIT FAILED: {cells.size} primary cell{'s' if cells.size != 1 else ''} can be "
            f"recomputed inside {'their' if cells.size != 1 else 'its'} protection interval: "
            f"{', '.join(parts)}{more}."
        )


def cell_label(problem: CSPProblem, cell: int) -> str:
    """A cell as users know it: its codes when the problem has the table's dimensions."""
    dims = problem.dims
    if dims:
        shape = tuple(len(d) for d in dims)
        if cell < int(np.prod(shape)):
            nodes = np.unravel_index(int(cell), shape)
            return (
                "("
                + ", ".join(d.codes[int(i)].strip() for d, i in zip(dims, nodes, strict=True))
                + ")"
            )
    if problem.names and cell < len(problem.names):
        return problem.names[cell]
    return f"cell {cell}"


class VerdictMemo:
    """The publication verdicts of one problem's patterns while a method's last step runs:
    MOD's polish audits a pattern it published before again (D-101)."""

    def __init__(self, problem: CSPProblem) -> None:
        self.problem = problem
        self.seen: dict[tuple[bytes, int, bool], PublicationVerdict] = {}
        self.hits = 0
        #: the floor audits' components met before (floor_memo), made at the first one
        self.floor_memo: FloorMemo | None = None


_MEMO: ContextVar[VerdictMemo | None] = ContextVar("argusqt_verdict_memo", default=None)


@contextmanager
def remembered_verdicts(problem: CSPProblem) -> Iterator[VerdictMemo]:
    """Within the block, publication_audit of `problem` on a pattern it judged before (the
    same cells, the same interval choice) gives a copy of that verdict instead of its LPs:
    every attacker is deterministic given the pattern (moves and seeds only spare LPs)."""
    # lazy: only MOD's polish enters the block; a table file's run never needs it (D-16)
    from argusqt.protection.audit.outsider_memo import remembered_components

    memo = VerdictMemo(problem)
    token = _MEMO.set(memo)
    try:
        # and its insider audits by pattern (D-107), its outsider components (D-114)
        with by_pattern(problem), remembered_components(problem):
            yield memo
    finally:
        _MEMO.reset(token)


def _copied(verdict: PublicationVerdict) -> PublicationVerdict:
    """A verdict the caller may change (callers add disclosures or replace the outsider)."""
    return replace(verdict, disclosures=list(verdict.disclosures), outsider=copy(verdict.outsider))


def publication_audit(
    problem: CSPProblem,
    suppressed: np.ndarray,
    *,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
    intervals: bool | None = None,
    outsider: AuditResult | None = None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    moves: list[tuple[np.ndarray, np.ndarray]] | None = None,
    floor_seeds: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] | None = None,
) -> PublicationVerdict:
    """Outsider and insider attacker on `suppressed`; `ok` only if neither discloses a primary.

    `intervals`: exact outsider intervals (True), pass/fail (False) or automatic (None:
    exact up to EXACT_INTERVAL_LIMIT suppressed cells). `outsider`: an audit of this very
    pattern already run by the caller (reused). `lower`/`upper`: published intervals
    (interval protection) instead of a suppression pattern. `moves`: attacker moves the
    method found (insider_audit checks each). `floor_seeds`: the attacker points of an
    earlier floor audit (its outcome's `points`), each checked before it spares an LP.
    Raises Cancelled when cancelled.
    """
    sup = np.asarray(suppressed, dtype=bool)
    if intervals is None:
        intervals = int(sup.sum()) <= EXACT_INTERVAL_LIMIT
    memo = _MEMO.get()
    key = None
    if memo is not None and memo.problem is problem and lower is None and upper is None:
        key = (np.packbits(sup).tobytes(), int(sup.size), bool(intervals))
        known = memo.seen.get(key)
        if known is not None:
            memo.hits += 1
            return _copied(known)
    verdict = _publication_audit(
        problem, sup, cancel, progress, intervals, outsider, lower, upper, moves, floor_seeds
    )
    if key is not None and memo is not None:
        memo.seen[key] = _copied(verdict)
    return verdict


def _publication_audit(
    problem: CSPProblem,
    sup: np.ndarray,
    cancel: CancelToken | None,
    progress: ProgressCallback,
    intervals: bool,
    outsider: AuditResult | None,
    lower: np.ndarray | None,
    upper: np.ndarray | None,
    moves: list[tuple[np.ndarray, np.ndarray]] | None,
    floor_seeds: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] | None,
) -> PublicationVerdict:
    """publication_audit's attackers on `sup` (its interval choice made)."""
    out = outsider
    if out is None:
        out = audit(
            problem,
            sup,
            intervals=intervals,
            lower=lower,
            upper=upper,
            progress=progress,
            cancel=cancel,
        )
    disclosures = [
        Disclosure(int(c), "outsider", float(out.lower[c]), float(out.upper[c]))
        for c in out.failures
    ]
    inside = insider_audit(
        problem, sup, progress=progress, cancel=cancel, lower=lower, upper=upper, moves=moves
    )
    if out.ok and lower is None and upper is None:
        record_passes(problem, sup, inside)  # within MOD's polish: its later audits (D-117)
    disclosures += [
        Disclosure(d.cell, "insider", d.lower, d.upper, d.known) for d in inside.disclosures
    ]
    floor = _floor_attack(problem, sup, out.ok, lower, upper, None, cancel, floor_seeds)
    disclosures += _floor_disclosures(problem, floor, disclosures)
    return PublicationVerdict(
        outsider=out,
        disclosures=disclosures,
        insider=inside,
        elapsed=out.elapsed + inside.elapsed,
        label=lambda c: cell_label(problem, c),
        floor=floor,
    )


def _floor_attack(
    problem: CSPProblem,
    sup: np.ndarray,
    outsider_ok: bool,
    lower: np.ndarray | None,
    upper: np.ndarray | None,
    only: list[tuple[int, int]] | None,
    cancel: CancelToken | None,
    seeds: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] | None = None,
) -> FloorOutcome | None:
    """The respondents sharing cells (D-91), once the outsider passed (a failing pattern is
    the method's defect, judged by the outsider alone); None without their contributions."""
    if problem.floors is None or not outsider_ok:
        return None
    # lazy: a table file (no floors) never needs it (D-16)
    from argusqt.protection.audit.floor_memo import FloorMemo
    from argusqt.protection.audit.insider_floor import floor_audit

    memo = _MEMO.get()
    known = None
    if memo is not None and memo.problem is problem:  # within remembered_verdicts (D-101)
        if memo.floor_memo is None:
            memo.floor_memo = FloorMemo(problem, problem.floors)
        known = memo.floor_memo
    return floor_audit(problem, sup, problem.floors, lower=lower, upper=upper, only=only,
                       cancel=cancel, seeds=seeds, memo=known)  # fmt: skip


def _floor_disclosures(
    problem: CSPProblem, floor: FloorOutcome | None, before: list[Disclosure]
) -> list[Disclosure]:
    """One insider disclosure per (primary, side, respondent) the floor attack found, the
    side not attacked at its level; a cell already disclosed is left to the next round
    (the floor outcome keeps it: the recheck attacks it again)."""
    if floor is None:
        return []
    done = {d.cell for d in before}
    v = np.asarray(problem.values, dtype=float)
    out = []
    for d in floor.disclosures:
        if d.cell in done:
            continue
        lo = d.reach if d.direction < 0 else float(v[d.cell] - problem.lpl[d.cell])
        hi = d.reach if d.direction > 0 else float(v[d.cell] + problem.upl[d.cell])
        out.append(Disclosure(d.cell, "insider", lo, hi, d.known, d.floors))
    return out


def recheck_after_growth(
    problem: CSPProblem,
    before: np.ndarray,
    suppressed: np.ndarray,
    previous: PublicationVerdict,
    *,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
    moves: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> PublicationVerdict:
    """The verdict on `suppressed`, a superset of `before` whose verdict was `previous`.

    Suppressing more cells only frees attacker variables: every cell outside `before` minus a
    respondent's own cells was fixed at its true value, and it is fixed or free now, so each
    attacker's feasible set (outsider, every insider, new insiders whose cells were published
    before) contains its old one and nothing that passed can fail. Only the insider
    disclosures of `previous` are attacked again; the outsider's pass/fail verdict is kept
    (its bounds stay reachable points). With exact outsider intervals, call
    publication_audit instead: those intervals would only be inner bounds here.
    """
    sup = np.asarray(suppressed, dtype=bool)
    old = np.asarray(before, dtype=bool)
    if np.any(old & ~sup) or not previous.outsider.ok:
        raise ValueError("recheck_after_growth needs a grown pattern with a passing outsider")
    ins = previous.insider
    recheck: dict[int, list[int]] = {}
    if ins is not None:
        for d in ins.disclosures:
            recheck.setdefault(d.respondent, []).append(d.cell)
    inside = insider_audit(
        problem, sup, progress=progress, cancel=cancel, recheck=recheck, moves=moves
    )
    if ins is not None:
        inside.n_lps += ins.n_lps
        inside.elapsed += ins.elapsed
        inside.moves = ins.moves + inside.moves
    disclosures = [
        Disclosure(d.cell, "insider", d.lower, d.upper, d.known) for d in inside.disclosures
    ]
    # the floor attack's pairs that failed before; the others passed and still pass
    floor = None
    if previous.floor is not None:
        floor = _floor_attack(problem, sup, True, None, None, previous.floor.failed, cancel,
                              previous.floor.points)  # fmt: skip
        disclosures += _floor_disclosures(problem, floor, disclosures)
    return PublicationVerdict(
        outsider=previous.outsider,
        disclosures=disclosures,
        insider=inside,
        elapsed=previous.outsider.elapsed + inside.elapsed,
        label=lambda c: cell_label(problem, c),
        floor=floor,
    )


def grown_verdict(
    problem: CSPProblem,
    before: np.ndarray,
    suppressed: np.ndarray,
    previous: PublicationVerdict,
    *,
    intervals: bool,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
) -> PublicationVerdict:
    """The verdict on `suppressed`, grown from `before` whose verdict `previous` passed the
    outsider: the insiders as recheck_after_growth judges them, the outsider again with exact
    intervals when `intervals` asks for them (the old ones would be inner bounds)."""
    verdict = recheck_after_growth(
        problem, before, suppressed, previous, cancel=cancel, progress=progress
    )
    if not intervals:
        return verdict
    sup = np.asarray(suppressed, dtype=bool)
    out = audit(problem, sup, intervals=True, progress=progress, cancel=cancel)
    verdict.disclosures = [
        Disclosure(int(c), "outsider", float(out.lower[c]), float(out.upper[c]))
        for c in out.failures
    ] + verdict.disclosures
    verdict.elapsed += out.elapsed - verdict.outsider.elapsed
    verdict.outsider = out
    return verdict
