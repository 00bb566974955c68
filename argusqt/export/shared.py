"""Tables of one data set published apart that share cells (docs/design.md, D-81).

Every table of one response is made of sums over the same records, so two tables published
apart share at least their grand total and often whole margins: an attacker reads every
file. The joint problem puts all the faces published in a session on one footing. A cell is
the set of data codes it sums in each variable, so a detailed, a recoded and a folded coding
of a variable meet at their codes: identical sets are one cell, and where two tables code
their common variables differently, the margin over those variables at the data codes links
them (each table's margin cell is the sum of the data-level cells it covers). The attacker
knows each cell within what its faces print; the one publication audit (outsider and
insiders) judges every primary of every face over them all.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from argusqt.dataclass import dataclass
from argusqt.errors import AuditError, MethodError, PublicationError
from argusqt.export.gate import cell_name, fingerprint, table_face
from argusqt.model.status import (
    Status,
    is_candidate,
    is_primary,
    is_secondary,
    is_suppressed,
    secondary_status_for,
)
from argusqt.model.table import Table
from argusqt.model.tabulate import expand_to_cells
from argusqt.progress import CancelToken, ProgressCallback, ProgressEvent, no_progress

if TYPE_CHECKING:
    import scipy.sparse as sp

    from argusqt.protection.core.problem import CSPProblem

#: code-set id of a variable's total (every data code): a variable a table does not span
ALL = 0

#: the data-level margin over two tables' common variables is the full product of their
#: codes up to this many cells (an attacker does not know which combinations are empty);
#: above it only the combinations the records hold (an attacker who knew which are empty:
#: stronger, so the verdict stays on the safe side)
FULL_MARGIN_LIMIT = 100_000


@dataclass(frozen=True)
class Printed:
    """A table as one published file showed it: a copy taken when it was written, so that a
    later protection of the table does not change what that file told an attacker."""

    number: int
    table: Table
    where: str  # the file's name (or "a data frame"), as the refusal names it
    #: the file written: a later file written over it replaces this face (what is on disk)
    path: str | None = None

    @property
    def print(self) -> str:
        return fingerprint(self.table)


def snapshot(table: Table) -> Table:
    """A copy of the table's published face that later changes to the table do not reach."""
    out = copy.copy(table)
    for name in ("status", "value", "lpl", "upl", "published", "interval_lower", "interval_upper"):
        arr = getattr(table, name, None)
        if arr is not None:
            setattr(out, name, np.array(arr, copy=True))
    return out


def data_key(table: Table) -> tuple[Any, ...]:
    """Tables with the same key publish sums of the same quantity over the same records."""
    spec = table.spec
    return (spec.response, bool(spec.use_weights), table.source is not None)


def _node_codes(table: Table, d: int) -> list[frozenset[str]]:
    """Per node of dimension d, the data codes it sums: the records' codes for a table from
    microdata (so any recode is matched), the leaf codes below it for a table file."""
    dim = table.dims[d]
    sets: list[set[str]] = [set() for _ in range(len(dim))]
    pairs: list[tuple[str, int]]
    if table.source is not None:
        fine, maps = table.source
        pairs = list(zip(fine.fine_codes[d], np.asarray(maps[d]).tolist(), strict=True))
    else:
        pairs = [(dim.codes[i], i) for i in np.flatnonzero(dim.is_leaf).tolist()]
    for code, leaf in pairs:  # a variable's codes, not records: a few thousand at most
        for node in dim.ancestors[int(leaf)]:
            sets[node].add(code)
    return [frozenset(s) for s in sets]


@dataclass
class Joint:
    """The joint problem of printed tables, each table's cell → joint cell, and what the
    attacker knows of each joint cell (lower, upper; equal where printed exactly)."""

    problem: CSPProblem
    local: list[np.ndarray]
    lower: np.ndarray
    upper: np.ndarray
    #: what the faces of every table but the first tell (the first's pattern being grown)
    beside_lower: np.ndarray
    beside_upper: np.ndarray


def joint_problem(tables: list[Table]) -> Joint:
    """One problem over every cell of the printed tables (and the data-level margins linking
    them); PublicationError when cells that sum the same records disagree."""
    import scipy.sparse as sparse

    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.core.respondents import joined, record_links
    from argusqt.protection.suppress.linked import distinct_rows, relations_over

    if not _acyclic([{t.variable(d) for d in range(t.ndim)} for t in tables if t.source]):
        raise PublicationError(
            "the tables sharing cells cannot be judged together: their variables form a "
            "cycle (say a × b, b × c and a × c), and their common margins do not tell what "
            "all of them together tell; protect them together (linked) or publish fewer"
        )
    problems = [CSPProblem.from_table(t) for t in tables]
    names = sorted({t.variable(d) for t in tables for d in range(t.ndim)})
    col = {v: i for i, v in enumerate(names)}
    universe: dict[str, set[str]] = {v: set() for v in names}
    node_sets = [[_node_codes(t, d) for d in range(t.ndim)] for t in tables]
    for t, sets in zip(tables, node_sets, strict=True):
        for d in range(t.ndim):
            universe[t.variable(d)].update(sets[d][0])
    ids: dict[str, dict[frozenset[str], int]] = {v: {frozenset(universe[v]): ALL} for v in names}

    def set_id(v: str, s: frozenset[str]) -> int:
        return ids[v].setdefault(s, len(ids[v]))

    keys = []
    for t, sets in zip(tables, node_sets, strict=True):
        key = np.full((t.n_cells, len(names)), ALL, dtype=np.int64)
        nodes = np.unravel_index(np.arange(t.n_cells), t.shape) if t.ndim else ()
        for d in range(t.ndim):
            v = t.variable(d)
            per_node = np.array([set_id(v, s) for s in sets[d]], dtype=np.int64)
            key[:, col[v]] = per_node[nodes[d]]
        keys.append(key)
    margins = _margins(tables, names, universe, col, set_id)
    every = np.vstack(keys + [m.key for m in margins]) if keys else np.zeros((0, len(names)))
    _, inverse = np.unique(every, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    n = int(inverse.max()) + 1
    bounds = np.cumsum([0] + [t.n_cells for t in tables] + [m.key.shape[0] for m in margins])
    local = [inverse[bounds[k] : bounds[k + 1]] for k in range(len(tables))]
    m_local = [inverse[bounds[len(tables) + j] : bounds[len(tables) + j + 1]]
               for j in range(len(margins))]  # fmt: skip

    values = np.full(n, np.nan)
    freq = np.zeros(n)
    status = np.full(n, Status.SAFE, dtype=np.int16)
    lpl, upl, cost = np.zeros(n), np.zeros(n), np.zeros(n)
    lo_apriori = min(float(p.lower.min()) for p in problems)
    hi_apriori = max(float(p.upper.max()) for p in problems)
    lower, upper = np.full(n, lo_apriori), np.full(n, hi_apriori)
    decimals = max(p.decimals for p in problems)
    tol = 0.5 * 10.0 ** (-decimals) + 1e-9 * max(1.0, max(abs(hi_apriori), abs(lo_apriori)))
    printed_lo, printed_hi = np.full(n, -np.inf), np.full(n, np.inf)
    beside_lo, beside_hi = printed_lo.copy(), printed_hi.copy()
    for k, (t, p, loc) in enumerate(zip(tables, problems, local, strict=True)):
        _agree(values, loc, p.values, tol, f"table {k + 1}")
        values[loc] = p.values
        freq[loc] = np.maximum(freq[loc], np.asarray(t.freq, dtype=float))
        prim = is_primary(p.status)
        status[loc[prim]] = p.status[prim]
        empty = np.asarray(p.status) == Status.EMPTY
        status[loc[empty & ~is_primary(status[loc])]] = Status.EMPTY
        np.maximum.at(lpl, loc, p.lpl)
        np.maximum.at(upl, loc, p.upl)
        np.maximum.at(cost, loc, p.cost)
        np.maximum.at(lower, loc, p.lower)
        np.minimum.at(upper, loc, p.upper)
        face_lo, face_hi = printed_interval(t, p)
        np.maximum.at(printed_lo, loc, face_lo)
        np.minimum.at(printed_hi, loc, face_hi)
        if k:
            np.maximum.at(beside_lo, loc, face_lo)
            np.minimum.at(beside_hi, loc, face_hi)
    for m, loc in zip(margins, m_local, strict=True):
        _agree(values, loc, m.value, tol, "the data-level margin")
        values[loc] = m.value
        freq[loc] = np.maximum(freq[loc], m.freq)
    if np.isnan(values).any():  # every joint cell is some table's cell or a margin cell
        raise PublicationError("the tables sharing cells cannot be judged together")
    prim = is_primary(status)
    lower = np.where(prim, np.minimum(lower, values - lpl), lower)
    upper = np.where(prim, np.maximum(upper, values + upl), upper)
    lo, hi = _known(printed_lo, printed_hi, lower, upper, values)
    beside = _known(beside_lo, beside_hi, lower, upper, values)
    blocks = relations_over(tables, local, n)
    for m, loc in zip(margins, m_local, strict=True):
        blocks.append(_margin_rows(m, local, loc, n))
    rel = distinct_rows(sparse.vstack(blocks).tocsr()) if blocks else sparse.csr_matrix((0, n))
    parts = [p.respondents for p in problems]
    respondents = (
        joined([r for r in parts if r is not None], local, n, *record_links(tables, local, n))
        if all(r is not None for r in parts)
        else None
    )
    problem = CSPProblem(
        values=values, lower=lower, upper=upper, cost=cost, status=status, lpl=lpl, upl=upl,
        relations=rel, rhs=np.zeros(rel.shape[0]), spl=np.zeros(n), decimals=decimals,
        dims=None, freq=freq, respondents=respondents,
    )  # fmt: skip
    return Joint(problem, local, lo, hi, *beside)


def _known(
    printed_lo: np.ndarray,
    printed_hi: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    values: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """What the faces print of each cell within the a-priori bounds (a face never narrower
    than the truth): the attacker's bounds of the joint audit."""
    lo = np.minimum(np.maximum(printed_lo, lower), values)
    hi = np.maximum(np.minimum(printed_hi, upper), values)
    return lo, hi


def _acyclic(sets: list[set[str]]) -> bool:
    """Graham's reduction: variable sets whose pairwise margins determine everything their
    tables tell together (no cycle such as a × b, b × c, a × c); what the data-level
    margins of each pair rely on (docs/design.md, D-81)."""
    work = [set(v) for v in sets]
    changed = True
    while changed and len(work) > 1:
        changed = False
        for v in {x for w in work for x in w}:  # a variable of one set only
            if sum(v in w for w in work) == 1:
                for w in work:
                    w.discard(v)
                changed = True
        for i, w in enumerate(work):  # a set inside another
            if any(j != i and w <= o for j, o in enumerate(work)):
                del work[i]
                changed = True
                break
    return len(work) <= 1


def _agree(values: np.ndarray, loc: np.ndarray, new: np.ndarray, tol: float, who: str) -> None:
    """Cells that sum the same records must have the same value."""
    seen = ~np.isnan(values[loc])
    bad = np.flatnonzero(seen & (np.abs(values[loc] - np.asarray(new, float)) > tol))
    if bad.size:
        j = int(bad[0])
        raise PublicationError(
            f"the tables sharing cells cannot be judged together: cell {j} of {who} sums the "
            f"same records as a cell of another table but holds {float(new[j]):g}, not "
            f"{float(values[loc[j]]):g}"
        )


def printed_interval(table: Table, problem: CSPProblem) -> tuple[np.ndarray, np.ndarray]:
    """What the table's face tells an attacker of each cell: its value where printed exact,
    the a-priori bounds where suppressed (or adjusted by CTA: no certain interval), the
    rounding interval, the published interval, the perturbed value's interval of originals."""
    from argusqt.protection.audit.disclosure import rounding_interval

    a = np.asarray(problem.values, dtype=float)
    face = table_face(table)
    lo, hi = a.copy(), a.copy()
    if face.kind == "suppress":
        sup = np.asarray(face.suppressed, dtype=bool)
        lo[sup], hi[sup] = problem.lower[sup], problem.upper[sup]
    elif face.kind in ("interval", "ckm") and face.lower is not None and face.upper is not None:
        lo, hi = np.asarray(face.lower, float), np.asarray(face.upper, float)
    elif face.kind == "round" and face.published is not None and face.base is not None:
        lo, hi = rounding_interval(face.published, face.base, face.steps, problem.decimals)
        fixed = np.asarray(problem.status) == Status.EMPTY
        lo, hi = np.where(fixed, a, lo), np.where(fixed, a, hi)
    elif face.kind == "cta":
        lo, hi = problem.lower.copy(), problem.upper.copy()
    return np.minimum(lo, a), np.maximum(hi, a)


@dataclass
class _Margin:
    """Data-level cells over two tables' common variables and, per table, its cells above
    each of them (table index, (table cell, margin cell) pairs)."""

    key: np.ndarray
    value: np.ndarray
    freq: np.ndarray
    covers: list[tuple[int, np.ndarray, np.ndarray]]


def _margins(
    tables: list[Table],
    names: list[str],
    universe: dict[str, set[str]],
    col: dict[str, int],
    set_id: Any,
) -> list[_Margin]:
    """For every pair of tables from microdata, the margin over their common variables at
    the data codes; a table file's codes are all it has, so its cells meet by codes only."""
    out: list[_Margin] = []
    for k in range(len(tables)):
        for j in range(k + 1, len(tables)):
            a, b = tables[k], tables[j]
            if a.source is None or b.source is None:
                continue
            common = sorted(
                {a.variable(d) for d in range(a.ndim)} & {b.variable(d) for d in range(b.ndim)}
            )
            out.append(_margin(tables, (k, j), common, universe, col, len(names), set_id))
    return out


def _margin(
    tables: list[Table],
    pair: tuple[int, int],
    common: list[str],
    universe: dict[str, set[str]],
    col: dict[str, int],
    width: int,
    set_id: Any,
) -> _Margin:
    codes = {v: sorted(universe[v]) for v in common}
    sizes = [len(codes[v]) for v in common]
    # each table's records by their data codes in the common variables (fine cells: records
    # aggregated per combination, so the same for both tables)
    first = tables[pair[0]]
    fine, _maps = first.source
    dim_of = {first.variable(d): d for d in range(first.ndim)}
    position = {v: {c: i for i, c in enumerate(codes[v])} for v in common}
    fine_codes = [np.array([position[v][c] for c in fine.fine_codes[dim_of[v]]], dtype=np.int64)
                  for v in common]  # fmt: skip
    rec = [fc[fine.keys[:, dim_of[v]]] for fc, v in zip(fine_codes, common, strict=True)]
    flat = np.ravel_multi_index(tuple(rec), tuple(sizes)) if common else np.zeros(
        fine.n_fine, dtype=np.int64)  # fmt: skip
    total = int(np.prod(sizes)) if common else 1
    combos = np.arange(total) if total <= FULL_MARGIN_LIMIT else np.unique(flat)
    where = np.searchsorted(combos, flat)
    value = np.bincount(where, weights=fine.value, minlength=combos.size)
    freq = np.bincount(where, weights=fine.freq, minlength=combos.size)
    per_var = np.unravel_index(combos, tuple(sizes)) if common else ()
    key = np.full((combos.size, width), ALL, dtype=np.int64)
    for v, u in zip(common, per_var, strict=True):
        singles = np.array([set_id(v, frozenset([c])) for c in codes[v]], dtype=np.int64)
        key[:, col[v]] = singles[u]
    covers = []
    for k in pair:
        t = tables[k]
        t_fine, maps = t.source
        nodes = []
        for d in range(t.ndim):
            v = t.variable(d)
            if v not in common:
                nodes.append(np.zeros(combos.size, dtype=np.int64))
                continue
            leaf_of = dict(zip(t_fine.fine_codes[d], np.asarray(maps[d]).tolist(), strict=True))
            missing = [c for c in codes[v] if c not in leaf_of]
            if missing:  # tables of the same records see the same codes
                raise PublicationError(
                    "the tables sharing cells cannot be judged together: table "
                    f"{k + 1} has no record with code {missing[0]!r} of {v}"
                )
            leaf = np.array([leaf_of[c] for c in codes[v]], dtype=np.int64)
            nodes.append(leaf[per_var[common.index(v)]])
        if t.ndim:
            cells, items = expand_to_cells(nodes, t.dims)
        else:
            cells, items = np.zeros(combos.size, dtype=np.int64), np.arange(combos.size)
        covers.append((k, cells, items))
    return _Margin(key, value, freq, covers)


def _margin_rows(m: _Margin, local: list[np.ndarray], m_loc: np.ndarray, n: int) -> sp.csr_matrix:
    """Each covering table cell equals the sum of the margin cells below it."""
    import scipy.sparse as sparse

    rows = []
    for k, cells, items in m.covers:
        distinct, row = np.unique(cells, return_inverse=True)
        r = np.asarray(row).ravel()
        plus = sparse.csr_matrix(
            (np.ones(distinct.size), (np.arange(distinct.size), local[k][distinct])),
            shape=(distinct.size, n),
        )
        minus = sparse.csr_matrix((np.ones(r.size), (r, m_loc[items])), shape=(distinct.size, n))
        rows.append((plus - minus).tocsr())
    out = sparse.vstack(rows).tocsr()
    out.eliminate_zeros()
    return out


def partners(table: Table, number: int, printed: list[Printed]) -> list[Printed]:
    """The faces published before that share cells with `table` (same data), other than the
    face it would print now."""
    key = data_key(table)
    now = fingerprint(table)
    out: list[Printed] = []
    for p in printed:
        if data_key(p.table) != key or (p.number == number and p.print == now):
            continue
        if not _same_total(table, p.table):
            continue  # other data (next year's file, another survey) opened since
        if any(q.number == p.number and q.print == p.print for q in out):
            continue
        out.append(p)
    return out


def _same_total(a: Table, b: Table) -> bool:
    """Tables of one data set have the same grand total (to the printed decimals): a copy
    of the data opened again is the same data, next year's file is not (a frequency table
    of as many records is then refused as not judgeable, never let through)."""
    tol = 0.5 * 10.0 ** (-max(a.decimals, b.decimals))
    return abs(float(a.value[0]) - float(b.value[0])) <= tol


def set_print(table: Table, number: int, others: list[Printed]) -> str:
    """Digest of a set of faces judged together (the judgement is kept while it holds)."""
    h = hashlib.sha1(f"{number}:{fingerprint(table)}".encode())
    for p in sorted(others, key=lambda q: (q.number, q.print)):
        h.update(f"|{p.number}:{p.print}".encode())
    return h.hexdigest()


def shared_verdict(
    table: Table,
    number: int,
    others: list[Printed],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> tuple[Any, Joint, list[str]]:
    """The publication verdict of `table` beside the faces already published from the same
    data: one attacker over all of them. Returns the verdict, the joint problem and the
    name of each face (the table itself first)."""
    from argusqt.protection.audit.publication import publication_audit

    tables = [table] + [p.table for p in others]
    who = [f"table {number}"] + [f"table {p.number} as published in {p.where}" for p in others]
    joint = joint_problem(tables)
    owner: dict[int, tuple[int, int]] = {}
    for k in range(len(tables) - 1, -1, -1):
        for cell, j in enumerate(joint.local[k].tolist()):
            owner[j] = (k, cell)
    progress(ProgressEvent("Publication audit beside the tables already published"))
    # a primary of one face printed exactly by another is judged too (it is recomputed)
    hidden = (joint.upper > joint.lower) | is_primary(np.asarray(joint.problem.status))
    verdict = publication_audit(
        joint.problem, hidden, lower=joint.lower, upper=joint.upper, cancel=cancel,
        progress=progress,
    )  # fmt: skip

    def name(j: int) -> str:
        if j not in owner:
            return f"data-level margin cell {j}"
        k, cell = owner[j]
        return f"{who[k]}: {cell_name(tables[k], cell)}"

    verdict.label = name
    return verdict, joint, who


def clear_beside_published(
    table: Table,
    number: int,
    printed: list[Printed],
    cleared: set[str],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> str | None:
    """Raise PublicationError when `table`, published beside the faces already published
    from the same data, lets an attacker recompute a primary of any of them; the words of
    the verdict when it was judged (None: nothing shared was published). Keeps passing sets
    in `cleared`."""
    others = partners(table, number, printed)
    if not others:
        return None
    key = set_print(table, number, others)
    if key in cleared:
        return "unchanged since the joint audit with the tables already published passed"
    verdict, joint, who = shared_verdict(table, number, others, progress=progress, cancel=cancel)
    if verdict.ok:
        cleared.add(key)
        return f"published beside {', '.join(who[1:])}: the joint audit passed"
    mine = {int(j): cell for cell, j in enumerate(joint.local[0].tolist())}
    cells = [table.cell_codes(mine[int(j)]) for j in verdict.failing_cells if int(j) in mine]
    raise PublicationError(
        f"the table cannot be published beside {', '.join(who[1:])}: they share cells (the same "
        f"records), and an attacker who reads them together can recompute primary cells. "
        f"{verdict.summary()} Protect the tables together (linked), or publish only one of "
        "them (a file deleted or written over no longer counts); nothing was written.",
        cells=cells,
        beside=who[1:],
    )


def beside_status(
    table: Table,
    status: np.ndarray,
    others: list[Printed],
    *,
    seconds: float | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> tuple[np.ndarray, int] | None:
    """`status` (the table's pattern from a suppression method) with the secondaries added
    so that, beside the faces already published, no outsider or insider recomputes a primary
    of any: the LP steps of argusqt/docs/methods.md §4 and the insider repair on the joint
    problem, where only this table's cells may be added (a published cell stays published).
    Each published cell is known within what its face prints, as the joint audit reads it
    (`printed_interval`: exact, a rounding or a published interval, nothing certain from
    CTA). Returns (statuses, cells added); None when no pattern of this table was found (then
    the joint verdict at saving judges the pair)."""
    # lazy: the repairs (scipy, HiGHS), for a table protected after another was published
    from argusqt.protection.core.budget import Deadline
    from argusqt.protection.suppress.linked import repair_insiders_jointly
    from argusqt.protection.suppress.table_repair import repair

    if not others:
        return None
    mine = snapshot(table)
    mine.status = np.asarray(status).copy()
    try:
        joint = joint_problem([mine] + [p.table for p in others])
    except PublicationError:  # not judgeable together: the gate says why at saving
        return None
    n = joint.problem.n_cells
    # what the faces already published tell of each cell; this table's own face is the mask
    lower, upper = joint.beside_lower, joint.beside_upper
    shown = upper <= lower  # known exactly from them
    own = joint.local[0]
    # unknown or known within an interval (margins, suppressed, rounded, published intervals,
    # CTA's adjusted values): a cell of the attacker that this table cannot add
    st = np.full(n, Status.SECONDARY_MANUAL, dtype=np.int16)
    st[shown] = Status.PROTECTED  # out there: never a secondary
    theirs = is_primary(np.asarray(joint.problem.status))
    st[theirs] = np.asarray(joint.problem.status)[theirs]
    mine_st = np.asarray(status).astype(np.int16)
    # a primary of a published face that this table would print: suppressed here too
    need = theirs[own] & ~is_suppressed(mine_st)
    if (need & ~is_candidate(mine_st)).any():
        return None  # a cell this table must print: the gate refuses at saving
    keep = ~(shown[own] & ~is_primary(mine_st)) & ~need
    st[own[keep]] = mine_st[keep]
    cost = np.zeros(n)
    cost[own] = np.asarray(table.cost, dtype=float)
    problem = dataclasses.replace(joint.problem, status=st, cost=cost, lower=lower, upper=upper)
    sup = is_suppressed(st)
    try:
        fixed, _rounds = repair(problem, sup, cancel, progress)
    except MethodError:
        return None  # no pattern of this table protects them: the gate refuses at saving
    grown = st.copy()
    new = fixed & ~sup & is_candidate(st)
    grown[new] = secondary_status_for(grown[new])
    try:
        grown, _added = repair_insiders_jointly(
            problem, grown, progress, cancel, Deadline(seconds), "the shared-cells repair"
        )
    except (AuditError, MethodError):  # no pattern of this table: the gate refuses at saving
        return None
    out = np.asarray(status).copy()
    js = grown[own]
    add = is_secondary(js) & is_candidate(out)
    out[add] = js[add]
    out[need] = secondary_status_for(out[need])
    return out, int(add.sum() + need.sum())
