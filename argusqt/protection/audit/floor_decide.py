"""Whether a group's LP reaches the level, decided from the true values (D-109, D-112).

On an additive block the zero move is a point of every attacker's LP. With each move split
in two non-negative parts (δ = δ⁺ − δ⁻), the all-zero start is a vertex; the primary's own
part fixed at the level and no objective, dual simplex from that slack basis only has to
repair the primary's few relations: tens of iterations on b31808's 10,414-cell block where
the group LP from the anchor's basis takes thousands. Its point is a candidate only: the
caller checks it (bounds, relations, level) before it stands for anything. A decision is
first made on the cells within LOCAL_DEPTH relations of the primary, the others held at
their values (D-112): HiGHS's fixed cost of a run grows with the model, not the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from argusqt.model.smallcsr import concat_ranges
from argusqt.protection.lp.components import UP, new_highs, pass_model, solve

if TYPE_CHECKING:
    import highspy
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

#: simplex iterations one decision may take: past it the group goes the plain way (a count)
DECIDE_ITERATIONS = 5000

#: relations around the primary a local decision spans (0: the block's model only; D-112)
LOCAL_DEPTH = 5
#: a local model is used only while it spans at most this share of the block's cells
LOCAL_SHARE = 0.5


class _Split:
    """One HiGHS model of relations over (δ⁺, δ⁻) with no objective, solved by dual simplex
    from its slack basis; it keeps the bounds it holds and updates only those that change."""

    def __init__(self, matrix: sp.csc_matrix, miss: np.ndarray) -> None:
        n = matrix.shape[1]
        zero = np.zeros(2 * n)
        # [A, −A] by columns from A's arrays: hstack's very arrays, without its conversions
        ptr, nnz = matrix.indptr, int(matrix.indptr[-1])
        self.h: highspy.Highs = new_highs(primal=False, presolve=False)
        pass_model(
            self.h,
            np.concatenate([ptr, ptr[1:] + nnz]),
            np.concatenate([matrix.indices[:nnz], matrix.indices[:nnz]]),
            np.concatenate([matrix.data[:nnz], -matrix.data[:nnz]]),
            matrix.shape[0],
            zero,
            zero,
            zero,
            miss,
            miss,
        )
        # dual simplex: with no objective every basis is dual feasible
        self.h.setOptionValue("simplex_strategy", 1)
        self.h.setOptionValue("simplex_iteration_limit", DECIDE_ITERATIONS)
        self.floor, self.ceiling = zero.copy(), zero.copy()  # the model's bounds now
        self.n = n
        self.matrix, self.miss = matrix, miss

    def bounds(self, lo, hi, j: int, direction: int, level: float, capped: bool) -> bool:
        """Each part's bounds; move j's part on the attacked side held at the level or (capped)
        kept below it, its other side shut. False when the level is beyond its bound."""
        up = np.maximum(hi, 0.0)
        down = np.maximum(-lo, 0.0)
        floor = np.zeros(2 * self.n)
        side, other = (up, down) if direction == UP else (down, up)
        at = j if direction == UP else self.n + j
        if capped:
            side[j] = min(side[j], abs(level))
        elif abs(level) > side[j]:
            return False
        else:
            floor[at] = abs(level)
        other[j] = 0.0
        ceiling = np.concatenate([up, down])
        # only the parts whose bounds differ from the model's: consecutive groups share most
        # floors, and HiGHS's update of all 2n columns was 16 % of b31808's HEUR run
        moved = np.flatnonzero((floor != self.floor) | (ceiling != self.ceiling))
        if moved.size:
            self.h.changeColsBounds(
                int(moved.size),
                np.ascontiguousarray(moved, dtype=np.int32),
                np.ascontiguousarray(floor[moved]),
                np.ascontiguousarray(ceiling[moved]),
            )
            self.floor, self.ceiling = floor, ceiling
        return True

    def point(self, lo, hi, j: int, direction: int, level: float) -> tuple[str, np.ndarray | None]:
        """Decider.point on this model."""
        if not self.bounds(lo, hi, j, direction, level, capped=False):
            return "none", None
        self.h.clearSolver()  # the slack basis: every part at zero but the primary's
        status, x, _ = solve(self.h)
        if status == "optimal" and x is not None:
            return "found", x[: self.n] - x[self.n :]
        return ("none" if status == "infeasible" else "unknown"), None

    def proof_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """After HiGHS called the last bounds infeasible: the cells whose lower (δ⁻'s ceiling)
        and upper (δ⁺'s ceiling) bounds its dual ray uses, y with yᵀb outside the range of
        yᵀA δ over the box. Only a hint for splitting a group (D-115): never a verdict."""
        _, has, ray = self.h.getDualRay()  # type: ignore[attr-defined]  # not in highspy's stubs
        if not has:
            return None
        y = np.asarray(ray, dtype=float)[: self.miss.size]
        g = np.asarray(self.matrix.T @ y).ravel()
        d = np.concatenate([g, -g])
        big = float(np.abs(d).max(initial=0.0))
        if not np.isfinite(big) or big == 0.0:
            return None
        tiny = 1e-9 * big
        pos, neg = d > tiny, d < -tiny
        top = float(
            np.sum(np.where(pos, d * self.ceiling, 0.0) + np.where(neg, d * self.floor, 0.0))
        )
        bottom = float(
            np.sum(np.where(pos, d * self.floor, 0.0) + np.where(neg, d * self.ceiling, 0.0))
        )
        rhs = float(y @ self.miss)
        if rhs > top:
            ceiling = pos
        elif rhs < bottom:
            ceiling = neg
        else:
            return None
        return ceiling[self.n :], ceiling[: self.n]


class Decider:
    """The block's relations over (δ⁺, δ⁻), one HiGHS model re-solved from its slack basis
    for each group's bounds; before it, the model of the primary's neighbourhood."""

    def __init__(self, matrix: sp.csc_matrix, miss: np.ndarray) -> None:
        self.matrix = sp.csc_matrix(matrix)
        self.miss = np.asarray(miss, dtype=float)
        self.block = _Split(self.matrix, self.miss)
        self.h = self.block.h
        self.n = self.block.n
        self.n_lps = 0
        self.n_local = 0  # of n_lps, the local models' solves
        # the relations' pattern, for the neighbourhoods (built at the first local model)
        self._pattern: tuple[sp.csr_matrix, sp.csr_matrix, sp.csc_matrix] | None = None
        self._row_at = np.zeros(0, dtype=np.int64)  # a row's place among a neighbourhood's
        self._near: tuple[int, np.ndarray, _Split | None] | None = None  # (j, cells, model)
        #: the model of the last 'none' HiGHS gave and its cells (None: the block's)
        self._none: tuple[_Split, np.ndarray | None] | None = None

    def extreme(
        self, lo: np.ndarray, hi: np.ndarray, j: int, direction: int, level: float
    ) -> np.ndarray | None:
        """The LP's optimum moves with move j capped at `level` (max min(δ_j, level): the same
        optimum as the LP's when it falls short), from the same slack basis; None if HiGHS
        gives no optimum. A single member's reach without the block's LP from the anchor."""
        sign = -1.0 if direction == UP else 1.0
        cols = np.array([j, self.n + j], dtype=np.int32)
        self.h.changeColsCost(2, cols, np.array([sign, -sign]))
        try:
            self.block.bounds(lo, hi, j, direction, level, capped=True)
            self.h.clearSolver()
            self.n_lps += 1
            status, x, _ = solve(self.h)
        finally:
            self.h.changeColsCost(2, cols, np.zeros(2))
        if status != "optimal" or x is None:
            return None
        return x[: self.n] - x[self.n :]

    def point(
        self, lo: np.ndarray, hi: np.ndarray, j: int, direction: int, level: float
    ) -> tuple[str, np.ndarray | None]:
        """Moves within [lo, hi] (each ∋ 0) keeping the relations, with move j at `level` or
        past it: ('found', δ), ('none', None) when HiGHS calls it infeasible, ('unknown',
        None) otherwise (iteration limit, numerical trouble). Unchecked. First on j's
        neighbourhood, every other move at zero (a restriction: its point is the block's;
        its 'none' may be wrong, which only routes the caller to halving, D-112)."""
        self._none = None
        near = self._neighbourhood(j)
        if near is not None:
            cells, model = near
            self.n_lps += 1
            self.n_local += 1
            k = int(np.searchsorted(cells, j))
            verdict, x = model.point(lo[cells], hi[cells], k, direction, level)
            if verdict != "unknown":
                if x is None:
                    self._none = (model, cells)
                    return verdict, None
                moves = np.zeros(self.n)
                moves[cells] = x
                return verdict, moves
        self.n_lps += 1
        verdict, x = self.block.point(lo, hi, j, direction, level)
        if verdict == "none":
            self._none = (self.block, None)
        return verdict, x

    def proof_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """After `point` said 'none': the block's cells whose lower / upper bounds the proof
        of that model uses (`_Split.proof_bounds`), or None (no ray, or the level itself)."""
        if self._none is None:
            return None
        model, cells = self._none
        self._none = None
        used = model.proof_bounds()
        if used is None or cells is None:
            return used
        low, high = np.zeros(self.n, dtype=bool), np.zeros(self.n, dtype=bool)
        low[cells], high[cells] = used
        return low, high

    def _columns(self, cells: np.ndarray, rows: np.ndarray) -> sp.csc_matrix:
        """The block's relations `rows` over `cells` (rows ⊇ every row through the cells): the
        columns' entries gathered, their rows renumbered in order (rel[rows][:, cells])."""
        assert self._pattern is not None
        a = self._pattern[2]
        self._row_at[rows] = np.arange(rows.size)
        start, size = a.indptr[cells], a.indptr[cells + 1] - a.indptr[cells]
        e = concat_ranges(start, size)
        ptr = np.concatenate([[0], np.cumsum(size)])
        shape = (rows.size, cells.size)
        return sp.csc_matrix((a.data[e], self._row_at[a.indices[e]], ptr), shape=shape)

    def _neighbourhood(self, j: int) -> tuple[np.ndarray, _Split] | None:
        """The model over the cells within LOCAL_DEPTH relations of j (kept for the next
        decisions on j: a pair's groups come one after another), or None when it would
        span more than LOCAL_SHARE of the block."""
        if LOCAL_DEPTH <= 0 or self.miss.any():
            return None
        if self._near is not None and self._near[0] == j:
            return None if self._near[2] is None else (self._near[1], self._near[2])
        if self._pattern is None:
            pattern = self.matrix.copy()
            pattern.data = np.ones_like(pattern.data)
            canonical = self.matrix.copy()
            canonical.sum_duplicates()  # each column's rows sorted, as rel[rows][:, cells]'s
            self._pattern = (pattern.tocsr(), pattern.T.tocsr(), canonical)
            self._row_at = np.zeros(self.matrix.shape[0], dtype=np.int64)
        by_row, by_col, _ = self._pattern
        col = np.zeros(self.n)
        col[j] = 1.0
        for _ in range(LOCAL_DEPTH):
            col = by_col @ ((by_row @ col) > 0).astype(float)
        cells = np.flatnonzero(col > 0)
        model = None
        if cells.size <= LOCAL_SHARE * self.n:
            rows = np.flatnonzero(by_row @ (col > 0).astype(float) > 0)
            if rows.size:  # the rows through the cells: every other cell in them stays put
                model = _Split(self._columns(cells, rows), np.zeros(rows.size))
        self._near = (j, cells, model)
        return None if model is None else (cells, model)
