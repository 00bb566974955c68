"""Modular (HiTaS) suppression for hierarchical tables (argusqt/docs/methods.md §6).

The table is cut into non-hierarchical subtables (one parent node per dimension), solved
top-down with the optimal method, margins fixed, inherited secondaries protected with 10 %
levels; then the full table is audited and repaired until every primary passes, because
subtable-wise protection can leak over the full relation set.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from argusqt.errors import AuditError, Cancelled, MethodError, TimeLimitError
from argusqt.model.codelist import CodeList
from argusqt.model.status import Status
from argusqt.model.table import build_relations
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.audit.outsider import EXACT_AUDIT_LIMIT, audit, pattern_digest
from argusqt.protection.audit.publication import CANCEL_GRACE, PublicationVerdict
from argusqt.protection.core.budget import (
    Deadline,
    DeadlineToken,
    WorkBudget,
    out_of_time,
    seconds_param,
    stop_after,
)
from argusqt.protection.core.params import MethodParams, TableFacts, minutes_param, param
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import AuditResult, ProtectionResult, grouped
from argusqt.protection.lp.cleanup import Witnesses, cleanup, find_witness
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.protection.lp.protector import Protector, primary_order, protect_all
from argusqt.protection.lp.separation import Separator, default_fixed, require_additive
from argusqt.protection.suppress.branch_and_cut import _insider_check, solve_pattern
from argusqt.protection.suppress.modular_publish import publish as publish_cheaply
from argusqt.protection.suppress.optimal import singleton_options, with_singleton_cells
from argusqt.protection.suppress.singleton import singleton_param, singleton_solver_options

#: HiTaS LOWERMARG 0.9 / UPPERMARG 1.1: protection of inherited secondaries
INHERITED_SHARE = 0.10
#: repair rounds of the full-table audit before giving up
MAX_REPAIR_ROUNDS = 50
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

    def subtable_deadline(self) -> Deadline:
        return Deadline(min(self.per_subtable, self.run.remaining))


@dataclass
class Subtable:
    """One parent node per dimension; `cells` global ids in local row-major order."""

    parents: tuple[int, ...]
    depth: int
    cells: np.ndarray
    shape: tuple[int, ...]
    #: local cells that are fixed margins (some coordinate is a non-root parent)
    margin: np.ndarray


def subtables(dims: list[CodeList]) -> list[Subtable]:
    """All subtables in top-down order (increasing total depth of the parent vector)."""
    shape = tuple(len(d) for d in dims)
    out = []
    for combo in itertools.product(*[d.parents for d in dims]):
        nodes = [[p, *dims[k].children[p]] for k, p in enumerate(combo)]
        local_shape = tuple(len(n) for n in nodes)
        grids = np.meshgrid(*[np.asarray(n) for n in nodes], indexing="ij")
        cells = np.ravel_multi_index(tuple(g.ravel() for g in grids), shape)
        lgrids = np.meshgrid(*[np.arange(len(n)) for n in nodes], indexing="ij")
        margin = np.zeros(cells.size, dtype=bool)
        for k, p in enumerate(combo):
            if dims[k].parent[p] >= 0:  # non-root parent: its position is a fixed margin
                margin |= lgrids[k].ravel() == 0
        depth = int(sum(int(dims[k].depth[p]) for k, p in enumerate(combo)))
        out.append(Subtable(tuple(combo), depth, cells, local_shape, margin))
    out.sort(key=lambda s: s.depth)
    return out


def _local_relations(shape: tuple[int, ...]) -> sp.csr_matrix:
    """Relations of a non-hierarchical table with margins at position 0 of every dimension."""
    # CodeList.flat sorts codes by bytes: zero-padded codes keep positions 1..n-1 in order
    flat = [CodeList.flat(f"d{k}", [f"{i:06d}" for i in range(1, n)]) for k, n in enumerate(shape)]
    return build_relations(flat)


def _subproblem(
    problem: CSPProblem, sub: Subtable, sup: np.ndarray, true_prim: np.ndarray
) -> tuple[CSPProblem, np.ndarray, np.ndarray]:
    """Local CSP of a subtable, its `fixed` vector and the local true-primary mask."""
    c = sub.cells
    values = problem.values[c]
    lower = problem.lower[c].copy()
    upper = problem.upper[c].copy()
    status = problem.status[c].copy()
    lpl = np.where(true_prim[c], problem.lpl[c], 0.0)
    upl = np.where(true_prim[c], problem.upl[c], 0.0)
    was_sup = sup[c]
    inherited = was_sup & ~true_prim[c]
    share = INHERITED_SHARE * np.abs(values)
    lpl = np.where(inherited, np.minimum(share, values - lower), lpl)
    upl = np.where(inherited, np.minimum(share, upper - values), upl)
    status = np.where(inherited, Status.UNSAFE_MANUAL, status).astype(problem.status.dtype)
    fixed = np.full(c.size, np.nan)
    cand = problem.candidate[c] & ~was_sup
    fixed[~cand] = 0.0
    fixed[was_sup] = 1.0
    fixed[sub.margin & ~was_sup] = 0.0  # published margins stay published
    rel = _local_relations(sub.shape)
    local = CSPProblem(
        values=values,
        lower=lower,
        upper=upper,
        cost=np.asarray(problem.cost, dtype=float)[c],
        status=status,
        lpl=lpl,
        upl=upl,
        relations=rel,
        rhs=np.zeros(rel.shape[0]),
        spl=np.zeros(c.size),
        decimals=problem.decimals,
        freq=None if problem.freq is None else np.asarray(problem.freq)[c],
    )
    return local, fixed, true_prim[c]


def _solve_subtable(
    problem: CSPProblem,
    sub: Subtable,
    sup: np.ndarray,
    true_prim: np.ndarray,
    params: dict,
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
        per = float(params.get("max_time_per_subtable", 60.0))
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
    params: dict,
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
    if deadline.remaining <= 0.05:
        deadline.hit = True  # the clock, not the work budget, skips the branch-and-cut
    elif lps is None or lps > 0:
        out = solve_pattern(
            work,
            fixed,
            max_time=deadline.remaining,
            max_lps=lps,
            gap=float(params.get("gap", SUBTABLE_GAP)),
            start=start,
            cancel=cancel,
            heuristics=str(params.get("scip_heuristics", SUBTABLE_HEURISTICS)),
        )
        limits.lps.spend(out.lps)
        limits.clock |= out.timed_out
        if out.infeasible:
            return None
        if out.mask is not None:
            mask = out.mask
    if mask is None:
        if not Separator(work, fixed).is_protected(start.astype(float)):
            return None
        mask = start
    new = sup.copy()
    new[sub.cells] |= mask[: sub.cells.size]
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


def repair(
    problem: CSPProblem,
    sup: np.ndarray,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
) -> tuple[np.ndarray, int]:
    """Audit the full table; protect every failing primary with an LP step
    (argusqt/docs/methods.md §4); repeat.

    Returns the repaired mask and the number of repair rounds. Raises MethodError when a
    primary cannot be protected at all, Cancelled when `cancel` fires during an audit.
    """

    sup = sup.copy()
    rounds = 0
    for rounds in range(1, MAX_REPAIR_ROUNDS + 1):
        res = audit(problem, sup, intervals=False, cancel=cancel)
        fails = res.failures
        if fails.size == 0:
            return sup, rounds - 1
        progress(ProgressEvent(message=f"Modular: repairing {fails.size} under-protected cells"))
        for p in fails:
            tol = problem.tolerance
            if res.upper[p] < problem.values[p] + problem.upl[p] - tol:
                sup |= _heuristic_step(problem, sup, int(p), +1)
            if res.lower[p] > problem.values[p] - problem.lpl[p] + tol:
                sup |= _heuristic_step(problem, sup, int(p), -1)
    raise MethodError(f"modular repair did not converge in {MAX_REPAIR_ROUNDS} rounds")


def _heuristic_step(
    problem: CSPProblem,
    sup: np.ndarray,
    p: int,
    direction: int,
    movable: np.ndarray | None = None,
) -> np.ndarray:
    """Cheapest cells whose joint move lets primary p reach its protection level (the LP of
    argusqt/docs/methods.md §4).

    `movable`: cells that may move (default: suppressed cells and candidates).
    """
    n = problem.n_cells
    a = problem.values
    lb = np.maximum(a - problem.lower, 0.0)
    ub = np.maximum(problem.upper - a, 0.0)
    movable = sup | problem.candidate if movable is None else movable
    w = np.where(sup, 0.0, np.asarray(problem.cost, dtype=float) + 1e-6)
    pl = problem.upl[p] if direction > 0 else problem.lpl[p]
    pl = pl + problem.tolerance
    up_hi = np.where(movable, ub, 0.0)
    dn_hi = np.where(movable, lb, 0.0)
    if direction > 0:
        bounds_up = (up_hi.copy(), dn_hi.copy())
        bounds_up[0][p] = min(pl, ub[p])
        lo_up = np.zeros(n)
        lo_up[p] = min(pl, ub[p])
        lo_dn = np.zeros(n)
        bounds_up[1][p] = 0.0
    else:
        bounds_up = (up_hi.copy(), dn_hi.copy())
        bounds_up[1][p] = min(pl, lb[p])
        lo_dn = np.zeros(n)
        lo_dn[p] = min(pl, lb[p])
        lo_up = np.zeros(n)
        bounds_up[0][p] = 0.0
    from scipy.optimize import linprog  # here: scipy.optimize costs a batch run ~0.3 s to import

    m = sp.csr_matrix(problem.relations)
    a_eq = sp.hstack([m, -m]).tocsr()
    bounds = np.c_[np.r_[lo_up, lo_dn], np.r_[bounds_up[0], bounds_up[1]]]
    res = linprog(  # type: ignore[call-overload]  # scipy-stubs: no overload takes csr A_eq
        np.r_[w, w], A_eq=a_eq, b_eq=np.zeros(m.shape[0]), bounds=bounds, method="highs"
    )
    if res.status != 0:
        raise MethodError(
            f"cell {p} cannot be protected: no combination of suppressible cells lets it move "
            "by its protection level (bounds or protection level too large)"
        )
    z = res.x[:n] + res.x[n:]
    return (z > 1e-7) & movable


def _table_part(problem: CSPProblem) -> CSPProblem:
    """The table cells only: callers may append virtual singleton cells after them."""
    n = math.prod(len(d) for d in problem.dims or [])
    if n == problem.n_cells:
        return problem
    if n > problem.n_cells:
        raise MethodError("the problem has fewer cells than its dimensions span")
    rel = sp.csr_matrix(problem.relations)
    touches_virtual = np.asarray((abs(rel[:, n:]) > 0).sum(axis=1)).ravel() > 0
    keep = np.flatnonzero(~touches_virtual)
    return CSPProblem(
        values=problem.values[:n],
        lower=problem.lower[:n],
        upper=problem.upper[:n],
        cost=np.asarray(problem.cost)[:n],
        status=problem.status[:n],
        lpl=problem.lpl[:n],
        upl=problem.upl[:n],
        relations=rel[keep][:, :n].tocsr(),
        rhs=np.asarray(problem.rhs)[keep],
        spl=None if problem.spl is None else problem.spl[:n],
        decimals=problem.decimals,
        dims=problem.dims,
        freq=None if problem.freq is None else np.asarray(problem.freq)[:n],
        names=list(problem.names[:n]),
    )


def _finish(
    problem: CSPProblem,
    sup: np.ndarray,
    params: dict,
    log: list[str],
    progress: ProgressCallback,
    cancel: CancelToken | None,
    grace: CancelToken | None,
) -> tuple[np.ndarray, AuditResult, int, bool]:
    """The full table after the subtables: certify, repair, clean up, audit of record.

    Every (primary, direction) gets a witness — an attacker move through suppressed cells
    (argusqt/docs/methods.md §4) — or, where the subtables left it short, a path LP that
    adds the cheapest cells: one pass repairs what subtable-wise protection leaks over the
    full relation set. The clean-up then publishes the secondaries the whole table does
    not need. Up to WHOLE_TABLE_REPAIR cells the repair and clean-up are done twice, the
    LPs pricing movement and pricing cells (_PerCell), and the cheaper pattern is kept. The
    audit (with the witnesses as hints) decides; a primary it still finds short is repaired
    again rather than the pattern refused. Singleton options are kept as
    virtual cells throughout. Returns (pattern, audit, repair rounds, exact intervals).
    """

    n = problem.n_cells
    ss, sm, mf = singleton_options(params)
    work = with_singleton_cells(problem, singleton_singleton=ss, singleton_multiple=sm, min_freq=mf)
    sup_w = np.r_[sup, np.ones(work.n_cells - n, dtype=bool)]
    ctx = MoveContext(work)
    progress(ProgressEvent(message="Modular: checking every primary over the whole table"))
    whole = work.n_cells <= int(params.get("whole_table_repair", WHOLE_TABLE_REPAIR))
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
        if params.get("cleanup", True) and not (cancel is not None and cancel.cancelled):
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
    mode = params.get("audit_intervals", "auto")
    exact = bool(mode) if mode != "auto" else int(sup_w[:n].sum()) <= EXACT_AUDIT_LIMIT
    if cancel is not None and cancel.cancelled:
        exact = False
    rounds = 0
    while True:
        hints = _table_hints(wit, n)
        final = audit(problem, sup_w[:n], intervals=exact, hints=hints, cancel=grace)
        if final.ok:
            return sup_w[:n].copy(), final, rounds, exact
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
    params: dict,
    limits: _Limits,
    log: list[str],
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> tuple[np.ndarray, AuditResult, PublicationVerdict] | None:
    """A small table's cost-aware last step: the modular pattern made publishable (insider
    repair), then the branch-and-cut on the whole table from it, with the insider attacker
    inside the proof as OPT has it, within POLISH_LPS attacker LPs (params "polish_lps")
    and what is left of the run's time limit; the cheaper publishable pattern is kept.

    Returns (pattern, outsider audit, verdict), or None when cancelled before a pattern was
    publishable (run_method then audits the modular pattern under the cancel grace).
    """

    n = problem.n_cells
    best = None
    lines = []

    def publish(what: str, pattern: np.ndarray, outsider: AuditResult | None) -> bool:
        nonlocal best
        try:
            done = publish_cheaply(
                problem, pattern, outsider=outsider, intervals=exact, cancel=cancel
            )
            fixed, verdict, added = done.pattern, done.verdict, done.added
        except (AuditError, MethodError) as err:
            lines.append(f"{what}: not publishable ({err})")
            return True
        except Cancelled:
            return False  # keep what is published already; else run_method audits it
        total = _cost_of(problem, fixed)
        lines.append(
            f"{what} {grouped(_cost_of(problem, pattern))}, {added} cells for insiders: "
            f"{grouped(total)}"
        )
        if best is None or total < best[0]:
            best = (total, what, fixed, verdict)
        return True

    room = limits.run.remaining > POLISH_MIN
    if not room:
        limits.clock = True  # the time limit, not the work, skips the branch-and-cut
    if publish("modular", sup, audited) and best is not None and room:
        ss, sm, mf = singleton_options(params)
        work = with_singleton_cells(
            problem, singleton_singleton=ss, singleton_multiple=sm, min_freq=mf
        )
        start = np.r_[best[2], np.ones(work.n_cells - n, dtype=bool)]
        progress(ProgressEvent(message="Modular: the branch-and-cut on the whole table"))
        out = solve_pattern(
            work,
            default_fixed(work),
            max_time=min(limits.run.remaining, 1e9),
            max_lps=int(params.get("polish_lps", POLISH_LPS)),
            gap=0.0,
            start=start,
            cancel=cancel,
            heuristics=str(params.get("scip_heuristics", SUBTABLE_HEURISTICS)),
            insiders=_insider_check(problem),
        )
        limits.clock |= out.timed_out
        if out.mask is not None and not np.array_equal(out.mask[:n], best[2]):
            if not (cancel is not None and cancel.cancelled):
                publish("whole-table branch-and-cut", out.mask[:n].copy(), None)
    if best is None:
        return None
    log.append("whole table: " + "; ".join(lines) + f" — kept the {best[1]} pattern")
    return best[2], best[3].outsider, best[3]


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


def solve_modular(
    problem: CSPProblem,
    params: dict | None = None,
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
    safe if that fits in CANCEL_GRACE seconds (else Cancelled).
    """
    params = dict(params or {})
    watch = Stopwatch()
    if not problem.dims:
        raise MethodError("the modular method needs the table's dimensions (codelists)")

    require_additive(problem)
    full = problem
    problem = _table_part(full)
    true_prim = problem.primary.copy()
    sup = true_prim | problem.secondary
    subs = subtables(problem.dims or [])
    only = params.get("subtable_filter")
    log: list[str] = []
    n_done = 0
    cancelled = False
    limit = seconds_param(params, "max_time")
    limits = _Limits(
        WorkBudget(int(params.get("scip_lps", SCIP_LPS))),
        Deadline(limit),
        float(params.get("max_time_per_subtable", 60.0)),
    )
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
    try:
        sup, final, rounds, exact = _finish(problem, sup, params, log, progress, soft, hard)
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
        "audit_digest": pattern_digest(problem, sup),
        "audit_exact": exact,
    }
    verdict = None
    polish_cells = int(params.get("polish_cells", POLISH_CELLS))
    if params.get("polish", False) and not n_extra and not cancelled:
        if problem.n_cells <= polish_cells:
            polished = _polish(problem, sup, final, exact, params, limits, log, progress, soft)
        else:
            polished = _publishable(problem, sup, final, exact, log, progress, soft)
        limits.clock |= soft.deadline.hit
        if polished is not None:
            sup, final, verdict = polished
            digest = pattern_digest(problem, sup)
            figures |= {"audit_digest": digest, "publication_digest": digest}
    status, cost = problem.pattern_statuses(sup)
    return ProtectionResult(
        method="MOD",
        status=status,
        cost=cost,
        cancelled=cancelled,
        timed_out=bool(limits.clock or limits.run.hit) and not cancelled,
        elapsed=watch.elapsed,
        audit=final,
        verdict=verdict,
        log=log,
        figures=figures | {"scip_lps": limits.lps.used},
    )


# ---------------------------------------------------------------------- registry
_NO_EFFECT = "argusqt's subtable models need no cost scaling or margins (no effect)"


@dataclass(frozen=True, kw_only=True)
class ModParams(MethodParams):
    """`MOD(t, maxMinPerSubtable, singSing, singMult, minFreq[, maxScaleCost, lowerMarg,
    upperMarg])`; the last three (later τ-Argus versions) are accepted without effect."""

    METHOD: ClassVar[str] = "MOD"
    max_minutes: float = minutes_param(
        1,
        position=1,
        batch="maxMinPerSubtable",
        label="Maximum time per subtable",
        help="Caps each subtable and the whole run (a safety cap: the work is bounded by "
        "counts; a run the cap cuts short says so).",
    )
    singleton_singleton: bool = singleton_param("SS", extension=False)
    singleton_multiple: bool = singleton_param("SM", extension=False)
    min_freq_option: bool = singleton_param("MF", extension=False)
    max_scale_cost: float = param(
        20000.0,
        position=5,
        batch="maxScaleCost",
        label="Maximum scaled cost",
        minimum=0,
        exclusive_minimum=True,
        extension=True,
        no_effect=_NO_EFFECT,
    )
    lower_margin: float = param(
        0.0,
        position=6,
        batch="lowerMarg",
        label="Lower margin",
        minimum=0,
        extension=True,
        no_effect=_NO_EFFECT,
    )
    upper_margin: float = param(
        0.0,
        position=7,
        batch="upperMarg",
        label="Upper margin",
        minimum=0,
        extension=True,
        no_effect=_NO_EFFECT,
    )


#: the whole run's cap in units of the per-subtable minutes: every method's time limit is the
#: run's (issue 22), so τ-Argus's per-subtable minutes cap the whole run too. 1.0 makes
#: `MOD(1,1)` a one-minute run; beside six CPU hogs on 2 cores the sample table's MOD then
#: needs more and says "the time limit decided" (benchmarks/README.md, issue 22)
RUN_LIMIT_FACTOR = 1.0


def _mod_options(p: ModParams, facts: TableFacts) -> dict[str, Any]:
    return {
        "max_time_per_subtable": 60.0 * p.max_minutes,
        "max_time": RUN_LIMIT_FACTOR * 60.0 * p.max_minutes,
        "polish": True,
        **singleton_solver_options(p, facts),
    }


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
