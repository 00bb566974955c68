"""The end every suppression method shares: the final audit of its pattern, the statuses and
cost, the finish event and a result that carries its own audit for run_method.

One copy instead of one per method (OPT, MOD, HEUR, GH, NET): run_method reuses a method's
audit only for the very pattern it judged (`audit_digest`), so every method must say it alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch
from argusqt.protection.audit.outsider import EXACT_AUDIT_LIMIT, audit, pattern_digest
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import AuditResult, ProtectionResult


def audit_exactness(mode: object, suppressed: np.ndarray) -> bool:
    """Whether an audit computes exact intervals: params "audit_intervals" True or False, or
    "auto" (exact up to EXACT_AUDIT_LIMIT suppressed cells, pass/fail beyond)."""
    if mode != "auto":
        return bool(mode)
    return int(np.asarray(suppressed).sum()) <= EXACT_AUDIT_LIMIT


def final_audit(
    problem: CSPProblem,
    suppressed: np.ndarray,
    mode: object,
    cancel: CancelToken | None = None,
    hints: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> tuple[AuditResult, bool]:
    """The outsider audit of the final pattern (exact or pass/fail by `mode`) and its kind."""
    exact = audit_exactness(mode, suppressed)
    return audit(problem, suppressed, intervals=exact, hints=hints, cancel=cancel), exact


def suppression_result(
    method: str,
    problem: CSPProblem,
    suppressed: np.ndarray,
    final: AuditResult,
    exact: bool,
    *,
    watch: Stopwatch,
    log: list[str],
    figures: dict[str, Any],
    cancelled: bool,
    timed_out: bool,
    progress: ProgressCallback | None = None,
    finished: str = "",
    statuses: tuple[np.ndarray, float] | None = None,
) -> ProtectionResult:
    """The result of an audited pattern: statuses and cost (`problem.pattern_statuses` unless
    given), the "<finished> finished" event when named, and the audit with its digest."""
    status, cost = statuses if statuses is not None else problem.pattern_statuses(suppressed)
    if progress is not None and finished:
        progress(
            ProgressEvent(
                message=f"{finished} finished", fraction=1.0, incumbent=cost, elapsed=watch.elapsed
            )
        )
    return ProtectionResult(
        method=method,
        status=status,
        cost=cost,
        cancelled=cancelled,
        timed_out=timed_out,
        elapsed=watch.elapsed,
        audit=final,
        log=log,
        figures=figures,
        audit_digest=pattern_digest(problem, suppressed),
        audit_exact=exact,
    )


__all__ = ["audit_exactness", "final_audit", "suppression_result"]
