"""The audit: attacker intervals of suppressed cells on the full relation set
(argusqt/docs/methods.md §12).

It is the only judge of "protected": every suppression method's final pattern goes through
it. Published cells are constants, so the LP splits into independent components of
suppressed cells; each component is one HiGHS model re-solved with a new objective per
cell and direction (warm start from the previous basis).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

import highspy
import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

    from argusqt.protection.audit.outsider_memo import OutsiderMemo
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.errors import AuditError, Cancelled
from argusqt.model.smallcsr import compressed, pattern_of
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import AuditResult
from argusqt.protection.lp.components import (
    Grid,
    RowBlock,
    has_grid,
    make_highs,
    new_highs,
    pass_model,
    relation_residuals,
    solve,
    solve_cold,
    use_primal,
    variable_components,
)
from argusqt.protection.lp.separation import exact_rhs

#: above this many suppressed cells the final audit decides pass/fail without exact intervals
EXACT_AUDIT_LIMIT = 2000

#: pass/fail mode tries neighbourhood LPs first only in components of at least this many
#: cells: below it a warm re-solve of the component's own LP is cheaper than building small
#: ones (docs/design.md, D-14)
LOCAL_MIN_CELLS = 2000

#: the components met before, within outsider_memo.remembered_components (D-114)
COMPONENTS: ContextVar[OutsiderMemo | None] = ContextVar("argusqt_outsider_memo", default=None)


def pattern_digest(problem: CSPProblem, suppressed: np.ndarray) -> str:
    """Fingerprint of (problem, pattern): lets a caller reuse a verdict for the same pattern."""
    h = hashlib.sha1(np.packbits(np.asarray(suppressed, dtype=bool)).tobytes())
    h.update(str(id(problem)).encode())
    h.update(np.ascontiguousarray(problem.values, dtype=float).tobytes())
    return h.hexdigest()


def cell_bounds(
    problem: CSPProblem,
    suppressed: np.ndarray | None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Attacker bounds per cell: published cells fixed at their value, suppressed at l/u.

    With explicit `lower`/`upper` (interval protection) these are used as given for every
    cell; a cell is a variable of the attacker iff its bounds differ.
    """
    values = np.asarray(problem.values, dtype=float)
    if lower is not None or upper is not None:
        lo = np.asarray(lower if lower is not None else problem.lower, dtype=float)
        hi = np.asarray(upper if upper is not None else problem.upper, dtype=float)
        if suppressed is not None:
            sup = np.asarray(suppressed, dtype=bool)
            lo = np.where(sup, lo, np.minimum(lo, values))
            hi = np.where(sup, hi, np.maximum(hi, values))
        return lo, hi
    sup = np.asarray(suppressed, dtype=bool)
    lo = np.where(sup, problem.lower, values).astype(float)
    hi = np.where(sup, problem.upper, values).astype(float)
    return lo, hi


def _targets(problem: CSPProblem, sup: np.ndarray, cells) -> np.ndarray:
    """Mask of the cells to audit: suppressed primaries, all suppressed, or the given ones."""
    n = problem.n_cells
    if cells is None:
        return sup & problem.primary
    if isinstance(cells, str):
        if cells != "all":
            raise ValueError(f"cells must be None, 'all' or indices, got {cells!r}")
        return sup.copy()
    arr = np.asarray(cells)
    if arr.dtype == bool:
        return arr.copy()
    mask = np.zeros(n, dtype=bool)
    mask[arr.astype(np.int64)] = True
    return mask


def audit(
    problem: CSPProblem,
    suppressed: np.ndarray | None,
    cells=None,
    *,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    intervals: bool = True,
    hints: list[tuple[np.ndarray, np.ndarray]] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    proofs_only_above: int | None = None,
) -> AuditResult:
    """Attacker min/max of the audited cells and pass/fail against LPL/UPL/SPL.

    `cells`: None = suppressed primaries, "all" = every suppressed cell, or a mask/indices.
    `intervals=False` only decides pass/fail (an LP is skipped once a feasible attacker
    solution already reaches the protection bound), so the reported bounds are then
    witnesses, not the exact interval. `hints` are candidate attacker moves (cells, shifts)
    a method found; each is checked here (relations, bounds, only variable cells) and, if
    valid, used as such a feasible solution — an invalid hint is ignored, never trusted.
    `proofs_only_above` (pass/fail mode): in components of more cells, targets the
    neighbourhood LPs do not settle are reported failed without the component's LP — for
    callers that only want the cheap proofs (the insider audit's coalition pass). Raises
    Cancelled when cancelled (no partial verdict).
    """
    watch = Stopwatch()
    n = problem.n_cells
    values = np.asarray(problem.values, dtype=float)
    lo, hi = cell_bounds(problem, suppressed, lower, upper)
    var = hi > lo
    sup = np.asarray(suppressed, dtype=bool) if suppressed is not None else var
    target = _targets(problem, sup, cells)
    tol = problem.tolerance
    prim = problem.primary
    lpl = np.where(prim, problem.lpl, 0.0)
    upl = np.where(prim, problem.upl, 0.0)
    spl = np.zeros(n) if problem.spl is None else np.where(prim, problem.spl, 0.0)
    need_lo = values - lpl + tol  # a lower bound at or below this passes
    need_hi = values + upl - tol

    res_lo = np.full(n, np.nan)
    res_hi = np.full(n, np.nan)
    # constant targets: the attacker knows them exactly
    const_t = target & ~var
    res_lo[const_t] = lo[const_t]
    res_hi[const_t] = hi[const_t]

    rel = problem.relations_small.tocsr()
    # the LPs move variable cells from their values (y = a + δ) so that their rows hold
    # exactly at the true table (A δ = 0), whatever the float noise of big totals (an
    # A y = b form made HiGHS call the true table infeasible); constants away from their
    # value (an explicit bound) and non-additive relations keep their miss on the right
    exact, not_additive = exact_rhs(problem)
    base = np.where(var, values, lo)
    rhs_eff = np.where(not_additive, exact - rel @ values, 0.0) - rel @ (base - values)
    n_lps = 0
    comps = variable_components(rel, var)
    total_targets = int((target & var).sum())
    done_targets = 0
    # running min/max over feasible attacker solutions (the true values are one)
    run_lo = np.clip(values, lo, hi)
    run_hi = run_lo.copy()
    local = _LocalAttacker(problem, rel, var, lo, hi) if not intervals else None
    if local is not None and proofs_only_above is not None:
        local.quick = True  # cheap proofs only: no whole-hierarchy or big-ball LPs
    if hints:
        _apply_hints(hints, rel.tocsc(), values, lo, hi, var, run_lo, run_hi)
    memo = COMPONENTS.get()
    if memo is not None and (memo.problem is not problem or lower is not None or upper is not None):
        memo = None  # its own problem's patterns only, never published intervals

    def settled(cell: int, sense: float) -> bool:
        if sense > 0:
            return run_lo[cell] <= lo[cell] or (
                not intervals and run_lo[cell] <= need_lo[cell] and spl[cell] <= 0
            )
        return run_hi[cell] >= hi[cell] or (
            not intervals and run_hi[cell] >= need_hi[cell] and spl[cell] <= 0
        )

    for comp in comps:
        tpos = np.flatnonzero(target[comp.cells])
        if tpos.size == 0:
            continue
        if comp.rows.size == 0:
            ids = comp.cells[tpos]
            res_lo[ids] = lo[ids]
            res_hi[ids] = hi[ids]
            done_targets += tpos.size
            continue
        h = None
        fresh = False
        last = -1
        near_first = local is not None and comp.cells.size >= LOCAL_MIN_CELLS
        proofs_only = (
            local is not None
            and proofs_only_above is not None
            and comp.cells.size > proofs_only_above
        )
        key = None
        if memo is not None and not near_first and not proofs_only:
            # the neighbourhood attacker left out, the loop below reads only these (D-114)
            cells, rows = comp.cells, comp.rows
            key = memo.key(intervals, cells, rows, tpos, lo[cells], hi[cells],
                           rhs_eff[rows], run_lo[cells], run_hi[cells])  # fmt: skip
            got = memo.replay(key)
            if got is not None:
                ids = cells[tpos]
                res_lo[ids], res_hi[ids], lps = got
                n_lps += lps
                done_targets += tpos.size
                continue
        lps_before = n_lps
        for j in tpos:
            cell = int(comp.cells[j])
            if (
                near_first
                and local is not None
                and not (settled(cell, 1.0) and settled(cell, -1.0))
            ):
                if cancel is not None and cancel.cancelled:
                    raise Cancelled("audit cancelled")
                n_lps += local.improve(cell, run_lo, run_hi, settled)
            for sense in (1.0, -1.0):
                if settled(cell, sense) or proofs_only:
                    continue
                if cancel is not None and cancel.cancelled:
                    raise Cancelled("audit cancelled")
                if h is None:
                    a = RowBlock.of(rel, comp.cells, comp.rows)  # = rel[rows][:, cells]
                    b = rhs_eff[comp.rows]
                    h = make_highs(
                        a,
                        np.zeros(comp.cells.size),
                        lo[comp.cells] - base[comp.cells],
                        hi[comp.cells] - base[comp.cells],
                        b,
                        b,
                        primal=comp.cells.size < 2000,
                        presolve=True,
                    )
                    if comp.cells.size >= 5000:
                        # IPM + crossover: a big block's first solve is faster than dual
                        # simplex; re-solves then use its basis (docs/design.md, D-13)
                        h.setOptionValue("solver", "ipm")
                    fresh = True
                if last >= 0 and last != j:
                    h.changeColCost(int(last), 0.0)
                h.changeColCost(int(j), sense)
                last = int(j)
                status, x, obj = solve(h)
                if fresh:
                    h.setOptionValue("solver", "simplex")
                    use_primal(h)
                    fresh = False
                n_lps += 1
                if status == "error":
                    status, x, obj = solve_cold(h)
                    n_lps += 1
                if status != "optimal":
                    raise AuditError(
                        f"attacker LP for cell {cell} is {status}: the published table is "
                        "not additive within the attacker bounds (relations M·a = b violated?)"
                    )
                y = base[comp.cells] + x
                np.minimum.at(run_lo, comp.cells, y)
                np.maximum.at(run_hi, comp.cells, y)
                if sense > 0:
                    run_lo[cell] = min(run_lo[cell], base[cell] + obj)
                else:
                    run_hi[cell] = max(run_hi[cell], base[cell] - obj)
            res_lo[cell] = max(run_lo[cell], lo[cell])
            res_hi[cell] = min(run_hi[cell], hi[cell])
            done_targets += 1
            if done_targets % 200 == 0:
                progress(
                    ProgressEvent(
                        message=f"Audit: {done_targets} of {total_targets} cells",
                        fraction=done_targets / max(total_targets, 1),
                        elapsed=watch.elapsed,
                    )
                )
        if key is not None and memo is not None:
            ids = comp.cells[tpos]
            memo.store(key, res_lo[ids], res_hi[ids], n_lps - lps_before)
    # targets that are variables but in no relation with another variable
    lonely = target & var & np.isnan(res_lo)
    res_lo[lonely] = lo[lonely]
    res_hi[lonely] = hi[lonely]

    req_lo = np.where(prim & target, values - lpl, np.nan)
    req_hi = np.where(prim & target, values + upl, np.nan)
    chk = prim & target
    ok = (res_lo <= need_lo) & (res_hi >= need_hi) & (res_hi - res_lo >= spl - tol)
    passed = np.where(chk, ok, True)
    exact = target & (res_hi - res_lo <= tol)
    progress(ProgressEvent(message="Audit finished", fraction=1.0, elapsed=watch.elapsed))
    return AuditResult(
        lower=res_lo,
        upper=res_hi,
        required_lower=req_lo,
        required_upper=req_hi,
        audited=target,
        passed=passed,
        exact=exact,
        tolerance=tol,
        elapsed=watch.elapsed,
        n_lps=n_lps,
    )


def _apply_hints(hints, mcsc, values, lo, hi, var, run_lo, run_hi) -> int:
    """Verify candidate moves and widen run_lo/run_hi with the attacker points they give.

    All moves at once (one sparse product for the relations, segment reductions for the
    steps): a loop over 10⁴ moves of a 10⁵-cell table spent ~0.1 ms each slicing columns
    (docs/design.md D-64). A move is used as the loop used it: variable cells only, every
    relation kept (|M d| ≤ 10⁻⁷·max(1, max|d|)), pushed both ways to the first bound."""
    cand = []
    for cells, d in hints:
        cells = np.asarray(cells, dtype=np.int64)
        d = np.asarray(d, dtype=float)
        if cells.size and cells.size == d.size:
            cand.append((cells, d))
    if not cand:
        return 0
    sizes = np.fromiter((c.size for c, _ in cand), dtype=np.int64, count=len(cand))
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    cells = np.concatenate([c for c, _ in cand])
    d = np.concatenate([x for _, x in cand])
    seg = np.repeat(np.arange(len(cand)), sizes)
    n = var.shape[0]
    inside = (cells >= 0) & (cells < n)
    ok = np.bincount(seg[~inside], minlength=len(cand)) == 0
    safe = np.where(inside, cells, 0)
    ok &= np.bincount(seg[~var[safe]], minlength=len(cand)) == 0
    moves = compressed(
        np.where(inside, d, 0.0), safe, np.r_[starts, cells.size], (n, len(cand)), "csc", mcsc
    )
    residual = relation_residuals(mcsc, moves)
    scale = np.maximum(1.0, np.maximum.reduceat(np.abs(d), starts))
    ok &= residual <= 1e-7 * scale
    keep = ok[seg]
    cells, d, seg = cells[keep], d[keep], seg[keep]
    if cells.size == 0:
        return 0
    first = np.r_[0, np.flatnonzero(np.diff(seg)) + 1]
    a = values[cells]
    room_up = hi[cells] - a
    room_dn = a - lo[cells]
    pos, neg = d > 0, d < 0
    mag = np.where(pos, d, -d)
    with np.errstate(divide="ignore", invalid="ignore"):
        # per move: the largest step up (t_up) and down (t_dn) within every cell's bounds
        r_up = np.where(pos, room_up / mag, np.where(neg, room_dn / mag, np.inf))
        r_dn = np.where(pos, room_dn / mag, np.where(neg, room_up / mag, np.inf))
    counts = np.diff(np.r_[first, seg.size])
    t_up = np.repeat(np.minimum.reduceat(r_up, first), counts)
    t_dn = np.repeat(np.minimum.reduceat(r_dn, first), counts)
    for t in (t_up, -t_dn):
        use = np.isfinite(t) & (t != 0)
        y = np.clip(a[use] + t[use] * d[use], lo[cells[use]], hi[cells[use]])
        np.minimum.at(run_lo, cells[use], y)
        np.maximum.at(run_hi, cells[use], y)
    return int(ok.sum())


class _LocalAttacker:
    """Attacker LPs restricted to suppressed cells near a target (others at their values).

    The restricted feasible set lies inside the full one, so a bound reached here is
    reached by the real attacker too: a cheap sound proof of protection (pass/fail mode).
    """

    def __init__(self, problem, rel, var, lo, hi):
        self.grid = Grid(problem) if has_grid(problem) else None
        self.mcsc = rel.tocsc()
        self.var = var
        self.lo = lo
        self.hi = hi
        self.values = np.clip(np.asarray(problem.values, float), lo, hi)
        inc = rel.tocsr()
        self.pattern = pattern_of(inc).T.tocsr()  # cells × relations
        self.pattern_t = self.pattern.T.tocsr()  # relations × cells
        self.lp: highspy.Highs | None = None  # reused: one small LP per neighbourhood

    def __getitem__(self, idx):
        return np.where(self.var[idx], 0.0, np.inf)

    def improve(self, cell, run_lo, run_hi, settled) -> int:
        """Try growing sets of cells around `cell`; update run_lo/run_hi; returns the LP count."""
        n_lps = 0
        for cells in self._sets(cell):
            cells = cells[self.var[cells]]
            sub = self.mcsc[:, cells]
            rows, inv = np.unique(sub.indices, return_inverse=True)
            if rows.size == 0:
                continue
            a = sp.csc_matrix((sub.data, inv, sub.indptr), shape=(rows.size, cells.size))
            v = self.values[cells]
            zero = np.zeros(rows.size)  # moves from the values: other cells stay put
            if self.lp is None:
                self.lp = new_highs(primal=False)
            h = self.lp
            pass_model(
                h, a.indptr, a.indices, a.data, rows.size, np.zeros(cells.size),
                self.lo[cells] - v, self.hi[cells] - v, zero, zero,
            )  # fmt: skip
            j = int(np.flatnonzero(cells == cell)[0])
            for sense in (1.0, -1.0):
                if settled(cell, sense):
                    continue
                h.changeColCost(j, sense)
                status, x, _ = solve(h)
                n_lps += 1
                if status != "optimal":
                    return n_lps
                np.minimum.at(run_lo, cells, v + x)
                np.maximum.at(run_hi, cells, v + x)
                if self.seen is not None:
                    self.seen(cells, v + x)
            if settled(cell, 1.0) and settled(cell, -1.0):
                break
        return n_lps

    def _sets(self, cell):
        """Grid neighbourhoods (small to large), then balls of variable cells by relation hops."""
        if self.grid is not None:
            levels = ((3, 1), (1 << 30, 1), (1 << 30, 1 << 30))
            for k_sup, climb in levels[:2] if self.quick else levels:
                yield self.grid.neighbourhood(cell, self, k_free=0, k_sup=k_sup, climb=climb)
            if self.quick:
                return
        for limit in self.ball_sizes[:1] if self.quick else self.ball_sizes:
            yield self._ball(cell, limit)

    ball_sizes = (1500, 6000)
    #: called with (cells, point over them) for every LP point: the floor audit's running
    #: points (D-100)
    seen: Callable[[np.ndarray, np.ndarray], None] | None = None
    #: only the small sets (a caller that settles the rest otherwise)
    quick = False

    def _ball(self, cell: int, limit: int) -> np.ndarray:
        """Variable cells reachable from `cell` in few relation hops, stopping near `limit`."""
        inside = np.zeros(self.var.shape[0], dtype=bool)
        inside[cell] = True
        count = 1
        while count < limit:
            rows = (self.pattern_t @ inside.astype(float)) > 0
            grown = ((self.pattern @ rows.astype(float)) > 0) & self.var
            new = grown & ~inside
            n_new = int(new.sum())
            if n_new == 0:
                break
            if count + n_new > limit:
                # keep the closest cells only up to the limit (row-major order is arbitrary
                # but deterministic); the previous layer is complete
                extra = np.flatnonzero(new)[: limit - count]
                inside[extra] = True
                break
            inside |= new
            count += n_new
        return np.flatnonzero(inside)
