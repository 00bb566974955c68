"""One entry point for every protection method: `run_method(problem, "OPT", options, …)`.

Methods come from the registry (protection/registry.py); `options` are the solver's own keys
(a descriptor's `solver_options` makes them from typed parameters). Suppression methods
always end with a full audit: a pattern that fails it raises AuditError and is never
returned as protected. Intervals, rounded and adjusted values end with the form-aware
publication verdict (protection.disclosure) in `result.verdict`; the session keeps such a
result only as NOT PUBLISHABLE when it fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from argusqt.errors import AuditError, Cancelled, TimeLimitError
from argusqt.model.status import is_candidate, is_primary, is_suppressed, secondary_status_for
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protection.audit.disclosure import face_verdict, result_face
from argusqt.protection.audit.insider_repair import make_publishable
from argusqt.protection.audit.outsider import EXACT_AUDIT_LIMIT, pattern_digest
from argusqt.protection.audit.publication import audit_stop, audit_stopped
from argusqt.protection.core import registry
from argusqt.protection.core.budget import (
    Deadline,
    run_scope,
    seconds_param,
    seeds,
    starved_note,
)
from argusqt.protection.core.options import SolverOptions, options_dict
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor
from argusqt.protection.core.result import TIME_LIMIT_DECIDED, ProtectionResult
from argusqt.protection.suppress.epilogue import audit_exactness
from argusqt.protection.suppress.singleton import (
    SINGLETON_KEYS,
    add_singleton_cells,
    drop_virtual,
    singleton_request,
)

#: EXACT_AUDIT_LIMIT: sessionfile's audit of a loaded pattern reads it from here
__all__ = ["EXACT_AUDIT_LIMIT", "run_method"]


def run_method(
    problem: CSPProblem,
    method: str | MethodDescriptor,
    params: SolverOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Run a method by name; suppression methods end with a publishable pattern or an error.

    Suppression methods get the singleton options (SS and SM on unless switched off, MF with
    a minimum frequency, see singleton_request): methods that model them (descriptor
    `singletons="method"`) get the keys, the others get virtual cells added here. The pattern then goes through the publication verdict (outsider and insider
    attacker); cells a respondent could recompute are repaired (more suppressions) rather
    than published. params "audit_intervals": True (exact intervals), False (pass/fail) or
    "auto" (exact up to EXACT_AUDIT_LIMIT suppressed cells). A method's own pass/fail audit
    of the very same pattern (same digest) is reused instead of repeated. params "max_time"
    (CPU-seconds, D-96) is the whole run's safety cap, the final audit included: past it and
    its grace (budget.limit_grace) the run ends with TimeLimitError; a result the cap changed
    says so (`timed_out`, and TIME_LIMIT_DECIDED in its log).
    """
    given = params
    params = options_dict(given)
    desc = method if isinstance(method, MethodDescriptor) else registry.get(method)
    limit = seconds_param(params, "max_time", "time_limit")
    with run_scope() as scope:  # this run's starved deadlines, not another run's (session 20)
        run_deadline = Deadline(limit)
        try:
            result = _run(problem, desc, given, params, progress, cancel, run_deadline, limit)
        except TimeLimitError as err:
            if scope.starved or run_deadline.starved:
                raise TimeLimitError(f"{err}; {starved_note(limit)}") from None
            raise
    result.figures |= seeds()  # saved with the session, as the result's figures
    if result.timed_out and TIME_LIMIT_DECIDED not in result.log:
        result.log.append(TIME_LIMIT_DECIDED)
    if result.timed_out and (scope.starved or run_deadline.starved):
        result.log.append(starved_note(limit))  # the backstop, not the CPU limit (D-96)
    return result


def _run(
    problem: CSPProblem,
    desc: MethodDescriptor,
    given: SolverOptions | Mapping[str, Any] | None,
    params: dict[str, Any],
    progress: ProgressCallback,
    cancel: CancelToken | None,
    run_deadline: Deadline,
    limit: float | None,
) -> ProtectionResult:
    """run_method's work: the method, then (suppression) the publication audit in time.
    A face method gets its typed options as given; a suppression method the mapping with
    run_method's singleton keys."""
    name = desc.name
    if desc.kind != "suppress":
        options = given if isinstance(given, SolverOptions) else params
        face_result: ProtectionResult = desc.solve(problem, options, progress, cancel)
        if face_result.verdict is None:
            # the face as it will be printed gets the one publication verdict (argusqt/docs/methods.md §2.1, §14)
            verdict = face_verdict(problem, result_face(desc.face, face_result), cancel=cancel)
            face_result.verdict = verdict
            face_result.log.append(verdict.summary())
        return face_result
    opts, minfreq = singleton_request(params)
    options = {k: v for k, v in params.items() if k not in SINGLETON_KEYS}
    work, n_virtual = problem, 0
    if desc.singletons == "method":
        options |= {
            "singleton_singleton": "SS" in opts,
            "singleton_multiple": "SM" in opts,
            "min_freq": minfreq,
        }
    elif opts and problem.freq is not None:
        work, n_virtual = add_singleton_cells(problem, None, opts, minfreq)
    try:
        result: ProtectionResult = desc.solve(work, options, progress, cancel)
    except TimeLimitError as err:
        raise TimeLimitError(f"{name}: {err}") from None
    except Cancelled as err:  # the caller says what the table holds now
        why = err.message.removeprefix("cancelled ")
        raise Cancelled(f"{name} cancelled: {why}") from None

    # the method's own audit judged the pattern on `work` (with its virtual cells)
    own_digest = result.audit_digest
    own_same = own_digest is not None and own_digest == pattern_digest(
        work, is_suppressed(result.status)
    )
    if n_virtual:
        result = drop_virtual(result, problem.n_cells)
        result.log.append(f"{n_virtual} virtual singleton cells added ({', '.join(opts)})")
    elif opts and problem.freq is not None:
        result.log.append(f"singleton options {', '.join(opts)}")
    _normalise_statuses(problem, result)
    sup = is_suppressed(result.status)
    exact = audit_exactness(params.get("audit_intervals", "auto"), sup)
    own = result.audit
    own_exact = result.audit_exact
    outsider = None
    if (
        (own_exact or not exact)
        and own is not None
        and own_same
        and (n_virtual == 0 or (own.ok and not exact))
    ):
        # the method already ran this audit on exactly this pattern: on this problem, or
        # with virtual cells, whose relations only narrow the attacker (a pass there is a
        # pass here; its bounds, cut to the real cells, are reachable points here)
        outsider = own
        kind = "exact" if own_exact else "pass/fail"
        result.log.append(f"audit: the method's own {kind} audit of this pattern is used")
    verdict_own = result.verdict
    if (
        n_virtual == 0
        and verdict_own is not None
        and verdict_own.ok
        and (own_exact or not exact)
        and result.publication_digest == pattern_digest(problem, sup)
    ):
        # the method ran the publication audit (and its repair) on this very pattern within
        # its time limit (OPT): repeating it would run past the user's limit
        result.audit = verdict_own.outsider
        result.log.append(verdict_own.summary())
        return result
    progress(ProgressEvent(message="Auditing the pattern (outsider and insiders)"))
    stop = audit_stop(run_deadline, cancel)
    try:
        fixed, verdict, added = make_publishable(
            problem,
            sup,
            outsider=outsider,
            intervals=exact,
            cancel=stop,
            moves=result.moves + problem.moves,
        )
    except AuditError as err:
        raise AuditError(f"{name}: {err}") from None
    except Cancelled:
        raise audit_stopped(
            stop, cancel, name, "its best pattern", "the table was left unchanged"
        ) from None
    if added:
        status = np.asarray(result.status).copy()
        new = fixed & ~sup
        status[new] = secondary_status_for(status[new])
        result.status = status
        _normalise_statuses(problem, result)
        result.optimal = False
        if result.lower_bound is not None and result.cost > 0:
            result.gap = max(0.0, result.cost - result.lower_bound) / result.cost
        result.log.append(
            f"{added} cells suppressed in addition so that no respondent alone in a "
            "suppressed cell recomputes another primary"
        )
    result.audit = verdict.outsider
    result.verdict = verdict
    result.log.append(verdict.summary())
    # the moves that proved this pattern: a run again on the same table (the rule on
    # combined cells) starts its insider audit from them; protect_combined drops them
    result.moves = result.moves + (verdict.insider.moves if verdict.insider else [])
    return result


def _normalise_statuses(problem: CSPProblem, result: ProtectionResult) -> None:
    """Secondaries as 11/12 per input status (1→11, 2→12, 13→11), primaries unchanged, cost."""
    orig = np.asarray(problem.status)
    status = np.asarray(result.status).astype(orig.dtype, copy=True)
    prim = is_primary(orig)
    if not np.all(is_suppressed(status)[prim]):
        raise AuditError(f"{result.method}: a primary cell was published by the method")
    status[prim] = orig[prim]
    new = is_suppressed(status) & is_candidate(orig)
    status[new] = secondary_status_for(orig[new])
    result.status = status
    sec = new | (is_suppressed(status) & ~prim & ~is_candidate(orig))
    result.cost = float(np.sum(np.asarray(problem.cost, dtype=float)[sec & ~prim]))
