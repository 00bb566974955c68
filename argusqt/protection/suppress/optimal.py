"""Optimal secondary cell suppression (argusqt/docs/methods.md §3): a start pattern from
HEUR, the branch-and-cut (branch_and_cut.py) on SCIP from it, and the publication audit of
the best pattern proven protected.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import AuditError, Cancelled, MethodError, TimeLimitError
from argusqt.model.status import is_primary
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.audit import insider_repair
from argusqt.protection.audit.insider_repair import make_publishable
from argusqt.protection.audit.outsider import audit, pattern_digest
from argusqt.protection.audit.publication import CANCEL_GRACE
from argusqt.protection.core.budget import Deadline, DeadlineToken
from argusqt.protection.core.options import SuppressOptions
from argusqt.protection.core.options import seconds as seconds_of
from argusqt.protection.core.params import MethodParams, TableFacts, minutes_param
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import ProtectionResult, grouped
from argusqt.protection.lp.separation import Separator, default_fixed, require_additive
from argusqt.protection.suppress.branch_and_cut import (
    GUIDED_DELAY_MIN,
    Guide,
    PatternOutcome,
    _insider_check,
    _skipped,
    solve_pattern,
)
from argusqt.protection.suppress.combined_repair_heur import repair_cost, repair_pattern
from argusqt.protection.suppress.epilogue import audit_exactness
from argusqt.protection.suppress.heuristic import solve_heuristic
from argusqt.protection.suppress.scip_plugins import PatternRule
from argusqt.protection.suppress.singleton import (
    singleton_param,
    singleton_solver_options,
    with_singleton_cells,
)

#: share of OPT's time limit the start heuristic may use
START_SHARE = 0.25
#: share of the time limit after which the start heuristic is stopped (it is asked for START_SHARE)
START_STOP = 0.5
#: MOD's pattern as a start of the restart (`mod_restart`) only on tables of this many cells or
#: more: a small table's restart proves within a second, and MOD's run costs more than it
#: saves (p78: 0.77 → 1.08 CPU-s, the same pattern, proven either way; D-110). A count, so
#: the same runs take it on any machine
MOD_RESTART_MIN_CELLS = 300
#: time kept for the final checks, in units of what checking and publishing the start pattern
#: took (the same audits on a pattern that is usually smaller)
AUDIT_RESERVE = 1.5
#: time kept for the final checks when there is no start pattern to measure them on
NO_START_RESERVE = 0.15
#: share of the limit the publication audit of the best pattern may overrun it by
SLACK = 0.1
#: the guided heuristic's first run waits until the branch-and-cut has solved this many times
#: the start heuristic's LPs (at least GUIDED_DELAY_MIN attacker LPs): small tables are proven
#: before it would pay (b520: the root closes in 0.6 s, where three guided runs added 0.5 s)
GUIDED_DELAY = 3.0
#: the guided heuristic's throttle also counts its insider repair's LPs (D-102: most of its
#: work on 700-cell tables; counted, opt_bound_805's gap fell 66.6 → 61.0 % but g22's pattern
#: got 2.3 % dearer: off)
COUNT_REPAIR = False
#: the guided heuristic repairs each HEUR pattern once per run and replays it when met again
#: (D-105: make_publishable is deterministic given the pattern; same patterns, fewer LPs)
GUIDED_MEMO = True


def _guide(problem: CSPProblem, work: CSPProblem, publish: bool, rule_cells: bool = False) -> Guide:
    """The LP-guided heuristic for `work` (problem plus its virtual singleton cells): the start
    heuristic on costs scaled by (1 − x*), then (with `publish`) the insider repair of the
    publication audit, so the pattern SCIP gets has a chance to pass its insider check."""
    # insider_repair's own binding, not this module's make_publishable: the publication of
    # OPT's patterns (`publish` in solve_optimal) is a separate step (tests patch it)
    repair = insider_repair.make_publishable

    n = problem.n_cells
    cost = np.asarray(work.cost, dtype=float)
    reach = work.candidate | work.primary | work.secondary
    # the rule on combined cells (D-53): HEUR's pattern ignores it, and SCIP's rows (the
    # forced rows, D-55) reject such a candidate before any check sees it, so the rule's
    # cells are added here first (D-61); `plain` is the same without them (relaxed_search)
    free = np.isnan(default_fixed(work))
    weight = np.abs(np.asarray(work.values, dtype=float))
    # HEUR pattern (its digest) -> (repaired pattern or None for a deterministic failure,
    # the repair's LPs): the same pattern met again is replayed, not repaired again (D-105)
    repaired: dict[str, tuple[np.ndarray | None, int]] = {}
    tally = {"runs": 0, "dear": 0, "repairs": 0, "replays": 0}

    def publishable(mask: np.ndarray, stop: CancelToken) -> tuple[np.ndarray | None, int]:
        """make_publishable's pattern for `mask` (None if it fails) and its LPs, each
        pattern repaired once: a cancelled repair raises Cancelled and is not kept."""
        key = pattern_digest(problem, mask)
        if GUIDED_MEMO and key in repaired:
            tally["replays"] += 1
            return repaired[key]
        tally["repairs"] += 1
        lps = insider_repair.RepairWork()
        try:
            fixed, _, _ = repair(problem, mask, intervals=False, cancel=stop, work=lps)
        except (MethodError, AuditError):
            if stop.cancelled:
                raise Cancelled("guided repair stopped") from None
            fixed = None
        if GUIDED_MEMO:
            repaired[key] = (fixed, lps.total)
        return fixed, lps.total

    def guided(rule: PatternRule | None) -> Guide:
        def run(
            x: np.ndarray, incumbent: float, stop: CancelToken, seconds: float | None
        ) -> np.ndarray | None:
            run.last_lps = 0  # type: ignore[attr-defined]  # the work _GuidedHeur counts
            run.last_repair_lps = 0  # type: ignore[attr-defined]  # ... and its repair's
            if stop.cancelled:
                return None
            tally["runs"] += 1
            scaled = replace(work, cost=cost * np.clip(1.0 - x, 0.0, 1.0))
            try:
                res = solve_heuristic(scaled, {"max_time": seconds}, cancel=stop)
            except (Cancelled, MethodError, AuditError):
                return None
            figures = res.figures
            run.last_lps = figures["path_lps"] + figures.get("cleanup_lps", 0)  # type: ignore[attr-defined]
            mask = ((res.status != work.status) | work.primary | work.secondary) & reach
            if float(cost[mask & ~work.primary].sum()) >= incumbent - 1e-9 * abs(incumbent):
                tally["dear"] += 1  # the repair only adds cells: it cannot win
                return None
            if publish and not stop.cancelled:
                try:
                    fixed, total = publishable(mask[:n], stop)
                except Cancelled:
                    return None
                if COUNT_REPAIR:  # the repair's LPs, counted as the run's work (D-102)
                    run.last_lps += total  # type: ignore[attr-defined]
                else:  # ... or only while no respondent is known (D-116)
                    run.last_repair_lps = total  # type: ignore[attr-defined]
                if fixed is None:
                    return None
                mask = np.r_[fixed, mask[n:]]
                if float(cost[mask & ~work.primary].sum()) >= incumbent - 1e-9 * abs(incumbent):
                    return None
            if rule is not None and rule(mask):
                # more suppressed cells never narrow an attacker's interval: still protected
                whole, _ = repair_pattern(mask, rule, cost, free, weight)
                if whole is None:
                    return None
                mask = whole
                if float(cost[mask & ~work.primary].sum()) >= incumbent - 1e-9 * abs(incumbent):
                    return None
            return mask

        return run

    main = guided(problem.pattern_rule if publish and rule_cells else None)
    main.plain = guided(None)  # type: ignore[attr-defined]
    main.tally = tally  # type: ignore[attr-defined]  # for the run's log (D-105)
    return main


#: the root gap from which OPT solves again from the root with the rule-aware bridgeless cuts:
#: above every generated table's (≤ 23.5 %) and opt_bound_805's (27.4 %), below the sample's
#: (33.4 %; docs/design.md, D-75)
ROOT_GAP_BRIDGELESS = 0.30
#: SCIP's cut selector's filter, SCIP's default: at 0 (every efficacious cut of a round into
#: the LP) g04 is proven with 36 % fewer attacker LPs, g12 and g22 end cheaper, but g28's
#: one-minute pattern is 2 % dearer side by side (docs/design.md, D-77): off by default
CUT_ORTHOGONALITY = 0.9
#: the measured setting of `OptOptions.cut_orthogonality_by_gap` (off by default): below
#: this root gap the tree's filter is off (0), a gap between the generated tables' root gaps
#: (≤ 23.5 %) and the extras' (27.4 %, 33.4 %; docs/design.md, D-82)
ROOT_GAP_TREE_FILTER = (0.25, 0.0)
#: ... and of `move_pool_by_gap`: the moves in the pool started with it (lp/move_pool.py)
MOVE_POOL = 64
#: the most fractional rounds a known insider waits after misses in a row (D-95)
INSIDER_BACKOFF = 8


@dataclass(frozen=True, kw_only=True)
class OptOptions(SuppressOptions):
    """What solve_optimal reads (see its docstring); max_time defaults to 600 s here."""

    gap: float = 0.0  # relative
    use_heuristic: bool = True
    #: run_method's OPT: the pattern returned has passed the publication audit
    publish: bool = False
    sepa_depth: int | None = None
    nogil: bool = True
    scip_heuristics: str = "fast"
    guided: bool = True
    guided_delay: float | None = None  # None: from the start heuristic's LPs
    bridgeless: bool = True
    #: bridgeless cuts with the rule on combined cells too, rule-aware: valid, but no better
    #: bound on the hard generated tables (docs/design.md, D-60)
    bridgeless_rule: bool = False
    #: ... or, off, a new start with them when the root gap (incumbent vs bound, a count-
    #: bound state) reaches this (docs/design.md, D-75); None: never
    bridgeless_rule_root_gap: float | None = ROOT_GAP_BRIDGELESS
    #: the rule's lifted no-goods separated at fractional points too (D-60)
    fractional_sums: bool = False
    #: the rule's capacity rows and their covers at fractional points, only where the
    #: attacker LPs found no capacity cut: g27 and g30 proven within 60 CPU-s (D-66); at
    #: every point (stalled off) g03 and g11 took 45–49 % more CPU
    rule_capacities: bool = True
    rule_capacities_stalled: bool = True
    #: cover cuts of the capacity cuts at fractional points (lp/covers.py)
    covers: bool = True
    #: the neighbourhood heuristic (local_branching.py): off, it cost g04 its proof within
    #: 60 CPU-s for a cheaper one-minute pattern on g28 (docs/design.md, D-45)
    rins: bool = False
    #: try an attacker move remembered from an earlier point before each LP (D-46)
    reuse_moves: bool = True
    #: the guided heuristic's pattern gets the rule on combined cells' cells before SCIP sees
    #: it (off: opt_bound_805 −5.8 % at load 9 but +1.8 % at load 2–4, g30 +0.43 %, D-61)
    guided_rule: bool = False
    #: the clean-up of the incumbent (incumbent_polish.py; off: small savings that move
    #: the search elsewhere, D-61)
    polish: bool = False
    #: with the rule on combined cells: the search without it, repaired (relaxed_search.py;
    #: off: its repaired pattern was no cheaper than the guided heuristic's, D-61)
    relaxed: bool = False
    #: SCIP's cut selector's minimal orthogonality of a cut to those already chosen, in the
    #: tree and at the root (0.9: SCIP's default; 0 measured in D-77)
    cut_orthogonality: float = CUT_ORTHOGONALITY
    cut_orthogonality_root: float = CUT_ORTHOGONALITY
    #: (root gap, filter): the tree's filter becomes this when the root ends below that gap
    #: (a count-bound state; None: `cut_orthogonality` throughout). Off: ROOT_GAP_TREE_FILTER
    #: with MOVE_POOL proves the same 28 generated tables with 35 % fewer LPs and g12's minute
    #: 3.5 % cheaper, but g04's minute pattern 0.96 % dearer on a quiet machine (D-82)
    cut_orthogonality_by_gap: tuple[float, float] | None = None
    #: the last this many attacker moves start each block's running extremes from the start
    #: (0: off; with SCIP's filter g04's proof took 45 % more nodes, D-82)
    move_pool: int = 0
    #: ... from the moment the root gap sets the tree's filter: g04's proof −10 % LPs (D-82;
    #: off with `cut_orthogonality_by_gap`)
    move_pool_by_gap: int = 0
    #: each failing direction's cut from a Pareto-optimal dual (its LP again at x* moved
    #: this far toward the all-ones core point; 0: off). At 1e-6 g12, g22 and the sample end
    #: cheaper, but g27 loses its proof in the minute (docs/design.md, D-88): off
    pareto_cuts: float = 0.0
    #: ... only at nodes this deep at most (None: every node; D-88's continuation)
    pareto_depth: int | None = None
    #: ... only at nodes whose gap to the incumbent is at least this share (0: every node)
    pareto_gap: float = 0.0
    #: a known insider (alone or sharing cells) that finds no failing primary at fractional
    #: points waits 2, 4, … rounds, up to this many, before its next try (0: every round)
    insider_backoff: int = INSIDER_BACKOFF
    #: insider audits of the root's fractional points (cells above `probe_level` taken as
    #: suppressed) once the outsider finds no cut: their respondents join the known (D-108)
    insider_probes: int = 0
    probe_level: float = 0.5
    #: the guided heuristic's runs at the root at most, so that the root's bound ends first
    #: (None: no cap; D-108)
    guided_root_runs: int | None = None
    #: ... counted only once the root knows some respondent (D-110)
    guided_root_wait: bool = False
    #: the guided runs' insider repair LPs counted in their throttle while no respondent is
    #: known (COUNT_REPAIR's D-102 only there: opt_bound_805 knows none in its minute; D-116)
    guided_repair_alone: bool = False
    #: MOD's published pattern joins the starts when the root's gap starts the run again
    #: (`bridgeless_rule_root_gap`; D-98's lead): g14 −13.6 %, g28 −3.0 %, g18 −1.2 %, the
    #: sample −1.0 %, no other table's run changed (docs/design.md, D-110)
    mod_restart: bool = True
    #: an attacker's LP spared when another attacker's newest move (the outsider's, a known
    #: insider's), scaled to its own bounds, already reaches the level (valid; the spared LPs
    #: count as the run's work). Off until the whole set is run at low load: g16 to 300 nodes
    #: −46 % attacker LPs, −30 % CPU, a cheaper pattern and the same guided runs (D-113)
    borrow_moves: bool = False
    #: ... at the root too (D-113's form); off: moves are borrowed from the tree on, so the
    #: root's LP points and guided runs are those without the board (g04's minute, D-116)
    borrow_root: bool = False


# ---------------------------------------------------------------------- start pattern
def start_pattern(
    problem: CSPProblem,
    params: dict,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    check: bool = True,
    report: dict | None = None,
) -> np.ndarray | None:
    """A protected pattern to start from (the heuristic of argusqt/docs/methods.md §4), or None.

    `check=False` leaves the attacker check of the pattern to the caller (solve_optimal
    checks it once with its own judge). None when the heuristic fails or is cancelled:
    suppressing every
    candidate would protect too, but it is never a pattern worth publishing, so the
    branch-and-cut starts without one. After a cancel the heuristic may still finish
    within the cancel's grace time (CANCEL_GRACE); its pattern is then judged by the audit.
    `report` (a dict) receives the heuristic's ProtectionResult as "result" (its LP counts
    and whether a time cap changed its course).
    """

    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    # in a helper thread, so that a cancel is honoured within the grace time even if the
    # heuristic does not poll the token often (it gets the grace token and stops too)
    box: dict = {}

    def work() -> None:
        try:
            box["result"] = solve_heuristic(problem, params, progress, grace)
        except Exception as err:  # noqa: BLE001 - a failing heuristic must not stop OPT
            box["error"] = err

    # not a daemon: after a cancel the thread may still be inside one HiGHS solve; a daemon
    # thread there when the interpreter exits aborted the process ("terminate called without
    # an active exception", exit 134, measured after a cancel in bench_cancel); a normal
    # thread is joined at exit, and it stops at its next poll of the cancelled token
    # in a copy of the run's context: its deadlines belong to the run (budget.run_scope)
    run_in_context = contextvars.copy_context().run
    worker = threading.Thread(
        target=run_in_context, args=(work,), name="opt-start-heuristic", daemon=False
    )
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
        if grace is not None and grace.cancelled:
            return None
    res = box.get("result")
    if res is None:
        return None
    if report is not None:
        report["result"] = res
    mask = (res.status != problem.status) | problem.primary | problem.secondary
    mask = mask & (problem.candidate | problem.primary | problem.secondary)
    if not check:
        return mask
    if Separator(problem).is_protected(mask.astype(float), cancel=grace) and not (
        grace and grace.cancelled
    ):
        return mask
    return None


def _mod_pattern(
    problem: CSPProblem, opts: OptOptions, seconds: float | None, stop: CancelToken
) -> tuple[np.ndarray | None, bool]:
    """MOD's pattern on the posed problem (a start for OPT, published by the caller), or
    None when MOD fails or is stopped (a start is worth having, never worth failing for);
    and whether a time cap changed MOD's course (then OPT's result says so)."""
    from argusqt.protection.suppress.modular import solve_modular
    from argusqt.protection.suppress.modular_params import ModOptions

    mod_opts = ModOptions(
        max_time=seconds,
        max_time_per_subtable=float(seconds or 60.0),
        polish=True,
        singleton_singleton=opts.singleton_singleton,
        singleton_multiple=opts.singleton_multiple,
        min_freq=opts.min_freq,
    )
    try:
        res = solve_modular(problem, mod_opts, no_progress, stop)
    except (MethodError, AuditError):
        return None, False  # MOD cannot protect this table: no time cap decided that
    except (Cancelled, TimeLimitError):
        return None, True
    if stop.cancelled:
        return None, True
    mask = (res.status != problem.status) | problem.primary | problem.secondary
    reach = problem.candidate | problem.primary | problem.secondary
    return np.asarray(mask & reach), bool(res.timed_out)


# ---------------------------------------------------------------------- public entry
def solve_optimal(
    problem: CSPProblem,
    params: OptOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Minimum-cost protected suppression pattern (batch OPT); statuses 11/12 set on secondaries.

    params: max_time (seconds, default 600: the whole run — start heuristic, branch-and-cut
    and the publication audit with its insider repair share it; the audit of the best
    pattern may overrun it by SLACK), gap (relative, default 0), singleton options
    singleton_singleton / singleton_multiple / min_freq, use_heuristic (default True),
    audit_intervals (as run_method), publish (run_method's OPT: the pattern returned has
    passed the publication audit — outsider and insider, repaired — and run_method reuses its
    verdict; without it only the outsider audit, the model's own optimum). On time-out or
    cancel the best audited pattern is returned with its lower bound.
    """

    opts = OptOptions.of(params)
    watch = Stopwatch()
    limit = seconds_of(opts.max_time) or 600.0
    deadline = Deadline(limit)
    start_stop = DeadlineToken(Deadline(START_STOP * limit), cancel)
    #: the audits of the best pattern may end this late; nothing else may
    final = DeadlineToken(deadline, cancel, extra=SLACK * limit)
    require_additive(problem)
    cancel = cancel or CancelToken()
    work = with_singleton_cells(
        problem,
        singleton_singleton=bool(opts.singleton_singleton),
        singleton_multiple=bool(opts.singleton_multiple),
        min_freq=int(opts.min_freq or 0),
    )
    n = problem.n_cells
    cost = np.asarray(problem.cost, dtype=float)
    mode = opts.audit_intervals

    def exact_for(m: np.ndarray) -> bool:
        return audit_exactness(mode, m)

    def pattern_cost(m: np.ndarray) -> float:
        return float(cost[m & ~problem.primary].sum())

    progress(ProgressEvent(message="Optimal suppression: start pattern", elapsed=watch.elapsed))
    start = None
    guide_delay = float(GUIDED_DELAY_MIN)
    #: a time cap changed the run's course somewhere (the result may differ elsewhere)
    start_clock = False
    if opts.use_heuristic:
        # the start heuristic is asked to use a share of the run and stopped at START_STOP:
        # both are caps only (a heuristic that ends within them is the same everywhere)
        start_params = opts.as_dict() | {
            "max_time": deadline.part(START_SHARE),
            "hard_limit": False,
        }
        report: dict = {}
        start = start_pattern(work, start_params, progress, start_stop, check=False, report=report)
        done = report.get("result")
        if done is not None:
            start_clock = bool(done.timed_out)
            lps = int(done.figures.get("path_lps", 0)) + int(done.figures.get("cleanup_lps", 0))
            guide_delay = max(float(GUIDED_DELAY_MIN), GUIDED_DELAY * lps)
    judge = Separator(work)
    checked: dict[bytes, bool] = {}

    def protected(m: np.ndarray) -> bool:
        """Exact attacker LPs on the full relation set (strict tolerance, virtual cells too)."""
        full = np.r_[m, np.ones(work.n_cells - n, dtype=bool)] if work is not problem else m
        key = np.packbits(full).tobytes()
        if key not in checked:
            ok = judge.is_protected(full.astype(float), cancel=final)
            if judge.interrupted:  # out of time: not judged, so not usable (and not cached)
                return False
            checked[key] = ok
        return checked[key]

    published: list[_Published] = []

    def publish(m: np.ndarray, what: str, judged: bool = True) -> _Published | None:
        """The publication audit (outsider and insider) with the insider repair, within the
        run's time (+ SLACK): the pattern as published, or None when time ran out (or, for a
        pattern not `judged` protected by the branch-and-cut's own check, when the outsider
        fails it). Without `publish` (the model alone, for callers that compare methods) the
        outsider audit only."""
        exact = exact_for(m)
        try:
            if not opts.publish:
                progress(_phase(f"auditing {what}", pattern_cost(m), watch))
                res = audit(problem, m, intervals=exact, cancel=final)
                if not res.ok:
                    raise AuditError(res.summary())
                pub = _Published(m, None, res, 0, pattern_cost(m), exact, what)
            else:
                progress(_phase(f"auditing {what} (outsider and insiders)", pattern_cost(m), watch))
                fixed, verdict, added = make_publishable(
                    problem, m, intervals=exact, progress=progress, cancel=final
                )
                cost_f = pattern_cost(fixed)
                pub = _Published(fixed, verdict, verdict.outsider, added, cost_f, exact, what)
        except Cancelled:
            return None
        except AuditError as err:
            if not judged:
                return None
            raise MethodError(f"optimal pattern failed the audit: {err}") from None
        published.append(pub)
        return pub

    # the final checks take about what checking and publishing the start pattern takes
    t0 = deadline.elapsed
    start_cost = None
    scip_start = None
    if start is not None and not cancel.cancelled:
        # published first: the audited fallback; then SCIP's own check of it as its start
        # (a stricter tolerance than the audit's, see Separator.eps)
        pub = publish(start[:n], "the start pattern", judged=False)
        if pub is not None:
            start_cost = pub.cost
            progress(_phase("checking the start pattern", start_cost, watch))
            if protected(pub.mask):
                scip_start = np.r_[pub.mask, np.ones(work.n_cells - n, dtype=bool)]
    if scip_start is None:
        # SCIP may start from "every candidate suppressed"; it is filtered out of the results
        scip_start = work.candidate | work.primary | work.secondary
        reserve = NO_START_RESERVE * limit
    else:
        reserve = AUDIT_RESERVE * (deadline.elapsed - t0) + 0.1

    mod_clock: list[bool] = []  # a time cap cut MOD's run for the restart (D-110)
    mod_cost: list[float] = []  # its published pattern's cost, for the log

    def late_start(seconds: float) -> np.ndarray | None:
        """MOD's pattern, published and checked as the start is, for the restart (D-110):
        a candidate only, SCIP's full check decides whether it becomes the incumbent."""
        if cancel.cancelled or not problem.dims:
            return None
        stop = DeadlineToken(Deadline(min(seconds, START_SHARE * limit)), cancel)
        mod, capped = _mod_pattern(problem, opts, stop.deadline.remaining, stop)
        mod_clock.append(capped or stop.deadline.hit)
        pub = publish(mod, "MOD's pattern", judged=False) if mod is not None else None
        if pub is None or not protected(pub.mask):
            return None
        mod_cost.append(pub.cost)
        progress(_phase("MOD's pattern for the restart", pub.cost, watch))
        return np.r_[pub.mask, np.ones(work.n_cells - n, dtype=bool)]

    progress(_phase("branch-and-cut, root node", start_cost, watch))
    solve = solve_pattern if not cancel.cancelled else _skipped
    insiders = _insider_check(problem, floors=True) if opts.publish else None
    out = solve(
        work,
        max_time=max(0.0, deadline.remaining - reserve),
        gap=float(opts.gap),
        start=scip_start,
        progress=progress,
        cancel=cancel,
        sepa_depth=opts.sepa_depth,
        threads_nogil=bool(opts.nogil),
        heuristics=str(opts.scip_heuristics),
        insiders=insiders,
        guide=_guide(problem, work, bool(opts.publish), bool(opts.guided_rule))
        if opts.guided
        else None,
        guide_delay=float(guide_delay if opts.guided_delay is None else opts.guided_delay),
        bridgeless=bool(opts.bridgeless),
        bridgeless_rule=bool(opts.bridgeless_rule),
        bridgeless_rule_root_gap=opts.bridgeless_rule_root_gap,
        fractional_sums=bool(opts.fractional_sums),
        rule_capacities=bool(opts.rule_capacities),
        rule_capacities_stalled=bool(opts.rule_capacities_stalled),
        covers=bool(opts.covers),
        rins=bool(opts.rins),
        reuse_moves=bool(opts.reuse_moves),
        combined=problem.pattern_rule if opts.publish else None,
        polish=bool(opts.polish),
        relaxed=bool(opts.relaxed),
        min_orthogonality=float(opts.cut_orthogonality),
        min_orthogonality_root=float(opts.cut_orthogonality_root),
        move_pool=int(opts.move_pool),
        tree_pool=int(opts.move_pool_by_gap),
        pareto_cuts=float(opts.pareto_cuts),
        pareto_depth=None if opts.pareto_depth is None else int(opts.pareto_depth),
        pareto_gap=float(opts.pareto_gap),
        insider_backoff=int(opts.insider_backoff),
        insider_probes=int(opts.insider_probes),
        probe_level=float(opts.probe_level),
        guide_root_runs=None if opts.guided_root_runs is None else int(opts.guided_root_runs),
        guide_root_wait=bool(opts.guided_root_wait),
        guide_repair_alone=bool(opts.guided_repair_alone),
        borrow_moves=bool(opts.borrow_moves),
        borrow_root=bool(opts.borrow_root),
        late_start=late_start
        if opts.mod_restart and problem.n_cells >= MOD_RESTART_MIN_CELLS
        else None,
        tree_filter=None
        if opts.cut_orthogonality_by_gap is None
        else (float(opts.cut_orthogonality_by_gap[0]), float(opts.cut_orthogonality_by_gap[1])),
    )
    everything = problem.candidate | problem.primary | problem.secondary
    found = out.mask[:n] if out.mask is not None else None
    if found is not None and not out.optimal and np.array_equal(found, everything):
        found = None  # "suppress every candidate" is never published unless proven optimal
    # with the rule on combined cells (US#160): when the branch-and-cut proved its pattern
    # optimal (the rule inside the search), a cheaper published pattern whose determined
    # sums are unsafe is no candidate at all; when it did not (the time limit), the cheapest
    # pattern goes on as before and the rule's repair follows (protect_combined): a search
    # cut short holds dearer patterns that pass the rule than the repair gives (D-53)
    rule = problem.pattern_rule if opts.publish and out.optimal else None
    # cut short: a pattern failing the rule ranks by its cost once repaired (D-54), so SCIP's
    # pattern, which passes it, wins whenever it costs less than the repair would
    posed = problem.pattern_rule if opts.publish and not out.optimal else None
    ranks: dict[int, tuple[bool, float, bool]] = {}

    def rank(pub: _Published) -> tuple[bool, float, bool]:
        # on equal costs a pattern that passes the rule goes before one to be repaired
        if id(pub) not in ranks:
            cost_r, to_repair = pub.cost, False
            if posed is not None and posed(pub.mask):
                free = problem.candidate & ~problem.primary
                weight = np.abs(np.asarray(problem.values, dtype=float))
                cost_r = pub.cost + repair_cost(pub.mask, posed, cost, free, weight)
                to_repair = True
            ranks[id(pub)] = (rule is not None and bool(rule(pub.mask)), cost_r, to_repair)
        return ranks[id(pub)]

    best = min(published, key=rank, default=None)
    unaudited = None
    if cancel.cancelled and best is None and found is None and start is not None:
        found = start[:n]  # the heuristic finished within the cancel's grace: audited there
    if found is not None and not any(np.array_equal(found, pub.mask) for pub in published):
        if cancel.cancelled:
            # no time for judging here: the caller audits it within the cancel's grace
            # time and keeps it only if that audit passes (run_method)
            if best is None or pattern_cost(found) < best.cost:
                unaudited = found
        elif (
            best is None
            or pattern_cost(found) < rank(best)[1]
            or rank(best)[0]
            or (rank(best)[2] and pattern_cost(found) <= rank(best)[1])
        ):
            if protected(found):
                pub = publish(found, "the optimal pattern")
                if pub is not None and (best is None or rank(pub) < rank(best)):
                    best = pub
    if best is None and unaudited is None:
        if cancel.cancelled:
            raise Cancelled("the optimal method was cancelled before it found a safe pattern")
        if out.infeasible:
            raise MethodError(
                "no suppression pattern can protect the unsafe cells: even suppressing every "
                "safe cell leaves a primary inside its protection interval (bounds too tight "
                "or protection levels larger than the a-priori range)"
            )
        raise TimeLimitError(
            "the optimal method found no safe pattern within its time limit "
            f"({limit:g} CPU-s); the table was left unchanged: give it more time or use MOD/HEUR"
        )
    chosen = unaudited if unaudited is not None else best.mask  # type: ignore[union-attr]
    status, sec_cost = problem.pattern_statuses(chosen)
    # a run cut short may keep a pattern the rule on combined cells rejects (repaired after
    # the run, protect_combined): its cost bounds nothing and nothing about it is optimal for
    # the problem posed, whose certified bound (the rule inside the search) stays as it is
    fails_rule = bool(
        opts.publish and problem.pattern_rule is not None and problem.pattern_rule(chosen)
    )
    bound = out.bound
    if bound is not None:
        bound = bound + float(cost[problem.secondary].sum())
        if not fails_rule:
            bound = min(bound, sec_cost)
    gap = None if bound is None else max(0.0, sec_cost - bound) / max(abs(sec_cost), 1e-9)
    if fails_rule:
        gap = None  # no gap of a pattern to be repaired: the repair's cost gets one (combined)
    # the bound is certified (solve_pattern): a kept pattern of the model that costs no more
    # than it is optimal, whichever step found it (e.g. the insider-repaired start pattern)
    reached = bound is not None and sec_cost - bound <= 1e-9 * max(1.0, abs(sec_cost))
    optimal = (
        not fails_rule
        and unaudited is None
        and (
            bool(
                out.optimal
                and found is not None
                and np.array_equal(found, chosen)
                and (best is None or best.added == 0)
            )
            or (reached and protected(chosen))
        )
    )
    if optimal and float(opts.gap) == 0.0:
        gap = 0.0 if gap is not None and gap < 1e-9 else gap
    log = list(out.log)
    if mod_cost or mod_clock:
        said = f"cost {mod_cost[0]:,.0f}" if mod_cost else "none published"
        if any(mod_clock):  # MOD is bounded by its counts; the time limit only as a cap
            said += "; the time limit (a safety cap) cut MOD's run, so it decided this start"
        log.append(f"MOD's pattern as a start of the restart: {said} (D-110)")
    figures: dict[str, Any] = {
        "cuts": out.cuts,
        "nodes": out.nodes,
        "attacker_lps": out.lps,
        "guided_runs": out.guided_runs,
        "guided_found": out.guided_found,
        "rins_runs": out.rins_runs,
        "rins_found": out.rins_found,
    }
    verdict = None
    audit_res = None
    digest, audit_exact = None, False
    if unaudited is None and best is not None:
        verdict, audit_res, audit_exact = best.verdict, best.audit, best.exact
        if best.added:
            log.append(
                f"{best.added} cells suppressed in addition to {best.what} so that no "
                "respondent alone in a suppressed cell recomputes another primary"
            )
        digest = pattern_digest(problem, chosen)
        if verdict is not None:
            log.append(
                f"publication audit done within the run ({deadline.elapsed:.1f} s of {limit:g} s)"
            )
    kept = int(np.count_nonzero(problem.secondary))
    log.append(_bound_line(sec_cost, bound, gap, optimal, out, kept, fails_rule))
    if bound is not None and not optimal:
        log.append(_bound_scope(problem, work, insiders is not None))
    result = ProtectionResult(
        method="OPT",
        status=status,
        cost=sec_cost,
        lower_bound=bound,
        gap=gap,
        optimal=optimal,
        cancelled=out.cancelled,
        timed_out=bool(
            out.timed_out
            or start_clock
            or start_stop.deadline.hit
            or any(mod_clock)
            or (deadline.hit and not out.cancelled)
        ),
        elapsed=watch.elapsed,
        audit=audit_res,
        verdict=verdict,
        audit_digest=digest,
        audit_exact=audit_exact,
        publication_digest=digest if verdict is not None else None,
        log=log,
        figures=figures,
    )
    progress(
        ProgressEvent(
            message="Optimal suppression finished",
            fraction=1.0,
            bound=bound,
            incumbent=sec_cost,
            gap=gap,
            cuts=out.cuts,
            elapsed=watch.elapsed,
            extra={"phase": "finished", "optimal": optimal},
        )
    )
    return result


@dataclass
class _Published:
    """A pattern after the publication audit: as published (repaired), its verdict, cost."""

    mask: np.ndarray
    verdict: Any  # the publication verdict (None: outsider audit only)
    audit: Any  # the outsider audit
    added: int
    cost: float
    exact: bool
    what: str


def _phase(what: str, incumbent: float | None, watch: Stopwatch) -> ProgressEvent:
    """A phase change without a fraction: the progress bar turns busy again (the start
    heuristic's "100 %" must not stand for the whole branch-and-cut)."""
    return ProgressEvent(
        message=f"Optimal suppression: {what}",
        incumbent=incumbent,
        elapsed=watch.elapsed,
        extra={"phase": what},
    )


def _bound_line(
    cost: float,
    bound: float | None,
    gap: float | None,
    optimal: bool,
    out,
    kept: int = 0,
    fails_rule: bool = False,
) -> str:
    """The logbook line with OPT's final cost, lower bound and gap: "proven optimal" only
    when the branch-and-cut closed every node by a proof (argusqt/docs/methods.md §3.4);
    `kept` secondaries of the table stayed suppressed, so the proof is for that problem;
    `fails_rule`: the pattern's unsafe sums are repaired next, so its cost is no final one."""
    if fails_rule:
        scope = (
            "no certified lower bound"
            if bound is None
            else f"certified lower bound {grouped(bound)} for the problem posed"
        )
        return (
            f"OPT: cost {grouped(cost)} before the rule on combined cells' cells are added, "
            f"not proven optimal; {scope}"
        )
    if optimal and (gap is None or gap == 0.0):
        given = f" keeping the table's {kept} secondaries" if kept else ""
        return (
            f"OPT: cost {grouped(cost)}, proven optimal{given} "
            f"(lower bound {grouped(cost)}, gap 0.00 %)"
        )
    why = (
        "time limit reached"
        if out.timed_out
        else "cancelled"
        if out.cancelled
        else "work limit reached"
        if out.work_limit
        else "stopped"
    )
    if out.optimal and not (out.timed_out or out.cancelled):
        why = "the branch-and-cut's optimum needed more cells for the insiders"
    head = f"OPT: cost {grouped(cost)}, best pattern found, not proven optimal"
    if optimal:  # proven within the relative gap the user allowed
        head, why = f"OPT: cost {grouped(cost)}, proven within the gap asked for", "gap limit"
    if bound is None or gap is None:
        return f"{head}; no certified lower bound ({why})"
    return f"{head}; certified lower bound {grouped(bound)}, gap {100 * gap:.2f} % ({why})"


def _bound_scope(problem: CSPProblem, work: CSPProblem, insiders: bool) -> str:
    """What OPT's lower bound bounds: the cost of every pattern of the model it solved —
    the problem as posed, with levels met in full (argusqt/docs/methods.md §3.4)."""
    parts = ["every primary's full protection levels against the outside attacker"]
    if insiders:
        fl = problem.floors
        parts.append(
            "against each respondent alone in a suppressed cell"
            + (" or sharing one (each cell at least its own part)" if fl and fl.count else "")
        )
    if work is not problem:
        parts.append(f"the {work.n_cells - problem.n_cells} groups of the singleton options")
    kept = int(np.count_nonzero(problem.secondary))
    keep = f", keeping the table's {kept} secondaries" if kept else ""
    return (
        "lower bound: no pattern costs less that meets "
        + ", ".join(parts)
        + keep
        + " (a pattern that uses the audit's tolerance of half a unit of the last decimal "
        "is not covered)"
    )


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True, kw_only=True)
class OptParams(MethodParams):
    """`OPT(t, maxComputingTime)`; the singleton options are argusqt extensions (on)."""

    METHOD: ClassVar[str] = "OPT"
    max_minutes: float = minutes_param(
        10,
        position=1,
        batch="maxComputingTime",
        help="For the whole run: start heuristic, branch-and-cut and the final audit share it.",
    )
    singleton_singleton: bool = singleton_param("SS", extension=True)
    singleton_multiple: bool = singleton_param("SM", extension=True)
    min_freq_option: bool = singleton_param("MF", extension=True)


def _solve_and_publish(
    problem: CSPProblem,
    params: OptOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """OPT as run_method runs it: the publication audit and insider repair inside its limit."""
    return solve_optimal(problem, replace(OptOptions.of(params), publish=True), progress, cancel)


def _opt_options(p: OptParams, facts: TableFacts) -> OptOptions:
    return OptOptions(max_time=60.0 * p.max_minutes, **singleton_solver_options(p, facts))


DESCRIPTOR = register(
    MethodDescriptor(
        name="OPT",
        kind="suppress",
        label="Optimal suppression",
        help="Fewest cost of secondary suppressions (branch-and-cut, SCIP).",
        params=OptParams,
        solve=_solve_and_publish,
        solver_options=_opt_options,
        linked="joint",
        singletons="method",
        order=10,
    )
)

__all__ = [
    "OptParams",
    "PatternOutcome",
    "solve_optimal",
    "solve_pattern",
    "with_singleton_cells",
    "is_primary",
]
