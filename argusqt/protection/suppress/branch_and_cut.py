"""The branch-and-cut of OPT (argusqt/docs/methods.md §3): Fischetti–Salazar capacity cuts
separated by attacker LPs, on SCIP, for one problem with some cells fixed. OPT (optimal.py)
and HEUR's polish (heur_polish.py) call it; its guided heuristic is passed in (`guide`).
Threading decision (measured with `benchmarks/bench_optimal.py --gil`, 1H2D 989 cells, OPT in
a threading.Thread, main thread counting 10 ms sleeps): idle baseline 98.3 sleeps/s (longest
14 ms); `optimize()` 91.6/s (longest 38 ms); `optimizeNogil()` 91.4/s (longest 29 ms). Most
of the run is our Python separation (CPython switches threads every 5 ms) and HiGHS, so both
keep a GUI responsive on these tables; `optimize()` holds the GIL through SCIP's own C work
(master LPs, branching), which grows with the table, so we use `optimizeNogil()` and stay
in-process (no subprocess). Callbacks re-acquire the GIL. Cancel: callbacks and the event
handler poll the token and call interruptSolve(); the best pattern proven protected is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

import numpy as np
from pyscipopt import SCIP_HEURTIMING, SCIP_PARAMSETTING, Heur, Model

from argusqt.dataclass import dataclass
from argusqt.errors import Cancelled
from argusqt.progress import CancelToken, ProgressCallback, Stopwatch, no_progress
from argusqt.protection.audit.insider import insider_audit, respondents_of
from argusqt.protection.core.budget import SCIP_SEED_SHIFT, Deadline, scip_time_limit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import Floors
from argusqt.protection.lp.block_memo import BlockMemo
from argusqt.protection.lp.move_pool import MovePool
from argusqt.protection.lp.seeded_moves import seed_certificates
from argusqt.protection.lp.separation import Cut, MoveBoard, Separator, default_fixed
from argusqt.protection.suppress.combined_repair_heur import (
    CombinedRepairHeur,
    RuleAwareStore,
    RuleRecorder,
)
from argusqt.protection.suppress.incumbent_polish import PolishHeur
from argusqt.protection.suppress.local_branching import RinsHeur
from argusqt.protection.suppress.relaxed_search import RelaxedSearchHeur
from argusqt.protection.suppress.scip_plugins import (
    Guide,
    InsiderCheck,
    InsiderFind,
    PatternRule,
    _Bridgeless,
    _CapacityHandler,
    _GuidedHeur,
    _Progress,
    _Run,
    _Stop,
    forced_sum_cuts,
)

#: the guided heuristic waits at least this many attacker LPs of the branch-and-cut
GUIDED_DELAY_MIN = 200


@dataclass
class PatternOutcome:
    """What the branch-and-cut found on one (sub)problem: a 0/1 mask over its cells."""

    mask: np.ndarray | None
    cost: float
    bound: float | None
    optimal: bool
    cancelled: bool = False
    #: the time limit (a safety cap) stopped it: the pattern may differ on another machine
    timed_out: bool = False
    #: a work limit (nodes, attacker LPs) stopped it: the same pattern on any machine
    work_limit: bool = False
    infeasible: bool = False
    cuts: int = 0
    nodes: int = 0
    lps: int = 0
    #: runs of the LP-guided heuristic and the patterns it gave SCIP that SCIP accepted
    guided_runs: int = 0
    guided_found: int = 0
    #: runs of the neighbourhood heuristic (local_branching.py), its patterns, its LPs
    rins_runs: int = 0
    rins_found: int = 0
    rins_lps: int = 0
    #: repairs for the rule on combined cells (combined_repair_heur.py), patterns SCIP took
    repair_runs: int = 0
    repair_found: int = 0
    #: patterns of the search without the rule, repaired (relaxed_search.py) SCIP took
    relaxed_found: int = 0
    #: cheaper patterns of the incumbent's clean-up (incumbent_polish.py) SCIP took
    polish_found: int = 0
    #: why a node was left without a finished check (None: every step was exact, so the
    #: bound and `optimal` are proofs for the model; see _Run.uncertified)
    uncertified: str | None = None
    log: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------- core solve
def _scip_model(
    max_time: float,
    gap: float,
    heuristics: str,
    max_nodes: int | None,
    min_orthogonality: float | None = None,
    min_orthogonality_root: float | None = None,
    plugins_off: tuple[str, ...] = (),
) -> Model:
    """Phase 1: SCIP's model with the settings the proof needs (no presolving or dual
    reductions: the capacity constraints are not visible to them), the run's caps and seed;
    `min_orthogonality` and `…_root` (None: SCIP's 0.9) are the cut selector's filter in
    the tree and at the root, D-77; `plugins_off` names SCIP heuristics and separators
    ("heuristics/trivial", "separating/rapidlearning") that never run (D-84)."""
    model = Model("argusqt-opt")
    model.hideOutput()
    scip_time_limit(model, max(0.1, float(max_time)))  # CPU-seconds (D-96)
    model.setParam("limits/gap", float(gap))
    model.setParam("presolving/maxrounds", 0)
    model.setParam("presolving/maxrestarts", 0)
    model.setParam("propagating/dualfix/freq", -1)
    model.setParam("propagating/dualfix/maxprerounds", 0)
    model.setParam("misc/allowstrongdualreds", False)
    model.setParam("misc/allowweakdualreds", False)
    model.setParam("randomization/randomseedshift", SCIP_SEED_SHIFT)
    if max_nodes is not None:
        model.setParam("limits/totalnodes", max(1, int(max_nodes)))
    # which valid cuts of a round enter the LP, never which cuts are valid: the bound stays
    # a proof (docs/design.md, D-77)
    if min_orthogonality is not None:
        model.setParam("cutselection/hybrid/minortho", float(min_orthogonality))
    if min_orthogonality_root is not None:
        model.setParam("cutselection/hybrid/minorthoroot", float(min_orthogonality_root))
    model.setHeuristics(
        {"off": SCIP_PARAMSETTING.OFF, "default": SCIP_PARAMSETTING.DEFAULT}.get(
            heuristics.lower(), SCIP_PARAMSETTING.FAST
        )
    )
    # which candidates SCIP offers, never how one is judged: each is checked in full
    # (conscheck), so the bound and every verdict stay proofs (D-84)
    for name in plugins_off:
        model.setParam(f"{name}/freq", -1)
    return model


def _outcome(
    model: Model,
    sep: Separator,
    free: np.ndarray,
    cost: np.ndarray,
    run: _Run,
    stop: _Stop,
    hdlr: _CapacityHandler,
    guided: _GuidedHeur | None,
    n_init: int,
    insiders: InsiderCheck | None,
    watch: Stopwatch,
) -> PatternOutcome:
    """Phase 3: what the run proved — the best pattern SCIP kept, the bound, and whether
    they are proofs (every node closed by a finished check, no stop by user, clock or work)."""
    cancel, xvars = run.cancel, hdlr.xvars
    status = model.getStatus()
    outcome = PatternOutcome(None, np.inf, None, False, cuts=run.n_cuts + n_init)
    outcome.nodes = int(model.getNNodes())
    outcome.lps = hdlr.solved_lps()
    if guided is not None:
        outcome.guided_runs, outcome.guided_found = guided.calls, guided.found
    outcome.cancelled = bool(cancel is not None and cancel.cancelled)
    # an attacker LP stopped by HiGHS's own time limit (set to what the deadline leaves) may
    # end a few milliseconds before our clock calls the deadline expired: that is the
    # deadline too (_Stop.halt marks it as the clock's), not an unexplained stop. Any stop by
    # the clock (SCIP's, or a callback's poll of the deadline, whatever status SCIP then
    # reports) means the pattern may differ on another machine.
    clock = (
        status == "timelimit"
        or stop.deadline.expired
        or ((stop.halted or sep.interrupted) and not stop.work_hit)
    )
    # the work budget, not the clock, ended the run: the same stop on every machine
    work_stop = stop.work_hit and not stop.deadline.hit and status != "timelimit"
    outcome.work_limit = work_stop or status in ("nodelimit", "totalnodelimit")
    outcome.timed_out = not outcome.cancelled and clock
    # a node left without a finished check (run.uncertified: the clock, the work budget, a
    # cancel) was cut off unexplored: SCIP may then call the whole tree "infeasible" or its
    # incumbent "optimal", which proves nothing; any other stop proves nothing either
    exact = run.uncertified is None
    stopped = outcome.cancelled or clock or stop.work_hit or stop.halted or sep.interrupted
    outcome.infeasible = status == "infeasible" and exact and not stopped
    sols = model.getSols() if model.getNSols() else []
    best = None
    best_obj = np.inf
    for s in sols:
        obj = float(model.getSolObjVal(s))
        if obj < best_obj:
            vals = np.array([model.getSolVal(s, v) for v in xvars])
            best, best_obj = vals, obj
    if exact:
        run.note_bound(model)  # SCIP's final dual bound: every node was closed by a proof
    bound = run.bound if run.bound is not None else -np.inf
    if best is not None:
        mask = np.where(sep.free, 0.0, sep.fixed) > 0.5
        mask[free] = best > 0.5
        outcome.mask = mask
        outcome.cost = float(cost[free][best > 0.5].sum())
    if abs(bound) < 1e19:
        outcome.bound = float(bound)
        if outcome.mask is not None:
            outcome.bound = min(outcome.bound, outcome.cost)
    # only a search that ran to its end with every node closed by a proof: a stop (user,
    # clock or work budget) may have left nodes unexplored
    outcome.optimal = (
        exact
        and not stopped
        and outcome.mask is not None
        and (
            status == "optimal"
            or (
                status == "gaplimit"
                and outcome.bound is not None
                and outcome.cost - outcome.bound <= 1e-9 * max(1.0, abs(outcome.cost))
            )
        )
    )
    outcome.uncertified = run.uncertified
    outcome.log.append(
        f"SCIP status {status}"
        + ("" if exact else f" (not a proof: {run.uncertified} left a node unchecked)")
        + f", nodes {outcome.nodes}, cuts {outcome.cuts}"
        + (f" ({run.n_insider_cuts} against insiders)" if insiders is not None else "")
        + (
            f", insider probes {hdlr.n_probes} ({len(hdlr.insider_pool)} known)"
            if hdlr.n_probes
            else ""
        )
        + f", cover cuts {run.n_cover_cuts}"
        + (f", bridgeless cuts {run.n_bridgeless_cuts}" if hdlr.bridgeless is not None else "")
        + (
            f", no-goods of sums {run.n_combined_cuts} (+{run.n_forced_cuts} from the start"
            + (f", {run.n_fractional_sums} at fractional points" if run.n_fractional_sums else "")
            + (f", {run.n_rule_capacities} capacity rows" if run.n_rule_capacities else "")
            + ")"
            if run.n_combined_cuts
            or run.n_forced_cuts
            or run.n_fractional_sums
            or run.n_rule_capacities
            else ""
        )
        + (
            f", root gap {100 * run.root_gap:.2f} % (rule-aware bridgeless cuts "
            + ("from the root again)" if run.late_bridgeless else "off)")
            if run.root_gap is not None
            else ""
        )
        + (
            f", the tree's cut filter {run.tree_filter:g} by the root gap"
            if run.tree_filter is not None
            else ""
        )
        + f", candidate checks {run.n_checks}, attacker LPs {sep.n_lps}"
        + f" ({sep.certs.reused} spared by earlier moves"
        + (f", the last {sep.pool.size} moves kept" if sep.pool is not None else "")
        + (f"; {sep.n_pareto} Pareto LPs, {sep.n_pareto_kept} duals kept" if sep.n_pareto else "")
        + _insider_tally(hdlr)
        + f"), {watch.elapsed:.2f} s"
        + (
            f"; guided heuristic {guided.found} patterns in {guided.calls} runs "
            f"({guided.spent} LPs, {guided.seconds:.1f} s{_tally(guided.guide)})"
            if guided is not None
            else ""
        )
    )
    return outcome


def _again_with_cuts(call: dict, first: PatternOutcome, seconds: float) -> PatternOutcome:
    """The run again from its root with the rule-aware bridgeless cuts, started from the first
    run's pattern; its counts carry the first run's work (D-75)."""
    kw = dict(call)
    nodes, lps = kw["max_nodes"], kw["max_lps"]
    kw.update(
        max_time=max(0.0, min(float(kw["max_time"]), seconds)),
        bridgeless_rule=True,
        bridgeless_rule_root_gap=None,
        late_start=None,
        start=first.mask if first.mask is not None else kw["start"],
        max_nodes=None if nodes is None else max(1, nodes - first.nodes),
        max_lps=None if lps is None else max(1, lps - first.lps),
    )
    problem = kw.pop("problem")
    out = solve_pattern(problem, **kw)
    out.lps += first.lps
    out.nodes += first.nodes
    # `seconds` is what the user's time limit (a safety cap) leaves; the work is bounded by
    # the counts above. Should the cap have cut the first run, the outcome says so too
    out.timed_out = out.timed_out or first.timed_out
    if first.bound is not None and first.uncertified is None:
        # the first run's bound, a proof, holds for the same problem
        out.bound = first.bound if out.bound is None else max(out.bound, first.bound)
    if first.mask is not None and (out.mask is None or first.cost < out.cost):
        # SCIP keeps the start unless it fails a check; should it, the first pattern stands
        out.mask, out.cost, out.optimal = first.mask, first.cost, False
    out.log = [f"first run: {first.log[0]}; again with the rule-aware bridgeless cuts"] + out.log
    return out


def _include_heur(
    model: Model, heur: Heur, name: str, desc: str, key: str, *, priority: int, timing: int
) -> None:
    """One of our heuristics in SCIP, called at every node (depth unlimited) when `timing`
    says: the settings every heuristic of the branch-and-cut shares."""
    model.includeHeur(
        heur,
        name,
        desc,
        key,
        priority=priority,
        freq=1,
        freqofs=0,
        maxdepth=-1,
        timingmask=timing,
    )


def solve_pattern(
    problem: CSPProblem,
    fixed: np.ndarray | None = None,
    *,
    max_time: float = 600.0,
    gap: float = 0.0,
    start: np.ndarray | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    sepa_depth: int | None = None,
    threads_nogil: bool = True,
    heuristics: str = "fast",
    insiders: InsiderCheck | None = None,
    guide: Guide | None = None,
    guide_delay: float = GUIDED_DELAY_MIN,
    bridgeless: bool = True,
    bridgeless_rule: bool = False,
    bridgeless_rule_root_gap: float | None = None,
    fractional_sums: bool = False,
    rule_capacities: bool = False,
    rule_capacities_stalled: bool = False,
    covers: bool = True,
    reuse_moves: bool = False,
    max_nodes: int | None = None,
    max_lps: int | None = None,
    init_cuts: list[Cut] | None = None,
    rins: bool = False,
    combined: PatternRule | None = None,
    polish: bool = False,
    relaxed: bool = False,
    moves: list[tuple[np.ndarray, np.ndarray]] | None = None,
    memo_blocks: bool | BlockMemo = False,
    min_orthogonality: float | None = None,
    min_orthogonality_root: float | None = None,
    plugins_off: tuple[str, ...] = (),
    move_pool: int = 0,
    tree_filter: tuple[float, float] | None = None,
    tree_pool: int = 0,
    pareto_cuts: float = 0.0,
    pareto_depth: int | None = None,
    pareto_gap: float = 0.0,
    insider_backoff: int = 0,
    insider_probes: int = 0,
    probe_level: float = 0.5,
    guide_root_runs: int | None = None,
    guide_root_wait: bool = False,
    guide_repair_alone: bool = False,
    late_start: Callable[[float], np.ndarray | None] | None = None,
    more_starts: list[np.ndarray] | None = None,
    borrow_moves: bool = False,
    borrow_root: bool = True,
) -> PatternOutcome:
    """Branch-and-cut on `problem` with cells fixed as in `fixed` (NaN = free; see Separator).

    `start` is a known protected 0/1 pattern (start solution). `insiders` checks a 0/1
    pattern that every outsider LP passes against the insiders (the respondents alone in
    a cell): their disclosures become capacity cuts of their own LPs, so the proof covers
    the insiders too. Returns the best pattern SCIP proved protected (None if it found none)
    and the dual bound on the free cost. `max_nodes` and `max_lps` (attacker LPs of the
    separation) bound the search by work instead of seconds, so a stop at them gives the same
    pattern on any machine; `max_time` is only a safety cap (a stop there sets `timed_out`).
    `init_cuts` are cuts known valid for every protected pattern (over free cells); `rins`
    adds the neighbourhood heuristic of local_branching.py. `combined` (the rule on combined
    cells, CSPProblem.pattern_rule) rejects a 0/1 pattern with an unsafe determined sum;
    `bridgeless_rule` keeps bridgeless cuts with it, in their rule-aware form
    (`bridgeless_rule_root_gap`: from the root again when its gap reaches this, D-75), and
    `fractional_sums` separates its lifted no-goods at fractional points too (D-60).
    `polish` adds the clean-up of the incumbent (incumbent_polish.py); `relaxed` (with
    `combined`) the search without the rule whose pattern is repaired (relaxed_search.py).
    `moves` (with `reuse_moves`): attacker moves found before, each checked, as remembered
    moves (lp/seeded_moves.py; MOD's witnesses of its start, D-67). `memo_blocks` (without
    `reuse_moves`): a block met again at the same point is replayed, its LPs counted as
    solved (lp/block_memo.py; MOD's subtables, D-72; a BlockMemo: shared with an earlier
    search of the same problem and `fixed`, D-101). `min_orthogonality`: SCIP's cut
    selector keeps a cut this orthogonal to those already chosen (None: SCIP's 0.9; D-77).
    `plugins_off`: SCIP heuristics and separators by their parameter path (e.g.
    "heuristics/trivial") that never run (MOD's polish, D-84).
    `move_pool` (with `reuse_moves`): the last this many attacker moves, scaled to the
    point, start each block's running extremes (lp/move_pool.py, D-82; 0: off).
    `tree_filter` (root gap, filter): the cut selector's filter in the tree becomes that
    value when the root ends below that gap (None: `min_orthogonality` throughout, D-82),
    and then a pool of the last `tree_pool` moves starts (0: none).
    `pareto_cuts` (μ > 0): each failing direction's cut from the optimal dual that its LP
    at x* + μ(1 − x*) gives (Separator.pareto, D-88; 0: off), only at nodes at most
    `pareto_depth` deep (None: every node) whose gap is at least `pareto_gap`.
    `insider_backoff` (> 0): a known insider missing at fractional points in a row waits
    twice as many rounds each time, up to this many (0: every round; D-95).
    `insider_probes` (> 0): that many insider audits of root points rounded at `probe_level`
    add the respondents they find to the known insiders (D-108; 0: off).
    `guide_root_runs`: the guided heuristic runs at most this often at the root (None: no cap);
    `guide_root_wait`: its runs counted only once some respondent is known (D-110);
    `guide_repair_alone`: its insider repair's LPs counted in its throttle while none is (D-116).
    `late_start` (seconds left -> a protected 0/1 pattern or None): asked once, when the root's
    gap starts the run again with the rule-aware bridgeless cuts; its pattern joins the
    restart's starts (D-110). `more_starts`: protected patterns beside `start`.
    `borrow_moves` (with `reuse_moves`): every attacker (outsider, known insiders) tries the
    others' newest moves, under its own bounds, before an LP (lp/separation.py MoveBoard,
    D-113); at the root too with `borrow_root`, else from the tree on (D-116).
    """
    call = dict(locals())  # for a new start with the rule-aware bridgeless cuts (D-75)
    watch = Stopwatch()
    fixed = default_fixed(problem) if fixed is None else np.asarray(fixed, dtype=float)
    sep = Separator(problem, fixed)
    # no coverage LPs: on OPT's candidates (small blocks, most primaries checked again and
    # again) they cost more than the per-primary LPs they spare — b520 at load 7.7: SCIP
    # 3.4 → 2.1–2.6 s; 1H2D 2,508 cells seeds 0/1/3: 23.6/19.2/45.5 → 21.4/17.6/35.9 s
    sep.sweep = False
    # an attacker move that reached a level at an earlier point is tried before the LP
    # (lp/separation.py Certificates; docs/design.md D-46): OPT's choice; off for the
    # LP-budgeted callers (MOD's subtables, HEUR's polish), whose budgets count LPs
    sep.reuse = reuse_moves
    sep.pareto = float(pareto_cuts)
    if memo_blocks and not reuse_moves:
        # a BlockMemo given: another search of this problem and `fixed` met those blocks
        sep.memo = memo_blocks if isinstance(memo_blocks, BlockMemo) else BlockMemo()
    if move_pool > 0 and reuse_moves:
        sep.pool = MovePool(sep.lb, sep.ub, move_pool)
    if moves:
        seed_certificates(sep, moves)
    free = np.flatnonzero(sep.free)
    cost = np.asarray(problem.cost, dtype=float)
    pos_of = np.full(problem.n_cells, -1, dtype=np.int64)
    pos_of[free] = np.arange(free.size)
    offset = 0.0
    stop = _Stop(cancel, Deadline(max_time), max_lps)
    run = _Run(cancel, progress, watch, pos_of, stop, offset)
    sep.deadline = run.stop.deadline
    if sep.targets.size == 0:
        mask = np.where(sep.free, 0.0, sep.fixed) > 0.5
        return PatternOutcome(mask, 0.0, 0.0, True)
    init = sep.relation_cuts() + list(init_cuts or [])
    forced = forced_sum_cuts(combined, sep)  # the rule's no-goods known from the start (D-55)
    init += forced
    run.n_forced_cuts = len(forced)
    # an initial cut without free cells means no pattern can protect that primary
    if any(c.cells.size == 0 for c in init):
        return PatternOutcome(None, np.inf, None, False, infeasible=True)

    model = _scip_model(
        max_time,
        gap,
        heuristics,
        max_nodes,
        min_orthogonality,
        min_orthogonality_root,
        plugins_off,
    )
    xvars = [model.addVar(name=f"x{i}", vtype="B", obj=float(cost[i])) for i in free]
    for c in init:
        pos = pos_of[c.cells]
        model.addCons(
            sum(float(k) * xvars[int(j)] for k, j in zip(c.coef, pos, strict=True)) >= c.rhs
        )
    run.sepa_depth = 10**9 if sepa_depth is None else sepa_depth
    # the rule's rejected candidates go to the repair heuristic (D-54)
    recorder = None
    if combined is not None:
        recorder = RuleRecorder(combined, np.where(sep.free, cost, 0.0))
    hdlr = _CapacityHandler(sep, free, xvars, run, insiders, recorder or combined)
    if borrow_moves and reuse_moves:
        hdlr.board = sep.certs.board = MoveBoard()
        hdlr.board_root = bool(borrow_root)
        sep.board = hdlr.board if borrow_root else None  # tried from the tree on (D-116)
    store = None
    if recorder is not None:
        hdlr.store = store = RuleAwareStore(hdlr.store.n, recorder, sep.full_point)
    hdlr.covers = covers
    hdlr.lift = getattr(combined, "lift", None)  # the rule's lifted no-goods (D-55)
    if fractional_sums:  # and at fractional points (D-60)
        hdlr.fractional = getattr(combined, "fractional", None)
    if rule_capacities:  # and its capacity rows with their covers (D-66)
        hdlr.rule_capacity = getattr(combined, "fractional_capacities", None)
        hdlr.rule_capacity_stalled = rule_capacities_stalled
    stop.work = hdlr.attacker_lps
    hdlr.tree_filter = tree_filter
    hdlr.tree_pool = tree_pool
    hdlr.pareto_mu, hdlr.pareto_depth, hdlr.pareto_gap = sep.pareto, pareto_depth, pareto_gap
    hdlr.insider_backoff = int(insider_backoff)
    hdlr.insider_probes, hdlr.probe_level = int(insider_probes), float(probe_level)
    # with the rule on combined cells publishing a bridge may make another relation's sum
    # determined: only the rule-aware form holds then, and it is off unless asked (D-60)
    if bridgeless and (combined is None or bridgeless_rule) and not np.any(cost[free] < 0):
        # valid only for costs ≥ 0: publishing a bridge then never costs more
        # (argusqt/docs/methods.md §3.2)
        hdlr.bridgeless = _Bridgeless(sep, rule_aware=combined is not None)
    elif bridgeless and bridgeless_rule_root_gap is not None and combined is not None:
        if not np.any(cost[free] < 0):  # a new start with them past this root gap (D-75)
            hdlr.late_bridgeless = float(bridgeless_rule_root_gap)
    model.includeConshdlr(
        hdlr,
        "capacity",
        "Fischetti-Salazar capacity constraints",
        sepapriority=-1,
        enfopriority=-1,
        chckpriority=-1,
        sepafreq=1,
        propfreq=-1,
        eagerfreq=-1,
        needscons=True,
    )
    cons = model.createCons(hdlr, "capacity", initial=True, separate=True, enforce=True, check=True)
    model.addPyCons(cons)
    model.includeEventhdlr(_Progress(run), "argusqt-progress", "progress and cancel")
    guided = None
    if guide is not None:
        guided = _GuidedHeur(hdlr, guide, guide_delay, guide_root_runs, guide_root_wait)
        guided.repair_alone = bool(guide_repair_alone)
        _include_heur(
            model,
            guided,
            "argusqt-guided",
            "start heuristic with LP-scaled costs",
            "G",
            priority=1000,
            timing=SCIP_HEURTIMING.DURINGLPLOOP | SCIP_HEURTIMING.AFTERLPNODE,
        )
    local = None
    if rins:
        local = RinsHeur(hdlr, solve_pattern)
        _include_heur(
            model,
            local,
            "argusqt-rins",
            "incumbent's neighbourhood where the LP point agrees (sub-MIP bounded by counts)",
            "R",
            priority=-1000,
            timing=SCIP_HEURTIMING.AFTERLPNODE,
        )
        stop.work = lambda: hdlr.attacker_lps() + local.spent  # its LPs are the run's work
    cleanup = None
    if polish:
        cleanup = PolishHeur(hdlr, combined)
        _include_heur(
            model,
            cleanup,
            "argusqt-polish",
            "the incumbent with a secondary published again (1-opt, the full check decides)",
            "P",
            priority=-500,
            timing=SCIP_HEURTIMING.DURINGLPLOOP
            | SCIP_HEURTIMING.AFTERLPNODE
            | SCIP_HEURTIMING.AFTERPSEUDONODE,
        )
    relax = None
    if relaxed and combined is not None:
        weight = np.abs(np.asarray(problem.values, float))
        relax = heur = RelaxedSearchHeur(hdlr, solve_pattern, combined, weight, guide)
        _include_heur(
            model,
            heur,
            "argusqt-relaxed",
            "the search without the rule on combined cells, its pattern repaired (counts)",
            "X",
            priority=-2000,
            timing=SCIP_HEURTIMING.DURINGLPLOOP | SCIP_HEURTIMING.AFTERLPNODE,
        )
        work_of = stop.work
        stop.work = lambda: work_of() + heur.spent  # its LPs are the run's work
    repair = None
    starts = []
    for given in ([start] if start is not None else []) + list(more_starts or []):
        # as the handler sees it: the fixed cells at their values
        starts.append(np.where(sep.free, np.asarray(given) > 0.5, np.nan_to_num(sep.fixed) > 0.5))
    if recorder is not None:
        repair = CombinedRepairHeur(hdlr, recorder, np.abs(np.asarray(problem.values, float)))
        _include_heur(
            model,
            repair,
            "argusqt-combined-repair",
            "a pattern only the rule on combined cells rejects, with the cells the rule needs",
            "C",
            priority=900,
            timing=SCIP_HEURTIMING.DURINGLPLOOP
            | SCIP_HEURTIMING.AFTERLPNODE
            | SCIP_HEURTIMING.AFTERPSEUDONODE,
        )
        # the start pattern with the rule's cells too (the repair after the run, done first)
        if starts and (fixed_start := repair.repaired(starts[0])) is not None:
            if not np.array_equal(fixed_start, starts[0]):
                starts.append(fixed_start)
    for pattern in starts:
        sol = model.createSol()
        for v, i in zip(xvars, free, strict=True):
            model.setSolVal(sol, v, 1.0 if pattern[i] else 0.0)
        model.addSol(sol, free=True)
    if threads_nogil:
        model.optimizeNogil()
    else:
        model.optimize()
    out = _outcome(model, sep, free, cost, run, stop, hdlr, guided, len(init), insiders, watch)
    sep.memo = None  # its outcomes go now, not with the model's reference cycles (D-72)
    if run.late_bridgeless and not out.cancelled:
        extra = late_start(run.stop.deadline.remaining) if late_start is not None else None
        if extra is not None:
            call = {**call, "more_starts": [extra]}
        return _again_with_cuts(call, out, run.stop.deadline.remaining)
    if repair is not None:
        out.repair_runs, out.repair_found = repair.repairs, repair.found
        out.log.append(
            f"rule repair heuristic {repair.found} patterns in {repair.repairs} repairs "
            f"({repair.checks} rule checks, {repair.lps} attacker LPs in SCIP's checks of them; "
            f"{store.queued if store else 0} candidates only the rule's no-goods rejected)"
        )
    if relax is not None:
        out.relaxed_found = relax.found
        out.log.append(
            f"search without the rule {relax.found} patterns in {relax.calls} runs "
            f"({relax.spent} LPs; its best {_m(relax.raw)}, repaired {_m(relax.best)})"
        )
    if cleanup is not None:
        out.polish_found = cleanup.found
        out.log.append(
            f"incumbent clean-up {cleanup.found} patterns in {cleanup.trials} trials "
            f"({cleanup.calls} calls, {cleanup.lps} attacker LPs)"
        )
    if local is not None:
        out.rins_runs, out.rins_found, out.rins_lps = local.calls, local.found, local.spent
        out.log.append(
            f"neighbourhood heuristic {local.found} patterns in {local.calls} runs "
            f"({local.spent} LPs, {local.seconds:.1f} s; free cells "
            f"{min(local.sizes, default=0)}–{max(local.sizes, default=0)} of {free.size})"
        )
    return out


def _insider_tally(hdlr: _CapacityHandler) -> str:
    """The known insiders' LPs, and those another attacker's move spared (D-113)."""
    seps = [sep for sep, _ in hdlr.insider_pool.values()]
    if not seps:
        return ""
    lps = sum(sep.n_lps for sep in seps)
    borrowed = sum(sep.certs.borrowed for sep in seps)
    return (
        f"; known insiders {len(seps)}: {lps} LPs ({borrowed} spared by others' moves; "
        f"the outsider {hdlr.sep.certs.borrowed})"
    )


def _m(cost: float | None) -> str:
    """A cost for the log ("-" when there is none)."""
    return "-" if cost is None else f"{cost:,.0f}"


def _insider_check(problem: CSPProblem, floors: bool = False) -> InsiderCheck | None:
    """The publication audit's insider attacker as the branch-and-cut's check (None when the
    problem has no respondents: there is nothing to check); with `floors` (OPT) also the
    respondents sharing a cell (D-91), lazily: only at a pattern every older insider passes."""
    respondents = respondents_of(problem)
    fl = problem.floors if floors else None
    if fl is not None and fl.count == 0:
        fl = None
    if (respondents is None or respondents.count == 0) and fl is None:
        return None
    n = problem.n_cells
    #: disclosures per pattern already audited: SCIP checks one solution in several
    #: callbacks (check, then separation), the audit's answer stays the same (D-47)
    seen: dict[bytes, list[InsiderFind]] = {}
    rows: dict[tuple[int, int], InsiderFind] = {}
    #: the floor audits' attacker points per (primary, side), the newest kept: checked
    #: against each new candidate before they stand for an LP, never trusted (D-95)
    points: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def check(mask: np.ndarray, stop: Any) -> list[InsiderFind] | None:
        key = np.packbits(mask[:n]).tobytes()
        if key in seen:
            return list(seen[key])
        found: list[InsiderFind] = []
        try:
            if respondents is not None and respondents.count:
                out = insider_audit(problem, mask[:n], respondents=respondents, cancel=stop)
                found = [(d.cell, np.asarray(d.known, dtype=np.int64)) for d in out.disclosures]
            if not found and fl is not None:
                from argusqt.protection.audit.insider_floor import floor_audit

                more = floor_audit(problem, mask[:n], fl, cancel=stop, seeds=points)
                points.update(more.points)
                for d in more.disclosures:
                    k = (int(d.cell), int(d.row))
                    if k not in rows:
                        rows[k] = _floor_attacker(problem, fl, d.row, d.cell)
                    found.append(rows[k])
        except Cancelled:
            return None
        if len(seen) >= INSIDER_MEMO:
            seen.pop(next(iter(seen)))
        seen[key] = found
        return list(found)

    return check


def _floor_attacker(problem: CSPProblem, fl: Floors, row: int, cell: int) -> InsiderFind:
    """Respondent `row` of the floors attacking primary `cell`: the cells it alone makes up
    (known) and its lower bound on every other positive cell it is in, over the whole table
    (the same knowledge whatever the pattern, so its cuts hold for every pattern)."""
    values = np.asarray(problem.values, dtype=float)
    amount = fl.amount.tocsr()
    a, b = amount.indptr[row], amount.indptr[row + 1]
    cells = amount.indices[a:b].astype(np.int64)
    bound = np.minimum(amount.data[a:b].astype(float), values[cells])
    keep = (cells != cell) & (values[cells] > 0)
    cells, bound = cells[keep], bound[keep]
    alone = fl.alone[cells]
    return (int(cell), cells[alone], cells[~alone], bound[~alone])


#: patterns whose insider disclosures the branch-and-cut's check remembers
INSIDER_MEMO = 64


def _skipped(problem: CSPProblem, **_kw) -> PatternOutcome:
    """Outcome when a cancel arrived before the branch-and-cut started."""
    return PatternOutcome(None, np.inf, None, False, cancelled=True)


def _tally(guide: Guide) -> str:
    """The guided runs' HEUR patterns no cheaper than the incumbent, repaired and replayed
    (D-105), when the guide counts them."""
    t = getattr(guide, "tally", None)
    if not t:
        return ""
    return f"; {t['dear']} too dear, {t['repairs']} repaired, {t['replays']} replayed"
