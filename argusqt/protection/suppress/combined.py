"""Every suppression method's choice of secondaries, made safe for combined cells (US#160):
after the method, a determined sum of suppressed cells that a rule makes unsafe gets one
more secondary in its relation (rules.combined chooses it) and the method runs again with
it kept; bounded by a count of rounds, never by the clock."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from argusqt.model.status import is_suppressed, secondary_status_for
from argusqt.model.table import Table
from argusqt.protection.audit.combined import with_combined
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import ProtectionResult
from argusqt.rules.combined import combined_disclosures, combined_on, repair_choice

#: rounds of repair at most (each adds at least one secondary)
MAX_ROUNDS = 25


def protect_combined(
    table: Table,
    problem: CSPProblem,
    run: Callable[[CSPProblem], ProtectionResult],
) -> ProtectionResult:
    """`run(problem)`, then as many repair rounds as unsafe determined sums need; the result
    says how many secondaries the rule on combined cells added. A sum no secondary can make
    safe stays in the result's verdict (the table reads NOT PUBLISHABLE)."""
    result = run(problem)
    if not combined_on(table.spec.rules) or table.spec.is_frequency:
        return result
    view = copy.copy(table)  # the table's rule data with the result's statuses
    added: list[int] = []
    for _ in range(MAX_ROUNDS):
        view.status = np.asarray(result.status)
        sup = is_suppressed(view.status)
        found = combined_disclosures(view, sup)
        if not found or result.cancelled:
            break
        more = {c for f in found if (c := repair_choice(view, f, sup)) is not None}
        if not more:
            break
        cells = np.array(sorted(more), dtype=np.int64)
        added += cells.tolist()
        status = np.asarray(problem.status).copy()
        status[cells] = secondary_status_for(status[cells])
        problem = copy.copy(problem)
        problem.status = status
        result = run(problem)
    view.status = np.asarray(result.status)
    sup = is_suppressed(view.status)
    left = combined_disclosures(view, sup)
    if added:
        result.log.append(
            f"Rule on combined cells (US#160): {len(added)} secondar"
            f"{'y' if len(added) == 1 else 'ies'} added so that no determined sum of "
            "suppressed cells fails a dominance or p% rule"
        )
        result.figures["combined_added"] = float(len(added))
    if left:
        if result.verdict is not None:
            with_combined(result.verdict, view, sup)
        result.log.append(
            f"Rule on combined cells: {len(left)} determined sum(s) of suppressed cells still "
            "fail a dominance or p% rule (no part left to suppress in their relation)"
        )
    return result
