"""OPT's repair heuristic for the rule on combined cells (US#160, docs/design.md D-54): a 0/1
candidate every attacker passed but whose determined sums the rule makes unsafe is thrown
away by the rule's no-goods (D-53); here it gets the cells the rule needs and goes back to
SCIP, so a search cut short keeps cheap patterns that pass the rule. Bounded by counts
(cells added, rule checks, repairs), never by the clock.

Suppressing more cells never narrows an attacker's interval (outsider or insider: it only
drops equations the attacker could use), so a repaired candidate stays protected; SCIP still
checks it in full (trySol), rule included, so what it keeps is a pattern of the problem posed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pyscipopt import SCIP_RESULT, Heur

from argusqt.protection.suppress.scip_plugins import PatternRule, _CutStore, offer

#: cells one repair may add
MAX_ADDED = 40
#: checks of the rule (one pass over the table's relations each) one repair may make
MAX_RULE_CHECKS = 400
#: candidates waiting for a repair (the cheapest kept)
QUEUE = 16
#: repairs in one run of the branch-and-cut (OPT's and MOD's whole-table search). 200 bound
#: on g30 only with the guided heuristic's repaired patterns (option guided_rule, off): its
#: no-goods then queue five times more candidates; 400 did not make it pay (D-61)
MAX_REPAIRS = 200
#: repairs per call of the heuristic
PER_CALL = 4
#: share of the branch-and-cut's attacker LPs that SCIP's checks of the repaired patterns
#: may take (a count, like the guided heuristic's GUIDED_SHARE): a candidate only the
#: rule's no-goods rejected is not known protected, so its check may cost a full round
REPAIR_SHARE = 0.1


def _still_unsafe(found: list[tuple[int, np.ndarray, np.ndarray]], total: int, group) -> bool:
    """The relation of `total` still gives an unsafe sum containing `group`."""
    need = set(np.asarray(group).tolist())
    return any(t == total and need <= set(np.asarray(g).tolist()) for t, g, _ in found)


def repair_pattern(
    mask: np.ndarray,
    rule: PatternRule,
    cost: np.ndarray,
    free: np.ndarray,
    weight: np.ndarray,
    *,
    max_added: int = MAX_ADDED,
    max_checks: int = MAX_RULE_CHECKS,
) -> tuple[np.ndarray | None, int]:
    """`mask` with the free cells the rule on combined cells needs added (None when some
    unsafe relation has no free cell left, or the counts ran out) and the rule checks made.

    Per unsafe relation in the rule's order: the cheapest free cell among its published
    total and parts whose suppression leaves no unsafe sum in that relation (publishing
    nothing of it: the total always does); when none is free, the part weighing most
    (`weight`, e.g. |value|) and another round. A new suppression may make another sum
    unsafe: the rounds go on until none is, within `max_added` cells."""
    out = np.asarray(mask, dtype=bool).copy()
    found = rule(out)
    checks = 1
    added = 0
    while found:
        if added >= max_added or checks >= max_checks:
            return None, checks
        total, group, others = found[0]
        cands = [int(c) for c in np.r_[total, others] if free[c] and not out[c]]
        if not cands:
            return None, checks
        chosen = None
        for c in sorted(cands, key=lambda c: (float(cost[c]), c)):
            if checks >= max_checks:
                return None, checks
            out[c] = True
            trial = rule(out)
            checks += 1
            if not _still_unsafe(trial, total, group):
                chosen, found = c, trial
                break
            out[c] = False
        if chosen is None:  # no single cell makes it safe: the heaviest part, and again
            parts = [c for c in cands if c != total] or cands
            c = max(parts, key=lambda c: (float(weight[c]), -c))
            out[c] = True
            found = rule(out)
            checks += 1
        added += 1
    return out, checks


def repair_cost(
    mask: np.ndarray, rule: PatternRule, cost: np.ndarray, free: np.ndarray, weight: np.ndarray
) -> float:
    """What the rule's cells add to the cost of `mask` (repair_pattern; inf when it cannot be
    repaired within the counts): a pattern failing the rule costs that much more published."""
    fixed, _ = repair_pattern(mask, rule, cost, free, weight)
    m = np.asarray(mask, dtype=bool)
    return float("inf") if fixed is None else float(np.asarray(cost, dtype=float)[fixed & ~m].sum())


class RuleRecorder:
    """The rule on combined cells as the capacity handler calls it — only at 0/1 points every
    attacker (outsider and insider) passed — keeping the patterns it rejects, the cheapest
    QUEUE, for the repair heuristic."""

    def __init__(self, rule: PatternRule, cost: np.ndarray):
        self.rule = rule
        self.cost = cost
        #: pattern key → (cost, mask) of rejected patterns not yet repaired
        self.pending: dict[bytes, tuple[float, np.ndarray]] = {}
        #: keys already taken (repaired or dropped): never queued again
        self.seen: set[bytes] = set()

    def __call__(self, mask: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        found = self.rule(mask)
        if found:
            self.keep(mask)
        return found

    def keep(self, mask: np.ndarray) -> None:
        """Queue a pattern the rule rejects (the QUEUE cheapest stay)."""
        m = np.asarray(mask, dtype=bool)
        key = np.packbits(m).tobytes()
        if key not in self.seen and key not in self.pending:
            self.pending[key] = (float(self.cost[m].sum()), m.copy())
            if len(self.pending) > QUEUE:
                worst = max(self.pending, key=lambda k: (self.pending[k][0], k))
                del self.pending[worst]

    def take(self) -> tuple[float, np.ndarray] | None:
        """The cheapest pattern waiting (ties by its key: the same order on every machine)."""
        if not self.pending:
            return None
        key = min(self.pending, key=lambda k: (self.pending[k][0], k))
        self.seen.add(key)
        return self.pending.pop(key)


class RuleAwareStore(_CutStore):
    """The capacity handler's store of cuts, with the rule's no-goods apart: a candidate that
    only they reject (no capacity cut does) is queued for the repair too — SCIP's later
    candidates meet the rule's no-goods here, before any attacker LP or rule check (D-53).
    Such a candidate is not known protected: SCIP's check of its repair decides."""

    def __init__(self, n: int, recorder: RuleRecorder, full_point: Any):
        super().__init__(n)
        self.rule_cuts = _CutStore(n)
        self.recorder = recorder
        self.full_point = full_point
        #: candidates only the rule's no-goods rejected
        self.queued = 0

    def add(self, cuts: list) -> None:
        super().add([c for c in cuts if c.kind != "combined"])
        self.rule_cuts.add([c for c in cuts if c.kind == "combined"])

    def violated(self, x: np.ndarray) -> bool:
        if super().violated(x):
            return True
        if self.rule_cuts.violated(x):
            self.queued += 1
            self.recorder.keep(self.full_point(x) > 0.5)
            return True
        return False


class CombinedRepairHeur(Heur):
    """Repairs the patterns the rule alone rejected (RuleRecorder) and offers them to SCIP
    when cheaper than its incumbent; SCIP's check of the whole problem decides."""

    def __init__(self, hdlr: Any, recorder: RuleRecorder, weight: np.ndarray):
        self.hdlr = hdlr
        self.recorder = recorder
        self.weight = weight
        self.calls = 0
        self.repairs = 0
        self.found = 0
        self.checks = 0  # rule checks of the repairs
        self.lps = 0  # attacker LPs of SCIP's checks of the repaired patterns

    def repaired(self, mask: np.ndarray) -> np.ndarray | None:
        """`mask` (over all cells) made to pass the rule with free cells only, or None."""
        if self.repairs >= MAX_REPAIRS:
            return None
        self.repairs += 1
        self.recorder.seen.add(np.packbits(np.asarray(mask, dtype=bool)).tobytes())
        cost = self.recorder.cost
        out, checks = repair_pattern(
            mask, self.recorder.rule, cost, self.hdlr.sep.free, self.weight
        )
        self.checks += checks
        return out

    def heurexec(self, heurtiming, nodeinfeasible):
        run = self.hdlr.run
        if run.stop.cancelled or not self.recorder.pending or self.repairs >= MAX_REPAIRS:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        if self.lps > REPAIR_SHARE * self.hdlr.attacker_lps():
            return {"result": SCIP_RESULT.DIDNOTRUN}
        self.calls += 1
        inc = float(self.model.getPrimalbound())
        result = SCIP_RESULT.DIDNOTFIND
        for _ in range(PER_CALL):
            item = self.recorder.take()
            if item is None or run.stop.cancelled:
                break
            fixed = self.repaired(item[1])
            if fixed is None:
                continue
            value = float(self.recorder.cost[fixed].sum())
            if abs(inc) < 1e19 and value >= inc - 1e-9 * max(1.0, abs(inc)):
                continue  # no cheaper than the incumbent: SCIP's check would refuse it
            before = self.hdlr.attacker_lps()
            accepted = offer(self, self.hdlr, fixed)
            self.lps += self.hdlr.attacker_lps() - before
            if accepted:
                self.found += 1
                inc = value
                result = SCIP_RESULT.FOUNDSOL
        return {"result": result}
