"""Controlled rounding, CTA (and optionally interval protection) on generated 1k/10k/100k-cell tables.

Run: python benchmarks/bench_rounding_cta.py [--sizes 1000 10000 100000] [--time 120] [--ip]
     [--decimals 2] [--skip-rnd]
Tables are 2-D: a flat first variable × a two-level hierarchy, Poisson counts (rounding) or
log-normal magnitudes with `--decimals` decimals and ~3 % primaries, PL 15 % (not rounded),
weights = values (CTA / IP). "printed" says whether the CTA table adds up exactly when
printed with those decimals (every relation checked in integer units of the last decimal).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from argusqt.model.codelist import CodeList
from argusqt.model.table import build_relations
from argusqt.protection.adjust.cta import solve_cta, verify_adjustment
from argusqt.protection.adjust.interval import solve_interval
from argusqt.protection.adjust.rounding import solve_rounding
from argusqt.protection.core.problem import CSPProblem


def dims_for(n_cells: int) -> list[CodeList]:
    """Flat × hierarchy (groups of 10 leaves) with about n_cells cells."""
    side = max(3, int(math.sqrt(n_cells)))
    n_groups = max(1, side // 11)
    entries = []
    for g in range(n_groups):
        entries.append((1, f"G{g:03d}"))
        entries += [(2, f"G{g:03d}L{k}") for k in range(10)]
    flat = CodeList.flat(
        "A", [f"{i:04d}" for i in range(max(2, n_cells // (len(entries) + 1) - 1))]
    )
    return [flat, CodeList.from_tree("B", entries)]


def leaf_totals(dims: list[CodeList], inner: np.ndarray) -> np.ndarray:
    """All cells from the leaf cells, one dimension at a time (bottom-up sums)."""
    full = inner
    for axis, dim in enumerate(dims):
        leaves = np.flatnonzero(dim.is_leaf)
        shape = list(full.shape)
        shape[axis] = len(dim)
        out = np.zeros(shape)
        idx = [slice(None)] * len(shape)
        idx[axis] = leaves
        out[tuple(idx)] = full
        for node in reversed(range(len(dim))):  # children after parents in pre-order
            par = int(dim.parent[node])
            if par >= 0:
                src = [slice(None)] * len(shape)
                dst = [slice(None)] * len(shape)
                src[axis] = node
                dst[axis] = par
                out[tuple(dst)] += out[tuple(src)]
        full = out
    return full.ravel()


def make_problem(n_cells: int, kind: str, seed: int = 0, decimals: int = 0) -> CSPProblem:
    rng = np.random.default_rng(seed)
    dims = dims_for(n_cells)
    leaf_shape = tuple(int(d.is_leaf.sum()) for d in dims)
    if kind == "freq":
        inner = rng.poisson(4.0, leaf_shape).astype(float)
    else:
        inner = np.round(rng.lognormal(4.0, 1.0, leaf_shape), decimals)
    values = np.round(leaf_totals(dims, inner), decimals)
    n = values.size
    rel = build_relations(dims)
    status = np.where(values > 0, 1, 14).astype(np.int16)
    lpl = np.zeros(n)
    upl = np.zeros(n)
    if kind == "mag":
        leaf = np.outer(dims[0].is_leaf, dims[1].is_leaf).ravel() & (values > 0)
        cand = np.flatnonzero(leaf)
        prim = rng.choice(cand, max(1, int(0.03 * cand.size)), replace=False)
        status[prim] = 3
        lpl[prim] = upl[prim] = 0.15 * values[prim] if decimals else np.ceil(0.15 * values[prim])
    return CSPProblem(
        values=values,
        lower=np.zeros(n),
        upper=np.full(n, 1.5 * values.max()),
        cost=values.copy() + 1.0,
        status=status,
        lpl=lpl,
        upl=upl,
        relations=rel,
        rhs=np.zeros(rel.shape[0]),
        dims=dims,
        decimals=decimals if kind == "mag" else 0,
    )


def printed_additive(p: CSPProblem, x: np.ndarray) -> bool:
    """Every relation holds exactly for x printed with the problem's decimals."""
    units = np.rint(np.asarray(x) * 10.0**p.decimals).astype(np.int64)
    return not np.any(p.relations.astype(np.int64) @ units)


def rounding_row(size: int, base: int, max_time: float) -> tuple:
    p = make_problem(size, "freq")
    t = time.perf_counter()
    r = solve_rounding(p, {"base": base, "max_time": max_time})
    dt = time.perf_counter() - t
    ok = np.abs(p.relations @ r.published).max() < 1e-6
    note = (
        "RAPID fallback" if r.figures["rapid_fallback"] else ("additive" if ok else "NOT additive")
    )
    rapid = r.figures["rapid_distance"]
    return ("RND", p.n_cells, dt, r.cost, r.gap, r.optimal, f"{note}; RAPID {rapid:g}")


def cta_rows(q: CSPProblem, max_time: float, solve=solve_cta) -> list[tuple]:
    """CTA and CTA with fixed directions on q (`solve` lets a script compare another version)."""
    rows = []
    for label, prm in (("CTA", {}), ("CTA-fixdir", {"fixed_directions": True})):
        t = time.perf_counter()
        try:
            c = solve(q, prm | {"max_time": max_time})
            dt = time.perf_counter() - t
            verify_adjustment(q, c.published)
            printed = (
                "printed additive" if printed_additive(q, c.published) else "NOT printed additive"
            )
            note = f"{int(q.primary.sum())} primaries, {q.decimals} dec; {printed}"
            rows.append((label, q.n_cells, dt, c.cost, c.gap, c.optimal, note))
        except Exception as exc:  # report and go on with the next size
            rows.append(
                (label, q.n_cells, time.perf_counter() - t, None, None, False, str(exc)[:60])
            )
    return rows


def fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--time", type=float, default=120.0, help="time limit per run (s)")
    ap.add_argument("--base", type=int, default=5)
    ap.add_argument("--ip", action="store_true", help="also run interval protection")
    ap.add_argument("--decimals", type=int, default=0, help="decimals of the CTA/IP table")
    ap.add_argument("--skip-rnd", action="store_true", help="no controlled rounding runs")
    ap.add_argument(
        "--ip-compact",
        action="store_true",
        help="also solve the textbook compact IP LP (one attacker copy per target; small sizes only)",
    )
    args = ap.parse_args()
    rows = []
    for size in args.sizes:
        if not args.skip_rnd:
            rows.append(rounding_row(size, args.base, args.time))
        q = make_problem(size, "mag", seed=1, decimals=args.decimals)
        rows += cta_rows(q, args.time)
        if args.ip:
            t = time.perf_counter()
            ip = solve_interval(q, {"max_time": args.time})
            dt = time.perf_counter() - t
            rows.append(
                (
                    "IP",
                    q.n_cells,
                    dt,
                    ip.cost,
                    ip.gap,
                    ip.optimal,
                    f"{ip.figures.get('rounds')} rounds, {ip.figures.get('cuts')} cuts",
                )
            )
        if args.ip_compact:
            t = time.perf_counter()
            ipc = solve_interval(q, {"algorithm": "compact"})
            dt = time.perf_counter() - t
            cols = ipc.figures.get("compact_columns")
            rows.append(("IP-compact", q.n_cells, dt, ipc.cost, 0.0, True, f"{cols} columns"))
        print(f"done {size}", flush=True)
    print(f"{'method':<11}{'cells':>8}{'seconds':>10}{'objective':>14}{'gap':>10}  optimal  note")
    for m, n, dt, obj, gap, opt, note in rows:
        print(f"{m:<11}{n:>8}{dt:>10.2f}{fmt(obj):>14}{fmt(gap):>10}  {str(opt):<8} {note}")


if __name__ == "__main__":
    main()
