"""The last attacker moves of a separator, scaled to a new point, as the running extremes a
block's LPs start from (docs/design.md, D-82).

Every attacker LP's solution δ (A δ = 0, −LB·x ≤ δ ≤ UB·x at its point) is a move of every
cell it shifts, not only of the primary it was solved for. At a new point x it is scaled by
t = min(1, minᵢ capᵢ(x)/|δᵢ|) (capᵢ = UBᵢxᵢ where δᵢ > 0, LBᵢxᵢ where δᵢ < 0) and is then an
attacker move there, so t·δⱼ is a shift the attacker reaches for every cell j: Certificates'
argument (lp/separation.py), for the last `size` moves and every cell at once, in a few array
products a point.
"""

from __future__ import annotations

import numpy as np

#: entries (moves × cells) the pool holds at most: its products per point stay small
CELLS_BUDGET = 2**17
#: a moved cell's room per unit of x over |δ| at most this: finite, so x = 0 gives t = 0
PER_X_CAP = 1e300


class MovePool:
    """A ring of the last moves: per move its room per unit of x over |δ| on each cell (inf
    where it does not move the cell) and its shift of each cell."""

    def __init__(self, lb: np.ndarray, ub: np.ndarray, size: int):
        n = lb.shape[0]
        self.size = max(1, min(int(size), CELLS_BUDGET // max(n, 1)))
        self.lb, self.ub = lb, ub
        self.per_x = np.full((self.size, n), np.inf)
        self.shift = np.zeros((self.size, n))
        self.count = 0  # moves kept so far (the ring's next row: count % size)
        self._pending: list[tuple[int, np.ndarray, np.ndarray]] = []  # not yet in the arrays
        self._point: np.ndarray | None = None
        self._low = self._high = np.zeros(n)

    def add(self, cells: np.ndarray, y: np.ndarray) -> None:
        """Keep the move y on `cells` (an attacker LP's solution over its block); it joins
        the arrays at the next point read (the moves of one point lie in its blocks, whose
        later targets the running extremes already cover)."""
        nz = np.flatnonzero(y)
        if nz.size == 0:
            return
        self._pending.append((self.count % self.size, cells[nz], y[nz]))
        self.count += 1
        if len(self._pending) > self.size:  # overwritten before ever read
            self._pending.pop(0)

    def extremes(self, cells: np.ndarray, xf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lowest, highest) shift of each of `cells` by a kept move scaled to the point xf
        (0 where none moves it that way)."""
        if self._point is not xf:
            self._reaches(xf)
        return self._low[cells], self._high[cells]

    def _flush(self) -> None:
        """The pending moves written into their rows, all at once."""
        rows = np.array([r for r, _, _ in self._pending], dtype=np.int64)
        lens = np.array([c.size for _, c, _ in self._pending], dtype=np.int64)
        c = np.concatenate([c for _, c, _ in self._pending])
        d = np.concatenate([d for _, _, d in self._pending])
        self._pending.clear()
        r = np.repeat(rows, lens)
        self.per_x[rows] = np.inf
        self.shift[rows] = 0.0
        # capped at a finite value: a published cell (x = 0) must give 0, not inf·0 = nan
        # (which fmin would skip) for an infinite room; a smaller t is still a move
        with np.errstate(over="ignore"):
            per_x = np.where(d > 0, self.ub[c], self.lb[c]) / np.abs(d)
        self.per_x[r, c] = np.minimum(per_x, PER_X_CAP)
        self.shift[r, c] = d

    def _reaches(self, xf: np.ndarray) -> None:
        """Per cell the farthest scaled move down and up at the point xf (held for the
        point: one product per separation call)."""
        if self._pending:
            self._flush()
        m = min(self.count, self.size)
        with np.errstate(invalid="ignore"):  # inf·0 off a move's cells: nan, fmin skips it
            prod = self.per_x[:m] * xf
        # a moved cell published (x = 0) gives t = 0; every row moves a cell (no all-nan row)
        t = np.minimum(np.fmin.reduce(prod, axis=1), 1.0)
        scaled = self.shift[:m] * t[:, None]
        self._high = scaled.max(axis=0, initial=0.0)
        self._low = scaled.min(axis=0, initial=0.0)
        self._point = xf
