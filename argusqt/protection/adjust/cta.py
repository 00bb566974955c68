"""Controlled tabular adjustment (argusqt/docs/methods.md §10): the ℓ1 MILP in SCIP, or an IP with
fixed directions.

The adjusted table is solved on the grid of the published decimals: deviations are integer
variables in units of 10^-decimals from the printed original values, so the table as
printed is additive exactly, stays within the attacker bounds, and moves every sensitive
cell out of its protection interval [a − LPL, a + UPL] at minimal weighted deviation.
The solution is checked in integer units before it is returned (a binary a hair off 0/1
can leak a deviation in the wrong direction, argusqt/docs/methods.md §10).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, NoReturn

import numpy as np
from pyscipopt import Model, quicksum

from argusqt.dataclass import dataclass
from argusqt.errors import AuditError, Cancelled, MethodError
from argusqt.model.status import Status, is_candidate, secondary_status_for
from argusqt.progress import CancelToken, ProgressCallback, Stopwatch, no_progress
from argusqt.protection.adjust.cta_model import (
    EXTRA_SPREAD,
    LOWER,
    UPPER,
    _Instance,
    _instance,
    _possible,
    _Solve,
    _solve,
    _to_grid,
    _verify_units,
    _widened_bounds,
    level_extras,
    verify_adjustment,
)
from argusqt.protection.adjust.scip_monitor import ScipMonitor
from argusqt.protection.audit.disclosure import adjusted_verdict, confidential_seed
from argusqt.protection.audit.publication import cell_label
from argusqt.protection.core.budget import scip_time_limit
from argusqt.protection.core.options import SolverOptions
from argusqt.protection.core.params import MethodParams, TableFacts, minutes_param, param
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import ProtectionResult, grouped

#: the names tests and benchmarks import from here (the model lives in cta_model)
__all__ = [
    "EXTRA_SPREAD",
    "CtaParams",
    "level_extras",
    "solve_cta",
    "verify_adjustment",
]


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


def solve_cta(
    problem: CSPProblem,
    params: CtaOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Controlled tabular adjustment; weights = problem.cost, bounds = problem.lower/upper.

    The adjusted values lie on the grid of `problem.decimals` (the published table adds up as
    printed). params: directions (fix some or all: {cell: 'upper'|'lower'} or a 0/1 list over
    the sensitive cells in cell order), fixed_directions (True: integer deviations with
    heuristic directions from the LP relaxation, flips repaired one cell at a time), max_time
    seconds (600), gap (relative, 0 = optimal), prepsens (default True: a cell with LPL = 0 <
    UPL must go up, UPL = 0 < LPL down, else it could keep its value), seed (CONFIDENTIAL:
    the random extra beyond each level, default from the confidential values),
    levels_as_given (True: exactly the levels, τ-Argus's model; the verdict refuses it).
    Returns published = adjusted values, verdict (protection.disclosure), status 1→11,
    2→12 for safe cells whose printed value changed, cost = Σ w |x − a|,
    figures['directions'] = {cell: ±1}, figures['decimals'], figures['seed'].
    """
    opts = CtaOptions.of(params)
    watch = Stopwatch()
    exact = bool(opts.levels_as_given)
    seed = opts.seed
    seed = confidential_seed(problem) if seed is None else int(seed)
    spread = (0.0, 0.0) if exact else EXTRA_SPREAD
    inst = _instance(problem, level_extras(problem, seed, spread))
    max_time = float(opts.max_time or 60.0 * float(opts.max_minutes))
    log = [
        f"CTA: {inst.sens.size} sensitive cells, {problem.n_cells} cells, "
        f"adjusted in units of {inst.unit:g} ({inst.decimals} decimals)"
    ]
    fixed = _directions_from_params(inst, opts.directions)
    _forced_directions(inst, fixed, bool(opts.prepsens))

    def monitor(label: str) -> ScipMonitor:
        return ScipMonitor(progress, cancel, watch, label)

    if cancel is not None and cancel.cancelled:
        raise Cancelled("CTA cancelled before a solution was found")
    heuristic = bool(opts.fixed_directions) and len(fixed) < inst.sens.size
    found = None
    clock_cut = False  # the time limit cut the fixed-direction flips (the result says so)
    if heuristic:
        found = _fixed_direction_heuristic(inst, fixed, max_time, watch, monitor, log)
        clock_cut = found is not None and found.status == "timelimit"
        if found is None or found.dev is None:
            found = None
            log.append("fixed-direction heuristic found no feasible directions: solving the MILP")
            heuristic = False
    if found is None:
        found = _milp_table(problem, inst, fixed, opts, max_time, watch, monitor, progress, log)
    sol = found
    if sol.dev is None:
        _no_table(problem, inst, sol, fixed, opts.directions is not None, max_time, cancel)
    _verify_units(inst, sol.dev)
    x = inst.values(inst.base + sol.dev)
    verify_adjustment(_widened_bounds(problem, inst), x)
    verdict = adjusted_verdict(problem, x)
    if not exact and not verdict.ok:  # cannot happen: every primary moved beyond its extra
        raise AuditError(f"CTA's adjusted table fails the publication verdict: {verdict.summary()}")
    user_fixed = opts.directions is not None
    res = _result(problem, inst, sol, x, heuristic or user_fixed, log, watch, cancel)
    res.figures["fixed_directions"] = heuristic
    res.timed_out = res.timed_out or clock_cut
    res.verdict = verdict
    # confidential: with the seed the extras, and so the true values, follow
    res.figures["seed"] = None if exact else seed
    res.figures["levels_as_given"] = exact
    if exact:
        log.append("exact levels (expert option): adjusted ∓ level gives the true values")
    log.append(verdict.summary())
    return res


def _forced_directions(inst: _Instance, fixed: dict[int, int], prepsens: bool) -> None:
    """Phase 1: the directions the bounds (or a zero level, `prepsens`) leave no choice
    about, added to `fixed`; MethodError for a cell that can move neither way or whose given
    direction leaves its bounds."""
    can_up, can_down = _possible(inst)
    for k in range(inst.sens.size):  # directions the bounds leave no choice about
        if not can_up[k] and not can_down[k]:
            raise MethodError(
                f"sensitive cell {int(inst.sens[k])} can move neither up by its UPL nor down by "
                "its LPL (each plus its random extra) within its bounds; widen the bounds or "
                "lower the protection levels"
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


def _milp_table(
    problem: CSPProblem,
    inst: _Instance,
    fixed: dict[int, int],
    opts: CtaOptions,
    max_time: float,
    watch: Stopwatch,
    monitor: Callable[[str], ScipMonitor],
    progress: ProgressCallback,
    log: list[str],
) -> _Solve:
    """Phase 2: the MILP (warm-started on large tables from the fixed-direction heuristic)
    with continuous deviations, then onto the printed grid; the integer MILP when its
    directions have no table on the grid. MethodError when neither gives one."""
    gap_limit = float(opts.gap)
    start = None
    warm = opts.warm_start
    if (problem.n_cells >= 5000 if warm is None else bool(warm)) and len(fixed) < inst.sens.size:
        first = _fixed_direction_heuristic(
            inst, fixed, 0.5 * max_time, watch, monitor, log, max_flips=10
        )
        if first is not None and first.dev is not None:
            dirs = {k: int(first.dev[c] > 0) for k, c in enumerate(inst.sens)}
            start = (first.dev, dirs)
            log.append(
                f"MILP warm start from the fixed-direction table ({grouped(first.objective)})"
            )
    cont = _solve(
        inst,
        fixed,
        relax=False,
        time_limit=max_time - watch.elapsed,
        gap_limit=gap_limit,
        monitor=monitor("CTA (MILP)"),
        start=start,
        integer=False,
    )
    extra = min(30.0, 0.1 * max_time)  # the grid step runs even when the MILP used it all

    # the grid step finishes even after a cancel: it is short and gives the safe table
    def grid_monitor() -> ScipMonitor:
        return ScipMonitor(progress, None, watch, "CTA (printed grid)")

    found = _to_grid(inst, cont, max(max_time - watch.elapsed, extra), grid_monitor())
    if found is None:
        log.append("no integer table with the MILP's directions: solving the integer MILP")
        found = _to_grid(
            inst,
            _solve(
                inst,
                fixed,
                relax=False,
                time_limit=max(max_time - watch.elapsed, extra),
                gap_limit=gap_limit,
                monitor=monitor("CTA (integer MILP)"),
            ),
            extra,
            grid_monitor(),
        )
    if found is None:
        raise MethodError(f"CTA found no adjusted table on the grid of {inst.decimals} decimals")
    return found


def _no_table(
    problem: CSPProblem,
    inst: _Instance,
    sol: _Solve,
    fixed: dict[int, int],
    given: bool,
    max_time: float,
    cancel: CancelToken | None,
) -> NoReturn:
    """Phase 3 without a table: Cancelled, or MethodError saying why (bounds, directions
    `given` by the user, or the time)."""
    if sol.interrupted or (cancel is not None and cancel.cancelled):
        raise Cancelled("CTA cancelled before a feasible adjusted table was found")
    if sol.status == "infeasible":
        what = "with the given directions " if given else ""
        raise MethodError(
            f"no adjusted table exists {what}within the cell bounds: every sensitive cell "
            "must move out of its protection interval while the table stays additive "
            f"as printed with {inst.decimals} decimals"
            + _bound_conflict(problem, inst, fixed, min(10.0, max(1.0, 0.1 * max_time)))
        )
    raise MethodError(f"CTA found no adjusted table within {max_time:g} s ({sol.status})")


def _bound_conflict(
    problem: CSPProblem, inst: _Instance, fixed_y: dict[int, int], time_limit: float
) -> str:
    """Why no adjusted table fits the bounds, for the statistician: the cells whose bounds
    the cheapest adjusted table would have to leave, and by how much.

    The same model with every bound elastic (an excess beyond it costs 1 per unit; cells
    that are protected or empty stay fixed), solved once. Typical cause: a total whose
    parts' protection levels (p% of |contributions| with negative values) add up to more
    than its own bounds allow. Empty string when the elastic model gives no answer.
    """
    n = inst.a.size
    status = np.asarray(problem.status)
    frozen = (status == Status.PROTECTED) | (status == Status.EMPTY)
    frozen[inst.sens] = False
    big = float(
        np.ceil(
            (np.abs(inst.a).sum() + inst.lpl.sum() + inst.upl.sum() + 1.0) * 10.0**inst.decimals
        )
    )
    model = Model()
    model.hideOutput()
    scip_time_limit(model, max(1.0, float(time_limit)))  # CPU-seconds (D-96)
    free = np.where(frozen, 0.0, big)
    zp = list(model.addMatrixVar((n,), vtype="C", lb=0.0, ub=free))
    zm = list(model.addMatrixVar((n,), vtype="C", lb=0.0, ub=free))
    ep = list(model.addMatrixVar((n,), vtype="C", lb=0.0, obj=1.0))
    em = list(model.addMatrixVar((n,), vtype="C", lb=0.0, obj=1.0))
    for j in np.flatnonzero(~frozen).tolist():
        model.addCons(zp[j] <= float(inst.up_cap[j]) + ep[j])
        model.addCons(zm[j] <= float(inst.down_cap[j]) + em[j])
    for k, cell in enumerate(inst.sens.tolist()):
        lb, ub = (float(fixed_y[k]),) * 2 if k in fixed_y else (0.0, 1.0)
        y = model.addVar(vtype="B", lb=lb, ub=ub)
        model.addCons(zp[cell] >= float(inst.need_up[k]) * y)
        model.addCons(zp[cell] <= big * y)
        model.addCons(zm[cell] >= float(inst.need_down[k]) * (1 - y))
        model.addCons(zm[cell] <= big * (1 - y))
    rel = inst.rel
    for i in range(rel.shape[0]):
        s, e = rel.indptr[i], rel.indptr[i + 1]
        cols, coefs = rel.indices[s:e], rel.data[s:e]
        expr = quicksum(float(c) * (zp[j] - zm[j]) for j, c in zip(cols, coefs, strict=True))
        model.addCons(expr == float(inst.rhs[i]))
    model.optimize()
    sol = model.getBestSol() if model.getNSols() > 0 else None
    if sol is None:
        return ""
    over = np.array([sol[v] for v in ep])
    under = np.array([sol[v] for v in em])
    dev = np.array([sol[v] for v in zp]) - np.array([sol[v] for v in zm])
    out = np.flatnonzero((over > 1e-6) | (under > 1e-6))
    if out.size == 0:
        return ""

    lo = np.asarray(problem.lower, dtype=float)
    hi = np.asarray(problem.upper, dtype=float)
    order = out[np.argsort(-(over + under)[out])]
    said = []
    for c in order[:3].tolist():
        printed = inst.values(inst.base[c] + np.rint(dev[c]))
        side, bound = (
            ("above its upper", hi[c]) if over[c] > under[c] else ("below its lower", lo[c])
        )
        said.append(f"{cell_label(problem, c)} at {printed:g}, {side} bound {bound:g}")
    more = f" and {out.size - 3} more" if out.size > 3 else ""
    return (
        ". The protection levels of the sensitive cells cannot all be met inside the "
        "attacker bounds (typically: parts whose levels add up to more than their total's "
        "bounds allow, as with negative contributions); the nearest adjusted table would "
        f"print {'; '.join(said)}{more}. Lower the protection levels of these cells' rule "
        "or protect this table by suppression (OPT, MOD) instead"
    )


def _round_directions(inst: _Instance, y: np.ndarray, fixed: dict[int, int]) -> dict[int, int]:
    """Directions from relaxed binaries: y > ½ up, y < ½ down; a tie (the relaxation of a
    symmetric level is degenerate: y = ½ exactly, then float noise decided) goes against the
    signed levels already chosen in the cell's relations, so moves in a relation offset."""
    dirs = {k: v for k, v in fixed.items()}
    ties = []
    for k in range(inst.sens.size):
        if k in dirs:
            continue
        if abs(y[k] - 0.5) > 1e-6:
            dirs[k] = int(y[k] > 0.5)
        else:
            ties.append(k)
    if not ties:
        return dirs
    cols = inst.rel.tocsc()
    level = np.where(inst.need_up > 0, inst.need_up, inst.need_down) * inst.w[inst.sens]
    push = np.zeros(inst.rel.shape[0])  # Σ coef × signed weighted level per relation
    for k, d in dirs.items():
        c = int(inst.sens[k])
        rows = cols.indices[cols.indptr[c] : cols.indptr[c + 1]]
        push[rows] += cols.data[cols.indptr[c] : cols.indptr[c + 1]] * (
            level[k] if d else -level[k]
        )
    for k in ties:  # cells in table order: neighbours are decided one after another
        c = int(inst.sens[k])
        rows = cols.indices[cols.indptr[c] : cols.indptr[c + 1]]
        coef = cols.data[cols.indptr[c] : cols.indptr[c + 1]]
        up = float(np.dot(coef, push[rows])) <= 0.0
        dirs[k] = int(up)
        push[rows] += coef * (level[k] if up else -level[k])
    return dirs


def _fixed_direction_heuristic(
    inst, fixed, max_time, watch, monitor, log, max_flips: int | None = None
) -> _Solve | None:
    """Directions from the LP relaxation (y ≥ ½ → up), then the IP with those directions;
    flip cells while infeasible.

    `max_time` is a deadline on the stopwatch; `monitor` makes a fresh SCIP monitor per model.
    """
    relaxed = _solve(
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
    dirs = _round_directions(inst, y, fixed)

    def solve_with(directions):
        # the LP with these directions, then integers if its vertex is not integral already
        lp = _solve(
            inst,
            directions,
            relax=False,
            gap_limit=0.0,
            monitor=monitor("CTA (fixed directions)"),
            time_limit=max_time - watch.elapsed,
            integer=False,
        )
        grid = _to_grid(inst, lp, max(max_time - watch.elapsed, 1.0), monitor("CTA (printed grid)"))
        return grid if grid is not None else _Solve("infeasible")

    sol = solve_with(dirs)
    flips = 0
    clock_cut = False
    order = np.argsort(np.abs(y - 0.5))  # least confident directions first
    for k in order:
        if sol.dev is not None:
            break
        if watch.elapsed >= max_time:  # the user's limit, a safety cap: the run says so
            clock_cut = True
            break
        if max_flips is not None and flips >= max_flips:
            break
        if k in fixed:
            continue
        trial = dict(dirs)
        trial[int(k)] = 1 - trial[int(k)]
        cand = solve_with(trial)
        flips += 1
        if cand.dev is not None:
            dirs, sol = trial, cand
    log.append(
        f"fixed directions from the LP relaxation (bound {grouped(relaxed.objective)}), {flips} flip(s) tried"
    )
    if sol.dev is None:
        if clock_cut:
            log.append(f"the time limit stopped the direction flips after {flips}")
            return _Solve("timelimit")  # no table; which path follows depends on the clock
        return None
    sol.bound = relaxed.objective
    sol.gap = (
        0.0 if not sol.objective else max(0.0, (sol.objective - relaxed.objective) / sol.objective)
    )
    return sol


def _result(problem, inst, sol, x, restricted, log, watch, cancel) -> ProtectionResult:
    """Statuses 1→11, 2→12 for safe cells whose printed value changed; directions, figures."""
    dev = x - inst.a
    printed_change = sol.dev  # integer units from the printed original
    status = np.asarray(problem.status).copy()
    changed = printed_change != 0
    safe_changed = changed & is_candidate(status)
    status[safe_changed] = secondary_status_for(status[safe_changed])
    dirs = {int(c): (1 if dev[c] > 0 else -1) for c in inst.sens}
    cost = float(np.sum(inst.w * np.abs(dev)))
    # optimal only when the directions were free (not heuristic, not given by the user)
    optimal = sol.status == "optimal" and not restricted and sol.gap is not None and sol.gap <= 1e-9
    log.append(f"weighted deviation {grouped(cost)}; {int(changed.sum())} cells changed in print")
    bound = None if sol.bound is None else sol.bound * inst.unit
    return ProtectionResult(
        method="CTA",
        status=status,
        cost=cost,
        lower_bound=bound,
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
            "decimals": inst.decimals,
        },
    )


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True, kw_only=True)
class CtaParams(MethodParams):
    """`CTA(t)`; all parameters are argusqt extensions."""

    METHOD: ClassVar[str] = "CTA"
    fixed_directions: bool = param(
        False,
        position=1,
        batch="fixedDirections",
        label="Fix directions with a heuristic (LP, faster, may cost more)",
        extension=True,
    )
    max_minutes: float = minutes_param(10, position=2, batch="maxMinutes", extension=True)
    levels_as_given: bool = param(
        False,
        position=3,
        batch="levelsAsGiven",
        label="Move each sensitive cell by exactly its level (τ-Argus, expert)",
        help="Without the random extra beyond the level: an attacker who knows the levels "
        "gets the true values back from the adjusted ones (adjusted ∓ level), and the "
        "publication audit refuses the table.",
        extension=True,
    )


@dataclass(frozen=True, kw_only=True)
class CtaOptions(SolverOptions):
    """What solve_cta reads (see its docstring); max_time, when given, overrides max_minutes."""

    fixed_directions: bool = False
    max_minutes: float = 10.0
    gap: float = 0.0  # relative, 0 = optimal
    #: {cell: 'upper'|'lower'|1|0} or a 0/1 sequence over the sensitive cells
    directions: Mapping[int, object] | Sequence[object] | None = None
    prepsens: bool = True
    seed: int | None = None  # CONFIDENTIAL: the extras beyond the levels follow from it
    levels_as_given: bool = False
    warm_start: bool | None = None  # None: from 5,000 cells on


def _cta_options(p: CtaParams, facts: TableFacts) -> CtaOptions:
    return CtaOptions(
        fixed_directions=p.fixed_directions,
        max_time=60.0 * p.max_minutes,
        levels_as_given=p.levels_as_given,
    )


DESCRIPTOR = register(
    MethodDescriptor(
        name="CTA",
        kind="adjust",
        face="cta",
        label="Controlled tabular adjustment",
        help="Publish slightly adjusted values for all cells.",
        params=CtaParams,
        solve=solve_cta,
        solver_options=_cta_options,
        order=50,
    )
)
