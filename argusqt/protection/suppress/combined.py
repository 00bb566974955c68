"""Every suppression method's choice of secondaries, made safe for combined cells (US#160):
after the method, a determined sum of suppressed cells that a rule makes unsafe gets one
more secondary in its relation (rules.combined chooses it) and the method runs again with
it kept; bounded by a count of rounds, never by the clock."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from argusqt.errors import Cancelled
from argusqt.model.status import is_suppressed, secondary_status_for
from argusqt.model.table import Table
from argusqt.progress import CancelToken
from argusqt.protection.audit.combined import with_combined
from argusqt.protection.audit.disclosure import face_verdict, result_face
from argusqt.protection.audit.publication import CANCEL_GRACE, PublicationVerdict
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import ProtectionResult, grouped
from argusqt.rules.combined import combined_disclosures, combined_on, repair_choice

#: rounds of repair at most (each adds at least one secondary)
MAX_ROUNDS = 25


def _more_secondaries(table: Table, status: np.ndarray) -> np.ndarray:
    """The cells to suppress as well so that the unsafe determined sums of the pattern
    `status` become safe (rules.combined.repair_choice), sorted; empty when none can."""
    view = copy.copy(table)  # the table's rule data with the pattern's statuses
    view.status = np.asarray(status)
    sup = is_suppressed(view.status)
    found = combined_disclosures(view, sup)
    more = {c for f in found if (c := repair_choice(view, f, sup)) is not None}
    return np.array(sorted(more), dtype=np.int64)


def _keeping(problem: CSPProblem, cells: np.ndarray) -> CSPProblem:
    """The problem with `cells` already secondary: every method keeps them suppressed."""
    status = np.asarray(problem.status).copy()
    status[cells] = secondary_status_for(status[cells])
    out = copy.copy(problem)
    out.status = status
    return out


def _concerned(table: Table) -> bool:
    return combined_on(table.spec.rules) and not table.spec.is_frequency


def _finish(table: Table, result: ProtectionResult, added: int) -> None:
    """Say what the rule did; a sum still unsafe goes into the verdict (NOT PUBLISHABLE)."""
    view = copy.copy(table)
    view.status = np.asarray(result.status)
    sup = is_suppressed(view.status)
    left = combined_disclosures(view, sup)
    if added:
        result.log.append(
            f"Rule on combined cells (US#160): {added} secondar"
            f"{'y' if added == 1 else 'ies'} added so that no determined sum of "
            "suppressed cells fails a dominance or p% rule"
        )
        result.figures["combined_added"] = float(added)
    if left:
        if result.verdict is not None:
            with_combined(result.verdict, view, sup)
        result.log.append(
            f"Rule on combined cells: {len(left)} determined sum(s) of suppressed cells still "
            "fail a dominance or p% rule (no part left to suppress in their relation)"
        )


def protect_combined(
    table: Table,
    problem: CSPProblem,
    run: Callable[[CSPProblem], ProtectionResult],
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """`run(problem)`, then as many repair rounds as unsafe determined sums need; the result
    says how many secondaries the rule on combined cells added. A sum no secondary can make
    safe stays in the result's verdict (the table reads NOT PUBLISHABLE). After a cancel the
    cells go into the kept pattern directly and it is judged again within CANCEL_GRACE."""
    result = run(problem)
    if not _concerned(table):
        result.moves = []  # the run's own audit used them: not kept with the session
        return result
    first_bound = result.lower_bound  # a bound of a relaxation of the problem posed
    added = 0
    forced: set[int] = set()
    kept: tuple[np.ndarray, float, PublicationVerdict | None] | None = None
    for _ in range(MAX_ROUNDS):
        cells = _more_secondaries(table, result.status)
        if cells.size == 0 or forced.issuperset(cells.tolist()):
            break  # nothing to add, or the method did not keep what it was given
        forced |= set(cells.tolist())
        added += int(cells.size)
        problem = _keeping(problem, cells)
        problem.moves = result.moves  # the insider audit's start next time (D-49)
        if result.cancelled:
            # the method cannot run again after a cancel: the cells go into the pattern it
            # kept, and the pattern is judged again below (more suppressed cells never
            # narrow an attacker's intervals, but only the verdict says it is publishable)
            if kept is None:
                kept = (np.asarray(result.status), result.cost, result.verdict)
            status = np.asarray(result.status).copy()
            new = cells[~is_suppressed(status[cells])]
            status[new] = secondary_status_for(status[new])
            result.status = status
            result.cost += float(np.asarray(problem.cost, dtype=float)[new].sum())
        else:
            result = run(problem)
    if kept is not None:
        _judge_again(problem, result, kept, cancel)
    elif added:
        _bound_for_posed(result, first_bound)
    _finish(table, result, added)
    result.moves = []  # only for the runs above: not kept with the session
    return result


def _bound_for_posed(result: ProtectionResult, bound: float | None) -> None:
    """After runs that kept the added secondaries, their bound and "optimal" are those of
    that narrower problem; for the problem posed (rule 1) the bound is the first run's,
    without the sums' constraints (a relaxation), and optimal only when the cost meets it."""
    narrow = result.lower_bound
    result.lower_bound = bound
    if bound is None:
        result.gap = None
        result.optimal = False
    else:
        result.gap = max(0.0, result.cost - bound) / result.cost if result.cost > 0 else 0.0
        result.optimal = result.cost <= bound + 1e-9 * max(1.0, abs(bound))
    if narrow is not None:
        posed = "none proven" if bound is None else f"{grouped(bound)}"
        result.log.append(
            f"Rule on combined cells: the bound {grouped(narrow)} above is that of the problem "
            f"with the added secondaries kept; for the problem posed the lower bound is "
            f"{posed} (the first run's)"
            + ("" if result.optimal else ", so the pattern is not proven optimal")
        )


def _judge_again(
    problem: CSPProblem,
    result: ProtectionResult,
    kept: tuple[np.ndarray, float, PublicationVerdict | None],
    cancel: CancelToken | None,
) -> None:
    """The publication verdict of a cancelled run's pattern with the added cells, within the
    grace a cancel leaves; when the grace ends first, the pattern as the method kept it (its
    unsafe sums then make it NOT PUBLISHABLE in _finish)."""
    grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    try:
        verdict = face_verdict(problem, result_face("suppress", result), cancel=grace)
    except Cancelled:
        result.status, result.cost, result.verdict = kept
        result.log.append(
            "Rule on combined cells: no time left after the cancel to judge the pattern with "
            "its added secondaries; the pattern the method kept is judged as it is"
        )
        return
    result.verdict = verdict
    result.audit = verdict.outsider
    result.optimal = False
    if result.lower_bound is not None and result.cost > 0:
        result.gap = max(0.0, result.cost - result.lower_bound) / result.cost
    result.log.append(f"after the rule on combined cells: {verdict.summary()}")


def protect_combined_linked(
    tables: list[Table],
    problems: list[CSPProblem],
    run: Callable[[list[CSPProblem]], list[ProtectionResult]],
) -> list[ProtectionResult]:
    """The same for tables protected together: each round repairs every table's unsafe
    sums and runs the linked method again on all of them."""
    results = run(problems)
    if not any(_concerned(t) for t in tables):
        return results
    added = [0] * len(tables)
    forced: list[set[int]] = [set() for _ in tables]
    for _ in range(MAX_ROUNDS):
        more = [
            _more_secondaries(t, r.status) if _concerned(t) else np.zeros(0, dtype=np.int64)
            for t, r in zip(tables, results, strict=True)
        ]
        new = any(not f.issuperset(m.tolist()) for f, m in zip(forced, more, strict=True))
        if not new or any(r.cancelled for r in results):
            break  # nothing to add, or the method did not keep what it was given
        for k, m in enumerate(more):
            forced[k] |= set(m.tolist())
            added[k] += int(m.size)
        problems = [_keeping(p, m) for p, m in zip(problems, more, strict=True)]
        results = run(problems)
    for t, r, n in zip(tables, results, added, strict=True):
        if _concerned(t):
            _finish(t, r, n)
    return results
