"""Protect: one table or the linked tables through the method registry; statuses are copied
back only when the audit passed (behind `Session.protect` and `protect_linked`)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.actions import Protect
from argusqt.errors import (
    ArgusError,
    AuditError,
    Cancelled,
    MethodError,
    PublicationError,
    SpecificationError,
)
from argusqt.export.gate import (
    linked_fingerprint,
    linked_table_verdicts,
    mark_protected,
    table_verdict,
)
from argusqt.io.codelists import codelist_for
from argusqt.model.status import is_primary, is_secondary, is_suppressed
from argusqt.model.table import ProtectionInfo, Table, TableSpec
from argusqt.progress import CancelToken, ProgressCallback, no_progress
from argusqt.protection.core.result import TIME_LIMIT_DECIDED, public_figures
from argusqt.rules.changes import keep_pattern, posed_status
from argusqt.rules.classify import apply_rules
from argusqt.rules.cost import compute_cost
from argusqt.workflow import specifying

if TYPE_CHECKING:
    from argusqt.protection.core.params import MethodParams
    from argusqt.protection.core.result import ProtectionResult
    from argusqt.session import Session


def protect(
    s: Session,
    table_no: int,
    method: str,
    params: MethodParams | Mapping[str, object] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Run a protection method on one table; statuses (and published values) are copied
    back only when the audit passed. `params`: the method's parameter dataclass or a
    mapping of its field names (argusqt/docs/formats.md §8.5); an unknown or out-of-range
    one is a ParameterError naming the parameter and the values allowed.

    The method solves the problem the user posed: the primaries and the manual and
    a-priori statuses, never the secondaries of the method run before (docs/design.md, D-22)."""
    # lazy: scipy, HiGHS, the registry and the methods (docs/design.md, D-39)
    from argusqt.protection.audit.outsider import audit as run_audit
    from argusqt.protection.core import registry
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.run import run_method
    from argusqt.protection.suppress.combined import growth_mode, protect_combined

    desc = registry.get(method)
    p = desc.params.coerce(params)
    table = s.table(table_no)
    start = posed_status(table)
    problem = CSPProblem.from_table(table, status=start)
    # the facts read the primaries, which the posed statuses keep: the same problem serves
    same = np.array_equal(problem.primary, is_primary(np.asarray(table.status)))
    options = desc.options_for(p, registry.table_facts(table, table_no, problem if same else None))
    check_numbers(s, table, table_no)
    s.add_log(f"Table {table_no}: {desc.name} started with {p.describe()}")
    s._log_lines(p.without_effect())
    if desc.kind != "suppress":
        options = options.with_seed(protection_seed(s, problem))
    try:
        if desc.kind == "suppress":  # every method's secondaries, safe for sums (US#160)
            limit = options.max_time
            result = protect_combined(
                table,
                problem,
                lambda pr, left: run_method(
                    pr,
                    desc.name,
                    options if left == limit else dataclasses.replace(options, max_time=left),
                    progress,
                    cancel,
                ),
                cancel,
                limit,
                grow=growth_mode(desc.name, options),
            )
        else:
            result = run_method(problem, desc.name, options, progress, cancel)
        for line in result.log or []:
            s.add_log(f"  {line}")
        audit = result.audit
        if audit is None and desc.kind == "suppress":
            audit = run_audit(
                problem, is_suppressed(result.status), progress=progress, cancel=cancel
            )
            result.audit = audit
    except Cancelled as exc:
        raise nothing_changed(s, [table_no], exc) from None
    except ArgusError:
        raise
    except Exception as exc:
        explained = _explain_solver_failure(table, table_no, desc.name, exc)
        if explained is None:
            raise
        raise explained from exc
    if audit is not None and not audit.ok:
        s.add_log(audit.summary())
        raise AuditError(
            f"{desc.name} on table {table_no}: {audit.summary()} The table was left unchanged."
        )
    added = 0
    if desc.kind == "suppress" and s.printed:
        try:  # after a cancel: the grace's time to make the audited result safe beside
            added = beside_published(
                s, table_no, table, result, options.max_time, progress, after_cancel(cancel)
            )
        except Cancelled:
            s.add_log(
                f"Table {table_no}: cancelled before the pattern was grown beside the tables "
                "published before; saving judges it beside them"
            )
    keep_pattern(table, start, result.status)
    # a new method's face replaces the last one's: no rounded values under a suppression
    adjusted = desc.kind == "adjust" and result.published is not None
    table.published = np.asarray(result.published, dtype=float) if adjusted else None
    if result.interval_lower is not None and result.interval_upper is not None:
        table.interval_lower = np.asarray(result.interval_lower, dtype=float)
        table.interval_upper = np.asarray(result.interval_upper, dtype=float)
    else:
        table.interval_lower = table.interval_upper = None
    public = public_figures(desc.face, result.figures)
    table.protection = ProtectionInfo(desc.name, desc.face, p.describe(), public)
    table.audit = audit
    if added:  # the verdict of record is on the grown pattern (sums of suppressed cells too)
        result.verdict = table_verdict(table, progress=progress, cancel=cancel)
        table.audit = result.audit = result.verdict.outsider
    mark_protected(table, result.verdict)
    if s.printed:
        judged_beside(s, table_no, table, result, progress, cancel)
    if result.verdict is not None and not result.verdict.ok:
        s.add_log(f"Table {table_no}: NOT PUBLISHABLE: {result.verdict.summary()}")
    s.results[table_no] = result
    done = "cancelled" if result.cancelled else "finished"
    if result.timed_out and not result.cancelled:
        done += f" ({TIME_LIMIT_DECIDED})"
    figures = "; ".join(result.outcome_lines(desc.face, table.value))
    refused = result.verdict is not None and not result.verdict.ok
    said = result.verdict if refused else audit  # never the outsider's pass beside a refusal
    s.add_log(
        f"Table {table_no}: {desc.name} {done} in {result.elapsed:,.1f} CPU-s: {figures}"
        + (f"; {said.summary()}" if said is not None else "")
    )
    if result.cancelled:
        result.cancel_note = kept_after_cancel(table_no, result, desc.kind)
        s.add_log(result.cancel_note)
    ptables = s._ckm_ptables.get(table_no) if desc.name == "CKM" else None
    s.actions.append(Protect(table_no, desc.name, p, ptables))
    return result


def set_ckm_ptables(
    s: Session, table_no: int, first: Any = None, sep: Any = None
) -> tuple[Any, Any, Any]:
    """Behind `Session.set_ckm_ptables`: the files read and checked now, kept per table."""
    # lazy: the cell key and p-table modules (7 dataclasses), CKM's only (D-62)
    from argusqt.model.cellkey import set_ptables
    from argusqt.model.ptable import PTable

    table = s.table(table_no)
    freq = table.spec.is_frequency

    def loaded(x: Any, kind: str) -> Any:
        if x is None or isinstance(x, PTable):
            return x
        from argusqt.io.ptable import read_ptable  # lazy: the p-table reader, CKM's (D-57)

        read_ptable(x, kind)  # type: ignore[arg-type]  # checked now, read at protect
        return str(x)

    first = loaded(first, "freq" if freq else "cont")
    sep = loaded(sep, "cont")
    if freq and sep is not None:
        raise SpecificationError(
            f"table {table_no} is a frequency table: it takes one ptable, not a "
            "small-value ptable (argusqt/docs/formats.md §8.5)"
        )
    ok = set_ptables(table, pfile=first, pfile_cont=None, pfile_sep=None) if freq else (
        set_ptables(table, pfile_cont=first, pfile_sep=sep)
    )  # fmt: skip
    if not ok:
        raise SpecificationError(
            f"table {table_no} has no record keys: CKM needs a <RECORDKEY> variable "
            "(argusqt/docs/formats.md §1.5)"
        )
    old = s._ckm_ptables.get(table_no, (None, None, None))
    new = (first, None, None) if freq else (None, first, sep)
    merged = tuple(n if n is not None else o for n, o in zip(new, old, strict=True))
    s._ckm_ptables[table_no] = merged  # type: ignore[assignment]
    named = ", ".join(str(getattr(x, "source", x)) for x in merged if x is not None)
    s.add_log(f"Table {table_no}: CKM ptables {named}")
    return merged  # type: ignore[return-value]


def protection_seed(s: Session, problem: Any) -> int:
    """The session's confidential seed; the first time derived from the data, so a batch
    run twice gives the same output (rule 2) while nobody without the data can know it.

    Besides the table's values and levels it digests the whole data file: every record
    and every column, which no attacker can guess, whereas a small table's few unknown
    values could be tried one by one against the published intervals."""
    if s.protection_seed is None:
        # lazy: scipy, HiGHS and the protection methods (docs/design.md, D-39)
        from argusqt.protection.audit.disclosure import confidential_seed

        seed = confidential_seed(problem)
        digest = _file_digest(s.data_path)
        if digest is not None:
            seed = int.from_bytes(digest[:8], "big") ^ seed
            seed >>= 1  # a non-negative 63-bit seed, as confidential_seed gives
        s.protection_seed = seed
    return s.protection_seed


def nothing_changed(s: Session, numbers: list[int], exc: Cancelled) -> Cancelled:
    """A cancel that kept no new pattern: the one message the log, the dialogs, the
    Solver panel and the API give, saying what the tables hold now."""
    states = "; ".join(state_in_words(s, no) for no in numbers)
    which = f"Table {numbers[0]}" if len(numbers) == 1 else f"Tables {numbers}"
    note = f"{which}: {exc.message.rstrip('.')}. Nothing changed: {states}."
    s.add_log(note)
    return Cancelled(note)


def state_in_words(s: Session, table_no: int) -> str:
    """What a table holds after a Protect that changed nothing, in words."""
    t = s.table(table_no)
    state = s.protection_state(table_no)
    if t.protection is not None and state in ("cleared", "protected"):
        return f"table {table_no} keeps its {t.protection.method} pattern, which passed the audit"
    if t.protection is not None:
        return (
            f"table {table_no} keeps its statuses ({t.protection.method}'s pattern changed "
            "by hand since: not protected)"
        )
    if state == "nothing to protect":
        return f"table {table_no} has no unsafe cells"
    return f"table {table_no} stays unprotected"


def beside_published(
    s: Session,
    table_no: int,
    table: Table,
    result: ProtectionResult,
    seconds: float | None,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    members: Sequence[Any] = (),
) -> int:
    """A suppression pattern grown so that the table is safe beside the faces already
    published from the same records (docs/design.md, D-81): without it the gate would
    refuse the table at saving. `members`: the faces of the tables protected with it
    (linked), judged with the published ones. Returns the cells added (the result is
    changed in place: no longer the method's own optimum, its lower bound still valid)."""
    # lazy: the shared-cells repair (scipy, HiGHS), only once a table was published
    from argusqt.export.shared import beside_status, partners
    from argusqt.workflow.output import printed_out

    others = partners(table, -1, printed_out(s))
    if not others:
        return 0
    grown = beside_status(
        table, np.asarray(result.status), [*others, *members], seconds=seconds,
        progress=progress, cancel=cancel,
    )  # fmt: skip
    if grown is None or grown[1] == 0:
        return 0
    status, added = grown
    result.status = status
    result.cost = float(np.asarray(table.cost, dtype=float)[is_secondary(status)].sum())
    if result.optimal or result.gap is not None:
        result.optimal = False
        lb = result.lower_bound
        result.gap = (result.cost - lb) / result.cost if lb is not None and result.cost else None
    where = ", ".join(sorted({f"table {p.number} ({p.where})" for p in others}))
    line = (
        f"{added} cells suppressed in addition so that the table is safe beside what was "
        f"published before from the same records: {where} (docs/design.md, D-81); the "
        "pattern is no longer the method's own optimum"
    )
    result.log = [*(result.log or []), line]
    s.add_log(f"  {line}")
    return added


def protect_linked(
    s: Session,
    method: str,
    params: MethodParams | Mapping[str, object] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> list[ProtectionResult]:
    """All tables protected together (batch table 0), by a method whose descriptor says
    how (`linked`: the joint problem, or MOD's cover table); one result per table."""
    # lazy: scipy, HiGHS, the registry and the methods (docs/design.md, D-39)
    from argusqt.protection.audit.outsider import audit as run_audit
    from argusqt.protection.core import registry
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.suppress.combined import protect_combined_linked
    from argusqt.protection.suppress.linked import protect_linked

    desc = registry.get(method)
    registry.require_linked(desc)
    p = desc.params.coerce(params)
    if not s.tables:
        raise SpecificationError("there are no tables to protect together: compute them first")
    options = desc.options_for(p, registry.table_facts(s.tables[0], 1))
    for no, t in enumerate(s.tables, start=1):
        check_numbers(s, t, no)
    starts = [posed_status(t) for t in s.tables]
    problems = [CSPProblem.from_table(t, status=st) for t, st in zip(s.tables, starts, strict=True)]
    s.add_log(f"Linked tables 1–{len(problems)}: {desc.name} started with {p.describe()}")
    s._log_lines(p.without_effect())
    numbers = list(range(1, len(s.tables) + 1))
    try:
        cover = linked_cover(s, problems) if desc.linked == "cover" else None
        results = protect_combined_linked(  # sums of suppressed cells (US#160)
            s.tables,
            problems,
            lambda ps, left: protect_linked(
                ps,
                desc.name,
                options
                if left == options.max_time
                else dataclasses.replace(options, max_time=left),
                progress,
                cancel,
                cover=cover,
            ),
            options.max_time,
        )
    except Cancelled as exc:
        raise nothing_changed(s, numbers, exc) from None
    audits = []
    for no, (prob, res) in enumerate(zip(problems, results, strict=True), start=1):
        verdict = res.audit or run_audit(prob, is_suppressed(res.status), cancel=None)
        if not verdict.ok:
            s.add_log(f"Table {no}: {verdict.summary()}")
            raise AuditError(
                f"{desc.name} on linked tables: table {no}: {verdict.summary()} "
                "The tables were left unchanged."
            )
        audits.append(verdict)
    for no, (t, res, verdict) in enumerate(zip(s.tables, results, audits, strict=True), 1):
        res.audit = verdict
        keep_pattern(t, starts[no - 1], res.status)
        t.published = t.interval_lower = t.interval_upper = None  # a suppression's face
        t.protection = ProtectionInfo(desc.name, desc.face, p.describe() + " (linked)")
        t.audit = verdict
        s.results[no] = res
    if s.printed:
        linked_beside_published(s, results, starts, problems, options.max_time, progress, cancel)
    s.linked = numbers
    s.linked_cleared = None
    verdicts = linked_verdicts(s, cancel)  # the gate's verdict, before any door prints one
    for no, (t, res, audit) in enumerate(zip(s.tables, results, audits, strict=True), 1):
        v = verdicts[no - 1] if verdicts is not None else None
        res.verdict = v
        mark_protected(t, v)
        if s.printed:
            judged_beside(s, no, t, res, progress, cancel)
        v = res.verdict
        for line in res.log or []:
            if line.startswith("Rule on combined cells"):  # what US#160's rule did
                s.add_log(f"Table {no} (linked): {line}")
        said = (v if v is not None else audit).summary()
        s.add_log(
            f"Table {no} (linked): {'; '.join(res.outcome_lines(desc.face, t.value))}; {said}"
        )
        if v is not None and not v.ok:
            s.add_log(f"Table {no}: NOT PUBLISHABLE: {v.summary()}")
        if res.cancelled:
            res.cancel_note = kept_after_cancel(no, res, desc.kind)
            s.add_log(res.cancel_note)
    s.actions.append(Protect(0, desc.name, p))
    return results


def after_cancel(cancel: CancelToken | None) -> CancelToken | None:
    """The token for work on an audited result that a cancel must not throw away: cancelled
    only once the cancel's grace has run out (as linked_verdicts)."""
    from argusqt.protection.audit.publication import CANCEL_GRACE  # lazy: scipy, HiGHS

    return cancel.grace(CANCEL_GRACE) if cancel is not None else None


def judged_beside(
    s: Session,
    table_no: int,
    table: Table,
    result: ProtectionResult,
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> None:
    """The verdict beside the faces already published becomes the result's when it fails, so
    that every door prints what saving will say (docs/design.md, D-90); a pass is kept."""
    # lazy: the shared-cells audit (scipy, HiGHS), only once a table was published
    from argusqt.export.shared import partners, set_print, shared_verdict
    from argusqt.workflow.output import printed_out

    if result.verdict is None or not result.verdict.ok:
        return
    others = partners(table, table_no, printed_out(s))
    if not others:
        return
    try:
        joint, _problem, who = shared_verdict(
            table, table_no, others, progress=progress, cancel=after_cancel(cancel)
        )
    except Cancelled:  # as linked_verdicts after a cancel: no verdict, the gate judges it
        s.add_log(f"Table {table_no}: the audit beside the tables published before runs at saving")
        result.verdict = None
        mark_protected(table, None)
        return
    except PublicationError as exc:  # not judgeable together: refused at saving
        s.add_log(f"Table {table_no}: NOT PUBLISHABLE beside the tables published before: {exc}")
        result.verdict = None
        mark_protected(table, None)
        return
    if joint.ok:
        s.printed_cleared.add(set_print(table, table_no, others))
        s.add_log(f"Table {table_no}: beside {', '.join(who[1:])}: the joint audit passed")
        return
    result.verdict = joint
    mark_protected(table, joint)
    s.add_log(
        f"Table {table_no}: it cannot be published beside {', '.join(who[1:])} (no pattern "
        f"of this table made it safe beside them): {joint.summary()}"
    )


def linked_beside_published(
    s: Session,
    results: list[ProtectionResult],
    starts: list[np.ndarray],
    problems: list[Any],
    seconds: float | None,
    progress: ProgressCallback,
    cancel: CancelToken | None,
) -> None:
    """Linked tables protected after tables of the same records were published: each grown
    beside those faces and the set's tables before it (docs/design.md, D-90), as saving
    them in order will judge them; a table's growth is seen by the ones after it."""
    # lazy: only once a table was published
    from argusqt.export.shared import Printed, snapshot
    from argusqt.protection.audit.outsider import audit as run_audit

    members: list[Any] = []
    for no, (t, res) in enumerate(zip(s.tables, results, strict=True), start=1):
        try:
            grown = beside_published(
                s, no, t, res, seconds, progress, after_cancel(cancel), members
            )
        except Cancelled:  # the set's own audited patterns stay; the gate judges the rest
            s.add_log(
                f"Linked tables: cancelled while growing table {no} beside the tables "
                "published before; tables from it on are not grown, and saving judges them "
                "beside what was published"
            )
            return
        if grown:
            keep_pattern(t, starts[no - 1], res.status)
            t.audit = res.audit = run_audit(problems[no - 1], is_suppressed(res.status))
        members.append(Printed(no, snapshot(t), f"table {no} of the set", None))


def linked_verdicts(s: Session, cancel: CancelToken | None) -> list[Any] | None:
    """The publication gate's verdict on each table of the linked set just protected (its
    own, sums of suppressed cells included, and the set's joint one: docs/design.md, D-50),
    so that every door prints what saving would say. After a cancel it gets CANCEL_GRACE;
    None when that ends first or the set cannot be judged together (PublicationError, in
    the log): the tables then read "publication audit not yet run" and the gate runs, and
    refuses what fails, when they are saved."""
    # lazy: scipy, HiGHS and the audit (docs/design.md, D-39)
    from argusqt.protection.audit.publication import CANCEL_GRACE

    tables = [s.table(n) for n in s.linked]
    stop = cancel.grace(CANCEL_GRACE) if cancel is not None else None
    try:
        verdicts = linked_table_verdicts(tables, s.linked, cancel=stop)
    except Cancelled:
        s.add_log(
            f"Linked tables {s.linked}: no time left after the cancel for the publication "
            "audit; it runs when the tables are saved"
        )
        return None
    except PublicationError as exc:  # the set cannot be judged together: say so, keep going
        s.add_log(f"Linked tables {s.linked}: NOT PUBLISHABLE as they stand: {exc}")
        return None
    if all(v.ok for v in verdicts):
        s.linked_cleared = linked_fingerprint(tables)
        s.add_log(f"Linked tables {s.linked}: joint publication audit passed")
    return verdicts


def check_numbers(s: Session, table: Table, table_no: int) -> None:
    """check_solver_numbers, its message pointing at the data record with the largest
    response (file and line) when the table comes from microdata."""
    try:
        check_solver_numbers(table, table_no)
    except MethodError as exc:
        raise MethodError(exc.message + largest_record(s, table_no)) from None


def largest_record(s: Session, table_no: int) -> str:
    """`; the largest num1 in data.asc is 1e+300 (line 6)`, or "" when not known."""
    spec = s.specs[table_no - 1] if table_no <= len(s.specs) else None
    micro, data = s.microdata, s.data_path
    if spec is None or spec.response is None or micro is None or data is None:
        return ""
    try:
        values = np.asarray(micro.values(spec.response), dtype=float)
    except (KeyError, ValueError, AttributeError):
        return ""
    if values.size == 0:
        return ""
    k = int(np.nanargmax(np.abs(np.nan_to_num(values, nan=0.0))))
    return (
        f". The largest {spec.response} in {data.name} is {values[k]:.6g} (line {micro.line_of(k)})"
    )


def linked_cover(s: Session, problems: list) -> Any:
    """MOD on linked tables from microdata: the cover table over all their variables.

    None when every cover cell is in some table (the joint problem is the cover) or
    there is no microdata; the cover gets the first table's response, rules and cost.
    """
    # lazy: scipy, HiGHS and the protection methods (docs/design.md, D-39)
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.suppress.linked import build_linked_problem, cover_dims

    if s.kind != "microdata" or s.microdata is None:
        return None
    if build_linked_problem(problems)[0].dims is not None:
        return None

    first = s.tables[0].spec
    names = [c.name for c in cover_dims(problems)[0]]
    spec = TableSpec(names, first.response, first.shadow, first.cost, first.rules)
    log: list[str] = []
    # lazy: tabulating (a table file's batch never tabulates microdata; D-111)
    from argusqt.model.tabulate import build_table

    table = build_table(s.metadata, s.microdata, spec, log, codelist_for=codelist_for)
    apply_rules(table)
    compute_cost(table, specifying.distances(s, table))
    s._log_lines(log)
    s.add_log(f"Linked tables: cover table {' × '.join(names)}, {table.n_cells} cells")
    return CSPProblem.from_table(table)


#: Ratio of the largest to the smallest non-zero cell value beyond which a solver failure is
#: put down to precision (docs/design.md, D-24). Only used to explain a failure, never to
#: refuse.
SOLVER_RANGE = 1e7
#: Largest cell value (or protection level) a protection method is given: beyond 2^53 ≈ 9e15
#: sums of whole numbers are no longer exact, and the LP solvers fail with errors of their own.
MAX_SOLVER_VALUE = 1e15


def _file_digest(path: Path | None) -> bytes | None:
    """SHA-256 of a regular file's bytes, read in blocks (None when there is no such file)."""
    if path is None or not Path(path).is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.digest()


def kept_after_cancel(table_no: int, result: ProtectionResult, kind: str) -> str:
    """The one message after a cancel that kept a result: which result and its audit."""
    what = "pattern" if kind == "suppress" else "result"
    verdict = result.verdict if result.verdict is not None else result.audit
    audit = verdict.summary() if verdict is not None else "no audit"
    return (
        f"Table {table_no}: {result.method} cancelled: the best {what} found before the cancel "
        f"was kept. {audit}"
    )


def check_solver_numbers(table: Table, table_no: int) -> None:
    """Refuse a table whose numbers are not finite before a solver sees them (an overflow
    would otherwise surface as a solver error)."""
    for what, arr in (
        ("values", table.value),
        ("costs", table.cost),
        ("protection levels", table.lpl),
        ("protection levels", table.upl),
    ):
        arr = np.asarray(arr, dtype=float)
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            codes = ", ".join(table.cell_codes(int(bad[0])))
            raise MethodError(
                f"table {table_no}: {bad.size} cell(s) have {what} that are not finite numbers "
                f"(first: cell ({codes})); the input values are too large. Rescale the data "
                "(e.g. thousands) and read it again"
            )
        if what == "costs":  # derived (scaled by the methods); the values bound them
            continue
        huge = np.flatnonzero(np.abs(arr) > MAX_SOLVER_VALUE)
        if huge.size:
            k = int(huge[np.argmax(np.abs(arr[huge]))])
            codes = ", ".join(table.cell_codes(k))
            raise MethodError(
                f"table {table_no}: {huge.size} cell(s) have {what} beyond "
                f"{MAX_SOLVER_VALUE:.0e} (largest: {arr[k]:.6g}, cell ({codes})); sums of "
                "such numbers are not exact and no solver can protect them. Check the largest "
                "values in the data or rescale the response (e.g. thousands) and read it again"
            )


def _explain_solver_failure(
    table: Table, table_no: int, method: str, exc: Exception
) -> MethodError | None:
    """A solver failure on a table whose values span more digits than LP solvers keep is an
    input problem with a fix (rescale); anything else stays an internal error."""
    a = np.abs(np.asarray(table.value, dtype=float))
    a = a[a > 0]
    if a.size == 0 or a.max() / a.min() <= SOLVER_RANGE:
        return None
    big = ", ".join(table.cell_codes(int(np.argmax(np.abs(table.value)))))
    return MethodError(
        f"{method} on table {table_no}: the solver failed ({type(exc).__name__}: {exc}). The "
        f"cell values range from {a.min():g} to {a.max():g} (cell ({big})), beyond about "
        f"{SOLVER_RANGE:.0e} : 1, where solvers lose precision; check the largest values in "
        "the data or rescale the response (e.g. thousands)"
    )
