"""Attacker LPs and capacity cuts (argusqt/docs/methods.md §2, §3.2) for the optimal
suppression master.

Given a master point x* (integer or fractional) every primary's attacker LPs are solved with
bounds aᵢ − LBᵢx*ᵢ ≤ yᵢ ≤ aᵢ + UBᵢx*ᵢ. Cells with x*ᵢ = 0 are constants, so the LPs are
restricted to the connected block of cells with x* > 0 around the primary; one HiGHS model
per block is re-solved with a new objective per primary and direction (warm start). The
optimal row duals π give, for every cell, dᵢ = cᵢ − (Mᵀπ)ᵢ and the capacity constraint
Σ (dᵢ⁺LBᵢ + dᵢ⁻UBᵢ) xᵢ ≥ PL (valid for all x by weak duality), which is then rewritten over
the free master variables (fixed cells moved to the right-hand side) and strengthened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import highspy
import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.errors import MethodError
from argusqt.model.distinct import sorted_distinct
from argusqt.model.smallcsr import as_float_csr, concat_ranges
from argusqt.protection.core.budget import Deadline, highs_time_limit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.block_memo import BlockMemo
from argusqt.protection.lp.components import RowBlock, new_highs, pass_model
from argusqt.protection.lp.graph import edge_components
from argusqt.protection.lp.move_pool import MovePool

#: the least entry of a non-empty array (np.min without its Python wrappers)
_MIN = np.minimum.reduce
#: x*ᵢ above this makes a cell a variable of the attacker LP.
X_EPS = 1e-9
#: coverage LPs only on blocks up to this many cells: on a 3,500-cell block with 1,400
#: targets one took minutes (dual simplex), far more than the per-primary LPs it spares
SWEEP_CELLS = 1500


class Cancellable(Protocol):
    """What `separate` polls: a CancelToken, or OPT's stop (the user's cancel or the run's
    deadline)."""

    @property
    def cancelled(self) -> bool: ...


@dataclass
class Cut:
    """Σ coef·x[cells] ≥ rhs over free master variables (normalised: rhs = 1, coef ≤ 1)."""

    primary: int
    kind: str  # "upper", "lower", "sliding"
    cells: np.ndarray
    coef: np.ndarray
    rhs: float
    raw_cells: np.ndarray  # every cell with a positive capacity (before fixing/strengthening)
    raw_coef: np.ndarray
    raw_rhs: float  # the protection level

    def lhs(self, x: np.ndarray) -> float:
        return float(np.dot(self.coef, np.asarray(x, dtype=float)[self.cells]))

    def raw_lhs(self, x: np.ndarray) -> float:
        return float(np.dot(self.raw_coef, np.asarray(x, dtype=float)[self.raw_cells]))


@dataclass
class AttackerOutcome:
    """Attacker range of one primary at a master point and the cuts it violates."""

    primary: int
    low: float
    high: float
    cuts: list[Cut]


def _load_lp(
    h: highspy.Highs | None, a: RowBlock, lo: np.ndarray, hi: np.ndarray, b: np.ndarray
) -> highspy.Highs:
    """`h` (a new silent dual-simplex instance if None) given the LP min 0·y, A y = b,
    lo ≤ y ≤ hi: instances are reused because creating one costs more than many warm solves."""
    if h is None:
        h = new_highs(primal=False, presolve=False)
    pass_model(h, a.indptr, a.indices, a.data, a.n_rows, np.zeros(a.n_cols), lo, hi, b, b)
    return h


def _sweep_matrix(
    blk: RowBlock, pos: np.ndarray, sense: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSC arrays of the coverage LP [[M, 0], [±E, −I]]: the block's columns, each target's
    column with its link row (±1) last, then one column (−1) per target. Entries in the
    order scipy's `vstack`/`hstack` and CSC conversion give them (docs/design.md, D-47)."""
    nr, nc, nt = blk.n_rows, blk.n_cols, pos.size
    counts = np.diff(blk.indptr)
    lens = counts.copy()
    lens[pos] += 1
    indptr = np.zeros(nc + nt + 1, dtype=np.int64)
    np.cumsum(np.concatenate([lens, np.ones(nt, dtype=np.int64)]), out=indptr[1:])
    indices = np.empty(int(indptr[-1]), dtype=np.int64)
    data = np.empty(int(indptr[-1]))
    nnz = int(blk.indptr[-1])
    dst = np.repeat(indptr[:nc] - blk.indptr[:-1], counts) + np.arange(nnz)
    indices[dst] = blk.indices
    data[dst] = blk.data
    link_rows = nr + np.arange(nt)
    last = indptr[pos] + counts[pos]
    indices[last] = link_rows
    data[last] = sense
    indices[indptr[nc : nc + nt]] = link_rows
    data[indptr[nc : nc + nt]] = -1.0
    return indptr, indices, data


class OutOfTime(RuntimeError):
    """An attacker LP reached the separator's deadline."""


class Separator:
    """Attacker LPs of every primary of a problem, and the capacity cuts they yield.

    `fixed` holds the master value of cells that are not free variables (1 = suppressed,
    0 = published) and NaN for free ones; by default primaries are fixed 1, cells that are
    neither candidates nor primaries fixed 0 (existing secondaries 11/12 fixed 1).
    """

    #: D-118's savings, each exact (the same LPs, cuts and outcomes; off only in the tests
    #: that show it): a block's model loaded at its first LP, not at its start
    LAZY = True
    #: ... the stop polled once the attacker's work has grown, not before every primary
    POLL_WORK = True
    #: ... a primary's levels read as Python floats, a primary its running extremes
    #: protect returned at once
    SCALARS = True

    def __init__(self, problem: CSPProblem, fixed: np.ndarray | None = None, rel_eps: float = 1e-7):
        self.problem = problem
        self.values = np.asarray(problem.values, dtype=float)
        self.lb = np.maximum(self.values - np.asarray(problem.lower, dtype=float), 0.0)
        self.ub = np.maximum(np.asarray(problem.upper, dtype=float) - self.values, 0.0)
        self.rel = as_float_csr(problem.relations_small)
        self.rel.eliminate_zeros()
        self.rhs, not_additive = exact_rhs(problem)
        #: right-hand sides of the LPs over moves δ = y − a: 0 where the values hold
        self.rhs_dev = np.where(not_additive, self.rhs - self.rel @ self.values, 0.0)
        n = problem.n_cells
        prim = problem.primary
        self.lpl = np.where(prim, np.asarray(problem.lpl, dtype=float), 0.0)
        self.upl = np.where(prim, np.asarray(problem.upl, dtype=float), 0.0)
        spl = np.zeros(n) if problem.spl is None else np.asarray(problem.spl, dtype=float)
        self.spl = np.where(prim, spl, 0.0)
        if fixed is None:
            fixed = default_fixed(problem)
        self.fixed = np.asarray(fixed, dtype=float)
        self.free = np.isnan(self.fixed)
        #: primaries with something to protect
        self.targets = np.flatnonzero(
            prim & ((self.lpl > 0) | (self.upl > 0) | (self.spl > 0)) & (self.fixed == 1)
        )
        scale = max(1.0, float(np.abs(self.values).max(initial=0.0)))
        #: how far an attacker range may fall short of a protection level and still count as
        #: protected. Capped well below the audit tolerance (0.5·10^-d,
        #: argusqt/docs/methods.md §12), so OPT never accepts a pattern the audit rejects:
        #: relative to the largest value alone it exceeded the levels of small primaries
        #: (1e-7 · 5.2e6 = 0.52 > UPL 0.298 on the enterprise table), which then always
        #: "passed" and got no cuts.
        self.eps = min(rel_eps * scale, 0.25 * float(problem.tolerance))
        self.n_lps = 0
        coo = self.rel.tocoo()
        self._nz_row = coo.row.astype(np.int64)
        self._nz_col = coo.col.astype(np.int64)
        self._comp_cache: dict[bytes, tuple[np.ndarray, np.ndarray, int]] = {}
        self._block_cache: dict[bytes, RowBlock] = {}
        #: run the coverage LPs before the per-primary LPs of a block
        self.sweep = True
        self._lp: highspy.Highs | None = None  # the block LP, reloaded per block
        self._fresh = False  # the block LP has not been solved yet
        self._scalar_of: tuple[np.ndarray, ...] | None = None  # `_scalars`' arrays
        self._scalar_list: list[tuple[float, float, float, float]] = []
        self._block_scalars = self._scalar_list  # `_scalars` at the block's start
        #: the block whose model `_model` loads at its first LP (None: loaded)
        self._want: tuple[RowBlock, np.ndarray, np.ndarray, np.ndarray] | None = None
        #: LPs stop at this budget.Deadline (None: no limit); a stopped check fails
        self.deadline: Deadline | None = None
        #: the last separate() stopped early (cancel or deadline): not every primary seen
        self.interrupted = False
        self._lp_sweep: highspy.Highs | None = None
        #: reuse attacker solutions across calls (Certificates): off unless a caller sets it
        self.reuse = False
        self.certs = Certificates(self.lb, self.ub)
        #: other attackers' moves tried after this one's own, under its bounds (`reuse`
        #: only; None: off; D-113)
        self.board: MoveBoard | None = None
        #: the last attacker moves of every LP, scaled to a new point, start each block's
        #: running extremes (with `reuse` only; None: off; docs/design.md, D-82)
        self.pool: MovePool | None = None
        #: blocks met again at the same point replayed, not solved (lp/block_memo.py; only
        #: without `reuse`, whose remembered moves make a block's LPs depend on the past).
        #: Its key holds only the block and its point: everything else a block's outcome
        #: reads (fixed, free, the protection levels, values, eps) must stay as set here
        #: for the separator's life — a change in place would replay outdated cuts
        self.memo: BlockMemo | None = None
        self._additive = not self.rhs_dev.any()
        #: Pareto-optimal cuts (0: off): a failing direction's LP solved again at the point
        #: moved this far toward the all-ones core point, its duals kept when still optimal
        #: at the point; another search, not a better one on the generated set (D-88)
        self.pareto = 0.0
        self.n_pareto = 0  # those second LPs (not in n_lps)
        self.n_pareto_kept = 0  # ... whose duals were still optimal at the point
        self._lp_mw: highspy.Highs | None = None
        self._mw: tuple[np.ndarray, int] | None = None  # the loaded model's columns, last cost

    # ------------------------------------------------------------------ helpers
    @property
    def _scalars(self) -> list[tuple[float, float, float, float]]:
        """(value, UPL, LPL, SPL) per cell as Python floats, made again whenever one of
        those arrays is replaced (they are never changed in place)."""
        arrays = (self.values, self.upl, self.lpl, self.spl)
        of = self._scalar_of
        if of is None or not all(a is b for a, b in zip(arrays, of, strict=True)):
            self._scalar_list = list(zip(*(a.tolist() for a in arrays), strict=True))
            self._scalar_of = arrays
        return self._scalar_list

    def full_point(self, x: np.ndarray) -> np.ndarray:
        """x over all cells: the master point on free cells, the fixed values elsewhere."""
        x = np.asarray(x, dtype=float)
        return np.where(self.free, np.clip(x, 0.0, 1.0), self.fixed)

    def _components(self, var: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Block label per variable cell and per relation (−1 if not touching a variable).

        One graph over cells and relations (edges: a variable cell in a relation), built from
        the relation matrix's nonzeros kept once; patterns repeat (every 0/1 candidate is
        checked and separated), so the last few are cached.
        """
        key = var.tobytes()
        hit = self._comp_cache.get(key)
        if hit is not None:
            return hit
        n = self.rel.shape[1]
        m = self.rel.shape[0]
        keep = var[self._nz_col]
        cols = self._nz_col[keep]
        rows = self._nz_row[keep]
        _, labels = edge_components(n + m, rows + n, cols)
        cell_lab = np.where(var, labels[:n], -1).astype(np.int64)
        row_touch = np.zeros(m, dtype=bool)
        row_touch[rows] = True
        row_lab = np.where(row_touch, labels[n:], -1).astype(np.int64)
        used = sorted_distinct(np.concatenate([cell_lab[var], row_lab[row_touch]]))
        # compact labels 0..k-1 (only their equality matters to callers)
        remap = np.full(int(labels.max(initial=-1)) + 2, -1, dtype=np.int64)
        remap[used] = np.arange(used.size)
        cell_lab = np.where(cell_lab >= 0, remap[cell_lab], -1)
        row_lab = np.where(row_lab >= 0, remap[row_lab], -1)
        out = (cell_lab, row_lab, int(used.size))
        if len(self._comp_cache) >= 64:
            self._comp_cache.pop(next(iter(self._comp_cache)))
        self._comp_cache[key] = out
        return out

    def _block(self, cells: np.ndarray, rows: np.ndarray) -> RowBlock:
        """The block's LP matrix and its relations' nonzeros, cached: blocks repeat."""
        key = cells.tobytes() + b"|" + rows.tobytes()
        hit = self._block_cache.get(key)
        if hit is None:
            hit = RowBlock.of(self.rel, cells, rows)
            if len(self._block_cache) >= 256:
                self._block_cache.pop(next(iter(self._block_cache)))
            self._block_cache[key] = hit
        return hit

    def _cut(self, p: int, kind: str, d: np.ndarray, pl: float) -> Cut | None:
        """Capacity cut Σ (d⁺LB + d⁻UB) x ≥ pl over all cells, fixed cells folded, strengthened."""
        idx = np.flatnonzero(d)
        return self._cut_sparse(p, kind, idx, d[idx], pl)

    def _cut_sparse(
        self, p: int, kind: str, idx: np.ndarray, d: np.ndarray, pl: float
    ) -> Cut | None:
        """`_cut` with d given on the cells `idx` only (zero elsewhere)."""
        cap = np.maximum(d, 0.0) * self.lb[idx] + np.maximum(-d, 0.0) * self.ub[idx]
        nz = cap > 0
        cells = idx[nz]
        coef = cap[nz]
        fixed_part = float(np.dot(coef, np.where(self.free[cells], 0.0, self.fixed[cells])))
        rhs = pl - fixed_part
        if rhs <= self.eps:
            return None
        fmask = self.free[cells]
        fcells = cells[fmask]
        fcoef = np.minimum(coef[fmask], rhs) / rhs
        return Cut(p, kind, fcells, fcoef, 1.0, cells, coef, float(pl))

    # ------------------------------------------------------------------ public
    def separate(
        self,
        x: np.ndarray,
        primaries: np.ndarray | None = None,
        *,
        stop_at_first: bool = False,
        cancel: Cancellable | None = None,
    ) -> list[AttackerOutcome]:
        """Solve the attacker LPs of the primaries at master point x; outcomes with cuts.

        Returns one outcome per primary whose protection fails at x (with its violated,
        strengthened cuts). `stop_at_first` returns after the first failing primary (check).
        """
        self.interrupted = False
        xf = self.full_point(x)
        var = xf > X_EPS
        # coverage LPs pay off at 0/1 points (mostly protected); at fractional ones most
        # primaries fail anyway
        sweep = self.sweep and bool(np.all((xf <= X_EPS) | (xf >= 1 - X_EPS)))
        targets = self.targets if primaries is None else np.asarray(primaries, dtype=np.int64)
        if targets.size == 0:
            return []
        cell_lab, row_lab, _ = self._components(var)
        # the LPs move cells away from their values (y = a + δ): rows A δ = 0 hold exactly
        # at the true table, where A y = b with totals of 10⁸ misses by more than HiGHS's
        # tolerance and made it call the true table infeasible
        lo = -self.lb * xf
        hi = self.ub * xf
        self._xf = xf  # the remembered moves are scaled to it (Certificates.reach)
        out: list[AttackerOutcome] = []
        # group the targets by block
        t_lab = cell_lab[targets]
        order = np.argsort(t_lab, kind="stable")
        targets, t_lab = targets[order], t_lab[order]
        starts = np.flatnonzero(np.concatenate([[True], t_lab[1:] != t_lab[:-1]]))
        ends = np.append(starts[1:], targets.size)
        for s, e in zip(starts, ends, strict=True):
            lab = t_lab[s]
            block_t = targets[s:e]
            cells = np.flatnonzero(cell_lab == lab)
            rows = np.flatnonzero(row_lab == lab)
            if rows.size == 0:  # isolated variable cells: the attacker moves them freely
                for p in block_t:
                    a_p = self.values[p]
                    res = self._judge(p, a_p + lo[p], a_p + hi[p], None, None)
                    if res is not None:
                        out.append(res)
                        if stop_at_first:
                            return out
                continue
            args = (cells, rows, block_t, lo[cells], hi[cells], sweep)
            if self.memo is not None and not self.reuse:
                stopped = self.memo.replay(self, args, out, stop_at_first, cancel)
            else:
                stopped = self._separate_block(*args, out, stop_at_first, cancel)
            if stopped:
                return out
        return out

    def _separate_block(
        self,
        cells: np.ndarray,
        rows: np.ndarray,
        block_t: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        sweep: bool,
        out: list[AttackerOutcome],
        stop_at_first: bool,
        cancel: Cancellable | None,
        record: list[tuple[AttackerOutcome | None, int]] | None = None,
    ) -> bool:
        """The attacker LPs of one block's targets (`lo`, `hi`: its cells' move bounds),
        failing outcomes appended to `out`; True when the call must return (the first
        failure with `stop_at_first`, a cancel, the deadline). `record` gets the coverage
        LPs' count, then each target's outcome and the attacker LPs it took: BlockMemo."""
        blk = self._block(cells, rows)
        # the block's model is given to HiGHS at its first LP (`_model`): most blocks of a
        # branch-and-cut point need none, their primaries settled by remembered moves (D-118)
        self._want = (blk, lo, hi, self.rhs_dev[rows])
        if not self.LAZY:  # loaded at the block's start, as before D-118
            self._model()
        self._block_scalars = self._scalars  # checked once per block
        pos = np.searchsorted(cells, block_t)
        # running extremes of δ over feasible attacker solutions (the true table: δ = 0)
        self._run_lo = np.zeros(cells.size)
        self._run_hi = np.zeros(cells.size)
        if self.pool is not None and self.reuse and self._additive:
            # earlier LPs' moves scaled to this point: extremes the attacker reaches (D-82)
            self._run_lo, self._run_hi = self.pool.extremes(cells, self._xf)
        self._last = -1
        self._cells = cells
        self._rows = rows
        self._mw = None
        before = self.n_lps
        if 3 <= pos.size and cells.size <= SWEEP_CELLS and sweep:
            self._sweep(blk, lo, hi, self.rhs_dev[rows], pos, block_t)
        if record is not None:  # the coverage LPs, spent before the first poll
            record.append((None, self.n_lps - before))
            before = self.n_lps
        polled = -1  # the work count at the last poll
        for p, j in zip(block_t, pos, strict=True):
            # the stop is polled again only once this attacker's work (LPs solved, LPs
            # another's move spared) has grown: a budget of LPs is reached at the same
            # primary, and the clock is read once per LP instead of per primary (D-118)
            if cancel is not None and (
                self.n_lps + self.certs.borrowed != polled or not self.POLL_WORK
            ):
                polled = self.n_lps + self.certs.borrowed
                if cancel.cancelled:
                    self.interrupted = True
                    return True
            try:
                res = self._solve_primary(blk, int(p), int(j))
            except OutOfTime:
                self.interrupted = True
                return True
            if record is not None:
                record.append((res, self.n_lps - before))
                before = self.n_lps
            if res is not None:
                out.append(res)
                if stop_at_first:
                    return True
        return False

    def _solve_primary(self, blk: RowBlock, p: int, j: int):
        """Both attacker LPs of primary p (column j of the block model), skipped when an
        earlier attacker solution of the block (or a remembered move, `reuse`) already shows
        p protected in that direction. Reduced costs only for a direction that fails: only
        its cut needs them."""
        # Python floats of the same binary64 values: the same sums and comparisons, without
        # numpy's scalar objects (D-118)
        if self.SCALARS:
            a_p, upl, lpl, spl = self._block_scalars[p]
            hi_val, lo_val = a_p + self._run_hi.item(j), a_p + self._run_lo.item(j)
        else:  # numpy's scalars, as before D-118
            a_p, upl, lpl, spl = self.values[p], self.upl[p], self.lpl[p], self.spl[p]
            hi_val, lo_val = a_p + self._run_hi[j], a_p + self._run_lo[j]
        n = self.values.shape[0]
        d_up = d_lo = None
        sliding = spl > 0
        need_up = sliding or (upl > 0 and hi_val - a_p < upl + self.eps)
        need_lo = sliding or (lpl > 0 and a_p - lo_val < lpl + self.eps)
        if not (need_up or need_lo) and self.SCALARS:
            # not sliding, each level met by eps on the very differences `_judge` tests
            # against level − eps: protected, as `_judge` would say (D-118)
            return None
        reuse = self.reuse and not sliding and self._additive
        if need_up and reuse:
            moved = self._reach(p, 1, upl + self.eps)
            if moved >= upl + self.eps:  # an earlier attacker move still fits
                hi_val, need_up = a_p + moved, False
                self.certs.reused += 1
        if need_lo and reuse:
            moved = self._reach(p, -1, lpl + self.eps)
            if moved >= lpl + self.eps:
                lo_val, need_lo = a_p - moved, False
                self.certs.reused += 1
        if need_up:
            obj, pi = self._run(j, -1.0)
            hi_val = a_p - obj
            if sliding or hi_val - a_p < upl - self.eps:
                d_up = self._reduced(blk, pi, p, -1.0, n)
                if self.pareto > 0:
                    d_up = self._pareto_dual(blk, p, -1.0, d_up, -obj)
            elif reuse and hi_val - a_p >= upl + self.eps:
                self.certs.keep(p, 1, self._cells, self._y)
        if need_lo:
            obj, pi = self._run(j, 1.0)
            lo_val = a_p + obj
            if sliding or a_p - lo_val < lpl - self.eps:
                d_lo = self._reduced(blk, pi, p, 1.0, n)
                if self.pareto > 0:
                    d_lo = self._pareto_dual(blk, p, 1.0, d_lo, -obj)
            elif reuse and a_p - lo_val >= lpl + self.eps:
                self.certs.keep(p, -1, self._cells, self._y)
        eps = self.eps
        if self.SCALARS and not (
            (upl > 0 and hi_val - a_p < upl - eps)
            or (lpl > 0 and a_p - lo_val < lpl - eps)
            or (spl > 0 and hi_val - lo_val < spl - eps)
        ):
            return None  # `_judge`'s three tests on the same floats: protected (D-118)
        return self._judge(p, lo_val, hi_val, d_up, d_lo)

    def _reach(self, p: int, sense: int, need: float) -> float:
        """How far a remembered move takes p at this point: this attacker's own, else (below
        `need`) another attacker's under this one's bounds (`board`, D-113), whose scaled
        move then widens the block's running extremes as an LP's solution would."""
        moved = self.certs.reach(p, sense, self._xf)
        if moved >= need or self.board is None:
            return moved
        got = self.board.reach(p, sense, self._xf, self.lb, self.ub, self.certs)
        if got is None or got[0] < need:
            return moved
        self.certs.borrowed += 1
        _, cells, y = got
        at = np.searchsorted(self._cells, cells)
        inside = at < self._cells.size
        inside[inside] = self._cells[at[inside]] == cells[inside]
        np.minimum.at(self._run_lo, at[inside], y[inside])
        np.maximum.at(self._run_hi, at[inside], y[inside])
        return got[0]

    def _pareto_dual(
        self, blk: RowBlock, p: int, sense: float, d: np.ndarray, reach: float
    ) -> np.ndarray:
        """Reduced costs of another optimal dual of p's failing LP, from its LP at x* + μ(1 − x*)
        (Magnanti–Wong by perturbation): any dual gives a valid cut; kept when still optimal."""
        if self._mw is None:
            # every cell of the block's relations, the published ones given a room of μ: the
            # dual then prefers little capacity on them (their rows elsewhere are left out, a
            # relaxation, so its duals stay duals of the attacker's LP)
            cols = sorted_distinct(blk.t_col)
            xf = self._xf[cols]
            xm = np.where(self.free[cols], xf + self.pareto * (1.0 - xf), xf)
            lo = np.where(xm > 0, -self.lb[cols] * xm, 0.0)  # no inf·0 on unbounded cells
            hi = np.where(xm > 0, self.ub[cols] * xm, 0.0)
            if self._lp_mw is None:
                self._lp_mw = new_highs(primal=False, presolve=False)
            mb = self._block(cols, self._rows)
            _load_lp(self._lp_mw, mb, lo, hi, self.rhs_dev[self._rows])
            self._lp_mw.setOptionValue("simplex_strategy", 1)
            self._mw = (cols, -1)
        cols, last = self._mw
        h = self._lp_mw
        assert h is not None
        jj = int(np.searchsorted(cols, p))
        if last >= 0 and last != jj:
            h.changeColCost(last, 0.0)
        h.changeColCost(jj, sense)
        self._mw = (cols, jj)
        if self.deadline is not None:
            highs_time_limit(h, self.deadline)
        h.run()
        self.n_pareto += 1
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return d  # the LP's own dual serves (the deadline, or numerical trouble)
        h.setOptionValue("simplex_strategy", 4)  # primal re-solves after a cost change
        pi = np.asarray(h.getSolution().row_dual, dtype=float)
        d2 = self._reduced(blk, pi, p, sense, self.values.shape[0])
        idx = np.flatnonzero(d2)
        cap = np.maximum(d2[idx], 0.0) * self.lb[idx] + np.maximum(-d2[idx], 0.0) * self.ub[idx]
        at_x = float(np.dot(np.nan_to_num(cap), self._xf[idx]))
        if at_x > reach + self.eps + 1e-9 * abs(reach):  # μ moved the optimum: not optimal at x*
            return d
        self.n_pareto_kept += 1
        return d2

    def _sweep(self, blk: RowBlock, lo, hi, b, pos: np.ndarray, targets: np.ndarray) -> None:
        """Coverage LPs: move all targets of a block up (then down) towards their levels at
        once, max Σ tₚ/PLₚ with tₚ ≤ ±(yₚ − aₚ), tₚ ≤ PLₚ. Their solutions usually show most
        primaries protected (running extremes), sparing one LP per primary and direction."""
        nc, nt = blk.n_cols, pos.size
        a_t = np.zeros(nt)  # δ of the targets at the true table
        for sense, pl in ((1.0, self.upl[targets]), (-1.0, self.lpl[targets])):
            want = pl > 0
            if want.sum() < 3:
                continue
            cap = np.where(want, pl + 2 * self.eps, 0.0)
            indptr, indices, data = _sweep_matrix(blk, pos, sense)
            if self._lp_sweep is None:
                self._lp_sweep = new_highs(primal=False, presolve=False)
            h = self._lp_sweep
            rows_b = np.concatenate([b, sense * a_t])
            pass_model(
                h,
                indptr,
                indices,
                data,
                blk.n_rows + nt,
                np.zeros(nc + nt),
                np.concatenate([lo, np.zeros(nt)]),
                np.concatenate([hi, cap]),
                rows_b,
                rows_b,
            )
            h.changeRowsBounds(  # type: ignore[attr-defined]  # missing from highspy's stubs
                nt,
                np.arange(b.size, b.size + nt, dtype=np.int32),
                sense * a_t,
                np.full(nt, highspy.kHighsInf),
            )
            h.changeColsCost(
                nt,
                np.arange(nc, nc + nt, dtype=np.int32),
                np.where(want, -1.0 / np.maximum(pl, 1e-12), 0.0),
            )
            h.run()
            self.n_lps += 1
            if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
                y = np.asarray(h.getSolution().col_value, dtype=float)[:nc]
                np.minimum(self._run_lo, y, out=self._run_lo)
                np.maximum(self._run_hi, y, out=self._run_hi)

    def _starved(self) -> None:
        """HiGHS stopped at its time limit, which is the run's wall-clock backstop: the run's
        deadline is marked hit and starved, and the check stops (OutOfTime)."""
        if self.deadline is not None:
            self.deadline.starve()
        raise OutOfTime("attacker LP stopped at the wall-clock backstop")

    def _model(self) -> highspy.Highs:
        """The block's LP, loaded now if this is its first LP: the model and the state its
        first solve starts from are those a load at the block's start gave."""
        if self._want is not None:
            blk, lo, hi, b = self._want
            self._want = None
            self._lp = _load_lp(self._lp, blk, lo, hi, b)
            self._lp.setOptionValue("simplex_strategy", 1)  # dual from scratch, primal after
            self._fresh = True
        assert self._lp is not None
        return self._lp

    def _run(self, j: int, sense: float) -> tuple[float, np.ndarray]:
        """Optimise ±y_j on the block model (`_model()`'s); objective value and row duals."""
        h = self._model()
        if self._last >= 0 and self._last != j:
            h.changeColCost(self._last, 0.0)
        h.changeColCost(j, sense)
        self._last = j
        if self.deadline is not None:  # one LP of a big block can take minutes
            highs_time_limit(h, self.deadline)  # the wall-clock backstop only (D-96)
        h.run()
        self.n_lps += 1
        if self._fresh:
            # after an objective change the basis stays primal feasible: primal simplex
            # re-solves are many times faster than dual ones (minutes → seconds on a
            # 3,500-cell block; see components.make_highs)
            h.setOptionValue("simplex_strategy", 4)
            self._fresh = False
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kTimeLimit:
            self._starved()
        if status != highspy.HighsModelStatus.kOptimal:
            # the true table is feasible, so this is numerical trouble: retry from scratch
            h.clearSolver()
            h.run()
            status = h.getModelStatus()
            if status == highspy.HighsModelStatus.kTimeLimit:  # the deadline, not a failure
                self._starved()
            if status != highspy.HighsModelStatus.kOptimal:
                raise RuntimeError(f"attacker LP not solved: {h.modelStatusToString(status)}")
        obj = float(h.getObjectiveValue())  # getInfo() copies every field (D-66)
        sol = h.getSolution()
        y = np.asarray(sol.col_value, dtype=float)
        self._y = y
        if self.pool is not None and self.reuse and self._additive:
            self.pool.add(self._cells, y)
        np.minimum(self._run_lo, y, out=self._run_lo)
        np.maximum(self._run_hi, y, out=self._run_hi)
        return obj, np.asarray(sol.row_dual, dtype=float)

    @staticmethod
    def _reduced(blk: RowBlock, pi, p: int, c_p: float, n: int) -> np.ndarray:
        """dᵢ = cᵢ − (Mᵀπ)ᵢ over all cells (HiGHS: col_dual = c − Aᵀ·row_dual)."""
        d = blk.reduced(pi, n)
        d[p] += c_p
        return d

    def _judge(self, p, lo_val, hi_val, d_up, d_lo) -> AttackerOutcome | None:
        """Outcome with violated cuts, or None if p is protected in every direction."""
        a_p = self.values[p]
        cuts: list[Cut] = []
        fail = False
        if self.upl[p] > 0 and hi_val - a_p < self.upl[p] - self.eps:
            fail = True
            if d_up is not None:
                c = self._cut(p, "upper", d_up, self.upl[p])
                if c is not None:
                    cuts.append(c)
        if self.lpl[p] > 0 and a_p - lo_val < self.lpl[p] - self.eps:
            fail = True
            if d_lo is not None:
                c = self._cut(p, "lower", d_lo, self.lpl[p])
                if c is not None:
                    cuts.append(c)
        if self.spl[p] > 0 and hi_val - lo_val < self.spl[p] - self.eps:
            fail = True
            if d_up is not None and d_lo is not None:
                c = self._sliding_cut(p, (d_up, d_lo))
                if c is not None:
                    cuts.append(c)
        if not fail:
            return None
        return AttackerOutcome(int(p), float(lo_val), float(hi_val), cuts)

    def _sliding_cut(self, p: int, ds: tuple[np.ndarray, np.ndarray]) -> Cut | None:
        """Σ ((d_up⁺+d_lo⁺)LB + (d_up⁻+d_lo⁻)UB) x ≥ SPL (argusqt/docs/methods.md §3.2)."""
        d_up, d_lo = ds
        cap = (np.maximum(d_up, 0) + np.maximum(d_lo, 0)) * self.lb + (
            np.maximum(-d_up, 0) + np.maximum(-d_lo, 0)
        ) * self.ub
        cells = np.flatnonzero(cap > 0)
        coef = cap[cells]
        fixed_part = float(np.dot(coef, np.where(self.free[cells], 0.0, self.fixed[cells])))
        rhs = self.spl[p] - fixed_part
        if rhs <= self.eps:
            return None
        fmask = self.free[cells]
        return Cut(
            p,
            "sliding",
            cells[fmask],
            np.minimum(coef[fmask], rhs) / rhs,
            1.0,
            cells,
            coef,
            float(self.spl[p]),
        )

    def is_protected(self, x: np.ndarray, cancel: Cancellable | None = None) -> bool:
        """True iff every primary passes both attacker LPs at the 0/1 point x (False when a
        cancel or the deadline stopped the check before every primary was seen)."""
        fails = self.separate(x, stop_at_first=True, cancel=cancel)
        return not fails and not self.interrupted

    def relation_cuts(self) -> list[Cut]:
        """Initial cuts: a relation containing a primary needs another suppressed cell
        (argusqt/docs/methods.md §3.2).

        For each target p, each relation r holding it (ascending) and each direction with a
        level: π on r chosen so that d_p = 0 (d = −(c_p/coef_p)·r's other entries), its
        capacity cut as `_cut_sparse` makes it. The entries of every (p, r, direction) are
        gathered at once and each cut's arithmetic is elementwise (so the same numbers as one
        `_cut_sparse` per cut); only the fixed part keeps its own `np.dot` per cut, as its
        summation order is BLAS's (docs/design.md, D-80)."""
        t = np.asarray(self.targets, dtype=np.int64)
        if t.size == 0:
            return []
        rel = self.rel
        csc = rel.tocsc()
        # (p, r) pairs in the order of the loop over targets, then their relations
        at, pos = _segments(csc.indptr, t)
        p_of = t[at]
        r_of = csc.indices[pos].astype(np.int64)
        coef_p = csc.data[pos]
        # × the two directions (upper first), kept where the level is positive
        k_p = np.repeat(p_of, 2)
        k_r = np.repeat(r_of, 2)
        k_coef = np.repeat(coef_p, 2)
        k_cp = np.tile(np.array([-1.0, 1.0]), p_of.size)
        k_pl = np.empty(k_p.size)
        k_pl[0::2] = self.upl[p_of]
        k_pl[1::2] = self.lpl[p_of]
        want = k_pl > 0
        k_p, k_r, k_coef, k_cp, k_pl = k_p[want], k_r[want], k_coef[want], k_cp[want], k_pl[want]
        if k_p.size == 0:
            return []
        # every entry of each relation, less the target itself
        trip, e_pos = _segments(rel.indptr, k_r)
        cells = rel.indices[e_pos]
        keep = cells != k_p[trip]
        trip, cells, vals = trip[keep], cells[keep], rel.data[e_pos[keep]]
        d = -(k_cp / k_coef)[trip] * vals
        cap = np.maximum(d, 0.0) * self.lb[cells] + np.maximum(-d, 0.0) * self.ub[cells]
        nz = cap > 0
        trip, cells, coef = trip[nz], cells[nz], cap[nz]
        fixed_val = np.where(self.free[cells], 0.0, self.fixed[cells])
        bounds = np.searchsorted(trip, np.arange(k_p.size + 1))
        rhs = np.empty(k_p.size)
        for k in range(k_p.size):
            a, b = bounds[k], bounds[k + 1]
            rhs[k] = k_pl[k] - float(np.dot(coef[a:b], fixed_val[a:b]))
        # a cut needs rhs > eps and a free cell (a cut of fixed cells only is dropped)
        fmask = self.free[cells]
        made = rhs > self.eps
        r_e = np.where(made, rhs, 1.0)[trip]  # the others make no cut
        fcoef = np.minimum(coef, r_e) / r_e
        n_free = np.bincount(trip[fmask], minlength=k_p.size)
        cuts: list[Cut] = []
        for k in np.flatnonzero(made & (n_free > 0)).tolist():
            a, b = bounds[k], bounds[k + 1]
            f = fmask[a:b]
            cuts.append(
                Cut(
                    int(k_p[k]),
                    "upper" if k_cp[k] < 0 else "lower",
                    cells[a:b][f].copy(),
                    fcoef[a:b][f].copy(),
                    1.0,
                    cells[a:b].copy(),
                    coef[a:b].copy(),
                    float(k_pl[k]),
                )
            )
        return _dedupe(cuts)


def _segments(indptr: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For compressed arrays with pointer `indptr`: (the position in `keys` of each entry,
    the entries' positions) over the segments of `keys`, in order."""
    starts = indptr[keys]
    lens = indptr[keys + 1] - starts
    return np.repeat(np.arange(keys.size, dtype=np.int64), lens), concat_ranges(starts, lens)


class Certificates:
    """Per primary and direction, the last attacker move δ (A δ = 0) that reached its level.

    At a new master point the move scaled by t = min(1, minᵢ capᵢ(x)/|δᵢ|) is still feasible
    (capᵢ(x) = UBᵢxᵢ up, LBᵢxᵢ down), so t·|δₚ| is a range the attacker reaches there: when
    it meets the level, the primary is protected in that direction without an LP (in OPT's
    branch-and-cut 92 % of the attacker LPs pass, at points close to earlier ones).
    """

    def __init__(self, lb: np.ndarray, ub: np.ndarray):
        self.lb, self.ub = lb, ub
        #: (p, sense) → (cells moved, capacity per unit of x over |δ| there, |δₚ|)
        self.moves: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, float]] = {}
        self.reused = 0  # attacker LPs spared (counted by the caller that skips them)
        #: ... of which by another attacker's move (MoveBoard, D-113)
        self.borrowed = 0
        #: where every attacker's kept moves are posted too (None: this one's only; D-113)
        self.board: MoveBoard | None = None

    def keep(self, p: int, sense: int, cells: np.ndarray, y: np.ndarray) -> None:
        """Remember the attacker's move of primary p in direction sense (+1 up, −1 down)."""
        nz = y.nonzero()[0]  # y is 1-D: np.flatnonzero without its ravel
        c, d = cells[nz], y[nz]
        at = (c == p).nonzero()[0]
        if at.size == 0 or sense * d[at[0]] <= 0:
            return
        per_x = np.where(d > 0, self.ub[c], self.lb[c]) / np.abs(d)
        self.moves[(p, sense)] = (c, per_x, abs(float(d[at[0]])))
        if self.board is not None:
            self.board.post(p, sense, c, d, abs(float(d[at[0]])), self)

    def reach(self, p: int, sense: int, xf: np.ndarray) -> float:
        """How far the remembered move, scaled to fit x, takes p in direction sense (0: none
        remembered)."""
        got = self.moves.get((p, sense))
        if got is None:
            return 0.0
        cells, per_x, dp = got
        x = xf[cells]
        # xf has no NaN (full_point): its least entry > 0 iff every one is (D-118: the
        # ufuncs' reduce, without numpy's Python wrappers)
        if not _MIN(x) > 0:  # no move through a published cell
            return 0.0
        # x > 0 everywhere: an infinite bound gives inf, never nan (no errstate needed: it
        # cost more than the product, D-66)
        return min(1.0, float(_MIN(per_x * x))) * dp


class MoveBoard:
    """The newest attacker moves of every attacker (outsider and known insiders) per primary
    and direction, for another attacker to try under its own bounds before an LP (D-113).

    A move δ (A δ = 0) scaled by t = min(1, minᵢ capᵢ(x)/|δᵢ|) with that attacker's
    capacities (its floors; its known cells at x = 0 allow no move) is a solution of that
    attacker's LP at x: t·|δₚ| is a range it reaches, so a level met there needs no LP.
    """

    #: moves kept per primary and direction, the newest first
    KEEP = 2

    def __init__(self) -> None:
        self.moves: dict[tuple[int, int], list[tuple[np.ndarray, np.ndarray, float, object]]]
        self.moves = {}

    def post(
        self, p: int, sense: int, cells: np.ndarray, d: np.ndarray, dp: float, owner: object
    ) -> None:
        """Keep attacker `owner`'s move δ (on `cells`; |δₚ| = dp) of primary p, direction sense."""
        got = self.moves.setdefault((p, sense), [])
        got.insert(0, (cells, d, dp, owner))
        del got[self.KEEP :]

    def reach(
        self, p: int, sense: int, xf: np.ndarray, lb: np.ndarray, ub: np.ndarray, owner: object
    ) -> tuple[float, np.ndarray, np.ndarray] | None:
        """The farthest another attacker's move takes p under the bounds `lb`, `ub` at the
        point xf, with that move's cells and scaled δ (None: no move fits)."""
        best = None
        for cells, d, dp, who in self.moves.get((p, sense), ()):
            if who is owner:
                continue
            x = xf[cells]
            if not (x > 0).all():  # no move through a published (or known) cell
                continue
            t = min(1.0, float((np.where(d > 0, ub[cells], lb[cells]) * x / np.abs(d)).min()))
            if t > 0 and (best is None or t * dp > best[0]):
                best = (t * dp, cells, t * d)
        return best


def _dedupe(cuts: list[Cut]) -> list[Cut]:
    """Drop cuts identical (same cells and coefficients) to an earlier one."""
    seen: set[bytes] = set()
    out = []
    for c in cuts:
        key = c.cells.tobytes() + np.round(c.coef, 9).tobytes()
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


#: relative size of a relation's miss that is float noise of summing the cell values
NOISE = 1e-7


def exact_rhs(problem: CSPProblem) -> tuple[np.ndarray, np.ndarray]:
    """Right-hand sides the cell values satisfy exactly, and the relations missed by more.

    Totals summed in floating point miss their relation by ~1e-16 of their size: on values
    of 10⁸ that exceeds HiGHS's absolute feasibility tolerance (1e-7), and an attacker LP
    whose every cell sits at a bound is then "infeasible" at the true table. The attacker
    of a published table knows the relations exactly, so taking the noise into the
    right-hand side changes nothing an audit could see (its tolerance is ≥ 5·10⁻⁷).
    """
    rel = as_float_csr(problem.relations_small)
    rhs = np.asarray(problem.rhs, dtype=float)
    if rel.shape[0] == 0:
        return rhs, np.zeros(0, dtype=bool)
    values = np.asarray(problem.values, dtype=float)
    residual = rel @ values - rhs
    scale = abs(rel) @ np.abs(values)
    bad = np.abs(residual) > NOISE * np.maximum(scale, 1.0)
    return rhs + np.where(bad, 0.0, residual), bad


def require_additive(problem: CSPProblem) -> None:
    """MethodError naming the first relation the cell values do not satisfy.

    Every attacker LP starts from the true table, so relations that do not hold for the
    values make them infeasible; say so before any solver runs instead of failing inside
    one (SCIP callbacks turn it into "unspecified error").
    """

    rhs, bad = exact_rhs(problem)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        row = sp.csr_matrix(problem.relations)[r]
        miss = float((row @ np.asarray(problem.values, dtype=float))[0] - problem.rhs[r])
        raise MethodError(
            f"the table is not additive: relation {r + 1} misses its right-hand side by "
            f"{miss:.6g} ({int(bad.sum())} relations do not hold); protect an additive "
            "table (for tabular input, check the totals)"
        )


def default_fixed(problem: CSPProblem) -> np.ndarray:
    """Master values of non-free cells: primaries and existing secondaries 1, 10/14 etc. 0."""
    fixed = np.full(problem.n_cells, np.nan)
    cand = problem.candidate
    fixed[~cand] = 0.0
    fixed[problem.primary | problem.secondary] = 1.0
    return fixed
