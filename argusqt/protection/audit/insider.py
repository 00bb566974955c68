"""The insider audit: a respondent who alone makes up suppressed cells attacks the others.

Such a respondent knows those cells exactly; with them fixed (besides every published
value) no primary it does not alone make up may be recomputed inside its protection
interval. Only the components of suppressed cells a respondent touches change for it.
Three steps, cheapest first: one outsider audit with every respondent's cells published
settles the primaries nobody knows (the coalition); per (primary, direction) attacker moves
that avoid the respondents' cells settle it against them (insider_cover.py); the couples
left are attacked one respondent at a time, in big components on the relations around the
primary first (insider_bounds.py), then with the component's exact LP (the judge, same
tolerance as the outsider audit).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.errors import AuditError, Cancelled
from argusqt.model.distinct import sorted_difference, sorted_distinct
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.audit.insider_bounds import LocalBounds
from argusqt.protection.audit.insider_cover import Cover, Hops
from argusqt.protection.audit.insider_memo import (
    audit_key,
    moves_in_key,
    passed_pairs,
    remembered,
)
from argusqt.protection.audit.outsider import LOCAL_MIN_CELLS, audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import Respondents, diagonal, from_frequencies
from argusqt.protection.core.result import AuditResult
from argusqt.protection.lp.components import (
    DOWN,
    UP,
    Component,
    MoveContext,
    make_highs,
    solve,
    solve_cold,
    use_primal,
    variable_components,
)
from argusqt.protection.lp.separation import exact_rhs

Key = tuple[int, int]  # (primary cell, direction)


@dataclass(frozen=True)
class InsiderDisclosure:
    """Primary `cell` recomputed by the respondent that alone makes up `known`."""

    cell: int
    respondent: int  # row of Respondents.known
    lower: float  # the insider's exact interval of the cell
    upper: float
    known: tuple[int, ...]


@dataclass
class InsiderOutcome:
    """What the insider audit found, with its counts (for the log and the verdict)."""

    disclosures: list[InsiderDisclosure] = field(default_factory=list)
    attackers: int = 0  # respondents alone in at least one suppressed cell
    unit: str = "record"
    note: str = ""
    n_lps: int = 0
    elapsed: float = 0.0
    available: bool = True  # False: no respondent counts, nothing could be checked
    figures: dict = field(default_factory=dict)
    #: the attacker moves the cover found (cells, shifts): the next audit of a pattern that
    #: keeps their cells suppressed starts from them (D-49)
    moves: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.disclosures


def respondents_of(problem: CSPProblem) -> Respondents | None:
    """The problem's respondents, or the records derived from its frequencies, or None."""
    if problem.respondents is not None:
        return problem.respondents.padded(problem.n_cells)
    if problem.freq is None or len(problem.freq) != problem.n_cells:
        return None
    return from_frequencies(problem.relations, problem.freq)


def insider_audit(
    problem: CSPProblem,
    suppressed: np.ndarray,
    *,
    respondents: Respondents | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    recheck: Mapping[int, Iterable[int]] | None = None,
    moves: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> InsiderOutcome:
    """_insider_audit, run once per problem, pattern and inputs: the publication audit and the
    branch-and-cut's check audit the same patterns (insider_memo, D-57)."""
    resp = respondents if respondents is not None else respondents_of(problem)
    run_audit = partial(
        _insider_audit,
        problem,
        suppressed,
        respondents=resp,
        progress=progress,
        cancel=cancel,
        lower=lower,
        upper=upper,
        recheck=recheck,
        moves=moves,
    )
    if recheck is not None or resp is None:  # a partial audit, or nothing to audit
        return run_audit()
    if lower is None and upper is None and _passed_before(problem, suppressed):
        # every pair passed on an earlier pattern around it: no respondent attacks (D-117)
        run_audit = partial(run_audit, settled=True)
    key = audit_key(
        problem, suppressed, resp, lower, upper, moves, pattern_only=not moves_in_key(problem)
    )
    return remembered(problem, key, run_audit)


def _insider_audit(
    problem: CSPProblem,
    suppressed: np.ndarray,
    *,
    respondents: Respondents | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    recheck: Mapping[int, Iterable[int]] | None = None,
    moves: list[tuple[np.ndarray, np.ndarray]] | None = None,
    settled: bool = False,
) -> InsiderOutcome:
    """Every respondent alone in a suppressed cell against every primary not exempt for it.

    Assumes the outsider audit of the same pattern (it is the cheaper test and the
    caller runs it first); a primary the outsider already recomputes is reported there.
    `lower`/`upper`: published intervals (interval protection) as the attacker's bounds of
    every cell; a cell is then "suppressed" where they differ. `recheck`: respondent row →
    primaries; only those are attacked (see `recheck_after_growth`). `moves`: attacker
    moves a method found through this pattern (Cover.seed checks each; ignored with
    published intervals). `settled`: every pair is known to pass (`_passed_before`): the
    respondents are counted, none attacked. Raises Cancelled when cancelled.
    """
    watch = Stopwatch()
    values = np.asarray(problem.values, dtype=float)
    if lower is not None and upper is not None:
        lower = np.minimum(np.asarray(lower, dtype=float), values)
        upper = np.maximum(np.asarray(upper, dtype=float), values)
        suppressed = upper > lower
    resp = respondents if respondents is not None else respondents_of(problem)
    if resp is None:
        return InsiderOutcome(available=False, note="no respondent counts: insiders not checked")
    resp = resp.padded(problem.n_cells)
    out = InsiderOutcome(unit=resp.unit, note=resp.note)
    sup = np.asarray(suppressed, dtype=bool)
    known = resp.known.tocsr()
    exempt = resp.exempt.tocsr()
    ksup = (known @ diagonal(sup)).tocsr()
    ksup.eliminate_zeros()
    attackers = np.flatnonzero(np.diff(ksup.indptr) > 0)
    out.attackers = int(attackers.size)
    if attackers.size == 0 or settled:
        out.elapsed = watch.elapsed
        return out

    rel = problem.relations.tocsr()
    comps = variable_components(rel, sup)
    label = np.full(problem.n_cells, -1, dtype=np.int64)
    for k, comp in enumerate(comps):
        label[comp.cells] = k
    ctx = MoveContext(problem)
    if lower is not None and upper is not None:
        ctx.ub = upper - values
        ctx.lb = values - lower
    prim = ctx.primary & sup
    # the pattern's cells become ctx's movable set: only suppressed cells may move
    ctx.movable = sup.copy()
    judge = _IntervalJudge(problem, rel, sup, lower, upper)
    sliding = bool(np.any(judge.spl[prim] > 0))
    hops = Hops(rel, sup)
    attack = _Attacks(judge, comps, label, ksup, known, exempt, ctx, hops, sliding, cancel)
    cover = Cover(ctx, sup, ksup, exempt, comps, label, hops)
    seeds = cover.seed(moves) if moves and lower is None else []
    if recheck is not None:
        # the pairs disclosed before: a move avoiding the respondent's cells in the grown
        # pattern settles most of them (the repair looked for exactly such moves)
        among: dict[Key, set[int]] = {}
        for r, cells in recheck.items():
            for c in cells:
                for d in (UP, DOWN):
                    if ctx.required(int(c), d) > 0 or sliding:
                        among.setdefault((int(c), d), set()).add(int(r))
        left = among if sliding else cover.run(sorted(among), cancel, among)
        out.n_lps += cover.n_lps
        out.moves = cover.found
        attack.run(out, _by_respondent(left), progress, watch)
        out.figures["rechecked_respondents"] = len(recheck)
        out.elapsed = watch.elapsed
        return out
    # primaries the method's checked moves already prove against every respondent need no
    # coalition LP (D-64): the cover would settle their pairs from those moves anyway
    by_moves = cover.settled_by_moves(prim) if seeds and not sliding else np.zeros_like(prim)
    up_ok, down_ok = _coalition(problem, sup, ksup, prim & ~by_moves, lower, upper, cancel, seeds)
    if sliding:  # a sliding level is judged on the whole interval: both sides or none
        up_ok = down_ok = up_ok & down_ok
    side_settled = {UP: by_moves | up_ok, DOWN: by_moves | down_ok}
    out.figures["settled_by_moves"] = int(by_moves.sum())
    out.figures["settled_by_coalition"] = int((up_ok & down_ok).sum())
    out.figures["sides_settled_by_coalition"] = int((up_ok ^ down_ok).sum())
    out.figures["coalition_seconds"] = watch.elapsed

    touched = sorted_distinct(label[ksup.indices])
    touched = touched[touched >= 0]
    pairs = [
        (cell, direction)
        for k in touched.tolist()
        for cell in comps[k].cells[prim[comps[k].cells]].tolist()
        for direction in (UP, DOWN)
        if not side_settled[direction][cell] and (ctx.required(cell, direction) > 0 or sliding)
    ]
    out.figures["pairs"] = len(pairs)
    if sliding:
        # a sliding level needs both sides of one attacker at once: no move proves it
        left = {key: set(cover.attackers_in(int(label[key[0]]))) for key in pairs}
    else:
        progress(ProgressEvent(message="Insider audit: moves that avoid the respondents"))
        left = cover.run(pairs, cancel)
    out.n_lps += cover.n_lps
    out.moves = cover.found
    out.figures.update(cover.figures)
    out.figures["cover_seconds"] = watch.elapsed - out.figures["coalition_seconds"]
    todo = _by_respondent(left)
    out.figures["left_couples"] = sum(len(v) for v in todo.values())
    attack.run(out, todo, progress, watch)
    out.elapsed = watch.elapsed
    return out


def _passed_before(problem: CSPProblem, suppressed: np.ndarray) -> bool:
    """Whether every (primary, side) pair of `suppressed` passed a publication audit (outsider
    and respondents) of an earlier pattern that suppresses its component there, within
    by_pattern (D-117): each respondent's LP of the pair on this pattern contains its LP
    there — or the outsider's, for a respondent whose cells were all published there — so it
    passes. Not with sliding levels (judged on the whole interval) nor on tables whose
    components the audit may decide locally (BIG_COMPONENT)."""
    passed = passed_pairs(problem)
    if passed is None or problem.n_cells >= BIG_COMPONENT:
        return False
    sup = np.asarray(suppressed, dtype=bool)
    if problem.spl is not None and np.any(np.asarray(problem.spl)[problem.primary & sup] > 0):
        return False
    return passed.pairs(sup) == []


def record_passes(problem: CSPProblem, suppressed: np.ndarray, outcome: InsiderOutcome) -> None:
    """Within by_pattern: the pairs of a pattern the outsider passed and no respondent alone in
    a cell narrowed (both sides of a disclosed cell count as failed)."""
    passed = passed_pairs(problem)
    if passed is None:
        return
    failed = sorted({(int(d.cell), side) for d in outcome.disclosures for side in (UP, DOWN)})
    passed.add(np.asarray(suppressed, dtype=bool), failed)


def _by_respondent(left: Mapping[Key, set[int]]) -> dict[int, set[Key]]:
    todo: dict[int, set[Key]] = {}
    for key, rs in left.items():
        for r in rs:
            todo.setdefault(r, set()).add(key)
    return todo


class _Attacks:
    """The respondents' own attacks on the (primary, direction) pairs no move settled.

    In components of BIG_COMPONENT cells or more a side is first decided on the relations
    around the primary (insider_bounds.py); the rest, and every pair of a smaller component,
    goes to the component's LP with the respondent's cells fixed (exact, warm re-solves).
    A disclosure carries the attacker's exact interval, or in big components the bound
    that decided each side (a reachable shift on a safe side, an unreachable one on a
    disclosed side).
    """

    def __init__(self, judge, comps, label, ksup, known, exempt, ctx, hops, sliding, cancel):
        self.judge = judge
        self.comps = comps
        self.label = label
        self.ksup = ksup
        self.known = known
        self.exempt = exempt
        self.ctx = ctx
        self.sliding = sliding
        self.cancel = cancel
        self.models: dict[int, _ComponentLP] = {}
        self.local = LocalBounds(hops, judge.values, judge.lo, judge.hi, judge.miss, judge.tol)

    def run(self, out: InsiderOutcome, todo: Mapping[int, set[Key]], progress, watch) -> None:
        ksup, known, exempt = self.ksup, self.known, self.exempt
        values = self.judge.values
        for n_done, r in enumerate(sorted(todo)):
            kcells = ksup.indices[ksup.indptr[r] : ksup.indptr[r + 1]]
            if kcells.size == 0:
                continue  # not alone in any suppressed cell: its attack is the outsider's
            kall = known.indices[known.indptr[r] : known.indptr[r + 1]]
            mine = set(exempt.indices[exempt.indptr[r] : exempt.indptr[r + 1]].tolist())
            comp_ids = set(sorted_distinct(self.label[kcells]).tolist())
            used: dict[int, _ComponentLP] = {}
            # per primary: the side's shift bound where it was decided outside the exact LP
            bounds: dict[int, dict[int, float]] = {}
            failed: set[int] = set()
            for cell, direction in sorted(todo[r]):
                comp_id = int(self.label[cell])
                if cell in mine or comp_id not in comp_ids or not self.ctx.primary[cell]:
                    continue  # exempt, or its component holds none of the respondent's cells
                level = self.ctx.required(cell, direction)
                if level <= 0 and not self.sliding:
                    continue
                _check_cancel(self.cancel)
                if self.comps[comp_id].cells.size >= BIG_COMPONENT and not self.sliding:
                    side = self.local.decide(cell, direction, level, kcells)
                    if side is not None:
                        bounds.setdefault(cell, {})[direction] = side.shift
                        if not side.safe:
                            failed.add(cell)
                        continue
                if comp_id not in used:
                    if comp_id not in self.models:
                        self.models[comp_id] = _ComponentLP(self.judge, self.comps[comp_id])
                    used[comp_id] = self.models[comp_id]
                    used[comp_id].attack(kcells)
                if used[comp_id].fails(cell, direction):
                    failed.add(cell)
            for cell in sorted(failed):
                comp_id = int(self.label[cell])
                if cell in bounds or self.comps[comp_id].cells.size >= BIG_COMPONENT:
                    got = bounds.get(cell, {})
                    lp = used.get(comp_id)
                    sides = []
                    for direction in (DOWN, UP):
                        if direction in got:
                            sides.append(got[direction])
                        elif lp is not None and (lp.pos[cell], direction) in lp.exact:
                            exact = lp.exact[(lp.pos[cell], direction)]
                            sides.append((exact - values[cell]) * direction)
                        else:  # not attacked on this side: a move reaches its level
                            sides.append(self.ctx.required(cell, direction))
                    lo, hi = values[cell] - sides[0], values[cell] + sides[1]
                else:
                    lo, hi = used[comp_id].interval(cell)
                out.disclosures.append(
                    InsiderDisclosure(cell, r, lo, hi, tuple(int(c) for c in kall))
                )
            for lp in used.values():
                lp.release()
            if n_done % 50 == 0:
                progress(
                    ProgressEvent(
                        message=f"Insider audit: respondent {n_done + 1} of {len(todo)}",
                        fraction=(n_done + 1) / max(len(todo), 1),
                        elapsed=watch.elapsed,
                    )
                )
        out.n_lps += sum(lp.n_lps for lp in self.models.values()) + self.local.n_lps
        out.figures.update({f"couples {k}": v for k, v in sorted(self.local.decided.items())})


#: components of at least this many cells decide a respondent's side on the relations
#: around the primary before their own LP, whose warm re-solve is dear there
#: (docs/design.md, D-14)
BIG_COMPONENT = 2000


def _coalition(
    problem, sup, ksup, prim, lower, upper, cancel, seeds=()
) -> tuple[np.ndarray, np.ndarray]:
    """(up, down): the sides of primaries every respondent together still cannot recompute:
    no one alone can either.

    One pass/fail audit with all the respondents' cells published settles most primaries of
    a publishable pattern (docs/design.md, D-14: 942 of 955 on a repaired pattern); only
    the rest are attacked respondent by respondent. Cells some respondent knows are left to
    the others' attacks. In big components only neighbourhood proofs count: there a
    primary every respondent together recomputes costs two LPs of the whole component
    (31,808-cell HEUR pattern, a 10,457-cell component: 710 s, settling 3,277 of 7,193).
    Each side counts on its own (D-65): a coalition point that reaches a level is a point
    of every respondent's attacker, whatever the other side gave.
    """

    kall = np.zeros(problem.n_cells, dtype=bool)
    kall[ksup.indices] = True
    targets = prim & ~kall
    settled = np.zeros(problem.n_cells, dtype=bool)
    if not targets.any():
        return settled, settled.copy()
    if lower is not None and upper is not None:
        values = np.asarray(problem.values, dtype=float)
        lo = np.where(kall, values, lower)
        hi = np.where(kall, values, upper)
        res = audit(
            problem,
            sup & ~kall,
            targets,
            lower=lo,
            upper=hi,
            intervals=False,
            cancel=cancel,
            proofs_only_above=LOCAL_MIN_CELLS,
        )
    else:
        # the method's checked moves that leave every known cell at its value are points of
        # this attacker too (the audit checks them again)
        hints = [(c, d) for c, d in seeds if not kall[c].any()]
        res = audit(
            problem,
            sup & ~kall,
            targets,
            intervals=False,
            hints=hints,
            cancel=cancel,
            proofs_only_above=LOCAL_MIN_CELLS,
        )
    spl = np.zeros(problem.n_cells) if problem.spl is None else np.asarray(problem.spl, float)
    return _sides_passed(res, targets, spl > 0)


def _sides_passed(
    res: AuditResult, targets: np.ndarray, sliding: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(up, down) masks of the targets whose side the audit's attacker points cover (the
    witness bounds of a pass/fail audit: attacker points, never estimates); a cell that
    passed covers both sides. A cell with a sliding level (`sliding`) is settled only when
    it passed: reaching both sides says nothing of the interval's width (review of D-65)."""
    tol = res.tolerance
    with np.errstate(invalid="ignore"):  # NaN bounds and levels of cells not audited
        up = (res.upper >= res.required_upper - tol) & ~sliding
        down = (res.lower <= res.required_lower + tol) & ~sliding
    return targets & (res.passed | up), targets & (res.passed | down)


def _check_cancel(cancel: CancelToken | None) -> None:
    if cancel is not None and cancel.cancelled:
        raise Cancelled("insider audit cancelled")


class _IntervalJudge:
    """Attacker bounds of a pattern and the pass test of a primary's interval."""

    def __init__(self, problem: CSPProblem, rel: sp.csr_matrix, sup: np.ndarray, lower, upper):
        self.problem = problem
        self.rel = rel
        self.mcsc = rel.tocsc()
        self.values = np.asarray(problem.values, dtype=float)
        if lower is not None and upper is not None:
            self.lo, self.hi = lower, upper
        else:
            self.lo = np.where(sup, problem.lower, self.values).astype(float)
            self.hi = np.where(sup, problem.upper, self.values).astype(float)
        self.tol = problem.tolerance
        exact, not_additive = exact_rhs(problem)
        #: right-hand sides of the move LPs: 0 where the values satisfy the relation
        self.miss = np.where(not_additive, exact - rel @ self.values, 0.0)
        prim = problem.primary
        self.lpl = np.where(prim, problem.lpl, 0.0)
        self.upl = np.where(prim, problem.upl, 0.0)
        spl = np.zeros(problem.n_cells) if problem.spl is None else problem.spl
        self.spl = np.where(prim, spl, 0.0)

    def passes(self, cell: int, lo: float, hi: float) -> tuple[bool, bool]:
        """(lower side covered, upper side covered) for an interval [lo, hi] of the cell."""
        v = self.values[cell]
        slide = hi - lo >= self.spl[cell] - self.tol
        return (
            lo <= v - self.lpl[cell] + self.tol and slide,
            hi >= v + self.upl[cell] - self.tol and slide,
        )


class _ComponentLP:
    """The attacker LP of a component, re-solved warm; a respondent fixes its known cells.

    Every solution is a feasible point of the current respondent's attacker, so the running
    min/max over them settles other cells without an LP of their own (as the outsider
    audit does). `attack` fixes a respondent's known cells, `release` frees them again.
    """

    def __init__(self, judge: _IntervalJudge, comp: Component):
        self.judge = judge
        cells = comp.cells
        sub = judge.rel[comp.rows]
        # moves δ = y − a from the values: A δ = 0 holds exactly at the true table (as in the
        # outsider audit; A y = b with totals of 10⁸ misses by more than HiGHS's tolerance)
        b = judge.miss[comp.rows].copy()
        pub = sorted_difference(sub.indices, cells)  # published cells: constants
        if pub.size:
            b -= sub[:, pub] @ (judge.lo[pub] - judge.values[pub])
        self.cells = cells
        self.base = judge.values[cells]
        self.pos = {int(c): j for j, c in enumerate(cells.tolist())}
        self.h = make_highs(
            sub[:, cells],
            np.zeros(cells.size),
            judge.lo[cells] - self.base,
            judge.hi[cells] - self.base,
            b,
            b,
            primal=cells.size < 2000,
            presolve=True,
        )
        self.fresh = True
        self.last = -1
        self.fixed = np.zeros(0, dtype=np.int64)
        self.n_lps = 0
        self.attack(self.fixed)

    def attack(self, known: np.ndarray) -> None:
        """Start a respondent: its known cells (of this component) fixed at their values."""
        self.fixed = np.array([self.pos[int(c)] for c in known if int(c) in self.pos], np.int64)
        for j in self.fixed.tolist():
            self.h.changeColBounds(j, 0.0, 0.0)  # no move: the respondent knows the value
        self.run_lo = self.judge.values[self.cells].copy()
        self.run_hi = self.run_lo.copy()
        self.exact: dict[tuple[int, int], float] = {}

    def release(self) -> None:
        for j in self.fixed.tolist():
            c = self.cells[j]
            v = float(self.judge.values[c])
            self.h.changeColBounds(j, float(self.judge.lo[c]) - v, float(self.judge.hi[c]) - v)
        self.fixed = np.zeros(0, dtype=np.int64)

    def _solve(self, j: int, direction: int) -> float:
        key = (j, direction)
        if key in self.exact:
            return self.exact[key]
        sense = -1.0 if direction == UP else 1.0
        if self.last >= 0 and self.last != j:
            self.h.changeColCost(self.last, 0.0)
        self.h.changeColCost(j, sense)
        self.last = j
        status, x, obj = solve(self.h)
        if status != "optimal":
            # δ = 0 is feasible by construction (bounds hold the values, A δ = 0): a warm
            # re-solve after bound changes that says otherwise is HiGHS losing its basis on
            # wide bounds (7,290-cell 3-D table, moves of 10⁹); solve again from scratch
            self.h.clearSolver()
            status, x, obj = solve(self.h)
        if self.fresh:
            use_primal(self.h)
            self.fresh = False
        self.n_lps += 1
        if status != "optimal":
            # still not: dual simplex without presolve, as the outsider audit's last try
            status, x, obj = solve_cold(self.h)
            self.n_lps += 1
        if status != "optimal" or x is None:
            raise AuditError(
                f"insider attacker LP for cell {int(self.cells[j])} is {status}: the table "
                "is not additive within the attacker bounds"
            )
        np.minimum(self.run_lo, self.base + x, out=self.run_lo)
        np.maximum(self.run_hi, self.base + x, out=self.run_hi)
        self.exact[key] = float(self.base[j]) + sense * obj
        return self.exact[key]

    def settled(self, cell: int, direction: int) -> bool:
        """The attacker points seen so far already reach the cell's level on that side."""
        j = self.pos[cell]
        return self.judge.passes(cell, self.run_lo[j], self.run_hi[j])[1 if direction == UP else 0]

    def fails(self, cell: int, direction: int) -> bool:
        """True when this attacker keeps the cell inside its interval on that side."""
        j = self.pos[cell]
        side = 1 if direction == UP else 0
        if self.judge.passes(cell, self.run_lo[j], self.run_hi[j])[side]:
            return False
        self._solve(j, direction)
        return not self.judge.passes(cell, self.run_lo[j], self.run_hi[j])[side]

    def interval(self, cell: int) -> tuple[float, float]:
        """The attacker's exact interval of the cell."""
        j = self.pos[cell]
        return self._solve(j, DOWN), self._solve(j, UP)
