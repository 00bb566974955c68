"""Linked tables (argusqt/docs/methods.md §1.5, §6.3): protect tables sharing spanning variables
together.

Variables are matched by name; per variable the cover code list is the most detailed one
of the tables, and every table's hierarchy must sit inside it. Each table cell is mapped to
a cover cell (variables a table does not span are at their total). The linked problem
holds every cover cell used by some table with the union of all tables' relations, so an
attacker combining all published tables is modelled; shared cells must agree in value
and status. The pattern found is copied back to every table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from argusqt.errors import AuditError, Cancelled, InputError, MethodError
from argusqt.model.codelist import CodeList
from argusqt.model.status import (
    Status,
    is_primary,
    is_secondary,
    is_suppressed,
    secondary_status_for,
)
from argusqt.progress import CancelToken, ProgressCallback, no_progress
from argusqt.protection.audit.insider_repair import make_publishable
from argusqt.protection.audit.outsider import audit
from argusqt.protection.audit.publication import audit_stop, audit_stopped
from argusqt.protection.core import registry
from argusqt.protection.core.budget import Deadline, seconds_param
from argusqt.protection.core.options import SolverOptions, options_dict
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import floors_over, joined
from argusqt.protection.core.result import ProtectionResult, grouped
from argusqt.protection.suppress.table_repair import repair

#: at most this many spanning variables in the cover table (optimisation methods)
MAX_COVER_DIMS = 4


def cover_dims(tables: list[CSPProblem]) -> tuple[list[CodeList], list[list[np.ndarray]]]:
    """Cover code lists (by variable name) and, per table and dimension, node → cover node."""
    names: list[str] = []
    best: dict[str, CodeList] = {}
    for t in tables:
        if not t.dims:
            raise MethodError("linked tables need the dimensions (codelists) of every table")
        for cl in t.dims:
            if cl.name not in best:
                names.append(cl.name)
                best[cl.name] = cl
            elif len(cl) > len(best[cl.name]):
                best[cl.name] = cl
    if len(names) > MAX_COVER_DIMS:
        raise MethodError(
            f"the cover table of these linked tables has {len(names)} spanning variables "
            f"({', '.join(names)}); at most {MAX_COVER_DIMS} are allowed"
        )
    cover = [best[n] for n in names]
    maps: list[list[np.ndarray]] = []
    for k, t in enumerate(tables):
        tm = []
        for cl in t.dims or []:
            tm.append(_node_map(cl, best[cl.name], k))
        maps.append(tm)
    return cover, maps


def _node_map(cl: CodeList, cover: CodeList, table_no: int) -> np.ndarray:
    """Position in the cover list of every node of `cl` (total → total), checking nesting."""
    pos: dict[str, int] = {}
    for i, code in enumerate(cover.codes):
        pos.setdefault(code, i)
    out = np.zeros(len(cl), dtype=np.int64)
    for i in range(1, len(cl)):
        code = cl.codes[i]
        if code not in pos:
            raise InputError(
                f"table {table_no + 1}: code {code!r} of variable {cl.name!r} is not in the cover "
                f"code list (expected every table's codes to be in the most detailed hierarchy)"
            )
        out[i] = pos[code]
    for i in range(1, len(cl)):
        parent_cover = out[cl.parent[i]]
        if parent_cover not in cover.ancestors[int(out[i])]:
            raise InputError(
                f"table {table_no + 1}: variable {cl.name!r}: {cl.codes[i]!r} lies under "
                f"{cl.codes[cl.parent[i]]!r} in this table but not in the cover hierarchy "
                "(expected a sub-hierarchy of the cover)"
            )
    return out


def _cover_cells(t: CSPProblem, tmap: list[np.ndarray], cover: list[CodeList]) -> np.ndarray:
    """Cover cell index of every cell of table t (unspanned variables at their total)."""
    shape = tuple(len(d) for d in t.dims or [])
    idx = np.unravel_index(np.arange(t.n_cells), shape)
    names = [d.name for d in t.dims or []]
    coords = []
    for c in cover:
        if c.name in names:
            k = names.index(c.name)
            coords.append(tmap[k][idx[k]])
        else:
            coords.append(np.zeros(t.n_cells, dtype=np.int64))
    return np.ravel_multi_index(tuple(coords), tuple(len(c) for c in cover))


def build_linked_problem(
    tables: list[CSPProblem],
) -> tuple[CSPProblem, list[np.ndarray], list[CodeList]]:
    """The joint problem over all cover cells used by some table, and each table's cell map.

    Raises InputError listing the cover cells whose value or status differ between tables.
    """
    cover, maps = cover_dims(tables)
    cover_ids = [_cover_cells(t, m, cover) for t, m in zip(tables, maps, strict=True)]
    used = np.unique(np.concatenate(cover_ids))
    local = [np.searchsorted(used, ids) for ids in cover_ids]
    n = used.size
    first = np.full(n, -1, dtype=np.int64)
    values = np.zeros(n)
    status = np.zeros(n, dtype=np.int16)
    lower = np.full(n, -np.inf)  # the attacker knows every table's bounds: intersect them
    upper = np.full(n, np.inf)
    cost = np.zeros(n)
    lpl = np.zeros(n)
    upl = np.zeros(n)
    freq = np.zeros(n)
    problems: list[str] = []
    decimals = max(t.decimals for t in tables)
    tol = 0.5 * 10.0 ** (-decimals)
    for k, (t, loc) in enumerate(zip(tables, local, strict=True)):
        seen = first[loc] >= 0
        bad_v = seen & (np.abs(values[loc] - t.values) > tol)
        bad_s = seen & (status[loc] != t.status)
        for j in np.flatnonzero(bad_v | bad_s)[:20]:
            problems.append(
                f"cell {j} of table {k + 1} (cover cell {int(used[loc[j]])}): value "
                f"{t.values[j]:g} status {int(t.status[j])} vs {values[loc[j]]:g} status "
                f"{int(status[loc[j]])} in table {int(first[loc[j]]) + 1}"
            )
        new = ~seen
        first[loc[new]] = k
        values[loc[new]] = t.values[new]
        status[loc[new]] = t.status[new]
        cost[loc[new]] = t.cost[new]
        if t.freq is not None:
            freq[loc[new]] = t.freq[new]
        np.maximum.at(lower, loc, t.lower)
        np.minimum.at(upper, loc, t.upper)
        np.maximum.at(lpl, loc, t.lpl)
        np.maximum.at(upl, loc, t.upl)
    if problems:
        raise InputError(
            "linked tables disagree on common cells (expected the same value and status): "
            + "; ".join(problems)
        )
    prim = is_primary(status)
    lower = np.where(prim, np.minimum(lower, values - lpl), lower)
    upper = np.where(prim, np.maximum(upper, values + upl), upper)
    rel = distinct_rows(sp.vstack(relations_over(tables, local, n)).tocsr())
    full = n == int(np.prod([len(c) for c in cover]))
    parts = [t.respondents for t in tables]
    respondents = (
        joined([r for r in parts if r is not None], local, n)
        if all(r is not None for r in parts)
        else None  # derived from the joint frequencies when the audit needs them
    )
    problem = CSPProblem(
        values=values,
        lower=lower,
        upper=upper,
        cost=cost,
        status=status,
        lpl=lpl,
        upl=upl,
        relations=rel,
        rhs=np.zeros(rel.shape[0]),
        spl=np.zeros(n),
        decimals=decimals,
        dims=list(cover) if full else None,
        freq=freq,
        respondents=respondents,
        floors=floors_over([t.floors for t in tables], local, n),
    )
    return problem, local, cover


def repair_insiders_jointly(
    joint: CSPProblem,
    status: np.ndarray,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    deadline: Deadline,
    method: str,
) -> tuple[np.ndarray, int]:
    """The joint pattern with the insider repair one table gets in run_method
    (make_publishable), on every table's relations and respondents at once (D-51); bounded
    as there: a cancel leaves CANCEL_GRACE, the user's limit its grace."""
    sup = is_suppressed(status)
    stop = audit_stop(deadline, cancel)
    try:
        fixed, _verdict, added = make_publishable(joint, sup, progress=progress, cancel=stop)
    except Cancelled:
        raise audit_stopped(
            stop, cancel, f"linked {method}", "its joint pattern", "the tables were left unchanged"
        ) from None
    if not added:
        return status, 0
    out = np.asarray(status).copy()
    new = fixed & ~sup
    out[new] = secondary_status_for(out[new])
    return out, added


def relations_over(tables: list[Any], local: list[np.ndarray], n: int) -> list[sp.csr_matrix]:
    """Each table's relations over the joint cells (`local[k]`: joint cell of each cell of
    table k); tables: anything with `relations` and `n_cells` (CSPProblem, Table)."""
    blocks = []
    for t, loc in zip(tables, local, strict=True):
        r = sp.csr_matrix(t.relations)
        remap = sp.csr_matrix(
            (np.ones(t.n_cells), (np.arange(t.n_cells), loc)), shape=(t.n_cells, n)
        )
        blocks.append((r @ remap).tocsr())
    return blocks


def distinct_rows(rel: sp.csr_matrix) -> sp.csr_matrix:
    """Drop relations that appear in several tables (same cells, same coefficients) and
    those left without a cell (two cells that became one joint cell)."""
    rel.eliminate_zeros()
    rel.sort_indices()
    seen: set[tuple[bytes, bytes]] = set()
    keep = []
    for r in range(rel.shape[0]):  # relations, not records: one pass over the rows
        a, b = rel.indptr[r], rel.indptr[r + 1]
        if a == b:
            continue
        key = (rel.indices[a:b].tobytes(), np.round(rel.data[a:b], 12).tobytes())
        if key not in seen:
            seen.add(key)
            keep.append(r)
    return rel[keep]


def _subtable_filter(tables: list[CSPProblem], cover: list[CodeList], narrow: bool = False):
    """Predicate: is a cover subtable a subtable of at least one input table
    (argusqt/docs/methods.md §6.3)?

    A table that does not span some cover variable sits at that variable's total in the
    cover: the cover subtable counts as one of its subtables when, for every variable the
    table spans, the parent and its children are those of the table's hierarchy, and every
    other variable's parent is its total (the table's subtable is then the face of the cover
    subtable at those totals). With `narrow`, an accepted subtable whose owning tables all
    leave some variables out is cut down to that face in place (see _narrow_to_face): only
    for a cover whose cells in no table are unpublished and free (cover_problem_for).
    """
    cover_names = [c.name for c in cover]
    families = []
    for k, t in enumerate(tables):
        fam: list[dict[int, set[int]] | None] = [None] * len(cover)
        for cl in t.dims or []:
            d = cover_names.index(cl.name)
            m = _node_map(cl, cover[d], k)
            fam[d] = {int(m[p]): {int(m[c]) for c in cl.children[p]} for p in cl.parents}
        families.append(fam)

    def belongs(sub, fam) -> bool:
        for d, p in enumerate(sub.parents):
            if fam[d] is None:
                if cover[d].parent[p] >= 0:  # unspanned variable: only its total
                    return False
                continue
            kids = fam[d].get(int(p))
            if kids is None or kids != set(int(c) for c in cover[d].children[p]):
                return False
        return True

    def accept(sub) -> bool:
        owners = [fam for fam in families if belongs(sub, fam)]
        if not owners:
            return False
        if narrow:
            unspanned = [d for d in range(len(cover)) if all(f[d] is None for f in owners)]
            if unspanned:
                _narrow_to_face(sub, unspanned)
        return True

    return accept


def _narrow_to_face(sub, unspanned: list[int]) -> None:
    """Cut a cover subtable down to its face at the total of the `unspanned` variables.

    Used when every table owning the subtable leaves those variables out: the other cells
    of the subtable are in no table (unpublished, entered as suppressed and free), so they
    constrain nothing and only make every attacker LP larger. The face is the owning
    tables' own subtable (cells in the same row-major order, margins kept).
    """
    if sub.cells.size == 0 or len(unspanned) >= len(sub.shape):
        return
    coords = np.unravel_index(np.arange(sub.cells.size), sub.shape)
    face = np.ones(sub.cells.size, dtype=bool)
    for d in unspanned:
        face &= coords[d] == 0
    sub.cells = sub.cells[face]
    sub.margin = sub.margin[face]
    sub.shape = tuple(n for d, n in enumerate(sub.shape) if d not in unspanned)


def cover_problem_for(
    tables: list[CSPProblem], cover: CSPProblem
) -> tuple[CSPProblem, list[np.ndarray]]:
    """The cover table (built from microdata) with the input tables' statuses imposed.

    `cover` must span exactly the cover variables (any order of the variables is accepted
    only in cover order, see cover_dims) with their cover code lists. Cover cells that are
    cells of an input table take that table's value check, status, protection levels,
    bounds, cost and frequency (the joint problem). Every other cover cell is published in
    no table: it is not a primary (whatever the rules said), enters as suppressed at no
    cost (status 11) and its bounds are wide, so the attacker of each cover subtable knows
    exactly what the published tables tell; the final audit is on the joint problem. Returns the problem and, per table, the cover cell of every table cell.
    Raises InputError when the cover does not fit the tables.
    """
    cdims, maps = cover_dims(tables)
    if not cover.dims or [c.name for c in cover.dims] != [c.name for c in cdims]:
        raise InputError(
            "the cover table must span the variables "
            + ", ".join(c.name for c in cdims)
            + " in that order"
            + ("" if not cover.dims else f" (got {', '.join(c.name for c in cover.dims)})")
        )
    for cc, cd in zip(cover.dims, cdims, strict=True):
        if list(cc.codes) != list(cd.codes) or not np.array_equal(cc.parent, cd.parent):
            raise InputError(
                f"the cover table's code list of {cc.name!r} differs from the most detailed "
                "code list of the linked tables"
            )
    joint, _local, _ = build_linked_problem(tables)
    ids = [_cover_cells(t, m, cdims) for t, m in zip(tables, maps, strict=True)]
    used = np.unique(np.concatenate(ids))
    tol = 0.5 * 10.0 ** (-joint.decimals)
    bad = np.flatnonzero(np.abs(np.asarray(cover.values)[used] - joint.values) > tol)
    if bad.size:
        j = int(bad[0])
        raise InputError(
            f"the cover table disagrees with the linked tables on {bad.size} cells (expected the "
            f"same values), e.g. cover cell {int(used[j])}: {cover.values[used[j]]:g} vs "
            f"{joint.values[j]:g}"
        )
    n = cover.n_cells
    status = np.asarray(cover.status).copy()
    hidden = np.ones(n, dtype=bool)
    hidden[used] = False
    # cells in no table are never published: unknown to the attacker, so they enter as
    # suppressed at no cost (status 11) with wide bounds; HiTaS's 10 % protection of
    # inherited secondaries is then met among themselves and forces no published cell
    status[hidden] = Status.SECONDARY
    status[used] = joint.status
    lpl = np.zeros(n)
    upl = np.zeros(n)
    lpl[used] = joint.lpl
    upl[used] = joint.upl
    lower = np.asarray(cover.lower, dtype=float).copy()
    upper = np.asarray(cover.upper, dtype=float).copy()
    span = float(np.max(joint.upper - joint.lower)) if joint.n_cells else 1.0
    lower[hidden] = np.asarray(cover.values, dtype=float)[hidden] - span
    upper[hidden] = np.asarray(cover.values, dtype=float)[hidden] + span
    lower[used] = joint.lower
    upper[used] = joint.upper
    cost = np.zeros(n)
    cost[used] = joint.cost
    freq = None
    if cover.freq is not None:
        freq = np.asarray(cover.freq, dtype=float).copy()
        freq[used] = joint.freq
    # the full-table audit and repair after the subtables use what is published: every
    # table's relations (the joint problem's) on cover cells; cells in no table drop out
    jr = sp.csr_matrix(joint.relations)
    rel = sp.csr_matrix((jr.data, used[jr.indices], jr.indptr), shape=(jr.shape[0], n))
    problem = CSPProblem(
        values=np.asarray(cover.values, dtype=float),
        lower=lower,
        upper=upper,
        cost=cost,
        status=status.astype(np.asarray(cover.status).dtype),
        lpl=lpl,
        upl=upl,
        relations=rel,
        rhs=np.zeros(rel.shape[0]),
        spl=np.zeros(n),
        decimals=joint.decimals,
        dims=list(cover.dims),
        freq=freq,
    )
    return problem, ids


def protect_linked(
    tables: list[CSPProblem],
    method: str = "OPT",
    params: SolverOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    cover: CSPProblem | None = None,
) -> list[ProtectionResult]:
    """Protect linked tables together; one result per input table, in the same order.

    How depends on the method's descriptor (`linked`): "joint" (OPT) solves the joint
    problem; "cover" (MOD, GH) works on the cover table and solves only the cover subtables that
    are subtables of an input table (argusqt/docs/methods.md §6.3). The cover is the joint
    problem when every cover cell is in some table; otherwise it must be given (`cover`,
    e.g. built from the microdata over all cover variables with the same rules and costs;
    see cover_problem_for). After the cover pass the pattern is audited on the joint
    problem (every table's relations at once) and repaired with the LP step of
    argusqt/docs/methods.md §4 if needed, then each table is audited on its own relations;
    a failing pattern is never returned.
    Each result's figures hold the joint cost and the number of joint cells.
    """

    params = options_dict(params)
    run_deadline = Deadline(seconds_param(params, "max_time", "time_limit"))
    desc = registry.get(method)
    registry.require_linked(desc)
    method = desc.name
    joint, local, cdims = build_linked_problem(tables)
    extra_log: list[str] = []
    if desc.linked == "joint":
        res = desc.solve(joint, params, progress, cancel)
        joint_status = np.asarray(res.status)
    else:  # "cover"
        params["subtable_filter"] = _subtable_filter(tables, cdims)
        if joint.dims is not None:
            res = desc.solve(joint, params, progress, cancel)
            joint_status = np.asarray(res.status)
        elif cover is not None:
            params["subtable_filter"] = _subtable_filter(tables, cdims, narrow=True)
            work, ids = cover_problem_for(tables, cover)
            used = np.unique(np.concatenate(ids))
            res = desc.solve(work, params, progress, cancel)
            cover_sup = is_suppressed(np.asarray(res.status)[: work.n_cells])
            # the published cells only: audit them against every table's relations at once
            sup = cover_sup[used] | joint.primary
            sup, rounds = repair(joint, sup, cancel, progress)
            joint_status = np.asarray(joint.status).copy()
            newly = sup & joint.candidate
            joint_status[newly] = secondary_status_for(joint_status[newly])
            hidden_sup = int(cover_sup.sum() - cover_sup[used].sum())
            extra_log.append(
                f"linked: cover table of {work.n_cells} cells, {hidden_sup} suppressed cover "
                f"cells are in no table; {rounds} repair rounds on the joint problem"
            )
        else:
            raise MethodError(
                f"{desc.label} on linked tables needs the cover table: some cover cells "
                "are in no input table (build it from the microdata) or use the optimal method"
            )
    joint_status, added = repair_insiders_jointly(
        joint, joint_status, progress, cancel, run_deadline, method
    )
    if added:
        extra_log.append(
            f"linked: {added} cells suppressed in addition so that no respondent alone in a "
            "suppressed cell recomputes another primary (joint problem)"
        )
    joint_cost = float(np.asarray(joint.cost, dtype=float)[is_secondary(joint_status)].sum())
    out = []
    for k, (t, loc) in enumerate(zip(tables, local, strict=True), start=1):
        st = np.asarray(t.status).copy()
        js = joint_status[loc]
        newly = is_secondary(js) & t.candidate
        st[newly] = js[newly]
        verdict = audit(t, is_suppressed(st))
        if not verdict.ok:
            raise AuditError(
                f"linked {method}: table {k} fails its own audit: {verdict.summary()} "
                "(no pattern is reported)"
            )
        cost = float(np.asarray(t.cost)[is_secondary(st)].sum())
        out.append(
            ProtectionResult(
                method=res.method,
                status=st,
                cost=cost,
                lower_bound=None,
                gap=None,
                optimal=False,
                cancelled=res.cancelled,
                timed_out=res.timed_out,
                elapsed=res.elapsed,
                audit=verdict,
                log=[
                    *res.log,
                    *extra_log,
                    f"linked: {joint.n_cells} joint cells, joint cost {grouped(joint_cost)}",
                ],
                figures={**res.figures, "joint_cost": joint_cost, "joint_cells": joint.n_cells},
            )
        )
    return out
