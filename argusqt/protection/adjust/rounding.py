"""Controlled rounding (argusqt/docs/methods.md §9): an additive table of multiples of a base, in
SCIP.

Every cell (totals included) becomes a multiple of the base b, every relation holds
exactly, and Σ|rounded − original| is minimal. The model works in units of b, so the
relations are integer equations. RAPID (nearest multiple for inner cells, totals by
addition) is the fallback when no rounded table is found in time or on cancel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from pyscipopt import Model, quicksum

from argusqt.dataclass import dataclass
from argusqt.errors import Cancelled, MethodError, ParameterError, TimeLimitError
from argusqt.model.status import Status
from argusqt.progress import CancelToken, ProgressCallback, Stopwatch, no_progress
from argusqt.protection.adjust.scip_monitor import ScipMonitor, attach_monitor
from argusqt.protection.audit.disclosure import rounded_verdict
from argusqt.protection.audit.publication import cell_label, publication_audit
from argusqt.protection.core.budget import Deadline, out_of_time, scip_time_limit
from argusqt.protection.core.options import SolverOptions
from argusqt.protection.core.params import MethodParams, TableFacts, minutes_param, param
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.registry import MethodDescriptor, register
from argusqt.protection.core.result import ProtectionResult, grouped
from argusqt.protection.core.rounding_base import REL_TOL as _REL_TOL
from argusqt.protection.core.rounding_base import (
    covering_base,
    covering_multiples,
    existence_interval,
    minimum_base,
    protection_targets,
    uncovered_cells,
)

STOP_RAPID, STOP_FIRST, STOP_OPTIMAL = 1, 2, 3
#: ScipMonitor and attach_monitor live in scip_monitor.py (CTA uses them too); kept here by name
__all__ = ["RndOptions", "ScipMonitor", "attach_monitor", "solve_rounding"]


# ---------------------------------------------------------------------- small public helpers
def fill_by_addition(
    relations: sp.csr_matrix, rhs: np.ndarray, values: np.ndarray, known: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Complete unknown cells from relations with exactly one unknown cell (totals by addition)."""
    m = relations.tocsr()
    vals = np.where(known, values, 0.0).astype(float)
    known = known.copy()
    absm = abs(m)
    while True:
        unk = (~known).astype(float)
        n_unknown = absm @ unk
        rows = np.flatnonzero(n_unknown == 1)
        if rows.size == 0:
            break
        sub = m[rows]
        # the single unknown column of each row and its coefficient
        masked = sub.multiply(unk[None, :]).tocsr()
        masked.eliminate_zeros()
        col = masked.indices[masked.indptr[:-1]]
        coef = masked.data[masked.indptr[:-1]]
        rest = sub @ vals  # unknown cells are 0 in vals
        new = (np.asarray(rhs, dtype=float)[rows] - rest) / coef
        # several rows may determine one cell; they agree when the data are consistent
        col, first = np.unique(col, return_index=True)
        vals[col] = new[first]
        known[col] = True
    return vals, known


def inner_cells(relations: sp.csr_matrix, n: int) -> np.ndarray:
    """Cells that are never the total of a relation (negative coefficient)."""
    m = relations.tocoo()
    inner = np.ones(n, dtype=bool)
    inner[m.col[m.data < 0]] = False
    return inner


def rapid_rounding(problem: CSPProblem, base: float) -> np.ndarray:
    """RAPID: inner cells to the nearest multiple, totals by addition (always additive)."""
    z = np.asarray(problem.values, dtype=float)
    inner = inner_cells(problem.relations, problem.n_cells)
    rounded = base * np.floor(z / base + 0.5)
    rounded[problem.status == Status.EMPTY] = 0.0
    vals, known = fill_by_addition(
        problem.relations, np.zeros(problem.relations.shape[0]), rounded, inner
    )
    if not known.all():  # relations without a clear total: fall back to nearest multiples
        vals[~known] = rounded[~known]
    return vals


# ---------------------------------------------------------------------- the MIP
class _PartOutcome:
    """Solution (in units of b) of one part and what SCIP said about it."""

    def __init__(self) -> None:
        self.k: np.ndarray | None = None
        self.status = ""
        self.bound: float | None = None
        self.gap: float | None = None
        self.interrupted = False


def _domains(z: np.ndarray, fixed: np.ndarray, base: float, steps: int):
    """Floor u = ⌊z/b⌋, which cells are multiples, and the allowed down-steps (k ≥ 0 if z ≥ 0)."""
    q = z / base
    near = np.round(q)
    multiple = np.abs(q - near) <= _REL_TOL * np.maximum(1.0, np.abs(q))
    u = np.where(multiple, near, np.floor(q))
    r = np.where(multiple, 0.0, z - u * base)
    free = ~fixed
    down_cap = np.where(z >= 0, np.minimum(steps, np.maximum(u, 0)), steps)
    return u, r, multiple & free, ~multiple & free, down_cap


def _solve_part(
    z: np.ndarray,
    fixed: np.ndarray,
    rel: sp.csr_matrix,
    rhs: np.ndarray,
    base: float,
    steps: int,
    stop_rule: int,
    time_limit: float,
    monitor_args: tuple,
    k_bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> _PartOutcome:
    """Zero-restricted / K-step rounding of one (sub)table: k = u + x + up − dn, Σ cost minimal.

    `k_bounds`: per cell the multiples allowed (±inf: any), so that a primary's rounding
    interval covers its protection interval (argusqt/docs/methods.md §9).
    """
    out = _PartOutcome()
    n = z.size
    u, r, mult, nonmult, down_cap = _domains(z, fixed, base, steps)
    u = np.where(fixed, np.round(z / base), u)
    idx_x = np.flatnonzero(nonmult)
    idx_s = np.flatnonzero(mult | nonmult) if steps > 0 else np.zeros(0, dtype=np.int64)
    model = Model()
    model.hideOutput()
    scip_time_limit(model, max(1.0, float(time_limit)))
    if stop_rule == STOP_FIRST:
        model.setParam("limits/solutions", 1)
    progress, cancel, watch, label = monitor_args
    monitor = ScipMonitor(progress, cancel, watch, label, offset=float(r[idx_x].sum()))
    attach_monitor(model, monitor, "rounding_monitor")
    xs: list = []
    ups: list = []
    dns: list = []
    if idx_x.size:
        xv = model.addMatrixVar((idx_x.size,), vtype="B", obj=base - 2.0 * r[idx_x])
        xs = list(xv)
    if idx_s.size:
        upv = model.addMatrixVar(
            (idx_s.size,), vtype="I", lb=0.0, ub=float(steps), obj=np.full(idx_s.size, base)
        )
        dnv = model.addMatrixVar(
            (idx_s.size,),
            vtype="I",
            lb=0.0,
            ub=down_cap[idx_s].astype(float),
            obj=np.full(idx_s.size, base),
        )
        ups, dns = list(upv), list(dnv)
    # column position of each cell in the x / step variable lists
    pos_x = np.full(n, -1)
    pos_x[idx_x] = np.arange(idx_x.size)
    pos_s = np.full(n, -1)
    pos_s[idx_s] = np.arange(idx_s.size)
    rel = rel.tocsr()
    rhs_units = np.asarray(rhs, dtype=float) / base - rel @ u
    if np.any(np.abs(rhs_units - np.round(rhs_units)) > 1e-6):
        raise MethodError(
            "rounding needs relations whose right-hand sides are multiples of the base "
            "(the table is not additive?)"
        )
    rhs_units = np.round(rhs_units)
    for i in range(rel.shape[0]):  # one constraint per relation
        s, e = rel.indptr[i], rel.indptr[i + 1]
        cols, coefs = rel.indices[s:e], rel.data[s:e]
        terms = []
        for c, a in zip(cols, coefs, strict=True):
            if pos_x[c] >= 0:
                terms.append(a * xs[pos_x[c]])
            if pos_s[c] >= 0:
                terms.append(a * ups[pos_s[c]])
                terms.append(-a * dns[pos_s[c]])
        if not terms:
            if abs(rhs_units[i]) > 0.5:
                out.status = "infeasible"
                return out
            continue
        model.addCons(quicksum(terms) == float(rhs_units[i]))
    if k_bounds is not None:
        _restrict_multiples(model, k_bounds, u, pos_x, xs, pos_s, ups, dns)
    model.optimize()
    out.status = model.getStatus()
    out.interrupted = monitor.interrupted
    if model.getNSols() > 0:
        sol: Any = model.getBestSol()
        k = u.copy()
        if idx_x.size:
            k[idx_x] += np.round([sol[v] for v in xs])
        if idx_s.size:
            k[idx_s] += np.round([sol[v] for v in ups]) - np.round([sol[v] for v in dns])
        out.k = k
        out.gap = float(model.getGap())
        out.bound = float(model.getDualbound()) + float(r[idx_x].sum())
    elif out.status == "optimal":  # nothing to decide
        out.k = u.copy()
        out.gap = 0.0
    return out


def _restrict_multiples(model, k_bounds, u, pos_x, xs, pos_s, ups, dns) -> None:
    """kmin ≤ u + x + up − dn ≤ kmax for the cells with finite bounds (the primaries)."""
    kmin, kmax = k_bounds
    for c in np.flatnonzero(np.isfinite(kmin) | np.isfinite(kmax)).tolist():
        terms = []
        if pos_x[c] >= 0:
            terms.append(xs[pos_x[c]])
        if pos_s[c] >= 0:
            terms += [ups[pos_s[c]], -dns[pos_s[c]]]
        if not terms:
            continue  # a fixed cell: its bounds were checked before the model was built
        expr = quicksum(terms)
        if np.isfinite(kmin[c]):
            model.addCons(expr >= float(kmin[c] - u[c]))
        if np.isfinite(kmax[c]):
            model.addCons(expr <= float(kmax[c] - u[c]))


# ---------------------------------------------------------------------- parameters
@dataclass(frozen=True, kw_only=True)
class RndOptions(SolverOptions):
    """What solve_rounding reads (see its docstring); max_time, when given, overrides
    max_minutes. Values are checked by _read_params, with clear messages."""

    ALIASES: ClassVar[Mapping[str, str]] = {
        "stopRule": "stop_rule",
        "maxMinutes": "max_minutes",
        "unitCost": "unit_cost",
    }
    base: int | None = None  # required: a whole number ≥ 1
    steps: int = 0
    stop_rule: int = STOP_OPTIMAL
    max_minutes: float = 10.0
    partitions: int = 0
    min_base: int | None = None
    min_frequency: int | None = None
    prefer_zero_restricted: bool = True
    unit_cost: int | None = None  # accepted, no effect (every cell has weight 1)


def _read_params(problem: CSPProblem, opts: RndOptions) -> tuple[int, int, int, float, bool]:
    """base, steps, stop rule, time limit (s), partitions — checked with clear messages."""
    base = opts.base
    if base is None:
        raise MethodError("controlled rounding needs a rounding base (parameter 'base')")
    try:
        base_f = float(base)
    except (TypeError, ValueError):
        raise MethodError(f"expected a whole number ≥ 1 as rounding base, got {base!r}") from None
    if base_f < 1 or base_f != int(base_f):
        raise MethodError(f"expected a whole number ≥ 1 as rounding base, got {base!r}")
    base_i = int(base_f)
    min_base = opts.min_base
    if min_base is None:
        min_base = minimum_base(problem, min_frequency=opts.min_frequency)
    if base_i < int(min_base):
        raise MethodError(
            f"rounding base {base_i} is below the minimum base {int(min_base)} (the "
            "minimum frequency of a frequency table, else the largest LPL + UPL of the unsafe "
            "cells)"
        )
    steps = int(opts.steps)
    if steps < 0:
        raise MethodError(f"expected steps ≥ 0, got {steps}")
    stop = int(opts.stop_rule)
    if stop not in (STOP_RAPID, STOP_FIRST, STOP_OPTIMAL):
        raise MethodError(
            f"expected stop rule 1 (RAPID), 2 (first feasible) or 3 (optimal), got {stop}"
        )
    max_time = opts.max_time
    if max_time is None:
        max_time = 60.0 * float(opts.max_minutes)
    parts = bool(int(opts.partitions))
    return base_i, steps, stop, float(max_time), parts


def _partition_axis(problem: CSPProblem) -> int | None:
    """The first non-hierarchical dimension (τ-Argus splits by its codes), if any."""
    if not problem.dims or len(problem.dims) < 2:
        return None
    for d, dim in enumerate(problem.dims):
        if not getattr(dim, "hierarchical", False):
            return d
    return None


def _parts(problem: CSPProblem, axis: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(cells, relation rows) of each code of `axis` except the total: rows lying inside a part."""
    shape = tuple(len(d) for d in problem.dims or [])
    node = np.unravel_index(np.arange(problem.n_cells), shape)[axis]
    rel = problem.relations.tocsr()
    row_of = np.repeat(np.arange(rel.shape[0]), np.diff(rel.indptr))
    out = []
    for code in range(1, shape[axis]):
        cells = np.flatnonzero(node == code)
        inside = np.zeros(problem.n_cells, dtype=bool)
        inside[cells] = True
        outside_rows = np.unique(row_of[~inside[rel.indices]])
        rows = np.setdiff1d(np.unique(row_of[inside[rel.indices]]), outside_rows)
        out.append((cells, rows))
    return out


# ---------------------------------------------------------------------- entry point
def solve_rounding(
    problem: CSPProblem,
    params: RndOptions | Mapping[str, Any] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> ProtectionResult:
    """Controlled rounding of `problem.values` to multiples of params['base']
    (argusqt/docs/methods.md §9).

    params: base (required), steps K (0 = zero-restricted), stop_rule 1 RAPID / 2 first
    feasible / 3 optimal (default 3), max_time seconds (or max_minutes, default 10 min),
    partitions 0/1, optional min_base / min_frequency, prefer_zero_restricted (default
    True: with K > 0 a zero-restricted rounding is tried first and kept if it exists).
    Raises MethodError when no rounded table exists; returns RAPID (figures['rapid_fallback'])
    when none is found in time or the run is cancelled. figures['existence_lower'/'_upper']:
    what an intruder can infer per cell (NaN for RAPID totals).
    """
    watch = Stopwatch()
    opts = RndOptions.of(params)
    base, steps, stop, max_time, use_parts = _read_params(problem, opts)
    prefer_zero = bool(opts.prefer_zero_restricted)
    z = np.asarray(problem.values, dtype=float)
    n = problem.n_cells
    empty = np.asarray(problem.status) == 14
    unit = 10.0 ** (-problem.decimals)
    uncovered = uncovered_cells(problem, base, steps)
    if uncovered.size:
        raise MethodError(_uncovered_message(problem, uncovered, base, steps))
    k_bounds = _cover_bounds(problem, base, steps)
    rapid = rapid_rounding(problem, base)
    rapid_dist = float(np.abs(rapid - z).sum())
    log: list[str] = [f"Controlled rounding: base {base}, steps {steps}, stop rule {stop}"]
    if opts.unit_cost is not None:
        log.append("unit cost: every cell counts with weight 1 in Σ|rounded − original|")
    figures: dict = {
        "base": base,
        "steps": steps,
        "stop_rule": stop,
        "rapid_distance": rapid_dist,
        "rapid_fallback": False,
        "zero_restricted": steps == 0,
    }
    if stop == STOP_RAPID:
        log.append(f"RAPID solution (stop rule 1): distance {grouped(rapid_dist)}")
        return _result(
            problem,
            rapid,
            z,
            base,
            0,
            unit,
            figures | {"rapid_only": True},
            log,
            watch,
            optimal=False,
            gap=None,
            bound=None,
        )

    axis = _partition_axis(problem) if use_parts else None
    if use_parts and axis is None:
        log.append(
            "partitions requested but the table has no non-hierarchical dimension to split by"
        )
    if axis is not None:
        parts = _parts(problem, axis)
        log.append(f"rounding {len(parts)} parts split by the codes of dimension {axis + 1}")
    else:
        parts = [(np.arange(n), np.arange(problem.relations.shape[0]))]
    figures["n_parts"] = len(parts)

    rel = problem.relations.tocsr()
    rhs = np.asarray(problem.rhs, dtype=float)
    deadline = Deadline(max_time)  # CPU-seconds, with the wall-clock backstop (D-96)
    rounded = np.zeros(n)
    known = np.zeros(n, dtype=bool)
    all_optimal = True
    bound_sum = 0.0
    used_steps = 0 if steps == 0 else None
    timed_out = cancelled = False
    for pno, (cells, rows) in enumerate(parts):
        sub_rel = rel[rows][:, cells]
        label = f"rounding part {pno + 1}/{len(parts)}" if len(parts) > 1 else "rounding"
        margs = (progress, cancel, watch, label)
        outcome, k_used = _round_part(
            z[cells],
            empty[cells],
            sub_rel,
            rhs[rows],
            base,
            steps,
            stop,
            deadline,
            margs,
            (k_bounds[0][cells], k_bounds[1][cells]),
            prefer_zero,
            cancel,
        )
        if k_used is not None:
            if k_used == 0 and steps > 0:
                log.append(f"part {pno + 1}: a zero-restricted rounding exists (preferred)")
            used_steps = k_used if used_steps is None else max(used_steps, k_used)
        if outcome is None or outcome.k is None:
            status = "not run" if outcome is None else outcome.status
            if outcome is not None and outcome.status == "infeasible":
                hint = (
                    "; try steps = 1 (or a larger base)"
                    if steps == 0
                    else "; try more steps or a larger base"
                )
                raise MethodError(
                    f"no additive rounding to base {base} with {steps} step(s) exists "
                    "in which every unsafe cell's rounding interval covers its protection "
                    "interval" + (f" for part {pno + 1}" if len(parts) > 1 else "") + hint
                )
            cancelled = cancel is not None and cancel.cancelled
            timed_out = not cancelled
            figures["rapid_fallback"] = True
            log.append(
                f"no rounded table found ({status}); returning the RAPID solution "
                f"(distance {grouped(rapid_dist)}): totals may be several bases off"
            )
            return _result(
                problem,
                rapid,
                z,
                base,
                0,
                unit,
                figures,
                log,
                watch,
                optimal=False,
                gap=None,
                bound=None,
                cancelled=cancelled,
                timed_out=timed_out,
                limit=max_time,
            )
        rounded[cells] = base * outcome.k
        known[cells] = True
        all_optimal &= outcome.status == "optimal"
        bound_sum += outcome.bound if outcome.bound is not None else 0.0
        if outcome.interrupted:
            cancelled = True
        elif outcome.status == "timelimit":
            timed_out = True
    if not known.all():
        rounded, known = fill_by_addition(rel, rhs, rounded, known)
        log.append("totals over the parts computed by addition")
    figures["zero_restricted"] = used_steps == 0
    dist = float(np.abs(rounded - z).sum())
    single = len(parts) == 1
    gap = None
    if single and dist > 0:
        gap = max(0.0, (dist - bound_sum) / dist)
    elif single:
        gap = 0.0
    optimal = single and all_optimal and stop == STOP_OPTIMAL
    if stop == STOP_FIRST:
        log.append("first feasible rounding (stop rule 2)")
    log.append(f"distance Σ|rounded − original| = {grouped(dist)} (RAPID {grouped(rapid_dist)})")
    return _result(
        problem,
        rounded,
        z,
        base,
        steps,
        unit,
        figures,
        log,
        watch,
        optimal=optimal,
        gap=gap,
        bound=bound_sum if single else None,
        cancelled=cancelled,
        timed_out=timed_out,
    )


def _round_part(
    z: np.ndarray,
    empty: np.ndarray,
    rel: sp.csr_matrix,
    rhs: np.ndarray,
    base: int,
    steps: int,
    stop: int,
    deadline: Deadline,
    margs: tuple,
    k_bounds: tuple[np.ndarray, np.ndarray],
    prefer_zero: bool,
    cancel: CancelToken | None,
) -> tuple[_PartOutcome | None, int | None]:
    """One part's rounding: zero-restricted first when preferred, then with `steps` steps
    if none exists; (the last outcome, None if a trial could not run: the clock or a cancel
    stopped it, never "no rounding exists"; the steps of the one found)."""
    trials = [0, steps] if steps > 0 and prefer_zero else [steps]
    outcome = None
    for k_steps in trials:
        left = deadline.remaining
        if left <= 0 or (cancel is not None and cancel.cancelled):
            return None, None  # not run: the caller reports the time limit or the cancel
        outcome = _solve_part(z, empty, rel, rhs, base, k_steps, stop, left, margs, k_bounds)
        if outcome.k is not None:
            return outcome, k_steps
        if outcome.status == "infeasible":
            continue
        break  # time limit / interrupt without a solution
    return outcome, None


def _cover_bounds(problem: CSPProblem, base: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Per cell the multiples whose rounding interval covers a primary's protection
    interval (±inf for the other cells), argusqt/docs/methods.md §9."""
    z = np.asarray(problem.values, dtype=float)
    unit = 10.0 ** (-max(0, int(problem.decimals)))
    prim, lo_req, hi_req = protection_targets(problem, bool(np.all(z >= 0)))
    kmin, kmax = covering_multiples(lo_req, hi_req, base, steps, unit)
    return np.where(prim, kmin, -np.inf), np.where(prim, kmax, np.inf)


def _uncovered_message(problem: CSPProblem, cells: np.ndarray, base: int, steps: int) -> str:
    """Why rounding to `base` is refused: the unsafe cells no multiple protects, and the
    base that would give each of them one."""

    names = ", ".join(cell_label(problem, int(c)) for c in cells[:5])
    more = f" and {cells.size - 5} more" if cells.size > 5 else ""
    need = covering_base(problem, steps, base + 1)
    return (
        f"rounding to base {base} with {steps} step(s) cannot protect {cells.size} unsafe "
        f"cell(s): whichever multiple they are rounded to, an attacker who knows the base "
        f"narrows them inside their protection interval: {names}{more}. Use a base of at "
        f"least {need} (the smallest that leaves every unsafe cell a protecting multiple)"
    )


def _publication_check(
    problem: CSPProblem,
    rounded: np.ndarray,
    base: int,
    steps: int,
    rapid_bounds: tuple[np.ndarray, np.ndarray] | None,
):
    """The publication verdict on the rounded table (protection.disclosure): each rounding
    interval covers its primary's protection interval and, with those intervals as bounds,
    neither the outsider (relations) nor an insider (its own cells) narrows a primary.
    RAPID's inner cells are known to be nearest multiples (±b/2, `rapid_bounds`): judged with
    those tighter bounds. MethodError naming the cells when it fails (argusqt/docs/methods.md §9)."""

    verdict = rounded_verdict(problem, rounded, base, steps)
    if verdict.ok and rapid_bounds is not None:
        lo, hi = rapid_bounds
        z = np.asarray(problem.values, dtype=float)
        lo = np.minimum(np.where(np.isnan(lo), problem.lower, lo), z)
        hi = np.maximum(np.where(np.isnan(hi), problem.upper, hi), z)
        verdict = publication_audit(problem, hi > lo, lower=lo, upper=hi, intervals=False)
    if not verdict.ok:
        raise MethodError(
            f"the table rounded to base {base} cannot be published: "
            + verdict.summary().removeprefix("AUDIT FAILED: ")
            + f" Round with {steps + 1} step(s) (wider rounding intervals: on random tables "
            "this mostly passes at the same base) or a larger base than "
            f"{base}; the table was left unchanged."
        )
    return verdict


def _result(
    problem,
    rounded,
    z,
    base,
    steps,
    unit,
    figures,
    log,
    watch,
    *,
    optimal,
    gap,
    bound,
    cancelled=False,
    timed_out=False,
    limit=None,
) -> ProtectionResult:
    """Assemble the ProtectionResult and the existence intervals of the published values."""
    rounded = np.where(np.asarray(problem.status) == 14, 0.0, rounded)
    nonneg = bool(np.all(z >= 0))
    lo, hi = existence_interval(rounded, base, steps, unit, nonnegative=nonneg)
    if figures.get("rapid_only") or figures.get("rapid_fallback"):
        # RAPID: inner cells are nearest multiples, totals may be several bases off (unknown)
        inner = inner_cells(problem.relations, problem.n_cells)
        half = 0.5 * base
        lo = np.where(inner, rounded - half, np.nan)
        hi = np.where(inner, rounded + half, np.nan)
        if nonneg:
            lo = np.where(inner, np.maximum(lo, 0.0), lo)
    empty = np.asarray(problem.status) == 14
    lo[empty] = 0.0
    hi[empty] = 0.0
    rapid = bool(figures.get("rapid_only") or figures.get("rapid_fallback"))
    try:
        verdict = _publication_check(problem, rounded, base, steps, (lo, hi) if rapid else None)
    except MethodError as err:
        if cancelled:  # the table the cancel left cannot be published: nothing is kept
            raise Cancelled(f"rounding cancelled; the table was left unprotected ({err})") from None
        if timed_out:  # the clock, not the table, left only RAPID: say so (session 20)
            raise TimeLimitError(
                out_of_time(
                    limit,
                    "before a rounded table was found",
                    "the table was left unchanged",
                    f"give the method more time (RAPID's fallback was refused: {err})",
                )
            ) from None
        raise
    dist = float(np.abs(rounded - z).sum())
    figures = dict(figures)
    figures.update(
        distance=dist,
        max_abs_deviation=float(np.abs(rounded - z).max()) if z.size else 0.0,
        existence_lower=lo,
        existence_upper=hi,
    )
    return ProtectionResult(
        method="RND",
        status=np.asarray(problem.status).copy(),
        cost=dist,
        lower_bound=bound,
        gap=gap,
        optimal=optimal,
        cancelled=cancelled,
        timed_out=timed_out,
        elapsed=watch.elapsed,
        published=rounded,
        verdict=verdict,
        log=log,
        figures=figures,
    )


# ---------------------------------------------------------------------- registry
@dataclass(frozen=True, kw_only=True)
class RndParams(MethodParams):
    """`RND(t, base, steps, maxTime, partitions, stopRule[, unitCost])`; base is required."""

    METHOD: ClassVar[str] = "RND"
    base: int = param(
        position=1,
        batch="base",
        label="Rounding base",
        minimum=1,
        help=(
            "Every published value is a multiple of it; at least the table's minimum base. "
            "The proposed base lets every unsafe cell's rounding interval cover its "
            "protection interval."
        ),
        suggest=lambda facts: max(facts.min_rounding_base, facts.covering_rounding_base),
    )
    steps: int = param(
        0,
        position=2,
        batch="steps",
        label="Steps allowed",
        minimum=0,
        help="0: each value goes to a neighbouring multiple (zero-restricted).",
    )
    max_minutes: float = minutes_param(10, position=3, batch="maxTime")
    partitions: bool = param(
        False,
        position=4,
        batch="partitions",
        label="Partition by the first non-hierarchical variable",
    )
    stop_rule: int = param(
        STOP_OPTIMAL,
        position=5,
        batch="stopRule",
        label="Stop rule",
        choices={
            STOP_RAPID: "first RAPID solution",
            STOP_FIRST: "first feasible",
            STOP_OPTIMAL: "optimal",
        },
    )
    unit_cost: bool = param(
        False,
        position=6,
        batch="unitCost",
        label="Unit cost",
        extension=True,
        no_effect="the rounding objective always counts every cell with weight 1",
    )


def _check_base(p: RndParams, facts: TableFacts) -> None:
    if p.base < facts.min_rounding_base:
        raise ParameterError(
            f"RND: rounding base {p.base} is below the minimum base {facts.min_rounding_base} "
            f"of table {facts.table_no} (the minimum frequency, or the largest lower + upper "
            "protection level of its unsafe cells)",
            method="RND",
            parameter="base",
            allowed=f"a whole number ≥ {facts.min_rounding_base}",
        )


def _rnd_options(p: RndParams, facts: TableFacts) -> RndOptions:
    return RndOptions(
        base=p.base,
        steps=p.steps,
        max_time=60.0 * p.max_minutes,
        partitions=int(p.partitions),
        stop_rule=p.stop_rule,
        min_base=facts.min_rounding_base,
        unit_cost=1 if p.unit_cost else None,
    )


DESCRIPTOR = register(
    MethodDescriptor(
        name="RND",
        kind="adjust",
        face="round",
        label="Controlled rounding",
        help="Publish every cell rounded to a multiple of the base.",
        params=RndParams,
        solve=solve_rounding,
        solver_options=_rnd_options,
        check=_check_base,
        order=40,
    )
)
