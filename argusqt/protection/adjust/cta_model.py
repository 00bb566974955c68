"""The CTA problem on the printed grid (argusqt/docs/methods.md §10): the instance in integer
units of the last decimal, its MILP in SCIP, the step onto the grid and the exact checks.

Apart from cta.py so that the method (directions, heuristic, result, registry) and the model
it solves read as two jobs; the checks here are what every adjusted table must pass.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from pyscipopt import Model, quicksum

from argusqt.dataclass import dataclass
from argusqt.errors import AuditError, MethodError
from argusqt.model.status import Status
from argusqt.protection.adjust.scip_monitor import ScipMonitor, attach_monitor
from argusqt.protection.audit.disclosure import point_tolerance
from argusqt.protection.core.budget import scip_time_limit
from argusqt.protection.core.problem import CSPProblem

LOWER, UPPER = 0, 1
#: a primary moves by its level plus level × U(0.2, 0.5), at least the point tolerance plus
#: one printed unit (argusqt/docs/methods.md §10)
EXTRA_SPREAD = (0.2, 0.5)
#: Largest magnitude (in units of the last decimal) a double holds as an exact integer.
_EXACT = 2.0**52


@dataclass
class _Instance:
    """A CTA problem in integer units of the last published decimal (arrays length n).

    Deviations are measured from `base`, the original value as printed; caps, levels and
    right-hand sides are whole numbers of units, so every solution SCIP accepts as integral
    is an exactly additive printed table.
    """

    a: np.ndarray  # true values
    decimals: int
    base: np.ndarray  # printed original, integer units (float array of whole numbers)
    w: np.ndarray
    up_cap: np.ndarray  # units a cell may go up from its printed value (0 for fixed cells)
    down_cap: np.ndarray
    sens: np.ndarray  # indices of the sensitive cells
    lpl: np.ndarray  # per sensitive cell, in value units (as given)
    upl: np.ndarray
    need_up: np.ndarray  # per sensitive cell: units up from `base` to reach a + UPL
    need_down: np.ndarray  # units down from `base` to reach a − LPL
    rel: sp.csr_matrix  # integer coefficients
    rhs: np.ndarray  # integer units: rhs − M·base
    #: per sensitive cell: its bounds were widened by its extra (no direction fitted else)
    widened: np.ndarray | None = None

    @property
    def unit(self) -> float:
        return 10.0 ** (-self.decimals)

    def values(self, units: np.ndarray) -> np.ndarray:
        """Printed values from integer units (division keeps k/10^d the nearest double)."""
        return np.asarray(units, dtype=float) / 10.0**self.decimals


@dataclass
class _Solve:
    status: str
    dev: np.ndarray | None = None  # integer deviations from the printed original (units)
    objective: float | None = None  # in units × weight
    bound: float | None = None
    gap: float | None = None
    interrupted: bool = False
    y_relaxed: np.ndarray | None = None  # direction values of the solution (fractional if relaxed)


def _whole(x: np.ndarray, what: str) -> np.ndarray:
    """x rounded to whole numbers; MethodError when it is not (within float noise)."""
    r = np.rint(x)
    off = np.abs(x - r) > 1e-6 * np.maximum(1.0, np.abs(x))
    if off.any():
        k = int(np.flatnonzero(off)[0])
        raise MethodError(f"{what} {k} is {x[k]:g}, not a whole number")
    return r


def _ceil(x: np.ndarray) -> np.ndarray:
    """Ceiling that ignores float noise (161.4/0.1 = 1614.0000000000002 → 1614)."""
    return np.ceil(x - 1e-9 * np.maximum(1.0, np.abs(x)))


def _floor(x: np.ndarray) -> np.ndarray:
    return np.floor(x + 1e-9 * np.maximum(1.0, np.abs(x)))


def level_extras(
    problem: CSPProblem, seed: int, spread: tuple[float, float] = EXTRA_SPREAD
) -> tuple[np.ndarray, np.ndarray]:
    """The random extra move beyond UPL (up) and LPL (down) of each primary, in cell order
    (argusqt/docs/methods.md §10): level × U(spread) drawn from `seed`, and at least a
    printed unit more than the point tolerance, so that `adjusted ∓ level` never discloses.

    Confidential, like the seed: with the extras an attacker would get the true value back.
    """
    sens = np.flatnonzero(problem.primary)
    lo, hi = spread
    if hi <= 0.0:  # no extras (the exact levels, for comparisons only)
        return np.zeros(sens.size), np.zeros(sens.size)
    unit = 10.0 ** (-max(0, int(problem.decimals)))
    least = point_tolerance(problem)[sens] + unit
    rng = np.random.default_rng(int(seed))
    frac = rng.uniform(lo, hi, size=(sens.size, 2)) if hi > lo else np.full((sens.size, 2), lo)
    upl = np.asarray(problem.upl, dtype=float)[sens]
    lpl = np.asarray(problem.lpl, dtype=float)[sens]
    return np.maximum(frac[:, 0] * upl, least), np.maximum(frac[:, 1] * lpl, least)


def _instance(
    problem: CSPProblem, extras: tuple[np.ndarray, np.ndarray] | None = None
) -> _Instance:
    """The problem in units of the last decimal; protected/empty and l = u cells cannot move.

    `extras` (per primary, value units): each primary must move by its level plus its extra.
    """
    d = max(0, int(problem.decimals))
    scale_d = 10.0**d
    a = np.asarray(problem.values, dtype=float)
    lo = np.asarray(problem.lower, dtype=float)
    hi = np.asarray(problem.upper, dtype=float)
    status = np.asarray(problem.status)
    sens = np.flatnonzero(problem.primary)
    lpl = np.asarray(problem.lpl, dtype=float)[sens]
    upl = np.asarray(problem.upl, dtype=float)[sens]
    if np.any(lpl < 0) or np.any(upl < 0):
        raise MethodError("CTA does not support negative protection levels")
    scale = float(max(1.0, np.abs(a).max(initial=0.0)))
    tol = 1e-9 * scale
    if np.any(a < lo - tol) or np.any(a > hi + tol):
        bad = int(np.flatnonzero((a < lo - tol) | (a > hi + tol))[0])
        raise MethodError(
            f"cell {bad}: value {a[bad]:g} lies outside its bounds [{lo[bad]:g}, {hi[bad]:g}]"
        )
    a_units = a * scale_d
    if np.abs(a_units).max(initial=0.0) >= _EXACT / 4:
        raise MethodError(
            f"values up to {scale:g} are too large to adjust exactly with {d} decimals"
        )
    base = np.rint(a_units)
    # an infinite bound is replaced by a finite one that no sensible adjustment reaches
    cap = float(np.ceil((np.abs(a).sum() + lpl.sum() + upl.sum() + scale) * scale_d))
    up_cap = np.where(np.isfinite(hi), _floor(hi * scale_d) - base, cap)
    down_cap = np.where(np.isfinite(lo), base - _ceil(lo * scale_d), cap)
    # a sensitive cell's bounds are widened to exactly a ± level, often off the grid
    # (312 − 582.6 with a negative contribution): its level then needs the printed value
    # one unit beyond the bound. The bounds of a sensitive cell are rounded to the nearest
    # printed value instead (at most half a unit out, which verify_adjustment allows), so
    # the level can be met (safety campaign seeds 79, 355, 744)
    up_fin = sens[np.isfinite(hi[sens])]
    down_fin = sens[np.isfinite(lo[sens])]
    up_cap[up_fin] = _ceil(hi[up_fin] * scale_d) - base[up_fin]
    down_cap[down_fin] = base[down_fin] - _floor(lo[down_fin] * scale_d)
    fixed = (status == Status.PROTECTED) | (status == Status.EMPTY) | (hi - lo <= 0)
    fixed[sens] = False
    up_cap = np.where(fixed, 0.0, np.maximum(up_cap, 0.0))
    down_cap = np.where(fixed, 0.0, np.maximum(down_cap, 0.0))
    a_s, b_s = a_units[sens], base[sens]
    extra_up, extra_down = extras if extras is not None else (np.zeros(sens.size),) * 2
    need_up = np.maximum(_ceil(a_s + (upl + extra_up) * scale_d - b_s), 0.0)
    need_down = np.maximum(_ceil(b_s - (a_s - (lpl + extra_down) * scale_d)), 0.0)
    # a primary whose bounds are exactly a ± level (from_table widens them so) fits its
    # level but not its extra: its bounds are widened by the extra, as from_table does for
    # the level, rather than refusing a table CTA could protect before
    exact_up = np.maximum(_ceil(a_s + upl * scale_d - b_s), 0.0)
    exact_down = np.maximum(_ceil(b_s - (a_s - lpl * scale_d)), 0.0)
    tight = (need_up > up_cap[sens]) & (need_down > down_cap[sens])
    wide_up = tight & (exact_up <= up_cap[sens])
    wide_down = tight & (exact_down <= down_cap[sens])
    up_cap[sens[wide_up]] = need_up[wide_up]
    down_cap[sens[wide_down]] = need_down[wide_down]
    tight = wide_up | wide_down
    rel = problem.relations.tocsr().astype(float)
    rel.data = _whole(rel.data, "relation coefficient")
    rhs_units = _whole(np.asarray(problem.rhs, dtype=float) * scale_d, "right-hand side")
    rhs = rhs_units - rel @ base
    return _Instance(
        a,
        d,
        base,
        np.asarray(problem.cost, dtype=float),
        up_cap,
        down_cap,
        sens,
        lpl,
        upl,
        need_up,
        need_down,
        rel,
        rhs,
        tight,
    )


def _widened_bounds(problem: CSPProblem, inst: _Instance) -> CSPProblem:
    """The problem with the bounds CTA used: a primary widened by its extra (see _instance)."""
    if inst.widened is None or not inst.widened.any():
        return problem
    cells = inst.sens[inst.widened]
    unit = inst.unit
    lower = np.asarray(problem.lower, dtype=float).copy()
    upper = np.asarray(problem.upper, dtype=float).copy()
    base = inst.base[cells] * unit
    lower[cells] = np.minimum(lower[cells], base - inst.down_cap[cells] * unit)
    upper[cells] = np.maximum(upper[cells], base + inst.up_cap[cells] * unit)
    return dataclasses.replace(problem, lower=lower, upper=upper)


def _possible(inst: _Instance) -> tuple[np.ndarray, np.ndarray]:
    """Per sensitive cell: can it go up by UPL / down by LPL within its bounds?"""
    can_up = inst.need_up <= inst.up_cap[inst.sens]
    can_down = inst.need_down <= inst.down_cap[inst.sens]
    return can_up, can_down


def _solve(
    inst: _Instance,
    fixed_y: dict[int, int],
    *,
    relax: bool,
    time_limit: float,
    gap_limit: float,
    monitor: ScipMonitor | None,
    start: tuple[np.ndarray, dict[int, int]] | None = None,
    integer: bool = True,
) -> _Solve:
    """Build and solve the MILP of argusqt/docs/methods.md §10 in units of the last decimal: integer
    deviations, or continuous ones (`integer=False`, then made integral by `_to_grid`);
    with `relax` its LP relaxation, used only to guess directions.

    Continuous models are built in value units (deviations × 10^-d), integer ones in units:
    each at the scale where its numbers are tame (a continuous LP in units of 10^-4 of large
    totals has badly scaled rows); the result is always in units.

    `start` = (integer deviations, directions) of a known feasible table, given to SCIP.
    """
    n = inst.a.size
    as_int = integer and not relax
    f = 1.0 if as_int else inst.unit  # model deviation = f × deviation in units
    model = Model()
    model.hideOutput()
    scip_time_limit(model, max(1.0, float(time_limit)))  # CPU-seconds (D-96)
    model.setParam("limits/gap", float(gap_limit))
    model.setParam("numerics/feastol", 1e-7)
    if monitor is not None:
        attach_monitor(model, monitor, "cta_monitor")
    vtype = "I" if as_int else "C"
    zp = list(model.addMatrixVar((n,), vtype=vtype, lb=0.0, ub=inst.up_cap * f, obj=inst.w))
    zm = list(model.addMatrixVar((n,), vtype=vtype, lb=0.0, ub=inst.down_cap * f, obj=inst.w))
    ys = []
    for k, cell in enumerate(inst.sens):  # one binary and four constraints per sensitive cell
        cell = int(cell)
        lb, ub = 0.0, 1.0
        if k in fixed_y:
            lb = ub = float(fixed_y[k])
        y = model.addVar(vtype="C" if relax else "B", lb=lb, ub=ub, name=f"y{cell}")
        ys.append(y)
        model.addCons(zp[cell] >= float(inst.need_up[k] * f) * y)
        model.addCons(zp[cell] <= float(inst.up_cap[cell] * f) * y)
        model.addCons(zm[cell] >= float(inst.need_down[k] * f) * (1 - y))
        model.addCons(zm[cell] <= float(inst.down_cap[cell] * f) * (1 - y))
    rel = inst.rel
    movable = (inst.up_cap > 0) | (inst.down_cap > 0)
    for i in range(rel.shape[0]):  # one equation per relation
        s, e = rel.indptr[i], rel.indptr[i + 1]
        cols, coefs = rel.indices[s:e], rel.data[s:e]
        keep = movable[cols]
        if not keep.any():
            if inst.rhs[i] != 0:
                return _Solve("infeasible")
            continue
        expr = quicksum(
            float(c) * (zp[j] - zm[j]) for j, c in zip(cols[keep], coefs[keep], strict=True)
        )
        model.addCons(expr == float(inst.rhs[i] * f))
    if start is not None:
        _add_start(model, inst, zp, zm, ys, start, f)
    model.optimize()
    out = _Solve(model.getStatus())
    out.interrupted = monitor is not None and monitor.interrupted
    best = model.getBestSol() if model.getNSols() > 0 else None
    if best is not None:
        sol = best
        dev = (np.array([sol[v] for v in zp]) - np.array([sol[v] for v in zm])) / f
        out.dev = np.rint(dev) if as_int else dev
        out.objective = float(model.getSolObjVal(sol)) / f
        out.bound = float(model.getDualbound()) / f
        out.gap = float(model.getGap())
        out.y_relaxed = np.array([sol[y] for y in ys])
    return out


def _add_start(model, inst: _Instance, zp, zm, ys, start, f: float) -> None:
    """Hand a feasible adjusted table to SCIP as its first incumbent (loops over changed cells)."""
    dev, dirs = start
    sol = model.createSol()
    for j in np.flatnonzero(dev > 0):
        model.setSolVal(sol, zp[int(j)], float(min(dev[j], inst.up_cap[j]) * f))
    for j in np.flatnonzero(dev < 0):
        model.setSolVal(sol, zm[int(j)], float(min(-dev[j], inst.down_cap[j]) * f))
    for k, y in enumerate(ys):
        model.setSolVal(sol, y, float(dirs[k]))
    model.addSol(sol, free=True)


def verify_adjustment(problem: CSPProblem, x: np.ndarray, tol: float | None = None) -> None:
    """Raise AuditError unless x is additive, within bounds and every sensitive cell is moved out.

    Bounds may be exceeded by half a unit of the last decimal: an original value off the grid
    is printed rounded; a sensitive cell's bounds count rounded outwards to the grid.
    """
    a = np.asarray(problem.values, dtype=float)
    scale = float(max(1.0, np.abs(a).max(initial=0.0)))
    tol = 1e-6 * scale if tol is None else tol
    resid = problem.relations @ x - np.asarray(problem.rhs, dtype=float)
    if resid.size and np.abs(resid).max() > tol:
        r = int(np.abs(resid).argmax())
        raise AuditError(f"adjusted table is not additive: relation {r} is off by {resid[r]:g}")
    lo = np.asarray(problem.lower, dtype=float).copy()
    hi = np.asarray(problem.upper, dtype=float).copy()
    # a sensitive cell's bounds count rounded outwards to the printed grid (as in _instance)
    scale_d = 10.0 ** max(0, int(problem.decimals))
    sens = problem.primary
    lo_fin = sens & np.isfinite(lo)
    hi_fin = sens & np.isfinite(hi)
    lo[lo_fin] = _floor(lo[lo_fin] * scale_d) / scale_d
    hi[hi_fin] = _ceil(hi[hi_fin] * scale_d) / scale_d
    slack = max(tol, 0.5 * 10.0 ** (-max(0, int(problem.decimals))))
    out = (x < lo - slack) | (x > hi + slack)
    if out.any():
        c = int(np.flatnonzero(out)[0])
        raise AuditError(
            f"adjusted cell {c} = {x[c]:g} lies outside its bounds [{lo[c]:g}, {hi[c]:g}]"
        )
    inside = sens & (x > a - problem.lpl + tol) & (x < a + problem.upl - tol)
    if inside.any():
        c = int(np.flatnonzero(inside)[0])
        raise AuditError(
            f"sensitive cell {c} adjusted to {x[c]:g}, inside its protection interval "
            f"[{a[c] - problem.lpl[c]:g}, {a[c] + problem.upl[c]:g}]"
        )


def _units_problem(inst: _Instance, dev: np.ndarray) -> str | None:
    """What is wrong with deviations `dev` on the printed grid (None: integers within the
    caps, every relation balanced to the unit, every sensitive cell at least its level away)."""
    if np.any(np.abs(dev - np.rint(dev)) > 1e-6):
        return "adjusted values are not on the grid of the printed decimals"
    k = np.rint(dev).astype(np.int64)
    if np.any(k > inst.up_cap) or np.any(-k > inst.down_cap):
        c = int(np.flatnonzero((k > inst.up_cap) | (-k > inst.down_cap))[0])
        return f"adjusted cell {c} leaves its bounds"
    rel = inst.rel.astype(np.int64)
    resid = rel @ k - inst.rhs.astype(np.int64)
    if np.any(resid != 0):
        r = int(np.flatnonzero(resid)[0])
        return (
            f"adjusted table is not additive as printed: relation {r} is off by "
            f"{int(resid[r])} unit(s) of the last decimal"
        )
    ks = k[inst.sens]
    inside = (ks < inst.need_up) & (-ks < inst.need_down)
    if inside.any():
        c = int(inst.sens[np.flatnonzero(inside)[0]])
        return f"sensitive cell {c} is printed inside its protection interval"
    return None


def _verify_units(inst: _Instance, dev: np.ndarray) -> None:
    """AuditError unless `dev` is an exact adjusted table on the printed grid."""
    problem = _units_problem(inst, dev)
    if problem is not None:
        raise AuditError(problem)


def _to_grid(
    inst: _Instance, cont: _Solve, time_limit: float, monitor: ScipMonitor
) -> _Solve | None:
    """Integer deviations with the directions of a continuous MILP solution.

    With the directions fixed the relations of 2-D and 1H2D tables are totally unimodular, so
    the integer optimum costs what the continuous one does (the LP answers at once); in other
    tables it may cost a little more. The continuous bound stays a valid bound. None when no
    integer table has these directions.
    """
    if cont.dev is None or cont.y_relaxed is None:
        return cont
    if _units_problem(inst, cont.dev) is None:
        cont.dev = np.rint(cont.dev)
        return cont
    # directions from the binaries, not from the deviations: a binary within the integrality
    # tolerance of 0 can still carry a deviation up through a large bound
    # (argusqt/docs/methods.md §10)
    dirs = {k: int(v >= 0.5) for k, v in enumerate(cont.y_relaxed)}
    grid = _solve(
        inst,
        dirs,
        relax=False,
        time_limit=time_limit,
        gap_limit=0.0,
        monitor=monitor,
    )
    if grid.dev is None or grid.objective is None:
        return None
    same = cont.objective is not None and grid.objective <= cont.objective * (1 + 1e-9) + 1e-9
    grid.status = cont.status  # optimal only if the gap below stays 0
    grid.interrupted = cont.interrupted
    grid.bound = cont.bound
    grid.gap = cont.gap if same else _gap(grid.objective, cont.bound)
    return grid


def _gap(objective: float, bound: float | None) -> float | None:
    if bound is None:
        return None
    return 0.0 if objective <= 0 else max(0.0, (objective - bound) / objective)
