"""Make a method's pattern publishable: repair what the insider attacker recomputes.

For every primary a respondent recomputes, the cheapest attacker move that shifts it by its
protection level without touching the cells that respondent knows (the path LP of
argusqt/docs/methods.md §4 with those cells fixed) gives the cells to suppress. Suppressing more
never narrows any attacker's interval, so each repair is kept by the next ones; the verdict is then
taken again and the loop ends when it passes.
"""

from __future__ import annotations

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import AuditError, Cancelled, MethodError
from argusqt.model.distinct import sorted_difference
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protection.audit.publication import (
    EXACT_INTERVAL_LIMIT,
    Disclosure,
    PublicationVerdict,
    cell_label,
    publication_audit,
    recheck_after_growth,
)
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import AuditResult
from argusqt.protection.lp.cleanup import Witnesses, find_witness
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.protection.lp.protector import Protector, unit_costs

#: rounds of audit + repair before giving up (each round repairs every disclosure found)
MAX_ROUNDS = 10
#: path LPs `spare` may spend per disclosed (primary, side, respondent), at least
#: SPARE_MIN_LPS: a count, so that a run gives the same pattern every time
SPARE_LPS_PER_PAIR = 10
#: make_publishable spares the repair's redundant cells (False: the greedy repair alone)
SPARE = True
SPARE_MIN_LPS = 1000
#: its witness LPs may use every suppressed cell when there are at most this many
SPARE_FULL_LIMIT = 4000
#: spare proves a cell needed without an LP where it can, solves the pairs that failed before
#: first and skips a witness area within one that had no move (D-105: the same pattern,
#: fewer LPs; False: every pair in order, every area solved)
SPARE_SHORTCUTS = True


@dataclass
class RepairWork:
    """The LPs a make_publishable call solved, so that a caller bounded by counts (OPT's
    guided heuristic, D-102) counts the repair's work as well as its own."""

    audit: int = 0  # the audits' insider and floor attacker LPs
    repair: int = 0  # repair_insiders's path LPs
    spare: int = 0  # spare's witness LPs

    @property
    def total(self) -> int:
        """Every LP of the call: one count for a throttle that compares work, not time."""
        return self.audit + self.repair + self.spare

    def add_verdict(self, verdict: PublicationVerdict, before: int = 0) -> None:
        """A verdict's attacker LPs (`before`: its insider LPs a recheck carried over)."""
        if verdict.insider is not None:
            self.audit += max(0, verdict.insider.n_lps - before)
        if verdict.floor is not None:
            self.audit += verdict.floor.n_lps


def repair_insiders(
    problem: CSPProblem,
    suppressed: np.ndarray,
    verdict: PublicationVerdict,
    cancel: CancelToken | None = None,
    found: list[tuple[np.ndarray, np.ndarray]] | None = None,
    work: RepairWork | None = None,
) -> np.ndarray:
    """`suppressed` plus the cells that protect every insider disclosure of `verdict`.
    Polls `cancel` before each disclosure's path LP (the run's time limit, D-52): Cancelled.
    `found` (a list) receives the moves the repair kept: each leaves the respondent's cells
    at their values, so the recheck's insider audit starts from them (D-64)."""
    sup = np.asarray(suppressed, dtype=bool).copy()
    ctx = MoveContext(problem)
    base_movable = ctx.movable.copy()
    base_lb = ctx.lb.copy()
    # the unit costs once: a disclosure's own only makes its respondent's cells immovable
    unit, delta, eps = unit_costs(ctx)
    values = np.asarray(problem.values, dtype=float)
    for d in verdict.disclosures:
        if d.reason != "insider":
            continue
        if cancel is not None and cancel.cancelled:
            raise Cancelled("insider repair cancelled")
        known = np.asarray(d.known_cells, dtype=np.int64)
        as_respondent(ctx, d, base_movable, base_lb)
        base = unit.copy()
        base[known] = np.inf
        wit = Witnesses()
        prot = Protector(ctx, sup, wit, k_free=2, costs=(base, delta, eps))
        cell = d.cell
        for direction in sides(ctx, d, values):
            if not prot.protect(cell, direction):
                knows = ", ".join(cell_label(problem, int(k)) for k in known[:5])
                name = cell_label(problem, cell)  # "cell 21" where the problem has no codes
                raise MethodError(
                    f"{name if name.startswith('cell ') else 'cell ' + name} cannot be "
                    "protected against the "
                    f"respondent that alone makes up {knows}: no suppression lets it move by "
                    "its protection level without those cells (a level larger than the "
                    "attacker's bounds allow, e.g. with negative contributions); nothing was "
                    "changed"
                )
        if found is not None:
            found.extend(zip(wit.moves, wit.shifts, strict=True))
        if work is not None:
            work.repair += prot.n_lps
    ctx.movable = base_movable
    ctx.lb = base_lb
    return sup


def as_respondent(ctx: MoveContext, d: Disclosure, movable: np.ndarray, lb: np.ndarray) -> None:
    """`ctx` as the attacker of disclosure `d` sees the table: the cells it alone makes up
    fixed, each cell it shares going down only to its contribution (D-91)."""
    ctx.movable = movable.copy()
    ctx.movable[np.asarray(d.known_cells, dtype=np.int64)] = False
    ctx.lb = lb.copy()
    if d.floors:
        fc = np.array([c for c, _ in d.floors], dtype=np.int64)
        fb = np.array([b for _, b in d.floors], dtype=float)
        values = ctx.values[fc]
        ctx.lb[fc] = np.minimum(ctx.lb[fc], np.maximum(values - fb, 0.0))


def sides(ctx: MoveContext, d: Disclosure, values: np.ndarray) -> list[int]:
    """The directions in which disclosure `d` narrows its primary (both when not said)."""
    cell, tol = d.cell, ctx.tol
    directions = []
    if d.upper < values[cell] + ctx.upl[cell] - tol:
        directions.append(UP)
    if d.lower > values[cell] - ctx.lpl[cell] + tol:
        directions.append(DOWN)
    return [k for k in directions or [UP, DOWN] if ctx.required(cell, k) > 0]


def spare(
    problem: CSPProblem,
    before: np.ndarray,
    grown: np.ndarray,
    verdict: PublicationVerdict,
    cancel: CancelToken | None = None,
    max_lps: int | None = None,
    work: RepairWork | None = None,
) -> np.ndarray:
    """`grown` (the repair of `before`, whose verdict was `verdict`) with the added cells it
    can do without published again, costliest first: a cell goes when every disclosed
    (primary, side, respondent) whose move used it finds another move, for that respondent,
    through the cells left (D-91, mod18). Every pattern between the two is a superset of
    `before`, so only those pairs can fail (recheck_after_growth). Bounded by a count of
    path LPs (SPARE_LPS_PER_PAIR per pair, at least SPARE_MIN_LPS), never by the clock."""
    added = np.flatnonzero(grown & ~before)
    ctx = MoveContext(problem)
    pairs = [
        (d, k)
        for d in verdict.disclosures
        if d.reason == "insider"
        for k in sides(ctx, d, ctx.values)
    ]
    if not added.size or not pairs:
        return grown
    movable, lb = ctx.movable.copy(), ctx.lb.copy()
    limit = max_lps if max_lps is not None else max(SPARE_MIN_LPS, SPARE_LPS_PER_PAIR * len(pairs))
    n_lps = 0
    sup = np.asarray(grown, dtype=bool).copy()
    keep = np.asarray(before, dtype=bool)

    # per pair, the areas whose witness LP found no move: an area within one is skipped
    failed: list[list[np.ndarray] | None] = [[] if SPARE_SHORTCUTS else None for _ in pairs]

    def witness(i: int, pattern: np.ndarray) -> set[int] | None:
        nonlocal n_lps
        d, k = pairs[i]
        as_respondent(ctx, d, movable, lb)
        n_lps += 1
        if work is not None:
            work.spare += 1
        try:
            found = find_witness(
                ctx, (d.cell, k), pattern, keep, max_full=SPARE_FULL_LIMIT, failed=failed[i]
            )
        finally:
            ctx.movable, ctx.lb = movable, lb
        return None if found is None else set(found[0].tolist())

    uses: list[set[int]] = []
    for i in range(len(pairs)):
        used = witness(i, sup)
        if used is None:  # the repair's own move is one: only an LP hiccup; keep all
            return grown
        uses.append(used)
    cost = np.asarray(problem.cost, dtype=float)
    stuck = _Stuck(problem, ctx)
    fails = np.zeros(len(pairs), dtype=np.int64)  # each pair's failed witnesses so far
    for c in added[np.argsort(-cost[added], kind="stable")].tolist():
        if cancel is not None and cancel.cancelled:
            raise Cancelled("insider repair cancelled")
        if n_lps >= limit:
            break
        trial = sup.copy()
        trial[c] = False
        todo = [i for i, used in enumerate(uses) if c in used]
        # c stays when one pair has no move left: proven without an LP, else the pairs that
        # failed before first (the same verdict: every pair is solved when all pass, D-105)
        if SPARE_SHORTCUTS:
            if any(stuck(pairs[i][0], trial) for i in todo):
                continue
            todo.sort(key=lambda i: -fails[i])
        new: dict[int, set[int]] = {}
        for i in todo:
            found = witness(i, trial)
            if found is None:
                fails[i] += 1
                break
            new[i] = found
        else:
            sup = trial
            for i, used in new.items():
                uses[i] = used
    return sup


class _Stuck:
    """Whether a disclosed primary has no attacker move through a pattern, seen without an
    LP: one of its relations holds no other suppressed cell its respondent may move."""

    def __init__(self, problem: CSPProblem, ctx: MoveContext):
        self.rel = problem.relations_small.tocsr()
        self.mcsc = ctx.mcsc
        # the respondent's floors only lower a cell's room down: a cell without room stays so
        self.free = ctx.movable & ((ctx.ub > 0) | (ctx.lb > 0))

    def __call__(self, d: Disclosure, pattern: np.ndarray) -> bool:
        cell = d.cell
        known = np.asarray(d.known_cells, dtype=np.int64)
        rel, mcsc = self.rel, self.mcsc
        for r in mcsc.indices[mcsc.indptr[cell] : mcsc.indptr[cell + 1]].tolist():
            cells = rel.indices[rel.indptr[r] : rel.indptr[r + 1]]
            other = cells[(cells != cell) & pattern[cells] & self.free[cells]]
            if not sorted_difference(other, known).size:
                return True
        return False


def make_publishable(
    problem: CSPProblem,
    suppressed: np.ndarray,
    *,
    outsider: AuditResult | None = None,
    intervals: bool | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    moves: list[tuple[np.ndarray, np.ndarray]] | None = None,
    work: RepairWork | None = None,
) -> tuple[np.ndarray, PublicationVerdict, int]:
    """(pattern, its passing verdict, cells added) — insider disclosures repaired.

    An outsider failure is the method's defect and raises AuditError; so does a pattern
    still failing after MAX_ROUNDS. `moves`: attacker moves the method found through
    `suppressed` (checked by the insider audit; they hold in every grown pattern too).
    Raises Cancelled when cancelled. `work` (if given) receives the LPs it solved.
    """
    sup = np.asarray(suppressed, dtype=bool).copy()
    start = int(sup.sum())
    verdict = publication_audit(
        problem,
        sup,
        outsider=outsider,
        intervals=intervals,
        progress=progress,
        cancel=cancel,
        moves=moves,
    )
    if work is not None:
        work.add_verdict(verdict)
    spared_ok = SPARE
    for _ in range(MAX_ROUNDS):
        if verdict.ok:
            return sup, verdict, int(sup.sum()) - start
        if not verdict.outsider.ok:
            raise AuditError(verdict.summary())
        n = len(verdict.disclosures)
        progress(ProgressEvent(message=f"Protecting {n} cells against respondents (insiders)"))
        repaired: list[tuple[np.ndarray, np.ndarray]] = []
        grown = repair_insiders(problem, sup, verdict, cancel, found=repaired, work=work)
        if spared_ok:
            # the added cells another added cell made redundant: published again
            grown = spare(problem, sup, grown, verdict, cancel, work=work)
        # the repair's moves are attacker moves of the grown pattern that avoid the
        # respondents they were found for: the next audit checks them and starts from them
        before = verdict.insider.moves if verdict.insider is not None else []
        moves = distinct_moves((moves or []) + before + repaired)
        if _exact_intervals(grown, intervals):
            # the full verdict again; the floor attack starts from the points it found
            seeds = verdict.floor.points if verdict.floor is not None else None
            verdict = publication_audit(
                problem,
                grown,
                intervals=intervals,
                progress=progress,
                cancel=cancel,
                moves=moves,
                floor_seeds=seeds,
            )
            if work is not None:
                work.add_verdict(verdict)
        else:
            # more suppression never helps an attacker that failed: recheck what failed
            carried = verdict.insider.n_lps if verdict.insider is not None else 0
            verdict = recheck_after_growth(
                problem, sup, grown, verdict, progress=progress, cancel=cancel, moves=moves
            )
            if work is not None:
                work.add_verdict(verdict, carried)
        # a spared pattern the verdict finds short (an LP's tolerance): repair it, and
        # spare nothing more, so that the rounds cannot undo each other
        spared_ok = spared_ok and verdict.ok
        sup = grown
    if verdict.ok:
        return sup, verdict, int(sup.sum()) - start
    raise AuditError(verdict.summary())


def _exact_intervals(suppressed: np.ndarray, intervals: bool | None) -> bool:
    """Whether the verdict must carry exact outsider intervals (publication_audit's rule)."""
    if intervals is None:
        return int(suppressed.sum()) <= EXACT_INTERVAL_LIMIT
    return bool(intervals)


def distinct_moves(
    moves: list[tuple[np.ndarray, np.ndarray]],
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each move once, first occurrence first: the rounds hand on the earlier rounds' moves,
    which the recheck returns again, and every copy would be checked again."""
    seen: set[tuple[bytes, bytes]] = set()
    out = []
    for cells, d in moves:
        key = (np.asarray(cells).tobytes(), np.asarray(d).tobytes())
        if key not in seen:
            seen.add(key)
            out.append((cells, d))
    return out
