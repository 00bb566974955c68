"""The publication gate for tables protected apart that share cells (docs/design.md, D-81).

Tables of one data set with the same response share cells (at least the grand total): an
attacker combines what every one of them prints. Each table passes its own verdict
(export.gate); the set is judged here as one joint problem over the common cover
(protection.suppress.linked.build_linked_problem, statuses allowed to disagree): a cell
printed by ANY table is known, rounded figures and published intervals narrow it, and a
cell is hidden only where every table that has it suppresses it. Adjusted (CTA) and
perturbed (CKM) figures of a shared table are not judged jointly: refused.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from argusqt.errors import ArgusError, PublicationError
from argusqt.export.face import protection_kind
from argusqt.export.gate import _owners, cell_name, fingerprint, table_face, table_verdict
from argusqt.model.status import Status, is_primary
from argusqt.model.table import Table
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress

__all__ = [
    "clear_shared_for_publication",
    "shared_audit",
    "shared_fingerprint",
    "shared_table_verdicts",
]

#: what to do, said by every refusal of a set
_WHAT_TO_DO = (
    "Protect them together (Modify | Protect table: all tables, linked; batch "
    "<SUPPRESS> with table 0) or publish only one of them (specify the tables again "
    "without the others, or a batch file with that table alone); nothing was written."
)

_JOINT_FORMS = {"suppress", "round", "interval"}
_FORM_WORDS = {"cta": "adjusted values (CTA)", "ckm": "perturbed values (the cell key method)"}


def _tables_words(numbers: list[int]) -> str:
    return "tables " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def shared_fingerprint(tables: list[Table], numbers: list[int]) -> str:
    """Digest of a set of tables published together: their numbers, variables and faces."""
    h = hashlib.sha1(repr(numbers).encode())
    for t in tables:
        h.update(repr((t.spec.explanatory, t.spec.response, [d.codes for d in t.dims])).encode())
        h.update(fingerprint(t).encode())
    return h.hexdigest()


def _face_bounds(table: Table, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the table tells an attacker of each of its cells: [lo, hi] (±inf: nothing)."""
    from argusqt.protection.audit.disclosure import rounding_interval

    face = table_face(table)
    status = np.asarray(table.status)
    fixed = status == Status.EMPTY  # printed as "-": known
    if face.kind == "round":
        lo, hi = rounding_interval(face.published, float(face.base), face.steps, table.decimals)
    elif face.kind == "interval":
        lo = np.asarray(face.lower, dtype=float)
        hi = np.asarray(face.upper, dtype=float)
    else:  # a suppression pattern: a printed cell is known exactly
        sup = np.asarray(face.suppressed, dtype=bool)
        lo = np.where(sup, -np.inf, values)
        hi = np.where(sup, np.inf, values)
    return np.where(fixed, values, lo), np.where(fixed, values, hi)


def shared_audit(
    tables: list[Table],
    numbers: list[int],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> tuple[Any, list[np.ndarray], dict[int, tuple[int, int]]]:
    """The joint verdict of tables protected apart that share cells (cells named 'table N:
    codes'), per table the joint cell of each of its cells, and the (table index, cell)
    naming each joint cell. PublicationError when the set cannot be judged (CTA or CKM
    figures, codings that do not nest, common cells that disagree)."""
    from argusqt.protection.audit.publication import Disclosure, publication_audit
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.suppress.linked import build_linked_problem

    kinds = [protection_kind(t) for t in tables]
    other = [(no, k) for no, k in zip(numbers, kinds, strict=True) if k not in _JOINT_FORMS]
    if other:
        what = ", ".join(f"table {no} prints {_FORM_WORDS.get(k, k)}" for no, k in other)
        raise PublicationError(
            f"{_tables_words(numbers)} share cells (the same response from the same data): an "
            f"attacker combines what they print, but {what}, which the joint publication audit "
            f"cannot judge together with the other tables' figures. {_WHAT_TO_DO}"
        )
    problems = [CSPProblem.from_table(t) for t in tables]
    try:
        joint, local, _cover = build_linked_problem(problems, separately=True)
    except ArgusError as exc:  # codings that do not nest, or values that differ
        raise PublicationError(
            f"{_tables_words(numbers)} share cells (the same response from the same data), "
            f"but their common cells cannot be matched ({exc}), so the tables cannot be "
            "judged together. Code the variable the same way in every table (the same recode, "
            "or one table's codes a sub-hierarchy of the other's) and save again, or publish "
            "only one of them (specify the tables again without the others, or a batch file "
            "with that table alone); nothing was written."
        ) from None
    n = joint.n_cells
    a = np.asarray(joint.values, dtype=float)
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    for t, p, loc in zip(tables, problems, local, strict=True):
        t_lo, t_hi = _face_bounds(t, np.asarray(p.values, dtype=float))
        np.maximum.at(lo, loc, t_lo)
        np.minimum.at(hi, loc, t_hi)
    lo = np.minimum(np.maximum(lo, joint.lower), a)  # a method error never narrows the attacker
    hi = np.maximum(np.minimum(hi, joint.upper), a)
    owner = _primary_owners(problems, local)

    def name(j: int) -> str:
        k, cell = owner[j]
        return f"table {numbers[k]}: {cell_name(tables[k], cell)}"

    progress(ProgressEvent(f"Publication audit of {_tables_words(numbers)} (they share cells)"))
    hidden = hi > lo
    if all(k == "suppress" for k in kinds):
        verdict = publication_audit(joint, hidden, cancel=cancel, progress=progress)
    else:
        verdict = publication_audit(
            joint, hidden, lower=lo, upper=hi, cancel=cancel, progress=progress
        )
    # a primary of one table another table prints (exactly, or too narrowly): no LP needed
    prim = np.flatnonzero(joint.primary)
    tol = joint.tolerance
    short = prim[
        (lo[prim] > a[prim] - joint.lpl[prim] + tol) | (hi[prim] < a[prim] + joint.upl[prim] - tol)
    ]
    known = {d.cell for d in verdict.disclosures}
    verdict.disclosures = [
        Disclosure(int(c), "printed figures", float(lo[c]), float(hi[c]))
        for c in short.tolist()
        if c not in known
    ] + verdict.disclosures
    verdict.label = name
    return verdict, [np.asarray(x) for x in local], owner


def _primary_owners(problems: list[Any], local: list[np.ndarray]) -> dict[int, tuple[int, int]]:
    """Joint cell → (table index, cell) naming it: the first table where it is a primary
    (the table whose protection interval is at stake), else the first that has it."""
    owner = _owners(local)
    for k in range(len(local) - 1, -1, -1):
        loc = np.asarray(local[k])
        for cell in np.flatnonzero(problems[k].primary).tolist():
            owner[int(loc[cell])] = (k, cell)
    return owner


def shared_table_verdicts(
    tables: list[Table],
    numbers: list[int],
    *,
    which: list[int] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> list[Any]:
    """What the gate says of each table of a set sharing cells (or of the tables numbered
    `which`): its own verdict when that fails, else the set's joint one (as
    linked_table_verdicts, D-50)."""
    own = [table_verdict(t, progress=progress, cancel=cancel) for t in tables]
    # a table that fails its own verdict cannot be published: the others are judged without
    # it (its own write is refused; once it passes, the set is judged with it)
    keep = [k for k, v in enumerate(own) if v.ok]
    joint = None
    if len(keep) > 1 and any(is_primary(np.asarray(tables[k].status)).any() for k in keep):
        joint, _local, _owner = shared_audit(
            [tables[k] for k in keep], [numbers[k] for k in keep], progress=progress,
            cancel=cancel,
        )  # fmt: skip
    return [
        own[k] if joint is None or not own[k].ok or joint.ok else joint
        for k, no in enumerate(numbers)
        if which is None or no in which
    ]


def clear_shared_for_publication(
    tables: list[Table],
    numbers: list[int],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> str:
    """Tables sharing cells are audited together before any of them is published (an
    attacker combines them). Returns the set's fingerprint (the caller keeps it to skip the
    audit while nothing changes); PublicationError names the failing cells 'table N:
    codes'. No table with a primary cell: nothing to judge, no work."""
    if not any(is_primary(np.asarray(t.status)).any() for t in tables):
        return shared_fingerprint(tables, numbers)
    verdict, _local, owner = shared_audit(tables, numbers, progress=progress, cancel=cancel)
    if not verdict.ok:
        cells = [owner[int(j)] for j in verdict.failing_cells]
        raise PublicationError(
            f"{_tables_words(numbers)} share cells (the same response from the same data) and "
            f"an attacker combines what they print: taken together {verdict.summary()} "
            f"{_WHAT_TO_DO}",
            cells=[tables[k].cell_codes(c) for k, c in cells],
        )
    return shared_fingerprint(tables, numbers)
