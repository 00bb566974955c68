"""Controlled tabular adjustment (methods.md §10): the ℓ1 MILP in SCIP, or an LP with fixed directions.

The adjusted table is additive, stays within the attacker bounds, and moves every sensitive
cell out of its protection interval [a − LPL, a + UPL] at minimal weighted deviation. The
solution is checked before it is returned (a binary a hair off 0/1 can leak a deviation in
the wrong direction, methods.md §10).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyscipopt import Model, quicksum

from argusqt.errors import AuditError, Cancelled, MethodError
from argusqt.progress import CancelToken, ProgressCallback, Stopwatch, no_progress
from argusqt.protect.problem import CSPProblem
from argusqt.protect.result import ProtectionResult
from argusqt.protect.rounding import ScipMonitor, attach_monitor
from argusqt.rules.status import secondary_status_for

LOWER, UPPER = 0, 1


@dataclass
class _Instance:
    """Deviation bounds and sensitive cells of a CTA problem (all arrays length n)."""

    a: np.ndarray
    w: np.ndarray
    up_cap: np.ndarray  # u − a (0 for fixed cells)
    down_cap: np.ndarray  # a − l
    sens: np.ndarray  # indices of the sensitive cells
    lpl: np.ndarray  # per sensitive cell
    upl: np.ndarray
    rhs: np.ndarray  # rhs − M a
    scale: float


@dataclass
class _Solve:
    status: str
    x: np.ndarray | None = None
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    interrupted: bool = False
    y_relaxed: np.ndarray | None = None


def _instance(problem: CSPProblem) -> _Instance:
    """Deviation caps from the bounds; protected/empty cells and l = u cells cannot move."""
    a = np.asarray(problem.values, dtype=float)
    lo = np.asarray(problem.lower, dtype=float)
    hi = np.asarray(problem.upper, dtype=float)
    status = np.asarray(problem.status)
    sens = np.flatnonzero(problem.primary)
    lpl = np.asarray(problem.lpl, dtype=float)[sens]
    upl = np.asarray(problem.upl, dtype=float)[sens]
    if np.any(lpl < 0) or np.any(upl < 0):
        raise MethodError("CTA does not support negative protection levels (methods.md §10)")
    scale = float(max(1.0, np.abs(a).max(initial=0.0)))
    # an infinite bound is replaced by a finite one that no sensible adjustment reaches
    cap = float(np.abs(a).sum() + lpl.sum() + upl.sum() + scale)
    up_cap = np.where(np.isfinite(hi), hi - a, cap)
    down_cap = np.where(np.isfinite(lo), a - lo, cap)
    if np.any(up_cap < -1e-9 * scale) or np.any(down_cap < -1e-9 * scale):
        bad = int(np.flatnonzero((up_cap < 0) | (down_cap < 0))[0])
        raise MethodError(
            f"cell {bad}: value {a[bad]:g} lies outside its bounds [{lo[bad]:g}, {hi[bad]:g}]"
        )
    fixed = (status == 10) | (status == 14) | (hi - lo <= 0)
    fixed[sens] = False
    up_cap = np.where(fixed, 0.0, np.maximum(up_cap, 0.0))
    down_cap = np.where(fixed, 0.0, np.maximum(down_cap, 0.0))
    rel = problem.relations.tocsr()
    rhs = np.asarray(problem.rhs, dtype=float) - rel @ a
    return _Instance(
        a, np.asarray(problem.cost, dtype=float), up_cap, down_cap, sens, lpl, upl, rhs, scale
    )


def _possible(inst: _Instance) -> tuple[np.ndarray, np.ndarray]:
    """Per sensitive cell: can it go up by UPL / down by LPL within its bounds?"""
    tol = 1e-9 * inst.scale
    can_up = inst.upl <= inst.up_cap[inst.sens] + tol
    can_down = inst.lpl <= inst.down_cap[inst.sens] + tol
    return can_up, can_down


def _solve(
    problem: CSPProblem,
    inst: _Instance,
    fixed_y: dict[int, int],
    *,
    relax: bool,
    time_limit: float,
    gap_limit: float,
    monitor: ScipMonitor | None,
    start: tuple[np.ndarray, dict[int, int]] | None = None,
) -> _Solve:
    """Build and solve the MILP (or its relaxation / fixed-direction LP) of methods.md §10.

    `start` = (adjusted values, directions) of a known feasible table, given to SCIP.
    """
    n = inst.a.size
    model = Model()
    model.hideOutput()
    model.setParam("limits/time", max(1.0, float(time_limit)))
    model.setParam("limits/gap", float(gap_limit))
    model.setParam("numerics/feastol", 1e-7)
    if monitor is not None:
        attach_monitor(model, monitor, "cta_monitor")
    zp = list(model.addMatrixVar((n,), vtype="C", lb=0.0, ub=inst.up_cap, obj=inst.w))
    zm = list(model.addMatrixVar((n,), vtype="C", lb=0.0, ub=inst.down_cap, obj=inst.w))
    ys = []
    for k, cell in enumerate(inst.sens):  # one binary and four constraints per sensitive cell
        cell = int(cell)
        lb, ub = 0.0, 1.0
        if k in fixed_y:
            lb = ub = float(fixed_y[k])
        y = model.addVar(vtype="C" if relax else "B", lb=lb, ub=ub, name=f"y{cell}")
        ys.append(y)
        model.addCons(zp[cell] >= inst.upl[k] * y)
        model.addCons(zp[cell] <= inst.up_cap[cell] * y)
        model.addCons(zm[cell] >= inst.lpl[k] * (1 - y))
        model.addCons(zm[cell] <= inst.down_cap[cell] * (1 - y))
    rel = problem.relations.tocsr()
    movable = (inst.up_cap > 0) | (inst.down_cap > 0)
    for i in range(rel.shape[0]):  # one equation per relation
        s, e = rel.indptr[i], rel.indptr[i + 1]
        cols, coefs = rel.indices[s:e], rel.data[s:e]
        keep = movable[cols]
        if not keep.any():
            if abs(inst.rhs[i]) > 1e-9 * inst.scale:
                return _Solve("infeasible")
            continue
        expr = quicksum(
            float(c) * (zp[j] - zm[j]) for j, c in zip(cols[keep], coefs[keep], strict=True)
        )
        model.addCons(expr == float(inst.rhs[i]))
    if start is not None:
        _add_start(model, inst, zp, zm, ys, start)
    model.optimize()
    out = _Solve(model.getStatus())
    out.interrupted = monitor is not None and monitor.interrupted
    if model.getNSols() > 0:
        sol = model.getBestSol()
        dev = np.array([sol[v] for v in zp]) - np.array([sol[v] for v in zm])
        out.x = inst.a + dev
        out.objective = float(model.getSolObjVal(sol))
        out.bound = float(model.getDualbound())
        out.gap = float(model.getGap())
        if relax:
            out.y_relaxed = np.array([sol[y] for y in ys])
    return out


def _add_start(model, inst: _Instance, zp, zm, ys, start) -> None:
    """Hand a feasible adjusted table to SCIP as its first incumbent (loops over changed cells)."""
    x, dirs = start
    dev = x - inst.a
    sol = model.createSol()
    for j in np.flatnonzero(dev > 0):
        model.setSolVal(sol, zp[int(j)], float(min(dev[j], inst.up_cap[j])))
    for j in np.flatnonzero(dev < 0):
        model.setSolVal(sol, zm[int(j)], float(min(-dev[j], inst.down_cap[j])))
    for k, y in enumerate(ys):
        model.setSolVal(sol, y, float(dirs[k]))
    model.addSol(sol, free=True)


def _directions_from_params(inst: _Instance, given) -> dict[int, int]:
    """params['directions']: {cell: 'upper'|'lower'|1|0} or a 0/1 sequence over sensitive cells."""
    if given is None:
        return {}
    pos = {int(c): k for k, c in enumerate(inst.sens)}

    def code(v) -> int:
        if isinstance(v, str):
            v = v.strip().lower()
            if v in ("upper", "up", "+"):
                return UPPER
            if v in ("lower", "down", "-"):
                return LOWER
            raise MethodError(f"expected direction 'upper' or 'lower', got {v!r}")
        return UPPER if int(v) > 0 else LOWER

    if isinstance(given, dict):
        out = {}
        for cell, v in given.items():
            if int(cell) not in pos:
                raise MethodError(f"direction given for cell {cell}, which is not a sensitive cell")
            out[pos[int(cell)]] = code(v)
        return out
    seq = list(given)
    if len(seq) != inst.sens.size:
        raise MethodError(
            f"expected {inst.sens.size} directions (one per sensitive cell), got {len(seq)}"
        )
    return {k: code(v) for k, v in enumerate(seq)}


def verify_adjustment(problem: CSPProblem, x: np.ndarray, tol: float | None = None) -> None:
    """Raise AuditError unless x is additive, within bounds and every sensitive cell is moved out."""
    a = np.asarray(problem.values, dtype=float)
    scale = float(max(1.0, np.abs(a).max(initial=0.0)))
    tol = 1e-6 * scale if tol is None else tol
    resid = problem.relations @ x - np.asarray(problem.rhs, dtype=float)
    if resid.size and np.abs(resid).max() > tol:
        r = int(np.abs(resid).argmax())
        raise AuditError(f"adjusted table is not additive: relation {r} is off by {resid[r]:g}")
    lo = np.asarray(problem.lower, dtype=float)
    hi = np.asarray(problem.upper, dtype=float)
    out = (x < lo - tol) | (x > hi + tol)
    if out.any():
        c = int(np.flatnonzero(out)[0])
        raise AuditError(
            f"adjusted cell {c} = {x[c]:g} lies outside its bounds [{lo[c]:g}, {hi[c]:g}]"
        )
    sens = problem.primary
    inside = sens & (x > a - problem.lpl + tol) & (x < a + problem.upl - tol)
    if inside.any():
        c = int(np.flatnonzero(inside)[0])
        raise AuditError(
            f"sensitive cell {c} adjusted to {x[c]:g}, inside its protection interval "
            f"[{a[c] - problem.lpl[c]:g}, {a[c] + problem.upl[c]:g}]"
        )


def solve_cta(
    problem: CSPProblem,
    params: dict | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Controlled tabular adjustment; weights = problem.cost, bounds = problem.lower/upper.

    params: directions (fix some or all: {cell: 'upper'|'lower'} or a 0/1 list over the
    sensitive cells in cell order), fixed_directions (True: LP with heuristic directions from
    the LP relaxation, flips repaired one cell at a time), max_time seconds (600), gap
    (relative, 0 = optimal), prepsens (default True: a cell with LPL = 0 < UPL must go up,
    UPL = 0 < LPL down, else it could keep its value). Returns published = adjusted values,
    status 1→11, 2→12 for changed safe cells, cost = Σ w |x − a|, figures['directions'] =
    {cell: ±1}.
    """
    params = dict(params or {})
    watch = Stopwatch()
    inst = _instance(problem)
    max_time = float(params.get("max_time") or 60.0 * float(params.get("max_minutes", 10)))
    gap_limit = float(params.get("gap", 0.0))
    log = [f"CTA: {inst.sens.size} sensitive cells, {problem.n_cells} cells"]
    fixed = _directions_from_params(inst, params.get("directions"))
    can_up, can_down = _possible(inst)
    prepsens = bool(params.get("prepsens", True))
    for k in range(inst.sens.size):  # directions the bounds leave no choice about
        if not can_up[k] and not can_down[k]:
            raise MethodError(
                f"sensitive cell {int(inst.sens[k])} can move neither up by its UPL nor down by "
                "its LPL within its bounds; widen the bounds or lower the protection levels"
            )
        if k in fixed:
            if (fixed[k] == UPPER and not can_up[k]) or (fixed[k] == LOWER and not can_down[k]):
                raise MethodError(
                    f"the given direction of cell {int(inst.sens[k])} leaves its bounds"
                )
        elif not can_up[k] or not can_down[k]:
            fixed[k] = UPPER if can_up[k] else LOWER
        elif prepsens and inst.lpl[k] == 0 and inst.upl[k] > 0:
            fixed[k] = UPPER  # a zero lower level would let the cell stay put ("prepsens")
        elif prepsens and inst.upl[k] == 0 and inst.lpl[k] > 0:
            fixed[k] = LOWER

    def monitor(label: str) -> ScipMonitor:
        return ScipMonitor(progress, cancel, watch, label)

    if cancel is not None and cancel.cancelled:
        raise Cancelled("CTA cancelled before a solution was found")
    heuristic = bool(params.get("fixed_directions", False)) and len(fixed) < inst.sens.size
    if heuristic:
        sol = _fixed_direction_heuristic(problem, inst, fixed, max_time, watch, monitor, log)
        if sol is None:
            log.append("fixed-direction heuristic found no feasible directions: solving the MILP")
            heuristic = False
    if not heuristic:
        start = None
        warm = params.get("warm_start")
        if (problem.n_cells >= 5000 if warm is None else bool(warm)) and len(
            fixed
        ) < inst.sens.size:
            first = _fixed_direction_heuristic(
                problem, inst, fixed, 0.5 * max_time, watch, monitor, log, max_flips=10
            )
            if first is not None and first.x is not None:
                dev = first.x - inst.a
                dirs = {k: int(dev[c] > 0) for k, c in enumerate(inst.sens)}
                start = (first.x, dirs)
                log.append(f"MILP warm start from the fixed-direction table ({first.objective:g})")
        sol = _solve(
            problem,
            inst,
            fixed,
            relax=False,
            time_limit=max_time - watch.elapsed,
            gap_limit=gap_limit,
            monitor=monitor("CTA (MILP)"),
            start=start,
        )
    if sol.x is None:
        if sol.interrupted or (cancel is not None and cancel.cancelled):
            raise Cancelled("CTA cancelled before a feasible adjusted table was found")
        if sol.status == "infeasible":
            what = "with the given directions " if params.get("directions") is not None else ""
            raise MethodError(
                f"no adjusted table exists {what}within the cell bounds: every sensitive cell "
                "must move out of its protection interval while the table stays additive"
            )
        raise MethodError(f"CTA found no adjusted table within {max_time:g} s ({sol.status})")
    dev = sol.x - inst.a
    x = inst.a + np.where(np.abs(dev) > 1e-9 * inst.scale, dev, 0.0)  # no solver dust
    verify_adjustment(problem, x)
    user_fixed = params.get("directions") is not None
    res = _result(problem, inst, sol, x, heuristic or user_fixed, log, watch, cancel)
    res.figures["fixed_directions"] = heuristic
    return res


def _fixed_direction_heuristic(
    problem, inst, fixed, max_time, watch, monitor, log, max_flips: int | None = None
) -> _Solve | None:
    """Directions from the LP relaxation (y ≥ ½ → up), then the LP; flip cells while infeasible.

    `max_time` is a deadline on the stopwatch; `monitor` makes a fresh SCIP monitor per model.
    """
    relaxed = _solve(
        problem,
        inst,
        fixed,
        relax=True,
        time_limit=max_time - watch.elapsed,
        gap_limit=0.0,
        monitor=monitor("CTA (LP relaxation)"),
    )
    if relaxed.y_relaxed is None:
        return None
    y = relaxed.y_relaxed
    dirs = {k: (fixed[k] if k in fixed else int(y[k] >= 0.5)) for k in range(inst.sens.size)}

    def lp(directions):
        return _solve(
            problem,
            inst,
            directions,
            relax=False,
            gap_limit=0.0,
            monitor=monitor("CTA (fixed directions)"),
            time_limit=max_time - watch.elapsed,
        )

    sol = lp(dirs)
    flips = 0
    order = np.argsort(np.abs(y - 0.5))  # least confident directions first
    for k in order:
        if sol.x is not None or watch.elapsed >= max_time:
            break
        if max_flips is not None and flips >= max_flips:
            break
        if k in fixed:
            continue
        trial = dict(dirs)
        trial[int(k)] = 1 - trial[int(k)]
        cand = lp(trial)
        flips += 1
        if cand.x is not None:
            dirs, sol = trial, cand
    log.append(
        f"fixed directions from the LP relaxation (bound {relaxed.objective:g}), {flips} flip(s) tried"
    )
    if sol.x is None:
        return None
    sol.bound = relaxed.objective
    sol.gap = (
        0.0 if not sol.objective else max(0.0, (sol.objective - relaxed.objective) / sol.objective)
    )
    return sol


def _result(problem, inst, sol, x, restricted, log, watch, cancel) -> ProtectionResult:
    """Statuses of changed safe cells 1→11, 2→12; directions and deviation figures."""
    a = inst.a
    dev = x - a
    tol = 1e-6 * inst.scale
    status = np.asarray(problem.status).copy()
    changed = np.abs(dev) > tol
    safe_changed = changed & np.isin(status, (1, 2, 13))
    status[safe_changed] = secondary_status_for(status[safe_changed])
    dirs = {int(c): (1 if dev[c] > 0 else -1) for c in inst.sens}
    cost = float(np.sum(inst.w * np.abs(dev)))
    # optimal only when the directions were free (not heuristic, not given by the user)
    optimal = sol.status == "optimal" and not restricted and sol.gap is not None and sol.gap <= 1e-9
    log.append(f"weighted deviation {cost:g}; {int(changed.sum())} cells changed")
    return ProtectionResult(
        method="CTA",
        status=status,
        cost=cost,
        lower_bound=sol.bound,
        gap=sol.gap,
        optimal=optimal,
        cancelled=sol.interrupted or (cancel is not None and cancel.cancelled),
        timed_out=sol.status == "timelimit",
        elapsed=watch.elapsed,
        published=x,
        log=log,
        figures={
            "directions": dirs,
            "n_changed": int(changed.sum()),
            "max_abs_deviation": float(np.abs(dev).max(initial=0.0)),
            "restricted_directions": restricted,
        },
    )
