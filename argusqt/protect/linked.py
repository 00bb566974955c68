"""Linked tables (methods.md §1.5, §6.3): protect tables sharing spanning variables together.

Variables are matched by name; per variable the cover code list is the most detailed one
of the tables, and every table's hierarchy must sit inside it. Each table cell is mapped to
a cover cell (variables a table does not span are at their total). The linked problem
holds every cover cell used by some table with the union of all tables' relations, so an
attacker combining all published tables is modelled; shared cells must agree in value
and status. The pattern found is copied back to every table.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from argusqt.errors import InputError, MethodError
from argusqt.model.codelist import CodeList
from argusqt.progress import CancelToken, ProgressCallback, no_progress
from argusqt.protect.problem import CSPProblem
from argusqt.protect.result import ProtectionResult
from argusqt.rules.status import is_secondary

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
        for cl in t.dims:
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
    shape = tuple(len(d) for d in t.dims)
    idx = np.unravel_index(np.arange(t.n_cells), shape)
    names = [d.name for d in t.dims]
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
    prim = (status >= 3) & (status <= 9)
    lower = np.where(prim, np.minimum(lower, values - lpl), lower)
    upper = np.where(prim, np.maximum(upper, values + upl), upper)
    blocks = []
    for t, loc in zip(tables, local, strict=True):
        r = sp.csr_matrix(t.relations)
        remap = sp.csr_matrix(
            (np.ones(t.n_cells), (np.arange(t.n_cells), loc)), shape=(t.n_cells, n)
        )
        blocks.append((r @ remap).tocsr())
    rel = sp.vstack(blocks).tocsr()
    rel = _unique_rows(rel)
    full = n == int(np.prod([len(c) for c in cover]))
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
    )
    return problem, local, cover


def _unique_rows(rel: sp.csr_matrix) -> sp.csr_matrix:
    """Drop relations that appear in several tables (same cells, same coefficients)."""
    rel.sort_indices()
    keys = {}
    keep = []
    for r in range(rel.shape[0]):
        a, b = rel.indptr[r], rel.indptr[r + 1]
        key = (rel.indices[a:b].tobytes(), np.round(rel.data[a:b], 12).tobytes())
        if key not in keys:
            keys[key] = r
            keep.append(r)
    return rel[keep]


def _subtable_filter(tables: list[CSPProblem], cover: list[CodeList]):
    """Predicate: is a cover subtable a subtable of at least one input table (§6.3)?"""
    families = []
    for t in tables:
        if [d.name for d in t.dims] != [c.name for c in cover]:
            continue
        fam = []
        for cl, cc in zip(t.dims, cover, strict=True):
            m = _node_map(cl, cc, 0)
            fam.append({int(m[p]): {int(m[c]) for c in cl.children[p]} for p in cl.parents})
        families.append(fam)

    def accept(sub) -> bool:
        for fam in families:
            ok = True
            for d, p in enumerate(sub.parents):
                kids = fam[d].get(int(p))
                if kids is None or kids != set(int(c) for c in cover[d].children[p]):
                    ok = False
                    break
            if ok:
                return True
        return False

    return accept


def protect_linked(
    tables: list[CSPProblem],
    method: str = "OPT",
    params: dict | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> list[ProtectionResult]:
    """Protect linked tables together; one result per input table, in the same order.

    method "OPT" works on the joint problem; "MOD" needs the cover table itself (every cover
    cell in some table) and solves only the cover subtables that are subtables of an input
    table. Each result's figures hold the joint cost and the number of joint cells.
    """
    from argusqt.protect.modular import solve_modular
    from argusqt.protect.optimal import solve_optimal

    params = dict(params or {})
    joint, local, cover = build_linked_problem(tables)
    method = method.upper()
    if method == "OPT":
        res = solve_optimal(joint, params, progress, cancel)
    elif method == "MOD":
        if joint.dims is None:
            raise MethodError(
                "the modular method on linked tables needs the cover table: some cover cells "
                "are in no input table; use the optimal method"
            )
        params["subtable_filter"] = _subtable_filter(tables, cover)
        res = solve_modular(joint, params, progress, cancel)
    else:
        raise MethodError(f"linked tables: method {method!r} not supported (expected OPT or MOD)")
    out = []
    for t, loc in zip(tables, local, strict=True):
        st = np.asarray(t.status).copy()
        js = res.status[loc]
        newly = is_secondary(js) & t.candidate
        st[newly] = js[newly]
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
                log=[*res.log, f"linked: {joint.n_cells} joint cells, joint cost {res.cost:g}"],
                figures={**res.figures, "joint_cost": res.cost, "joint_cells": joint.n_cells},
            )
        )
    return out
