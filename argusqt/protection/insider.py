"""The insider audit: a respondent who alone makes up suppressed cells attacks the others.

Such a respondent knows those cells exactly; with them fixed (besides every published
value) no primary it does not alone make up may be recomputed inside its protection
interval. Per respondent only the components of suppressed cells it touches change, and
most primaries keep an attacker move (a witness) that avoids its cells: those are settled
without an LP. The remaining ones get a path LP on their neighbourhood, then the exact
interval LP of their component (the judge, same tolerance as the outsider audit).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from argusqt.errors import AuditError, Cancelled
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.cleanup import find_witness
from argusqt.protection.components import (
    DOWN,
    UP,
    Component,
    MoveContext,
    make_highs,
    solve,
    use_primal,
    variable_components,
)
from argusqt.protection.problem import CSPProblem
from argusqt.protection.respondents import Respondents, from_frequencies
from argusqt.protection.separation import exact_rhs

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
    disclosures: list[InsiderDisclosure] = field(default_factory=list)
    attackers: int = 0  # respondents alone in at least one suppressed cell
    unit: str = "record"
    note: str = ""
    n_lps: int = 0
    elapsed: float = 0.0
    available: bool = True  # False: no respondent counts, nothing could be checked
    figures: dict = field(default_factory=dict)

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


class _Pool:
    """Attacker moves found so far; per pair the moves that prove it, per cell the moves using it."""

    def __init__(self, ctx: MoveContext):
        self.ctx = ctx
        self.pairs: list[list[Key]] = []  # per move: the pairs it proves
        self.of_pair: dict[Key, list[int]] = {}
        self.of_cell: dict[int, list[int]] = {}

    def add(self, idx: np.ndarray, d: np.ndarray) -> None:
        mid = len(self.pairs)
        up, dn = self.ctx.proves(idx, d)
        proved = [(q, UP) for q in idx[up].tolist()] + [(q, DOWN) for q in idx[dn].tolist()]
        self.pairs.append(proved)
        for key in proved:
            self.of_pair.setdefault(key, []).append(mid)
        for c in idx.tolist():
            self.of_cell.setdefault(c, []).append(mid)

    def has(self, key: Key) -> bool:
        return key in self.of_pair


def insider_audit(
    problem: CSPProblem,
    suppressed: np.ndarray,
    *,
    respondents: Respondents | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    local: bool = True,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    recheck: Mapping[int, Iterable[int]] | None = None,
) -> InsiderOutcome:
    """Every respondent alone in a suppressed cell against every primary not exempt for it.

    Assumes the outsider audit of the same pattern (it is the cheaper test and the
    caller runs it first); a primary the outsider already recomputes is reported there.
    `local`: try a neighbourhood move before the respondent's LP (measured slower on a
    4,851-cell 3-D table: 18.9 s vs 8.6 s, the warm LP settles several cells at once).
    `lower`/`upper`: published intervals (interval protection) as the attacker's bounds of
    every cell; a cell is then "suppressed" where they differ. `recheck`: respondent row →
    primaries; only those are attacked (see `recheck_after_growth`). Raises Cancelled when
    cancelled.
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
    ksup = (known @ sp.diags(sup.astype(float))).tocsr()
    ksup.eliminate_zeros()
    attackers = np.flatnonzero(np.diff(ksup.indptr) > 0)
    out.attackers = int(attackers.size)
    if attackers.size == 0:
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
    sliding = problem.spl is not None and bool(np.any(np.asarray(problem.spl)[prim] > 0))
    judge = _IntervalJudge(problem, rel, sup, lower, upper)
    pool = _Pool(ctx)
    perm = prim.copy()
    if recheck is not None:
        return _recheck(out, watch, recheck, ksup, known, exempt, label, comps, judge, ctx, cancel)
    settled = _coalition(problem, sup, ksup, prim, lower, upper, cancel)
    out.figures["settled_by_coalition"] = int(settled.sum())

    def need(cell: int, direction: int) -> bool:
        if settled[cell]:
            return False
        return ctx.required(cell, direction) > 0 or sliding

    # a witness for every pair in the components the attackers touch
    touched = np.unique(label[ksup.indices])
    touched = touched[touched >= 0]
    pairs_of: dict[int, list[Key]] = {}
    for k in touched.tolist():
        pairs_of[k] = [
            (cell, direction)
            for cell in comps[k].cells[prim[comps[k].cells]].tolist()
            for direction in (UP, DOWN)
            if need(cell, direction)
        ]
        for key in pairs_of[k]:
            if pool.has(key):
                continue
            _check_cancel(cancel)
            found = find_witness(ctx, key, sup, perm, 0)
            out.n_lps += 1
            if found is None:
                # the cheapest move over the whole component (primaries preferred)
                cells = comps[k].cells
                d = ctx.path_move(key[0], key[1], cells, np.where(perm[cells], 1e-3, 1.0))
                out.n_lps += 1
                if d is not None:
                    found = cells[d != 0], d[d != 0]
            if found is not None:
                pool.add(*found)
    orphans = {k: [key for key in pairs_of[k] if not pool.has(key)] for k in pairs_of}
    out.figures["witness_seconds"] = watch.elapsed
    out.figures["witness_lps"] = out.n_lps
    out.figures["orphans"] = sum(len(v) for v in orphans.values())
    out.figures["pairs"] = sum(len(v) for v in pairs_of.values())

    tries = _LocalFirst()
    kmask = np.zeros(problem.n_cells, dtype=bool)
    models: dict[int, _ComponentLP] = {}  # one warm LP per component, shared by respondents
    for n_done, r in enumerate(attackers.tolist()):
        _check_cancel(cancel)
        kcells = ksup.indices[ksup.indptr[r] : ksup.indptr[r + 1]]
        kall = known.indices[known.indptr[r] : known.indptr[r + 1]]
        kmask[kcells] = True
        mine = set(exempt.indices[exempt.indptr[r] : exempt.indptr[r + 1]].tolist())
        # pairs whose every known witness moves a cell the respondent knows, and pairs
        # of its components without any witness
        hit_moves: set[int] = set()
        for c in kcells.tolist():
            hit_moves.update(pool.of_cell.get(c, ()))
        near = {key for m in hit_moves for key in pool.pairs[m]}
        comp_ids = set(np.unique(label[kcells]).tolist())
        if sliding:
            near |= {key for k in comp_ids for key in pairs_of[k]}
        else:
            near |= {key for k in comp_ids for key in orphans[k]}
        pairs = {
            key
            for key in near
            if key[0] not in mine
            and label[key[0]] in comp_ids
            and (sliding or all(w in hit_moves for w in pool.of_pair.get(key, ())))
        }
        free = sup & ~kmask
        used: dict[int, _ComponentLP] = {}
        failed: set[int] = set()
        for cell, direction in sorted(pairs):
            _check_cancel(cancel)
            comp_id = int(label[cell])
            if comp_id not in used:
                if comp_id not in models:
                    models[comp_id] = _ComponentLP(judge, comps[comp_id])
                used[comp_id] = models[comp_id]
                used[comp_id].attack(kcells)
            lp = used[comp_id]
            if local and tries.worth_it() and not lp.settled(cell, direction):
                # small LPs on the cell's neighbourhood first: sound (a restriction of
                # this attacker) and much cheaper than a re-solve of a big component
                t0 = time.perf_counter()
                settled_here = False
                deep = lp.cells.size >= DEEP_NEIGHBOURHOOD_CELLS
                for cells in _neighbourhoods(ctx, cell, free, deep):
                    out.n_lps += lp.local(cell, direction, cells)
                    if lp.settled(cell, direction):
                        settled_here = True
                        break
                tries.local(time.perf_counter() - t0, settled_here)
            t0, n0 = time.perf_counter(), lp.n_lps
            if lp.fails(cell, direction):
                failed.add(cell)
            if lp.n_lps > n0:
                tries.full(time.perf_counter() - t0)
        for cell in sorted(failed):
            lo, hi = used[int(label[cell])].interval(cell)
            out.disclosures.append(InsiderDisclosure(cell, r, lo, hi, tuple(int(c) for c in kall)))
        for lp in used.values():
            lp.release()
        kmask[kcells] = False
        if n_done % 50 == 0:
            progress(
                ProgressEvent(
                    message=f"Insider audit: respondent {n_done + 1} of {attackers.size}",
                    fraction=(n_done + 1) / attackers.size,
                    elapsed=watch.elapsed,
                )
            )
    out.n_lps += sum(lp.n_lps for lp in models.values())
    out.figures["local_tries"] = tries.n_local
    out.figures["local_settled"] = tries.n_settled
    out.elapsed = watch.elapsed
    return out


def _recheck(out, watch, recheck, ksup, known, exempt, label, comps, judge, ctx, cancel):
    """Attack only the given (respondent, primary) pairs with each component's exact LP."""
    sliding = bool(np.any(judge.spl > 0))
    models: dict[int, _ComponentLP] = {}
    for r in sorted(int(r) for r in recheck):
        kcells = ksup.indices[ksup.indptr[r] : ksup.indptr[r + 1]]
        if kcells.size == 0:
            continue  # not alone in any suppressed cell: its attack is the outsider's
        kall = known.indices[known.indptr[r] : known.indptr[r + 1]]
        mine = set(exempt.indices[exempt.indptr[r] : exempt.indptr[r + 1]].tolist())
        comp_ids = set(np.unique(label[kcells]).tolist())
        used: dict[int, _ComponentLP] = {}
        failed: set[int] = set()
        for cell in sorted({int(c) for c in recheck[r]}):
            comp_id = int(label[cell])
            if cell in mine or comp_id not in comp_ids or not ctx.primary[cell]:
                continue  # its component holds none of the respondent's cells: outsider's
            if comp_id not in used:
                if comp_id not in models:
                    models[comp_id] = _ComponentLP(judge, comps[comp_id])
                used[comp_id] = models[comp_id]
                used[comp_id].attack(kcells)
            for direction in (UP, DOWN):
                _check_cancel(cancel)
                if (ctx.required(cell, direction) > 0 or sliding) and used[comp_id].fails(
                    cell, direction
                ):
                    failed.add(cell)
        for cell in sorted(failed):
            lo, hi = used[int(label[cell])].interval(cell)
            out.disclosures.append(InsiderDisclosure(cell, r, lo, hi, tuple(int(c) for c in kall)))
        for lp in used.values():
            lp.release()
    out.n_lps += sum(lp.n_lps for lp in models.values())
    out.figures["rechecked_respondents"] = len(recheck)
    out.elapsed = watch.elapsed
    return out


class _LocalFirst:
    """Whether neighbourhood LPs before the component's LP still pay, from this run's times.

    They pay when a try costs less than the component re-solves it saves: measured on 3-D
    HEUR patterns, 10,143 cells: 13.7 → 7.5 s with them; 7,290 cells (load 12): 14.9 →
    32.6 s, although they settled 79 % of the pairs (a fresh small model per try costs as
    much as a warm re-solve of the component there).
    """

    PROBE_LOCAL, PROBE_FULL = 30, 10

    def __init__(self) -> None:
        self.n_local = self.n_settled = self.n_full = 0
        self.s_local = self.s_full = 0.0

    def local(self, seconds: float, settled: bool) -> None:
        self.n_local += 1
        self.n_settled += int(settled)
        self.s_local += seconds

    def full(self, seconds: float) -> None:
        self.n_full += 1
        self.s_full += seconds

    def worth_it(self) -> bool:
        if self.n_local < self.PROBE_LOCAL or self.n_full < self.PROBE_FULL:
            return True
        saved = (self.n_settled / self.n_local) * (self.s_full / self.n_full)
        return self.s_local / self.n_local < saved


class _FreeScore:
    """Neighbourhood score: 0 for cells the attacker does not know (free), inf otherwise."""

    def __init__(self, free: np.ndarray):
        self.free = free

    def __getitem__(self, idx):
        return np.where(self.free[idx], 0.0, np.inf)


#: components of at least this many cells get a third neighbourhood (every ancestor level)
#: before their own LP, whose warm re-solve costs 0.2–1.3 s there (b31808, load 16)
DEEP_NEIGHBOURHOOD_CELLS = 2000


def _neighbourhoods(ctx: MoveContext, cell: int, free: np.ndarray, deep: bool = False):
    """Growing sets of free cells around `cell` along the table's dimensions (none without)."""
    if ctx.grid is None:
        return
    score = _FreeScore(free)
    levels = ((3, 1), (1 << 30, 1)) + (((1 << 30, 1 << 30),) if deep else ())
    for k_sup, climb in levels:
        n = ctx.grid.neighbourhood(cell, score, k_free=0, k_sup=k_sup, climb=climb)
        yield n[free[n]]


def _coalition(problem, sup, ksup, prim, lower, upper, cancel) -> np.ndarray:
    """Primaries every respondent together still cannot recompute: no one alone can either.

    One pass/fail audit with all the respondents' cells published settles most primaries of
    a publishable pattern (measured on a repaired 10,143-cell 3-D pattern: 942 of 955); only
    the rest are attacked respondent by respondent. Cells some respondent knows are left to
    the others' attacks. In big components only neighbourhood proofs count: there a
    primary every respondent together recomputes costs two LPs of the whole component
    (31,808-cell HEUR pattern, a 10,457-cell component: 710 s, settling 3,277 of 7,193).
    """
    from argusqt.protection.audit import LOCAL_MIN_CELLS, audit

    kall = np.zeros(problem.n_cells, dtype=bool)
    kall[ksup.indices] = True
    targets = prim & ~kall
    settled = np.zeros(problem.n_cells, dtype=bool)
    if not targets.any():
        return settled
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
        res = audit(
            problem,
            sup & ~kall,
            targets,
            intervals=False,
            cancel=cancel,
            proofs_only_above=LOCAL_MIN_CELLS,
        )
    return targets & res.passed


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
        pub = np.setdiff1d(sub.indices, cells)  # published cells: constants
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
            self.h.clearSolver()
            self.h.setOptionValue("simplex_strategy", 1)
            self.h.setOptionValue("presolve", "off")
            status, x, obj = solve(self.h)
            use_primal(self.h)
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

    def local(self, cell: int, direction: int, cells: np.ndarray) -> int:
        """Move the cell with only `cells` free (others at their values); returns LPs run."""
        judge = self.judge
        # only cells of this component are variables here (a neighbourhood may reach others)
        cells = np.asarray([c for c in cells.tolist() if int(c) in self.pos], dtype=np.int64)
        if cell not in self.pos or cells.size == 0:
            return 0
        mcsc = judge.mcsc[:, cells]
        rows, inv = np.unique(mcsc.indices, return_inverse=True)
        if rows.size == 0:
            return 0
        a = sp.csc_matrix((mcsc.data, inv, mcsc.indptr), shape=(rows.size, cells.size))
        v = judge.values[cells]
        lo = judge.lo[cells] - v
        hi = judge.hi[cells] - v
        pos = np.array([self.pos[int(c)] for c in cells.tolist()], dtype=np.int64)
        known = np.isin(pos, self.fixed)  # the respondent's own cells do not move
        lo[known] = hi[known] = 0.0
        zero = np.zeros(rows.size)  # moves; the other cells stay at their values
        h = make_highs(a, np.zeros(cells.size), lo, hi, zero, zero, False)
        h.changeColCost(int(np.flatnonzero(cells == cell)[0]), -1.0 if direction == UP else 1.0)
        status, x, _ = solve(h)
        if status == "optimal" and x is not None:
            np.minimum.at(self.run_lo, pos, v + x)
            np.maximum.at(self.run_hi, pos, v + x)
        return 1

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
