"""Insiders who share cells: each knows every cell it is in is at least its contribution.

With non-negative data a respondent that contributes x to a suppressed cell knows that
cell is at least x (docs/design.md, D-91); a cell it alone makes up it knows exactly. It
must not narrow any primary it is not the largest contributor of; its bound on the attacked
primary itself is not used (the rule's level is built for that). Two steps per component:
the coalition (every cell at least its largest contribution, every lone cell fixed) is
stronger than any one respondent, so a side it cannot narrow is safe for all; the sides
it narrows are attacked respondent by respondent, by group tests (a group's bounds at once
pass all its members; a failing group is halved), each attacker point found, moved back
toward the values, reused as a witness for the respondents it fits (D-91, mod18).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    import highspy
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.errors import AuditError, Cancelled
from argusqt.model.distinct import sorted_distinct
from argusqt.model.smallcsr import concat_ranges
from argusqt.progress import CancelToken
from argusqt.protection.audit.floor_decide import Decider
from argusqt.protection.audit.floor_gather import Columns, attacker_block, barred_of
from argusqt.protection.audit.floor_local import local_point
from argusqt.protection.audit.floor_memo import FloorMemo
from argusqt.protection.audit.outsider import LOCAL_MIN_CELLS, _LocalAttacker
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import Floors
from argusqt.protection.lp.components import (
    DOWN,
    UP,
    Component,
    RowBlock,
    make_highs,
    solve,
    solve_cold,
    use_primal,
    variable_components,
)
from argusqt.protection.lp.separation import exact_rhs

Key = tuple[int, int]  # (primary cell, direction)

#: the benchmarks' profile hook, called with (phase, figures) now and then; None in a run
TRACE: Callable[[str, dict], None] | None = None

#: attacker points kept per (primary, side) for the next audit, and values kept at most
POINTS_PER_SIDE = 8
POINTS_LIMIT = 4_000_000


@dataclass(frozen=True)
class FloorDisclosure:
    """Primary `cell` narrowed on side `direction` by attacker `row` of the Floors."""

    cell: int
    direction: int
    row: int
    reach: float  # the attacker's extreme value of the cell on that side
    known: tuple[int, ...]  # cells it alone makes up (known exactly)
    floors: tuple[tuple[int, float], ...]  # (cell, lower bound) it knows besides


@dataclass
class FloorOutcome:
    disclosures: list[FloorDisclosure] = field(default_factory=list)
    n_lps: int = 0
    pairs_left: int = 0  # (primary, side) pairs the coalition did not settle
    attackers: int = 0
    #: per (primary, side) attacker points that reach its level, as (cells, rows of
    #: their values): the next audit of a grown pattern checks them before its LPs
    points: dict[Key, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    seeds_used: int = 0  # LPs spared by checked points of an earlier audit
    #: LPs per phase (coalition, neighbourhood, respondents): the benchmarks' profile
    lp_counts: dict[str, int] = field(default_factory=dict)
    _kept: int = 0  # values kept in `points`
    #: the Floors' note: why they are weaker or stronger than exact (said in the verdict)
    note: str = ""

    def keep(self, key: Key, cells: np.ndarray, rows: np.ndarray) -> None:
        """Keep a side's points for the next audit: the last POINTS_PER_SIDE, while the
        kept values stay under POINTS_LIMIT (a big table's memory; a count, not a clock)."""
        rows = rows[-POINTS_PER_SIDE:]
        if self._kept + rows.size > POINTS_LIMIT:
            return
        self._kept += rows.size
        self.points[key] = (cells, rows.copy())

    def count(self, phase: str, n: int) -> None:
        self.lp_counts[phase] = self.lp_counts.get(phase, 0) + n

    @property
    def failed(self) -> list[Key]:
        return sorted({(d.cell, d.direction) for d in self.disclosures})


def floor_audit(
    problem: CSPProblem,
    suppressed: np.ndarray,
    floors: Floors,
    *,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    only: list[Key] | None = None,
    cancel: CancelToken | None = None,
    seeds: dict[Key, tuple[np.ndarray, np.ndarray]] | None = None,
    memo: FloorMemo | None = None,
    shortcuts: bool = True,
) -> FloorOutcome:
    """Every (primary, side) some respondent narrows with its lower bounds; `only`: just
    these pairs (a grown pattern: every other pair passed before and still passes).
    `seeds`: an earlier audit's `points`, each checked against this pattern (relations,
    bounds, level) before it stands for an LP: checked, never trusted (mod18). `memo`: the
    components met in earlier audits of this problem and floors (floor_memo, D-101)."""
    if memo is not None and not memo.serves(problem, floors):
        memo = None
    values = np.asarray(problem.values, dtype=float)
    sup = np.asarray(suppressed, dtype=bool)
    if lower is not None and upper is not None:
        lo = np.minimum(np.asarray(lower, dtype=float), values)
        hi = np.maximum(np.asarray(upper, dtype=float), values)
        sup = hi > lo
    else:
        lo = np.where(sup, problem.lower, values).astype(float)
        hi = np.where(sup, problem.upper, values).astype(float)
    out = FloorOutcome(note=floors.note)
    fl = floors.padded(problem.n_cells)
    amount = fl.amount.tocsr()
    prim = problem.primary & sup
    lpl = np.where(prim, problem.lpl, 0.0)
    upl = np.where(prim, problem.upl, 0.0)
    # a bound counts where it is above the attacker's own bound of a suppressed positive cell
    coo = amount.tocoo()
    bound = np.minimum(coo.data, values[coo.col])
    alone = fl.alone[coo.col]
    bites = sup[coo.col] & (values[coo.col] > 0) & ((bound > lo[coo.col]) | alone)
    row, col, bound, alone = coo.row[bites], coo.col[bites], bound[bites], alone[bites]
    if not row.size or not prim.any():
        return out
    # by columns: each component gathers its attackers' entries (floor_gather, D-101)
    eff = Columns(sp.csc_matrix((bound, (row, col)), shape=amount.shape))
    fixed = Columns(sp.csc_matrix((alone.astype(float), (row, col)), shape=amount.shape))
    barred = barred_of(fl)  # its own primaries only: exempt, other tables' cells (D-91)
    out.attackers = int(sorted_distinct(row).size)
    coal_lo = lo.copy()
    np.maximum.at(coal_lo, col, bound)
    coal_fixed = np.zeros(problem.n_cells, dtype=bool)
    coal_fixed[col[alone]] = True
    coal_hi = np.where(coal_fixed, values, hi)
    coal_lo = np.where(coal_fixed, values, coal_lo)
    rel = problem.relations.tocsr()
    exact, not_additive = exact_rhs(problem)
    miss = np.where(not_additive, exact - rel @ values, 0.0)
    tol = problem.tolerance
    wanted = None if only is None else set(only)
    near = None  # the neighbourhood attacker over the coalition's bounds, built at first use
    for comp in variable_components(rel, sup):
        cells = comp.cells
        targets = [
            (int(c), d)
            for c in cells[prim[cells]].tolist()
            for d in (UP, DOWN)
            if (upl[c] if d == UP else lpl[c]) > 0 and (wanted is None or (int(c), d) in wanted)
        ]
        if not targets or not np.any(coal_lo[cells] > lo[cells]) and not coal_fixed[cells].any():
            continue
        key = None if memo is None else memo.key(cells, (lo, hi, coal_lo, coal_hi), targets)
        if key is not None and memo is not None and memo.replay(key, out):
            continue
        mark = (len(out.disclosures), out.pairs_left)
        lp = _Lp(rel, comp, values, lo, hi, miss)
        need = {(c, d): values[c] + (upl[c] if d == UP else -lpl[c]) for c, d in targets}
        # the coalition: every bound at once; its own bound off when a primary goes down
        lp.set_bounds(cells, coal_lo[cells], coal_hi[cells])
        left: list[Key] = []
        given = _checked_seeds(seeds, targets, lp, need, tol)
        coal_dec = None  # the coalition's targets decided from the values (D-109)
        if shortcuts and DECIDE and cells.size >= _decide_min() and lp.additive:
            coal_dec = Decider(lp.matrix(), lp.miss)
        run = None
        if shortcuts:
            run = _Running(out, lp, coal_lo, coal_hi, tol, targets, need)
            if cells.size >= LOCAL_MIN_CELLS and lp.additive:
                if near is None:
                    near = _near(problem, rel, coal_lo, coal_hi)
                run.near = near
        for t, (c, d) in enumerate(targets):
            _check(cancel)
            if TRACE is not None and t % 200 == 0:
                TRACE("coalition", {"cells": cells.size, "target": t, "of": len(targets),
                      "left": len(left), "lps": lp.n_lps, "retried": lp.n_retries,
                      "near": 0 if run is None else run.n_lps,
                      "by points": 0 if run is None else run.settled_by_points})  # fmt: skip
            if run is not None and run.settled(c, d):
                continue
            mine = given.get((c, d))
            if mine is not None and _coalition_fits(mine, lp, c, d, coal_lo, coal_hi, lo, hi):
                out.seeds_used += 1
                out.keep((c, d), cells, mine)
                continue
            if run is not None and coal_fixed[c]:
                # a cell the coalition knows exactly stays at its value in its LP (either
                # side: its bound is not freed): that LP's answer, without the LP
                run.done((c, d))
                if _reaches(values[c], need[(c, d)], d, tol):
                    out.keep((c, d), cells, values[cells][None, :])
                else:
                    left.append((c, d))
                continue
            if run is not None and run.try_near(c, d):
                continue
            if run is not None and coal_dec is not None:
                verdict, point = _coalition_decide(out, coal_dec, lp, c, d, need[(c, d)], tol,
                                                   (coal_lo, coal_hi), (lo, hi))  # fmt: skip
                if verdict != "unknown":
                    run.done((c, d))
                    if verdict == "none":
                        left.append((c, d))
                    elif point is not None:  # a running point too, for the later targets (D-100)
                        run.add(point)
                    continue
            if d == DOWN and not coal_fixed[c]:
                lp.set_bounds(np.array([c]), lo[[c]], hi[[c]])
            reach, x = lp.extreme(c, d)
            if d == DOWN:
                lp.set_bounds(np.array([c]), coal_lo[[c]], coal_hi[[c]])
            if not _reaches(reach, need[(c, d)], d, tol):
                left.append((c, d))
            elif x is not None:  # a point of every respondent's attacker
                point = x[cells]
                if lp.additive:
                    point = _toward_values(point, values[cells], int(lp.pos[c]), need[(c, d)])
                out.keep((c, d), cells, point[None, :])
            if run is not None:
                run.done((c, d))
                if x is not None:
                    run.add(x[cells])
        out.count("coalition", lp.n_lps)
        if coal_dec is not None:
            out.count("coalition decisions", coal_dec.n_lps)
            out.count("local decisions", coal_dec.n_local)  # of those: neighbourhoods (D-112)
            out.n_lps += coal_dec.n_lps
        out.pairs_left += len(left)
        if left:
            before = lp.n_lps
            _respondents(
                out, lp, left, need, eff, fixed, barred, lo, hi, values, tol, cancel, given,
                shortcuts, (coal_lo, coal_hi),
            )  # fmt: skip
            out.count("respondents", lp.n_lps - before)
        out.count("retried", lp.n_retries)
        if run is not None:
            out.count("neighbourhood", run.n_lps)
            out.count("settled by points", run.settled_by_points)
            out.count("settled scaled", run.settled_scaled)
            out.n_lps += run.n_lps
        out.n_lps += lp.n_lps
        if key is not None and memo is not None:
            memo.store(key, out, mark, targets)
    return out


def _near(problem, rel, coal_lo, coal_hi) -> _LocalAttacker:
    """The outsider audit's neighbourhood LPs over the coalition's bounds (the small sets
    only): a point there keeps the other cells at their values, inside the coalition."""
    att = _LocalAttacker(problem, rel, coal_hi > coal_lo, coal_lo.copy(), coal_hi.copy())
    att.quick = True
    return att


class _Running:
    """The coalition's running points of one component (D-100): every coalition LP point
    is feasible for every target (a DOWN target only frees its own cell's lower bound), so
    a checked point that reaches a later target's level settles it without its LP, as the
    outsider audit's run_lo/run_hi; the point is kept for it, moved toward the values."""

    def __init__(self, out, lp, coal_lo, coal_hi, tol, targets, need):
        cells = lp.cells
        self.out, self.lp, self.tol = out, lp, tol
        self.c_lo, self.c_hi = coal_lo[cells], coal_hi[cells]
        self.index = {key: k for k, key in enumerate(targets)}
        self.pos = np.array([lp.pos[c] for c, _ in targets], dtype=np.int64)
        self.up = np.array([d == UP for _, d in targets], dtype=bool)
        self.need = np.array([need[key] for key in targets], dtype=float)
        self.targets = targets
        self.closed = np.zeros(len(targets), dtype=bool)  # done or settled
        self.near: _LocalAttacker | None = None
        self.n_lps = 0
        self.settled_by_points = 0
        self.settled_scaled = 0  # of those, by a scaled or reflected point (D-120)
        #: the neighbourhood LPs' running bounds, which this class keeps itself (unused)
        self._scratch = np.zeros((2, lp.values.size))

    def settled(self, c: int, d: int) -> bool:
        return bool(self.closed[self.index[(c, d)]])

    def done(self, key: Key) -> None:
        self.closed[self.index[key]] = True

    def add(self, x: np.ndarray) -> None:
        """Check a point of the component (coalition bounds, relations) and settle every
        open target it reaches; a point that fails the check settles nothing."""
        if not self.lp.admits(x, self.tol, self.c_lo, self.c_hi):
            return
        v = x[self.pos]
        hit = ~self.closed & np.where(self.up, v >= self.need - self.tol, v <= self.need + self.tol)
        for k in np.flatnonzero(hit).tolist():
            point = x
            if self.lp.additive:
                point = _toward_values(x, self.lp.base, int(self.pos[k]), float(self.need[k]))
            self.out.keep(self.targets[k], self.lp.cells, point[None, :])
            self.closed[k] = True
            self.settled_by_points += 1
        if SCALED_OFFERS and self.lp.additive:
            self._scaled(x, v)

    def _scaled(self, x: np.ndarray, v: np.ndarray) -> None:
        """The open targets x's move reaches once scaled by some t > 1 or t < 0 that keeps
        it in the coalition's bounds: each such point checked, kept and settling (D-120)."""
        base = self.lp.base
        span = v - base[self.pos]
        open_ = ~self.closed & (span != 0)
        if not open_.any():
            return
        fwd, bwd = _caps(base, x, self.c_lo, self.c_hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (self.need - base[self.pos]) / span
        fine = open_ & np.isfinite(t) & (((t > 1) & (t <= fwd)) | ((t < 0) & (-t <= bwd)))
        for k in np.flatnonzero(fine).tolist():
            point = base + t[k] * (x - base)
            if not self.lp.admits(point, self.tol, self.c_lo, self.c_hi):
                continue
            self.out.keep(self.targets[k], self.lp.cells, point[None, :])
            self.closed[k] = True
            self.settled_by_points += 1
            self.settled_scaled += 1

    def try_near(self, c: int, d: int) -> bool:
        """Neighbourhood LPs around c first (big blocks): a subset of the coalition's feasible
        set, so a point they find reaches what it reaches for the whole coalition."""
        if self.near is None or not self.near.var[c]:  # fixed for the coalition
            return False
        self.near.seen = self._seen
        run_lo, run_hi = self._scratch
        self.n_lps += self.near.improve(c, run_lo, run_hi, self._near_settled)
        self.near.seen = None
        return self.settled(c, d)

    def _near_settled(self, cell: int, sense: float) -> bool:
        key = (cell, DOWN if sense > 0 else UP)
        k = self.index.get(key)
        return k is None or bool(self.closed[k])

    def _seen(self, cells: np.ndarray, y: np.ndarray) -> None:
        x = self.lp.base.copy()
        x[self.lp.pos[cells]] = y
        self.add(x)


def _respondents(
    out, lp, left, need, eff, fixed, barred, lo, hi, values, tol, cancel, given, shortcuts, coal
) -> None:
    """The pairs the coalition narrows, attacked per respondent in their component by
    group tests: a group's bounds together (each cell at its members' largest bound) are
    stronger than any member's, so a group that reaches the level passes every member;
    one that does not is halved until the members that narrow are alone (D-91, mod18).
    Members a kept attacker point already fits need no LP; a failed LP's duals prove
    members (or a half) short of the level without theirs (`_Proof`, D-106). On big
    additive blocks each group is first decided from the values (`floor_decide`, D-109)."""
    cells = lp.cells
    lp.set_bounds(cells, lo[cells], hi[cells])
    att = _Attackers(lp, eff, fixed, barred, hi, values)
    found: list[tuple[int, int, FloorDisclosure]] = []
    pool = _Pool(lp) if shortcuts else None
    anchored = shortcuts and cells.size >= ANCHOR_MIN_CELLS
    decided_block = shortcuts and DECIDE and cells.size >= _decide_min() and lp.additive
    decider = Decider(lp.matrix(), lp.miss) if decided_block else None
    for k, key in enumerate(left):
        c, d = key
        j = int(lp.pos[c])
        if TRACE is not None and k % 50 == 0:
            TRACE("respondents", {"cells": cells.size, "pair": k, "of": len(left),
                  "lps": lp.n_lps, "retried": lp.n_retries, "found": len(found)})  # fmt: skip
        points = _Points(att, j)
        for x in given.get(key, ()):
            points.add(x)
        members = att.members(j)
        if pool is not None:
            pool.offer(points, members, j, need[key], d, tol)
        verdict = "unknown"
        parts = None  # a 'none' group's split by its infeasibility proof (D-115)
        if decider is not None and not points.fitted[members].all():
            # the first group decided from the values before the anchor (D-109): the
            # members no offered point fits (weaker bounds than all of them, D-120)
            open_ = members[~points.fitted[members]]
            verdict, parts = _decide(out, decider, lp, att, points, pool, open_, key,
                                     need[key], tol, (lo, hi))  # fmt: skip
        # the anchor (D-103) for its proof and basis, unless the decision found the first
        # group short: its halves are decided too, no LP from that basis follows (D-109)
        marked = anchored and verdict != "none" and not points.fitted[members].all()
        first = None
        if marked:
            first = _anchor(lp, points, members, pool, key, need[key], values, tol, coal, lo, hi)
        stack: list[tuple[np.ndarray, object, _Proof | None]] = [(members, None, first)]
        decided = members[~points.fitted[members]] if verdict == "none" else None
        found_before = len(found)
        while stack:
            group, start, proof = stack.pop()
            group = group[~points.fitted[group]]
            if not group.size:
                continue
            _check(cancel)
            if proof is not None:
                # the parent's optimum proves some alone narrow, or the whole group: no LP
                group = proof.settle(group, found, k, stack)
                if not group.size:
                    continue
                if group.size > 1 and proof.narrows(group):
                    stack += proof.split(group, start)
                    continue
            if decider is not None and len(found) < found_before + DECIDE_DISCLOSURES:
                # a group that reaches the level by the decision's checked point needs no LP;
                # one HiGHS finds short is halved without its LP, a single member takes its
                # own LP from the values too (its reach); D-109
                if decided is None or not np.array_equal(group, decided):
                    verdict, parts = _decide(out, decider, lp, att, points, pool, group, key,
                                             need[key], tol, (lo, hi))  # fmt: skip
                decided = None
                group = group[~points.fitted[group]]
                if not group.size:
                    continue
                if verdict == "none" and group.size > 1:
                    stack += _halves(group, start, proof, parts, points)
                    continue
                if verdict == "none":  # a single member: its LP's reach, from the values too
                    reach = _member_reach(decider, lp, att, points, pool, group, key, need[key],
                                          tol, (lo, hi))  # fmt: skip
                    if reach is not None:
                        found.append((int(att.row[group[0]]), k,
                                      att.disclosure(int(group[0]), c, d, reach)))  # fmt: skip
                        continue
                    if points.fitted[group[0]]:
                        continue
            if proof is not None and verdict != "none":
                if anchored and proof.moves is not None:
                    # the LP around where this group differs from the failed one (D-106)
                    out.count("local", _local(lp, att, points, pool, group, key, need[key],
                                              tol, (lo, hi), proof))  # fmt: skip
                    group = group[~points.fitted[group]]
                    if not group.size:
                        continue
            verdict = "unknown"
            gc, glo, ghi = att.together(group, j, lo, hi)
            lp.set_bounds(gc, glo, ghi)
            if marked:
                reach, x = lp.from_mark(c, d, strict=group.size == 1, basis=start)
            else:
                reach, x = lp.extreme(c, d, strict=group.size == 1)
            proof = None
            if shortcuts and x is not None and group.size > 1:
                if not _reaches(reach, need[key], d, tol):  # its duals, before the bounds go
                    proof = _Proof(lp, att, key, need[key], tol, reach)
                    if anchored:
                        proof.hold(lp, x, gc, glo, ghi)
            lp.set_bounds(gc, lo[gc], hi[gc])
            if x is not None and pool is not None:
                pool.add(x[cells])
            if x is not None and _reaches(reach, need[key], d, tol):
                point = x[cells]
                if lp.additive:  # the values are a point of the LP too
                    point = _toward_values(point, values[cells], j, need[key])
                points.add(point)
                continue
            if group.size > 1:
                # a half's LP starts from its parent's optimum (the same objective)
                start = lp.h.getBasis() if marked and x is not None else None
                if proof is not None:  # who narrows alone: the duals say (D-106)
                    stack += proof.split(proof.settle(group, found, k, stack), start)
                else:
                    half = group.size // 2
                    stack += [(group[half:], start, None), (group[:half], start, None)]
                continue
            found.append((int(att.row[group[0]]), k, att.disclosure(int(group[0]), c, d, reach)))
        if points.n:
            out.keep(key, cells, points.rows[: points.n])
    if decider is not None:
        out.n_lps += decider.n_lps
        out.count("local decisions", decider.n_local)
    # in the order of the attackers' rows, as the repair takes them
    out.disclosures += [d for _, _, d in sorted(found, key=lambda f: (f[0], f[1]))]


#: blocks of at least this many cells start each group LP from the coalition's optimum
ANCHOR_MIN_CELLS = 2000

#: on those blocks (additive), each group first decided from the values (floor_decide, D-109)
DECIDE = True
#: blocks of at least this many cells are decided (D-109: the anchored ones; D-112: b97768
#: spent 47 % of its samples in the plain group LPs of blocks under 2,000 cells)
DECIDE_MIN_CELLS = 200

#: a pair's disclosures after which its groups go the plain way: many members that narrow
#: are settled cheaper by the failed group LPs' proofs (D-106) than halved by decisions
DECIDE_DISCLOSURES = 8


def _decide_min() -> int:
    """The smallest block decided: anchored blocks always are (D-109)."""
    return min(DECIDE_MIN_CELLS, ANCHOR_MIN_CELLS)


def _coalition_decide(
    out, decider, lp, c, d, need, tol, coalition, table
) -> tuple[str, np.ndarray | None]:
    """A coalition target decided from the values instead of its LP (D-109): 'found' once
    the point, checked against the coalition's bounds (the primary's own off when it goes
    down) and the block's relations, is kept for it; 'none' (unchecked) sends the pair to
    the respondents, whose groups then decide it, as after a coalition LP short of the
    level; 'unknown': the coalition's LP. With the point over the block's cells."""
    cells = lp.cells
    j = int(lp.pos[c])
    c_lo, c_hi = coalition[0][cells].copy(), coalition[1][cells].copy()
    if d == DOWN:
        c_lo[j], c_hi[j] = table[0][c], table[1][c]
    v = lp.base
    verdict, moves = decider.point(c_lo - v, c_hi - v, j, d, need - v[j])
    if moves is None:
        return verdict, None
    point = v + moves
    if not _reaches(float(point[j]), need, d, tol) or not lp.admits(point, tol, c_lo, c_hi):
        return "unknown", None
    out.keep((c, d), cells, _toward_values(point, v, j, need)[None, :])
    return "found", point


def _halves(group: np.ndarray, start, proof: _Proof | None, parts=None, points=None) -> list:
    """The two halves of a group found short, in the stack's order (the proof's split; or
    `parts`, its decision's split by the infeasibility proof, when both keep open members)."""
    if proof is not None:
        return proof.split(group, start)
    if parts is not None and points is not None:
        a, b = (p[~points.fitted[p]] for p in parts)
        if a.size and b.size:
            return [(b, start, None), (a, start, None)]
    half = group.size // 2
    return [(group[half:], start, None), (group[:half], start, None)]


def _member_reach(decider, lp, att, points, pool, group, key, need, tol, table) -> float | None:
    """A single member's LP (its bounds, the primary's own off) by `Decider.extreme`: its
    reach when short of the level; else None, with the optimum as a checked point when it
    reaches (the member fitted) or nothing (HiGHS gave no optimum: the block's LP follows)."""
    c, d = key
    j = int(lp.pos[c])
    g_lo, g_hi = _group_bounds(lp, att, group, j, table)
    v = lp.base
    moves = decider.extreme(g_lo - v, g_hi - v, j, d, need - v[j])
    if moves is None:
        return None
    reach = float(v[j] + moves[j])
    if not _reaches(reach, need, d, tol):
        return reach
    point = v + moves
    if lp.admits(point, tol, g_lo, g_hi):
        _keep(lp, points, pool, point, j, need)
    return None


def _decide(
    out, decider, lp, att, points, pool, group, key, need, tol, table
) -> tuple[str, list[np.ndarray] | None]:
    """Whether the group's LP reaches the level, by `Decider` (D-109): 'found' once its
    point, checked against the group's bounds and the block's relations, is added (it
    fits every member); 'none' when HiGHS finds no such point (unchecked: it only routes
    the group to splitting, every disclosure still comes from an LP or a proof), with the
    split its proof suggests (D-115) or None (halves); else 'unknown' (the plain way)."""
    c, d = key
    j = int(lp.pos[c])
    g_lo, g_hi = _group_bounds(lp, att, group, j, table)
    v = lp.base
    out.count("decision", 1)
    verdict, moves = decider.point(g_lo - v, g_hi - v, j, d, need - v[j])
    if moves is None:
        parts = None
        if verdict == "none" and SPLIT_BY_PROOF and group.size > 1:
            used = decider.proof_bounds()
            if used is not None:
                parts = _proof_split(att, group, j, lp, g_lo, g_hi, used)
        return verdict, parts
    point = v + moves
    if not _reaches(float(point[j]), need, d, tol) or not lp.admits(point, tol, g_lo, g_hi):
        return "unknown", None
    _keep(lp, points, pool, point, j, need)
    return "found", None


#: a group a decision finds short is split by the bounds its infeasibility proof uses (D-115)
SPLIT_BY_PROOF = True


def _proof_split(att, group, j, lp, g_lo, g_hi, used) -> list[np.ndarray] | None:
    """The group in two, the members whose bounds the proof uses (the binding floor or
    ceiling of a cell it needs) spread over both: a routing choice only, like the halves
    (every member still ends fitted by a checked point or alone with its own reach)."""
    low, high = used
    low[j] = high[j] = False  # the primary's own bound is off in every group
    e = att.at_cells(np.flatnonzero(low | high))  # the entries on the cells the proof uses
    member = np.zeros(att.n, dtype=bool)
    member[group] = True
    e = e[member[att.ent_row[e]]]
    col, e_lo, e_hi = att.ent_col[e], att.ent_lo[e], att.ent_hi[e]
    slack = 1e-9 * (1.0 + np.abs(e_lo))
    binds = (low[col] & (e_lo >= g_lo[col] - slack) & (e_lo > lp.lo[col])) | (
        high[col] & (e_hi <= g_hi[col] + slack) & (e_hi < lp.hi[col])
    )
    mask = np.zeros(att.n, dtype=bool)
    mask[att.ent_row[e[binds]]] = True
    culprit = mask[group]
    u, r = group[culprit], group[~culprit]
    if not u.size or not r.size and u.size == 1:
        return None
    if u.size == 1:
        return [u, r]
    hu, hr = (u.size + 1) // 2, r.size // 2
    return [np.sort(np.concatenate([u[:hu], r[:hr]])), np.sort(np.concatenate([u[hu:], r[hr:]]))]


def _group_bounds(lp, att, group, j: int, table) -> tuple[np.ndarray, np.ndarray]:
    """The block's bounds with the group's (its members' floors together, the primary's
    own off): the LP a decision stands for."""
    gc, glo, ghi = att.together(group, j, *table)
    g_lo, g_hi = lp.lo.copy(), lp.hi.copy()
    g_lo[lp.pos[gc]], g_hi[lp.pos[gc]] = glo, ghi
    return g_lo, g_hi


def _keep(lp, points, pool, point: np.ndarray, j: int, need: float) -> None:
    """A checked point of a group's LP: into the block's pool as it is, and for the pair's
    members moved toward the values (an additive block's convexity keeps it a point)."""
    if pool is not None:
        pool.add(point)
    points.add(_toward_values(point, lp.base, j, need) if lp.additive else point)


def _anchor(lp, points, members, pool, key, need, values, tol, coalition, lo, hi) -> _Proof | None:
    """The pair's LP at the coalition's bounds with the primary's own off (a restriction of
    every group's LP), its basis marked: the group LPs start there by dual simplex (D-103).
    A point of it that reaches the level, checked, stands for every member it fits; one
    short of it gives its duals' bound for the first group (D-106)."""
    c, d = key
    cells = lp.cells
    j = int(lp.pos[c])
    c_lo, c_hi = coalition[0][cells].copy(), coalition[1][cells].copy()
    c_lo[j], c_hi[j] = lo[c], hi[c]
    lp.set_bounds(cells, c_lo, c_hi)
    reach, x = lp.anchor(c, d)
    proof = None
    if x is not None and not _reaches(reach, need, d, tol):
        proof = _Proof(lp, points.att, key, need, tol, reach)  # its duals, before the bounds go
        proof.moves, proof.held = x[cells] - lp.base, (c_lo, c_hi)
    lp.set_bounds(cells, lo[cells], hi[cells])
    if x is None or not _reaches(reach, need, d, tol):
        return proof
    point = x[cells]
    if not lp.admits(point, tol):  # the table's bounds, the block's relations
        return None
    if pool is not None:
        pool.add(point)
    if lp.additive:
        point = _toward_values(point, values[cells], j, need)
    points.add(point, only_new=members)
    return None


def _local(lp, att, points, pool, group, key, need, tol, table, proof) -> int:
    """Before a group's LP: the LP restricted around the cells where it differs from the
    failed LP of `proof` (the anchor or its parent; floor_local, D-106); its point, checked
    against the group's bounds and the block's relations, stands for every member it fits.
    LPs run: 1."""
    c, d = key
    j = int(lp.pos[c])
    gc, glo, ghi = att.together(group, j, *table)
    g_lo, g_hi = lp.lo.copy(), lp.hi.copy()
    g_lo[lp.pos[gc]], g_hi[lp.pos[gc]] = glo, ghi
    tighter = (proof.held[0] > g_lo) | (proof.held[1] < g_hi)
    tighter[j] = False  # its own bound is off in both
    point = local_point(lp.matrix(), lp.miss, lp.base, (g_lo, g_hi),
                        (proof.moves, proof.red, tighter), j, d)  # fmt: skip
    if point is None or not _reaches(float(point[j]), need, d, tol):
        return 1
    if not lp.admits(point, tol, g_lo, g_hi):  # the group's bounds, the block's relations
        return 1
    if pool is not None:
        pool.add(point)
    if lp.additive:
        point = _toward_values(point, lp.base, j, need)
    points.add(point)
    return 1


class _Attackers:
    """The respondents with a bound in one component, as entries (attacker, local cell,
    lo, hi), the strongest first (most cells, largest shares): halving keeps like with
    like, and the strong ones' points fit the weak."""

    def __init__(self, lp, eff, fixed, barred, hi, values) -> None:
        cells = lp.cells
        m = cells.size
        rows, indptr, ent_col, data = attacker_block(eff, cells)
        n = rows.size
        ent_row = np.repeat(np.arange(n), np.diff(indptr))
        v = values[cells[ent_col]]
        # which entries the attacker makes up alone, from the fixed matrix's own entries
        # (its nonzeros over the block by row then cell, as `entries` orders them): the
        # rows × cells array this was read from is not built (D-120)
        ent_fixed = fixed.marks(cells, rows[ent_row] * m + ent_col)
        ent_lo = np.where(ent_fixed, v, data)
        ent_hi = np.where(ent_fixed, v, hi[cells[ent_col]])
        size = np.diff(indptr)
        share = np.bincount(ent_row, weights=data / np.maximum(v, 1e-300), minlength=n)
        order = np.lexsort((rows, -share, -size))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        self.row = rows[order]
        self.size = size[order]
        self.ent_row = rank[ent_row]
        self.ent_col, self.ent_lo, self.ent_hi, self.ent_fixed = ent_col, ent_lo, ent_hi, ent_fixed
        # each attacker's entries by its rank: a group's entries gathered, not masked (D-112)
        self.ent_start, self.ent_size = indptr[:-1][order], size[order]
        self.cells = cells
        self.n = n
        self.m = m
        # for `mine`: a cell's column of the barred and fixed matrices, over the rows ascending
        self._rows, self._order, self._barred, self._fixed = rows, order, barred, fixed
        self._count = (-1, 0)  # (j, how many members) of the last `members` call
        #: the last whole group's `together`: (j, lo, hi, group, answer)
        self._whole: tuple[int, np.ndarray, np.ndarray, np.ndarray, tuple] | None = None
        self._by_col: tuple[np.ndarray, np.ndarray] | None = None  # entries by cell

    def mine(self, j: int) -> np.ndarray:
        """Per attacker (by rank) whether local cell j is barred to it or made up by it alone:
        column j of `barred(rows, cells) | fixed.dense(rows, cells)`, gathered alone."""
        one = self.cells[[j]]
        col = self._barred(self._rows, one)[:, 0] | self._fixed.dense(self._rows, one)[:, 0]
        return col[self._order]

    def members(self, j: int) -> np.ndarray:
        """The attackers of local cell j: not their own share, some other cell bounded."""
        in_j = np.zeros(self.n, dtype=bool)
        in_j[self.ent_row[self.ent_col == j]] = True
        out = np.flatnonzero(~self.mine(j) & (self.size - in_j > 0))
        self._count = (j, int(out.size))
        return out

    def at_cells(self, local: np.ndarray) -> np.ndarray:
        """The entries on the block's cells `local` (an index by cell, built at first use)."""
        if self._by_col is None:
            order = np.argsort(self.ent_col, kind="stable")
            start = np.searchsorted(self.ent_col[order], np.arange(self.m + 1))
            self._by_col = (order, start)
        order, start = self._by_col
        return order[concat_ranges(start[local], start[local + 1] - start[local])]

    def entries(self, group: np.ndarray) -> np.ndarray:
        """Which entries belong to the attackers of `group` (a mask over the entries)."""
        mask = np.zeros(self.n, dtype=bool)
        mask[group] = True
        return mask[self.ent_row]

    def together(self, group: np.ndarray, j: int, lo: np.ndarray, hi: np.ndarray):
        """The bounds of a group at once (each cell at its members' strongest), j's own off;
        as (cells, lo, hi) over the table. The group's entries gathered by their attackers'
        ranges and reduced per cell over the block (the same maxima and minima as before).
        The last whole group's answer is kept: a primary's other side asks it again (D-120)."""
        last = self._whole
        if (
            last is not None
            and last[0] == j
            and last[1] is lo
            and last[2] is hi
            and np.array_equal(last[3], group)
        ):
            return last[4]
        out = self._together(group, j, lo, hi)
        if group.size == self.n_members(j):  # every member of j: the pair's first group
            self._whole = (j, lo, hi, group.copy(), out)
        return out

    def n_members(self, j: int) -> int:
        """How many attackers `members(j)` gives (kept for the last j asked)."""
        return self._count[1] if self._count[0] == j else -1

    def _together(self, group: np.ndarray, j: int, lo: np.ndarray, hi: np.ndarray):
        size = self.ent_size[group]
        total = int(size.sum())
        first = np.repeat(self.ent_start[group] - (np.cumsum(size) - size), size)
        e = first + np.arange(total)
        e = e[self.ent_col[e] != j]
        col = self.ent_col[e]
        here = np.zeros(self.m, dtype=bool)
        here[col] = True
        local = np.flatnonzero(here)  # sorted_distinct(col), without a sort
        best_lo = np.full(self.m, -np.inf)
        best_hi = np.full(self.m, np.inf)
        np.maximum.at(best_lo, col, self.ent_lo[e])
        np.minimum.at(best_hi, col, self.ent_hi[e])
        gc = self.cells[local]
        new_lo = np.maximum(lo[gc], best_lo[local])
        new_hi = np.minimum(hi[gc], best_hi[local])
        return gc, new_lo, np.maximum(new_hi, new_lo)

    def disclosure(self, a: int, c: int, d: int, reach: float) -> FloorDisclosure:
        e = (self.ent_row == a) & (self.cells[self.ent_col] != c)
        oc = self.cells[self.ent_col[e]]
        of = self.ent_fixed[e]
        ob = self.ent_lo[e]
        return FloorDisclosure(
            c, d, int(self.row[a]), reach,
            tuple(int(k) for k in oc[of].tolist()),
            tuple((int(k), float(b)) for k, b in zip(oc[~of], ob[~of], strict=True)),
        )  # fmt: skip


class _Proof:
    """A bound from a failed group LP's optimum, by weak duality (D-106): for the row duals
    y and d = c − Aᵀy, every LP of the block with bounds l ≤ δ ≤ u has min cᵀδ ≥ yᵀb +
    Σ min(d l, d u). With a member's bounds (or a subgroup's) in place of the group's, a
    bound past the level proves that it narrows alone (or as a group) without its LP."""

    def __init__(
        self, lp: _Lp, att: _Attackers, key: Key, need: float, tol: float, reach: float
    ) -> None:
        c, d = key
        self.lp_reach = reach  # the failed LP's: no member alone is short of it
        j = int(lp.pos[c])
        y = np.fromiter(lp.h.getSolution().row_dual, dtype=np.float64, count=lp.miss.size)
        cost = np.zeros(lp.cells.size)
        cost[j] = -1.0 if d == UP else 1.0
        red = cost - lp.matrix().T @ y
        self.red = red  # the reduced costs at that optimum (floor_local, D-106)
        #: that LP's point (moves) and bounds over the block's cells, for `_local`
        self.moves: np.ndarray | None = None
        self.held: tuple[np.ndarray, np.ndarray] = (lp.lo, lp.hi)
        v = lp.base
        term = _least(red, np.minimum(lp.lo - v, 0.0), np.maximum(lp.hi - v, 0.0))
        base = float(y @ lp.miss) + float(term.sum())
        # rounding of the sums: a margin far above their float error (≈ n·10⁻¹⁶ of the terms)
        self.margin = 1e-9 * (1.0 + float(np.abs(y) @ np.abs(lp.miss)) + float(np.abs(term).sum()))
        #: an unbounded side of a cell with a nonzero d: no finite bound, nothing proven
        self.valid = bool(np.isfinite(base) and np.isfinite(self.margin))
        # each entry's gain over the table's bound on its cell, j's own bound off as in `together`
        col = att.ent_col
        e_lo = np.minimum(np.maximum(lp.lo[col], att.ent_lo) - v[col], 0.0)
        e_hi = np.maximum(np.maximum(np.minimum(lp.hi[col], att.ent_hi) - v[col], e_lo), 0.0)
        gain = np.zeros(col.size)
        if self.valid:  # every table term finite: so is every gain
            gain = _least(red[col], e_lo, e_hi) - term[col]
            gain[col == j] = 0.0
            self.margin += 1e-9 * float(np.abs(gain).sum())
        self.gain = np.maximum(gain, 0.0)  # a tighter bound never lowers the term (float: 0)
        self.base, self.sign, self.v, self.need, self.tol = base, cost[j], float(v[j]), need, tol
        self.key, self.att = key, att

    def hold(self, lp: _Lp, x: np.ndarray, gc: np.ndarray, glo: np.ndarray, ghi: np.ndarray):
        """Keep the failed LP's point and bounds (its group's on `gc`) for `_local`."""
        self.moves = x[lp.cells] - lp.base
        h_lo, h_hi = lp.lo.copy(), lp.hi.copy()
        h_lo[lp.pos[gc]], h_hi[lp.pos[gc]] = glo, ghi
        self.held = (h_lo, h_hi)

    def reach(self, bound: Any) -> Any:
        """The cell's extreme no LP with min cᵀδ ≥ `bound` passes (the margin included);
        elementwise for an array of bounds."""
        if self.sign < 0:  # up: −δ_j ≥ bound
            return self.v - bound + self.margin
        return self.v + bound - self.margin

    def _sums(self, group: np.ndarray) -> np.ndarray:
        e = self.att.entries(group)
        return np.bincount(self.att.ent_row[e], weights=self.gain[e], minlength=self.att.n)

    def settle(self, group: np.ndarray, found: list, k: int, stack: list) -> np.ndarray:
        """The members of `group` proven to narrow alone: at the LP's reach into `found`
        when their bound's reach is as far (theirs lies between the two), else each to
        `stack` alone for its own LP (its exact reach); the rest are returned."""
        c, d = self.key
        if not self.valid:
            return group
        sums = self._sums(group)[group]
        reach = self.reach(self.base + sums)
        ok = ~(reach >= self.need - self.tol if d == UP else reach <= self.need + self.tol)
        tight = ok & (np.abs(reach - self.lp_reach) <= REACH_SLACK * (1.0 + abs(self.lp_reach)))
        for a in group[tight].tolist():
            found.append((int(self.att.row[a]), k, self.att.disclosure(a, c, d, self.lp_reach)))
        stack += [(group[[i]], None, None) for i in np.flatnonzero(ok & ~tight)[::-1].tolist()]
        return group[~ok]

    def narrows(self, group: np.ndarray) -> bool:
        """Whether the bound proves the group's LP (its bounds together) short of the level."""
        if not self.valid:
            return False
        e = self.att.entries(group)
        best = np.zeros(self.att.m)
        np.maximum.at(best, self.att.ent_col[e], self.gain[e])
        return not _reaches(
            self.reach(self.base + float(best.sum())), self.need, self.key[1], self.tol
        )

    def split(self, group: np.ndarray, start) -> list[tuple[np.ndarray, object, _Proof]]:
        """Halves, each to be proven short by this bound or tested by its LP (the stack's
        order). Splitting off the members whose bounds tighten the bound cost more
        iterations than halving on b31808 (D-106)."""
        if not group.size:
            return []
        half = group.size // 2
        return [(group[half:], start, self), (group[:half], start, self)]


#: a member proven short (D-106) takes the LP's reach when its bound's is this near
REACH_SLACK = 1e-9


def _least(d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min(d·l, d·u) over l ≤ δ ≤ u for each column: d·l, d·u or 0 (no 0·∞)."""
    with np.errstate(invalid="ignore"):
        return np.where(d > 0, d * lo, np.where(d < 0, d * hi, 0.0))


class _Points:
    """Which attackers one of the kept points of a (primary, side) fits: a point in an
    attacker's bounds (its cells but the primary's) is a point of its LP too."""

    def __init__(self, att: _Attackers, j: int) -> None:
        self.att = att
        self.keep = att.ent_col != j
        self.slack = 1e-9 * (1 + np.abs(att.ent_lo))
        self.fitted = np.zeros(att.n, dtype=bool)
        self.rows = np.zeros((0, att.m))
        self.n = 0

    def add(self, x: np.ndarray, only_new: np.ndarray | None = None) -> None:
        """Mark the attackers x fits; `only_new`: keep x only if it fits one of these the
        points so far did not (a pool point that adds nothing is not kept)."""
        a = self.att
        v = x[a.ent_col]
        bad = self.keep & ((v < a.ent_lo - self.slack) | (v > a.ent_hi + self.slack))
        fits = np.bincount(a.ent_row[bad], minlength=a.n) == 0
        if only_new is not None and not np.any(fits[only_new] & ~self.fitted[only_new]):
            return
        self.rows = np.vstack([self.rows[: self.n], x[None, :]])
        self.n += 1
        self.fitted |= fits


#: the respondents' LP points of a component kept for its later pairs (a count: memory)
POOL_SIZE = 256


class _Pool:
    """The respondents' LP points of one component (D-100): a point of a group's LP is in
    the table's bounds and relations and in each member's bounds, so for a later pair it
    stands for every attacker whose bounds (but on that primary) it fits, if it reaches the
    level there. The last POOL_SIZE points, newest first. On an additive block a point's
    move times any t keeps the relations, so it is offered scaled to just the level, or
    reflected (the primary's other side), while it stays in the table's bounds (D-120)."""

    def __init__(self, lp: _Lp) -> None:
        m = lp.cells.size
        self.lp = lp
        self.rows = np.zeros((POOL_SIZE, m))
        #: per point the largest t ≥ 0 (row 0) and −t ≤ 0 (row 1) keeping
        #: base + t·(x − base) in the table's bounds
        self.cap = np.zeros((2, POOL_SIZE))
        self.n = 0  # points added so far; row n % POOL_SIZE is the next

    def add(self, x: np.ndarray) -> None:
        i = self.n % POOL_SIZE
        self.rows[i] = x
        self.cap[:, i] = _scale_caps(self.lp, x) if SCALED_OFFERS and self.lp.additive else 0.0
        self.n += 1

    def offer(self, points: _Points, members: np.ndarray, j: int, need, d, tol) -> None:
        """Give `points` the kept points that reach the level at j and fit a member it
        has no point for yet; with SCALED_OFFERS each moved to just the level (toward the
        values, past its reach or to the other side, in the table's bounds, checked)."""
        k = min(self.n, POOL_SIZE)
        if not k or not members.size:
            return
        order = (self.n - 1 - np.arange(k)) % POOL_SIZE  # newest first
        v = self.rows[order, j]
        ok = v >= need - tol if d == UP else v <= need + tol
        if not SCALED_OFFERS or not self.lp.additive:
            for i in order[ok].tolist():
                if points.fitted[members].all():
                    return
                points.add(self.rows[i], only_new=members)
            return
        base = self.lp.base
        span = v - base[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (need - base[j]) / span
        t = np.where(ok, np.minimum(t, 1.0), t)
        room = np.where(t > 0, self.cap[0, order], self.cap[1, order])
        fine = (span != 0) & np.isfinite(t) & (ok | (np.abs(t) <= room))
        for i, ti in zip(order[fine].tolist(), t[fine].tolist(), strict=True):
            if points.fitted[members].all():
                return
            x = base + ti * (self.rows[i] - base)
            if (ti > 1.0 or ti < 0.0) and not self.lp.admits(x, tol):
                continue
            points.add(x, only_new=members)


#: pool points scaled (or reflected) to the level before a pair's first decision (D-120)
SCALED_OFFERS = True


def _scale_caps(lp: _Lp, x: np.ndarray) -> tuple[float, float]:
    """The largest t ≥ 0 and s ≥ 0 with base ± (t, s)·(x − base) in the block's table bounds."""
    return _caps(lp.base, x, lp.lo, lp.hi)


def _caps(base: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
    """The largest t ≥ 0 and s ≥ 0 with base + t·(x − base) and base − s·(x − base) in
    [lo, hi] (each ∋ base)."""
    step = x - base
    up, down = step > 0, step < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        to_hi = (hi[up] - base[up]) / step[up]
        to_lo = (lo[down] - base[down]) / step[down]
        back_lo = (base[up] - lo[up]) / step[up]
        back_hi = (base[down] - hi[down]) / step[down]
    fwd = min(to_hi.min(initial=np.inf), to_lo.min(initial=np.inf))
    bwd = min(back_lo.min(initial=np.inf), back_hi.min(initial=np.inf))
    return fwd, bwd


def _toward_values(x: np.ndarray, v: np.ndarray, j: int, need: float) -> np.ndarray:
    """The attacker point `x` moved back toward the true values `v` until cell j is just at
    `need`: still feasible (a convex combination of two feasible points), and every cell is
    between its value and x's, so it satisfies every lower bound x does and more (each
    bound is at most the cell's value): a witness for more respondents."""
    span = x[j] - v[j]
    t = 1.0 if span == 0 else min(1.0, max(0.0, (need - v[j]) / span))
    return v + t * (x - v)


def _checked_seeds(seeds, targets, lp, need, tol):
    """Per target the earlier audit's points that are attacker points here too (over the
    component's cells, rows): they move only this component's cells, keep its relations
    within the tolerance, stay in this pattern's bounds and reach the level."""
    out: dict[Key, np.ndarray] = {}
    if not seeds:
        return out
    cells = lp.cells
    values = lp.values
    for c, d in targets:
        seed = seeds.get((c, d))
        if seed is None:
            continue
        s_cells, rows = seed
        inside = lp.pos[s_cells] >= 0
        moved = np.abs(rows - values[s_cells]) > 1e-9 * (1 + np.abs(values[s_cells]))
        rows = rows[~np.any(moved[:, ~inside], axis=1)]
        if not rows.shape[0]:
            continue
        x = np.tile(values[cells], (rows.shape[0], 1))
        x[:, lp.pos[s_cells[inside]]] = rows[:, inside]
        ok = lp.admits(x, tol)
        j = int(lp.pos[c])
        ok &= np.array([_reaches(float(v), need[(c, d)], d, tol) for v in x[:, j]], dtype=bool)
        if ok.any():
            out[(c, d)] = x[ok]
    return out


def _coalition_fits(points, lp, c, d, coal_lo, coal_hi, lo, hi) -> bool:
    """Whether a checked point lies in the coalition's bounds (its own bound off when the
    primary goes down): the pair is then settled for every respondent."""
    cells = lp.cells
    c_lo = coal_lo[cells].copy()
    c_hi = coal_hi[cells].copy()
    j = int(lp.pos[c])
    if d == DOWN and not coal_lo[c] == coal_hi[c]:
        c_lo[j], c_hi[j] = lo[c], hi[c]
    slack = 1e-9 * (1 + np.abs(c_lo))
    return bool(np.any(np.all((points >= c_lo - slack) & (points <= c_hi + slack), axis=1)))


def _reaches(reach: float, need: float, direction: int, tol: float) -> bool:
    return reach >= need - tol if direction == UP else reach <= need + tol


def _check(cancel: CancelToken | None) -> None:
    if cancel is not None and cancel.cancelled:
        raise Cancelled("insider audit cancelled")


class _Lp:
    """A component's attacker LP in moves from the values, bounds changed per attacker;
    points are returned as full-table values (zero moves outside the component)."""

    def __init__(self, rel, comp: Component, values, lo, hi, miss):
        self.cells = comp.cells
        self.values = values
        b = miss[comp.rows].copy()
        #: the values satisfy the component's relations (no rounding gap to carry)
        self.additive = not np.any(b)
        self.pos = np.full(values.size, -1, dtype=np.int64)
        self.pos[self.cells] = np.arange(self.cells.size)
        self.base = values[self.cells]
        self.lo, self.hi = lo[self.cells], hi[self.cells]  # the table's bounds (D-103)
        self.block = RowBlock.of(rel, self.cells, comp.rows)
        # gathered from the CSR arrays: scipy's slicing cost more than a small component's
        # LPs (the same CSC arrays, so the same LPs; D-101)
        self.h = make_highs(
            self.block,
            np.zeros(self.cells.size),
            lo[self.cells] - self.base,
            hi[self.cells] - self.base,
            b,
            b,
            primal=True,
            presolve=False,
        )
        self.miss = b  # for checking points (D-100)
        self._matrix: sp.csc_matrix | None = None  # the block for checking, at first use
        self.last = -1
        self._mark: highspy.HighsBasis | None = None  # mark, from_mark (D-103)
        self.n_lps = 0
        self.n_retries = 0  # warm solves HiGHS gave up on (solved again from scratch)

    def admits(
        self, x: np.ndarray, tol: float, lo: np.ndarray | None = None, hi: np.ndarray | None = None
    ) -> np.ndarray:
        """Whether points over the component's cells (one, or one per row) lie in `lo`/`hi`
        (default the table's bounds; 10⁻⁹ relative slack) and keep its relations within
        `tol`: the one check of the running points, the anchors and the seeds."""
        lo = self.lo if lo is None else lo
        hi = self.hi if hi is None else hi
        slack = 1e-9 * (1 + np.abs(self.base))
        inside = np.all((x >= lo - slack) & (x <= hi + slack), axis=-1)
        if not np.any(inside):
            return inside
        return inside & self.holds(x, tol)

    def matrix(self) -> sp.csc_matrix:
        """The block's relations over its cells (the LP's own CSC arrays), built once."""
        if self._matrix is None:
            blk = self.block  # the LP's own CSC arrays, no slicing (D-101)
            shape = (self.miss.size, self.cells.size)
            self._matrix = sp.csc_matrix((blk.data, blk.indices, blk.indptr), shape=shape)
        return self._matrix

    def holds(self, x: np.ndarray, tol: float) -> np.ndarray:
        """Whether points over the component's cells (one, or one per row) keep its
        relations within `tol`."""
        # A δᵀ straight from the CSC block: scipy's δ @ A.T builds two transposes per call
        # for the same product, the same sums in the same order (D-104)
        moved = (self.matrix() @ (x - self.base).T).T
        return np.all(np.abs(moved - self.miss) <= tol, axis=-1)

    def set_bounds(self, cells: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        v = self.values[cells]
        self.h.changeColsBounds(
            int(cells.size),
            np.ascontiguousarray(self.pos[cells], dtype=np.int32),
            np.ascontiguousarray(np.minimum(lo - v, 0.0), dtype=np.float64),
            np.ascontiguousarray(np.maximum(hi - v, 0.0), dtype=np.float64),
        )

    def mark(self) -> None:
        """Keep the basis just found: later LPs with the same objective and other bounds start
        from it by dual simplex (it stays dual feasible), D-103."""
        self._mark = self.h.getBasis()

    def anchor(self, cell: int, direction: int) -> tuple[float, np.ndarray | None]:
        """The extreme at the bounds set, from the last anchor's basis by primal simplex (near
        feasible: the same bounds but two cells'); its basis marked for the group LPs."""
        out = (
            self.extreme(cell, direction)
            if self._mark is None
            else self.from_mark(cell, direction, dual=False)
        )
        self.mark()
        return out

    def from_mark(
        self, cell: int, direction: int, strict: bool = True, dual: bool = True, basis=None
    ) -> tuple[float, np.ndarray | None]:
        """`extreme` started from the marked basis: dual simplex after a bound change (the
        basis stays dual feasible), primal after an objective change (`dual` False)."""
        assert self._mark is not None  # mark() came first
        self.h.setBasis(self._mark if basis is None else basis)
        if dual:
            self.h.setOptionValue("simplex_strategy", 1)
        try:
            return self.extreme(cell, direction, strict)
        finally:
            use_primal(self.h)

    def extreme(
        self, cell: int, direction: int, strict: bool = True
    ) -> tuple[float, np.ndarray | None]:
        """The cell's extreme on that side and the attacker point; not `strict` (a group's
        bounds together): an infeasible LP gives (nan, None) instead of AuditError."""
        j = int(self.pos[cell])
        if self.last >= 0 and self.last != j:
            self.h.changeColCost(self.last, 0.0)
        self.h.changeColCost(j, -1.0 if direction == UP else 1.0)
        self.last = j
        status, x, _ = solve(self.h)
        if status != "optimal":
            # the zero move is feasible (bounds hold the values, A δ = miss): HiGHS lost its
            # way on a warm re-solve. Dual simplex from the same basis first (a from-scratch
            # primal re-solve of b31808's 10,414-cell block cost ≈ 4 CPU-s, D-100), then
            # from scratch as the outsider audit does (solve_cold, D-91 s19)
            self.n_retries += 1
            self.h.setOptionValue("simplex_strategy", 1)
            status, x, _ = solve(self.h)
            use_primal(self.h)
            if status != "optimal":
                status, x, _ = solve_cold(self.h)
                self.n_lps += 1
        self.n_lps += 1
        if (status != "optimal" or x is None) and not strict:
            return float("nan"), None
        if status != "optimal" or x is None:
            raise AuditError(
                f"insider attacker LP for cell {cell} is {status}: the table is not additive "
                "within the attacker bounds"
            )
        point = self.values.copy()
        point[self.cells] += x
        return float(point[cell]), point
