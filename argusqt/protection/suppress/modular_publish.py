"""MOD's pattern made publishable at little cost: the insider repair, then the cells it added
that another added cell made redundant published again (docs/design.md, "MOD").

The repair adds, per (respondent, primary) the insider audit disclosed, the cells of one
attacker move that avoids the respondent's own cells; a move found later often carries an
earlier pair too. Every pattern between the method's pattern P0 and the repaired one is a
superset of P0, so (as `recheck_after_growth` argues) only the pairs disclosed on P0 can
fail on it: an added cell is published again, costliest first, when every such pair whose
witness move used it finds another move through the remaining suppressed cells. The
verdict of record is then taken again (those pairs re-attacked, or the full audit when
exact intervals are asked for); a pattern that fails it goes through the insider repair
of record (`make_publishable`) instead of being published.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import Cancelled
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, Stopwatch, no_progress
from argusqt.protection.audit.insider_repair import as_respondent, make_publishable, sides
from argusqt.protection.audit.publication import (
    Disclosure,
    PublicationVerdict,
    publication_audit,
    recheck_after_growth,
)
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import AuditResult
from argusqt.protection.lp.cleanup import Witnesses, find_witness
from argusqt.protection.lp.components import MoveContext
from argusqt.protection.lp.protector import Protector

#: witness LPs may use every suppressed cell when there are at most this many
FULL_WITNESS_LIMIT = 4000
#: LP budget of the swap, per disclosed pair (at least SWAP_MIN_LPS): an LP count, not
#: seconds, so that a run gives the same pattern every time (b7290: ~5 LPs per pair)
SWAP_LPS_PER_PAIR = 10
SWAP_MIN_LPS = 1000


@dataclass(frozen=True)
class _Pair:
    """A primary and a direction an insider (alone in `known`) moved too little."""

    cell: int
    direction: int
    known: np.ndarray
    #: the disclosure: a respondent sharing cells goes down in each only to its
    #: contribution there (D-91), as the repair of record has it
    disclosure: Disclosure | None = None


@dataclass
class PublishOutcome:
    """The publishable pattern, its verdict, the cells added to the method's pattern."""

    pattern: np.ndarray
    verdict: PublicationVerdict
    added: int
    lines: list[str] = field(default_factory=list)


def _pairs(ctx: MoveContext, verdict: PublicationVerdict) -> list[_Pair]:
    """The (primary, direction, respondent's cells) an insider recomputes too closely."""
    out = []
    for d in verdict.disclosures:
        if d.reason != "insider":
            continue
        known = np.asarray(d.known_cells, dtype=np.int64)
        for direction in sides(ctx, d, ctx.values):
            out.append(_Pair(d.cell, direction, known, d))
    return out


class _Insiders:
    """Path LPs of one respondent's attacker: its own cells cannot move."""

    def __init__(self, ctx: MoveContext):
        self.ctx = ctx
        self.base = ctx.movable.copy()
        self.lb = ctx.lb.copy()
        self.n_lps = 0

    def _as(self, pair: _Pair) -> None:
        """The context as the pair's respondent sees the table (its cells, its floors)."""
        if pair.disclosure is not None:
            as_respondent(self.ctx, pair.disclosure, self.base, self.lb)
        else:
            self.ctx.movable = self.base.copy()
            self.ctx.movable[pair.known] = False

    def _back(self) -> None:
        self.ctx.movable = self.base
        self.ctx.lb = self.lb

    def witness(
        self, pair: _Pair, sup: np.ndarray, prefer: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """A move for the pair through suppressed cells only (`prefer` cells cheaper)."""
        self._as(pair)
        try:
            self.n_lps += 1
            return find_witness(
                self.ctx, (pair.cell, pair.direction), sup, prefer, max_full=FULL_WITNESS_LIMIT
            )
        finally:
            self._back()

    def protect(self, pair: _Pair, sup: np.ndarray) -> bool:
        """The cheapest move for the pair; its new cells join `sup` (False: none exists)."""
        self._as(pair)
        try:
            prot = Protector(self.ctx, sup, Witnesses(), k_free=2)
            ok = prot.protect(pair.cell, pair.direction)
            self.n_lps += prot.n_lps
            return ok
        finally:
            self._back()


def _stop(cancel: CancelToken | None) -> None:
    if cancel is not None and cancel.cancelled:
        raise Cancelled("cancelled while the pattern was made publishable")


def _repair(
    att: _Insiders, p0: np.ndarray, pairs: list[_Pair], cancel: CancelToken | None
) -> np.ndarray | None:
    """P0 plus one move per pair not yet carried by the cells added before (None: a pair
    cannot be protected at all; the repair of record then says which)."""
    sup = p0.copy()
    for pair in pairs:
        _stop(cancel)
        if sup.sum() > p0.sum() and att.witness(pair, sup, p0) is not None:
            continue
        if not att.protect(pair, sup):
            return None
    return sup


def _witnesses(
    att: _Insiders, pairs: list[_Pair], sup: np.ndarray, p0: np.ndarray
) -> list[set[int]] | None:
    """Per pair the cells of a move through `sup` (None: some pair has none)."""
    uses = []
    for pair in pairs:
        found = att.witness(pair, sup, p0)
        if found is None:
            return None
        uses.append(set(found[0].tolist()))
    return uses


def _swap(
    att: _Insiders,
    p0: np.ndarray,
    sup: np.ndarray,
    pairs: list[_Pair],
    cost: np.ndarray,
    cancel: CancelToken | None,
) -> tuple[np.ndarray, int]:
    """Each added cell (costliest first) left out and its pairs protected without it: kept
    when the new cells cost less than it (measured on the 7,290-cell table: 58.4 → 54.6·10⁶
    for 2,000 LPs; pruning after every swap found 51.5·10⁶ but took 600 s)."""
    sup = sup.copy()
    limit = att.n_lps + max(SWAP_MIN_LPS, SWAP_LPS_PER_PAIR * len(pairs))
    uses = _witnesses(att, pairs, sup, p0)
    if uses is None:
        return sup, 0
    added = np.flatnonzero(sup & ~p0)
    swapped = 0
    for c in added[np.argsort(-cost[added], kind="stable")].tolist():
        _stop(cancel)
        if att.n_lps > limit:
            break
        if not sup[c]:
            continue
        users = [i for i, used in enumerate(uses) if c in used]
        trial = sup.copy()
        trial[c] = False
        att.base[c] = False  # the moves of this trial may not use it
        ok = True
        for i in users:
            if att.witness(pairs[i], trial, p0) is None and not att.protect(pairs[i], trial):
                ok = False
                break
        att.base[c] = True
        if not ok or cost[trial & ~sup].sum() >= cost[c]:
            continue
        new = {}
        for i in users:
            found = att.witness(pairs[i], trial, p0)
            if found is None:  # the trial's own moves are witnesses: only an LP hiccup
                break
            new[i] = set(found[0].tolist())
        else:
            sup = trial
            swapped += 1
            for i, used in new.items():
                uses[i] = used
    return sup, swapped


def publish(
    problem: CSPProblem,
    p0: np.ndarray,
    *,
    outsider: AuditResult | None = None,
    intervals: bool | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    moves: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> PublishOutcome:
    """`p0` (outsider-safe) made publishable: repaired for insiders, redundant cells pruned.
    `moves`: attacker moves found through `p0` before (the insider audit checks each).

    Raises AuditError (outsider failure, or no publishable pattern), MethodError (a pair
    cannot be protected), Cancelled.
    """
    watch = Stopwatch()
    p0 = np.asarray(p0, dtype=bool)
    cost = np.asarray(problem.cost, dtype=float)
    verdict = publication_audit(
        problem,
        p0,
        outsider=outsider,
        intervals=intervals,
        progress=progress,
        cancel=cancel,
        moves=moves,
    )
    if verdict.ok or not verdict.outsider.ok:
        return _of_record(problem, p0, p0, verdict, intervals, progress, cancel, [])
    ctx = MoveContext(problem)
    ctx.cancel = cancel
    pairs = _pairs(ctx, verdict)
    att = _Insiders(ctx)
    progress(ProgressEvent(message=f"Protecting {len(pairs)} cells against respondents"))
    repaired = _repair(att, p0, pairs, cancel)
    if repaired is None:
        return _of_record(problem, p0, p0, verdict, intervals, progress, cancel, [])
    n_added = int((repaired & ~p0).sum())
    first = float(cost[repaired & ~p0].sum())
    progress(ProgressEvent(message="Publishing again the cells the respondents' repair spares"))
    pruned, n_swaps = _swap(att, p0, repaired, pairs, cost, cancel)
    lines = [
        f"insider repair: {len(pairs)} (primary, direction) pairs a respondent recomputed, "
        f"{n_added} cells added (cost {first:,.0f}); {n_swaps} published again or replaced by "
        f"cheaper ones: {int((pruned & ~p0).sum())} cells, cost "
        f"{float(cost[pruned & ~p0].sum()):,.0f} ({att.n_lps} LPs, {watch.elapsed:.1f} s "
        "with the audit)"
    ]
    if intervals:
        seeds = verdict.floor.points if verdict.floor is not None else None
        final = publication_audit(
            problem, pruned, intervals=True, progress=progress, cancel=cancel, floor_seeds=seeds
        )
    else:
        final = recheck_after_growth(problem, p0, pruned, verdict, progress=progress, cancel=cancel)
    return _of_record(problem, p0, pruned, final, intervals, progress, cancel, lines)


def _of_record(
    problem: CSPProblem,
    p0: np.ndarray,
    sup: np.ndarray,
    verdict: PublicationVerdict,
    intervals: bool | None,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    lines: list[str],
) -> PublishOutcome:
    """The outcome when `verdict` (on `sup`) passes, else the insider repair of record."""
    if not verdict.ok:
        if lines:
            lines.append("the pruned pattern failed its verdict: the repair of record decides")
        same = np.array_equal(sup, p0)  # the outsider audit was of p0
        sup, verdict, _ = make_publishable(
            problem,
            sup,
            outsider=verdict.outsider if same else None,
            intervals=intervals,
            progress=progress,
            cancel=cancel,
        )
    return PublishOutcome(sup, verdict, int((sup & ~p0).sum()), lines)
