"""Every suppression method's choice of secondaries, made safe for combined cells (US#160):
after the method, a determined sum of suppressed cells that a rule makes unsafe gets one
more secondary in its relation (rules.combined chooses it) and the method runs again with
it kept; bounded by a count of rounds, never by the clock. The user's time limit covers
all the runs together: a rerun gets what is left of it, and when nothing is left the cells
go into the pattern directly and the result says the time limit decided. For the methods
in GROWN the cells join the method's published pattern instead of a rerun (D-56): more
suppression never helps an attacker, so only the grown pattern's new insiders and sums
are judged again."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from argusqt.errors import Cancelled, TimeLimitError
from argusqt.model.status import is_suppressed, secondary_status_for
from argusqt.model.table import Table
from argusqt.progress import CancelToken
from argusqt.protection.audit.combined import with_combined
from argusqt.protection.audit.disclosure import face_verdict, result_face
from argusqt.protection.audit.publication import (
    CANCEL_GRACE,
    PublicationVerdict,
    grown_verdict,
)
from argusqt.protection.core.budget import Deadline, DeadlineToken, limit_grace
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import TIME_LIMIT_DECIDED, ProtectionResult, grouped
from argusqt.protection.suppress.epilogue import audit_exactness
from argusqt.rules.combined import (
    SumMemo,
    combined_disclosures,
    combined_on,
    forced_capacities,
    forced_nogoods,
    fractional_capacities,
    fractional_nogoods,
    lifted_nogood,
    repair_choice,
    unsafe_relations,
)

#: rounds of repair at most (each adds at least one secondary)
MAX_ROUNDS = 25

#: a rerun needs at least this share of the user's time limit left; with less, the cells go
#: into the pattern directly (a run started with almost no time would only hit the cap)
RERUN_SHARE = 0.05

#: methods whose published pattern the rule's cells join instead of a rerun: on b31808 HEUR
#: ran three times with its publication audit for 34 cells; HEUR's and MOD's grown patterns
#: cost the same or less than their reruns', GH's more (docs/design.md, D-56)
GROWN = frozenset({"HEUR", "MOD"})

#: `run(problem, seconds)`: the method on `problem` with `seconds` of the user's time limit
#: left for it (None: no limit)
Runner = Callable[[CSPProblem, "float | None"], ProtectionResult]


def _more_secondaries(table: Table, status: np.ndarray, memo: SumMemo | None = None) -> np.ndarray:
    """The cells to suppress as well so that the unsafe determined sums of the pattern
    `status` become safe (rules.combined.repair_choice), sorted; empty when none can.
    `memo`: the sums judged before on `table` (combined_disclosures)."""
    view = copy.copy(table)  # the table's rule data with the pattern's statuses
    view.status = np.asarray(status)
    sup = is_suppressed(view.status)
    found = combined_disclosures(view, sup, memo)
    more = {c for f in found if (c := repair_choice(view, f, sup)) is not None}
    return np.array(sorted(more), dtype=np.int64)


def grown_status(table: Table, status: np.ndarray, memo: SumMemo | None = None) -> np.ndarray:
    """The statuses `status` with the rule's cells joined, round after round (at most
    MAX_ROUNDS, each adding at least one cell): the pattern _grow publishes (D-56). The
    rounds judge each sum once (`memo`, D-71): most sums are the round before's."""
    status = np.asarray(status).copy()
    memo = {} if memo is None else memo
    for _ in range(MAX_ROUNDS):
        cells = _more_secondaries(table, status, memo)
        new = cells[~is_suppressed(status[cells])]
        if new.size == 0:
            break
        status[new] = secondary_status_for(status[new])
    return status


def _keeping(problem: CSPProblem, cells: np.ndarray) -> CSPProblem:
    """The problem with `cells` already secondary: every method keeps them suppressed."""
    status = np.asarray(problem.status).copy()
    status[cells] = secondary_status_for(status[cells])
    out = copy.copy(problem)
    out.status = status
    return out


def _unsafe_relations_of(
    table: Table, mask: np.ndarray, memo: SumMemo | None = None
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """The relations whose determined sum is unsafe in `mask` (the rule's plain check)."""
    return unsafe_relations(table, np.asarray(mask, dtype=bool)[: table.n_cells], memo)


class _RelationRule:
    """CSPProblem.pattern_rule for `table`: the relations whose determined sum is unsafe in a
    mask; `lift` gives such a relation's lifted no-good (core, cure), `forced` the no-goods
    every pattern must keep from the start and `forced_weights` their capacity rows (D-55);
    `grown` a pattern with the rule's cells joined (D-56, D-67)."""

    def __init__(self, table: Table):
        self.table = table
        #: sum_failures of the groups judged so far (D-71's memo): the rule object lives for
        #: one protect call, in which the table's shadow, contributions and rules stay as
        #: they are, and a method asks the same sums again and again (D-80)
        self.memo: SumMemo = {}

    def __call__(self, mask: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        return _unsafe_relations_of(self.table, mask, self.memo)

    def grown(self, status: np.ndarray) -> np.ndarray:
        """The statuses of a pattern (CSPProblem.pattern_statuses) with the cells the rule's
        growth adds (D-56): what a MOD pattern becomes after the method, so the method can
        rank its candidates at that cost (docs/design.md, D-67)."""
        return grown_status(self.table, status, self.memo)

    def lift(
        self, group: np.ndarray, others: np.ndarray, free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        return lifted_nogood(self.table, group, others, np.asarray(free)[: self.table.n_cells])

    def fractional(
        self, x: np.ndarray, free: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        return fractional_nogoods(self.table, x, free)

    def fractional_capacities(
        self, x: np.ndarray, free: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        return fractional_capacities(self.table, x, free)

    def forced(
        self, always: np.ndarray, free: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        n = self.table.n_cells
        return forced_nogoods(self.table, np.asarray(always)[:n], np.asarray(free)[:n], self.memo)

    def forced_weights(
        self, always: np.ndarray, free: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        n = self.table.n_cells
        return forced_capacities(
            self.table, np.asarray(always)[:n], np.asarray(free)[:n], self.memo
        )


def _concerned(table: Table) -> bool:
    return combined_on(table.spec.rules) and not table.spec.is_frequency


def _finish(
    table: Table,
    result: ProtectionResult,
    added: int,
    memo: SumMemo | None = None,
) -> None:
    """Say what the rule did; a sum still unsafe goes into the verdict (NOT PUBLISHABLE).
    `memo`: the sums judged before on `table` (combined_disclosures)."""
    view = copy.copy(table)
    view.status = np.asarray(result.status)
    sup = is_suppressed(view.status)
    left = combined_disclosures(view, sup, memo)
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


def growth_mode(method: str, options: object) -> object | None:
    """protect_combined's `grow` for `method`: its audit_intervals mode when the rule's cells
    join its pattern (GROWN), None when it runs again."""
    return getattr(options, "audit_intervals", "auto") if method in GROWN else None


def protect_combined(
    table: Table,
    problem: CSPProblem,
    run: Runner,
    cancel: CancelToken | None = None,
    limit: float | None = None,
    grow: object | None = None,
) -> ProtectionResult:
    """`run(problem, limit)`, then as many repair rounds as unsafe determined sums need; the
    result says how many secondaries the rule on combined cells added. A sum no secondary
    can make safe stays in the result's verdict (the table reads NOT PUBLISHABLE). `limit`
    (seconds, the user's) covers every run: a rerun gets what is left. After a cancel, or
    when the limit leaves no time for a rerun, the cells go into the kept pattern directly
    and it is judged again within the cancel's grace (the limit's grace). `grow` (the
    method's audit_intervals mode, growth_mode): no rerun, the cells join the published
    pattern and only what grew is judged again (_grow)."""
    deadline = Deadline(limit)
    rule = None
    if _concerned(table):  # methods that can (OPT) keep the rule inside their search
        problem = copy.copy(problem)
        problem.pattern_rule = rule = _RelationRule(table)
    result = run(problem, limit)
    if not _concerned(table):
        result.moves = []  # the run's own audit used them: not kept with the session
        return result
    passed = result.verdict is not None and result.verdict.ok
    if grow is not None and passed and not result.cancelled:
        # the verdict within the limit's grace, or CANCEL_GRACE after the user's cancel
        after_cancel = cancel.grace(CANCEL_GRACE) if cancel is not None else None
        grace = DeadlineToken(deadline, after_cancel, extra=limit_grace(limit))
        # the sums judged, for every round and _finish: the method's own (D-80)
        memo: SumMemo = rule.memo if rule is not None else {}
        exact = audit_exactness(grow, _sup_after(result))
        added = _grow(table, problem, result, exact, grace, memo)
        _finish(table, result, added, memo)
        if result.timed_out and TIME_LIMIT_DECIDED not in result.log:
            result.log.append(TIME_LIMIT_DECIDED)
        result.moves = []
        return result
    first_bound = result.lower_bound  # a bound of a relaxation of the problem posed
    added = 0
    forced: set[int] = set()
    kept: tuple[np.ndarray, float, PublicationVerdict | None] | None = None
    reran = False  # the result comes from a run that kept added secondaries
    said = False  # the log says the limit stopped the reruns
    for _ in range(MAX_ROUNDS):
        cells = _more_secondaries(table, result.status)
        if cells.size == 0 or forced.issuperset(cells.tolist()):
            break  # nothing to add, or the method did not keep what it was given
        forced |= set(cells.tolist())
        added += int(cells.size)
        problem = _keeping(problem, cells)
        problem.moves = result.moves  # the insider audit's start next time (D-49)
        left = None if limit is None else deadline.remaining
        out_of_time = left is not None and left < RERUN_SHARE * float(limit or 0.0)
        if not (result.cancelled or out_of_time):
            try:
                result = run(problem, left)
                reran = True
                continue
            except TimeLimitError:
                out_of_time = True  # the rerun found no pattern in time: add the cells below
        # the method cannot run again (a cancel, or the user's limit spent): the cells go
        # into the pattern it kept, and the pattern is judged again below (more suppressed
        # cells never narrow an attacker's intervals, but only the verdict says it is
        # publishable)
        if out_of_time and not said:
            said = True
            result.timed_out = True
            result.log.append(
                "Rule on combined cells: the time limit left no time to run the method again; "
                "the added secondaries went into its pattern directly"
            )
        if kept is None:
            kept = (np.asarray(result.status), result.cost, result.verdict)
        status = np.asarray(result.status).copy()
        new = cells[~is_suppressed(status[cells])]
        status[new] = secondary_status_for(status[new])
        result.status = status
        result.cost += float(np.asarray(problem.cost, dtype=float)[new].sum())
    if kept is not None:
        if result.cancelled:
            _judge_again(problem, result, kept, cancel)
        else:  # the user's limit: its grace, the user's cancel still heard
            grace = DeadlineToken(deadline, cancel, extra=limit_grace(limit))
            _judge_again(problem, result, kept, grace, within=grace)
    if reran:
        _bound_for_posed(result, first_bound)
    _finish(table, result, added)
    if result.timed_out and TIME_LIMIT_DECIDED not in result.log:
        result.log.append(TIME_LIMIT_DECIDED)
    result.moves = []  # only for the runs above: not kept with the session
    return result


def _sup_after(result: ProtectionResult) -> np.ndarray:
    return is_suppressed(np.asarray(result.status))


def _grow(
    table: Table,
    problem: CSPProblem,
    result: ProtectionResult,
    intervals: bool,
    grace: DeadlineToken,
    memo: SumMemo | None = None,
) -> int:
    """The rule's cells joined to `result`'s published pattern, round after round (at most
    MAX_ROUNDS, each adding at least one cell), and the grown pattern's verdict
    (grown_verdict: its new insiders; exact outsider intervals when `intervals`); the
    number of cells added. When `grace` (the user's cancel, the limit's grace) ends the
    verdict first, the method's pattern stays as it was, its unsafe sums judged in
    _finish."""
    before = _sup_after(result)
    status = grown_status(table, result.status, memo)
    grown = is_suppressed(status)
    added = int((grown & ~before).sum())
    if not added:
        return 0
    assert result.verdict is not None  # protect_combined grows passing patterns only
    try:
        verdict = grown_verdict(
            problem, before, grown, result.verdict, intervals=intervals, cancel=grace
        )
    except Cancelled:
        if grace.out_of_time:
            result.timed_out = True
        else:
            result.cancelled = True
        result.log.append(
            "Rule on combined cells: no time left to judge the pattern with its added "
            "secondaries; the pattern the method kept is judged as it is"
        )
        return 0
    result.status = status
    result.cost += float(np.asarray(problem.cost, dtype=float)[grown & ~before].sum())
    result.verdict = verdict
    result.audit = verdict.outsider
    result.optimal = False
    if result.lower_bound is not None and result.cost > 0:
        result.gap = max(0.0, result.cost - result.lower_bound) / result.cost
    result.log.append(
        f"Rule on combined cells: {added} cell{'s' if added != 1 else ''} added to the "
        f"published pattern (no run again); after them: {verdict.summary()}"
    )
    return added


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
    within: CancelToken | None = None,
) -> None:
    """The publication verdict of a stopped run's pattern with the added cells, within the
    grace a cancel leaves (or `within`, the time limit's grace); when the grace ends first,
    the pattern as the method kept it (its unsafe sums then make it NOT PUBLISHABLE in
    _finish)."""
    if within is not None:
        grace: CancelToken | None = within
    else:
        grace = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    try:
        verdict = face_verdict(problem, result_face("suppress", result), cancel=grace)
    except Cancelled:
        result.status, result.cost, result.verdict = kept
        result.optimal = False  # the kept pattern fails its sums: nothing about it is proven
        result.log.append(
            "Rule on combined cells: no time left after the "
            + ("cancel" if within is None else "time limit")
            + " to judge the pattern with its added secondaries; the pattern the method kept "
            "is judged as it is"
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
    run: Callable[[list[CSPProblem], float | None], list[ProtectionResult]],
    limit: float | None = None,
) -> list[ProtectionResult]:
    """The same for tables protected together: each round repairs every table's unsafe
    sums and runs the linked method again on all of them, with what is left of the user's
    limit; when too little is left, the rounds stop and the sums still unsafe make the
    tables NOT PUBLISHABLE (the result says the time limit decided)."""
    deadline = Deadline(limit)
    results = run(problems, limit)
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
        left = None if limit is None else deadline.remaining
        if left is not None and left < RERUN_SHARE * float(limit or 0.0):
            for r in results:
                r.timed_out = True
                r.log.append(
                    "Rule on combined cells: the time limit left no time to run the method "
                    "again for the sums still unsafe"
                )
            break
        for k, m in enumerate(more):
            forced[k] |= set(m.tolist())
            added[k] += int(m.size)
        problems = [_keeping(p, m) for p, m in zip(problems, more, strict=True)]
        try:
            results = run(problems, left)
        except TimeLimitError:
            for r in results:  # the previous round's patterns stay, their sums judged below
                r.timed_out = True
                r.log.append(
                    "Rule on combined cells: the run again for the sums found no pattern "
                    "within the time limit"
                )
            break
    for t, r, n in zip(tables, results, added, strict=True):
        if _concerned(t):
            _finish(t, r, n)
        if r.timed_out and TIME_LIMIT_DECIDED not in r.log:
            r.log.append(TIME_LIMIT_DECIDED)
    return results
