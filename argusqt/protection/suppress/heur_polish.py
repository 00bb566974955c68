"""HEUR's last step on small tables: the heuristic pattern made publishable (insider repair),
then a short branch-and-cut warm-started from it with the insider attacker inside its proof.

Measured (docs/design.md, "HEUR"): on tables of a few hundred cells the insider repair, not the
path LPs, is what made HEUR dear (tau_testW P(15,1): 16 secondaries against OPT's proven 8);
a branch-and-cut that knows the insiders from the start finds the cheap publishable pattern in
a second or two. Every pattern kept has passed the publication audit (outsider + insider).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from argusqt.errors import AuditError, Cancelled, MethodError
from argusqt.model.status import is_secondary, is_suppressed, secondary_status_for
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protection.audit.insider_repair import make_publishable
from argusqt.protection.audit.outsider import EXACT_AUDIT_LIMIT, pattern_digest
from argusqt.protection.audit.publication import PublicationVerdict
from argusqt.protection.core.budget import Deadline, DeadlineToken
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import ProtectionResult, grouped
from argusqt.protection.lp.separation import default_fixed

if TYPE_CHECKING:
    from argusqt.protection.suppress.branch_and_cut import PatternOutcome

#: tables up to this many cells get the polish (the branch-and-cut's attacker LPs stay cheap)
POLISH_CELLS = 2000
#: the branch-and-cut's work limit (SCIP nodes): a heuristic must give the same pattern for
#: the same table on any machine and load, so the polish is bounded by work, not seconds
#: (docs/design.md, "HEUR"); it stops earlier when it proves optimality
POLISH_NODES = 100
#: its second work limit, in attacker LPs (outsiders and insiders): the node limit does not
#: bound the root node's separation (sample activity × region: 10 nodes = 17.5 s, 12,750
#: attacker LPs at load 2.5). It replaces the old 10 s cap, which the machine's load decided
#: (issue 22: HEUR(1,9) on a 78-cell table, 13 secondaries quiet, 39 beside six CPU hogs).
#: Measured at load 3: b520 proves optimality in 810 LPs (1.7 s), a 78-cell table in 307;
#: the sample table's root needs more than 8,000 (42 s) and gains nothing: 2,000 ≈ the old
#: 10 s there
POLISH_LPS = 2_000
#: a polish with less than this many seconds left (of an explicit time limit) is not started
POLISH_MIN = 0.5


#: seconds passed to SCIP when no time limit was given (its limit must be finite)
NO_CAP = 1e9


def _stop_reason(out: PatternOutcome, nodes: int, lps: int = POLISH_LPS) -> str:
    """Why the branch-and-cut ended, for the log: only a time stop depends on the machine."""
    if out.optimal:
        return "branch-and-cut proved optimality"
    if out.cancelled:
        return "branch-and-cut cancelled"
    if out.timed_out:
        return "branch-and-cut stopped by the time limit (the pattern may depend on the machine)"
    if out.work_limit and out.nodes < nodes:
        return (
            f"branch-and-cut stopped at its work limit of {lps} attacker LPs (same on any machine)"
        )
    if out.nodes >= nodes:
        return (
            f"branch-and-cut stopped at its work limit of {nodes} SCIP nodes (same on any machine)"
        )
    return "branch-and-cut ended without a proof"


def _cost_of(problem: CSPProblem, pattern: np.ndarray) -> float:
    return float(np.asarray(problem.cost, dtype=float)[pattern & ~problem.primary].sum())


def polish(
    problem: CSPProblem,
    work: CSPProblem,
    result: ProtectionResult,
    seconds: float | None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    intervals: bool | str = "auto",
    nodes: int = POLISH_NODES,
    clock_may_decide: bool = False,
    lps: int = POLISH_LPS,
) -> ProtectionResult:
    """`result` (HEUR's audited pattern on `problem`) replaced by the cheapest publishable
    pattern found: the repaired heuristic pattern or the branch-and-cut's on `work` (the
    problem with the singleton options' virtual cells after its own) within `nodes` SCIP
    nodes and `lps` attacker LPs. `seconds` (None = none) is only the outer cap of an
    explicit time limit: a stop there sets `timed_out` ("the time limit decided"); unless
    `clock_may_decide` (the user gave a time limit)
    a pattern the clock stopped is not used, so HEUR stays reproducible. On cancel, time out or any failure of the step the
    best publishable pattern so far (or `result`) stays. `intervals` as run_method's "audit_intervals": the verdict kept is the one
    run_method would take, so it does not audit the pattern again."""
    # lazy: the branch-and-cut loads SCIP (pyscipopt), which HEUR needs only when it polishes
    # (tests/test_lazy_imports.py: the registry reaches HEUR without SCIP)
    from argusqt.protection.suppress.branch_and_cut import _insider_check, solve_pattern

    def exact(m: np.ndarray) -> bool:
        return bool(intervals) if intervals != "auto" else int(m.sum()) <= EXACT_AUDIT_LIMIT

    deadline = Deadline(seconds)
    token = DeadlineToken(deadline, cancel)
    sup0 = is_suppressed(result.status)
    lines: list[str] = []
    best: tuple[float, np.ndarray, PublicationVerdict, str] | None = None
    exact_of = {"heuristic": exact(sup0), "branch-and-cut": False}
    try:
        own = result.audit if not exact(sup0) else None  # HEUR's own audit is pass/fail
        fixed, verdict, added = make_publishable(
            problem, sup0, outsider=own, intervals=exact(sup0), cancel=token
        )
        best = (_cost_of(problem, fixed), fixed, verdict, "heuristic")
        lines.append(
            f"polish: heuristic pattern {grouped(_cost_of(problem, sup0))}, {added} cells for "
            f"insiders: {grouped(best[0])}"
        )
        if deadline.remaining <= POLISH_MIN:
            deadline.hit = True  # the clock, not the work, skipped the branch-and-cut
            lines.append("polish: no time left for the branch-and-cut (time limit)")
        elif not token.cancelled:
            progress(ProgressEvent(message="Heuristic: branch-and-cut from its pattern"))
            n = problem.n_cells
            out = solve_pattern(
                work,
                default_fixed(work),
                max_time=min(deadline.remaining, NO_CAP),
                max_nodes=nodes,
                max_lps=lps,
                gap=0.0,
                start=np.r_[fixed, np.ones(work.n_cells - n, dtype=bool)],
                progress=progress,
                cancel=cancel,
                insiders=_insider_check(problem),
            )
            lines.append("polish: " + "; ".join(out.log))
            lines.append("polish: " + _stop_reason(out, nodes, lps))
            m = None if out.mask is None else np.asarray(out.mask[:n], dtype=bool)
            if out.timed_out:
                deadline.hit = True
            if m is not None and out.timed_out and not clock_may_decide:
                # a pattern the clock chose would differ with the machine's load, and a
                # session or batch replay must give the same statuses: keep the heuristic's
                lines.append("polish: the clock's pattern is not used (HEUR stays reproducible)")
                m = None
            if m is not None and _cost_of(problem, m) < best[0] - 1e-9:
                exact_of["branch-and-cut"] = exact(m)
                fixed2, verdict2, added2 = make_publishable(
                    problem, m, intervals=exact(m), cancel=token
                )
                cost2 = _cost_of(problem, fixed2)
                lines.append(
                    f"polish: branch-and-cut pattern {grouped(_cost_of(problem, m))}, {added2} "
                    f"cells for insiders: {grouped(cost2)}"
                    + (" (proven optimal)" if out.optimal and added2 == 0 else "")
                )
                if cost2 < best[0] - 1e-9:
                    best = (cost2, fixed2, verdict2, "branch-and-cut")
    except Cancelled:
        lines.append("polish: stopped (cancel or time limit)")
    except (AuditError, MethodError) as err:
        lines.append(f"polish: not used ({err})")
    result.log.extend(lines)
    if deadline.hit and not (cancel is not None and cancel.cancelled):
        result.timed_out = True  # a time cap changed what the polish did
    if best is None:
        return result
    cost, pattern, verdict, what = best
    result.log.append(f"polish: kept the {what} pattern, cost {grouped(cost)}")
    status = np.asarray(problem.status).copy()
    new = pattern & ~problem.primary & ~is_secondary(problem.status)
    status[new] = secondary_status_for(status[new])
    result.status = status
    result.cost = cost
    result.audit = verdict.outsider
    result.verdict = verdict
    result.figures["audit_digest"] = pattern_digest(problem, pattern)
    result.figures["publication_digest"] = result.figures["audit_digest"]
    # the flag make_publishable had: run_method audits again only when it needs more
    result.figures["audit_exact"] = exact_of[what]
    result.figures["polish_seconds"] = deadline.elapsed
    return result
