"""The publication gate: a file meant for publication is written only for a table whose
current published face (pattern, intervals, rounded or adjusted values) passed the one
publication verdict (protection.disclosure: outsider, insiders, point estimates).

Every writer of a publishable file (Excel workbook, CSV table, pivot and code-value files
without status) calls `clear_for_publication` first. The verdict is remembered as a
fingerprint of what the attacker sees (statuses, values, published values and intervals,
protection levels); any later change - a manual status change, an a-priori file, undo -
gives another fingerprint, so the table must pass the audit again before it is published.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from argusqt.errors import PublicationError
from argusqt.export.face import protection_kind
from argusqt.io.confidential import CONFIDENTIAL_BANNER
from argusqt.model.status import is_primary, is_secondary, is_suppressed
from argusqt.model.table import Table
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress

__all__ = [
    "CONFIDENTIAL_BANNER",
    "clear_for_publication",
    "clear_linked_for_publication",
    "linked_audit",
    "linked_table_verdicts",
    "table_verdict",
]

#: How far a table is from publication (shown in the GUI status bar and the log).
State = Literal["cleared", "protected", "refused", "changed", "unprotected", "nothing to protect"]

STATE_TEXT: dict[str, str] = {
    "cleared": "protected (publication audit passed)",
    # a method's result whose publication audit has not run on these statuses yet (after a
    # cancel's grace ran out): "protected" alone would be a verdict nobody certified
    "protected": "protected by the method; publication audit not yet run (it runs before "
    "anything is written)",
    "refused": "NOT PUBLISHABLE: the result fails the publication audit (see the log)",
    "changed": "NOT PROTECTED: statuses changed after protection",
    "unprotected": "not protected",
    "nothing to protect": "no unsafe cells",
}


def fingerprint(table: Table) -> str:
    """Digest of everything an attacker's view or the audit depends on."""
    h = hashlib.sha1(repr(table.shape).encode())
    h.update(np.ascontiguousarray(table.status, dtype=np.int8).tobytes())
    for name in ("value", "lpl", "upl", "published", "interval_lower", "interval_upper"):
        arr = getattr(table, name, None)
        h.update(name.encode())
        if arr is not None:
            h.update(np.ascontiguousarray(arr, dtype=float).tobytes())
    if table.protection is not None and table.protection.public:  # RND's base and steps
        h.update(repr(table.protection.public).encode())
    return h.hexdigest()


def mark_protected(table: Table, verdict: Any = None) -> None:
    """Called when a protection method's audited result was copied back to the table.

    `verdict`: the method's publication verdict (protection.disclosure) on exactly this
    face; when it passed, the table is cleared for publication without a new audit; when it
    failed, the table holds the result but reads NOT PUBLISHABLE.
    """
    table.protected_print = fingerprint(table)
    ok = verdict is not None and bool(getattr(verdict, "ok", False))
    table.cleared_print = table.protected_print if ok else None
    failed = verdict is not None and not ok
    table.refused_print = table.protected_print if failed else None


def protection_state(table: Table) -> State:
    """Where the table stands: cleared for publication, protected, changed after, …"""
    fp = fingerprint(table)
    if table.cleared_print == fp:
        return "cleared"
    if table.refused_print == fp:
        return "refused"
    if table.protected_print == fp:
        return "protected"
    if table.protected_print is not None:
        return "changed"
    if is_primary(table.status).any():
        return "unprotected"
    return "nothing to protect"


def cell_name(table: Table, cell: int) -> str:
    """A cell by its codes, e.g. 'Size=9 × Region=4' (users know codes, not indices)."""
    parts = [
        f"{table.variable(d)}={code.strip() or code}"
        for d, code in enumerate(table.cell_codes(cell))
    ]
    return " × ".join(parts) if parts else f"cell {cell}"


def table_face(table: Table) -> Any:
    """What the table prints now (protection.disclosure.Face): pattern, intervals, rounded or
    adjusted values with the public parameters of the method that made them."""
    from argusqt.export.face import published_values
    from argusqt.protection.audit.disclosure import Face

    kind = protection_kind(table)
    if kind == "interval":
        return Face("interval", lower=table.interval_lower, upper=table.interval_upper)
    if kind == "cta":
        return Face("cta", published=published_values(table))
    if kind == "ckm":  # argusqt/docs/methods.md §16.6: the attacker who knows the ptable
        return _ckm_face(table)
    if kind == "round":
        public = dict(table.protection.public) if table.protection is not None else {}
        if "base" not in public:
            raise PublicationError(
                "the table cannot be published: the rounding base its values were rounded "
                "with is not known, so the rounded values cannot be judged. Run rounding "
                "again; nothing was written."
            )
        return Face(
            "round",
            published=published_values(table),
            base=float(public["base"]),
            steps=int(public.get("steps", 0)),
        )
    return Face("suppress", suppressed=is_suppressed(np.asarray(table.status)))


def _ckm_face(table: Table) -> Any:
    """Perturbed values with the interval of originals an attacker who knows the ptable and
    the run's public parameters derives from each (argusqt/docs/methods.md §16.6)."""
    from argusqt.errors import ArgusError
    from argusqt.export.face import published_values
    from argusqt.protection.adjust.ckm import attacker_intervals
    from argusqt.protection.audit.disclosure import Face
    from argusqt.protection.core.problem import CSPProblem

    published = published_values(table)
    public = dict(table.protection.public) if table.protection is not None else {}
    try:
        lower, upper = attacker_intervals(CSPProblem.from_table(table), published, public)
    except ArgusError as exc:
        raise PublicationError(
            "the table cannot be published: what an attacker learns from its perturbed "
            f"values cannot be judged ({exc}). Run the cell key method again; nothing was "
            "written."
        ) from None
    return Face("ckm", published=published, lower=lower, upper=upper)


def table_verdict(
    table: Table,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> Any:
    """The publication verdict (protection.disclosure.face_verdict) on the table as printed."""
    from argusqt.protection.audit.combined import with_combined
    from argusqt.protection.audit.disclosure import face_verdict
    from argusqt.protection.core.problem import CSPProblem

    face = table_face(table)
    progress(ProgressEvent("Publication audit: outside attacker, insiders and estimates"))
    verdict = face_verdict(CSPProblem.from_table(table), face, cancel=cancel)
    if face.kind == "suppress" and face.suppressed is not None:
        with_combined(verdict, table, face.suppressed)  # sums of suppressed cells (US#160)
    verdict.label = lambda c: cell_name(table, c)
    return verdict


def clear_for_publication(
    table: Table,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    names: Callable[[int], str] | None = None,
) -> str:
    """Pass the gate or raise PublicationError naming the cells; returns the verdict's words.

    Unchanged since the last passing audit: no work. Otherwise the table as it will be
    printed (pattern, intervals, rounded or adjusted values) gets the one publication
    verdict: outsider, insiders and the point estimates (argusqt/docs/methods.md §2.1, §14).
    """
    fp = fingerprint(table)
    if table.cleared_print == fp:
        return "unchanged since its last passing publication audit"
    label = names or (lambda c: cell_name(table, c))
    kind = protection_kind(table)
    if kind == "suppress" and not is_primary(np.asarray(table.status)).any():
        table.cleared_print = fp
        return "no unsafe cells: nothing to protect"
    verdict = table_verdict(table, progress=progress, cancel=cancel)
    if verdict.ok:
        table.cleared_print = fp
        return verdict.summary(label)
    cells = [int(c) for c in verdict.failing_cells]
    raise PublicationError(
        _refusal(table, kind, verdict.summary(label)), cells=[table.cell_codes(c) for c in cells]
    )


_FORM = {
    "round": ("rounded values", "rounding"),
    "cta": ("adjusted values", "controlled tabular adjustment"),
    "ckm": ("perturbed values", "the cell key method"),
    "interval": ("published intervals", "interval protection"),
}


def _refusal(table: Table, kind: str, summary: str) -> str:
    """Why the table is refused and what to do, in the words of the table's state."""
    state = protection_state(table)
    again = "again "
    if kind in _FORM:
        what, method = _FORM[kind]
        return (
            f"the table cannot be published: its {what} let an attacker recompute or estimate "
            f"primary cells (argusqt/docs/methods.md §2.1). {summary} Run {method} again "
            "(or protect the table with another method); nothing was written."
        )
    if state == "changed":
        why = "its statuses were changed after protection and the new pattern fails the audit"
    elif state == "unprotected" and not is_secondary(table.status).any():
        why = "it has primary (unsafe) cells and has not been protected"
        again = ""
    else:
        why = "its suppression pattern fails the publication audit"
    return (
        f"the table cannot be published: {why}. {summary} "
        f"Protect the table {again}before saving it for publication; nothing was written."
    )


def linked_fingerprint(tables: list[Table]) -> str:
    """Digest of a set of tables published together."""
    h = hashlib.sha1()
    for t in tables:
        h.update(fingerprint(t).encode())
    return h.hexdigest()


def linked_audit(
    tables: list[Table],
    numbers: list[int],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> tuple[Any, list[np.ndarray]]:
    """The joint publication verdict of tables protected together: an attacker combines
    every published table of the set (cells named 'table N: codes'), and per table the
    joint cell of each of its cells. PublicationError when the set cannot be judged
    together (another form on one table, common cells that disagree)."""
    from argusqt.errors import InputError
    from argusqt.protection.audit.publication import publication_audit
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.suppress.linked import build_linked_problem

    other = [(no, protection_kind(t)) for no, t in zip(numbers, tables, strict=True)]
    other = [(no, kind) for no, kind in other if kind != "suppress"]
    if other:  # rounded / adjusted / interval figures of common cells narrow the others' cells
        what = ", ".join(f"table {no} has {_FORM[kind][0]}" for no, kind in other)
        raise PublicationError(
            f"the linked tables cannot be published: they were protected together, but {what} "
            "from a method run on it alone; an attacker combines those figures with the "
            "other tables' exact ones, which the joint audit of suppression patterns cannot "
            "judge. Protect them together again (or undo the protection); nothing was written."
        )
    try:
        joint, local, _cover = build_linked_problem([CSPProblem.from_table(t) for t in tables])
    except InputError as exc:
        raise PublicationError(
            "the linked tables cannot be published: they were protected together but now "
            f"disagree on their common cells ({exc}). Protect them together again; nothing "
            "was written."
        ) from None
    owner = _owners(local)

    def name(j: int) -> str:
        k, cell = owner[j]
        return f"table {numbers[k]}: {cell_name(tables[k], cell)}"

    progress(ProgressEvent("Publication audit of the linked tables"))
    verdict = publication_audit(joint, is_suppressed(joint.status), cancel=cancel)
    verdict.label = name
    return verdict, [np.asarray(x) for x in local]


def _owners(local: list[np.ndarray]) -> dict[int, tuple[int, int]]:
    """Joint cell → (table index, cell) of the first table that has it (it names the cell)."""
    owner: dict[int, tuple[int, int]] = {}
    for k in range(len(local) - 1, -1, -1):
        for cell, j in enumerate(np.asarray(local[k]).tolist()):
            owner[j] = (k, cell)
    return owner


def linked_table_verdicts(
    tables: list[Table],
    numbers: list[int],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> list[Any]:
    """What the gate says of each table of a linked set (docs/design.md, D-50): its own
    verdict (table_verdict, sums of suppressed cells included) when that fails, else the
    joint verdict of the set; the table is publishable only when both pass."""
    joint, _local = linked_audit(tables, numbers, progress=progress, cancel=cancel)
    out = []
    for t in tables:
        own = table_verdict(t, progress=progress, cancel=cancel)
        out.append(own if not own.ok or joint.ok else joint)
    return out


def clear_linked_for_publication(
    tables: list[Table],
    numbers: list[int],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> str:
    """Tables protected together are audited together before any of them is published:
    an attacker combines every published table of the set. Returns the set's fingerprint
    (the caller keeps it to skip the audit while nothing changes); PublicationError names
    the failing cells as 'table N: codes'."""
    verdict, local = linked_audit(tables, numbers, progress=progress, cancel=cancel)
    if not verdict.ok:
        owner = _owners(local)
        cells = [owner[int(j)] for j in verdict.failing_cells]
        raise PublicationError(
            "the linked tables cannot be published: taken together (an attacker combines "
            f"them) {verdict.summary()} Protect them together again; nothing was written.",
            cells=[tables[k].cell_codes(c) for k, c in cells],
        )
    return linked_fingerprint(tables)
