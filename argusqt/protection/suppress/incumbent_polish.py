"""OPT's clean-up of its incumbent (docs/design.md D-61): a secondary of SCIP's best pattern
whose suppression no attacker and not the rule on combined cells needs is published again, and
the cheaper pattern goes back to SCIP. Patterns from the guided heuristic, the rule's repair
or a branched node often keep such cells. Bounded by counts (trials, attacker LPs), never by
the clock, so the same table gives the same pattern on any machine and load.

A trial is judged first on the attacker LPs of the primaries whose block holds the dropped
cell (the other blocks do not change) and the rule; SCIP's check of the whole problem
(outsiders, insiders, the rule) decides when it is offered, so "proven optimal" and the
bound keep their meaning.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pyscipopt import SCIP_RESULT, Heur

from argusqt.protection.suppress.scip_plugins import PatternRule, offer

#: share of the branch-and-cut's attacker LPs the clean-up (its trials and SCIP's checks of
#: its patterns) may take
POLISH_SHARE = 0.15
#: trials (a secondary published again) per call
PER_CALL = 40
#: trials in one run of the branch-and-cut
MAX_TRIALS = 2_000
#: incumbents kept in mind as cleaned (their trials are not made again)
MEMO = 256


class PolishHeur(Heur):
    """1-opt on SCIP's incumbent: its free suppressed cells, dearest first (ties by index), are
    published again one at a time while the attackers of their block and the rule still
    accept the pattern; each cheaper pattern is offered to SCIP (trySol, the full check)."""

    def __init__(self, hdlr: Any, rule: PatternRule | None):
        self.hdlr = hdlr
        self.rule = rule
        self.calls = 0
        self.trials = 0
        self.found = 0
        self.lps = 0  # attacker LPs of the trials and of SCIP's checks of the offers
        #: incumbents already cleaned (keys, oldest first), the current one and the cells
        #: tried on it (and on the cheaper patterns this heuristic made from it)
        self.done: dict[bytes, None] = {}
        self.key: bytes | None = None
        self.tried: set[int] = set()

    def _incumbent(self) -> np.ndarray | None:
        """SCIP's best pattern over all cells (fixed cells at their values), or None."""
        sol = self.model.getBestSol()
        if sol is None or self.model.getNSols() == 0:
            return None
        hdlr = self.hdlr
        return hdlr.sep.full_point(hdlr._x(sol)) > 0.5

    def _affected(self, mask: np.ndarray, cell: int) -> np.ndarray:
        """The primaries whose attacker LP block holds `cell` in `mask` (the only ones whose
        LP changes when it is published)."""
        sep = self.hdlr.sep
        lab, _, _ = sep._components(mask.astype(float) > 0.5)
        return sep.targets[lab[sep.targets] == lab[cell]]

    def _protected(self, trial: np.ndarray, cell: int, mask: np.ndarray) -> bool | None:
        """The block's attackers accept `trial` (None: the run stopped). Their cuts, valid for
        every protected pattern, reject later candidates without an LP (the handler's store)."""
        hdlr = self.hdlr
        sep = hdlr.sep
        x = np.where(sep.free, trial, 0.0).astype(float)
        if hdlr.store.violated(x):
            return False
        before = hdlr.attacker_lps()
        out = hdlr._separate(sep, x, self._affected(mask, cell), stop_at_first=True)
        self.lps += hdlr.attacker_lps() - before
        if sep.interrupted:
            return None
        if out:
            hdlr.store.add([c for o in out for c in o.cuts])
            return False
        return True

    def _forget(self, key: bytes) -> None:
        """`key` is cleaned: never tried again (the MEMO latest kept)."""
        self.done[key] = None
        if len(self.done) > MEMO:
            del self.done[next(iter(self.done))]

    def heurexec(self, heurtiming, nodeinfeasible):
        hdlr, run = self.hdlr, self.hdlr.run
        if run.stop.cancelled or self.trials >= MAX_TRIALS:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        if self.lps > POLISH_SHARE * hdlr.attacker_lps():
            return {"result": SCIP_RESULT.DIDNOTRUN}
        mask = self._incumbent()
        if mask is None:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        key = np.packbits(mask).tobytes()
        if key in self.done:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        if key != self.key:
            self.key, self.tried = key, set()
        self.calls += 1
        cost = np.asarray(hdlr._obj())
        free = hdlr.sep.free
        cells = np.flatnonzero(free & mask)
        cells = cells[np.lexsort((cells, -cost[cells]))]  # dearest first, then by index
        result = SCIP_RESULT.DIDNOTFIND
        todo = [int(c) for c in cells if int(c) not in self.tried and cost[c] > 0.0]
        for c in todo[:PER_CALL]:
            if self.trials >= MAX_TRIALS:
                break
            self.tried.add(c)
            self.trials += 1
            trial = mask.copy()
            trial[c] = False
            if self.rule is not None and self.rule(trial):
                continue
            ok = self._protected(trial, c, mask)
            if ok is None or run.stop.cancelled:
                return {"result": result}
            if not ok:
                continue
            before = hdlr.attacker_lps()
            accepted = offer(self, hdlr, trial)
            self.lps += hdlr.attacker_lps() - before
            if accepted:
                self.found += 1
                result = SCIP_RESULT.FOUNDSOL
                self._forget(key)
                mask = trial  # go on from the cheaper pattern
                key = self.key = np.packbits(mask).tobytes()
        if len(todo) <= PER_CALL:
            self._forget(key)
        return {"result": result}
