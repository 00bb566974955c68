"""The repair of a pattern over the whole table (argusqt/docs/methods.md §4): audit, then an
LP step for every primary still short, until the audit passes.

MOD, GH, NET and linked tables end with it; apart from modular.py so that they do not import
MOD's branch-and-cut.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from argusqt.errors import MethodError
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress
from argusqt.protection.audit.outsider import audit
from argusqt.protection.core.problem import CSPProblem

#: repair rounds of the full-table audit before giving up
MAX_REPAIR_ROUNDS = 50


def repair(
    problem: CSPProblem,
    sup: np.ndarray,
    cancel: CancelToken | None = None,
    progress: ProgressCallback = no_progress,
) -> tuple[np.ndarray, int]:
    """Audit the full table; protect every failing primary with an LP step
    (argusqt/docs/methods.md §4); repeat.

    Returns the repaired mask and the number of repair rounds. Raises MethodError when a
    primary cannot be protected at all, Cancelled when `cancel` fires during an audit.
    """

    sup = sup.copy()
    rounds = 0
    for rounds in range(1, MAX_REPAIR_ROUNDS + 1):
        res = audit(problem, sup, intervals=False, cancel=cancel)
        fails = res.failures
        if fails.size == 0:
            return sup, rounds - 1
        progress(ProgressEvent(message=f"Modular: repairing {fails.size} under-protected cells"))
        for p in fails:
            tol = problem.tolerance
            if res.upper[p] < problem.values[p] + problem.upl[p] - tol:
                sup |= _heuristic_step(problem, sup, int(p), +1)
            if res.lower[p] > problem.values[p] - problem.lpl[p] + tol:
                sup |= _heuristic_step(problem, sup, int(p), -1)
    raise MethodError(f"modular repair did not converge in {MAX_REPAIR_ROUNDS} rounds")


def _heuristic_step(
    problem: CSPProblem,
    sup: np.ndarray,
    p: int,
    direction: int,
    movable: np.ndarray | None = None,
) -> np.ndarray:
    """Cheapest cells whose joint move lets primary p reach its protection level (the LP of
    argusqt/docs/methods.md §4).

    `movable`: cells that may move (default: suppressed cells and candidates).
    """
    n = problem.n_cells
    a = problem.values
    lb = np.maximum(a - problem.lower, 0.0)
    ub = np.maximum(problem.upper - a, 0.0)
    movable = sup | problem.candidate if movable is None else movable
    w = np.where(sup, 0.0, np.asarray(problem.cost, dtype=float) + 1e-6)
    pl = problem.upl[p] if direction > 0 else problem.lpl[p]
    pl = pl + problem.tolerance
    up_hi = np.where(movable, ub, 0.0)
    dn_hi = np.where(movable, lb, 0.0)
    if direction > 0:
        bounds_up = (up_hi.copy(), dn_hi.copy())
        bounds_up[0][p] = min(pl, ub[p])
        lo_up = np.zeros(n)
        lo_up[p] = min(pl, ub[p])
        lo_dn = np.zeros(n)
        bounds_up[1][p] = 0.0
    else:
        bounds_up = (up_hi.copy(), dn_hi.copy())
        bounds_up[1][p] = min(pl, lb[p])
        lo_dn = np.zeros(n)
        lo_dn[p] = min(pl, lb[p])
        lo_up = np.zeros(n)
        bounds_up[0][p] = 0.0
    from scipy.optimize import linprog  # here: scipy.optimize costs a batch run ~0.3 s to import

    m = sp.csr_matrix(problem.relations)
    a_eq = sp.hstack([m, -m]).tocsr()
    bounds = np.c_[np.r_[lo_up, lo_dn], np.r_[bounds_up[0], bounds_up[1]]]
    res = linprog(  # type: ignore[call-overload]  # scipy-stubs: no overload takes csr A_eq
        np.r_[w, w], A_eq=a_eq, b_eq=np.zeros(m.shape[0]), bounds=bounds, method="highs"
    )
    if res.status != 0:
        raise MethodError(
            f"cell {p} cannot be protected: no combination of suppressible cells lets it move "
            "by its protection level (bounds or protection level too large)"
        )
    z = res.x[:n] + res.x[n:]
    return (z > 1e-7) & movable
