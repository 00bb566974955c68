"""One respondent against one primary in a big component, decided on a few relations around it.

The attacker LP of a 10⁴-cell component costs 0.2–1.3 s per re-solve; its answer is usually
decided near the primary. With the relations within h hops of the primary (cells at most
h − 1 hops away, all their suppressed cells free within their bounds, the others dropped)
the LP is a *relaxation*: its interval contains the attacker's, so a side it cannot reach
is a disclosure. With those cells free and every other cell at its value the LP is a
*restriction*: its interval lies inside the attacker's, so a side it reaches is safe.
Hops grow until one of the two decides; what neither decides goes to the component's LP.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.protection.audit.insider_cover import Hops
from argusqt.protection.lp.components import UP, new_highs, pass_model, solve

#: hops tried before the component's own LP (docs/design.md, D-15: enough for every couple
#: sampled on the largest benchmark table)
MAX_HOPS = 6
#: a relaxation or restriction of more free cells is left to the component's LP
MAX_CELLS = 3000


@dataclass(frozen=True)
class Side:
    """A side decided: `safe`, and the bound that shows it (the shift from the value)."""

    safe: bool
    shift: float


class LocalBounds:
    """Relaxation and restriction LPs of one attacker around a cell (one HiGHS, reused)."""

    def __init__(
        self,
        hops: Hops,
        values: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        miss: np.ndarray,
        tol: float,
    ):
        self.hops = hops
        self.rel = hops.csr
        self.lo = lo - values  # bounds of the moves from the values
        self.hi = hi - values
        self.miss = miss  # right-hand sides of the moves: 0 where the values add up
        self.tol = tol
        self.lp = new_highs(primal=False)
        self.n_lps = 0
        self.decided: Counter[str] = Counter()

    def decide(self, cell: int, direction: int, level: float, known: np.ndarray) -> Side | None:
        """Whether the attacker that knows `known` moves `cell` by `level` that way, or None."""
        cells = np.array([cell], dtype=np.int64)
        for h in range(1, MAX_HOPS + 1):
            rows = self.hops.rows_of(cells)
            wider = self.hops.cells_of(rows)
            if wider.size > MAX_CELLS:
                return None
            # relaxation: only the relations within h hops, all their suppressed cells free
            reach = self._move(cell, direction, wider, rows, known)
            if reach is not None and reach < level - self.tol:
                self.decided[f"disclosed within {h} hops"] += 1
                return Side(False, reach)
            # restriction: the same cells free, every relation they are in, the rest fixed
            reach = self._move(cell, direction, wider, self.hops.rows_of(wider), known)
            if reach is not None and reach >= level - self.tol:
                self.decided[f"safe within {h} hops"] += 1
                return Side(True, reach)
            if wider.size == cells.size:
                return None  # the whole component: its own LP decides
            cells = wider
        return None

    def _move(
        self, cell: int, direction: int, cells: np.ndarray, rows: np.ndarray, known: np.ndarray
    ) -> float | None:
        """Largest shift of `cell` that way with `cells` free, `rows` kept, `known` fixed."""
        sub = self.rel[rows][:, cells].tocsc()
        lo = self.lo[cells].copy()
        hi = self.hi[cells].copy()
        fixed = np.isin(cells, known)
        lo[fixed] = hi[fixed] = 0.0
        cost = np.zeros(cells.size)
        cost[int(np.searchsorted(cells, cell))] = -1.0 if direction == UP else 1.0
        rhs = self.miss[rows]
        pass_model(self.lp, sub.indptr, sub.indices, sub.data, rows.size, cost, lo, hi, rhs, rhs)
        status, _, obj = solve(self.lp)
        self.n_lps += 1
        if status != "optimal":
            return None
        return -obj
