"""Path-LP moves (argusqt/docs/methods.md §4): one LP per primary and direction on a small
neighbourhood, widened until feasible. Its solution is an attacker move, so each kept move
proves protection; HEUR, MOD, NET and the insider repair build their patterns from it.
"""

from __future__ import annotations

import numpy as np

from argusqt.errors import Cancelled, MethodError
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.core.budget import Deadline
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.cleanup import Witnesses, find_witness
from argusqt.protection.lp.components import DOWN, UP, MoveContext

#: cheapest unsuppressed siblings per node in the first neighbourhood
K_FREE = 2
#: tables above this many cells get an intermediate neighbourhood before the whole table
LARGE = 20_000
#: tables from this many cells look for a move through suppressed cells before a whole-table
#: path LP (docs/design.md, D-13)
SUPPRESSED_FIRST = 2000


def unit_costs(ctx: MoveContext) -> tuple[np.ndarray, float, float]:
    """Cost per unit of movement of a new cell (cost + δ) and of a suppressed one (ε)."""
    w = np.abs(np.asarray(ctx.problem.cost, dtype=float))
    pos = w[w > 0]
    scale = float(pos.mean()) if pos.size else 1.0
    delta = 1e-3 * scale
    eps = 1e-6 * scale
    base = np.where(ctx.movable, w + delta, np.inf)
    return base, delta, eps


class Protector:
    """Runs path LPs for (primary, direction) pairs and keeps the witnesses they prove."""

    def __init__(
        self,
        ctx: MoveContext,
        sup: np.ndarray,
        witnesses: Witnesses,
        k_free: int,
        costs: tuple[np.ndarray, float, float] | None = None,
    ):
        """`costs`: `unit_costs(ctx)` when the caller has them (the insider repair)."""
        self.ctx = ctx
        self.sup = sup
        self.wit = witnesses
        self.k_free = k_free
        self.base, self.delta, self.eps = unit_costs(ctx) if costs is None else costs
        # _LazyScore's penalty: a maximum over the table, once per Protector instead of once
        # per neighbourhood (0.5 ms each on b31808; D-49)
        finite = self.base[np.isfinite(self.base)]
        self.penalty = 1.0 + 2.0 * float(finite.max(initial=0.0))
        self.n_lps = 0
        self.n_free = 0  # moves through suppressed cells found before a whole-table LP
        #: out of time: only the smallest neighbourhood before the whole table
        self.hurry = False

    def _cost(self, cells: np.ndarray) -> np.ndarray:
        return np.where(
            self.sup[cells],
            self.eps,
            np.where(np.isfinite(self.base[cells]), self.base[cells], 1.0),
        )

    def neighbourhoods(self, cell: int, need: float = 0.0):
        """Cell sets to try in turn: small, larger, the whole table.

        Free cells too small to carry a move of `need` are picked last: the cheapest cells
        are the smallest, and a neighbourhood of them cannot shift a big primary.
        """
        ctx = self.ctx
        if ctx.grid is not None:
            score = _LazyScore(self.sup, self.base, ctx.values, need, self.penalty)
            # siblings only (climb 1) but five free ones per node, then the whole table,
            # gives cheaper patterns than growing neighbourhoods; beyond LARGE cells the
            # whole-table LP is too slow to be the first fallback (docs/design.md, D-13)
            sizes = [(5, 6, 1)]
            if ctx.problem.n_cells > LARGE:
                sizes.append((3, 6, 1 << 30))
            for k_free, k_sup, climb in [(2, 3, 1)] if self.hurry else sizes:
                n = ctx.grid.neighbourhood(cell, score, k_free, k_sup, climb)
                if n.size < ctx.problem.n_cells:
                    yield n
        yield np.arange(ctx.problem.n_cells)

    def find(self, cell: int, direction: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The cheapest move found for (cell, direction) given `sup`: (cells, shifts) or None."""
        ctx = self.ctx
        n = ctx.problem.n_cells
        for cells in self.neighbourhoods(cell, ctx.required(cell, direction)):
            if cells.size == n and ctx.grid is not None and n >= SUPPRESSED_FIRST:
                # before the whole-table LP: a move through suppressed cells only (it adds
                # no cell, as the whole-table LP's cheapest move would; small LPs)
                found = find_witness(ctx, (cell, direction), self.sup, ctx.primary, 0)
                self.n_lps += 1
                if found is not None:
                    self.n_free += 1
                    return found
            d = ctx.path_move(cell, direction, cells, self._cost(cells))
            self.n_lps += 1
            if d is None:
                continue
            moved = d != 0
            return cells[moved], d[moved]
        return None

    def protect(self, cell: int, direction: int) -> bool:
        """Find and apply a move for (cell, direction); False when no move exists at all."""
        found = self.find(cell, direction)
        if found is None:
            return False
        idx, d = found
        self.sup[idx] = True
        self.wit.add_move(idx, d, self.ctx)
        self.wit.ensure(cell, direction, idx)
        return True


class _LazyScore:
    """Score array view (0 suppressed, cost otherwise; cells smaller than `need` after all
    others) computed only where indexed."""

    def __init__(
        self, sup: np.ndarray, base: np.ndarray, values: np.ndarray, need: float, penalty: float
    ):
        self.sup = sup
        self.base = base
        self.values = values
        self.need = need
        self.penalty = penalty  # 1 + 2 · the largest finite unit cost

    def __getitem__(self, idx):
        small = np.abs(self.values[idx]) < self.need
        return np.where(self.sup[idx], 0.0, self.base[idx] + np.where(small, self.penalty, 0.0))


def primary_order(ctx: MoveContext) -> np.ndarray:
    """Primaries by decreasing protection level, then value: big moves protect small cells."""
    prim = np.flatnonzero(ctx.primary)
    pl = ctx.lpl[prim] + ctx.upl[prim]
    return prim[np.lexsort((-ctx.values[prim], -pl))]


def protect_all(
    ctx: MoveContext,
    sup: np.ndarray,
    wit: Witnesses,
    order: np.ndarray,
    k_free: int = 2,
    progress: ProgressCallback = no_progress,
    watch: Stopwatch | None = None,
    deadline: Deadline | None = None,
    cancel: CancelToken | None = None,
) -> int:
    """Make every primary of `order` protected in both directions; returns the LP count.

    Every primary is always protected (a pattern must be safe); after `deadline` each
    one gets only its smallest neighbourhood before the whole table. Raises Cancelled when
    `cancel` fires: a pattern with unprotected primaries is no result.
    """
    prot = Protector(ctx, sup, wit, k_free)
    watch = watch or Stopwatch()
    ctx.cancel = cancel  # big path LPs stop inside HiGHS when it fires
    try:
        for n, cell in enumerate(order):
            if cancel is not None and cancel.cancelled:
                raise Cancelled("cancelled before every primary cell was protected")
            cell = int(cell)
            prot.hurry = deadline is not None and deadline.expired
            for direction in (UP, DOWN):
                if wit.covered(cell, direction, ctx):
                    continue
                if not prot.protect(cell, direction):
                    word = "upper" if direction == UP else "lower"
                    raise MethodError(
                        f"primary cell {cell} cannot be protected ({word} protection level "
                        f"{ctx.required(cell, direction):g}): no feasible attacker move within the "
                        "bounds (too many protected or empty cells around it?)"
                    )
            if n % 100 == 0:
                progress(
                    ProgressEvent(
                        message=f"Heuristic: primary {n + 1} of {len(order)}",
                        fraction=(n + 1) / max(len(order), 1),
                        incumbent=float(np.sum(ctx.problem.cost[sup & ~ctx.primary])),
                        elapsed=watch.elapsed,
                    )
                )
    finally:
        ctx.cancel = None
    return prot.n_lps


def complete_pattern(
    problem: CSPProblem,
    suppressed: np.ndarray,
    cells: np.ndarray | None = None,
    progress: ProgressCallback = no_progress,
) -> np.ndarray:
    """`suppressed` plus the cells that protect the given primaries (default: all) — repair step.

    Already suppressed cells are nearly free, so a primary that is protected by the pattern adds
    nothing. Used by the modular method after a failed full audit (argusqt/docs/methods.md §6.2).
    """
    ctx = MoveContext(problem)
    sup = np.asarray(suppressed, dtype=bool) | ctx.primary
    order = primary_order(ctx) if cells is None else np.asarray(cells, dtype=np.int64)
    protect_all(ctx, sup, Witnesses(), order, K_FREE, progress)
    return sup
