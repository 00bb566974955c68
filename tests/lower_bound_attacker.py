"""An independent insider attacker that knows its own contribution in every cell it is in
(docs/design.md, D-91): nothing from argusqt.protection, only the table's numbers and scipy.

A respondent (a record; a holding when the table uses holdings) knows, for non-negative
data, that every suppressed cell it contributes to is at least its contribution, and the
cells it alone makes up exactly. It attacks every primary it is not the largest contributor
of; its bound on the attacked primary itself is not used (the rule's level is built for
it). Records of one fine cell are in the same cells: the fine cell's K largest stand for
them (a smaller record knows less). Weighted tables are not judged here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from argusqt.model.status import Status, is_primary, is_suppressed
from argusqt.model.tabulate import expand_to_cells


@dataclass(frozen=True)
class Found:
    """A primary an insider pins inside its protection interval."""

    cell: int
    side: str  # "up" or "down"
    attacker: str  # "record f<fine>#k" or "holding <id>"
    reach: float  # how far the attacker lets the cell move on that side
    level: float
    exact_only: bool  # also found when the attacker knows only the cells it alone makes up


def _bounds(table, status: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """τ-Argus's default a-priori bounds (argusqt/docs/methods.md §1.3), widened for primaries."""
    v = np.asarray(table.value, dtype=float)
    ne = status != Status.EMPTY
    vmin, vmax = (float(v[ne].min()), float(v[ne].max())) if ne.any() else (0.0, 0.0)
    lo = np.full(v.shape, min(0.0, 1.5 * vmin))
    hi = np.full(v.shape, 1.5 * vmax if vmax > 0 else max(1.0, abs(lo[0])))
    prim = is_primary(status)
    lo = np.where(prim, np.minimum(lo, v - np.asarray(table.lpl, float)), lo)
    hi = np.where(prim, np.maximum(hi, v + np.asarray(table.upl, float)), hi)
    return lo, hi


def _attackers(table) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, cells, contribution in each) of every respondent, from the fine cells."""
    fine, maps = table.source
    nd = len(table.dims)
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    if table.spec.use_holdings and fine.hold_fine is not None:
        f = fine.hold_fine
        nodes = [np.asarray(maps[d])[fine.keys[f, d]] for d in range(nd)]
        cells, items = expand_to_cells(nodes, table.dims)
        hold = fine.hold_id[items]
        key = hold.astype(np.int64) * table.n_cells + cells
        uniq, inv = np.unique(key, return_inverse=True)
        share = np.bincount(inv, weights=np.asarray(fine.hold_sum, float)[items])
        hid, hc = uniq // table.n_cells, uniq % table.n_cells
        for h in np.unique(hid):
            m = hid == h
            out.append((f"holding {int(h)}", hc[m], share[m]))
        return out
    nodes = [np.asarray(maps[d])[fine.keys[:, d]] for d in range(nd)]
    ok = np.logical_and.reduce([n >= 0 for n in nodes])
    idx = np.flatnonzero(ok)
    cells, items = expand_to_cells([n[idx] for n in nodes], table.dims)
    order = np.argsort(items, kind="stable")
    cells, items = cells[order], items[order]
    starts = np.searchsorted(items, np.arange(idx.size + 1))
    top = np.asarray(fine.top, float)
    for j, f in enumerate(idx.tolist()):
        cs = cells[starts[j] : starts[j + 1]]
        for k in range(min(int(fine.freq[f]), top.shape[1])):
            out.append((f"record f{f}#{k}", cs, np.full(cs.size, top[f, k])))
    return out


def attack(table, status: np.ndarray | None = None) -> list[Found]:
    """Every (primary, side) some respondent pins inside its protection interval."""
    status = np.asarray(table.status if status is None else status)
    if table.spec.use_weights:
        raise ValueError("weighted tables are not judged by this attacker")
    v = np.asarray(table.value, dtype=float)
    n = v.size
    sup = is_suppressed(status)
    prim = is_primary(status) & sup
    lo, hi = _bounds(table, status)
    il, iu = getattr(table, "interval_lower", None), getattr(table, "interval_upper", None)
    if il is not None and iu is not None:  # published intervals (IP): the printed bounds
        il, iu = np.asarray(il, dtype=float), np.asarray(iu, dtype=float)
        sup = iu > il
        prim = is_primary(status) & sup
        lo, hi = np.maximum(lo, np.minimum(il, v)), np.minimum(hi, np.maximum(iu, v))
    lo = np.where(sup, lo, v)
    hi = np.where(sup, hi, v)
    rel = sp.csr_matrix(table.relations)
    keep = np.flatnonzero(np.abs(rel) @ sup.astype(float) > 0)
    A = rel[keep]
    b = A @ v
    tol = 0.5 * 10.0 ** (-int(table.decimals)) + 1e-7 * max(1.0, float(np.abs(v).max()))
    lpl = np.asarray(table.lpl, float)
    upl = np.asarray(table.upl, float)
    use_h = bool(table.spec.use_holdings) and table.hfreq is not None
    freq = np.asarray(table.hfreq if use_h else table.freq, float)
    first = np.asarray(table.htop if use_h else table.top, float)
    first = first[:, 0] if first.ndim == 2 and first.shape[1] else np.zeros(n)

    def solve(lb: np.ndarray, ub: np.ndarray, p: int, sense: float) -> tuple[float, np.ndarray]:
        c = np.zeros(n)
        c[p] = sense
        r = linprog(c, A_eq=A, b_eq=b, bounds=np.c_[lb, ub], method="highs")
        assert r.status == 0, r.message
        return float(r.x[p]), r.x

    targets = [(int(p), s) for p in np.flatnonzero(prim) for s in ("up", "down")
               if (upl[p] if s == "up" else lpl[p]) > 0]  # fmt: skip
    witnesses: dict[tuple[int, str], list[np.ndarray]] = {t: [] for t in targets}
    for p, s in targets:  # the outsider's points (an outsider disclosure is not ours)
        reach, x = solve(lo, hi, p, -1.0 if s == "up" else 1.0)
        witnesses[(p, s)].append(x)
    found: list[Found] = []
    for name, cells, share in _attackers(table):
        on = sup[cells]
        if not on.any():
            continue
        cs, xs = cells[on], share[on]
        alone = np.isclose(freq[cs], 1.0)
        largest = (first[cs] <= 0) | (xs >= first[cs] * (1 - 1e-9) - 1e-9)
        for p, s in targets:
            if p in cs[largest].tolist():
                continue  # its own share: what the rule protects is its own
            other = cs != p
            if not other.any():
                continue
            lb_r = lo.copy()
            ub_r = hi.copy()
            lb_r[cs[other]] = np.maximum(lb_r[cs[other]], np.minimum(xs[other], v[cs[other]]))
            ex = other & alone
            lb_r[cs[ex]] = v[cs[ex]]
            ub_r[cs[ex]] = v[cs[ex]]
            level = upl[p] if s == "up" else lpl[p]
            need = v[p] + level if s == "up" else v[p] - level
            if any(
                np.all(w >= lb_r - 1e-9) and np.all(w <= ub_r + 1e-9) for w in witnesses[(p, s)]
            ):
                continue
            reach, x = solve(lb_r, ub_r, p, -1.0 if s == "up" else 1.0)
            if (s == "up" and reach >= need - tol) or (s == "down" and reach <= need + tol):
                witnesses[(p, s)].append(x)
                continue
            lb_e, ub_e = lo.copy(), hi.copy()
            lb_e[cs[ex]] = ub_e[cs[ex]] = v[cs[ex]]
            r_e, _ = solve(lb_e, ub_e, p, -1.0 if s == "up" else 1.0)
            exact = (s == "up" and r_e < need - tol) or (s == "down" and r_e > need + tol)
            found.append(Found(p, s, name, abs(reach - v[p]), level, bool(exact)))
    return found
