"""Which respondents still matter for a (primary, direction): witnesses that avoid their cells.

A move through suppressed cells (relations kept, bounds kept) that shifts a primary by its
protection level is a feasible point of every attacker whose known cells it leaves at their
values: against those respondents the pair is safe. So instead of one attack per
respondent, each pair collects moves until no respondent touches all of them; the path LP
that looks for the next move makes the cells of the respondents still left expensive, so
one LP usually frees the pair from all of them (docs/design.md,
D-15). What is left are (respondent, pair) couples no move found avoids: those are
attacked one by one (insider.py).

Two moves that prove a pair and shift a respondent's only suppressed cell in opposite
directions prove it too: a convex combination of two attacker points is an attacker point,
and one of them puts that cell back at its value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use: a small table's run never needs it (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.errors import Cancelled
from argusqt.model.smallcsr import concat_ranges
from argusqt.progress import CancelToken
from argusqt.protection.lp.components import (
    DOWN,
    UP,
    Component,
    MoveContext,
    moves_matrix,
    relation_residuals,
    unique_ints,
)

Key = tuple[int, int]  # (primary cell, direction)

#: per unit of movement in the cover's path LPs: primaries are suppressed anyway (cheap to
#: use), the cells of the respondents a pair still has to be proved against are avoided
PRIMARY_COST, CELL_COST, AVOID_COST = 1e-3, 1.0, 1e4

#: the growing areas of a pair's path LPs: relation-hop balls of at most this many
#: suppressed cells after the table's grid neighbourhood (docs/design.md, D-15)
BALL_LIMITS = (300, 1500)


def gather(indptr: np.ndarray, indices: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The concatenated index slices of `items` of a compressed sparse matrix."""
    starts = indptr[items]
    return indices[concat_ranges(starts, indptr[items + 1] - starts)]


class Hops:
    """Suppressed cells near a cell through relations: balls by hop count and by size."""

    def __init__(self, relations: sp.csr_matrix, sup: np.ndarray):
        self.csr = relations.tocsr()
        self.csc = relations.tocsc()
        self.sup = sup
        self._mark = np.zeros(sup.shape[0], dtype=bool)

    def rows_of(self, cells: np.ndarray) -> np.ndarray:
        return unique_ints(gather(self.csc.indptr, self.csc.indices, cells))

    def cells_of(self, rows: np.ndarray) -> np.ndarray:
        """Suppressed cells of the relations `rows`."""
        cells = unique_ints(gather(self.csr.indptr, self.csr.indices, rows))
        return cells[self.sup[cells]]

    def ball(self, cell: int, limit: int) -> np.ndarray:
        """Suppressed cells reachable from `cell` in few relation hops, about `limit` of them.

        The last layer is cut at the limit (lowest cell numbers first: deterministic).
        """
        mark = self._mark
        inside = [np.array([cell], dtype=np.int64)]
        mark[cell] = True
        count, frontier = 1, inside[0]
        while count < limit and frontier.size:
            new = self.cells_of(self.rows_of(frontier))
            new = new[~mark[new]]
            if count + new.size > limit:
                new = new[: limit - count]
            mark[new] = True
            inside.append(new)
            count += new.size
            frontier = new
        out = np.sort(np.concatenate(inside))
        mark[out] = False
        return out


class Cover:
    """Moves found so far, who each touches, and what is left to prove per pair."""

    def __init__(
        self,
        ctx: MoveContext,
        sup: np.ndarray,
        ksup: sp.csr_matrix,
        exempt: sp.csr_matrix,
        comps: list[Component],
        label: np.ndarray,
        hops: Hops,
    ):
        self.ctx = ctx
        self.sup = sup
        self.prim = ctx.primary & sup
        self.comps = comps
        self.label = label
        self.hops = hops
        coo = ksup.tocoo()
        #: the attacker that alone makes up a suppressed cell (rows of ksup are disjoint)
        self.owner = np.full(sup.shape[0], -1, dtype=np.int64)
        self.owner[coo.col] = coo.row
        self.n_known = np.diff(ksup.indptr)
        self.only_cell = np.full(ksup.shape[0], -1, dtype=np.int64)
        single = np.flatnonzero(self.n_known == 1)
        self.only_cell[single] = ksup.indices[ksup.indptr[single]]
        self.exempt = exempt.tocsc()
        self._in_s = np.zeros(ksup.shape[0], dtype=bool)
        self._avoided = np.zeros(sup.shape[0], dtype=bool)  # `path`'s lookup (np.isin: slower)
        self._known_in: dict[int, np.ndarray] = {}  # component → its cells an attacker knows
        self._attackers: dict[int, frozenset[int]] = {}
        # the moves: who each touches, (cells, shifts) on its known and proved cells, and per
        # pair the moves proving it; a move's shifts by cell are made only when `uncovered`
        # combines two moves (D-79)
        self.hit: list[frozenset[int]] = []
        self.moves: list[tuple[np.ndarray, np.ndarray]] = []
        self._shift_at: dict[int, dict[int, float]] = {}
        self._areas_of = -1  # the cell whose areas `_areas` holds (by ball limit, 0: grid's)
        self._areas: dict[int, np.ndarray] = {}
        self.of_pair: defaultdict[Key, list[int]] = defaultdict(list)
        #: the moves its path LPs found (cells, shifts): a later audit of a pattern that
        #: still suppresses their cells starts from them (seed)
        self.found: list[tuple[np.ndarray, np.ndarray]] = []
        self.n_lps = 0
        self.figures = {
            "pairs_open": 0,
            "moves": 0,
            "combinations": 0,
            "component_lps": 0,
            "seeded": 0,
        }

    # -------------------------------------------------------------- bookkeeping
    def known_in(self, comp: int) -> np.ndarray:
        if comp not in self._known_in:
            cells = self.comps[comp].cells
            self._known_in[comp] = cells[self.owner[cells] >= 0]
        return self._known_in[comp]

    def attackers_in(self, comp: int) -> frozenset[int]:
        if comp not in self._attackers:
            self._attackers[comp] = frozenset(self.owner[self.known_in(comp)].tolist())
        return self._attackers[comp]

    def add(
        self,
        idx: np.ndarray,
        d: np.ndarray,
        proved: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> frozenset[int]:
        """Record a move (cells, shifts): the pairs it proves and the attackers it touches.
        `proved`: `ctx.proves(idx, d)` when the caller computed it (seed, for many moves)."""
        mid = len(self.hit)
        who = self.owner[idx]
        touched = who >= 0
        self.hit.append(frozenset(who[touched].tolist()))
        up, dn = self.ctx.proves(idx, d) if proved is None else proved
        # the shifts `uncovered` may read: on known cells and on the primaries proved (only
        # those, as the dicts before held: all of a move's cells raised b97768's peak 30 MB)
        keep = touched | up | dn
        self.moves.append((idx[keep], d[keep]))
        of_pair = self.of_pair
        for q in idx[up].tolist():
            of_pair[(q, UP)].append(mid)
        for q in idx[dn].tolist():
            of_pair[(q, DOWN)].append(mid)
        self.figures["moves"] += 1
        return self.hit[mid]

    def shift_at(self, mid: int) -> dict[int, float]:
        """Move `mid`'s shift by cell, on its known and proved cells (made once, on first use)."""
        at = self._shift_at.get(mid)
        if at is None:
            idx, d = self.moves[mid]
            at = self._shift_at[mid] = dict(zip(idx.tolist(), d.tolist(), strict=True))
        return at

    def uncovered(self, key: Key) -> set[int]:
        """Attackers of the pair's component none of its moves (or two of them) avoids."""
        cell, direction = key
        moves = self.of_pair.get(key)
        if not moves:
            left = set(self.attackers_in(int(self.label[cell])))
        else:
            left = set(self.hit[moves[0]])
            for m in moves[1:]:
                if not left:
                    break
                left &= self.hit[m]
        if not left:
            return left
        ex = self.exempt
        left.difference_update(ex.indices[ex.indptr[cell] : ex.indptr[cell + 1]].tolist())
        if left and moves and len(moves) > 1:
            for r in [r for r in left if self.n_known[r] == 1]:
                k = int(self.only_cell[r])
                # the point each move gives for the pair: its shift on k times ± (the side
                # of the move that proves the pair: the sign of its shift on the primary)
                sides = {
                    np.sign(self.shift_at(m)[k]) * np.sign(self.shift_at(m)[cell]) * direction
                    for m in moves
                }
                if len(sides) > 1:
                    left.discard(r)
                    self.figures["combinations"] += 1
        return left

    def seed(
        self, moves: list[tuple[np.ndarray, np.ndarray]]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Record a method's moves that are attacker moves of this pattern; returns them.

        Each is checked, never trusted: its table cells (virtual ones dropped: a move less
        them still holds every table relation, or fails the check) all suppressed, no cell
        twice, every relation kept (|M d| ≤ 10⁻⁷·max|d|, the outsider audit's hint test).
        HEUR's witnesses settle most pairs this way, without a path LP (docs/design.md, D-49).
        """
        n = self.sup.shape[0]
        cand: list[tuple[np.ndarray, np.ndarray]] = []
        for cells, d in moves:
            cells = np.asarray(cells, dtype=np.int64)
            d = np.asarray(d, dtype=float)
            if cells.size != d.size:
                continue
            keep = (cells < n) & (d != 0)
            cells, d = cells[keep], d[keep]
            if cells.size == 0 or not self.sup[cells].all() or not np.isfinite(d).all():
                continue
            if cells.size > 1 and unique_ints(cells).size != cells.size:
                continue
            cand.append((cells, d))
        if not cand:
            return []
        moves_m = moves_matrix(cand, n)
        residual = relation_residuals(self.hops.csr, moves_m)
        # relative to the move's own size: `proves` scales a move up to the cells' bounds, so
        # an absolute tolerance would let a small move grow into a broken relation
        scale = abs(moves_m).max(axis=0).toarray().ravel()
        ok = (scale > 0) & (residual <= 1e-7 * scale)
        good = [cand[k] for k in np.flatnonzero(ok).tolist()]
        if good:
            up, dn = proves_all(self.ctx, good)
            bounds = np.r_[0, np.cumsum([c.size for c, _ in good])]
            for k, (cells, d) in enumerate(good):
                part = slice(bounds[k], bounds[k + 1])
                self.add(cells, d, (up[part], dn[part]))
        self.figures["seeded"] = len(good)
        return good

    def settled_by_moves(self, cells: np.ndarray) -> np.ndarray:
        """Mask of the primaries of `cells` (a mask) whose every side with a level is proved
        against every attacker of its component by the moves recorded so far (no LP)."""
        out = np.zeros_like(cells)
        for cell in np.flatnonzero(cells).tolist():
            out[cell] = all(
                self.ctx.required(cell, d) <= 0 or not self.uncovered((cell, d)) for d in (UP, DOWN)
            )
        return out

    # -------------------------------------------------------------- the search
    def areas(self, cell: int) -> Iterator[np.ndarray]:
        """Growing sets of suppressed cells around `cell` for its path LPs."""
        comp = self.comps[int(self.label[cell])]
        if self.ctx.grid is not None:
            yield self._area(cell, 0)
        for limit in BALL_LIMITS:
            if limit >= comp.cells.size:
                break
            yield self._area(cell, limit)
        yield comp.cells

    def _area(self, cell: int, limit: int) -> np.ndarray:
        """The grid neighbourhood's suppressed cells (limit 0) or a ball, kept for the last
        cell asked: its other side asks the same (the pattern is fixed; D-79)."""
        if self._areas_of != cell:
            self._areas_of, self._areas = cell, {}
        got = self._areas.get(limit)
        if got is None:
            if limit == 0:
                grid = self.ctx.grid
                assert grid is not None
                n = grid.neighbourhood(
                    cell, _Suppressed(self.sup), k_free=0, k_sup=1 << 30, climb=1
                )
                got = n[self.sup[n]]
            else:
                got = self.hops.ball(cell, limit)
            self._areas[limit] = got
        return got

    def avoid(self, left: set[int], comp: int) -> np.ndarray:
        """The suppressed cells of the attackers `left` in the component."""
        known = self.known_in(comp)
        self._in_s[list(left)] = True
        out = known[self._in_s[self.owner[known]]]
        self._in_s[list(left)] = False
        return out

    def path(self, key: Key, cells: np.ndarray, avoid: np.ndarray, again: bool = False) -> bool:
        """One path LP on `cells`, the attackers' cells `avoid` expensive; records the move.
        `again`: the previous call's LP (same pair and cells), only the costs change: it is
        re-solved from its basis (D-65)."""
        cost = np.where(self.prim[cells], PRIMARY_COST, CELL_COST)
        self._avoided[avoid] = True
        cost[self._avoided[cells]] = AVOID_COST
        self._avoided[avoid] = False
        if again:
            d = self.ctx.path_move_again(cost)
        else:
            d = self.ctx.path_move(key[0], key[1], cells, cost)
        self.n_lps += 1
        if d is None:
            return False
        moved = d != 0
        self.add(cells[moved], d[moved])
        self.found.append((cells[moved], d[moved]))
        return True

    def settle(self, key: Key, among: set[int] | None = None) -> set[int]:
        """Search moves for the pair; returns the attackers (of `among`, default all) it is
        still not proved against."""
        left = self.uncovered(key)
        if among is not None:
            left &= among
        if not left:
            return left
        self.figures["pairs_open"] += 1
        comp = int(self.label[key[0]])
        size = self.comps[comp].cells.size
        largest = None
        for cells in self.areas(key[0]):
            if cells.size == size and size > BALL_LIMITS[-1] and len(left) <= 1:
                break  # one attacker left: its own attack is cheaper than a big path LP
            if cells.size == size and size > BALL_LIMITS[-1]:
                self.figures["component_lps"] += 1
            largest = cells
            again = False
            while left:
                if not self.path(key, cells, self.avoid(left, comp), again):
                    break
                again = True
                now = self.uncovered(key) & left
                if now == left:
                    break  # the cheapest move still touches them all: a bigger area
                left = now
            if not left:
                return left
        if len(left) > 1 and largest is not None:
            # together they cannot be avoided: one at a time
            again = largest is cells  # the last area's LP is still the one loaded
            for r in sorted(left):
                if r in left:
                    if self.path(key, largest, self.avoid({r}, comp), again):
                        left &= self.uncovered(key)
                    again = True
        return left

    def run(
        self,
        pairs: list[Key],
        cancel: CancelToken | None,
        among: dict[Key, set[int]] | None = None,
    ) -> dict[Key, set[int]]:
        """Every pair settled as far as moves go: pair → attackers left (only non-empty).
        `among`: per pair the only attackers to prove it against (default all)."""
        left: dict[Key, set[int]] = {}
        for key in pairs:
            if cancel is not None and cancel.cancelled:
                raise Cancelled("insider audit cancelled")
            rest = self.settle(key, None if among is None else among[key])
            if rest:
                left[key] = rest
        return left


def proves_all(
    ctx: MoveContext, moves: list[tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """`ctx.proves` of every move at once, concatenated in the moves' order: the same
    element-wise arithmetic, the minima per move by segment (D-64: 10⁴ seeds, one call)."""
    cells = np.concatenate([c for c, _ in moves])
    d = np.concatenate([x for _, x in moves])
    sizes = np.fromiter((c.size for c, _ in moves), dtype=np.int64, count=len(moves))
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    pos, neg = d > 0, d < 0
    ub, lb = ctx.ub[cells], ctx.lb[cells]
    with np.errstate(divide="ignore", invalid="ignore"):
        a_up = np.where(pos, ub / d, np.inf)
        b_up = np.where(neg, lb / -d, np.inf)
        a_dn = np.where(pos, lb / d, np.inf)
        b_dn = np.where(neg, ub / -d, np.inf)
    t_up = np.repeat(
        np.minimum(np.minimum.reduceat(a_up, first), np.minimum.reduceat(b_up, first)), sizes
    )
    t_dn = np.repeat(
        np.minimum(np.minimum.reduceat(a_dn, first), np.minimum.reduceat(b_dn, first)), sizes
    )
    eps = 0.25 * ctx.tol
    rise = np.maximum(np.where(pos, d * t_up, 0.0), np.where(neg, -d * t_dn, 0.0))
    fall = np.maximum(np.where(neg, -d * t_up, 0.0), np.where(pos, d * t_dn, 0.0))
    prim = ctx.primary[cells]
    return prim & (rise >= ctx.upl[cells] - eps), prim & (fall >= ctx.lpl[cells] - eps)


class _Suppressed:
    """Neighbourhood score: 0 for suppressed cells, inf otherwise."""

    def __init__(self, sup: np.ndarray):
        self.sup = sup

    def __getitem__(self, idx):
        return np.where(self.sup[idx], 0.0, np.inf)
