"""Fast suppression heuristic (argusqt/docs/methods.md §4): one path LP per primary and direction,
then cleanup.

Each LP moves a primary by its protection level at minimum cost of newly suppressed cells
(already suppressed cells nearly free) on a small neighbourhood of the primary, widened
and finally the whole table when infeasible. The LP solution is an attacker move, so it
proves protection by construction; it also proves protection of every other primary it
shifts far enough, which lets most later primaries skip their LP.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import AuditError, Cancelled, TimeLimitError
from argusqt.model.status import is_secondary, is_suppressed, secondary_status_for
from argusqt.progress import CancelToken, ProgressCallback, Stopwatch, no_progress
from argusqt.protection.audit.outsider import audit, pattern_digest
from argusqt.protection.audit.publication import CANCEL_GRACE
from argusqt.protection.core.budget import (
    Deadline,
    DeadlineToken,
    out_of_time,
    stop_after,
)
from argusqt.protection.core.options import SuppressOptions
from argusqt.protection.core.options import seconds as seconds_of
from argusqt.protection.core.params import MethodParams, TableFacts, minutes_param
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import ProtectionResult
from argusqt.protection.lp.cleanup import Witnesses, cleanup
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.protection.lp.protector import K_FREE, Protector, primary_order, protect_all
from argusqt.protection.suppress import heur_polish
from argusqt.protection.suppress.epilogue import suppression_result
from argusqt.protection.suppress.singleton import (
    add_singleton_cells,
    drop_virtual,
    singleton_param,
    singleton_request,
    singleton_solver_options,
)


@dataclass(frozen=True, kw_only=True)
class HeurOptions(SuppressOptions):
    """What solve_heuristic and solve_heur_method read."""

    ALIASES: ClassVar[Mapping[str, str]] = {"time_limit": "max_time"}  # the old name
    KEEP_NONE: ClassVar[frozenset[str]] = frozenset({"cleanup_lps"})
    #: HEUR as a method models SS and SM itself; both on unless switched off (singleton_request)
    singleton_singleton: bool = True
    singleton_multiple: bool = True
    cleanup_time: float | None = None  # seconds for the cleanup (None = what the limit leaves)
    #: LPs for the cleanup: "auto" (a share of the path LPs), None = all
    cleanup_lps: int | Literal["auto"] | None = "auto"
    k_free: int = K_FREE  # cheapest unsuppressed siblings per node in the first neighbourhood
    repair_rounds: int = 3
    #: the small-table polish of heur_polish (HEUR as a method only; OPT's start pattern calls
    #: solve_heuristic without it): 0 = off, else an outer cap in seconds (None = only the
    #: run's max_time); polish_nodes and polish_lps its work limits (None = POLISH_NODES,
    #: POLISH_LPS)
    polish: float | None = None
    polish_nodes: int | None = None
    polish_lps: int | None = None
    #: past max_time and its grace the run is refused (TimeLimitError); False: the caller
    #: stops it itself (OPT's start heuristic, stopped by OPT's own token)
    hard_limit: bool = True


#: share of the time limit the path-LP phase may use before it hurries (a safety cap: a run
#: that hurries says so, timed_out, since its pattern then depends on the machine)
PATH_SHARE = 0.5
#: without a time limit the clean-up may solve this many times the path phase's LPs (at
#: least CLEANUP_MIN_LPS): most of its gain comes from the first, most expensive cells, and
#: an LP count (not seconds) gives the same pattern on every run. Measured on b7290
#: (docs/design.md, "HEUR"): since kept moves re-prove most pairs without an LP, 1× the
#: path LPs publishes more than 2× did before (617.1 against 625.0 ·10⁶) in half the time
CLEANUP_SHARE = 1.0
CLEANUP_MIN_LPS = 400


def solve_heuristic(
    problem: CSPProblem,
    params: HeurOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Heuristic pattern + cleanup, checked by a pass/fail audit (repaired if needed).

    On cancel: the cleanup stops; the remaining primaries are still protected and the
    pattern audited if that fits in CANCEL_GRACE seconds after the cancel (the result then
    has `cancelled=True`, safe but not irredundant), else Cancelled is raised. Every step is
    bounded by counts (LPs, repair rounds); max_time is a safety cap: a run it changed has
    `timed_out=True`, and one that has no audited pattern within it and its grace
    (budget.limit_grace) raises TimeLimitError.
    """
    opts = HeurOptions.of(params)
    watch = Stopwatch()
    limit = seconds_of(opts.max_time)
    deadline = Deadline(limit)
    ctx = MoveContext(problem)
    sup = ctx.primary | is_secondary(problem.status)
    wit = Witnesses()
    order = primary_order(ctx)
    path_deadline = Deadline(deadline.part(PATH_SHARE))
    # after a cancel: CANCEL_GRACE seconds to finish the primaries and the audit, else Cancelled
    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    # the run's end: its limit and grace, after which no audited pattern can be had in time
    extra = stop_after(limit) if opts.hard_limit else math.inf
    stop = DeadlineToken(deadline, grace, extra=extra)
    try:
        n_lps = protect_all(
            ctx, sup, wit, order, int(opts.k_free), progress, watch, path_deadline, stop
        )
    except Cancelled:
        if stop.out_of_time:
            raise TimeLimitError(out_of_time(limit, "before every primary was protected")) from None
        raise
    hurried = path_deadline.hit
    t_heur = watch.elapsed
    n_before = int((sup & ~ctx.primary).sum())
    cancelled = cancel is not None and cancel.cancelled
    log = [f"heuristic: {n_before} secondary cells after {n_lps} path LPs ({t_heur:.1f} s)"]
    if hurried:
        log.append("heuristic: time limit reached while protecting; smallest neighbourhoods used")
    cleanup_time = seconds_of(opts.cleanup_time)
    cleanup_lps = opts.cleanup_lps
    if cleanup_lps == "auto":
        cleanup_lps = max(CLEANUP_MIN_LPS, int(CLEANUP_SHARE * n_lps))
    if cleanup_time is None:
        # reserve ≈ the path-LP phase again for the final audit and margins (measured: the
        # hinted audit of a 10^5-cell 3-D table takes well under that)
        cleanup_time = deadline.part(1.0, reserve=1.2 * t_heur)
    timed_out = hurried
    cleanup_lps_done = 0
    if opts.cleanup and not cancelled:
        sup, info = cleanup(
            problem,
            sup,
            wit,
            ctx=ctx,
            time_limit=cleanup_time,
            max_lps=None if cleanup_lps is None else int(cleanup_lps),
            progress=progress,
            cancel=cancel,
        )
        log.append(
            f"cleanup: {info['removed']} cells published again, {info['lps']} LPs "
            f"({info['reused']} pairs proved again by kept moves, {info['elapsed']:.1f} s)"
            + (f" — stopped early ({info['stopped']})" if info["stopped"] else "")
        )
        cancelled = cancel is not None and cancel.cancelled
        timed_out |= info["stopped"] == "time limit"
        cleanup_lps_done = int(info["lps"])
    # the audit decides; repair with full-table path LPs if needed
    verdict = _audit_in_time(problem, sup, wit, stop, limit)
    rounds = 0
    while not verdict.ok and rounds < int(opts.repair_rounds):
        rounds += 1
        fails = verdict.failures
        wit.forget(fails)
        prot = Protector(ctx, sup, wit, int(opts.k_free))
        for cell in fails:
            for direction in (UP, DOWN):
                prot.protect(int(cell), direction)
        log.append(f"repair round {rounds}: {fails.size} primaries re-protected")
        verdict = _audit_in_time(problem, sup, wit, stop, limit)
    if not verdict.ok:
        raise AuditError("heuristic pattern fails the audit after repair: " + verdict.summary())
    status = problem.status.copy()
    new = sup & ~ctx.primary & ~is_secondary(problem.status)
    status[new] = secondary_status_for(problem.status[new])
    secondary = sup & ~ctx.primary
    cost = float(np.sum(np.asarray(problem.cost)[secondary]))
    figures = {
        "path_lps": n_lps,
        "cleanup_lps": cleanup_lps_done,
        "secondaries_before_cleanup": n_before,
        "heuristic_seconds": t_heur,
        "audit_lps": verdict.n_lps,
    }
    result = suppression_result(
        "HEUR",
        problem,
        sup,
        verdict,
        False,  # HEUR's own audit is pass/fail
        watch=watch,
        log=log,
        figures=figures,
        cancelled=cancelled,
        timed_out=timed_out,
        progress=progress,
        finished="Heuristic",
        statuses=(status, cost),
    )
    # every kept move through the final pattern: the insider audit's cover starts from them
    # (it checks each) instead of finding most of them again by path LPs (D-49)
    result.moves = [(cells, wit.shifts[m]) for m, cells in enumerate(wit.moves) if sup[cells].all()]
    return result


def _audit_in_time(
    problem: CSPProblem, sup: np.ndarray, wit: Witnesses, stop: DeadlineToken, limit: float | None
):
    """HEUR's pass/fail audit within the run's limit and grace (TimeLimitError after it)."""
    try:
        return audit(problem, sup, intervals=False, hints=wit.hints(), cancel=stop)
    except Cancelled:
        if stop.out_of_time:
            raise TimeLimitError(out_of_time(limit, "while auditing the pattern")) from None
        raise


def solve_heur_method(
    problem: CSPProblem,
    params: HeurOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """HEUR as a method: the singleton options' virtual cells, solve_heuristic, then on tables
    of at most POLISH_CELLS cells the polish (publishable pattern + a short branch-and-cut
    with the insiders) within the time left.

    The method adds the virtual cells itself (descriptor `singletons="method"`) so that the
    polish can judge insiders on the real table, as the publication audit does.
    """

    opts = HeurOptions.of(params)
    on, minfreq = singleton_request(opts.as_dict())
    work, n_virtual = problem, 0
    if on and problem.freq is not None:
        work, n_virtual = add_singleton_cells(problem, None, on, minfreq)
    result = solve_heuristic(work, opts, progress, cancel)  # it reads no singleton option
    if n_virtual:
        result = drop_virtual(result, problem.n_cells)
        result.log.append(f"{n_virtual} virtual singleton cells added ({', '.join(on)})")
        if result.audit is not None and result.audit.ok:
            # a pass/fail pass with the virtual cells' relations is a pass without them
            # (they only narrow the attacker; run_method's rule for reused audits)
            sup = is_suppressed(result.status)
            result.audit_digest = pattern_digest(problem, sup)
    # the polish is bounded by work (polish_nodes SCIP nodes, polish_lps attacker LPs): same
    # table, same pattern on any machine and load when that limit or a proof ends it; seconds
    # ("polish", and the run's max_time) are only an outer cap, and a run they end says so
    # (timed_out: "the time limit decided")
    asked = seconds_of(opts.polish)
    if asked == 0:
        return result
    seconds = asked
    limit = seconds_of(opts.max_time)
    if limit is not None:
        # keep a third of what is left for run_method's own publication audit
        left = (limit - result.elapsed) * 2.0 / 3.0
        seconds = left if seconds is None else min(seconds, left)
    nodes = int(opts.polish_nodes or heur_polish.POLISH_NODES)
    lps = int(opts.polish_lps or heur_polish.POLISH_LPS)
    if (
        problem.n_cells > heur_polish.POLISH_CELLS
        or result.cancelled
        or (cancel is not None and cancel.cancelled)
    ):
        return result
    if seconds is not None and seconds < heur_polish.POLISH_MIN:
        result.timed_out = True
        result.log.append("polish: skipped, the time limit left too little time for it")
        return result
    intervals = opts.audit_intervals
    # only a time limit the user gave may let the clock choose the pattern
    clock_may_decide = limit is not None or asked is not None
    result = heur_polish.polish(
        problem, work, result, seconds, progress, cancel, intervals, nodes, clock_may_decide, lps
    )
    result.elapsed = result.elapsed + float(result.figures.get("polish_seconds", 0.0))
    return result


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True, kw_only=True)
class HeurParams(MethodParams):
    """`HEUR(t, maxMinutes, singSing, singMult, minFreq)` (an argusqt method)."""

    METHOD: ClassVar[str] = "HEUR"
    max_minutes: float = minutes_param(
        10, position=1, batch="maxMinutes", help="Path LPs, clean-up and the audit share it."
    )
    singleton_singleton: bool = singleton_param("SS", extension=True)
    singleton_multiple: bool = singleton_param("SM", extension=True)
    min_freq_option: bool = singleton_param("MF", extension=True)


def _heur_options(p: HeurParams, facts: TableFacts) -> HeurOptions:
    return HeurOptions(max_time=60.0 * p.max_minutes, **singleton_solver_options(p, facts))


DESCRIPTOR = register(
    MethodDescriptor(
        name="HEUR",
        kind="suppress",
        label="Fast heuristic",
        help="A safe pattern quickly (LP paths + clean-up; on tables up to 2,000 cells a "
        "short branch-and-cut from it); not minimal.",
        params=HeurParams,
        solve=solve_heur_method,
        solver_options=_heur_options,
        tau_argus=False,
        singletons="method",
        order=30,
    )
)
