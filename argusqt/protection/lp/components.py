"""Blocks of suppressed cells, HiGHS LP helpers and attacker moves shared by audit/heuristic/cleanup.

Published cells are constants, so the attacker LP splits into connected components of
variable cells linked by relations (argusqt/docs/methods.md §12); each block is solved on
its own. A move d (M d = 0, l ≤ a + d ≤ u, d = 0 on published cells) is a feasible attacker
change, so every primary it shifts by at least its protection level is protected in that
direction; heuristic and cleanup keep such moves as witnesses (argusqt/docs/methods.md §4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import highspy
import numpy as np

from argusqt.dataclass import dataclass

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.errors import Cancelled
from argusqt.model.smallcsr import SmallCompressed, abs_product_column_max, concat_ranges
from argusqt.model.status import is_candidate, is_secondary
from argusqt.protection.core.budget import HIGHS_SEED
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.graph import edge_components
from argusqt.protection.lp.quiet_highs import quiet_highs, scheduler_still_ours

if TYPE_CHECKING:
    from argusqt.progress import CancelToken

INF = highspy.kHighsInf


@dataclass
class Component:
    """One block: variable cells (global ids) and the relations (row ids) linking them."""

    cells: np.ndarray
    rows: np.ndarray


def variable_components(
    relations: sp.csr_matrix | SmallCompressed, var: np.ndarray
) -> list[Component]:
    """Connected components of variable cells, via the cell-relation incidence graph.

    The incidence edges come straight from the CSR arrays (scipy's column slicing and
    `bmat` cost more than the labelling on a small table; docs/design.md, D-47)."""
    var = np.asarray(var, dtype=bool)
    var_idx = np.flatnonzero(var)
    nv = var_idx.size
    if nv == 0:
        return []
    rel = relations.tocsr()
    if not rel.has_canonical_format:
        rel = rel.copy()
        rel.sum_duplicates()
    ind = rel.indices
    keep = var[ind] & (rel.data != 0)
    row_e = np.repeat(np.arange(rel.shape[0], dtype=np.int64), np.diff(rel.indptr))[keep]
    col_e = ind[keep].astype(np.int64)
    touched = np.zeros(rel.shape[0], dtype=bool)
    touched[row_e] = True
    active = np.flatnonzero(touched)
    nr = active.size
    cell_pos = np.cumsum(var) - 1  # cell id → its position among the variable cells
    row_pos = np.cumsum(touched) - 1
    _, labels = edge_components(nv + nr, cell_pos[col_e], nv + row_pos[row_e])
    cell_lab = labels[:nv]
    row_lab = labels[nv:]
    order_c = np.argsort(cell_lab, kind="stable")
    order_r = np.argsort(row_lab, kind="stable")
    ncomp = int(labels.max()) + 1
    c_bounds = np.searchsorted(cell_lab[order_c], np.arange(ncomp + 1))
    r_bounds = np.searchsorted(row_lab[order_r], np.arange(ncomp + 1))
    comps = []
    for k in range(ncomp):
        cells = var_idx[order_c[c_bounds[k] : c_bounds[k + 1]]]
        if cells.size == 0:
            continue
        rows = active[order_r[r_bounds[k] : r_bounds[k + 1]]]
        comps.append(Component(cells=cells, rows=rows))
    return comps


@dataclass
class RowBlock:
    """The relations `rows` of a block restricted to its cells `cells`, in CSC arrays (rows
    renumbered 0..k-1, ascending within a column, as scipy's conversion orders them), and
    every nonzero of those relations (local row, cell, value) for the reduced costs.

    Gathered from the CSR arrays: scipy's slicing and conversions cost more than the LPs
    of a small table's blocks (docs/design.md, D-47)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_rows: int
    n_cols: int
    t_row: np.ndarray  # every nonzero of the block's relations: local row,
    t_col: np.ndarray  # cell (global id), ordered by cell, then row,
    t_val: np.ndarray  # value

    @classmethod
    def of(
        cls, rel: sp.csr_matrix | SmallCompressed, cells: np.ndarray, rows: np.ndarray
    ) -> RowBlock:
        starts = rel.indptr[rows]
        lens = rel.indptr[rows + 1] - starts
        pos = concat_ranges(starts, lens)
        local_row = np.repeat(np.arange(rows.size, dtype=np.int64), lens)
        col = rel.indices[pos].astype(np.int64)
        val = rel.data[pos]
        # Mᵀ by cell, rows ascending within a cell: the order of scipy's `sub.T.tocsr()`,
        # so the reduced costs are summed in the same order (bit-identical cuts)
        by_col = np.argsort(col, kind="stable")
        t_row, t_col, t_val = local_row[by_col], col[by_col], val[by_col]
        j = np.searchsorted(cells, t_col)
        inside = j < cells.size
        inside[inside] = cells[j[inside]] == t_col[inside]
        counts = np.bincount(j[inside], minlength=cells.size)
        indptr = np.zeros(cells.size + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(
            indptr,
            t_row[inside],
            t_val[inside],
            int(rows.size),
            int(cells.size),
            t_row,
            t_col,
            t_val,
        )

    def reduced(self, pi: np.ndarray, n: int) -> np.ndarray:
        """−(Mᵀπ) over all n cells, summed per cell in scipy's order (see `of`)."""
        d = np.bincount(self.t_col, weights=self.t_val * pi[self.t_row], minlength=n)
        return -d


def make_highs(
    a: sp.spmatrix | RowBlock,
    cost: np.ndarray,
    col_lo: np.ndarray,
    col_hi: np.ndarray,
    row_lo: np.ndarray,
    row_hi: np.ndarray,
    primal: bool = True,
    presolve: bool | None = None,
) -> highspy.Highs:
    """A silent HiGHS simplex model (min costᵀx) ready to be re-solved with new objectives.

    Primal simplex by default: after an objective change the basis stays primal feasible,
    which makes re-solves much faster than dual simplex (docs/design.md, D-13). A first
    solve from scratch of a big model is much faster with dual simplex + presolve: build
    with primal=False, presolve=True and call `use_primal(h)` after the first solve.
    """
    h = new_highs(primal, presolve)
    if isinstance(a, RowBlock):
        pass_model(h, a.indptr, a.indices, a.data, a.n_rows, cost, col_lo, col_hi, row_lo, row_hi)
        return h
    a = sp.csc_matrix(a)
    pass_model(h, a.indptr, a.indices, a.data, a.shape[0], cost, col_lo, col_hi, row_lo, row_hi)
    return h


def new_highs(primal: bool = False, presolve: bool | None = None) -> highspy.Highs:
    """A silent single-threaded HiGHS simplex instance (see make_highs for the options)."""
    h = quiet_highs()
    h.setOptionValue("solver", "simplex")
    h.setOptionValue("random_seed", HIGHS_SEED)  # fixed: same LPs, same answers (issue 22)
    if primal:
        h.setOptionValue("simplex_strategy", 4)
    if presolve is None:
        presolve = primal  # small fresh LPs (dual simplex): presolve costs more than it saves
    if not presolve:
        h.setOptionValue("presolve", "off")
    return h


def pass_model(
    h: highspy.Highs,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    n_rows: int,
    cost: np.ndarray,
    col_lo: np.ndarray,
    col_hi: np.ndarray,
    row_lo: np.ndarray,
    row_hi: np.ndarray,
) -> None:
    """Give `h` a new LP min costᵀx, row_lo ≤ A x ≤ row_hi, col_lo ≤ x ≤ col_hi (A by columns)."""
    f64 = np.float64
    n_cols = int(indptr.shape[0] - 1)
    status = h.passModel(
        n_cols,
        int(n_rows),
        int(indptr[-1]),
        int(highspy.MatrixFormat.kColwise),
        int(highspy.ObjSense.kMinimize),
        0.0,
        np.ascontiguousarray(cost, dtype=f64),
        np.ascontiguousarray(col_lo, dtype=f64),
        np.ascontiguousarray(col_hi, dtype=f64),
        np.ascontiguousarray(row_lo, dtype=f64),
        np.ascontiguousarray(row_hi, dtype=f64),
        np.ascontiguousarray(indptr, dtype=np.int32),
        np.ascontiguousarray(indices, dtype=np.int32),
        np.ascontiguousarray(data, dtype=f64),
        np.zeros(n_cols, dtype=np.int32),  # all continuous
    )
    if status != highspy.HighsStatus.kOk:
        raise RuntimeError(f"HiGHS rejected the LP ({status})")


def column_block(
    csc: sp.csc_matrix | SmallCompressed, cells: np.ndarray, scratch: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The relations touching `cells` and the block's CSC arrays with rows renumbered 0..k-1.

    Returns (rows, indptr, indices, data); gathered straight from the CSC arrays (scipy's
    column slicing costs more than the solve of a small path LP). `scratch`: an int64 array
    of one entry per relation, reused to renumber the rows by lookup (about half the time
    of np.unique's inverse, which argsorts; docs/design.md D-49).
    """
    starts = csc.indptr[cells]
    lens = csc.indptr[cells + 1] - starts
    indptr = np.zeros(cells.size + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    pos = np.repeat(starts - indptr[:-1], lens) + np.arange(indptr[-1])
    found = csc.indices[pos]
    if scratch is None:
        rows, local = np.unique(found, return_inverse=True)
    else:
        rows = unique_ints(found)
        scratch[rows] = np.arange(rows.size)
        local = scratch[found]
    return rows, indptr, local, csc.data[pos]


def unique_ints(a: np.ndarray) -> np.ndarray:
    """np.unique of an integer array, by sorting: numpy 2.4's np.unique hashes integers,
    4-5 times slower on the few hundred cells of a neighbourhood (docs/design.md)."""
    s = np.sort(a)
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def moves_matrix(moves: list[tuple[np.ndarray, np.ndarray]], n: int) -> sp.csc_matrix:
    """Attacker moves (cells, shifts) as the columns of an n × len(moves) matrix: one sparse
    product checks every move against the relations (instead of a column slice per move)."""
    sizes = np.fromiter((c.size for c, _ in moves), dtype=np.int64, count=len(moves))
    return sp.csc_matrix(
        (
            np.concatenate([d for _, d in moves]),
            np.concatenate([c for c, _ in moves]),
            np.r_[0, np.cumsum(sizes)],
        ),
        shape=(n, len(moves)),
    )


def relation_residuals(rel: sp.csr_matrix | sp.csc_matrix, by_move: sp.csc_matrix) -> np.ndarray:
    """max |M δ| per move (column of `by_move`); zero where there is no relation (a table of
    free-standing cells: nothing to break, and the max of no rows is undefined)."""
    if not rel.shape[0]:
        return np.zeros(by_move.shape[1])
    if isinstance(rel, SmallCompressed) and isinstance(by_move, SmallCompressed):
        return abs_product_column_max(rel, by_move)
    return np.asarray(abs(rel @ by_move).max(axis=0).toarray()).ravel()


def use_primal(h: highspy.Highs) -> None:
    """Switch a solved model to primal simplex for warm re-solves after objective changes."""
    h.setOptionValue("simplex_strategy", 4)


def solve(h: highspy.Highs) -> tuple[str, np.ndarray | None, float]:
    """Run the model; ('optimal', x, obj), ('infeasible', None, nan) or ('error', …)."""
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        col = h.getSolution().col_value  # a list of Python floats
        # getObjectiveValue: the same number as getInfo()'s, without copying the whole info
        # record (≈ 50 µs a call, ~20,000 calls per big-table HEUR run; D-49); fromiter: the
        # same float64s as np.asarray, without its type discovery (7 against 22 µs a
        # 1,000-column LP, 40,000 LPs a b97768 run; D-79)
        x = np.fromiter(col, dtype=np.float64, count=len(col))
        return "optimal", x, float(h.getObjectiveValue())
    if status in (
        highspy.HighsModelStatus.kInfeasible,
        highspy.HighsModelStatus.kUnboundedOrInfeasible,
    ):
        return "infeasible", None, float("nan")
    scheduler_still_ours()  # raises when another model took HiGHS's scheduler meanwhile
    return "error", None, float("nan")


def solve_cold(h: highspy.Highs) -> tuple[str, np.ndarray | None, float]:
    """Solve again from scratch with dual simplex and no presolve, then back to primal: the
    last try after HiGHS gave up on a warm re-solve of a model whose zero move is feasible
    (numerical trouble on big blocks with bounds of 10⁹–10¹⁰: 7,290- and 31,808-cell tables)."""
    h.clearSolver()
    h.setOptionValue("simplex_strategy", 1)
    h.setOptionValue("presolve", "off")
    out = solve(h)
    use_primal(h)
    return out


UP = 1
DOWN = -1

#: path LPs over at least this many cells can be interrupted by a cancel (MoveContext.cancel)
INTERRUPTIBLE_CELLS = 2000


class MoveContext:
    """Per-problem arrays the path LPs need (capacities, movable cells, relations by column)."""

    def __init__(self, problem: CSPProblem):
        self.problem = problem
        self.values = np.asarray(problem.values, dtype=float)
        self.ub = np.maximum(np.asarray(problem.upper, float) - self.values, 0.0)
        self.lb = np.maximum(self.values - np.asarray(problem.lower, float), 0.0)
        self.primary = problem.primary
        self.movable = self.primary | is_candidate(problem.status) | is_secondary(problem.status)
        self.mcsc = problem.relations_small.tocsc()
        self.lpl = np.where(self.primary, problem.lpl, 0.0)
        self.upl = np.where(self.primary, problem.upl, 0.0)
        self.tol = problem.tolerance
        self.grid = Grid(problem) if has_grid(problem) else None
        self._rows = np.zeros(self.mcsc.shape[0], dtype=np.int64)  # column_block's lookup
        self._lp: highspy.Highs | None = None  # reused by every path LP
        self._big_lp: highspy.Highs | None = None  # the same for path LPs HiGHS may interrupt
        self._last: tuple[highspy.Highs, int, float] | None = None  # path_move_again's LP
        #: a cancel interrupts path LPs of INTERRUPTIBLE_CELLS cells or more inside HiGHS
        self.cancel: CancelToken | None = None

    def required(self, cell: int, direction: int) -> float:
        return float(self.upl[cell] if direction == UP else self.lpl[cell])

    def path_move(
        self, cell: int, direction: int, cells: np.ndarray, cost: np.ndarray
    ) -> np.ndarray | None:
        """Cheapest move of `cell` by its PL using only `cells` (others fixed); None if none.

        `cost` is per unit of movement for each of `cells`. Returns d over `cells`.
        The LP has d = d⁺ − d⁻ (columns [A, −A]); one HiGHS instance is reused for all.
        """
        cells = np.asarray(cells, dtype=np.int64)
        self._last = None
        pl = self.required(cell, direction)
        room = float(self.ub[cell] if direction == UP else self.lb[cell])
        # within the audit's tolerance a level equal to the room passes: (-140) - (-1091.6)
        # is 951.5999999999999, not 951.6 (the bounds of a negative primary)
        if room < pl - self.tol:
            return None
        pl = min(pl, room)
        rows, indptr, local, data = column_block(self.mcsc, cells, self._rows)
        n = cells.size
        mov = self.movable[cells]
        hi_p = np.where(mov, self.ub[cells], 0.0)
        hi_m = np.where(mov, self.lb[cells], 0.0)
        lo_p = np.zeros(n)
        lo_m = np.zeros(n)
        j = int(np.flatnonzero(cells == cell)[0])
        if direction == UP:
            lo_p[j] = hi_p[j] = pl
            hi_m[j] = 0.0
        else:
            lo_m[j] = hi_m[j] = pl
            hi_p[j] = 0.0
        nnz = int(indptr[-1])
        zeros = np.zeros(rows.size)
        lp = self._path_lp(n >= INTERRUPTIBLE_CELLS and self.cancel is not None)
        self._last = (lp, n, pl)
        pass_model(
            lp,
            np.concatenate([indptr, indptr[1:] + nnz]),
            np.concatenate([local, local]),
            np.concatenate([data, -data]),
            rows.size,
            np.concatenate([cost, cost]),
            np.concatenate([lo_p, lo_m]),
            np.concatenate([hi_p, hi_m]),
            zeros,
            zeros,
        )
        return self._path_solution(lp, n, pl)

    def forget_last_lp(self) -> None:
        """No LP for `path_move_again`: the last answer came from elsewhere (a memo)."""
        self._last = None

    def path_move_again(self, cost: np.ndarray) -> np.ndarray | None:
        """The last `path_move`'s LP (same cell, direction and cells) with other costs,
        re-solved from its basis: the insider cover's next move in one area (D-65)."""
        if self._last is None:
            return None  # the last path_move had no LP: the level exceeds the cell's room
        lp, n, pl = self._last
        both = np.concatenate([cost, cost]).astype(np.float64)
        lp.changeColsCost(2 * n, np.arange(2 * n, dtype=np.int32), both)
        return self._path_solution(lp, n, pl)

    def _path_solution(self, lp: highspy.Highs, n: int, pl: float) -> np.ndarray | None:
        status, x, _ = solve(lp)
        if status != "optimal" or x is None:
            if self.cancel is not None and self.cancel.cancelled:
                raise Cancelled("a path LP was interrupted by the cancel")
            return None
        d = x[:n] - x[n:]
        d[np.abs(d) <= 1e-9 * max(1.0, pl)] = 0.0
        return d

    def _path_lp(self, interruptible: bool) -> highspy.Highs:
        """The reused HiGHS instance; the interruptible one polls the cancel token.

        Only big LPs get it: the Python callback runs every simplex iteration, while one
        whole-table path LP of a 10⁵-cell table runs for seconds and kept a cancel waiting
        (docs/design.md, D-14; benchmarks/bench_cancel.py).
        """
        if not interruptible:
            if self._lp is None:
                self._lp = new_highs(primal=False)
            return self._lp
        if self._big_lp is None:
            self._big_lp = new_highs(primal=False)

            def poll(event: Any) -> None:
                if self.cancel is not None and self.cancel.cancelled:
                    event.interrupt()

            self._big_lp.cbSimplexInterrupt += poll
        return self._big_lp

    def proves(self, cells: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masks over `cells`: primaries the move (scaled within the bounds, ±) protects up / down.

        |d| stands for d on rising cells and −d on falling ones (negation is exact), so the
        ratios, steps and shifts are the very numbers of the per-sign form, in fewer array
        operations (24,000 calls a b97768 run; docs/design.md, D-79)."""
        size = np.abs(d)
        nz = size > 0
        pos = d > 0
        ub = self.ub[cells]
        lb = self.lb[cells]
        step = size[nz]
        # the largest scale up: a rising cell meets its upper room, a falling one its lower
        t_up = float((np.where(pos, ub, lb)[nz] / step).min(initial=np.inf))
        t_dn = float((np.where(pos, lb, ub)[nz] / step).min(initial=np.inf))
        eps = 0.25 * self.tol
        rise = np.zeros(size.shape)  # unmoved cells: no shift (and no 0·inf)
        fall = np.zeros(size.shape)
        np.multiply(size, np.where(pos, t_up, t_dn), out=rise, where=nz)
        np.multiply(size, np.where(pos, t_dn, t_up), out=fall, where=nz)
        prim = self.primary[cells]
        return prim & (rise >= self.upl[cells] - eps), prim & (fall >= self.lpl[cells] - eps)


def has_grid(problem: CSPProblem) -> bool:
    """True when `dims` describe the first cells (virtual singleton cells may follow)."""
    if not problem.dims:
        return False
    try:
        size = int(np.prod([len(d) for d in problem.dims]))
    except TypeError:
        return False
    return size <= problem.n_cells


class Grid:
    """Table geometry for neighbourhoods: the cells near a cell along every dimension."""

    def __init__(self, problem: CSPProblem):
        self.dims = problem.dims or []  # has_grid(problem) was checked
        self.shape = tuple(len(d) for d in self.dims)
        self.strides = [int(np.prod(self.shape[i + 1 :])) for i in range(len(self.shape))]
        self.parent = [np.asarray(d.parent) for d in self.dims]
        self._parent_list = [[int(x) for x in p] for p in self.parent]  # product's walk
        self.children = [[np.asarray(c, dtype=np.int64) for c in d.children] for d in self.dims]
        self.size = int(np.prod(self.shape))
        self.members: dict[int, np.ndarray] = {}
        # virtual cells (argusqt/docs/methods.md §5) come after the table's cells
        if problem.n_cells > self.size:
            mcsc = problem.relations.tocsc()
            mcsr = problem.relations.tocsr()
            for v in range(self.size, problem.n_cells):
                rows = mcsc.indices[mcsc.indptr[v] : mcsc.indptr[v + 1]]
                cells = (
                    np.unique(
                        np.concatenate(
                            [mcsr.indices[mcsr.indptr[r] : mcsr.indptr[r + 1]] for r in rows]
                        )
                    )
                    if rows.size
                    else np.zeros(0, np.int64)
                )
                self.members[v] = cells[cells != v]
        # the same links flat (member cell, its virtual cell): one lookup per neighbourhood
        # instead of one np.isin per virtual cell (26 s of a 7,290-cell insider audit)
        keys = np.fromiter(self.members, dtype=np.int64, count=len(self.members))
        sizes = np.array([self.members[int(v)].size for v in keys], dtype=np.int64)
        self._member_cells = (
            np.concatenate([self.members[int(v)] for v in keys]).astype(np.int64)
            if keys.size
            else np.zeros(0, np.int64)
        )
        self._member_owner = np.repeat(keys, sizes)
        self._n_cells = problem.n_cells

    def neighbourhood(
        self, cell: int, score, k_free: int, k_sup: int = 6, climb: int = 1 << 30
    ) -> np.ndarray:
        """`product` neighbourhood, extended with the virtual cells linked to it."""
        if not self.members:
            return self.product(cell, score, k_free, k_sup, climb)
        if cell >= self.size:
            parts = [
                self.product(int(m), score, k_free, k_sup, climb)
                for m in self.members[cell]
                if m < self.size
            ]
            base = unique_ints(np.concatenate(parts + [np.array([cell])]))
        else:
            base = self.product(cell, score, k_free, k_sup, climb)
        in_base = np.zeros(self._n_cells, dtype=bool)
        in_base[base] = True
        extra = self._member_owner[in_base[self._member_cells]]
        if cell < self.size:  # table cells only in `base`, sorted: the virtual ones follow
            return np.concatenate([base, unique_ints(extra)])
        return unique_ints(np.concatenate([base, extra]))

    def product(
        self, cell: int, score, k_free: int, k_sup: int = 6, climb: int = 1 << 30
    ) -> np.ndarray:
        """Cells of the product, over dimensions, of related codes of the cell's coordinates.

        Per dimension: the code, up to `k_sup` suppressed (score 0) and `k_free` cheapest
        other siblings of the code (and, with `climb` > 1, its ancestors and their
        siblings, `climb` levels up), and the same choice among children of every chosen
        node (recursively). `score[cells]` is the cost of cells for this purpose
        (0 = suppressed, inf = not usable).
        """
        cell = int(cell)
        per_dim = []
        for d, stride in enumerate(self.strides):
            i = (cell // stride) % self.shape[d]  # the cell's code in dimension d (C order)
            line = cell - i * stride  # the cell of code 0 on the cell's line along d
            par = self._parent_list[d]
            kids = self.children[d]

            def pick(nodes: np.ndarray, _line=line, _s=stride) -> list[int]:
                if nodes.size == 0:
                    return []
                sc = score[_line + nodes * _s]
                sup_nodes = nodes[sc == 0][:k_sup].tolist()
                if k_free <= 0:  # suppressed cells only (clean-up, insider cover)
                    return sup_nodes
                free = np.isfinite(sc) & (sc > 0)
                fn = nodes[free]
                if fn.size > k_free:
                    fn = fn[np.argsort(sc[free], kind="stable")[:k_free]]
                return sup_nodes + fn.tolist()

            chosen = {i}
            stack: list[int] = []
            a = i
            step = 0
            while par[a] >= 0 and step < climb:
                pa = par[a]
                sib = kids[pa]
                sel = pick(sib[sib != a])
                chosen.update(sel)
                stack.extend(sel)
                step += 1
                if step >= climb:
                    break
                chosen.add(pa)
                a = pa
            stack.append(i)
            while stack:
                ch = kids[stack.pop()]
                if ch.size == 0:
                    continue
                for x in pick(ch):
                    if x not in chosen:
                        chosen.add(x)
                        stack.append(x)
            per_dim.append(np.fromiter(sorted(chosen), dtype=np.int64, count=len(chosen)))
        # flat indices of the product in C order (what ravel_multi_index of an "ij" meshgrid
        # gives, without its copies: a fifth of product's time on b7290)
        flat = per_dim[0] * self.strides[0]
        for d in range(1, len(per_dim)):
            flat = (flat[:, None] + per_dim[d] * self.strides[d]).ravel()
        return flat
