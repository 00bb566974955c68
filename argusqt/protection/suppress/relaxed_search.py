"""OPT's search without the rule on combined cells, its pattern repaired (docs/design.md D-61):
the old path (OPT without the rule, the rule's cells added after) inside the run, bounded by
counts. With the rule's rows in the LP (D-55) the guided heuristic starts from other points and
on some tables (the sample) ends far above what the old path publishes; once the run's gap is
still large after a while, one sub-branch-and-cut on the same free cells without the rule,
warm-started from the incumbent and given the run's capacity cuts, looks for cheap protected
patterns, and the cheapest once repaired goes to SCIP, which checks it in full, rule included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pyscipopt import SCIP_RESULT, Heur

from argusqt.protection.suppress.combined_repair_heur import repair_pattern
from argusqt.protection.suppress.local_branching import NO_CAP, restricted_cuts
from argusqt.protection.suppress.scip_plugins import Guide, PatternRule, offer

#: the search waits until the run has solved this many attacker LPs
RELAXED_DELAY = 3_000
#: and runs only while the run's gap is above this (near the bound, the run closes it itself)
RELAXED_GAP = 0.15
#: attacker LPs of the search (its guided heuristic's are counted apart, as in the run)
RELAXED_LPS = 6_000
#: SCIP nodes of the search
RELAXED_NODES = 2_000


class RelaxedSearchHeur(Heur):
    """Once per run: the branch-and-cut without the rule on combined cells (RELAXED_LPS attacker
    LPs, RELAXED_NODES nodes), its patterns repaired for the rule (repair_pattern) and the
    cheapest offered to SCIP when cheaper than the incumbent."""

    def __init__(
        self,
        hdlr: Any,
        solve: Callable[..., Any],
        rule: PatternRule,
        weight: np.ndarray,
        guide: Guide | None,
    ):
        self.hdlr = hdlr
        self.solve = solve  # branch_and_cut.solve_pattern (passed in: no import cycle)
        self.rule = rule
        self.weight = weight
        # the old path's guided heuristic: its patterns without the rule's cells (the repair
        # comes once, on the search's best)
        self.guide = getattr(guide, "plain", guide)
        self.calls = 0
        self.found = 0
        self.spent = 0  # attacker LPs of the search
        self.best: float | None = None  # its best pattern's cost once repaired (for the log)
        self.raw: float | None = None  # and before the repair

    def _gap(self) -> float:
        """The run's relative gap now (inf without an incumbent or a bound)."""
        inc = float(self.model.getPrimalbound())
        bound = float(self.model.getDualbound())
        run = self.hdlr.run
        if run.bound is not None:
            bound = max(bound, run.bound)
        if abs(inc) >= 1e19 or abs(bound) >= 1e19:
            return np.inf
        return (inc - bound) / max(abs(inc), 1e-9)

    def heurexec(self, heurtiming, nodeinfeasible):
        hdlr, run = self.hdlr, self.hdlr.run
        if self.calls or run.stop.cancelled or hdlr.attacker_lps() < RELAXED_DELAY:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        if self.model.getNSols() == 0 or self._gap() <= RELAXED_GAP:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        self.calls += 1
        sep = hdlr.sep
        inc_sol = self.model.getBestSol()
        inc = sep.full_point(hdlr._x(inc_sol)) > 0.5
        inc_obj = float(self.model.getSolObjVal(inc_sol))
        store = hdlr.store
        store.violated(np.zeros(store.n))  # folds the pending cuts into its matrix
        cuts = restricted_cuts(store.mat, store.rhs, sep.fixed)
        if cuts is None:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        out = self.solve(
            sep.problem,
            sep.fixed,
            max_time=min(run.stop.deadline.remaining, NO_CAP),
            gap=0.0,
            start=inc,
            cancel=run.cancel,
            insiders=hdlr.insiders,
            guide=self.guide,
            max_nodes=RELAXED_NODES,
            max_lps=RELAXED_LPS,
            init_cuts=cuts,
            bridgeless=False,
            covers=hdlr.covers,
            reuse_moves=sep.reuse,
        )
        self.spent += int(out.lps)
        if out.timed_out:
            run.stop.deadline.hit = True  # the clock cut the search: the run says so
        if out.mask is None or run.stop.cancelled:
            return {"result": SCIP_RESULT.DIDNOTFIND}
        cost = np.asarray(hdlr._obj())
        self.raw = float(cost[out.mask].sum())
        fixed, _ = repair_pattern(out.mask, self.rule, cost, sep.free, self.weight)
        if fixed is None:
            return {"result": SCIP_RESULT.DIDNOTFIND}
        self.best = float(cost[fixed].sum())
        if self.best < inc_obj - 1e-9 * max(1.0, abs(inc_obj)) and offer(self, hdlr, fixed):
            self.found += 1
            return {"result": SCIP_RESULT.FOUNDSOL}
        return {"result": SCIP_RESULT.DIDNOTFIND}
