"""OPT's neighbourhood heuristic (RINS, a local branching around the incumbent; seed 001,
docs/design.md D-45): the cells on which the incumbent and the master's LP point agree are
fixed, and a small branch-and-cut on the rest, warm-started from the incumbent and given the
run's cuts, looks for a cheaper protected pattern. Bounded by counts (SCIP nodes, attacker
LPs), never by the clock, so the same table gives the same pattern on any machine and load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pyscipopt import SCIP_RESULT, Heur

from argusqt.protection.lp.separation import Cut
from argusqt.protection.suppress.scip_plugins import offer

#: share of the branch-and-cut's attacker LPs the sub-MIPs together may take
RINS_SHARE = 0.3
#: SCIP nodes of one sub-MIP
RINS_NODES = 200
#: attacker LPs of one sub-MIP (outsiders and insiders)
RINS_LPS = 1_500
#: the first sub-MIP waits until the branch-and-cut has solved this many attacker LPs
RINS_DELAY = 300
#: a neighbourhood leaving more than this share of the free cells free is the whole problem
#: again: not tried
RINS_MAX_FREE = 0.5
#: seconds handed to SCIP when the run has no time limit (its limit must be finite)
NO_CAP = 1e9
#: an LP value this close to the incumbent's 0 or 1 counts as agreeing
AGREE = 1e-6


def neighbourhood(
    free: np.ndarray, fixed: np.ndarray, inc: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """Master values of the sub-MIP (NaN = free, as Separator's `fixed`): the run's fixed cells,
    plus the free cells on which the incumbent `inc` (0/1 over all cells) and the LP point `x`
    agree, fixed at the incumbent's value."""
    out = np.array(fixed, dtype=float, copy=True)
    agree = free & (np.abs(x - inc) <= AGREE)
    out[agree] = inc[agree]
    return out


def restricted_cuts(mat: Any, rhs: np.ndarray, sub_fixed: np.ndarray) -> list[Cut] | None:
    """The run's cuts Σ a·x ≥ b (a ≥ 0, valid for every protected pattern) on the sub-MIP's
    free cells: b minus the part of the cells fixed suppressed; cuts already met by the fixed
    cells are dropped. Valid for every protected pattern of the neighbourhood, so no attacker
    LP has to find them again. None: a cut no free cell can meet (an empty neighbourhood)."""
    if mat.shape[0] == 0:
        return []
    free = np.isnan(sub_fixed)
    ones = np.where(free, 0.0, sub_fixed)
    left = rhs - mat @ ones
    sub = mat[:, np.flatnonzero(free)].tocsr()
    cols = np.flatnonzero(free)
    out: list[Cut] = []
    seen: set[bytes] = set()
    for r in np.flatnonzero(left > 1e-9):
        lo, hi = sub.indptr[r], sub.indptr[r + 1]
        cells = cols[sub.indices[lo:hi]]
        coef = sub.data[lo:hi]
        keep = coef > 0
        cells, coef = cells[keep], coef[keep]
        if cells.size == 0:
            return None
        key = cells.tobytes() + np.round(coef, 9).tobytes() + np.float64(left[r]).tobytes()
        if key in seen:
            continue
        seen.add(key)
        b = float(left[r])
        out.append(Cut(-1, "restricted", cells, coef, b, cells, coef, b))
    return out


class RinsHeur(Heur):
    """RINS inside OPT's branch-and-cut: after a node's LP, the neighbourhood of the
    incumbent where it agrees with the LP point, solved by a sub-branch-and-cut of at most
    RINS_NODES nodes and RINS_LPS attacker LPs; its pattern goes through SCIP's check of
    the whole problem (outsiders and insiders) like any other candidate. Each neighbourhood
    is tried once; all sub-MIPs together stay within RINS_SHARE of the run's attacker LPs."""

    def __init__(self, hdlr: Any, solve: Callable[..., Any], delay: float | None = None):
        self.hdlr = hdlr
        self.solve = solve  # branch_and_cut.solve_pattern (passed in: no import cycle)
        self.spent = 0
        self.seconds = 0.0  # for the log only
        self.calls = 0
        self.found = 0
        self.next_at = float(RINS_DELAY if delay is None else delay)
        self.misses = 0
        self.tried: set[bytes] = set()
        #: free cells of each neighbourhood solved (for the log)
        self.sizes: list[int] = []

    def _incumbent(self) -> np.ndarray | None:
        """The incumbent as 0/1 over all cells (fixed cells at their values), or None."""
        sol = self.model.getBestSol()
        if sol is None or self.model.getNSols() == 0:
            return None
        hdlr = self.hdlr
        return np.round(hdlr.sep.full_point(hdlr._x(sol)))

    def heurexec(self, heurtiming, nodeinfeasible):
        hdlr, run = self.hdlr, self.hdlr.run
        now = hdlr.attacker_lps()
        if run.stop.cancelled or now < self.next_at or self.spent > RINS_SHARE * now:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        if self.model.getLPSolstat() != 1:  # not an optimal LP point
            return {"result": SCIP_RESULT.DIDNOTRUN}
        inc = self._incumbent()
        if inc is None:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        sep = hdlr.sep
        x = sep.full_point(hdlr._x())
        sub_fixed = neighbourhood(sep.free, sep.fixed, inc, x)
        n_free = int(np.isnan(sub_fixed).sum())
        key = np.isnan(sub_fixed).tobytes() + np.packbits(inc > 0.5).tobytes()
        if key in self.tried:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        self.tried.add(key)
        if n_free == 0 or n_free > RINS_MAX_FREE * int(sep.free.sum()):
            return {"result": SCIP_RESULT.DIDNOTRUN}
        store = hdlr.store
        store.violated(np.zeros(store.n))  # folds the pending cuts into its matrix
        cuts = restricted_cuts(store.mat, store.rhs, sub_fixed)
        if cuts is None:  # the incumbent lies in it, so this never happens
            return {"result": SCIP_RESULT.DIDNOTRUN}
        inc_obj = float(self.model.getSolObjVal(self.model.getBestSol()))
        t0 = run.watch.elapsed
        self.sizes.append(n_free)
        out = self.solve(
            sep.problem,
            sub_fixed,
            max_time=min(run.stop.deadline.remaining, NO_CAP),
            gap=0.0,
            start=inc > 0.5,
            cancel=run.cancel,
            insiders=hdlr.insiders,
            max_nodes=RINS_NODES,
            max_lps=RINS_LPS,
            init_cuts=cuts,
            bridgeless=hdlr.bridgeless is not None,
            covers=hdlr.covers,
            rins=False,
        )
        self.seconds += run.watch.elapsed - t0
        self.spent += int(out.lps)
        self.calls += 1
        if out.timed_out:
            run.stop.deadline.hit = True  # the clock cut the sub-MIP: the run says so
        self.next_at = hdlr.attacker_lps() + max(1, int(out.lps)) * (1 + self.misses)
        if out.mask is not None and not run.stop.cancelled:
            cost = np.asarray(hdlr._obj())
            obj = float(cost[out.mask].sum())
            if obj < inc_obj - 1e-9 * max(1.0, abs(inc_obj)):
                if offer(self, hdlr, out.mask):
                    self.found += 1
                    self.misses = 0
                    return {"result": SCIP_RESULT.FOUNDSOL}
        self.misses += 1
        return {"result": SCIP_RESULT.DIDNOTFIND}
