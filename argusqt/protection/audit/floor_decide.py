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
        self.index = np.arange(2 * n, dtype=np.int32)
        self.n = n
        self.n_lps = 0

    def point(
        self, lo: np.ndarray, hi: np.ndarray, j: int, direction: int, level: float
    ) -> tuple[str, np.ndarray | None]:
        """Moves within [lo, hi] (each ∋ 0) keeping the relations, with move j at `level` or
        past it: ('found', δ), ('none', None) when HiGHS calls it infeasible, ('unknown',
        None) otherwise (iteration limit, numerical trouble). Unchecked."""
        up = np.maximum(hi, 0.0)
        down = np.maximum(-lo, 0.0)
        floor = np.zeros(2 * self.n)
        if direction == UP:
            if level > up[j]:
                return "none", None
            floor[j], down[j] = max(level, 0.0), 0.0
        else:
            if -level > down[j]:
                return "none", None
            floor[self.n + j], up[j] = max(-level, 0.0), 0.0
        self.h.changeColsBounds(
            2 * self.n, self.index, floor, np.ascontiguousarray(np.concatenate([up, down]))
        )
        self.h.clearSolver()  # the slack basis: every part at zero but the primary's
        self.n_lps += 1
        status, x, _ = solve(self.h)
        if status == "optimal" and x is not None:
            return "found", x[: self.n] - x[self.n :]
        return ("none" if status == "infeasible" else "unknown"), None
