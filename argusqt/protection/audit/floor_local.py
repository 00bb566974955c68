"""A pair's first group LP restricted to where it differs from the anchor (D-106).

The first group (all of c's attackers but its owner) differs from the anchor (the
coalition's bounds, c's own off) only on cells whose coalition floor was the owner's. Those
whose bound binds at the anchor's optimum (a nonzero reduced cost), the primary, and the
cells within `LOCAL_DEPTH` relations of them are let free; every other cell stays at the
anchor's point. The small LP's point, once checked against the group's bounds and the
block's relations, is a point of the group's LP: a witness without the block's LP."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from argusqt.protection.lp.components import UP, make_highs, solve

if TYPE_CHECKING:
    import scipy.sparse as sp

#: relation steps from the freed cells (a count; measured 1, 3, 6 on b31808, D-106)
LOCAL_DEPTH = 6


def local_point(
    a: sp.csc_matrix,
    miss: np.ndarray,
    base: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray],
    anchor: tuple[np.ndarray, np.ndarray, np.ndarray],
    j: int,
    direction: int,
    depth: int | None = None,
) -> np.ndarray | None:
    """The restricted LP's extreme point of cell j over the block's cells (values), or None.
    `bounds`: the group's (lo, hi) per cell; `anchor`: the failed LP's point (moves), its
    reduced costs and where its bounds were tighter than the group's."""
    depth = LOCAL_DEPTH if depth is None else depth
    moves, red, tighter = anchor
    free = np.union1d(np.flatnonzero(tighter & (red != 0)), [j])
    rows_of = a.tocsr()
    for _ in range(depth):
        rows = np.unique(a[:, free].indices)
        free = np.union1d(free, np.unique(rows_of[rows].indices))
    rows = np.unique(a[:, free].indices)
    fixed = np.ones(base.size, dtype=bool)
    fixed[free] = False
    sub = rows_of[rows]
    rhs = miss[rows] - sub[:, np.flatnonzero(fixed)] @ moves[fixed]
    lo, hi = bounds
    col_lo = np.minimum(lo[free] - base[free], 0.0)
    col_hi = np.maximum(hi[free] - base[free], 0.0)
    cost = np.zeros(free.size)
    cost[np.searchsorted(free, j)] = -1.0 if direction == UP else 1.0
    h = make_highs(sub[:, free], cost, col_lo, col_hi, rhs, rhs, primal=False, presolve=False)
    status, x, _ = solve(h)
    if status != "optimal" or x is None:
        return None
    point = base + moves
    point[free] = base[free] + x
    return point
