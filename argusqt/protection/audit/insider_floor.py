"""Insiders who share cells: each knows every cell it is in is at least its contribution.

With non-negative data a respondent that contributes x to a suppressed cell knows that
cell is at least x (docs/design.md, D-91); a cell it alone makes up it knows exactly. It
must not narrow any primary it is not the largest contributor of; its bound on the attacked
primary itself is not used (the rule's level is built for that). Two steps per component:
the coalition (every cell at least its largest contribution, every lone cell fixed) is
stronger than any one respondent, so a side it cannot narrow is safe for all; the sides
it narrows are attacked respondent by respondent, each attacker point found reused as a
witness for the next respondent it fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp
else:  # scipy.sparse imported at its first use (D-78)
    from argusqt.model.scipy_sparse import lazy as sp

from argusqt.errors import AuditError, Cancelled
from argusqt.progress import CancelToken
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import Floors
from argusqt.protection.lp.components import (
    DOWN,
    UP,
    Component,
    make_highs,
    solve,
    variable_components,
)
from argusqt.protection.lp.separation import exact_rhs

Key = tuple[int, int]  # (primary cell, direction)


@dataclass(frozen=True)
class FloorDisclosure:
    """Primary `cell` narrowed on side `direction` by attacker `row` of the Floors."""

    cell: int
    direction: int
    row: int
    reach: float  # the attacker's extreme value of the cell on that side
    known: tuple[int, ...]  # cells it alone makes up (known exactly)
    floors: tuple[tuple[int, float], ...]  # (cell, lower bound) it knows besides


@dataclass
class FloorOutcome:
    disclosures: list[FloorDisclosure] = field(default_factory=list)
    n_lps: int = 0
    pairs_left: int = 0  # (primary, side) pairs the coalition did not settle
    attackers: int = 0
    #: the Floors' note: why they are weaker or stronger than exact (said in the verdict)
    note: str = ""

    @property
    def failed(self) -> list[Key]:
        return sorted({(d.cell, d.direction) for d in self.disclosures})


def floor_audit(
    problem: CSPProblem,
    suppressed: np.ndarray,
    floors: Floors,
    *,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    only: list[Key] | None = None,
    cancel: CancelToken | None = None,
) -> FloorOutcome:
    """Every (primary, side) some respondent narrows with its lower bounds; `only`: just
    these pairs (a grown pattern: every other pair passed before and still passes)."""
    values = np.asarray(problem.values, dtype=float)
    sup = np.asarray(suppressed, dtype=bool)
    if lower is not None and upper is not None:
        lo = np.minimum(np.asarray(lower, dtype=float), values)
        hi = np.maximum(np.asarray(upper, dtype=float), values)
        sup = hi > lo
    else:
        lo = np.where(sup, problem.lower, values).astype(float)
        hi = np.where(sup, problem.upper, values).astype(float)
    out = FloorOutcome(note=floors.note)
    fl = floors.padded(problem.n_cells)
    amount = fl.amount.tocsr()
    prim = problem.primary & sup
    lpl = np.where(prim, problem.lpl, 0.0)
    upl = np.where(prim, problem.upl, 0.0)
    # a bound counts where it is above the attacker's own bound of a suppressed positive cell
    coo = amount.tocoo()
    bound = np.minimum(coo.data, values[coo.col])
    alone = fl.alone[coo.col]
    bites = sup[coo.col] & (values[coo.col] > 0) & ((bound > lo[coo.col]) | alone)
    row, col, bound, alone = coo.row[bites], coo.col[bites], bound[bites], alone[bites]
    if not row.size or not prim.any():
        return out
    eff = sp.csr_matrix((bound, (row, col)), shape=amount.shape)
    fixed = sp.csr_matrix((alone.astype(float), (row, col)), shape=amount.shape)
    fixed.eliminate_zeros()
    exempt = fl.exempt.tocsr()
    out.attackers = int(np.unique(row).size)
    coal_lo = lo.copy()
    np.maximum.at(coal_lo, col, bound)
    coal_fixed = np.zeros(problem.n_cells, dtype=bool)
    coal_fixed[col[alone]] = True
    coal_hi = np.where(coal_fixed, values, hi)
    coal_lo = np.where(coal_fixed, values, coal_lo)
    rel = problem.relations.tocsr()
    exact, not_additive = exact_rhs(problem)
    miss = np.where(not_additive, exact - rel @ values, 0.0)
    tol = problem.tolerance
    wanted = None if only is None else set(only)
    for comp in variable_components(rel, sup):
        cells = comp.cells
        targets = [
            (int(c), d)
            for c in cells[prim[cells]].tolist()
            for d in (UP, DOWN)
            if (upl[c] if d == UP else lpl[c]) > 0 and (wanted is None or (int(c), d) in wanted)
        ]
        if not targets or not np.any(coal_lo[cells] > lo[cells]) and not coal_fixed[cells].any():
            continue
        lp = _Lp(rel, comp, values, lo, hi, miss)
        need = {(c, d): values[c] + (upl[c] if d == UP else -lpl[c]) for c, d in targets}
        # the coalition: every bound at once; its own bound off when a primary goes down
        lp.set_bounds(cells, coal_lo[cells], coal_hi[cells])
        left: list[Key] = []
        for c, d in targets:
            _check(cancel)
            if d == DOWN and not coal_fixed[c]:
                lp.set_bounds(np.array([c]), lo[[c]], hi[[c]])
            reach, _ = lp.extreme(c, d)
            if d == DOWN:
                lp.set_bounds(np.array([c]), coal_lo[[c]], coal_hi[[c]])
            if not _reaches(reach, need[(c, d)], d, tol):
                left.append((c, d))
        out.pairs_left += len(left)
        if left:
            _respondents(out, lp, left, need, eff, fixed, exempt, lo, hi, values, tol, cancel)
        out.n_lps += lp.n_lps
    return out


def _respondents(out, lp, left, need, eff, fixed, exempt, lo, hi, values, tol, cancel) -> None:
    """The pairs the coalition narrows, attacked by each respondent in their component."""
    cells = lp.cells
    lp.set_bounds(cells, lo[cells], hi[cells])
    in_comp = sp.csr_matrix(
        (np.ones(cells.size), (cells, np.zeros(cells.size, dtype=np.int64))),
        shape=(eff.shape[1], 1),
    )
    rows = np.flatnonzero((eff @ in_comp).toarray().ravel() > 0)
    witnesses: dict[Key, np.ndarray] = {k: np.zeros((0, values.size)) for k in left}
    for r in rows.tolist():
        rc = eff.indices[eff.indptr[r] : eff.indptr[r + 1]]
        rb = eff.data[eff.indptr[r] : eff.indptr[r + 1]]
        fx = set(fixed.indices[fixed.indptr[r] : fixed.indptr[r + 1]].tolist())
        mine = set(exempt.indices[exempt.indptr[r] : exempt.indptr[r + 1]].tolist())
        on = np.isin(rc, cells)
        rc, rb = rc[on], rb[on]
        is_fixed = np.array([c in fx for c in rc.tolist()], dtype=bool)
        set_now = False
        for key in left:
            c, d = key
            if c in mine or c in fx:
                continue  # its own share (the largest, or alone in it)
            other = rc != c
            if not other.any():
                continue
            oc, ob, of = rc[other], rb[other], is_fixed[other]
            r_lo = np.where(of, values[oc], ob)
            r_hi = np.where(of, values[oc], hi[oc])
            if _fits(witnesses[key], oc, r_lo, r_hi):
                continue
            _check(cancel)
            if set_now:
                lp.set_bounds(rc, lo[rc], hi[rc])
            lp.set_bounds(oc, np.maximum(lo[oc], r_lo), r_hi)
            set_now = True
            reach, x = lp.extreme(c, d)
            if _reaches(reach, need[key], d, tol):
                witnesses[key] = np.vstack([x, witnesses[key]])
                continue
            out.disclosures.append(
                FloorDisclosure(
                    c,
                    d,
                    r,
                    reach,
                    tuple(int(k) for k in oc[of].tolist()),
                    tuple((int(k), float(b)) for k, b in zip(oc[~of], ob[~of], strict=True)),
                )
            )
        if set_now:
            lp.set_bounds(rc, lo[rc], hi[rc])


def _fits(points: np.ndarray, cells: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether one of the attacker points (rows, full-table values) lies in a respondent's
    bounds: it is then a point of that respondent's attacker too."""
    if not points.shape[0]:
        return False
    v = points[:, cells]
    slack = 1e-9 * (1 + np.abs(lo))
    return bool(np.any(np.all((v >= lo - slack) & (v <= hi + slack), axis=1)))


def _reaches(reach: float, need: float, direction: int, tol: float) -> bool:
    return reach >= need - tol if direction == UP else reach <= need + tol


def _check(cancel: CancelToken | None) -> None:
    if cancel is not None and cancel.cancelled:
        raise Cancelled("insider audit cancelled")


class _Lp:
    """A component's attacker LP in moves from the values, bounds changed per attacker;
    points are returned as full-table values (zero moves outside the component)."""

    def __init__(self, rel, comp: Component, values, lo, hi, miss):
        self.cells = comp.cells
        self.values = values
        sub = rel[comp.rows]
        b = miss[comp.rows].copy()
        self.pos = np.full(values.size, -1, dtype=np.int64)
        self.pos[self.cells] = np.arange(self.cells.size)
        self.base = values[self.cells]
        self.h = make_highs(
            sub[:, self.cells],
            np.zeros(self.cells.size),
            lo[self.cells] - self.base,
            hi[self.cells] - self.base,
            b,
            b,
            primal=True,
            presolve=False,
        )
        self.last = -1
        self.n_lps = 0

    def set_bounds(self, cells: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        v = self.values[cells]
        for j, a, b in zip(
            self.pos[cells].tolist(), (lo - v).tolist(), (hi - v).tolist(), strict=True
        ):
            self.h.changeColBounds(j, min(a, 0.0), max(b, 0.0))

    def extreme(self, cell: int, direction: int) -> tuple[float, np.ndarray]:
        j = int(self.pos[cell])
        if self.last >= 0 and self.last != j:
            self.h.changeColCost(self.last, 0.0)
        self.h.changeColCost(j, -1.0 if direction == UP else 1.0)
        self.last = j
        status, x, _ = solve(self.h)
        if status != "optimal":
            self.h.clearSolver()
            status, x, _ = solve(self.h)
        self.n_lps += 1
        if status != "optimal" or x is None:
            raise AuditError(
                f"insider attacker LP for cell {cell} is {status}: the table is not additive "
                "within the attacker bounds"
            )
        point = self.values.copy()
        point[self.cells] += x
        return float(point[cell]), point
