"""Modular (HiTaS) suppression for hierarchical tables (argusqt/docs/methods.md §6).

The table is cut into non-hierarchical subtables (one parent node per dimension), solved
top-down with the optimal method, margins fixed, inherited secondaries protected with 10 %
levels; then the full table is audited and repaired until every primary passes, because
subtable-wise protection can leak over the full relation set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from argusqt.dataclass import dataclass
from argusqt.errors import AuditError, Cancelled, MethodError, TimeLimitError
from argusqt.model.status import is_suppressed
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.audit.floor_memo import FloorMemo
from argusqt.protection.audit.floor_passed import PassedPairs
from argusqt.protection.audit.insider_floor import floor_audit
from argusqt.protection.audit.outsider import audit
from argusqt.protection.audit.publication import (
    CANCEL_GRACE,
    PublicationVerdict,
    remembered_verdicts,
)
from argusqt.protection.core.budget import (
    Deadline,
    DeadlineToken,
    WorkBudget,
    out_of_time,
    stop_after,
)
from argusqt.protection.core.options import seconds as seconds_of
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.respondents import Floors, beside
from argusqt.protection.core.result import AuditResult, ProtectionResult, grouped
from argusqt.protection.lp.block_memo import BlockMemo
from argusqt.protection.lp.cleanup import Witnesses, cleanup, find_witness
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.protection.lp.protector import Protector, primary_order, protect_all
from argusqt.protection.lp.separation import Separator, default_fixed, require_additive
from argusqt.protection.suppress.branch_and_cut import PatternOutcome, solve_pattern
from argusqt.protection.suppress.epilogue import audit_exactness, suppression_result
from argusqt.protection.suppress.modular_insiders import PolishInsiders
from argusqt.protection.suppress.modular_params import ModOptions, ModParams, _mod_options
from argusqt.protection.suppress.modular_publish import publish as publish_cheaply
from argusqt.protection.suppress.scip_plugins import InsiderFind, PatternRule
from argusqt.protection.suppress.singleton import singleton_options, with_singleton_cells
from argusqt.protection.suppress.subtables import Subtable, _subproblem, _table_part, subtables
from argusqt.protection.suppress.table_repair import repair

#: what other modules and tests import from here (the subtables and the repair live apart)
__all__ = [
    "ModParams",
    "Subtable",
    "_subproblem",
    "_table_part",
    "repair",
    "solve_modular",
    "subtables",
]

#: an attacker move: (cells, shifts)
Move = tuple[np.ndarray, np.ndarray]

#: repair rounds after the final audit of record (each re-protects what it found short)
MAX_FINAL_REPAIRS = 3
#: witnesses may use the whole suppressed set when it has at most this many cells
FULL_WITNESS_LIMIT = 3000
#: up to this many cells the full-table repair is also tried with whole-table LPs priced per
#: cell (_PerCell) and the cheaper pattern kept; beyond it only the heuristic's LPs (measured,
#: 2 cores, load 14: sample_data, 738 cells, 6.80·10⁷ → 6.11·10⁷ for 4 s more; the 7,290-cell
#: table 6.07·10⁸ kept, the second try 6.50·10⁸ and 58 s more)
WHOLE_TABLE_REPAIR = 2_000
#: up to this many cells MOD (run as a method: params["polish"]) ends with the branch-and-cut
#: on the whole table from its own pattern and keeps the cheaper publishable one (_polish),
#: within POLISH_LPS attacker LPs (a count: the same pattern on any machine), if the run's
#: time limit leaves more than POLISH_MIN s
POLISH_CELLS = 2_000
POLISH_MIN = 1.0
POLISH_LPS = 2_000
#: the polish's branch-and-cut tries a remembered attacker move before an attacker LP (OPT's
#: `reuse_moves`, lp/separation.py Certificates): b520 820 → 544 attacker LPs, p78 409 → 336,
#: the same patterns there and on testw_p/testw_nk, g02 24.53 → 22.35 M (docs/design.md,
#: D-58). Not in the subtables: there it saved no LP and changed g03's pattern (+0.008 %)
POLISH_REUSE_MOVES = True
POLISH_RULE = True
#: the modular pattern's witness moves (_finish) seed those remembered moves (checked:
#: lp/seeded_moves.py): b520 785 → 715 attacker LPs, the same patterns on b520, p78, the
#: sample tables, g00, g01, g03, but an unproven search takes another path, g02 dearer
#: (23.02 → 24.83 M, +7.9 %), and no CPU saved at load 9; off (docs/design.md, D-67)
POLISH_SEED_MOVES = False
#: with the rule on combined cells inside an unproven polish, a second branch-and-cut from
#: the kept pattern made publishable with the rule's cells (a start every check accepts),
#: with the incumbent's clean-up (incumbent_polish.py), within this many attacker LPs: the
#: sample table with NK(2,80) 40.16 → 39.43 M (docs/design.md, D-67); 0: none
POLISH_AGAIN_LPS = 1_000
#: SCIP plugins that never run in the polish's branch-and-cut. Before the root LP the heuristics
#: "trivial", "locks" and "shiftandpropagate" build a pattern from the variables' locks and
#: bounds, and the capacity handler locks every cell against publishing (conslock): all
#: three offer every free cell suppressed. Where the start (the modular pattern) fails an
#: insider or the rule, that candidate gets the full check (b520: 30 attacker LPs on a
#: 454-cell block and an insider audit, ≈ 27 ms) and becomes an incumbent at ≈ 118 × the
#: optimum that is never kept (the modular pattern made publishable, ranked too, costs no
#: more). Without that incumbent SCIP's rapid learning would run its sub-SCIP at the root
#: (p78: 92 M instructions), so it is off too. b520's process −7.7 % in instructions, p78
#: −2.4 %; the same patterns on 36 of 39 tables and 360 generated NACE × region tables,
#: enterprise act × product, g02 and g19 cheaper, none dearer (docs/design.md, D-84)
POLISH_PLUGINS_OFF: tuple[str, ...] = (
    "heuristics/trivial",
    "heuristics/locks",
    "heuristics/shiftandpropagate",
    "separating/rapidlearning",
)
#: SCIP plugins off in a subtable's floors' search, e.g. POLISH_PLUGINS_OFF; off by default. It
#: starts from a pattern a respondent narrows, so SCIP's all-suppressed candidate gets a full
#: floor check and, where the LP share binds, is the pattern kept: off, b520 946 instead of
#: 1,086 LPs and the sample with NK(2,80) 52.0 M instead of 159.8 M, but g03, g28 and g30
#: 0.4–8 % dearer (docs/design.md, D-111)
FLOORS_PLUGINS_OFF: tuple[str, ...] = ()
#: a floors' search that ends unproven with every free cell suppressed (SCIP's trivial pattern,
#: never bettered within its LP share) can instead return the first search's pattern, as one
#: that finds nothing, and let the final repair decide: sample-nk 159.8 → 52.0 M, sample-p
#: −2.5 %, but g03 +0.02 %. Neither way is always cheaper, so a run that met such a search
#: is run again the other way and the cheaper audited pattern kept (ties: the first way):
#: costs never worse than either (docs/design.md, D-111). False: one way only, the first.
FLOORS_UNPROVEN_ALL = True
#: the subtables' branch-and-cut replays a block met again at the same point instead of
#: solving its attacker LPs (lp/block_memo.py), counted as solved: the same search and
#: patterns, fewer HiGHS solves (docs/design.md, D-72)
MEMO_BLOCKS = True
#: the subtables' branch-and-cut checks each 0/1 pattern its outsiders pass against the
#: respondents' floors in that subtable (the floor attacker, true primaries only) and cuts
#: off what one of them narrows, so the final insider repair has less to add (D-91, mod18b)
SUBTABLE_FLOORS = True
#: the floors' search is skipped when the first search proved its pattern optimal and that
#: pattern passes the floor check: the floors' feasible set lies inside the first's, so that
#: pattern is the floors' optimum too, and the second search (started from it, accepting
#: only cheaper patterns) returned it (p78: 3 of 5 subtables; docs/design.md, D-104)
SKIP_PROVEN_FLOORS = True
#: a subtable's floor check attacks no pair that passed in an earlier checked pattern whose
#: component around it is suppressed in this one: more suppression only frees attacker
#: variables, so it passes (recheck_after_growth's argument, per component); the same
#: finds, b520's floor checks 394 → 234 LPs (docs/design.md, D-117)
GROWN_FLOORS = True
#: default relative gap at which a subtable's branch-and-cut stops (params["gap"] overrides):
#: the modular method is a heuristic over near-optimal subtables anyway (τ-Argus's HiTaS
#: also accepts them); proving the last 1 % took most of the time on 3-D tables
SUBTABLE_GAP = 0.01
#: LP budget of the final clean-up: per primary of the table (at least CLEANUP_MIN_LPS); an
#: LP count, not seconds, so that a run gives the same pattern every time
CLEANUP_LPS_PER_PRIMARY = 2
CLEANUP_MIN_LPS = 400
#: above WHOLE_TABLE_REPAIR cells the whole-table clean-up tries the whole suppressed set
#: when a neighbourhood has no witness, up to this many suppressed cells (cleanup's default
#: 3,000 was just below b7290's ~3,100 with its virtual cells: 7–15 secondaries published,
#: 63·10⁶; with it 17, 95·10⁶), within a smaller LP budget per primary, since those LPs are
#: big (b7290, load 8: 423 LPs, 8 s; MOD 659 → 627·10⁶ after the insider repair)
LARGE_CLEANUP_FULL = 5_000
LARGE_CLEANUP_LPS_PER_PRIMARY = 0.3
#: SCIP heuristics setting on subtables (params["scip_heuristics"] overrides): with the
#: "default" set the hardest 144-cell subtable of a 1,521-cell 3-D table found its optimum
#: in 29 s instead of 50 s ("fast"): most of that subtable's time went into finding it
SUBTABLE_HEURISTICS = "default"
#: attacker LPs of branch-and-cut for all subtables together (params["scip_lps"] overrides),
#: shared equally, unused shares passed on; each subtable starts from its path-LP pattern.
#: A count, not seconds (it was 30 s, and MOD on a 520-cell table gave 3 patterns in 3 runs
#: at load 6–13, issue 22): ≈ those 30 s at 300–700 LPs/s
SCIP_LPS = 10_000


@dataclass
class _Limits:
    """MOD's bounds: its work (attacker LPs of the subtables' branch-and-cut) and the user's
    time limit as a safety cap on the whole run; `clock` records whether the cap (or a
    subtable's) changed anything, so the result can say "the time limit decided"."""

    lps: WorkBudget
    run: Deadline
    per_subtable: float
    clock: bool = False
    #: this run's way with a floors' search that ends unproven with every free cell
    #: suppressed (FLOORS_UNPROVEN_ALL): True, the first search's pattern goes on
    first_on_unproven_all: bool = False
    #: whether some floors' search of this run ended that way (the other way may be cheaper)
    met_unproven_all: bool = False

    def subtable_deadline(self) -> Deadline:
        return Deadline(min(self.per_subtable, self.run.remaining))


def _solve_subtable(
    problem: CSPProblem,
    sub: Subtable,
    sup: np.ndarray,
    true_prim: np.ndarray,
    params: ModOptions,
    cancel: CancelToken | None,
    allow_margins: bool = False,
    scip_lps: int | None = None,
    limits: _Limits | None = None,
) -> np.ndarray | None:
    """New global suppression mask after protecting one subtable (None if infeasible).

    `scip_lps` (MOD's share of its branch-and-cut work, None = no limit) bounds the
    branch-and-cut; `max_time_per_subtable` (and what is left of the run's limit, `limits`)
    only caps the subtable, start pattern and branch-and-cut, as a safety net.
    """
    if limits is None:
        per = float(params.max_time_per_subtable)
        limits = _Limits(WorkBudget(0), Deadline(None), per)
    deadline = limits.subtable_deadline()
    try:
        return _solve_subtable_in(
            problem, sub, sup, true_prim, params, cancel, allow_margins, scip_lps, limits, deadline
        )
    finally:
        limits.clock |= deadline.hit


def _solve_subtable_in(
    problem: CSPProblem,
    sub: Subtable,
    sup: np.ndarray,
    true_prim: np.ndarray,
    params: ModOptions,
    cancel: CancelToken | None,
    allow_margins: bool,
    scip_lps: int | None,
    limits: _Limits,
    deadline: Deadline,
) -> np.ndarray | None:
    """_solve_subtable's work within `deadline` (the subtable's cap)."""
    local, fixed, ltrue = _subproblem(problem, sub, sup, true_prim)
    if allow_margins:
        free_margin = sub.margin & ~sup[sub.cells] & problem.candidate[sub.cells]
        fixed[free_margin] = np.nan
    if not local.primary.any():
        return sup
    return _solve_local(
        problem, sub, sup, local, fixed, ltrue, params, cancel, scip_lps, limits, deadline
    )


def _solve_local(
    problem: CSPProblem,
    sub: Subtable,
    sup: np.ndarray,
    local: CSPProblem,
    fixed: np.ndarray,
    ltrue: np.ndarray,
    params: ModOptions,
    cancel: CancelToken | None,
    scip_lps: int | None,
    limits: _Limits,
    deadline: Deadline,
) -> np.ndarray | None:
    """A subtable's path start and branch-and-cut (the new global mask, None: infeasible)."""
    work, fixed = _with_singletons(local, fixed, ltrue, params)
    # a cheap protected start (path LPs and clean-up, as HEUR) so that SCIP starts from a
    # good incumbent and a time-out still returns a near-optimal pattern
    try:
        start = _path_start(work, fixed, deadline, cancel)
    except MethodError:
        return None  # a primary cannot move by its level even with every free cell suppressed
    checked = start is not None
    lps = scip_lps
    if start is None:  # out of time or cancelled: every free cell suppressed, if that is safe
        start = np.where(np.isnan(fixed), 1.0, fixed) > 0.5
        lps = None
    mask: np.ndarray | None = start if checked else None
    gap = float(SUBTABLE_GAP if params.gap is None else params.gap)
    floors = _sub_floors(problem, [(sub, work)], ltrue)
    found, infeasible = _search(
        work, fixed, start, lps, gap, params, cancel, limits, deadline, floors
    )
    if infeasible:
        return None
    if found is not None:
        mask = found
    if mask is None:
        if not Separator(work, fixed).is_protected(start.astype(float)):
            return None
        mask = start
    new = sup.copy()
    new[sub.cells] |= mask[: sub.cells.size]
    return new


def _search(
    work: CSPProblem,
    fixed: np.ndarray,
    start: np.ndarray,
    lps: int | None,
    gap: float,
    params: ModOptions,
    cancel: CancelToken | None,
    limits: _Limits,
    deadline: Deadline,
    floors: tuple[Floors, np.ndarray] | None = None,
) -> tuple[np.ndarray | None, bool]:
    """A subtable's branch-and-cut (or a depth's, side by side) from `start` within its share
    of the work; the user's time per subtable only as a cap, recorded in `limits` when it
    decides. (SCIP's pattern or None, whether SCIP proved the subproblem infeasible).
    `floors` (the respondents' floors there, the true primaries): a second search from that
    pattern checks them; when it finds nothing, the first pattern (the final repair decides).
    No work or time left: _solve says so (None)."""
    # both searches of one subtable share their blocks' outcomes (the same problem and
    # fixed cells: the replays count their LPs, so the searches are the ones they were, D-101)
    blocks = BlockMemo() if MEMO_BLOCKS else None
    if floors is not None:
        first = _solve(work, fixed, start, lps, gap, params, cancel, limits, deadline, None, blocks)
        found = None if first is None else first.mask
        if first is not None and first.infeasible:
            return found, True
        # the floors' search: from that pattern, within the same share of the work again
        check = _floor_check(work, *floors)
        if SKIP_PROVEN_FLOORS and found is not None and first is not None and first.optimal:
            # an optimum that no respondent narrows is the floors' optimum (the check's
            # outcome is remembered: a search that still runs meets it again for free)
            if check(found, cancel) == []:
                return found, False
        again = found if found is not None else start
        out = _solve(work, fixed, again, lps, gap, params, cancel, limits, deadline, check, blocks)
        if out is not None and out.mask is not None and not out.infeasible:
            if not out.optimal and _every_free(out.mask, fixed):
                # SCIP's all-suppressed pattern, never bettered: which way is cheaper is
                # known only after the final repair (solve_modular runs both, D-111)
                limits.met_unproven_all = True
                if limits.first_on_unproven_all:
                    return found, False
            return out.mask, False
        return found, False
    out = _solve(work, fixed, start, lps, gap, params, cancel, limits, deadline, None, blocks)
    if out is None:
        return None, False
    return out.mask, bool(out.infeasible)


def _every_free(mask: np.ndarray, fixed: np.ndarray) -> bool:
    """Whether `mask` suppresses every free cell (NaN in `fixed`) of a subtable's problem."""
    free = np.isnan(np.asarray(fixed, dtype=float))
    return bool(free.any() and np.asarray(mask, dtype=bool)[free].all())


def _solve(
    work: CSPProblem,
    fixed: np.ndarray,
    start: np.ndarray,
    lps: int | None,
    gap: float,
    params: ModOptions,
    cancel: CancelToken | None,
    limits: _Limits,
    deadline: Deadline,
    insiders: Any,
    blocks: BlockMemo | None = None,
) -> PatternOutcome | None:
    """One branch-and-cut of _search (None: no work or time left for it); `blocks`: the
    block outcomes it shares with the subtable's other search."""
    if deadline.remaining <= 0.05:
        deadline.hit = True  # the user's limit as a cap (logged), not the work budget
        return None
    if lps is not None and lps <= 0:
        return None
    out = solve_pattern(
        work,
        fixed,
        max_time=deadline.remaining,
        max_lps=lps,
        gap=gap,
        start=start,
        cancel=cancel,
        heuristics=str(
            SUBTABLE_HEURISTICS if params.scip_heuristics is None else params.scip_heuristics
        ),
        memo_blocks=blocks if blocks is not None else MEMO_BLOCKS,
        insiders=insiders,
        plugins_off=FLOORS_PLUGINS_OFF if insiders is not None else (),
    )
    limits.lps.spend(out.lps)
    limits.clock |= out.timed_out
    return out


def _sub_floors(
    problem: CSPProblem, parts: list[tuple[Subtable, CSPProblem]], ltrue: np.ndarray
) -> tuple[Floors, np.ndarray] | None:
    """The respondents' floors over subtables side by side (their cells, then each part's
    virtual cells unbounded) and the true primaries there; None when off or nothing."""
    fl = problem.floors
    if not SUBTABLE_FLOORS or fl is None or fl.count == 0:
        return None
    joined = beside([fl.columns(sub.cells).padded(work.n_cells) for sub, work in parts], fl.note)
    if joined.amount.nnz == 0:
        return None
    return joined, ltrue


def _floor_check(work: CSPProblem, floors: Floors, ltrue: np.ndarray) -> Any:
    """The floor attacker of the subtables' cells as the branch-and-cut's insider check:
    (primary, cells the respondent alone makes up, its other floors) per disclosure of a true
    primary (inherited secondaries owe the respondents nothing)."""
    n = work.n_cells
    seen: dict[bytes, list[InsiderFind]] = {}
    # the search's patterns share most components: each attacked once (D-101)
    memo = FloorMemo(work, floors)
    grown = PassedPairs(work)

    def check(mask: np.ndarray, stop: Any) -> list[InsiderFind] | None:
        key = np.packbits(mask[:n]).tobytes()
        if key in seen:
            return list(seen[key])
        sup = np.asarray(mask[:n], dtype=bool)
        only = grown.pairs(sup) if GROWN_FLOORS else None
        try:
            out = floor_audit(work, sup, floors, cancel=stop, memo=memo, only=only)
        except Cancelled:
            return None
        grown.add(sup, out.failed)
        found = [
            (
                d.cell,
                np.asarray(d.known, dtype=np.int64),
                np.array([c for c, _ in d.floors], dtype=np.int64),
                np.array([b for _, b in d.floors], dtype=float),
            )
            if d.floors
            else (d.cell, np.asarray(d.known, dtype=np.int64))
            for d in out.disclosures
            if d.cell < ltrue.size and ltrue[d.cell]
        ]
        if len(seen) >= 64:
            seen.pop(next(iter(seen)))
        seen[key] = found
        return list(found)

    return check


def _with_singletons(
    local: CSPProblem, fixed: np.ndarray, ltrue: np.ndarray, params: ModOptions
) -> tuple[CSPProblem, np.ndarray]:
    """A subtable's problem with its virtual singleton cells, fixed suppressed."""
    ss, sm, mf = singleton_options(params)
    work = with_singleton_cells(
        local,
        singleton_singleton=ss,
        singleton_multiple=sm,
        min_freq=mf,
        true_primary=ltrue,
    )
    if work.n_cells > local.n_cells:
        fixed = np.r_[fixed, np.ones(work.n_cells - local.n_cells)]
    return work, fixed


#: the subtables of one depth are solved in one branch-and-cut: their free cells and
#: relations are disjoint and their margins are fixed by shallower subtables (a cell is free
#: in one subtable only, the one whose parents are its cells' parents), so one model of
#: them side by side is the same problem, without a SCIP model, separator and start check
#: per subtable. Gap 0: a gap cannot be given per subtable, so each is proven optimal; that
#: gave the patterns of one by one (1 % each) on b520, p78, the enterprise tables and
#: g00–g09, where a joint 1 % changed g05 and g07 (docs/design.md, D-63). False: one by one
JOINT_DEPTH = True
JOINT_GAP = 0.0


def _union(works: list[CSPProblem]) -> CSPProblem:
    """Independent problems side by side: cells concatenated, relations block-diagonal."""
    return CSPProblem(
        values=np.concatenate([w.values for w in works]),
        lower=np.concatenate([w.lower for w in works]),
        upper=np.concatenate([w.upper for w in works]),
        cost=np.concatenate([np.asarray(w.cost, dtype=float) for w in works]),
        status=np.concatenate([w.status for w in works]),
        lpl=np.concatenate([w.lpl for w in works]),
        upl=np.concatenate([w.upl for w in works]),
        relations=sp.csr_matrix(sp.block_diag([w.relations for w in works], format="csr")),
        rhs=np.concatenate([np.asarray(w.rhs, dtype=float) for w in works]),
        spl=np.concatenate(
            [np.zeros(w.n_cells) if w.spl is None else np.asarray(w.spl) for w in works]
        ),
        decimals=works[0].decimals,
    )


def _solve_depth(
    problem: CSPProblem,
    group: list[Subtable],
    sup: np.ndarray,
    true_prim: np.ndarray,
    params: ModOptions,
    cancel: CancelToken | None,
    scip_lps: int | None,
    limits: _Limits,
) -> np.ndarray | None:
    """The subtables of one depth (JOINT_DEPTH): each its own path start, then one
    branch-and-cut over them side by side; the new global mask, or None when one of them
    has no start (infeasible, or the clock): solve_modular then solves them one by one."""
    deadline = Deadline(min(limits.per_subtable * len(group), limits.run.remaining))
    try:
        return _solve_depth_in(
            problem, group, sup, true_prim, params, cancel, scip_lps, limits, deadline
        )
    finally:
        limits.clock |= deadline.hit


def _solve_depth_in(
    problem: CSPProblem,
    group: list[Subtable],
    sup: np.ndarray,
    true_prim: np.ndarray,
    params: ModOptions,
    cancel: CancelToken | None,
    scip_lps: int | None,
    limits: _Limits,
    deadline: Deadline,
) -> np.ndarray | None:
    """_solve_depth's work within `deadline`."""
    parts = []
    for sub in group:
        local, fixed, ltrue = _subproblem(problem, sub, sup, true_prim)
        if not local.primary.any():
            continue
        work, fixed = _with_singletons(local, fixed, ltrue, params)
        try:
            start = _path_start(work, fixed, deadline, cancel)
        except MethodError:
            return None  # this subtable needs its margins: one by one, with the backtracking
        if start is None:
            return None
        parts.append((sub, work, fixed, start))
    if not parts:
        return sup
    start_u = np.concatenate([st for _, _, _, st in parts])
    mask = start_u
    ltrue_u = np.concatenate(
        [
            np.r_[true_prim[s.cells], np.zeros(w.n_cells - s.cells.size, dtype=bool)]
            for s, w, _, _ in parts
        ]
    )
    floors = _sub_floors(problem, [(s, w) for s, w, _, _ in parts], ltrue_u)
    found, infeasible = _search(
        _union([w for _, w, _, _ in parts]),
        np.concatenate([f for _, _, f, _ in parts]),
        start_u,
        scip_lps,
        float(JOINT_GAP),
        params,
        cancel,
        limits,
        deadline,
        floors,
    )
    if infeasible:
        return None
    if found is not None:
        mask = found
    new = sup.copy()
    at = 0
    for sub, work, _, _ in parts:
        new[sub.cells] |= mask[at : at + sub.cells.size]
        at += work.n_cells
    return new


class _DeadlineToken(CancelToken):
    """Cancelled when a deadline passes or a parent token is cancelled."""

    def __init__(self, deadline: Deadline, parent: CancelToken | None) -> None:
        super().__init__()
        self.deadline = deadline
        self.parent = parent

    @property
    def cancelled(self) -> bool:
        return self.deadline.expired or (self.parent is not None and self.parent.cancelled)


def _path_start(
    work: CSPProblem,
    fixed: np.ndarray,
    deadline: Deadline | None = None,
    cancel: CancelToken | None = None,
) -> np.ndarray | None:
    """A protected 0/1 pattern of a subtable: path LPs and clean-up on the free cells
    (argusqt/docs/methods.md §4); None when the deadline passes or `cancel` fires first.

    Cells fixed 1 are suppressed, cells fixed 0 never move. Every move found is an attacker
    move through suppressed cells, so the pattern is protected by construction. Raises
    MethodError when a primary cannot reach its level even with every free cell suppressed.
    """

    free = np.isnan(fixed)
    sup = np.where(free, 0.0, fixed) > 0.5
    ctx = MoveContext(work)
    ctx.movable = ctx.movable & (free | sup)
    wit = Witnesses()
    stop = _DeadlineToken(deadline or Deadline(None), cancel)
    try:
        n_lps = protect_all(ctx, sup, wit, primary_order(ctx), cancel=stop)
    except Cancelled:
        return None
    budget = max(CLEANUP_MIN_LPS, CLEANUP_LPS_PER_PRIMARY * n_lps)
    cleaned, _ = cleanup(work, sup, wit, ctx=ctx, max_lps=budget, cancel=stop)
    return cleaned


def _finish(
    problem: CSPProblem,
    sup: np.ndarray,
    params: ModOptions,
    log: list[str],
    progress: ProgressCallback,
    cancel: CancelToken | None,
    grace: CancelToken | None,
    defer_intervals: bool = False,
) -> tuple[np.ndarray, AuditResult, int, bool, bool, list[Move], list[Move]]:
    """The full table after the subtables: certify, repair, clean up, audit of record.

    Every (primary, direction) gets a witness — an attacker move through suppressed cells
    (argusqt/docs/methods.md §4) — or, where the subtables left it short, a path LP that
    adds the cheapest cells: one pass repairs what subtable-wise protection leaks over the
    full relation set. The clean-up then publishes the secondaries the whole table does
    not need. Up to WHOLE_TABLE_REPAIR cells the repair and clean-up are done twice, the
    LPs pricing movement and pricing cells (_PerCell), and the cheaper pattern is kept. The
    audit (with the witnesses as hints) decides; a primary it still finds short is repaired
    again rather than the pattern refused. Singleton options are kept as
    virtual cells throughout. `defer_intervals`: the audit is pass/fail even where exact
    intervals are asked for (_polish's publication audit computes them when it needs this
    pattern). Returns (pattern, audit, repair rounds, exact intervals asked for, audit exact,
    the witness moves on the table cells: the polish's insider audits start from them, and
    the same moves with the virtual singleton cells: its attacker LPs' remembered moves).
    """

    n = problem.n_cells
    ss, sm, mf = singleton_options(params)
    work = with_singleton_cells(problem, singleton_singleton=ss, singleton_multiple=sm, min_freq=mf)
    sup_w = np.r_[sup, np.ones(work.n_cells - n, dtype=bool)]
    ctx = MoveContext(work)
    progress(ProgressEvent(message="Modular: checking every primary over the whole table"))
    whole = work.n_cells <= int(
        WHOLE_TABLE_REPAIR if params.whole_table_repair is None else params.whole_table_repair
    )
    # (total cost, pattern, witnesses, log lines) of each way of pricing the repair
    tries: list[tuple[float, np.ndarray, Witnesses, list[str]]] = []
    for per_cell in (False, True) if whole else (False,):
        if tries and cancel is not None and cancel.cancelled:
            break
        lines: list[str] = []
        pattern = sup_w.copy()
        wit = Witnesses()
        added = _certify(ctx, pattern, wit, grace, per_cell=per_cell)
        lines.append(
            f"full table, repair priced {'per cell' if per_cell else 'per unit moved'}: "
            f"{added} cells added so that every primary is protected over all relations at "
            f"once (cost {grouped(_cost_of(problem, sup_w))} → {grouped(_cost_of(problem, pattern))})"
        )
        if params.cleanup and not (cancel is not None and cancel.cancelled):
            progress(
                ProgressEvent(
                    message="Modular: publishing secondaries the whole table does not need"
                )
            )
            pattern = _clean(problem, work, ctx, pattern, wit, lines, progress, cancel)
        tries.append((_cost_of(problem, pattern), pattern, wit, lines))
        if added == 0:
            break  # nothing was short: the other pricing gives this very pattern
    best = min(tries, key=lambda t: t[0])
    _, sup_w, wit, lines = best
    log.extend(lines)
    if len(tries) > 1:
        log.append(
            "full table: kept the cheaper of the two repairs ("
            + " vs ".join(grouped(t[0]) for t in tries)
            + ")"
        )
    whole_cell = whole and best is tries[-1] and len(tries) > 1
    # the audit of record, once (run_method reuses it): exact intervals as run_method would;
    # after a cancel pass/fail only, which the witnesses decide without an LP
    exact = audit_exactness(params.audit_intervals, sup_w[:n])
    if cancel is not None and cancel.cancelled:
        exact = False
    # pass/fail is decided by the witnesses (hints) without LPs; exact intervals cost two
    # LPs per primary, wasted when the polish proves another pattern (docs/design.md, D-48)
    judged = exact and not defer_intervals
    rounds = 0
    while True:
        hints = _table_hints(wit, n)
        final = audit(problem, sup_w[:n], intervals=judged, hints=hints, cancel=grace)
        if final.ok:
            return sup_w[:n].copy(), final, rounds, exact, judged, hints, wit.hints()
        if rounds >= MAX_FINAL_REPAIRS:
            raise MethodError(
                f"modular pattern still fails the audit after {rounds} repair rounds "
                f"({final.failures.size} primary cells under-protected)"
            )
        rounds += 1
        fails = final.failures
        log.append(f"final audit: {fails.size} primaries short, repaired (round {rounds})")
        wit.forget(fails)
        _certify(ctx, sup_w, wit, grace, cells=fails, trust=False, per_cell=whole_cell)


def _certify(
    ctx: MoveContext,
    sup: np.ndarray,
    wit: Witnesses,
    cancel: CancelToken | None,
    cells: np.ndarray | None = None,
    trust: bool = True,
    per_cell: bool = False,
) -> int:
    """Give every primary (or `cells`) a witness in both directions; returns cells added.

    A witness through suppressed cells only is sought first (nothing added); failing that,
    or with `trust=False` (the audit found the old one wanting), the cheapest path LP move,
    whose new cells join `sup` (changed in place). Raises Cancelled when `cancel` fires:
    a pattern with unchecked primaries is no result.
    """

    before = int(sup.sum())
    perm = ctx.primary & sup
    prot = (_PerCell if per_cell else Protector)(ctx, sup, wit, 2)
    order = primary_order(ctx) if cells is None else np.asarray(cells, dtype=np.int64)
    ctx.cancel = cancel  # a whole-table path LP stops inside HiGHS too (the run's limit)
    try:
        for cell in order.tolist():
            if cancel is not None and cancel.cancelled:
                raise Cancelled("cancelled before every primary cell was checked")
            for direction in (UP, DOWN):
                if wit.covered(cell, direction, ctx):
                    continue
                found = (
                    find_witness(ctx, (cell, direction), sup, perm, max_full=FULL_WITNESS_LIMIT)
                    if trust
                    else None
                )
                if found is not None:
                    wit.add_move(found[0], found[1], ctx)
                    wit.ensure(cell, direction, found[0])
                elif not prot.protect(cell, direction):
                    raise MethodError(
                        f"primary cell {cell} cannot be protected: no attacker move within the "
                        "bounds reaches its protection level"
                    )
    finally:
        ctx.cancel = None
    return int(sup.sum()) - before


class _PerCell(Protector):
    """Path LPs on the whole table with each new cell priced per unit of the move it can
    carry, so that a cell moved by the whole level costs its cost, as in the 0/1 pattern.

    The heuristic's LP prices movement (cost per unit moved, neighbourhoods first): the
    move of a large primary then spreads over many cheap cells (one short primary of
    sample_data, level 3.66·10⁶, took 105 new cells). Neither pricing wins everywhere,
    so _finish tries both (docs/design.md, "MOD").
    """

    def neighbourhoods(self, cell: int, need: float = 0.0):
        yield np.arange(self.ctx.problem.n_cells)

    def find(self, cell: int, direction: int) -> tuple[np.ndarray, np.ndarray] | None:
        ctx = self.ctx
        need = max(ctx.required(cell, direction), ctx.tol)
        room = np.maximum(np.minimum(ctx.ub, ctx.lb), ctx.tol)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_unit = self.base / np.minimum(room, need)
        cells = np.arange(ctx.problem.n_cells)
        cost = np.where(
            self.sup, self.eps, np.where(np.isfinite(per_unit), per_unit + self.delta, 1.0)
        )
        d = ctx.path_move(cell, direction, cells, cost)
        self.n_lps += 1
        if d is None:
            return None
        moved = d != 0
        return cells[moved], d[moved]


def _cost_of(problem: CSPProblem, pattern: np.ndarray) -> float:
    """Cost of the secondaries of a pattern (virtual singleton cells after the table's)."""
    n = problem.n_cells
    return float(np.asarray(problem.cost, dtype=float)[pattern[:n] & ~problem.primary].sum())


def _clean(
    problem: CSPProblem,
    work: CSPProblem,
    ctx: MoveContext,
    pattern: np.ndarray,
    wit: Witnesses,
    log: list[str],
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> np.ndarray:
    """The clean-up over the whole table (an LP budget, so a run gives the same pattern)."""
    large = problem.n_cells > WHOLE_TABLE_REPAIR
    per = LARGE_CLEANUP_LPS_PER_PRIMARY if large else CLEANUP_LPS_PER_PRIMARY
    budget = max(CLEANUP_MIN_LPS, int(per * int(problem.primary.sum())))
    first = _cost_of(problem, pattern)
    cleaned, info = cleanup(
        work,
        pattern,
        wit,
        ctx=ctx,
        max_lps=budget,
        max_full=LARGE_CLEANUP_FULL if large else FULL_WITNESS_LIMIT,
        progress=progress,
        cancel=cancel,
    )
    log.append(
        f"clean-up over the whole table: {info['removed']} secondaries published again, "
        f"cost {grouped(first)} → {grouped(_cost_of(problem, cleaned))} "
        f"({info['lps']} LPs, {info['elapsed']:.1f} s)"
        + (f", stopped early ({info['stopped']})" if info["stopped"] else "")
    )
    return cleaned


def _table_hints(wit: Witnesses, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The witness moves on the table cells only (a move less its virtual singleton cells
    still satisfies every table relation); the audit checks each before using it."""
    out = []
    for idx, d in wit.hints():
        keep = idx < n
        out.append((idx[keep], d[keep]))
    return out


def _polish(
    problem: CSPProblem,
    sup: np.ndarray,
    audited: AuditResult,
    exact: bool,
    params: ModOptions,
    limits: _Limits,
    log: list[str],
    progress: ProgressCallback,
    cancel: CancelToken | None,
    audited_exact: bool = True,
    grace: CancelToken | None = None,
    moves: list[Move] | None = None,
    work_moves: list[Move] | None = None,
) -> tuple[np.ndarray, AuditResult, PublicationVerdict] | None:
    """A small table's cost-aware last step: the branch-and-cut on the whole table from the
    modular pattern, with the insider attacker inside the proof as OPT has it, within
    POLISH_LPS attacker LPs (params "polish_lps") and what is left of the run's time limit;
    its pattern is made publishable, and the modular pattern too unless the branch-and-cut
    proved its own optimal (then no publishable pattern is cheaper; docs/design.md, D-48)
    and the rule on combined cells adds no cell to it (D-72);
    the cheaper publishable pattern is kept. `audited_exact`: `audited` has exact intervals
    (else the modular pattern's publication audit computes them, when `exact` asks for them).
    `grace`: the token of the modular pattern's publication when `cancel` (the run's limit
    or the user) stopped the branch-and-cut, as that publication came first before D-48.
    `moves`: the modular pattern's witness moves (_finish), the first insider audit's seeds
    (checked, never trusted: docs/design.md, D-63); `work_moves` the same with the virtual
    cells (the search's remembered moves when POLISH_SEED_MOVES). With the rule on combined
    cells, patterns are ranked at their cost once the rule's cells join them, and a search
    with the rule inside that proves nothing is followed by a second one from the kept
    pattern with those cells (POLISH_AGAIN_LPS; docs/design.md, D-67).

    Returns (pattern, outsider audit, verdict), or None when cancelled before a pattern was
    publishable (run_method then audits the modular pattern under the cancel grace).
    """

    n = problem.n_cells
    best = None
    lines = []

    def publish(
        what: str,
        pattern: np.ndarray,
        outsider: AuditResult | None,
        token: CancelToken | None = cancel,
        ruled: bool = False,
    ) -> bool:
        """`pattern` made publishable and ranked; `ruled`: it comes from a search with the
        rule on combined cells inside, so it passes the rule unless the insiders' cells
        change a sum."""
        nonlocal best
        try:
            done = publish_cheaply(
                problem,
                pattern,
                outsider=outsider,
                intervals=exact,
                cancel=token,
                moves=insiders.moves if insiders is not None else None,
            )
            fixed, verdict, added = done.pattern, done.verdict, done.added
        except (AuditError, MethodError) as err:
            lines.append(f"{what}: not publishable ({err})")
            return True
        except Cancelled:
            return False  # keep what is published already; else run_method audits it
        total = _cost_of(problem, fixed if ruled and not added else _grown(problem, fixed))
        lines.append(
            f"{what} {grouped(_cost_of(problem, pattern))}, {added} cells for insiders: "
            f"{grouped(_cost_of(problem, fixed))}"
            + (
                f", with the rule's cells {grouped(total)}"
                if total > _cost_of(problem, fixed)
                else ""
            )
        )
        if best is None or total < best[0]:
            best = (total, what, fixed, verdict)
        return True

    insiders: PolishInsiders | None = None
    room = limits.run.remaining > POLISH_MIN
    if not room:
        limits.clock = True  # the time limit, not the work, skips the branch-and-cut
    proven = False
    searched = False  # the search's proven pattern is published and ranked
    out = None
    rule = None
    ruled = False  # the search keeps the rule on combined cells inside
    if room:
        ss, sm, mf = singleton_options(params)
        work = with_singleton_cells(
            problem, singleton_singleton=ss, singleton_multiple=sm, min_freq=mf
        )
        insiders = PolishInsiders(problem, moves)
        rule = _rule_for(problem, sup)
        ruled = rule is not None

        def search(
            first: np.ndarray, lps: int, clean: bool = False, seeds: list[Move] | None = None
        ) -> PatternOutcome:
            """The whole-table branch-and-cut from `first` within `lps` attacker LPs."""
            return solve_pattern(
                work,
                default_fixed(work),
                max_time=min(limits.run.remaining, 1e9),
                max_lps=lps,
                gap=0.0,
                start=np.r_[first, np.ones(work.n_cells - n, dtype=bool)],
                cancel=cancel,
                heuristics=str(
                    SUBTABLE_HEURISTICS
                    if params.scip_heuristics is None
                    else params.scip_heuristics
                ),
                insiders=insiders if insiders is not None and insiders.active else None,
                reuse_moves=POLISH_REUSE_MOVES,
                combined=rule,
                polish=clean,
                moves=seeds,
                plugins_off=POLISH_PLUGINS_OFF,
            )

        progress(ProgressEvent(message="Modular: the branch-and-cut on the whole table"))
        # the modular pattern (outsider-safe) as the start: SCIP rejects it when an insider
        # recomputes a primary, and the search is then no longer than from its repair
        # (docs/design.md, D-48); the witnesses of that pattern spare most LPs of its check
        lps = int(POLISH_LPS if params.polish_lps is None else params.polish_lps)
        out = search(sup, lps, seeds=work_moves if POLISH_SEED_MOVES else None)
        limits.clock |= out.timed_out
        if rule is not None:
            lines.append(
                "Rule on combined cells (US#160) kept inside the branch-and-cut, the modular "
                f"pattern failing it ({'proven optimal' if out.optimal else 'not proven'})"
            )
        if out.mask is not None and out.optimal and not (cancel is not None and cancel.cancelled):
            if not publish("whole-table branch-and-cut", out.mask[:n].copy(), None, ruled=ruled):
                return None  # cancelled: run_method audits the modular pattern
            searched = True
            # the search's optimum bounds every publishable pattern from below, the modular
            # one made publishable included; the kept pattern is certified only when it
            # costs no more than that optimum: not when the insiders' audit or the rule's
            # growth (the search left the rule out where the modular pattern passes it)
            # added cells to it — then the modular pattern is ranked too (D-72)
            proven = best is not None and best[0] <= _cost_of(problem, out.mask[:n])
    late = cancel is not None and cancel.cancelled  # the clock or the user stopped it
    if proven:
        pass
    elif (
        publish(
            "modular",
            sup,
            audited if audited_exact or not exact else None,
            grace if late and grace is not None else cancel,
        )
        and out is not None
        and out.mask is not None
        and not late
        and not searched
    ):
        # unproven: its pattern only if it can undercut the modular one (publishing adds)
        if best is None or _cost_of(problem, out.mask[:n]) < best[0]:
            publish("whole-table branch-and-cut", out.mask[:n].copy(), None, ruled=ruled)
    if (
        rule is not None
        and POLISH_AGAIN_LPS > 0
        and out is not None
        and not out.optimal
        and best is not None
        and not late
    ):
        # the first search's start (the modular pattern) failed the rule and perhaps an
        # insider: the kept pattern, publishable and with the rule's cells, passes every
        # check, and its clean-up finds cheaper ones (docs/design.md, D-67)
        again = search(_grown(problem, best[2]), POLISH_AGAIN_LPS, clean=True)
        limits.clock |= again.timed_out
        late = cancel is not None and cancel.cancelled
        if again.mask is not None and not late and _cost_of(problem, again.mask[:n]) < best[0]:
            publish("second branch-and-cut", again.mask[:n].copy(), None, ruled=True)
    if best is None:
        return None
    log.append("whole table: " + "; ".join(lines) + f" — kept the {best[1]} pattern")
    return best[2], best[3].outsider, best[3]


def _grown(problem: CSPProblem, pattern: np.ndarray) -> np.ndarray:
    """`pattern` with the cells the rule on combined cells adds after MOD (protect_combined's
    growth, D-56): the polish ranks its candidates at that cost (docs/design.md, D-67)."""
    grow = getattr(problem.pattern_rule, "grown", None)
    if grow is None:
        return pattern
    n = problem.n_cells
    status, _ = problem.pattern_statuses(np.asarray(pattern[:n], dtype=bool))
    return np.asarray(is_suppressed(grow(status)))


def _rule_for(problem: CSPProblem, sup: np.ndarray) -> PatternRule | None:
    """The rule on combined cells for the polish's branch-and-cut when the modular pattern
    fails it (then the branch-and-cut's pattern would likely fail it too and
    protect_combined would run MOD again); else None, which keeps the search's bridgeless
    cut-off (docs/design.md, D-58)."""
    rule = problem.pattern_rule
    if rule is None or not POLISH_RULE:
        return None
    return rule if rule(sup[: problem.n_cells]) else None


def _publishable(
    problem: CSPProblem,
    sup: np.ndarray,
    audited: AuditResult,
    exact: bool,
    log: list[str],
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> tuple[np.ndarray, AuditResult, PublicationVerdict] | None:
    """A large table's last step: the pattern made publishable (insider repair, then the
    repaired cells it can do without published again: modular_publish).

    None when cancelled or when no publishable pattern came out (run_method then audits
    and repairs the modular pattern itself, and says why it fails).
    """
    progress(ProgressEvent(message="Modular: auditing the pattern (outsider and insiders)"))
    try:
        done = publish_cheaply(
            problem, sup, outsider=audited, intervals=exact, progress=progress, cancel=cancel
        )
    except (AuditError, MethodError, Cancelled):
        return None
    log.extend(done.lines)
    return done.pattern, done.verdict.outsider, done.verdict


def _depth_end(subs: list[Subtable], k: int) -> int:
    """The last subtable of the depth that subs[k] starts (k itself when it does not start
    one: subtables come sorted by depth)."""
    if k > 0 and subs[k - 1].depth == subs[k].depth:
        return k
    end = k
    while end + 1 < len(subs) and subs[end + 1].depth == subs[k].depth:
        end += 1
    return end


def solve_modular(
    problem: CSPProblem,
    params: ModOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """HiTaS: subtables top-down (path-LP start, then branch-and-cut within a shared budget),
    then the whole table certified, repaired, cleaned up and audited; statuses 11/12 set.

    params: max_time_per_subtable (s, default 60), max_time (s, the whole run, None = no
    limit), scip_lps (attacker LPs for all subtables' branch-and-cut, default SCIP_LPS),
    polish (the publishable last step of _polish, on as a method), polish_lps,
    singleton_singleton, singleton_multiple, min_freq, gap. Every step is bounded by counts;
    the two time limits are safety caps: a run they changed has `timed_out=True`, and one
    with no audited pattern within max_time and its grace raises TimeLimitError. When
    cancelled, remaining subtables and the clean-up are skipped and the pattern is made
    safe if that fits in CANCEL_GRACE seconds (else Cancelled). A run in which some
    subtable's floors' search ended unproven on SCIP's all-suppressed pattern is run again
    the other way (FLOORS_UNPROVEN_ALL) and keeps the cheaper audited pattern.
    """
    params = ModOptions.of(params)
    first, met = _modular_run(problem, params, progress, cancel, False)
    if not (FLOORS_UNPROVEN_ALL and met) or first.cancelled or first.timed_out:
        return first
    limit = seconds_of(params.max_time)
    again = params if limit is None else replace(params, max_time=max(limit - first.elapsed, 0.0))
    note = "the first search's patterns where a floors' search ended on every cell suppressed"

    def told(event: ProgressEvent) -> None:
        progress(replace(event, message=f"{event.message} (again: {note})"))

    try:
        second, _ = _modular_run(problem, again, told, cancel, True)
    except (Cancelled, TimeLimitError):
        second = None
    elapsed = first.elapsed + (second.elapsed if second is not None else 0.0)
    if second is None or second.cancelled or second.timed_out:
        # cut short by the user (cancel) or the time cap: the first way's audited pattern
        first.cancelled = cancel is not None and cancel.cancelled
        first.timed_out = not first.cancelled
        why = "cancelled" if first.cancelled else "cut by the time limit (a safety cap)"
        first.log.append(f"run again with {note}: {why} before its end; the first kept")
        first.elapsed = elapsed
        return first
    kept, other = (second, first) if second.cost < first.cost else (first, second)
    kept.log.append(
        f"run again with {note}: cost {second.cost:,.2f} against {first.cost:,.2f}; "
        f"kept the {'second' if kept is second else 'first'} (D-111)"
    )
    kept.figures["ways"] = 2
    kept.figures["other_way_cost"] = other.cost
    kept.elapsed = elapsed
    return kept


def _modular_run(
    problem: CSPProblem,
    params: ModOptions,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    first_on_unproven_all: bool,
) -> tuple[ProtectionResult, bool]:
    """One modular run (solve_modular's way `first_on_unproven_all`) and whether some
    floors' search met the case where the other way may be cheaper."""
    watch = Stopwatch()
    if not problem.dims:
        raise MethodError("the modular method needs the table's dimensions (codelists)")

    require_additive(problem)
    full = problem
    problem = _table_part(full)
    if problem is not full and full.floors is not None:
        # the subtables' floors (SUBTABLE_FLOORS): the table cells' columns
        problem.floors = full.floors.padded(full.n_cells).columns(np.arange(problem.n_cells))
    true_prim = problem.primary.copy()
    sup = true_prim | problem.secondary
    subs = subtables(problem.dims or [])
    only = params.subtable_filter
    log: list[str] = []
    n_done = 0
    cancelled = False
    limit = seconds_of(params.max_time)
    limits = _Limits(
        WorkBudget(int(SCIP_LPS if params.scip_lps is None else params.scip_lps)),
        Deadline(limit),
        float(params.max_time_per_subtable),
        first_on_unproven_all=first_on_unproven_all,
    )
    joint_until = -1
    for k, sub in enumerate(subs):
        if cancel is not None and cancel.cancelled:
            cancelled = True
            break
        if limits.run.expired:
            # the run's limit: the whole-table repair below protects what is left
            log.append(f"time limit reached after {n_done} subtables; the rest is repaired")
            break
        if only is not None and not only(sub):
            continue
        if k <= joint_until:
            continue  # solved with its depth
        # a gap the user gives is per subtable: those depths go one by one (the joint search
        # proves each subtable optimal, JOINT_GAP)
        joint = JOINT_DEPTH and only is None and params.gap is None
        end = _depth_end(subs, k) if joint else k
        if end > k:
            # the depth's shares of the branch-and-cut work, together
            share = limits.lps.share(len(subs) - k) * (end - k + 1)
            new = _solve_depth(
                problem, subs[k : end + 1], sup, true_prim, params, cancel, share, limits
            )
            if new is not None:
                sup = new
                n_done += end - k + 1
                joint_until = end
                progress(
                    ProgressEvent(
                        message=f"Modular: subtables {k + 1}–{end + 1} of {len(subs)}",
                        fraction=(end + 1) / len(subs),
                        incumbent=float(np.asarray(problem.cost)[sup & ~true_prim].sum()),
                        elapsed=watch.elapsed,
                    )
                )
                continue
        t_sub = watch.elapsed
        # an equal share of what is left of the branch-and-cut work; unused shares roll on
        share = limits.lps.share(len(subs) - k)
        new = _solve_subtable(
            problem, sub, sup, true_prim, params, cancel, scip_lps=share, limits=limits
        )
        if watch.elapsed - t_sub > 1.0:
            log.append(f"subtable {sub.parents}: {watch.elapsed - t_sub:.1f} s")
        if new is None:
            # backtrack: allow the published margins of this subtable to be suppressed
            new = _solve_subtable(problem, sub, sup, true_prim, params, cancel, True, share, limits)
            if new is None:
                raise MethodError(
                    f"subtable {sub.parents} cannot be protected even with its margins suppressed"
                )
            added_margins = new & ~sup
            added_margins[sub.cells[~sub.margin]] = False
            log.append(f"subtable {sub.parents}: margins suppressed by backtracking")
            sup = new
            # re-protect the earlier subtables in which those margins are interior cells
            for earlier in subs[:k]:
                if added_margins[earlier.cells[~earlier.margin]].any():
                    again = _solve_subtable(
                        problem,
                        earlier,
                        sup,
                        true_prim,
                        params,
                        cancel,
                        scip_lps=share,
                        limits=limits,
                    )
                    if again is not None:
                        sup = again
        else:
            sup = new
        n_done += 1
        progress(
            ProgressEvent(
                message=f"Modular: subtable {k + 1} of {len(subs)}",
                fraction=(k + 1) / len(subs),
                incumbent=float(np.asarray(problem.cost)[sup & ~true_prim].sum()),
                elapsed=watch.elapsed,
            )
        )
    # the full problem: every relation at once, plus virtual singleton cells of the caller
    n_extra = full.n_cells - problem.n_cells
    sup = np.r_[sup, full.primary[problem.n_cells :]] if n_extra else sup
    problem = full
    # after a cancel: CANCEL_GRACE seconds for the repair and the audit, else Cancelled; the
    # run's limit stops the clean-ups (soft) and, with its grace, everything (hard)
    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    soft = DeadlineToken(limits.run, cancel)
    hard = DeadlineToken(limits.run, grace, extra=stop_after(limit))
    polish_cells = int(POLISH_CELLS if params.polish_cells is None else params.polish_cells)
    polish_small = params.polish and not n_extra and problem.n_cells <= polish_cells
    try:
        sup, final, rounds, exact, final_exact, witnesses, work_moves = _finish(
            problem, sup, params, log, progress, soft, hard, defer_intervals=polish_small
        )
    except Cancelled:
        if hard.out_of_time and not (cancel is not None and cancel.cancelled):
            raise TimeLimitError(
                out_of_time(
                    limit,
                    "before the whole table was repaired and audited",
                    advice="give MOD more time",
                )
            ) from None
        raise
    log.insert(0, f"{n_done} subtables solved")
    cancelled = cancelled or (cancel is not None and cancel.cancelled)
    figures: dict[str, Any] = {
        "subtables": len(subs),
        "solved": n_done,
        "repair_rounds": rounds,
    }
    verdict = None
    if params.polish and not n_extra and not cancelled:
        if polish_small:
            # the polish publishes its search's pattern and the modular one, whose repairs
            # often meet the same patterns: each judged once (D-101)
            with remembered_verdicts(problem):
                polished = _polish(
                    problem,
                    sup,
                    final,
                    exact,
                    params,
                    limits,
                    log,
                    progress,
                    soft,
                    final_exact,
                    hard,
                    moves=witnesses,
                    work_moves=work_moves,
                )
        else:
            polished = _publishable(problem, sup, final, exact, log, progress, soft)
        limits.clock |= soft.deadline.hit
        if polished is not None:
            sup, final, verdict = polished
            final_exact = exact  # the publication verdict's audit has the intervals asked for
    result = suppression_result(
        "MOD",
        problem,
        sup,
        final,
        final_exact,
        watch=watch,
        log=log,
        figures=figures | {"scip_lps": limits.lps.used},
        cancelled=cancelled,
        timed_out=bool(limits.clock or limits.run.hit) and not cancelled,
    )
    if verdict is not None:  # the polish ran the publication verdict on this pattern
        result.verdict = verdict
        result.publication_digest = result.audit_digest
    return result, limits.met_unproven_all


# ---------------------------------------------------------------------- registry
DESCRIPTOR = register(
    MethodDescriptor(
        name="MOD",
        kind="suppress",
        label="Modular (HiTaS)",
        help="Hierarchical tables: optimal per subtable, fast on large tables.",
        params=ModParams,
        solve=solve_modular,
        solver_options=_mod_options,
        linked="cover",
        singletons="method",
        order=20,
    )
)
