"""Whether a group's LP reaches the level, decided from the true values (D-109).

On an additive block the zero move is a point of every attacker's LP. With each move split
in two non-negative parts (δ = δ⁺ − δ⁻), the all-zero start is a vertex; the primary's own
part fixed at the level and no objective, dual simplex from that slack basis only has to
repair the primary's few relations: tens of iterations on b31808's 10,414-cell block where
the group LP from the anchor's basis takes thousands. Its point is a candidate only: the
caller checks it (bounds, relations, level) before it stands for anything."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from argusqt.protection.lp.components import UP, make_highs, solve

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

#: simplex iterations one decision may take: past it the group goes the plain way (a count)
DECIDE_ITERATIONS = 5000


class Decider:
    """The block's relations over (δ⁺, δ⁻), one HiGHS model re-solved from its slack basis
    for each group's bounds."""

    def __init__(self, matrix: sp.csc_matrix, miss: np.ndarray) -> None:
        n = matrix.shape[1]
        split = sp.hstack([matrix, -matrix], format="csc")
        zero = np.zeros(2 * n)
        self.h = make_highs(split, zero, zero, zero, miss, miss, primal=False, presolve=False)
        # dual simplex: with no objective every basis is dual feasible
        self.h.setOptionValue("simplex_strategy", 1)
        self.h.setOptionValue("simplex_iteration_limit", DECIDE_ITERATIONS)
        self.floor, self.ceiling = zero.copy(), zero.copy()  # the model's bounds now
        self.n = n
        self.n_lps = 0

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
            self._bounds(lo, hi, j, direction, level, capped=True)
            self.h.clearSolver()
            self.n_lps += 1
            status, x, _ = solve(self.h)
        finally:
            self.h.changeColsCost(2, cols, np.zeros(2))
        if status != "optimal" or x is None:
            return None
        return x[: self.n] - x[self.n :]

    def _bounds(self, lo, hi, j: int, direction: int, level: float, capped: bool) -> bool:
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

    def point(
        self, lo: np.ndarray, hi: np.ndarray, j: int, direction: int, level: float
    ) -> tuple[str, np.ndarray | None]:
        """Moves within [lo, hi] (each ∋ 0) keeping the relations, with move j at `level` or
        past it: ('found', δ), ('none', None) when HiGHS calls it infeasible, ('unknown',
        None) otherwise (iteration limit, numerical trouble). Unchecked."""
        if not self._bounds(lo, hi, j, direction, level, capped=False):
            return "none", None
        self.h.clearSolver()  # the slack basis: every part at zero but the primary's
        self.n_lps += 1
        status, x, _ = solve(self.h)
        if status == "optimal" and x is not None:
            return "found", x[: self.n] - x[self.n :]
        return ("none" if status == "infeasible" else "unknown"), None
